// Cases ported from upstream interpodaffinity/scoring_test.go (names kept). Expected scores
// are today's: NormalizeScore scales between the real min and max (1.20.2 pinned both at 0).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pkg/framework/plugins/interpodaffinity/test_util.h"

namespace ksched::framework::plugins::interpodaffinity {
namespace {

using namespace testutil;  // NOLINT

struct ScoreCase {
  std::string name;
  api::PodPtr pod;
  std::vector<api::PodPtr> pods;
  std::vector<api::NodePtr> nodes;
  std::vector<int64_t> want;  // per node, in `nodes` order
  Code want_code = Code::kSuccess;
  std::string want_message;  // substring, for failures
  bool ignore_existing = false;
  int32_t hard_weight = 1;
};

void RunScoreCase(const ScoreCase& tc) {
  SCOPED_TRACE(tc.name);
  config::InterPodAffinityArgs args;
  args.hard_pod_affinity_weight = tc.hard_weight;
  args.ignore_preferred_terms_of_existing_pods = tc.ignore_existing;
  Env env(tc.nodes, tc.pods, args);
  AddTeamNamespaces(env.lister);
  std::vector<cache::NodeInfoPtr> infos;
  for (const auto& n : tc.nodes) {
    for (const auto& info : env.handle.Snapshot().List()) {
      if (info->name() == n->metadata.name) infos.push_back(info);
    }
  }
  CycleState state;
  Status s = env.plugin.PreScore(state, *tc.pod, infos);
  ASSERT_EQ(s.code(), tc.want_code) << s.ToString();
  if (!s.IsSuccess()) {
    EXPECT_NE(s.Message().find(tc.want_message), std::string::npos) << s.Message();
    return;
  }
  std::vector<NodeScore> scores;
  for (const auto& info : infos) {
    int64_t score = 0;
    ASSERT_TRUE(env.plugin.Score(state, *tc.pod, *info, score).IsSuccess());
    scores.push_back({info->name(), score});
  }
  ASSERT_TRUE(env.plugin.NormalizeScore(state, *tc.pod, scores).IsSuccess());
  std::vector<int64_t> got;
  for (const auto& ns : scores) got.push_back(ns.score);
  EXPECT_EQ(got, tc.want);
}

api::WeightedPodAffinityTerm W(int32_t weight, api::PodAffinityTerm t) { return {weight, std::move(t)}; }

TEST(InterPodAffinityScore, TestPreferredAffinity) {
  const api::StringMap rg_china{{"region", "China"}};
  const api::StringMap rg_india{{"region", "India"}};
  const api::StringMap az1{{"az", "az1"}};
  const api::StringMap az2{{"az", "az2"}};
  const api::StringMap rg_china_az1{{"region", "China"}, {"az", "az1"}};
  const api::StringMap s1{{"security", "S1"}};
  const api::StringMap s2{{"security", "S2"}};

  const Weighted stay_s1_region = {W(5, Term({In("security", {"S1"})}, "region"))};
  const Weighted stay_s2_region = {W(6, Term({In("security", {"S2"})}, "region"))};
  const Weighted affinity3 = {W(8, Term({NotIn("security", {"S1"}), In("security", {"S2"})}, "region")),
                              W(2, Term({Exists("security"), DoesNotExist("wrongkey")}, "region"))};
  const Terms hard_affinity = {Term({In("security", {"S1", "value2"})}, "region"),
                               Term({Exists("security"), DoesNotExist("wrongkey")}, "region")};
  const Weighted away_s1_az = {W(5, Term({In("security", {"S1"})}, "az"))};
  const Weighted away_s2_az = {W(5, Term({In("security", {"S2"})}, "az"))};
  const Weighted stay_s1_region_8 = {W(8, Term({In("security", {"S1"})}, "region"))};
  const Weighted ns_selector = {
      W(5, WithNsSelector(Term({In("security", {"S1"})}, "region", {"subteam2.team2"}), {In("team", {"team1"})}))};
  const Weighted invalid = {W(8, Term({In("security", {"{{.bad-value.}}"})}, "region"))};
  const Weighted invalid_anti = {W(5, Term({In("security", {"{{.bad-value.}}"})}, "az"))};

  // Pods: (node, labels, preferred affinity, preferred anti-affinity, required affinity, namespace).
  auto P = [](std::string node, api::StringMap labels, Weighted aff = {}, Weighted anti = {}, Terms req = {},
              std::string ns = "") {
    return PodPreferred(std::move(ns), std::move(node), std::move(labels), std::move(aff), std::move(anti),
                        std::move(req));
  };
  auto N = [](std::string name, api::StringMap labels) { return NodeWith(std::move(name), std::move(labels)); };
  const int64_t kMax = kMaxNodeScore;

  const std::vector<ScoreCase> cases = {
      {"all nodes are same priority as Affinity is nil", P("", s1), {},
       {N("node1", rg_china), N("node2", rg_india), N("node3", az1)}, {}, Code::kSkip},
      {"Affinity: pod that matches topology key & pods in nodes will get high score comparing to others"
       "which doesn't match either pods in nodes or in topology key",
       P("", s1, stay_s1_region), {P("node1", s1), P("node2", s2), P("node3", s1)},
       {N("node1", rg_china), N("node2", rg_india), N("node3", az1)}, {kMax, 0, 0}},
      {"All the nodes that have the same topology key & label value with one of them has an existing pod that match "
       "the affinity rules, have the same score",
       P("", {}, stay_s1_region), {P("node1", s1)},
       {N("node1", rg_china), N("node2", rg_china_az1), N("node3", rg_india)}, {kMax, kMax, 0}},
      {"Affinity: nodes in one region has more matching pods comparing to other region, so the region which has more "
       "matches will get high score",
       P("", s1, stay_s2_region),
       {P("node1", s2), P("node1", s2), P("node2", s2), P("node3", s2), P("node4", s2), P("node5", s2)},
       {N("node1", rg_china), N("node2", rg_india), N("node3", rg_china), N("node4", rg_china), N("node5", rg_india)},
       {kMax, 0, kMax, kMax, 0}},
      {"Affinity: different Label operators and values for pod affinity scheduling preference, including some match "
       "failures ",
       P("", s1, affinity3), {P("node1", s1), P("node2", s2), P("node3", s1)},
       {N("node1", rg_china), N("node2", rg_india), N("node3", az1)}, {20, kMax, 0}},
      {"Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution in pod affinity "
       "symmetry",
       P("", s2), {P("node1", s1, stay_s1_region), P("node2", s2, stay_s2_region)},
       {N("node1", rg_china), N("node2", rg_india), N("node3", az1)}, {0, kMax, 0}},
      {"Affinity symmetry with namespace selector", P("", s1, {}, {}, {}, "subteam1.team1"),
       {P("node1", s1, ns_selector), P("node2", s2, stay_s2_region)},
       {N("node1", rg_china), N("node2", rg_india), N("node3", az1)}, {kMax, 0, 0}},
      {"AntiAffinity symmetry with namespace selector", P("", s1, {}, {}, {}, "subteam1.team1"),
       {P("node1", s1, {}, ns_selector), P("node2", s2, stay_s2_region)},
       {N("node1", rg_china), N("node2", rg_india), N("node3", az1)}, {0, kMax, kMax}},
      {"Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
       P("", s1), {P("node1", s1, {}, {}, hard_affinity), P("node2", s2, {}, {}, hard_affinity)},
       {N("node1", rg_china), N("node2", rg_india), N("node3", az1)}, {kMax, kMax, 0}},
      {"Anti Affinity: pod that does not match existing pods in node will get high score ", P("", s1, {}, away_s1_az),
       {P("node1", s1), P("node2", s2)}, {N("node1", az1), N("node2", rg_china)}, {0, kMax}},
      {"Anti Affinity: pod that does not match topology key & match the pods in nodes will get higher score comparing "
       "to others ",
       P("", s1, {}, away_s1_az), {P("node1", s1), P("node2", s1)}, {N("node1", az1), N("node2", rg_china)}, {0, kMax}},
      {"Anti Affinity: one node has more matching pods comparing to other node, so the node which has more unmatches "
       "will get high score",
       P("", s1, {}, away_s1_az), {P("node1", s1), P("node1", s1), P("node2", s2)},
       {N("node1", az1), N("node2", rg_india)}, {0, kMax}},
      {"Anti Affinity symmetry: the existing pods in node which has anti affinity match will get high score", P("", s2),
       {P("node1", s1, {}, away_s2_az), P("node2", s2, {}, away_s1_az)}, {N("node1", az1), N("node2", az2)}, {0, kMax}},
      {"Affinity and Anti Affinity: considered only preferredDuringSchedulingIgnoredDuringExecution in both pod "
       "affinity & anti affinity",
       P("", s1, stay_s1_region_8, away_s2_az), {P("node1", s1), P("node2", s1)},
       {N("node1", rg_china), N("node2", az1)}, {kMax, 0}},
      {"Affinity and Anti Affinity: considering both affinity and anti-affinity, the pod to schedule and existing "
       "pods have the same labels",
       P("", s1, stay_s1_region_8, away_s2_az),
       {P("node1", s1), P("node1", s1), P("node2", s1), P("node3", s1), P("node3", s1), P("node4", s1), P("node5", s1)},
       {N("node1", rg_china_az1), N("node2", rg_india), N("node3", rg_china), N("node4", rg_china),
        N("node5", rg_india)},
       {kMax, 0, kMax, kMax, 0}},
      {"Affinity and Anti Affinity and symmetry: considered only preferredDuringSchedulingIgnoredDuringExecution in "
       "both pod affinity & anti affinity & symmetry",
       P("", s1, stay_s1_region_8, away_s2_az),
       {P("node1", s1), P("node2", s2), P("node3", {}, stay_s1_region_8, away_s2_az), P("node4", {}, {}, away_s1_az)},
       {N("node1", rg_china), N("node2", az1), N("node3", rg_india), N("node4", az2)}, {kMax, 0, kMax, 0}},
      {"Avoid panic when partial nodes in a topology don't have pods with affinity", P("", s1),
       {P("node1", s1), P("node2", {}, stay_s1_region_8, away_s2_az)}, {N("node1", rg_china), N("node2", rg_china)},
       {0, 0}},
      {"invalid Affinity fails PreScore", P("", {}, invalid), {}, {N("node1", rg_china), N("node2", rg_china)}, {},
       Code::kError, "{{.bad-value.}}"},
      {"invalid AntiAffinity fails PreScore", P("", {}, {}, invalid_anti), {},
       {N("node1", rg_china), N("node2", rg_china)}, {}, Code::kError, "{{.bad-value.}}"},
      {"Affinity with pods matching NamespaceSelector", P("", s1, ns_selector, {}, {}, "subteam1.team1"),
       {P("node1", s1, {}, {}, {}, "subteam1.team1"), P("node1", s1, {}, {}, {}, "subteam1.team1"),
        P("node1", s1, {}, {}, {}, "subteam1.team2"), P("node2", s1, {}, {}, {}, "subteam2.team1")},
       {N("node1", rg_china), N("node2", rg_india)}, {kMax, 0}},
      {"Affinity with pods matching both NamespaceSelector and Namespaces fields",
       P("", s1, ns_selector, {}, {}, "subteam1.team1"),
       {P("node1", s1, {}, {}, {}, "subteam1.team1"), P("node1", s1, {}, {}, {}, "subteam1.team1"),
        P("node1", s1, {}, {}, {}, "subteam2.team2"), P("node2", s1, {}, {}, {}, "subteam2.team1")},
       {N("node1", rg_china), N("node2", rg_india)}, {kMax, 0}},
      {"Affinity with pods matching NamespaceSelector (anti-affinity)",
       P("", s1, {}, ns_selector, {}, "subteam1.team1"),
       {P("node1", s1, {}, {}, {}, "subteam1.team1"), P("node1", s1, {}, {}, {}, "subteam1.team1"),
        P("node1", s1, {}, {}, {}, "subteam1.team2"), P("node2", s1, {}, {}, {}, "subteam2.team1")},
       {N("node1", rg_china), N("node2", rg_india)}, {0, kMax}},
      {"Affinity with pods matching both NamespaceSelector and Namespaces fields (anti-affinity)",
       P("", s1, {}, ns_selector, {}, "subteam1.team1"),
       {P("node1", s1, {}, {}, {}, "subteam1.team1"), P("node1", s1, {}, {}, {}, "subteam1.team1"),
        P("node1", s1, {}, {}, {}, "subteam2.team2"), P("node2", s1, {}, {}, {}, "subteam2.team1")},
       {N("node1", rg_china), N("node2", rg_india)}, {0, kMax}},
      {"Ignore preferred terms of existing pods", P("", s2),
       {P("node1", s1, stay_s1_region_8, away_s2_az), P("node2", s2, stay_s2_region)},
       {N("node1", rg_china), N("node2", rg_india)}, {}, Code::kSkip, "", /*ignore_existing=*/true},
      {"Do not ignore preferred terms of existing pods", P("", s2),
       {P("node1", s1, stay_s1_region_8, away_s2_az), P("node2", s2, stay_s2_region)},
       {N("node1", rg_china), N("node2", rg_india)}, {0, kMax}},
      {"No nodes to score", P("", s2), {}, {}, {}, Code::kSkip},
  };
  for (const auto& tc : cases) RunScoreCase(tc);
}

TEST(InterPodAffinityScore, TestPreferredAffinityWithHardPodAffinitySymmetricWeight) {
  const api::StringMap service_s1{{"service", "S1"}};
  const Terms hard = {WithNsSelector(Term({In("service", {"S1"})}, "region", {"", "subteam2.team2"}),
                                     {In("team", {"team1"})})};
  auto existing = [&](std::string node) { return PodPreferred("", std::move(node), {}, {}, {}, hard); };
  const std::vector<api::NodePtr> nodes = {NodeWith("node1", {{"region", "China"}}),
                                           NodeWith("node2", {{"region", "India"}}), NodeWith("node3", {{"az", "az1"}})};
  const std::vector<api::PodPtr> pods = {existing("node1"), existing("node2")};
  auto pod = [&](std::string ns) { return PodPreferred(std::move(ns), "", service_s1, {}, {}); };
  const std::vector<ScoreCase> cases = {
      {"with default weight", pod(""), pods, nodes, {kMaxNodeScore, kMaxNodeScore, 0}},
      {"with zero weight", pod(""), pods, nodes, {}, Code::kSkip, "", false, 0},
      {"with no matching namespace", pod("subteam1.team2"), pods, nodes, {}, Code::kSkip},
      {"with matching NamespaceSelector", pod("subteam1.team1"), pods, nodes, {kMaxNodeScore, kMaxNodeScore, 0}},
      {"with matching Namespaces", pod("subteam2.team2"), pods, nodes, {kMaxNodeScore, kMaxNodeScore, 0}},
  };
  for (const auto& tc : cases) RunScoreCase(tc);
}

TEST(InterPodAffinityScore, ScoreWithoutPreScoreIsAnError) {
  Env env({NodeWith("n", {})}, {});
  CycleState state;
  int64_t score = 0;
  Status s = env.plugin.Score(state, api::Pod(), *env.handle.Snapshot().List()[0], score);
  EXPECT_EQ(s.code(), Code::kError);
}

}  // namespace
}  // namespace ksched::framework::plugins::interpodaffinity
