#include "pkg/queue/events.h"

#include <gtest/gtest.h>

#include "pkg/framework/plugins/schedulinggates/scheduling_gates.h"
#include "tests/fakes/fake_plugins.h"

namespace ksched::queue {
namespace {

using namespace framework;
using ksched::testing::FakeEnqueuePlugin;
using ksched::testing::NamedPlugin;

std::vector<std::string> PluginsFor(const ClusterEventMap& m, const ClusterEvent& e) {
  std::vector<const RegisteredHint*> hints;
  m.MatchingHints(e, &hints);
  std::vector<std::string> out;
  for (auto* h : hints) out.push_back(h->plugin);
  return out;
}

// The cluster event map is built from each plugin's EventsToRegister(); a plugin not
// implementing EnqueueExtensions is registered for all events (upstream
// pkg/scheduler/framework/runtime/framework.go, fillEventToPluginMap).
TEST(ClusterEventMapTest, FromPlugins) {
  FakeEnqueuePlugin fit("Fit", {{{EventResource::kPod, kDelete, ""}, nullptr},
                                {{EventResource::kNode, kAdd | kUpdate, ""}, nullptr}});
  FakeEnqueuePlugin affinity("NodeAffinity", {{{EventResource::kNode, kAdd | kUpdate, ""}, nullptr}});
  FakeEnqueuePlugin silent("Silent", {});
  NamedPlugin legacy("Legacy");
  Plugin* plugins[] = {&fit, &affinity, &silent, &legacy};
  ClusterEventMap m = ClusterEventMap::FromPlugins(plugins);

  struct Case {
    ClusterEvent event;
    std::vector<std::string> want;
    bool interested;
  };
  const Case cases[] = {
      {kNodeAdd, {"Fit", "NodeAffinity", "Legacy"}, true},
      {kNodeTaintChange, {"Fit", "NodeAffinity", "Legacy"}, true},
      {kAssignedPodDelete, {"Fit", "Legacy"}, true},
      {kAssignedPodAdd, {"Legacy"}, true},
      {kPvcAdd, {"Legacy"}, true},
      {kServiceAdd, {}, false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(PluginsFor(m, c.event), c.want) << c.event.label;
    EXPECT_EQ(m.IsEventOfInterest(c.event), c.interested) << c.event.label;
  }
  EXPECT_TRUE(m.IsEventOfInterest(kUnschedulableTimeout));
  EXPECT_TRUE(ClusterEventMap().IsEventOfInterest(kWildCardEvent));
  EXPECT_FALSE(ClusterEventMap().IsEventOfInterest(kNodeAdd));
}

}  // namespace
}  // namespace ksched::queue
