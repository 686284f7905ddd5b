#include "pkg/cache/node_tree.h"

#include <gtest/gtest.h>

#include "pkg/cache/cache_test_util.h"

namespace ksched::cache {
namespace {

using testing::MakeNode;
using testing::MakeZonedNode;
using Names = std::vector<std::string>;

TEST(ZoneKeyTest, PrefersStableLabelsAndFallsBackToBeta) {
  auto stable = MakeZonedNode("a", "r1", "z1");
  auto beta = MakeNode("b", "1", "1Gi", [](api::Node& n) {
    n.metadata.labels.Set("failure-domain.beta.kubernetes.io/region", "r1");
    n.metadata.labels.Set("failure-domain.beta.kubernetes.io/zone", "z1");
  });
  auto both = MakeNode("c", "1", "1Gi", [](api::Node& n) {
    n.metadata.labels.Set("failure-domain.beta.kubernetes.io/zone", "old");
    n.metadata.labels.Set("topology.kubernetes.io/zone", "z1");
    n.metadata.labels.Set("topology.kubernetes.io/region", "r1");
  });
  EXPECT_EQ(ZoneKey(*stable), ZoneKey(*beta));
  EXPECT_EQ(ZoneKey(*stable), ZoneKey(*both));
  EXPECT_EQ(ZoneKey(*MakeNode("d")), "");
  // Region and zone stay distinguishable whatever they contain.
  EXPECT_NE(ZoneKey(*MakeZonedNode("e", "a:", "b")), ZoneKey(*MakeZonedNode("f", "a", ":b")));
}

TEST(NodeTreeTest, ListInterleavesZones) {
  struct Case {
    const char* name;
    std::vector<api::NodePtr> nodes;
    Names want;
  };
  const Case cases[] = {
      {"empty", {}, {}},
      {"one zone keeps insertion order",
       {MakeZonedNode("a", "r", "z1"), MakeZonedNode("b", "r", "z1"), MakeZonedNode("c", "r", "z1")},
       {"a", "b", "c"}},
      {"round robin over zones in first-seen order",
       {MakeZonedNode("a1", "r", "za"), MakeZonedNode("a2", "r", "za"), MakeZonedNode("a3", "r", "za"),
        MakeZonedNode("b1", "r", "zb"), MakeZonedNode("c1", "r2", "za"), MakeZonedNode("c2", "r2", "za"),
        MakeNode("nozone")},
       {"a1", "b1", "c1", "nozone", "a2", "c2", "a3"}},
      {"duplicates are ignored", {MakeZonedNode("a", "r", "z"), MakeZonedNode("a", "r", "z")}, {"a"}},
  };
  for (const auto& c : cases) {
    NodeTree tree;
    for (const auto& n : c.nodes) tree.AddNode(*n);
    EXPECT_EQ(tree.List(), c.want) << c.name;
    EXPECT_EQ(tree.num_nodes(), c.want.size()) << c.name;
  }
}

TEST(NodeTreeTest, RemoveAndUpdate) {
  NodeTree tree;
  auto a1 = MakeZonedNode("a1", "r", "za");
  auto b1 = MakeZonedNode("b1", "r", "zb");
  auto a2 = MakeZonedNode("a2", "r", "za");
  for (const auto& n : {a1, b1, a2}) tree.AddNode(*n);
  EXPECT_EQ(tree.List(), (Names{"a1", "b1", "a2"}));

  EXPECT_TRUE(tree.RemoveNode(*b1));
  EXPECT_FALSE(tree.RemoveNode(*b1));
  EXPECT_EQ(tree.List(), (Names{"a1", "a2"}));

  auto a1_moved = MakeZonedNode("a1", "r", "zc");
  EXPECT_TRUE(tree.UpdateNode(*a1, *a1_moved));
  EXPECT_EQ(tree.List(), (Names{"a2", "a1"}));
  EXPECT_FALSE(tree.UpdateNode(*a1_moved, *MakeZonedNode("a1", "r", "zc")));
  EXPECT_EQ(tree.num_nodes(), 2u);
}

}  // namespace
}  // namespace ksched::cache
