#include "pkg/framework/plugins/tainttoleration/taint_toleration.h"

#include <gtest/gtest.h>

namespace ksched::framework::plugins::tainttoleration {
namespace {

using api::TaintEffect;
constexpr TaintEffect kNoSchedule = TaintEffect::kNoSchedule;
constexpr TaintEffect kPrefer = TaintEffect::kPreferNoSchedule;
constexpr TaintEffect kNoExecute = TaintEffect::kNoExecute;

api::Toleration Equal(std::string key, std::string value, TaintEffect effect = TaintEffect::kNone) {
  return api::Toleration{std::move(key), false, std::move(value), effect, std::nullopt};
}
api::Toleration Exists(std::string key, TaintEffect effect = TaintEffect::kNone) {
  return api::Toleration{std::move(key), true, "", effect, std::nullopt};
}

cache::NodeInfoPtr NodeWithTaints(std::string name, std::vector<api::Taint> taints) {
  auto n = std::make_shared<api::Node>();
  n->metadata.name = std::move(name);
  n->spec.taints = std::move(taints);
  return std::make_shared<const cache::NodeInfo>(n);
}

api::Pod PodWithTolerations(std::vector<api::Toleration> tolerations) {
  api::Pod p;
  p.metadata.name = "pod1";
  p.spec.tolerations = std::move(tolerations);
  return p;
}

TEST(TaintTolerationTest, Filter) {
  struct Case {
    std::string name;
    std::vector<api::Toleration> tolerations;
    std::vector<api::Taint> taints;
    std::string want_reason;  // empty: fits
  };
  const Case cases[] = {
      {"no tolerations, NoSchedule taint", {}, {{"dedicated", "user1", kNoSchedule}},
       "node(s) had untolerated taint {dedicated: user1}"},
      {"tolerated dedicated node", {Equal("dedicated", "user1", kNoSchedule)}, {{"dedicated", "user1", kNoSchedule}}, ""},
      {"toleration for another value", {Equal("dedicated", "user2", kNoSchedule)},
       {{"dedicated", "user1", kNoSchedule}}, "node(s) had untolerated taint {dedicated: user1}"},
      {"Exists tolerates any value", {Exists("foo", kNoSchedule)}, {{"foo", "bar", kNoSchedule}}, ""},
      {"multiple taints all tolerated",
       {Equal("dedicated", "user2", kNoSchedule), Exists("foo", kNoSchedule)},
       {{"dedicated", "user2", kNoSchedule}, {"foo", "bar", kNoSchedule}},
       ""},
      {"non-empty effect must match", {Equal("foo", "bar", kPrefer)}, {{"foo", "bar", kNoSchedule}},
       "node(s) had untolerated taint {foo: bar}"},
      {"empty effect tolerates all effects", {Equal("foo", "bar")}, {{"foo", "bar", kNoSchedule}}, ""},
      {"PreferNoSchedule taints never filter", {Equal("dedicated", "user2", kNoSchedule)},
       {{"dedicated", "user1", kPrefer}}, ""},
      {"no tolerations, only PreferNoSchedule", {}, {{"dedicated", "user1", kPrefer}}, ""},
      {"NoExecute taints filter", {}, {{"evict", "now", kNoExecute}}, "node(s) had untolerated taint {evict: now}"},
      {"the first untolerated taint is reported",
       {Exists("a")},
       {{"soft", "x", kPrefer}, {"a", "1", kNoSchedule}, {"b", "2", kNoExecute}, {"c", "3", kNoSchedule}},
       "node(s) had untolerated taint {b: 2}"},
      {"empty value prints as Go's %s", {}, {{"gpu", "", kNoSchedule}}, "node(s) had untolerated taint {gpu: }"},
      {"empty key with Exists tolerates everything", {Exists("")},
       {{"a", "1", kNoSchedule}, {"b", "2", kNoExecute}}, ""},
  };
  TaintToleration pl;
  CycleState state;
  for (const Case& c : cases) {
    cache::NodeInfoPtr node = NodeWithTaints("nodeA", c.taints);
    Status s = pl.Filter(state, PodWithTolerations(c.tolerations), *node);
    if (c.want_reason.empty()) {
      EXPECT_TRUE(s.IsSuccess()) << c.name << ": " << s.ToString();
    } else {
      EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable) << c.name;
      EXPECT_EQ(s.Message(), c.want_reason) << c.name;
    }
  }
}

// Scores after NormalizeScore, checked against upstream's formula: raw = number of
// untolerated PreferNoSchedule taints; normalized = 100 - 100 * raw / max(raw).
TEST(TaintTolerationTest, Score) {
  struct Case {
    std::string name;
    std::vector<api::Toleration> tolerations;
    std::vector<cache::NodeInfoPtr> nodes;
    std::vector<int64_t> want;
  };
  const Case cases[] = {
      {"tolerated taints score higher",
       {Equal("foo", "bar", kPrefer)},
       {NodeWithTaints("nodeA", {{"foo", "bar", kPrefer}}), NodeWithTaints("nodeB", {{"foo", "blah", kPrefer}})},
       {100, 0}},
      {"the number of tolerated taints does not matter",
       {Equal("cpu-type", "arm64", kPrefer), Equal("disk-type", "ssd", kPrefer)},
       {NodeWithTaints("nodeA", {}), NodeWithTaints("nodeB", {{"cpu-type", "arm64", kPrefer}}),
        NodeWithTaints("nodeC", {{"cpu-type", "arm64", kPrefer}, {"disk-type", "ssd", kPrefer}})},
       {100, 100, 100}},
      {"more intolerable taints score lower",
       {Equal("foo", "bar", kPrefer)},
       {NodeWithTaints("nodeA", {}), NodeWithTaints("nodeB", {{"cpu-type", "arm64", kPrefer}}),
        NodeWithTaints("nodeC", {{"cpu-type", "arm64", kPrefer}, {"disk-type", "ssd", kPrefer}})},
       {100, 50, 0}},
      {"only PreferNoSchedule taints and tolerations count",
       {Equal("cpu-type", "arm64", kNoSchedule), Equal("disk-type", "ssd", kNoSchedule)},
       {NodeWithTaints("nodeA", {}), NodeWithTaints("nodeB", {{"cpu-type", "arm64", kNoSchedule}}),
        NodeWithTaints("nodeC", {{"cpu-type", "arm64", kPrefer}, {"disk-type", "ssd", kPrefer}})},
       {100, 100, 0}},
      {"no tolerations", {}, {NodeWithTaints("nodeA", {}), NodeWithTaints("nodeB", {{"cpu-type", "arm64", kPrefer}})},
       {100, 0}},
      {"a toleration without effect applies to PreferNoSchedule",
       {Exists("cpu-type")},
       {NodeWithTaints("nodeA", {{"cpu-type", "arm64", kPrefer}}), NodeWithTaints("nodeB", {{"x", "y", kPrefer}})},
       {100, 0}},
      {"three nodes, 1/2/3 intolerable: 100-33, 100-66, 0",
       {},
       {NodeWithTaints("n1", {{"a", "", kPrefer}}), NodeWithTaints("n2", {{"a", "", kPrefer}, {"b", "", kPrefer}}),
        NodeWithTaints("n3", {{"a", "", kPrefer}, {"b", "", kPrefer}, {"c", "", kPrefer}})},
       {100 - 100 * 1 / 3, 100 - 100 * 2 / 3, 0}},
  };
  for (const Case& c : cases) {
    TaintToleration pl;
    CycleState state;
    api::Pod pod = PodWithTolerations(c.tolerations);
    ASSERT_TRUE(pl.PreScore(state, pod, c.nodes).IsSuccess()) << c.name;
    std::vector<NodeScore> scores;
    for (const auto& n : c.nodes) {
      int64_t score = -1;
      ASSERT_TRUE(pl.Score(state, pod, *n, score).IsSuccess()) << c.name;
      scores.push_back(NodeScore{n->name(), score});
    }
    ASSERT_TRUE(pl.HasNormalizeScore());
    ASSERT_TRUE(pl.NormalizeScore(state, pod, scores).IsSuccess());
    std::vector<int64_t> got;
    for (const NodeScore& s : scores) got.push_back(s.score);
    EXPECT_EQ(got, c.want) << c.name;
  }
}

TEST(TaintTolerationTest, ScoreWithoutPreScoreIsAnError) {
  TaintToleration pl;
  CycleState state;
  int64_t score = 0;
  EXPECT_EQ(pl.Score(state, api::Pod(), *NodeWithTaints("n", {}), score).code(), Code::kError);
}

TEST(TaintTolerationTest, HintQueuesWhenTaintsBecomeTolerated) {
  TaintToleration pl;
  auto events = pl.EventsToRegister();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_TRUE(events[0].event.Match(kNodeAdd));
  EXPECT_TRUE(events[0].event.Match(kNodeTaintChange));
  EXPECT_FALSE(events[0].event.Match(kNodeAllocatableChange));

  auto node = [](std::vector<api::Taint> taints) {
    api::Node n;
    n.metadata.name = "n";
    n.spec.taints = std::move(taints);
    return n;
  };
  const api::Node clean = node({});
  const api::Node tainted = node({{"dedicated", "gpu", kNoSchedule}});
  const api::Node other = node({{"other", "x", kNoSchedule}});
  const api::Node soft = node({{"other", "x", kPrefer}});
  const api::Pod pod = PodWithTolerations({Equal("dedicated", "gpu", kNoSchedule)});
  struct Case {
    std::string name;
    const api::Node* old_node;
    const api::Node* new_node;
    QueueingHint want;
  };
  const Case cases[] = {
      {"tolerated node added", nullptr, &tainted, QueueingHint::kQueue},
      {"untolerated node added", nullptr, &other, QueueingHint::kSkip},
      {"untolerated taint removed", &other, &clean, QueueingHint::kQueue},
      {"untolerated taint replaced by a tolerated one", &other, &tainted, QueueingHint::kQueue},
      {"untolerated taint became PreferNoSchedule", &other, &soft, QueueingHint::kQueue},
      {"was already tolerated", &clean, &tainted, QueueingHint::kSkip},
      {"became untolerated", &clean, &other, QueueingHint::kSkip},
  };
  for (const Case& c : cases) {
    auto r = events[0].hint_fn(pod, c.old_node, c.new_node);
    ASSERT_TRUE(r.ok()) << c.name;
    EXPECT_EQ(*r, c.want) << c.name;
  }
}

}  // namespace
}  // namespace ksched::framework::plugins::tainttoleration
