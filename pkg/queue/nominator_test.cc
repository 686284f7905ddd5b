#include "pkg/queue/nominator.h"

#include <gtest/gtest.h>

#include "pkg/queue/queue_test_util.h"

namespace ksched::queue {
namespace {

using testing::MakePod;
using testing::WithChange;

std::vector<std::string> Names(const std::vector<api::PodPtr>& pods) {
  std::vector<std::string> out;
  for (const auto& p : pods) out.push_back(p->metadata.name);
  return out;
}

TEST(NominatorTest, AddOverrideUpdateDelete) {
  Nominator n;
  auto a = MakePod("a", 0, [](api::Pod& p) { p.status.nominated_node_name = "node1"; });
  auto b = MakePod("b");
  n.AddNominatedPod(a);
  n.AddNominatedPod(b);  // no nomination: ignored
  n.AddNominatedPod(b, {NominatingInfo::Mode::kOverride, "node1"});
  EXPECT_EQ(Names(n.NominatedPodsForNode("node1")), (std::vector<std::string>{"a", "b"}));

  // Re-nominating moves the pod; never two entries.
  n.AddNominatedPod(b, {NominatingInfo::Mode::kOverride, "node2"});
  EXPECT_EQ(Names(n.NominatedPodsForNode("node1")), (std::vector<std::string>{"a"}));
  EXPECT_EQ(n.NominatedNodeFor(*b), "node2");

  // An update without nominatedNodeName keeps the in-memory nomination.
  auto b2 = WithChange(b, [](api::Pod& p) { p.metadata.labels.Set("x", "y"); });
  n.UpdateNominatedPod(*b, b2);
  EXPECT_EQ(n.NominatedPodsForNode("node2").at(0), b2);
  // An explicit change wins.
  auto a2 = WithChange(a, [](api::Pod& p) { p.status.nominated_node_name = "node3"; });
  n.UpdateNominatedPod(*a, a2);
  EXPECT_TRUE(n.NominatedPodsForNode("node1").empty());
  EXPECT_EQ(Names(n.NominatedPodsForNode("node3")), (std::vector<std::string>{"a"}));

  // Cleared on delete / bind; clearing with an empty override.
  n.DeleteNominatedPodIfExists(*a2);
  n.AddNominatedPod(b2, {NominatingInfo::Mode::kOverride, ""});
  EXPECT_EQ(n.size(), 0u);
  EXPECT_TRUE(n.NominatedPodsForNode("node2").empty());
}

}  // namespace
}  // namespace ksched::queue
