#include "pkg/framework/plugins/nodeaffinity/node_affinity.h"

#include <gtest/gtest.h>

#include "tests/fakes/builders.h"
#include "tests/fakes/fake_handle.h"

namespace ksched::framework::plugins::nodeaffinity {
namespace {

using Op = api::SelectorOperator;
using Terms = std::vector<api::NodeSelectorTerm>;
constexpr const char* kName = "metadata.name";
constexpr std::string_view kPodReason = "node(s) didn't match Pod's node affinity/selector";

api::LabelSelectorRequirement Req(std::string key, Op op, std::vector<std::string> values = {}) {
  return api::LabelSelectorRequirement{std::move(key), op, std::move(values)};
}
api::NodeSelectorTerm Exprs(std::vector<api::LabelSelectorRequirement> e) { return {std::move(e), {}}; }
api::NodeSelectorTerm Fields(std::vector<api::LabelSelectorRequirement> f) { return {{}, std::move(f)}; }

api::Pod PodWith(std::optional<Terms> required, api::StringMap node_selector = {},
                 std::vector<api::PreferredSchedulingTerm> preferred = {}) {
  api::Pod p;
  p.metadata.name = "p";
  p.spec.node_selector = std::move(node_selector);
  if (required || !preferred.empty()) {
    auto& na = p.spec.affinity.emplace().node_affinity.emplace();
    na.required = std::move(required);
    na.preferred = std::move(preferred);
  }
  return p;
}

cache::NodeInfoPtr MakeNode(std::string name, const api::StringMap& labels) {
  return std::make_shared<const cache::NodeInfo>(ksched::testing::NodeBuilder(std::move(name)).Labels(labels).Obj());
}

config::NodeSelectorRequirement CReq(std::string key, std::string op, std::vector<std::string> values) {
  return config::NodeSelectorRequirement{std::move(key), std::move(op), std::move(values)};
}

std::unique_ptr<NodeAffinity> MakePlugin(const config::NodeAffinityArgs& args = {}) {
  auto pl = NodeAffinity::Create(args);
  EXPECT_TRUE(pl.ok()) << pl.status().message();
  return std::move(*pl);
}

// Runs PreFilter then Filter as the framework does: a PreFilter Skip means Filter does not run.
Status RunFilter(NodeAffinity& pl, const api::Pod& pod, const cache::NodeInfo& node) {
  CycleState state;
  PreFilterResult result;
  Status pre = pl.PreFilter(state, pod, result);
  if (pre.IsSkip()) return Status::Success();
  if (!pre.IsSuccess()) return pre;
  return pl.Filter(state, pod, node);
}

// Upstream's TestNodeAffinity / helper TestPodMatchesNodeSelectorAndAffinityTerms cases.
TEST(NodeAffinityTest, Filter) {
  config::NodeAffinityArgs added_name;
  added_name.added_affinity.emplace().required =
      std::vector<config::NodeSelectorTerm>{{{}, {CReq(kName, "In", {"node_2"})}}};
  config::NodeAffinityArgs added_zone;
  added_zone.added_affinity.emplace().required =
      std::vector<config::NodeSelectorTerm>{{{CReq("zone", "In", {"bar"})}, {}}};

  struct Case {
    std::string name;
    api::Pod pod;
    api::StringMap labels;
    std::string node_name = "node_1";
    config::NodeAffinityArgs args = {};
    std::string_view want_reason = {};  // empty: fits
  };
  const Case cases[] = {
      {"no selector", PodWith(std::nullopt), {}},
      {"missing labels", PodWith(std::nullopt, {{"foo", "bar"}}), {}, "node_1", {}, kPodReason},
      {"same labels", PodWith(std::nullopt, {{"foo", "bar"}}), {{"foo", "bar"}}},
      {"node labels are superset", PodWith(std::nullopt, {{"foo", "bar"}}), {{"foo", "bar"}, {"baz", "blah"}}},
      {"node labels are subset", PodWith(std::nullopt, {{"foo", "bar"}, {"baz", "blah"}}), {{"foo", "bar"}},
       "node_1", {}, kPodReason},
      {"In matches", PodWith(Terms{Exprs({Req("foo", Op::kIn, {"bar", "value2"})})}), {{"foo", "bar"}}},
      {"Gt matches", PodWith(Terms{Exprs({Req("kernel-version", Op::kGt, {"0204"})})}), {{"kernel-version", "0206"}}},
      {"Gt does not match", PodWith(Terms{Exprs({Req("kernel-version", Op::kGt, {"0206"})})}),
       {{"kernel-version", "0206"}}, "node_1", {}, kPodReason},
      {"Lt matches", PodWith(Terms{Exprs({Req("kernel-version", Op::kLt, {"0207"})})}), {{"kernel-version", "0206"}}},
      {"Lt on a non-integer label", PodWith(Terms{Exprs({Req("kernel-version", Op::kLt, {"10"})})}),
       {{"kernel-version", "v2"}}, "node_1", {}, kPodReason},
      {"NotIn matches", PodWith(Terms{Exprs({Req("mem-type", Op::kNotIn, {"DDR", "DDR2"})})}), {{"mem-type", "DDR3"}}},
      {"Exists matches", PodWith(Terms{Exprs({Req("GPU", Op::kExists)})}), {{"GPU", "NVIDIA-GRID-K1"}}},
      {"DoesNotExist matches", PodWith(Terms{Exprs({Req("GPU", Op::kDoesNotExist)})}), {{"foo", "bar"}}},
      {"In does not match", PodWith(Terms{Exprs({Req("foo", Op::kIn, {"value1", "value2"})})}), {{"foo", "bar"}},
       "node_1", {}, kPodReason},
      {"empty list of terms", PodWith(Terms{}), {{"foo", "bar"}}, "node_1", {}, kPodReason},
      {"an empty term matches nothing", PodWith(Terms{Exprs({})}), {{"foo", "bar"}}, "node_1", {}, kPodReason},
      {"affinity without required terms", PodWith(std::nullopt, {}, {{1, Exprs({Req("x", Op::kExists)})}}),
       {{"foo", "bar"}}},
      {"expressions ANDed, match",
       PodWith(Terms{Exprs({Req("GPU", Op::kExists), Req("GPU", Op::kNotIn, {"AMD", "INTER"})})}),
       {{"GPU", "NVIDIA-GRID-K1"}}},
      {"expressions ANDed, no match",
       PodWith(Terms{Exprs({Req("GPU", Op::kExists), Req("GPU", Op::kIn, {"AMD", "INTER"})})}),
       {{"GPU", "NVIDIA-GRID-K1"}}, "node_1", {}, kPodReason},
      {"terms ORed",
       PodWith(Terms{Exprs({Req("foo", Op::kIn, {"bar", "value2"})}),
                     Exprs({Req("diffkey", Op::kIn, {"wrong", "value2"})})}),
       {{"foo", "bar"}}},
      {"affinity and nodeSelector both satisfied", PodWith(Terms{Exprs({Req("foo", Op::kExists)})}, {{"foo", "bar"}}),
       {{"foo", "bar"}}},
      {"affinity satisfied, nodeSelector not", PodWith(Terms{Exprs({Req("foo", Op::kExists)})}, {{"foo", "bar"}}),
       {{"foo", "barrrrrr"}}, "node_1", {}, kPodReason},
      {"invalid value in a term", PodWith(Terms{Exprs({Req("foo", Op::kNotIn, {"invalid value: ___@#$%^"})})}),
       {{"foo", "bar"}}, "node_1", {}, kPodReason},
      {"matchFields In matches", PodWith(Terms{Fields({Req(kName, Op::kIn, {"node_1"})})}), {}},
      {"matchFields In other node", PodWith(Terms{Fields({Req(kName, Op::kIn, {"node_1"})})}), {}, "node_2", {},
       kPodReason},
      {"two terms: fields no, expressions yes",
       PodWith(Terms{Fields({Req(kName, Op::kIn, {"node_1"})}), Exprs({Req("foo", Op::kIn, {"bar"})})}),
       {{"foo", "bar"}}, "node_2"},
      {"one term: fields no, expressions yes",
       PodWith(Terms{{{Req("foo", Op::kIn, {"bar"})}, {Req(kName, Op::kIn, {"node_1"})}}}), {{"foo", "bar"}},
       "node_2", {}, kPodReason},
      {"one term: both match", PodWith(Terms{{{Req("foo", Op::kIn, {"bar"})}, {Req(kName, Op::kIn, {"node_1"})}}}),
       {{"foo", "bar"}}, "node_1"},
      {"two terms: neither matches",
       PodWith(Terms{Fields({Req(kName, Op::kIn, {"node_1"})}),
                     Exprs({Req("foo", Op::kIn, {"not-match-to-bar"})})}),
       {{"foo", "bar"}}, "node_2", {}, kPodReason},
      {"matches added affinity and pod's", PodWith(Terms{Exprs({Req("zone", Op::kIn, {"foo"})})}), {{"zone", "foo"}},
       "node_2", added_name},
      {"matches added affinity, not pod's", PodWith(Terms{Exprs({Req("zone", Op::kIn, {"bar"})})}), {{"zone", "foo"}},
       "node_2", added_name, kPodReason},
      {"does not match added affinity", PodWith(std::nullopt), {{"zone", "foo"}}, "node_2", added_zone,
       "node(s) didn't match scheduler-enforced node affinity"},
  };
  for (const Case& c : cases) {
    auto pl = MakePlugin(c.args);
    cache::NodeInfoPtr node = MakeNode(c.node_name, c.labels);
    Status s = RunFilter(*pl, c.pod, *node);
    if (c.want_reason.empty()) {
      EXPECT_TRUE(s.IsSuccess()) << c.name << ": " << s.ToString();
    } else {
      EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable) << c.name;
      EXPECT_EQ(s.Message(), c.want_reason) << c.name;
    }
    // Without PreFilter state (PreFilter disabled) Filter reaches the same verdict.
    CycleState empty;
    EXPECT_EQ(pl->Filter(empty, c.pod, *node).code(), s.code()) << c.name;
  }
}

TEST(NodeAffinityTest, PreFilter) {
  struct Case {
    std::string name;
    api::Pod pod;
    Code want_code;
    std::optional<std::set<std::string, std::less<>>> want_names;
  };
  const Case cases[] = {
      {"nothing to filter: Skip", PodWith(std::nullopt), Code::kSkip, std::nullopt},
      {"only preferred terms: Skip", PodWith(std::nullopt, {}, {{1, Exprs({Req("x", Op::kExists)})}}), Code::kSkip,
       std::nullopt},
      {"nodeSelector only", PodWith(std::nullopt, {{"a", "b"}}), Code::kSuccess, std::nullopt},
      {"label terms: all nodes", PodWith(Terms{Exprs({Req("a", Op::kExists)})}), Code::kSuccess, std::nullopt},
      {"one term naming nodes", PodWith(Terms{Fields({Req(kName, Op::kIn, {"n1", "n2"})})}), Code::kSuccess,
       std::set<std::string, std::less<>>{"n1", "n2"}},
      {"requirements in a term intersect",
       PodWith(Terms{Fields({Req(kName, Op::kIn, {"n1", "n2"}), Req(kName, Op::kIn, {"n2", "n3"})})}),
       Code::kSuccess, std::set<std::string, std::less<>>{"n2"}},
      {"terms union",
       PodWith(Terms{Fields({Req(kName, Op::kIn, {"n1"})}), Fields({Req(kName, Op::kIn, {"n3"})})}), Code::kSuccess,
       std::set<std::string, std::less<>>{"n1", "n3"}},
      {"a term without names allows all",
       PodWith(Terms{Fields({Req(kName, Op::kIn, {"n1"})}), Exprs({Req("a", Op::kExists)})}), Code::kSuccess,
       std::nullopt},
      {"NotIn does not restrict", PodWith(Terms{Fields({Req(kName, Op::kNotIn, {"n1"})})}), Code::kSuccess,
       std::nullopt},
      {"conflicting names",
       PodWith(Terms{Fields({Req(kName, Op::kIn, {"n1"}), Req(kName, Op::kIn, {"n2"})})}),
       Code::kUnschedulableAndUnresolvable, std::nullopt},
  };
  for (const Case& c : cases) {
    auto pl = MakePlugin();
    CycleState state;
    PreFilterResult result;
    Status s = pl->PreFilter(state, c.pod, result);
    EXPECT_EQ(s.code(), c.want_code) << c.name;
    EXPECT_EQ(result.node_names, c.want_names) << c.name;
    if (c.want_code == Code::kUnschedulableAndUnresolvable) {
      EXPECT_EQ(s.Message(), "pod affinity terms conflict");
    }
  }
  // A profile's addedAffinity alone keeps Filter running.
  config::NodeAffinityArgs args;
  args.added_affinity.emplace().required = std::vector<config::NodeSelectorTerm>{{{CReq("z", "Exists", {})}, {}}};
  auto pl = MakePlugin(args);
  CycleState state;
  PreFilterResult result;
  EXPECT_TRUE(pl->PreFilter(state, PodWith(std::nullopt), result).IsSuccess());
}

std::vector<int64_t> RunScore(NodeAffinity& pl, const api::Pod& pod, const std::vector<cache::NodeInfoPtr>& nodes) {
  CycleState state;
  Status pre = pl.PreScore(state, pod, nodes);
  std::vector<NodeScore> scores;
  for (const auto& n : nodes) {
    int64_t score = 0;
    // A PreScore Skip means the framework does not call Score: every node scores 0.
    if (!pre.IsSkip()) {
      EXPECT_TRUE(pl.Score(state, pod, *n, score).IsSuccess());
    }
    scores.push_back(NodeScore{n->name(), score});
  }
  if (!pre.IsSkip()) {
    EXPECT_TRUE(pl.NormalizeScore(state, pod, scores).IsSuccess());
  }
  std::vector<int64_t> out;
  for (const auto& s : scores) out.push_back(s.score);
  return out;
}

// Upstream's TestNodeAffinityPriority. Expected values from the formula: raw = sum of
// matching weights; normalized = 100 * raw / max(raw).
TEST(NodeAffinityTest, Score) {
  const api::StringMap label1{{"foo", "bar"}}, label2{{"key", "value"}}, label3{{"az", "az1"}},
      label4{{"abc", "az11"}, {"def", "az22"}}, label5{{"foo", "bar"}, {"key", "value"}, {"az", "az1"}};
  const std::vector<api::PreferredSchedulingTerm> affinity1 = {{2, Exprs({Req("foo", Op::kIn, {"bar"})})}};
  const std::vector<api::PreferredSchedulingTerm> affinity2 = {
      {2, Exprs({Req("foo", Op::kIn, {"bar"})})},
      {4, Exprs({Req("key", Op::kIn, {"value"})})},
      {5, Exprs({Req("foo", Op::kIn, {"bar"}), Req("key", Op::kIn, {"value"}), Req("az", Op::kIn, {"az1"})})},
  };
  config::NodeAffinityArgs added1;
  added1.added_affinity.emplace().preferred = {{2, {{CReq("foo", "In", {"bar"})}, {}}}};
  config::NodeAffinityArgs added3;
  added3.added_affinity.emplace().preferred = {{3, {{CReq("key", "In", {"value"})}, {}}}};

  struct Case {
    std::string name;
    api::Pod pod;
    std::vector<cache::NodeInfoPtr> nodes;
    std::vector<int64_t> want;
    config::NodeAffinityArgs args = {};
  };
  const Case cases[] = {
      {"no node affinity: all equal", PodWith(std::nullopt),
       {MakeNode("m1", label1), MakeNode("m2", label2), MakeNode("m3", label3)}, {0, 0, 0}},
      {"no node matches", PodWith(std::nullopt, {}, affinity1),
       {MakeNode("m1", label4), MakeNode("m2", label2), MakeNode("m3", label3)}, {0, 0, 0}},
      {"only m1 matches", PodWith(std::nullopt, {}, affinity1),
       {MakeNode("m1", label1), MakeNode("m2", label2), MakeNode("m3", label3)}, {100, 0, 0}},
      // raw 2, 11, 4 -> 100*2/11, 100, 100*4/11
      {"different priorities", PodWith(std::nullopt, {}, affinity2),
       {MakeNode("m1", label1), MakeNode("m5", label5), MakeNode("m2", label2)}, {100 * 2 / 11, 100, 100 * 4 / 11}},
      {"added affinity", PodWith(std::nullopt), {MakeNode("m1", label1), MakeNode("m2", label2)}, {100, 0}, added1},
      // raw: m1 2, m2 3, m3 2+3=5
      {"added affinity and pod affinity", PodWith(std::nullopt, {}, affinity1),
       {MakeNode("m1", label1), MakeNode("m2", label2), MakeNode("m3", label5)}, {40, 60, 100}, added3},
  };
  for (const Case& c : cases) {
    auto pl = MakePlugin(c.args);
    EXPECT_EQ(RunScore(*pl, c.pod, c.nodes), c.want) << c.name;
  }
}

TEST(NodeAffinityTest, InvalidPreferredTermIsAnError) {
  auto pl = MakePlugin();
  api::Pod pod = PodWith(std::nullopt, {}, {{1, Exprs({Req("foo", Op::kGt, {"x"})})}});
  CycleState state;
  std::vector<cache::NodeInfoPtr> nodes = {MakeNode("n", {})};
  EXPECT_EQ(pl->PreScore(state, pod, nodes).code(), Code::kError);
}

TEST(NodeAffinityTest, New) {
  ksched::testing::FakeHandle h;
  EXPECT_TRUE(NodeAffinity::New(std::monostate{}, h).ok());
  EXPECT_TRUE(NodeAffinity::New(config::NodeAffinityArgs{}, h).ok());
  EXPECT_FALSE(NodeAffinity::New(config::InterPodAffinityArgs{}, h).ok());

  config::NodeAffinityArgs bad_op;
  bad_op.added_affinity.emplace().required = std::vector<config::NodeSelectorTerm>{{{CReq("a", "Like", {})}, {}}};
  EXPECT_FALSE(NodeAffinity::New(bad_op, h).ok());
  config::NodeAffinityArgs bad_term;
  bad_term.added_affinity.emplace().required =
      std::vector<config::NodeSelectorTerm>{{{CReq("a", "In", {})}, {}}};  // In needs values
  EXPECT_FALSE(NodeAffinity::New(bad_term, h).ok());
}

TEST(NodeAffinityTest, HintQueuesWhenNodeStartsMatching) {
  config::NodeAffinityArgs added;
  added.added_affinity.emplace().required = std::vector<config::NodeSelectorTerm>{{{CReq("pool", "Exists", {})}, {}}};
  auto plain = MakePlugin();
  auto enforced = MakePlugin(added);
  auto events = plain->EventsToRegister();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_TRUE(events[0].event.Match(kNodeAdd));
  EXPECT_TRUE(events[0].event.Match(kNodeLabelChange));
  EXPECT_FALSE(events[0].event.Match(kNodeTaintChange));

  auto node = [](api::StringMap labels) {
    api::Node n;
    n.metadata.name = "n";
    n.metadata.labels = std::move(labels);
    return n;
  };
  const api::Node none = node({});
  const api::Node zone_a = node({{"zone", "a"}});
  const api::Node zone_a_pool = node({{"zone", "a"}, {"pool", "x"}});
  const api::Node zone_b = node({{"zone", "b"}});
  const api::Pod pod = PodWith(Terms{Exprs({Req("zone", Op::kIn, {"a"})})});
  const api::Pod selector_pod = PodWith(std::nullopt, {{"zone", "a"}});
  struct Case {
    std::string name;
    const NodeAffinity* pl;
    const api::Pod* pod;
    const api::Node* old_node;
    const api::Node* new_node;
    QueueingHint want;
  };
  const Case cases[] = {
      {"matching node added", plain.get(), &pod, nullptr, &zone_a, QueueingHint::kQueue},
      {"non-matching node added", plain.get(), &pod, nullptr, &zone_b, QueueingHint::kSkip},
      {"label now matches", plain.get(), &pod, &zone_b, &zone_a, QueueingHint::kQueue},
      {"nodeSelector now matches", plain.get(), &selector_pod, &none, &zone_a, QueueingHint::kQueue},
      {"matched before too", plain.get(), &pod, &zone_a, &zone_a_pool, QueueingHint::kSkip},
      {"stopped matching", plain.get(), &pod, &zone_a, &zone_b, QueueingHint::kSkip},
      {"fails added affinity", enforced.get(), &pod, nullptr, &zone_a, QueueingHint::kSkip},
      {"now passes added affinity", enforced.get(), &pod, &zone_a, &zone_a_pool, QueueingHint::kQueue},
  };
  for (const Case& c : cases) {
    auto hint = c.pl->EventsToRegister()[0].hint_fn;
    auto r = hint(*c.pod, c.old_node, c.new_node);
    ASSERT_TRUE(r.ok()) << c.name;
    EXPECT_EQ(*r, c.want) << c.name;
  }
}

}  // namespace
}  // namespace ksched::framework::plugins::nodeaffinity
