// Cases ported from upstream interpodaffinity/filtering_test.go (1.20.2, names kept), with
// today's single-reason statuses, plus newer cases (namespaceSelector, matchLabelKeys).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pkg/framework/plugins/interpodaffinity/test_util.h"

namespace ksched::framework::plugins::interpodaffinity {
namespace {

using namespace testutil;  // NOLINT

const Status kOk;
const Status kAffinityFail(Code::kUnschedulableAndUnresolvable, std::string(kErrReasonAffinityRulesNotMatch));
const Status kAntiFail(Code::kUnschedulable, std::string(kErrReasonAntiAffinityRulesNotMatch));
const Status kExistingFail(Code::kUnschedulable, std::string(kErrReasonExistingAntiAffinityRulesNotMatch));

// PreFilter then Filter on every node; a skipped PreFilter means every node passes.
std::vector<Status> RunFilter(Env& env, const api::Pod& pod, Status* prefilter = nullptr) {
  CycleState state;
  PreFilterResult result;
  Status pre = env.plugin.PreFilter(state, pod, result);
  if (prefilter != nullptr) *prefilter = pre;
  std::vector<Status> out;
  for (const auto& info : env.handle.Snapshot().List()) {
    if (pre.IsSkip()) {
      out.push_back(kOk);
    } else if (!pre.IsSuccess()) {
      out.push_back(pre);
    } else {
      out.push_back(env.plugin.Filter(state, pod, *info));
    }
  }
  return out;
}

struct SingleNodeCase {
  std::string name;
  api::PodPtr pod;
  std::vector<api::PodPtr> pods;
  Status want;
  std::string want_prefilter_error;  // substring of a failing PreFilter's message
};

TEST(InterPodAffinityFilter, TestRequiredAffinitySingleNode) {
  const api::StringMap pod_label{{"service", "securityscan"}};
  const api::StringMap pod_label2{{"security", "S1"}};
  const api::NodePtr node1 = NodeWith("machine1", {{"region", "r1"}, {"zone", "z11"}});
  const std::vector<SingleNodeCase> cases = {
      {"A pod that has no required pod affinity scheduling rules can schedule onto a node with no existing pods",
       PodWith("", "", {}, {}, {}), {}, kOk},
      {"satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In operator that matches "
       "the existing pod",
       PodWith("", "", pod_label2, {Term({In("service", {"securityscan", "value2"})}, "region")}, {}),
       {Plain("machine1", pod_label)}, kOk},
      {"satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using not in operator in "
       "labelSelector that matches the existing pod",
       PodWith("", "", pod_label2, {Term({NotIn("service", {"securityscan3", "value3"})}, "region")}, {}),
       {Plain("machine1", pod_label)}, kOk},
      {"Does not satisfy the PodAffinity with labelSelector because of diff Namespace",
       PodWith("", "", pod_label2, {Term({In("service", {"securityscan", "value2"})}, "", {"DiffNameSpace"})}, {}),
       {Plain("machine1", pod_label, "ns")}, kAffinityFail},
      {"Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod",
       PodWith("", "", pod_label, {Term({In("service", {"antivirusscan", "value2"})}, "")}, {}),
       {Plain("machine1", pod_label)}, kAffinityFail},
      {"satisfies the PodAffinity with different label Operators in multiple RequiredDuringSchedulingIgnoredDuring"
       "Execution ",
       PodWith("", "", pod_label2,
               {Term({Exists("service"), DoesNotExist("wrongkey")}, "region"),
                Term({In("service", {"securityscan"}), NotIn("service", {"WrongValue"})}, "region")},
               {}),
       {Plain("machine1", pod_label)}, kOk},
      {"The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot schedule onto the node "
       "because one of the matchExpression item don't match.",
       PodWith("", "", pod_label2,
               {Term({Exists("service"), DoesNotExist("wrongkey")}, "region"),
                Term({In("service", {"securityscan2"}), NotIn("service", {"WrongValue"})}, "region")},
               {}),
       {Plain("machine1", pod_label)}, kAffinityFail},
      {"satisfies the PodAffinity and PodAntiAffinity with the existing pod",
       PodWith("", "", pod_label2, {Term({In("service", {"securityscan", "value2"})}, "region")},
               {Term({In("service", {"antivirusscan", "value2"})}, "node")}),
       {Plain("machine1", pod_label)}, kOk},
      {"satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the existing pod",
       PodWith("", "", pod_label2, {Term({In("service", {"securityscan", "value2"})}, "region")},
               {Term({In("service", {"antivirusscan", "value2"})}, "node")}),
       {PodWith("", "machine1", pod_label, {}, {Term({In("service", {"antivirusscan", "value2"})}, "node")})}, kOk},
      {"satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod",
       PodWith("", "", pod_label2, {Term({In("service", {"securityscan", "value2"})}, "region")},
               {Term({In("service", {"securityscan", "value2"})}, "zone")}),
       {Plain("machine1", pod_label)}, kAntiFail},
      {"satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity symmetry with the existing "
       "pod",
       PodWith("", "", pod_label, {Term({In("service", {"securityscan", "value2"})}, "region")},
               {Term({In("service", {"antivirusscan", "value2"})}, "node")}),
       {PodWith("", "machine1", pod_label, {}, {Term({In("service", {"securityscan", "value2"})}, "zone")})},
       kExistingFail},
      {"pod matches its own Label in PodAffinity and that matches the existing pod Labels",
       PodWith("", "", pod_label, {Term({NotIn("service", {"securityscan", "value2"})}, "region")}, {}),
       {Plain("machine2", pod_label)}, kAffinityFail},
      {"verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. doesn't "
       "satisfy PodAntiAffinity symmetry with the existing pod",
       PodWith("", "", pod_label, {}, {}),
       {PodWith("", "machine1", pod_label, {}, {Term({In("service", {"securityscan", "value2"})}, "zone")})},
       kExistingFail},
      {"verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. satisfy "
       "PodAntiAffinity symmetry with the existing pod",
       PodWith("", "", pod_label, {}, {}),
       {PodWith("", "machine1", pod_label, {}, {Term({NotIn("service", {"securityscan", "value2"})}, "zone")})}, kOk},
      {"satisfies the PodAntiAffinity with existing pod but doesn't satisfy PodAntiAffinity symmetry with incoming pod",
       PodWith("", "", pod_label, {}, {Term({Exists("service")}, "region"), Term({Exists("security")}, "region")}),
       {PodWith("", "machine1", pod_label2, {}, {Term({Exists("security")}, "zone")})}, kAntiFail},
      {"PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each other on AffinityTerms",
       PodWith("", "", pod_label, {}, {Term({Exists("service")}, "zone"), Term({Exists("security")}, "zone")}),
       {PodWith("", "machine1", pod_label2, {}, {Term({Exists("security")}, "zone")})}, kAntiFail},
      {"PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each other on AffinityTerms",
       PodWith("", "", pod_label2, {}, {Term({Exists("security")}, "zone")}),
       {PodWith("", "machine1", pod_label, {}, {Term({Exists("service")}, "zone"), Term({Exists("security")}, "zone")})},
       kExistingFail},
      {"PodAntiAffinity symmetry check b1: incoming pod and existing pod partially match each other on AffinityTerms",
       PodWith("", "", {{"abc", ""}, {"xyz", ""}}, {}, {Term({Exists("abc")}, "zone"), Term({Exists("def")}, "zone")}),
       {PodWith("", "machine1", {{"def", ""}, {"xyz", ""}}, {},
                {Term({Exists("abc")}, "zone"), Term({Exists("def")}, "zone")})},
       kAntiFail},
      {"PodAntiAffinity symmetry check b2: incoming pod and existing pod partially match each other on AffinityTerms",
       PodWith("", "", {{"def", ""}, {"xyz", ""}}, {}, {Term({Exists("abc")}, "zone"), Term({Exists("def")}, "zone")}),
       {PodWith("", "machine1", {{"abc", ""}, {"xyz", ""}}, {},
                {Term({Exists("abc")}, "zone"), Term({Exists("def")}, "zone")})},
       kAntiFail},
      {"PodAffinity fails PreFilter with an invalid affinity label syntax",
       PodWith("", "", pod_label, {Term({In("service", {"{{.bad-value.}}"})}, "region")},
               {Term({In("service", {"antivirusscan", "value2"})}, "node")}),
       {}, Status(Code::kUnschedulableAndUnresolvable), "invalid label value"},
      {"PodAntiAffinity fails PreFilter with an invalid antiaffinity label syntax",
       PodWith("", "", pod_label, {Term({In("service", {"foo"})}, "region")},
               {Term({In("service", {"{{.bad-value.}}"})}, "node")}),
       {}, Status(Code::kUnschedulableAndUnresolvable), "invalid label value"},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    Env env({node1}, tc.pods);
    Status pre;
    std::vector<Status> got = RunFilter(env, *tc.pod, &pre);
    if (!tc.want_prefilter_error.empty()) {
      EXPECT_EQ(pre.code(), tc.want.code());
      EXPECT_NE(pre.Message().find(tc.want_prefilter_error), std::string::npos) << pre.Message();
      EXPECT_EQ(pre.Message().rfind("parsing pod: ", 0), 0u) << pre.Message();
      continue;
    }
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0], tc.want) << got[0].ToString();
  }
}

struct MultiNodeCase {
  std::string name;
  api::PodPtr pod;
  std::vector<api::PodPtr> pods;
  std::vector<api::NodePtr> nodes;
  std::vector<Status> want;
};

TEST(InterPodAffinityFilter, TestRequiredAffinityMultipleNodes) {
  const api::StringMap pod_label_a{{"foo", "bar"}};
  const api::StringMap rg_china{{"region", "China"}};
  const api::StringMap rg_china_az1{{"region", "China"}, {"az", "az1"}};
  const api::StringMap rg_india{{"region", "India"}};
  auto hosts3 = [](api::StringMap a, api::StringMap b, api::StringMap c) {
    return std::vector<api::NodePtr>{NodeWith("nodeA", a), NodeWith("nodeB", b), NodeWith("nodeC", c)};
  };
  const std::vector<MultiNodeCase> cases = {
      {"A pod can be scheduled onto all the nodes that have the same topology key & label value with one of them has "
       "an existing pod that matches the affinity rules",
       PodWith("", "", {}, {Term({In("foo", {"bar"})}, "region")}, {}),
       {PodWith("", "machine1", pod_label_a, {}, {}, "p1")},
       {NodeWith("machine1", rg_china), NodeWith("machine2", rg_china_az1), NodeWith("machine3", rg_india)},
       {kOk, kOk, kAffinityFail}},
      {"The affinity rule is to schedule all of the pods of this collection to the same zone. The first pod of the "
       "collection should not be blocked from being scheduled onto any node, even there's no existing pod that "
       "matches the rule anywhere.",
       PodWith("", "", {{"foo", "bar"}, {"service", "securityscan"}},
               {Term({In("foo", {"bar"})}, "zone"), Term({In("service", {"securityscan"})}, "zone")}, {}),
       {PodWith("", "nodeA", {{"foo", "bar"}}, {}, {}, "p1")},
       {NodeWith("nodeA", {{"zone", "az1"}, {"hostname", "h1"}}), NodeWith("nodeB", {{"zone", "az2"}, {"hostname", "h2"}})},
       {kOk, kOk}},
      {"The first pod of the collection can only be scheduled on nodes labelled with the requested topology keys",
       PodWith("", "", {{"foo", "bar"}, {"service", "securityscan"}},
               {Term({In("foo", {"bar"})}, "zone"), Term({In("service", {"securityscan"})}, "zone")}, {}),
       {PodWith("", "nodeA", {{"foo", "bar"}}, {}, {}, "p1")},
       {NodeWith("nodeA", {{"zoneLabel", "az1"}, {"hostname", "h1"}}),
        NodeWith("nodeB", {{"zoneLabel", "az2"}, {"hostname", "h2"}})},
       {kAffinityFail, kAffinityFail}},
      {"NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod "
       "affinity rule. The pod can not be scheduled onto nodeA and nodeB.",
       PodWith("", "", {}, {}, {Term({In("foo", {"abc"})}, "region")}),
       {Plain("nodeA", {{"foo", "abc"}})},
       {NodeWith("nodeA", {{"region", "r1"}, {"hostname", "nodeA"}}), NodeWith("nodeB", {{"region", "r1"}, {"hostname", "nodeB"}})},
       {kAntiFail, kAntiFail}},
      {"This test ensures that anti-affinity matches a pod when any term of the anti-affinity rule matches a pod.",
       PodWith("", "", {}, {},
               {Term({In("foo", {"abc"})}, "region"), Term({In("service", {"securityscan"})}, "zone")}),
       {Plain("nodeA", {{"foo", "abc"}, {"service", "securityscan"}})},
       {NodeWith("nodeA", {{"region", "r1"}, {"zone", "z1"}, {"hostname", "nodeA"}}),
        NodeWith("nodeB", {{"region", "r1"}, {"zone", "z2"}, {"hostname", "nodeB"}})},
       {kAntiFail, kAntiFail}},
      {"NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod "
       "affinity rule. The pod can not be scheduled onto nodeA and nodeB but can be scheduled onto nodeC",
       PodWith("", "", {}, {}, {Term({In("foo", {"abc"})}, "region")}),
       {Plain("nodeA", {{"foo", "abc"}})}, hosts3(rg_china, rg_china_az1, rg_india),
       {kAntiFail, kAntiFail, kOk}},
      {"NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod "
       "affinity rule. The pod can not be scheduled onto nodeA, nodeB, but can be scheduled onto nodeC (NodeC has an "
       "existing pod that match the inter pod affinity rule but in different namespace)",
       PodWith("NS1", "", {{"foo", "123"}}, {}, {Term({In("foo", {"bar"})}, "region")}),
       {Plain("nodeA", {{"foo", "bar"}}, "NS1"), PodWith("NS2", "nodeC", {}, {}, {Term({In("foo", {"123"})}, "region")})},
       hosts3(rg_china, rg_china_az1, rg_india), {kAntiFail, kAntiFail, kOk}},
      {"Test existing pod's anti-affinity: if an existing pod has a term with invalid topologyKey, labelSelector of "
       "the term is firstly checked, and then topologyKey of the term is also checked",
       PodWith("", "", {{"foo", ""}}, {}, {}),
       {PodWith("", "nodeA", {}, {}, {Term({Exists("foo")}, "invalid-node-label")})},
       {NodeWith("nodeA", {{"region", "r1"}, {"zone", "z1"}, {"hostname", "nodeA"}}),
        NodeWith("nodeB", {{"region", "r1"}, {"zone", "z1"}, {"hostname", "nodeB"}})},
       {kOk, kOk}},
      {"Test incoming pod's anti-affinity: even if labelSelector matches, we still check if topologyKey matches",
       PodWith("", "", {}, {}, {Term({Exists("foo")}, "invalid-node-label")}),
       {Plain("nodeA", {{"foo", ""}})},
       {NodeWith("nodeA", {{"region", "r1"}, {"zone", "z1"}, {"hostname", "nodeA"}}),
        NodeWith("nodeB", {{"region", "r1"}, {"zone", "z1"}, {"hostname", "nodeB"}})},
       {kOk, kOk}},
      {"Test existing pod's anti-affinity: incoming pod wouldn't considered as a fit as it violates each existingPod's "
       "terms on all nodes",
       PodWith("", "", {{"foo", ""}, {"bar", ""}}, {}, {}),
       {PodWith("", "nodeA", {}, {}, {Term({Exists("foo")}, "zone")}),
        PodWith("", "nodeA", {}, {}, {Term({Exists("bar")}, "region")})},
       {NodeWith("nodeA", {{"region", "r1"}, {"zone", "z1"}, {"hostname", "nodeA"}}),
        NodeWith("nodeB", {{"region", "r1"}, {"zone", "z2"}, {"hostname", "nodeB"}})},
       {kExistingFail, kExistingFail}},
      {"Test incoming pod's anti-affinity: incoming pod wouldn't considered as a fit as it at least violates one "
       "anti-affinity rule of existingPod",
       PodWith("", "", {}, {}, {Term({Exists("foo")}, "zone"), Term({Exists("bar")}, "region")}),
       {Plain("nodeA", {{"foo", ""}}), Plain("nodeB", {{"bar", ""}})},
       {NodeWith("nodeA", {{"region", "r1"}, {"zone", "z1"}, {"hostname", "nodeA"}}),
        NodeWith("nodeB", {{"region", "r1"}, {"zone", "z2"}, {"hostname", "nodeB"}})},
       {kAntiFail, kAntiFail}},
      {"Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a "
       "single term match - case when one term has invalid topologyKey",
       PodWith("", "", {{"foo", ""}, {"bar", ""}}, {}, {}),
       {PodWith("", "nodeA", {}, {}, {Term({Exists("foo")}, "invalid-node-label"), Term({Exists("bar")}, "zone")}, "podA")},
       {NodeWith("nodeA", {{"region", "r1"}, {"zone", "z1"}, {"hostname", "nodeA"}}),
        NodeWith("nodeB", {{"region", "r1"}, {"zone", "z2"}, {"hostname", "nodeB"}})},
       {kExistingFail, kOk}},
      {"Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a "
       "single term match - case when one term has invalid topologyKey",
       PodWith("", "", {}, {}, {Term({Exists("foo")}, "invalid-node-label"), Term({Exists("bar")}, "zone")}),
       {Plain("nodeA", {{"foo", ""}, {"bar", ""}})},
       {NodeWith("nodeA", {{"region", "r1"}, {"zone", "z1"}, {"hostname", "nodeA"}}),
        NodeWith("nodeB", {{"region", "r1"}, {"zone", "z2"}, {"hostname", "nodeB"}})},
       {kAntiFail, kOk}},
      {"Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a "
       "single term match - case when all terms have valid topologyKey",
       PodWith("", "", {{"foo", ""}, {"bar", ""}}, {}, {}),
       {PodWith("", "nodeA", {}, {}, {Term({Exists("foo")}, "region"), Term({Exists("bar")}, "zone")})},
       {NodeWith("nodeA", {{"region", "r1"}, {"zone", "z1"}, {"hostname", "nodeA"}}),
        NodeWith("nodeB", {{"region", "r1"}, {"zone", "z2"}, {"hostname", "nodeB"}})},
       {kExistingFail, kExistingFail}},
      {"Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a "
       "single term match - case when all terms have valid topologyKey",
       PodWith("", "", {}, {}, {Term({Exists("foo")}, "region"), Term({Exists("bar")}, "zone")}),
       {Plain("nodeA", {{"foo", ""}, {"bar", ""}})},
       {NodeWith("nodeA", {{"region", "r1"}, {"zone", "z1"}, {"hostname", "nodeA"}}),
        NodeWith("nodeB", {{"region", "r1"}, {"zone", "z2"}, {"hostname", "nodeB"}})},
       {kAntiFail, kAntiFail}},
      {"Test existing pod's anti-affinity: existingPod on nodeA and nodeB has at least one anti-affinity term matches "
       "incoming pod, so incoming pod can only be scheduled to nodeC",
       PodWith("", "", {{"foo", ""}, {"bar", ""}}, {}, {}),
       {PodWith("", "nodeA", {}, {}, {Term({Exists("foo")}, "zone"), Term({Exists("labelA")}, "zone")}),
        PodWith("", "nodeB", {}, {}, {Term({Exists("bar")}, "zone"), Term({Exists("labelB")}, "zone")})},
       {NodeWith("nodeA", {{"region", "r1"}, {"zone", "z1"}, {"hostname", "nodeA"}}),
        NodeWith("nodeB", {{"region", "r1"}, {"zone", "z2"}, {"hostname", "nodeB"}}),
        NodeWith("nodeC", {{"region", "r1"}, {"zone", "z3"}, {"hostname", "nodeC"}})},
       {kExistingFail, kExistingFail, kOk}},
      {"Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all topologyKeys "
       "match",
       PodWith("", "", {}, {Term({Exists("foo")}, "region"), Term({Exists("bar")}, "zone")}, {}),
       {Plain("nodeA", {{"foo", ""}, {"bar", ""}})},
       {NodeWith("nodeA", {{"region", "r1"}, {"zone", "z1"}, {"hostname", "nodeA"}}),
        NodeWith("nodeB", {{"region", "r1"}, {"zone", "z1"}, {"hostname", "nodeB"}})},
       {kOk, kOk}},
      {"Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all topologyKeys "
       "match, and the match logic should be satisfied on the same pod",
       PodWith("", "", {}, {Term({Exists("foo")}, "region"), Term({Exists("bar")}, "zone")}, {}),
       {Plain("nodeA", {{"foo", ""}}), Plain("nodeB", {{"bar", ""}})},
       {NodeWith("nodeA", {{"region", "r1"}, {"zone", "z1"}, {"hostname", "nodeA"}}),
        NodeWith("nodeB", {{"region", "r1"}, {"zone", "z2"}, {"hostname", "nodeB"}})},
       {kAffinityFail, kAffinityFail}},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    Env env(tc.nodes, tc.pods);
    std::vector<Status> got = RunFilter(env, *tc.pod);
    ASSERT_EQ(got.size(), tc.want.size());
    // Snapshot::List interleaves zones; compare by node name.
    for (size_t i = 0; i < got.size(); ++i) {
      const std::string& name = env.handle.Snapshot().List()[i]->name();
      size_t want_index = 0;
      while (tc.nodes[want_index]->metadata.name != name) ++want_index;
      EXPECT_EQ(got[i], tc.want[want_index]) << name << ": " << got[i].ToString();
    }
  }
}

TEST(InterPodAffinityFilter, TestPreFilterDisabled) {
  Env env({NodeWith("n", {})}, {});
  CycleState state;
  api::Pod pod;
  Status got = env.plugin.Filter(state, pod, *env.handle.Snapshot().List()[0]);
  EXPECT_EQ(got, Status::Error("failed to read \"PreFilterInterPodAffinity\" from cycleState: not found"));
}

TEST(InterPodAffinityFilter, PreFilterSkipsWithoutTermsOrMatchingExistingAntiAffinity) {
  Env env({NodeWith("n", {{"zone", "z"}})},
          {PodWith("", "n", {}, {}, {Term({Exists("other")}, "zone")})});
  CycleState state;
  PreFilterResult result;
  EXPECT_TRUE(env.plugin.PreFilter(state, *Plain("", {{"app", "x"}}), result).IsSkip());
  // The same existing pod's term matching the incoming pod: no skip.
  EXPECT_TRUE(env.plugin.PreFilter(state, *Plain("", {{"other", "x"}}), result).IsSuccess());
}

// Replicas share one decoded affinity object (pkg/api/shared.h); PreFilter decides a
// shared object's match once per namespace, so the same object in another namespace (its
// terms default to that namespace) must not reuse the first answer.
TEST(InterPodAffinityFilter, ExistingPodsSharingOneAffinityObjectInTwoNamespaces) {
  api::PodPtr in_a = PodWith("a", "n1", {}, {}, {Term({In("app", {"web"})}, "kubernetes.io/hostname")});
  api::Pod copy = *in_a;  // shares in_a's affinity object
  copy.metadata.namespace_ = "b";
  copy.spec.node_name = "n2";
  api::PodPtr in_b = std::make_shared<const api::Pod>(std::move(copy));
  ASSERT_EQ(in_a->spec.affinity.operator->(), in_b->spec.affinity.operator->());
  std::vector<api::NodePtr> nodes = {NodeWith("n1", {{"kubernetes.io/hostname", "n1"}}),
                                     NodeWith("n2", {{"kubernetes.io/hostname", "n2"}})};
  for (const char* ns : {"a", "b"}) {
    SCOPED_TRACE(ns);
    // Both orders of the pods in the snapshot, so either namespace is seen first.
    for (bool b_first : {false, true}) {
      Env env(nodes, b_first ? std::vector<api::PodPtr>{in_b, in_a} : std::vector<api::PodPtr>{in_a, in_b});
      auto incoming = Plain("", {{"app", "web"}}, ns);
      CycleState state;
      PreFilterResult result;
      ASSERT_TRUE(env.plugin.PreFilter(state, *incoming, result).IsSuccess());
      const bool blocked_n1 = std::string(ns) == "a";
      EXPECT_EQ(env.plugin.Filter(state, *incoming, *env.handle.Snapshot().Get("n1")).IsSuccess(), !blocked_n1);
      EXPECT_EQ(env.plugin.Filter(state, *incoming, *env.handle.Snapshot().Get("n2")).IsSuccess(), blocked_n1);
    }
  }
}

// upstream TestPreFilterStateAddRemovePod: adding a pod to the state gives the same result
// as a PreFilter with it in the snapshot, and removing it again restores the state.
TEST(InterPodAffinityFilter, TestPreFilterStateAddRemovePod) {
  const api::StringMap label1{{"region", "r1"}, {"zone", "z11"}};
  const api::StringMap label2{{"region", "r1"}, {"zone", "z12"}};
  const api::StringMap label3{{"region", "r2"}, {"zone", "z21"}};
  const api::StringMap selector1{{"foo", "bar"}};
  const Terms anti_foo_bar = {Term({In("foo", {"bar"})}, "region")};
  const Terms affinity_foo_bar = {Term({In("foo", {"bar"})}, "region")};
  struct Case {
    std::string name;
    api::PodPtr pending;
    std::vector<api::PodPtr> existing;
    api::PodPtr added;
  };
  const std::vector<Case> cases = {
      {"no affinity exist",
       PodWith("", "", selector1, {}, {}),
       {Plain("nodeA", selector1), Plain("nodeC", {})},
       Plain("nodeB", selector1)},
      {"preFilterState anti-affinity terms are updated correctly after adding and removing a pod",
       PodWith("", "", selector1, {}, anti_foo_bar),
       {Plain("nodeA", selector1), PodWith("", "nodeC", {}, {}, anti_foo_bar)},
       PodWith("", "nodeB", selector1, {}, anti_foo_bar)},
      {"preFilterState anti-affinity terms are updated correctly after adding and removing a pod (2)",
       PodWith("", "", selector1, {}, anti_foo_bar),
       {Plain("nodeA", selector1), PodWith("", "nodeC", {}, {}, anti_foo_bar)},
       PodWith("", "nodeA", selector1, {}, {Term({In("foo", {"bar"})}, "zone")})},
      {"preFilterState matching pod affinity and anti-affinity are updated correctly after adding and removing a pod",
       PodWith("", "", selector1, affinity_foo_bar, anti_foo_bar),
       {Plain("nodeA", selector1), PodWith("", "nodeC", {}, affinity_foo_bar, {})},
       PodWith("", "nodeA", selector1, {}, anti_foo_bar)},
      {"preFilterState matching pod affinity and anti-affinity are updated correctly after adding and removing a pod "
       "(2)",
       PodWith("", "", selector1, affinity_foo_bar, anti_foo_bar),
       {Plain("nodeA", selector1), PodWith("", "nodeC", {}, affinity_foo_bar, {})},
       PodWith("", "nodeA", selector1, {}, anti_foo_bar)},
  };
  const std::vector<api::NodePtr> nodes = {NodeWith("nodeA", label1), NodeWith("nodeB", label2),
                                           NodeWith("nodeC", label3)};
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    Env without(nodes, tc.existing);
    std::vector<api::PodPtr> all = tc.existing;
    all.push_back(tc.added);
    Env with(nodes, all);

    CycleState state, expected_state, original_state;
    PreFilterResult r;
    // Run without a Skip so the state exists: every case has terms or a matching existing term.
    Status s = without.plugin.PreFilter(state, *tc.pending, r);
    if (s.IsSkip()) continue;
    ASSERT_TRUE(s.IsSuccess()) << s.ToString();
    ASSERT_TRUE(without.plugin.PreFilter(original_state, *tc.pending, r).IsSuccess());
    ASSERT_TRUE(with.plugin.PreFilter(expected_state, *tc.pending, r).IsSuccess());

    const cache::NodeInfo* node = with.handle.Snapshot().Get(tc.added->spec.node_name);
    const cache::PodEntry* entry = nullptr;
    for (const auto& e : node->pods()) {
      if (e.pod == tc.added) entry = &e;
    }
    ASSERT_NE(entry, nullptr);
    ASSERT_TRUE(without.plugin.AddPod(state, *tc.pending, *entry, *node).IsSuccess());
    const auto* got = state.Read<PreFilterState>(kPreFilterStateKey);
    const auto* want = expected_state.Read<PreFilterState>(kPreFilterStateKey);
    EXPECT_EQ(got->existing_anti_affinity, want->existing_anti_affinity);
    EXPECT_EQ(got->affinity, want->affinity);
    EXPECT_EQ(got->anti_affinity, want->anti_affinity);

    ASSERT_TRUE(without.plugin.RemovePod(state, *tc.pending, *entry, *node).IsSuccess());
    const auto* orig = original_state.Read<PreFilterState>(kPreFilterStateKey);
    EXPECT_EQ(got->existing_anti_affinity, orig->existing_anti_affinity);
    EXPECT_EQ(got->affinity, orig->affinity);
    EXPECT_EQ(got->anti_affinity, orig->anti_affinity);
  }
}

TEST(InterPodAffinityFilter, TestPreFilterStateClone) {
  PreFilterState source;
  source.existing_anti_affinity.Add("name", "machine1", 1);
  source.existing_anti_affinity.Add("name", "machine2", 1);
  source.affinity.Add("name", "nodeA", 1);
  source.affinity.Add("name", "nodeC", 2);
  source.anti_affinity.Add("name", "nodeN", 3);
  source.anti_affinity.Add("name", "nodeM", 1);
  std::unique_ptr<StateData> clone = source.Clone();
  auto* c = dynamic_cast<PreFilterState*>(clone.get());
  ASSERT_NE(c, nullptr);
  EXPECT_NE(c, &source);
  EXPECT_EQ(c->existing_anti_affinity, source.existing_anti_affinity);
  EXPECT_EQ(c->affinity, source.affinity);
  EXPECT_EQ(c->anti_affinity, source.anti_affinity);
  // Independent counts.
  c->affinity.Add("name", "nodeA", -1);
  EXPECT_EQ(source.affinity.Get("name", "nodeA"), 1);
  EXPECT_EQ(c->affinity.size(), 1u);
}

// upstream TestGetTPMapMatchingIncomingAffinityAntiAffinity.
TEST(InterPodAffinityFilter, TestGetTPMapMatchingIncomingAffinityAntiAffinity) {
  auto terms = [](std::vector<std::string> keys) {
    Terms out;
    for (auto& k : keys) out.push_back(Term({Exists(k)}, "hostname"));
    return out;
  };
  auto normal = [](std::vector<std::string> labels) {
    api::StringMap m;
    for (auto& l : labels) m.Set(l, "");
    return Plain("nodeA", m);
  };
  const api::NodePtr node_a = NodeWith("nodeA", {{"hostname", "nodeA"}});
  struct Case {
    std::string name;
    std::vector<api::PodPtr> existing;
    api::PodPtr pod;
    int64_t want_affinity;  // count at (hostname, nodeA)
    int64_t want_anti;
    size_t want_affinity_size, want_anti_size;
  };
  const std::vector<Case> cases = {
      {"no pod has label that violates incoming pod's affinity and anti-affinity", {normal({"bbb"})},
       PodWith("", "", {}, terms({"aaa"}), terms({"aaa"})), 0, 0, 0, 0},
      {"existing pod matches incoming pod's affinity and anti-affinity - single term case", {normal({"aaa"})},
       PodWith("", "", {}, terms({"aaa"}), terms({"aaa"})), 1, 1, 1, 1},
      {"existing pod matches incoming pod's affinity and anti-affinity - multiple terms case", {normal({"aaa", "bbb"})},
       PodWith("", "", {}, terms({"aaa", "bbb"}), terms({"aaa"})), 2, 1, 1, 1},
      {"existing pod not match incoming pod's affinity but matches anti-affinity", {normal({"aaa"})},
       PodWith("", "", {}, terms({"aaa", "bbb"}), terms({"aaa", "bbb"})), 0, 1, 0, 1},
      {"incoming pod's anti-affinity has more than one term - existing pod violates partial term - case 1",
       {normal({"aaa", "ccc"})}, PodWith("", "", {}, terms({"aaa", "bbb"}), terms({"aaa", "bbb"})), 0, 1, 0, 1},
      {"incoming pod's anti-affinity has more than one term - existing pod violates partial term - case 2",
       {normal({"aaa", "bbb"})}, PodWith("", "", {}, terms({"aaa", "bbb"}), terms({"aaa", "bbb"})), 2, 2, 1, 1},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    Env env({node_a}, tc.existing);
    CycleState state;
    PreFilterResult r;
    ASSERT_TRUE(env.plugin.PreFilter(state, *tc.pod, r).IsSuccess());
    const auto* s = state.Read<PreFilterState>(kPreFilterStateKey);
    EXPECT_EQ(s->affinity.Get("hostname", "nodeA"), tc.want_affinity);
    EXPECT_EQ(s->anti_affinity.Get("hostname", "nodeA"), tc.want_anti);
    EXPECT_EQ(s->affinity.size(), tc.want_affinity_size);
    EXPECT_EQ(s->anti_affinity.size(), tc.want_anti_size);
  }
}

// Newer upstream: namespaceSelector on both sides.
TEST(InterPodAffinityFilter, NamespaceSelector) {
  const api::NodePtr node = NodeWith("machine1", {{"region", "r1"}, {"zone", "z11"}});
  {
    SCOPED_TRACE("incoming affinity selects the namespace of the existing pod");
    Env env({node}, {Plain("machine1", {{"service", "securityscan"}}, "subteam1.team1")});
    AddTeamNamespaces(env.lister);
    auto pod = PodWith("subteam1.team2", "", {{"security", "S1"}},
                       {WithNsSelector(Term({In("service", {"securityscan"})}, "region"), {In("team", {"team1"})})}, {});
    EXPECT_EQ(RunFilter(env, *pod)[0], kOk);
  }
  {
    SCOPED_TRACE("incoming affinity's namespaceSelector selects other namespaces");
    Env env({node}, {Plain("machine1", {{"service", "securityscan"}}, "subteam1.team1")});
    AddTeamNamespaces(env.lister);
    auto pod = PodWith("subteam1.team2", "", {{"security", "S1"}},
                       {WithNsSelector(Term({In("service", {"securityscan"})}, "region"), {In("team", {"team2"})})}, {});
    EXPECT_EQ(RunFilter(env, *pod)[0], kAffinityFail);
  }
  {
    SCOPED_TRACE("empty namespaceSelector matches all namespaces");
    Env env({node}, {Plain("machine1", {{"service", "securityscan"}}, "other")});
    auto pod = PodWith("ns", "", {}, {}, {WithNsSelector(Term({In("service", {"securityscan"})}, "zone"), {})});
    EXPECT_EQ(RunFilter(env, *pod)[0], kAntiFail);
  }
  {
    SCOPED_TRACE("existing pod's anti-affinity namespaceSelector matches the incoming pod's namespace labels");
    Env env({node}, {PodWith("subteam2.team2", "machine1", {}, {},
                             {WithNsSelector(Term({In("service", {"securityscan"})}, "zone"), {In("team", {"team1"})})})});
    AddTeamNamespaces(env.lister);
    EXPECT_EQ(RunFilter(env, *Plain("", {{"service", "securityscan"}}, "subteam1.team1"))[0], kExistingFail);
    EXPECT_EQ(RunFilter(env, *Plain("", {{"service", "securityscan"}}, "subteam1.team2"))[0], kOk);
  }
}

// Newer upstream: matchLabelKeys / mismatchLabelKeys fold the pod's own label values in.
TEST(InterPodAffinityFilter, MatchLabelKeys) {
  const api::NodePtr node_a = NodeWith("nodeA", {{"zone", "z1"}});
  const api::NodePtr node_b = NodeWith("nodeB", {{"zone", "z2"}});
  auto term = Term({Exists("app")}, "zone");
  term.match_label_keys = {"tenant"};
  auto anti = Term({Exists("app")}, "zone");
  anti.mismatch_label_keys = {"tenant"};
  {
    SCOPED_TRACE("matchLabelKeys: only pods of the same tenant count for affinity");
    Env env({node_a, node_b}, {Plain("nodeA", {{"app", "x"}, {"tenant", "t1"}}),
                               Plain("nodeB", {{"app", "x"}, {"tenant", "t2"}})});
    auto pod = PodWith("", "", {{"app", "x"}, {"tenant", "t2"}}, {term}, {});
    std::vector<Status> got = RunFilter(env, *pod);
    for (size_t i = 0; i < got.size(); ++i) {
      const bool is_b = env.handle.Snapshot().List()[i]->name() == "nodeB";
      EXPECT_EQ(got[i], is_b ? kOk : kAffinityFail);
    }
  }
  {
    SCOPED_TRACE("mismatchLabelKeys: only pods of other tenants count for anti-affinity");
    Env env({node_a, node_b}, {Plain("nodeA", {{"app", "x"}, {"tenant", "t1"}}),
                               Plain("nodeB", {{"app", "x"}, {"tenant", "t2"}})});
    auto pod = PodWith("", "", {{"app", "x"}, {"tenant", "t2"}}, {}, {anti});
    std::vector<Status> got = RunFilter(env, *pod);
    for (size_t i = 0; i < got.size(); ++i) {
      const bool is_b = env.handle.Snapshot().List()[i]->name() == "nodeB";
      EXPECT_EQ(got[i], is_b ? kOk : kAntiFail);
    }
  }
}

}  // namespace
}  // namespace ksched::framework::plugins::interpodaffinity
