// NewFramework: building a framework from a profile and validating it.
#include "pkg/framework/runtime/framework.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pkg/framework/runtime/runtime_test_util.h"
#include "pkg/queue/events.h"

namespace ksched::framework::runtime {
namespace {

using namespace testing;  // NOLINT: the fakes
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Filter + Score + EnqueueExtensions, counting how often it is built.
class MultiPlugin : public NamedPlugin, public FilterPlugin, public ScorePlugin, public EnqueueExtensions {
 public:
  explicit MultiPlugin(std::string name) : NamedPlugin(std::move(name)) {}
  Status Filter(const CycleState&, const api::Pod&, const cache::NodeInfo&) const override { return Status(); }
  Status Score(const CycleState&, const api::Pod&, const cache::NodeInfo&, int64_t& score) const override {
    score = 1;
    return Status();
  }
  std::vector<ClusterEventWithHint> EventsToRegister() const override { return {{kNodeAdd, nullptr}}; }
};

struct ValidationCase {
  std::string name;
  std::function<void(config::KubeSchedulerProfile&)> mutate;
  std::string want_error;  // substring; empty: success
};

class NewFrameworkValidation : public ::testing::TestWithParam<ValidationCase> {};

TEST_P(NewFrameworkValidation, ReportsUpstreamErrors) {
  Registry registry = BaseRegistry();
  registry["F"] = Once<FakeFilter>(std::string("F"), std::set<std::string>{}, Status());
  registry["Broken"] = [](const config::PluginArgs&, Handle&) -> StatusOr<std::unique_ptr<Plugin>> {
    return InvalidArgument("bad args");
  };
  config::KubeSchedulerProfile profile = BaseProfile();
  GetParam().mutate(profile);
  auto fw = NewFramework(registry, profile, {.parallelism = 1});
  if (GetParam().want_error.empty()) {
    ASSERT_TRUE(fw.ok()) << fw.status().ToString();
  } else {
    ASSERT_FALSE(fw.ok());
    EXPECT_THAT(fw.status().message(), HasSubstr(GetParam().want_error));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Profiles, NewFrameworkValidation,
    ::testing::Values(
        ValidationCase{"Valid", [](auto&) {}, ""},
        ValidationCase{"NoQueueSort", [](auto& p) { p.plugins.queue_sort.enabled.clear(); },
                       "only one queue sort plugin required for profile with scheduler name \"test\", but got 0"},
        ValidationCase{"NoBind", [](auto& p) { p.plugins.bind.enabled.clear(); },
                       "at least one bind plugin is needed"},
        ValidationCase{"UnknownPlugin", [](auto& p) { Enable(p.plugins.filter, {"Nope"}); },
                       "FilterPlugin \"Nope\" does not exist"},
        ValidationCase{"WrongPoint", [](auto& p) { Enable(p.plugins.filter, {"QS"}); },
                       "plugin \"QS\" does not extend FilterPlugin plugin"},
        ValidationCase{"Twice", [](auto& p) { Enable(p.plugins.filter, {"F", "F"}); },
                       "plugin \"F\" already registered as \"FilterPlugin\""},
        ValidationCase{"FactoryFails", [](auto& p) { Enable(p.plugins.filter, {"Broken"}); },
                       "initializing plugin \"Broken\": bad args"},
        ValidationCase{"RepeatedConfig",
                       [](auto& p) {
                         p.plugin_config.push_back({"F", {}});
                         p.plugin_config.push_back({"F", {}});
                       },
                       "repeated config for plugin F"}),
    [](const auto& info) { return info.param.name; });

TEST(NewFramework, InstantiatesEachPluginOnceAcrossPoints) {
  Registry registry = BaseRegistry();
  int built = 0;
  registry["M"] = [&](const config::PluginArgs&, Handle&) -> StatusOr<std::unique_ptr<Plugin>> {
    ++built;
    return std::unique_ptr<Plugin>(std::make_unique<MultiPlugin>("M"));
  };
  config::KubeSchedulerProfile profile = BaseProfile();
  Enable(profile.plugins.filter, {"M"});
  profile.plugins.score.enabled.push_back({"M", 3});
  auto fw = NewFramework(registry, profile, {.parallelism = 1});
  ASSERT_TRUE(fw.ok()) << fw.status().ToString();
  EXPECT_EQ(built, 1);
  auto list = (*fw)->ListPlugins();
  EXPECT_THAT(list["Filter"], ElementsAre("M"));
  EXPECT_THAT(list["Score"], ElementsAre("M"));
  EXPECT_THAT(list["QueueSort"], ElementsAre("QS"));
  EXPECT_TRUE((*fw)->HasFilterPlugins());
  EXPECT_TRUE((*fw)->HasScorePlugins());
  EXPECT_FALSE((*fw)->HasPostFilterPlugins());
  EXPECT_EQ((*fw)->ProfileName(), "test");
}

TEST(NewFramework, MultiPointExpandsIntoImplementedPoints) {
  Registry registry = BaseRegistry();
  registry["M"] = Once<MultiPlugin>(std::string("M"));
  config::KubeSchedulerProfile profile;
  profile.scheduler_name = "multi";
  Enable(profile.plugins.multi_point, {"QS", "M", "Bind"});
  auto fw = NewFramework(registry, profile, {.parallelism = 1});
  ASSERT_TRUE(fw.ok()) << fw.status().ToString();
  auto list = (*fw)->ListPlugins();
  EXPECT_THAT(list["Filter"], ElementsAre("M"));
  EXPECT_THAT(list["Score"], ElementsAre("M"));
  EXPECT_THAT(list["Bind"], ElementsAre("Bind"));
  EXPECT_EQ(list.count("PreFilter"), 0u);
}

TEST(NewFramework, PercentageOfNodesToScoreProfileWins) {
  config::KubeSchedulerProfile profile = BaseProfile();
  auto global = NewFramework(BaseRegistry(), profile, {.parallelism = 1, .percentage_of_nodes_to_score = 30});
  ASSERT_TRUE(global.ok());
  EXPECT_EQ((*global)->PercentageOfNodesToScore(), 30);
  profile.percentage_of_nodes_to_score = 70;
  auto own = NewFramework(BaseRegistry(), profile, {.parallelism = 1, .percentage_of_nodes_to_score = 30});
  ASSERT_TRUE(own.ok());
  EXPECT_EQ((*own)->PercentageOfNodesToScore(), 70);
}

// What the queue registers for a profile (the scheduler builds its ClusterEventMap from
// RejectingPlugins(), as upstream's buildQueueingHintMap walks the enqueue extensions).
// This once went through Framework::EventsToRegister, which nothing in production used.
TEST(Framework, RejectingPluginsEventsFallBackToAllEvents) {
  Registry registry = BaseRegistry();
  registry["M"] = Once<MultiPlugin>(std::string("M"));
  registry["F"] = Once<FakeFilter>(std::string("F"), std::set<std::string>{}, Status());
  registry["S"] = Once<FakeScore>(std::string("S"), FakeScore::Fn([](const cache::NodeInfo&, int64_t& s) {
                                    s = 0;
                                    return Status();
                                  }),
                                  FakeScore::NormalizeFn());
  config::KubeSchedulerProfile profile = BaseProfile();
  Enable(profile.plugins.filter, {"M", "F"});
  Enable(profile.plugins.score, {"S"});
  auto fw = NewFramework(registry, profile, {.parallelism = 1});
  ASSERT_TRUE(fw.ok()) << fw.status().ToString();
  std::vector<Plugin*> rejecting = (*fw)->RejectingPlugins();
  // Only plugins that can reject pods; the score-only plugin is not there.
  ASSERT_EQ(rejecting.size(), 2u);
  EXPECT_EQ(rejecting[0]->Name(), "M");
  EXPECT_EQ(rejecting[1]->Name(), "F");
  queue::ClusterEventMap events = queue::ClusterEventMap::FromPlugins(rejecting);
  std::vector<ClusterEvent> m_events = events.EventsOf("M");
  ASSERT_EQ(m_events.size(), 1u);
  EXPECT_TRUE(m_events[0].SameRegistration(kNodeAdd));
  // F has no EnqueueExtensions: every event may help it.
  EXPECT_EQ(events.EventsOf("F").size(), std::size(kAllClusterEvents));
  EXPECT_TRUE(events.EventsOf("S").empty());
}

TEST(Framework, QueueSortLessUsesThePlugin) {
  auto fw = NewFramework(BaseRegistry(), BaseProfile(), {.parallelism = 1});
  ASSERT_TRUE(fw.ok());
  LessFn less = (*fw)->QueueSortLess();
  QueuedPodInfo high(MakePod("high", 10)), low(MakePod("low", 1));
  EXPECT_TRUE(less(high, low));
  EXPECT_FALSE(less(low, high));
}

TEST(Framework, HandleDefaults) {
  auto fw = NewFramework(BaseRegistry(), BaseProfile(), {.parallelism = 3});
  ASSERT_TRUE(fw.ok());
  EXPECT_EQ((*fw)->Snapshot().NumNodes(), 0u);
  EXPECT_EQ((*fw)->Nominator(), nullptr);
  EXPECT_EQ((*fw)->Parallelism(), 3);
  EXPECT_FALSE((*fw)->Binder().Bind(*MakePod("p"), "n").ok());
  cache::Snapshot snap = MakeSnapshot(2);
  (*fw)->SetSnapshot(&snap);
  EXPECT_EQ((*fw)->Snapshot().NumNodes(), 2u);
}

}  // namespace
}  // namespace ksched::framework::runtime
