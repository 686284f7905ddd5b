#include "pkg/api/selector.h"

#include <gtest/gtest.h>

#include <limits>

#include "tests/fakes/builders.h"

namespace ksched::api {
namespace {

using Op = SelectorOperator;

LabelSelectorRequirement Req(std::string key, Op op, std::vector<std::string> values = {}) {
  return LabelSelectorRequirement{std::move(key), op, std::move(values)};
}

Node MakeNode(std::string name, const StringMap& labels) {
  return ksched::testing::NodeBuilder(std::move(name)).Labels(labels).Build();
}

TEST(SelectorTest, ParseInt64LikeGoStrconv) {
  struct Case {
    std::string_view in;
    std::optional<int64_t> want;
  };
  const Case cases[] = {
      {"0", 0},
      {"0204", 204},
      {"+5", 5},
      {"-5", -5},
      {"9223372036854775807", std::numeric_limits<int64_t>::max()},
      {"-9223372036854775808", std::numeric_limits<int64_t>::min()},
      {"9223372036854775808", std::nullopt},
      {"-9223372036854775809", std::nullopt},
      {"", std::nullopt},
      {"-", std::nullopt},
      {" 1", std::nullopt},
      {"1_000", std::nullopt},
      {"1.5", std::nullopt},
      {"0x10", std::nullopt},
  };
  for (const Case& c : cases) EXPECT_EQ(ParseInt64(c.in), c.want) << c.in;
}

TEST(SelectorTest, LabelKeyAndValueValidation) {
  EXPECT_TRUE(IsValidLabelKey("foo"));
  EXPECT_TRUE(IsValidLabelKey("GPU"));
  EXPECT_TRUE(IsValidLabelKey("kubernetes.io/hostname"));
  EXPECT_TRUE(IsValidLabelKey("a-b_c.d"));
  EXPECT_FALSE(IsValidLabelKey(""));
  EXPECT_FALSE(IsValidLabelKey("/foo"));
  EXPECT_FALSE(IsValidLabelKey("Example.com/foo"));  // prefix must be lowercase
  EXPECT_FALSE(IsValidLabelKey("a/b/c"));
  EXPECT_FALSE(IsValidLabelKey("-foo"));
  EXPECT_FALSE(IsValidLabelKey(std::string(64, 'a')));
  EXPECT_TRUE(IsValidLabelKey(std::string(63, 'a')));

  EXPECT_TRUE(IsValidLabelValue(""));
  EXPECT_TRUE(IsValidLabelValue("NVIDIA-GRID-K1"));
  EXPECT_TRUE(IsValidLabelValue("0204"));
  EXPECT_FALSE(IsValidLabelValue("invalid value: ___@#$%^"));
  EXPECT_FALSE(IsValidLabelValue("-5"));
  EXPECT_FALSE(IsValidLabelValue("a."));
  EXPECT_FALSE(IsValidLabelValue(std::string(64, 'a')));
}

TEST(SelectorTest, ValidateRequirement) {
  struct Case {
    std::string name;
    LabelSelectorRequirement req;
    bool allow_gt_lt;
    bool ok;
  };
  const Case cases[] = {
      {"in", Req("foo", Op::kIn, {"a", "b"}), true, true},
      {"in without values", Req("foo", Op::kIn), true, false},
      {"notin without values", Req("foo", Op::kNotIn), true, false},
      {"exists", Req("foo", Op::kExists), true, true},
      {"exists with values", Req("foo", Op::kExists, {"a"}), true, false},
      {"doesnotexist with values", Req("foo", Op::kDoesNotExist, {"a"}), true, false},
      {"gt", Req("foo", Op::kGt, {"10"}), true, true},
      {"gt two values", Req("foo", Op::kGt, {"1", "2"}), true, false},
      {"gt non-integer", Req("foo", Op::kGt, {"ten"}), true, false},
      {"lt negative is not a label value", Req("foo", Op::kLt, {"-1"}), true, false},
      {"gt in a label selector", Req("foo", Op::kGt, {"1"}), false, false},
      {"invalid key", Req("foo bar", Op::kExists), true, false},
      {"invalid value", Req("foo", Op::kNotIn, {"invalid value: ___@#$%^"}), true, false},
  };
  for (const Case& c : cases) EXPECT_EQ(ValidateRequirement(c.req, c.allow_gt_lt).ok(), c.ok) << c.name;
}

TEST(SelectorTest, RequirementMatches) {
  const StringMap labels{{"foo", "bar"}, {"kernel-version", "0206"}, {"GPU", "NVIDIA-GRID-K1"}, {"zone", "a"}};
  struct Case {
    std::string name;
    LabelSelectorRequirement req;
    bool want;
  };
  const Case cases[] = {
      {"In matches", Req("foo", Op::kIn, {"bar", "value2"}), true},
      {"In other values", Req("foo", Op::kIn, {"value1", "value2"}), false},
      {"In missing label", Req("nope", Op::kIn, {"bar"}), false},
      {"NotIn other values", Req("foo", Op::kNotIn, {"DDR", "DDR2"}), true},
      {"NotIn containing value", Req("foo", Op::kNotIn, {"bar"}), false},
      {"NotIn missing label matches", Req("nope", Op::kNotIn, {"bar"}), true},
      {"Exists", Req("GPU", Op::kExists), true},
      {"Exists missing", Req("nope", Op::kExists), false},
      {"DoesNotExist missing", Req("nope", Op::kDoesNotExist), true},
      {"DoesNotExist present", Req("GPU", Op::kDoesNotExist), false},
      {"Gt leading zeros", Req("kernel-version", Op::kGt, {"0204"}), true},
      {"Gt equal", Req("kernel-version", Op::kGt, {"206"}), false},
      {"Lt", Req("kernel-version", Op::kLt, {"207"}), true},
      {"Lt equal", Req("kernel-version", Op::kLt, {"206"}), false},
      {"Gt on non-integer label", Req("zone", Op::kGt, {"1"}), false},
      {"Gt missing label", Req("nope", Op::kGt, {"1"}), false},
      {"Lt missing label", Req("nope", Op::kLt, {"1"}), false},
      {"unknown operator matches nothing", Req("foo", Op::kUnknown, {"bar"}), false},
  };
  for (const Case& c : cases) EXPECT_EQ(RequirementMatches(c.req, labels), c.want) << c.name;
}

TEST(SelectorTest, NodeSelectorMap) {
  const StringMap labels{{"foo", "bar"}, {"baz", "blah"}};
  EXPECT_TRUE(MatchesNodeSelectorMap({}, labels));
  EXPECT_TRUE(MatchesNodeSelectorMap({{"foo", "bar"}}, labels));
  EXPECT_TRUE(MatchesNodeSelectorMap({{"foo", "bar"}, {"baz", "blah"}}, labels));
  EXPECT_FALSE(MatchesNodeSelectorMap({{"foo", "bar"}, {"baz", "blah"}, {"x", "y"}}, {{"foo", "bar"}}));
  EXPECT_FALSE(MatchesNodeSelectorMap({{"foo", "bar"}}, {}));
  EXPECT_FALSE(MatchesNodeSelectorMap({{"foo", "barrrrrr"}}, labels));
}

TEST(SelectorTest, NodeSelectorTerms) {
  const Node node = MakeNode("node_1", {{"foo", "bar"}});
  struct Case {
    std::string name;
    std::vector<NodeSelectorTerm> terms;
    bool want;
    size_t errors = 0;
  };
  const Case cases[] = {
      {"no terms match nothing", {}, false},
      {"an empty term matches nothing", {NodeSelectorTerm{}}, false},
      {"matchFields In", {{{}, {Req("metadata.name", Op::kIn, {"node_1"})}}}, true},
      {"matchFields In other node", {{{}, {Req("metadata.name", Op::kIn, {"node_2"})}}}, false},
      {"matchFields NotIn", {{{}, {Req("metadata.name", Op::kNotIn, {"node_2"})}}}, true},
      {"matchFields unknown field reads empty", {{{}, {Req("spec.foo", Op::kNotIn, {"x"})}}}, true},
      {"matchFields AND labels", {{{Req("foo", Op::kIn, {"bar"})}, {Req("metadata.name", Op::kIn, {"node_2"})}}}, false},
      {"terms are ORed",
       {{{}, {Req("metadata.name", Op::kIn, {"node_2"})}}, {{Req("foo", Op::kIn, {"bar"})}, {}}},
       true},
      {"matchFields with two values is invalid", {{{}, {Req("metadata.name", Op::kIn, {"node_1", "x"})}}}, false, 1},
      {"matchFields Exists is invalid", {{{}, {Req("metadata.name", Op::kExists)}}}, false, 1},
      {"an invalid term is dropped, valid ones still apply",
       {{{Req("foo", Op::kNotIn, {"invalid value: ___@#$%^"})}, {}}, {{Req("foo", Op::kExists)}, {}}},
       true,
       1},
  };
  for (const Case& c : cases) {
    NodeSelectorMatcher m = NodeSelectorMatcher::Parse(c.terms);
    EXPECT_EQ(m.Matches(node), c.want) << c.name;
    EXPECT_EQ(m.errors().size(), c.errors) << c.name;
  }
}

TEST(SelectorTest, PreferredTermsScoreAndErrors) {
  std::vector<PreferredSchedulingTerm> terms = {
      {2, {{Req("foo", Op::kIn, {"bar"})}, {}}},
      {4, {{Req("key", Op::kIn, {"value"})}, {}}},
      {5, {{Req("foo", Op::kIn, {"bar"}), Req("key", Op::kIn, {"value"}), Req("az", Op::kIn, {"az1"})}, {}}},
  };
  auto m = PreferredTermsMatcher::Parse(terms);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->Score(MakeNode("m1", {{"foo", "bar"}})), 2);
  EXPECT_EQ(m->Score(MakeNode("m2", {{"key", "value"}})), 4);
  EXPECT_EQ(m->Score(MakeNode("m5", {{"foo", "bar"}, {"key", "value"}, {"az", "az1"}})), 11);
  EXPECT_EQ(m->Score(MakeNode("m3", {})), 0);

  terms.push_back({1, {{Req("foo", Op::kGt, {"x"})}, {}}});
  EXPECT_FALSE(PreferredTermsMatcher::Parse(terms).ok());
}

TEST(SelectorTest, RequiredNodeAffinityCombinesSelectorAndTerms) {
  Pod pod;
  pod.spec.node_selector = StringMap{{"foo", "bar"}};
  pod.spec.affinity.emplace().node_affinity.emplace().required =
      std::vector<NodeSelectorTerm>{{{Req("foo", Op::kExists)}, {}}};
  EXPECT_TRUE(RequiredNodeAffinity(pod).Matches(MakeNode("n", {{"foo", "bar"}})));
  EXPECT_FALSE(RequiredNodeAffinity(pod).Matches(MakeNode("n", {{"foo", "barrrrrr"}})));

  Pod no_affinity;
  EXPECT_TRUE(RequiredNodeAffinity(no_affinity).Matches(MakeNode("n", {})));
  Pod empty_terms;
  empty_terms.spec.affinity.emplace().node_affinity.emplace().required = std::vector<NodeSelectorTerm>{};
  EXPECT_FALSE(RequiredNodeAffinity(empty_terms).Matches(MakeNode("n", {{"foo", "bar"}})));
}

TEST(SelectorTest, LabelSelector) {
  const StringMap labels{{"app", "web"}, {"tier", "front"}};
  struct Case {
    std::string name;
    LabelSelector sel;
    bool ok;
    bool want;
  };
  const Case cases[] = {
      {"empty matches everything", {}, true, true},
      {"matchLabels", {{{"app", "web"}}, {}}, true, true},
      {"matchLabels mismatch", {{{"app", "db"}}, {}}, true, false},
      {"matchLabels and expressions", {{{"app", "web"}}, {Req("tier", Op::kNotIn, {"back"})}}, true, true},
      {"DoesNotExist", {{}, {Req("tier", Op::kDoesNotExist)}}, true, false},
      {"Gt is not a pod selector operator", {{}, {Req("tier", Op::kGt, {"1"})}}, false, false},
      {"invalid matchLabels value", {{{"app", "a b"}}, {}}, false, false},
  };
  for (const Case& c : cases) {
    auto m = LabelSelectorMatcher::Parse(c.sel);
    ASSERT_EQ(m.ok(), c.ok) << c.name;
    if (m.ok()) {
      EXPECT_EQ(m->Matches(labels), c.want) << c.name;
    }
  }
}

Toleration Tol(std::string key, bool exists, std::string value, TaintEffect effect) {
  Toleration t;
  t.key = std::move(key);
  t.op_exists = exists;
  t.value = std::move(value);
  t.effect = effect;
  return t;
}

TEST(SelectorTest, ToleratesTaint) {
  const Taint taint{"foo", "bar", TaintEffect::kNoSchedule};
  struct Case {
    std::string name;
    Toleration tol;
    bool want;
  };
  const Case cases[] = {
      {"equal key value effect", Tol("foo", false, "bar", TaintEffect::kNoSchedule), true},
      {"equal, effect unset tolerates all effects", Tol("foo", false, "bar", TaintEffect::kNone), true},
      {"equal, other value", Tol("foo", false, "baz", TaintEffect::kNoSchedule), false},
      {"other effect", Tol("foo", false, "bar", TaintEffect::kNoExecute), false},
      {"exists ignores value", Tol("foo", true, "", TaintEffect::kNoSchedule), true},
      {"exists other key", Tol("other", true, "", TaintEffect::kNoSchedule), false},
      {"empty key with exists tolerates everything", Tol("", true, "", TaintEffect::kNone), true},
      {"empty key with exists, other effect", Tol("", true, "", TaintEffect::kPreferNoSchedule), false},
      {"empty key with equal compares values only", Tol("", false, "bar", TaintEffect::kNone), true},
      {"unknown effect tolerates no known effect", Tol("foo", false, "bar", TaintEffect::kUnknown), false},
  };
  for (const Case& c : cases) EXPECT_EQ(ToleratesTaint(c.tol, taint), c.want) << c.name;
  // An operator from a newer API tolerates nothing, even with an empty key.
  Toleration unknown_op = Tol("", true, "", TaintEffect::kNone);
  unknown_op.op_unknown = true;
  EXPECT_FALSE(ToleratesTaint(unknown_op, taint));
}

// Values from a newer API: a taint with an unknown effect blocks no pod (filters look at
// NoSchedule/NoExecute only); a selector with an unknown operator does not parse.
TEST(SelectorTest, UnknownEnumValues) {
  const std::vector<Taint> taints = {{"future", "", TaintEffect::kUnknown}};
  EXPECT_EQ(FindUntoleratedTaint(taints, {}, DoNotScheduleTaintsFilter), nullptr);
  LabelSelector sel;
  sel.match_expressions.push_back(Req("foo", Op::kUnknown, {"bar"}));
  EXPECT_FALSE(LabelSelectorMatcher::Parse(sel).ok());
  NodeSelectorTerm term;
  term.match_expressions.push_back(Req("foo", Op::kUnknown, {"bar"}));
  EXPECT_FALSE(NodeSelectorTermMatcher::Parse(term).ok());
}

TEST(SelectorTest, FindUntoleratedTaintFiltersEffects) {
  const std::vector<Taint> taints = {
      {"soft", "", TaintEffect::kPreferNoSchedule},
      {"a", "1", TaintEffect::kNoSchedule},
      {"b", "2", TaintEffect::kNoExecute},
  };
  const Taint* t = FindUntoleratedTaint(taints, {}, DoNotScheduleTaintsFilter);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->key, "a");  // PreferNoSchedule is skipped by the filter

  t = FindUntoleratedTaint(taints, {Tol("a", true, "", TaintEffect::kNone)}, DoNotScheduleTaintsFilter);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->key, "b");

  EXPECT_EQ(FindUntoleratedTaint(taints, {Tol("", true, "", TaintEffect::kNone)}, DoNotScheduleTaintsFilter), nullptr);
  // Without a filter every effect counts.
  t = FindUntoleratedTaint(taints, {}, nullptr);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->key, "soft");
}

TEST(SelectorTest, OperatorNames) {
  for (Op op : {Op::kIn, Op::kNotIn, Op::kExists, Op::kDoesNotExist, Op::kGt, Op::kLt}) {
    EXPECT_EQ(SelectorOperatorFromName(SelectorOperatorName(op)), op);
  }
  EXPECT_EQ(SelectorOperatorFromName("in"), std::nullopt);
}

}  // namespace
}  // namespace ksched::api
