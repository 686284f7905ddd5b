// upstream volumebinding/binder_test.go (TestFindPodVolumesWithoutProvisioning,
// TestFindPodVolumesWithProvisioning, TestAssumePodVolumes, TestRevertAssumedPodVolumes,
// TestFindAssumeVolumes) and assume_cache_test.go, with the fixtures re-expressed in
// test_util.h. Upstream runs its find cases once per CSIDriver variant; those differ only
// in the capacity check, which ksched does not make, so each case runs once here.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "pkg/framework/plugins/volumebinding/test_util.h"

namespace ksched::framework::plugins::volumebinding {
namespace {

using namespace testutil;  // NOLINT

struct Found {
  bool failed = false;  // an error (upstream's shouldFail)
  std::string error;
  std::vector<std::string> reasons;
  PodVolumes volumes;
};

// upstream's findPodVolumes helper: GetPodVolumeClaims, unbound immediate claims as an
// error, then FindPodVolumes on `node`.
Found FindOn(const FakeClusterLister& lister, AssumeCache& cache, const api::Pod& pod, const api::Node& node) {
  Found f;
  auto claims = GetPodVolumeClaims(pod, lister, cache);
  if (!claims.ok()) {
    f.failed = true;
    f.error = claims.status().message();
    return f;
  }
  if ((*claims)->has_unbound_immediate) {
    f.failed = true;
    f.error = "pod has unbound immediate PersistentVolumeClaims";
    return f;
  }
  FindResult r = FindPodVolumes(**claims, node, &f.volumes);
  if (!r.error.empty()) {
    f.failed = true;
    f.error = r.error;
  }
  f.reasons = r.Reasons();
  return f;
}

void ExpectBindings(const PodVolumes& got, const std::vector<Binding>& want) {
  ASSERT_EQ(got.static_bindings.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(*got.static_bindings[i].claim, *want[i].first) << "binding " << i;
    EXPECT_EQ(*got.static_bindings[i].pv, *want[i].second) << "binding " << i;
  }
}

void ExpectProvisions(const PodVolumes& got, const std::vector<api::PersistentVolumeClaimPtr>& want) {
  ASSERT_EQ(got.dynamic_provisions.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(*got.dynamic_provisions[i], *want[i]) << "provision " << i;
}

const std::string kBind(kErrReasonBindConflict);
const std::string kNode(kErrReasonNodeConflict);
const std::string kNoPV(kErrReasonPVNotExist);

api::PersistentVolumeClaimPtr GenericClaim(bool owned) {
  PVCBuilder b("test-pod-test-volume", kNs);
  b.UID("pvc-uid").Request("1G").Class(kImmediateClass).AccessModes({}).BoundTo("pv-bound");
  if (owned) b.OwnedBy("Pod", "test-pod", "test-pod-uid");
  return b.Ptr();
}

struct FindCase {
  std::string name;
  std::vector<api::PersistentVolumeClaimPtr> pod_claims;
  std::vector<api::PersistentVolumePtr> pvs;
  std::optional<std::vector<api::PersistentVolumeClaimPtr>> cache_claims;  // nullopt: the pod's
  std::optional<api::Pod> pod;                                             // nullopt: MakePod(pod_claims)
  std::vector<Binding> bindings;
  std::vector<api::PersistentVolumeClaimPtr> provisions;
  std::vector<std::string> reasons;
  bool should_fail = false;
};

void RunFindCases(const std::vector<FindCase>& cases) {
  for (const FindCase& c : cases) {
    SCOPED_TRACE(c.name);
    FakeClusterLister lister;
    AddClasses(lister);
    AddAll(lister, c.cache_claims.value_or(c.pod_claims), c.pvs);
    AssumeCache cache;
    api::Pod pod = c.pod.value_or(MakePod(c.pod_claims));
    Found f = FindOn(lister, cache, pod, *MakeNode("node1"));
    EXPECT_EQ(f.failed, c.should_fail) << f.error;
    EXPECT_EQ(f.reasons, c.reasons);
    if (c.should_fail) continue;
    ExpectBindings(f.volumes, c.bindings);
    ExpectProvisions(f.volumes, c.provisions);
  }
}

TEST(FindPodVolumes, WithoutProvisioning) {
  Fixtures x;
  api::PersistentVolumeClaimPtr generic = GenericClaim(true);
  const std::vector<FindCase> cases = {
      {.name = "no-volumes", .pod = PodBuilder("test-pod").Namespace(kNs).Build()},
      {.name = "no-pvcs", .pod = PodBuilder("test-pod").Namespace(kNs).Volume("empty", api::VolumeSource{}).Build()},
      {.name = "pvc-not-found",
       .pod_claims = {x.bound},
       .cache_claims = std::vector<api::PersistentVolumeClaimPtr>{},
       .should_fail = true},
      {.name = "bound-pvc", .pod_claims = {x.bound}, .pvs = {x.pv_bound}},
      {.name = "bound-pvc,pv-not-exists", .pod_claims = {x.bound}, .reasons = {kNoPV}},
      {.name = "prebound-pvc", .pod_claims = {x.prebound}, .pvs = {x.pv_node1a_bound}, .should_fail = true},
      {.name = "unbound-pvc,pv-same-node",
       .pod_claims = {x.unbound},
       .pvs = {x.pv_node2, x.pv_node1a, x.pv_node1b},
       .bindings = {{x.unbound, x.pv_node1a}}},
      {.name = "unbound-pvc,pv-different-node", .pod_claims = {x.unbound}, .pvs = {x.pv_node2}, .reasons = {kBind}},
      {.name = "two-unbound-pvcs",
       .pod_claims = {x.unbound, x.unbound2},
       .pvs = {x.pv_node1a, x.pv_node1b},
       .bindings = {{x.unbound, x.pv_node1a}, {x.unbound2, x.pv_node1b}}},
      {.name = "two-unbound-pvcs,order-by-size",
       .pod_claims = {x.unbound2, x.unbound},
       .pvs = {x.pv_node1a, x.pv_node1b},
       .bindings = {{x.unbound, x.pv_node1a}, {x.unbound2, x.pv_node1b}}},
      {.name = "two-unbound-pvcs,partial-match",
       .pod_claims = {x.unbound, x.unbound2},
       .pvs = {x.pv_node1a},
       .bindings = {{x.unbound, x.pv_node1a}},
       .reasons = {kBind}},
      {.name = "one-bound,one-unbound",
       .pod_claims = {x.unbound, x.bound},
       .pvs = {x.pv_bound, x.pv_node1a},
       .bindings = {{x.unbound, x.pv_node1a}}},
      {.name = "one-bound,one-unbound,no-match",
       .pod_claims = {x.unbound, x.bound},
       .pvs = {x.pv_bound, x.pv_node2},
       .reasons = {kBind}},
      {.name = "one-prebound,one-unbound",
       .pod_claims = {x.unbound, x.prebound},
       .pvs = {x.pv_node1a, x.pv_node1b},
       .should_fail = true},
      {.name = "immediate-bound-pvc", .pod_claims = {x.immediate_bound}, .pvs = {x.pv_bound_immediate}},
      {.name = "immediate-bound-pvc-wrong-node",
       .pod_claims = {x.immediate_bound},
       .pvs = {x.pv_bound_immediate_node2},
       .reasons = {kNode}},
      {.name = "immediate-unbound-pvc", .pod_claims = {x.immediate_unbound}, .should_fail = true},
      {.name = "immediate-unbound-pvc,delayed-mode-bound",
       .pod_claims = {x.immediate_unbound, x.bound},
       .pvs = {x.pv_bound},
       .should_fail = true},
      {.name = "immediate-unbound-pvc,delayed-mode-unbound",
       .pod_claims = {x.immediate_unbound, x.unbound},
       .should_fail = true},
      {.name = "generic-ephemeral,no-pvc",
       .pod = PodBuilder("test-pod").Namespace(kNs).UID("test-pod-uid").EphemeralVolume("no-such-pvc").Build(),
       .should_fail = true},
      {.name = "generic-ephemeral,with-pvc",
       .pvs = {MakeVolume("pv-bound", "node1", "1G", "1", generic)},
       .cache_claims = std::vector<api::PersistentVolumeClaimPtr>{generic},
       .pod = PodBuilder("test-pod").Namespace(kNs).UID("test-pod-uid").EphemeralVolume("test-volume").Build()},
      {.name = "generic-ephemeral,wrong-pvc",
       .pvs = {MakeVolume("pv-bound", "node1", "1G", "1", generic)},
       .cache_claims = std::vector<api::PersistentVolumeClaimPtr>{GenericClaim(false)},
       .pod = PodBuilder("test-pod").Namespace(kNs).UID("test-pod-uid").EphemeralVolume("test-volume").Build(),
       .should_fail = true},
  };
  RunFindCases(cases);
}

TEST(FindPodVolumes, WithProvisioning) {
  Fixtures x;
  const std::vector<FindCase> cases = {
      {.name = "one-provisioned", .pod_claims = {x.provisioned}, .provisions = {x.provisioned}},
      {.name = "two-unbound-pvcs,one-matched,one-provisioned",
       .pod_claims = {x.unbound, x.provisioned},
       .pvs = {x.pv_node1a},
       .bindings = {{x.unbound, x.pv_node1a}},
       .provisions = {x.provisioned}},
      {.name = "one-bound,one-provisioned",
       .pod_claims = {x.bound, x.provisioned},
       .pvs = {x.pv_bound},
       .provisions = {x.provisioned}},
      {.name = "one-binding,one-selected-node",
       .pod_claims = {x.bound, x.selected_node},
       .pvs = {x.pv_bound},
       .provisions = {x.selected_node}},
      {.name = "immediate-unbound-pvc", .pod_claims = {x.immediate_unbound}, .should_fail = true},
      {.name = "one-immediate-bound,one-provisioned",
       .pod_claims = {x.immediate_bound, x.provisioned},
       .pvs = {x.pv_bound_immediate},
       .provisions = {x.provisioned}},
      {.name = "invalid-provisioner", .pod_claims = {x.no_provisioner}, .reasons = {kBind}},
      {.name = "volume-topology-unsatisfied", .pod_claims = {x.topo_mismatch}, .reasons = {kBind}},
      // ksched's own cases from here.
      {.name = "selected-node-elsewhere",
       .pod_claims = {MakeClaim("provisioned-pvc", "1Gi", ClaimState::kSelectedNode, "", "1", kWaitClassWithProvisioner,
                                "node2")},
       .reasons = {kBind}},
      {.name = "bound-elsewhere-and-selected-node-elsewhere",
       .pod_claims = {x.immediate_bound, MakeClaim("provisioned-pvc", "1Gi", ClaimState::kSelectedNode, "", "1",
                                                   kWaitClassWithProvisioner, "node2")},
       .pvs = {x.pv_bound_immediate_node2},
       .reasons = {kNode, kBind}},
      {.name = "no-match-falls-back-to-provisioning",
       .pod_claims = {MakeClaim("big", "100G", ClaimState::kUnbound, "", "1", kWaitClassWithProvisioner)},
       .pvs = {MakeVolume("pv-small", "node1", "1G", "1", nullptr, kWaitClassWithProvisioner)},
       .provisions = {MakeClaim("big", "100G", ClaimState::kUnbound, "", "1", kWaitClassWithProvisioner)}},
  };
  RunFindCases(cases);
}

// upstream FindMatchingVolume's rules, one at a time.
TEST(FindPodVolumes, MatchingRules) {
  Fixtures x;
  api::PersistentVolumeClaimPtr claim = x.unbound;  // 1G, waitClass, no access modes
  auto volume = [](std::string name) {
    PVBuilder b(std::move(name));
    b.Capacity("5G").Class(kWaitClass).NodeAffinityIn(kNodeLabelKey, {"node1"});
    return b;
  };
  struct Case {
    std::string name;
    api::PersistentVolumeClaimPtr claim;
    std::vector<api::PersistentVolumePtr> pvs;
    std::string want;  // "" for no match
  };
  PVCBuilder rwo = PVCBuilder("unbound-pvc", kNs);
  rwo.UID("pvc-uid").Request("1G").Class(kWaitClass).AccessModes({"ReadWriteOnce"});
  PVCBuilder selecting = PVCBuilder("unbound-pvc", kNs);
  selecting.UID("pvc-uid")
      .Request("1G")
      .Class(kWaitClass)
      .AccessModes({})
      .Selector(testing::LabelsSelector({{"tier", "gold"}}));
  PVCBuilder block = PVCBuilder("unbound-pvc", kNs);
  block.UID("pvc-uid").Request("1G").Class(kWaitClass).AccessModes({}).VolumeMode("Block");
  const std::vector<Case> cases = {
      {"smallest fitting volume",
       claim,
       {volume("pv-a").Capacity("10G").Ptr(), volume("pv-b").Capacity("2G").Ptr(),
        volume("pv-c").Capacity("500M").Ptr()},
       "pv-b"},
      {"equal sizes: the first by name", claim, {volume("pv-b").Ptr(), volume("pv-a").Ptr()}, "pv-a"},
      {"too small", claim, {volume("pv-a").Capacity("500M").Ptr()}, ""},
      {"no capacity", claim, {PVBuilder("pv-a").Class(kWaitClass).Ptr()}, ""},
      {"not Available", claim, {volume("pv-a").Phase(api::kVolumeReleased).Ptr()}, ""},
      {"being deleted", claim, {volume("pv-a").BeingDeleted().Ptr()}, ""},
      {"claimed by another claim", claim, {volume("pv-a").ClaimRef(kNs, "other").Ptr()}, ""},
      {"claimed by a former claim of the same name",
       claim,
       {volume("pv-a").ClaimRef(kNs, "unbound-pvc", "old").Ptr()},
       ""},
      {"pre-bound to the claim wins over a smaller volume",
       claim,
       {volume("pv-a").Capacity("2G").Ptr(), volume("pv-b").Capacity("9G").ClaimRef(kNs, "unbound-pvc").Ptr()},
       "pv-b"},
      {"pre-bound elsewhere: no match, though another volume fits",
       claim,
       {volume("pv-a").Ptr(), PVBuilder("pv-b")
                                  .Capacity("5G")
                                  .Class(kWaitClass)
                                  .NodeAffinityIn(kNodeLabelKey, {"node2"})
                                  .ClaimRef(kNs, "unbound-pvc", "pvc-uid")
                                  .Ptr()},
       ""},
      {"pre-bound but too small: skipped",
       claim,
       {volume("pv-a").Ptr(), volume("pv-b").Capacity("1M").ClaimRef(kNs, "unbound-pvc").Ptr()},
       "pv-a"},
      {"pre-bound volume need not be Available",
       claim,
       {volume("pv-a").Phase(api::kVolumeBound).ClaimRef(kNs, "unbound-pvc").Ptr()},
       "pv-a"},
      {"access modes",
       rwo.Ptr(),
       {volume("pv-a").AccessModes({"ReadOnlyMany"}).Ptr(),
        volume("pv-b").AccessModes({"ReadOnlyMany", "ReadWriteOnce"}).Ptr()},
       "pv-b"},
      {"selector", selecting.Ptr(), {volume("pv-a").Ptr(), volume("pv-b").Label("tier", "gold").Ptr()}, "pv-b"},
      {"volume mode", block.Ptr(), {volume("pv-a").Ptr(), volume("pv-b").VolumeMode("Block").Ptr()}, "pv-b"},
      {"filesystem is the default mode", claim, {volume("pv-a").VolumeMode("Filesystem").Ptr()}, "pv-a"},
      {"no node affinity: every node", claim, {PVBuilder("pv-a").Capacity("5G").Class(kWaitClass).Ptr()}, "pv-a"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    FakeClusterLister lister;
    AddClasses(lister);
    AddAll(lister, {c.claim}, c.pvs);
    AssumeCache cache;
    Found f = FindOn(lister, cache, MakePod({c.claim}), *x.node1);
    ASSERT_FALSE(f.failed) << f.error;
    if (c.want.empty()) {
      EXPECT_EQ(f.reasons, std::vector<std::string>{kBind});
      EXPECT_TRUE(f.volumes.static_bindings.empty());
    } else {
      EXPECT_TRUE(f.reasons.empty());
      ASSERT_EQ(f.volumes.static_bindings.size(), 1u);
      EXPECT_EQ(f.volumes.static_bindings[0].pv->Name(), c.want);
    }
  }
}

TEST(FindPodVolumes, InvalidSelectorIsAnError) {
  PVCBuilder b("unbound-pvc", kNs);
  b.Request("1G").Class(kWaitClass).Selector(testing::ExistsSelector("bad key!"));
  FakeClusterLister lister;
  AddClasses(lister);
  AddAll(lister, {b.Ptr()}, {MakeVolume("pv-a", "node1", "5G", "1", nullptr)});
  AssumeCache cache;
  Found f = FindOn(lister, cache, MakePod({b.Ptr()}), *MakeNode("node1"));
  EXPECT_TRUE(f.failed);
  EXPECT_NE(f.error.find("error creating internal label selector for claim: testns/unbound-pvc"), std::string::npos)
      << f.error;
}

TEST(FindPodVolumes, ClassWithoutBindingModeIsAnError) {
  FakeClusterLister lister;
  api::StorageClass sc = StorageClassBuilder("unset").Obj();
  sc.volume_binding_mode.clear();
  lister.Add(sc);
  api::PersistentVolumeClaimPtr claim = MakeClaim("c", "1G", ClaimState::kUnbound, "", "1", "unset");
  lister.Add(*claim);
  AssumeCache cache;
  Found f = FindOn(lister, cache, MakePod({claim}), *MakeNode("node1"));
  EXPECT_TRUE(f.failed);
  EXPECT_EQ(f.error, "VolumeBindingMode not set for StorageClass \"unset\"");
}

TEST(FindPodVolumes, UnknownOrMissingClassBindsImmediately) {
  for (const std::string& cls : {std::string(), std::string("no-such-class")}) {
    SCOPED_TRACE(cls);
    FakeClusterLister lister;
    AddClasses(lister);
    api::PersistentVolumeClaimPtr claim = MakeClaim("c", "1G", ClaimState::kUnbound, "", "1", cls);
    lister.Add(*claim);
    AssumeCache cache;
    Found f = FindOn(lister, cache, MakePod({claim}), *MakeNode("node1"));
    EXPECT_EQ(f.error, "pod has unbound immediate PersistentVolumeClaims");
  }
}

// upstream CheckNodeAffinity matches a node made of the labels alone, and a node without
// a name has no fields: matchFields (metadata.name) requirements are ignored.
TEST(VolumeNodeAffinity, FieldTermsAreIgnored) {
  api::PersistentVolume pv = PVBuilder("pv").Obj();
  api::NodeSelectorTerm by_name;
  by_name.match_fields.push_back({"metadata.name", api::SelectorOperator::kIn, {"node1"}});
  pv.node_affinity = std::vector<api::NodeSelectorTerm>{by_name};
  EXPECT_TRUE(VolumeNodeAffinity(pv).Matches(*MakeNode("node1")));
  EXPECT_TRUE(VolumeNodeAffinity(pv).Matches(*MakeNode("node2")));

  by_name.match_expressions.push_back({kNodeLabelKey, api::SelectorOperator::kIn, {"node2"}});
  pv.node_affinity = std::vector<api::NodeSelectorTerm>{by_name};
  EXPECT_FALSE(VolumeNodeAffinity(pv).Matches(*MakeNode("node1")));
  EXPECT_TRUE(VolumeNodeAffinity(pv).Matches(*MakeNode("node2")));

  pv.node_affinity = std::vector<api::NodeSelectorTerm>{};  // required, but no terms
  EXPECT_FALSE(VolumeNodeAffinity(pv).Matches(*MakeNode("node1")));
  pv.node_affinity.reset();
  EXPECT_TRUE(VolumeNodeAffinity(pv).Matches(*MakeNode("node1")));
}

TEST(MatchesTopology, Terms) {
  api::StringMap labels{{"zone", "a"}, {"rack", "1"}};
  EXPECT_TRUE(MatchesTopology({}, labels));
  EXPECT_TRUE(MatchesTopology({{{"zone", {"b", "a"}}}}, labels));
  EXPECT_FALSE(MatchesTopology({{{"zone", {"b"}}}}, labels));
  EXPECT_FALSE(MatchesTopology({{{"zone", {"a"}}, {"rack", {"2"}}}}, labels));
  EXPECT_TRUE(MatchesTopology({{{"zone", {"b"}}}, {{"rack", {"1"}}}}, labels));
  EXPECT_FALSE(MatchesTopology({{{"host", {"x"}}}}, labels));
}

// ---- assume / revert ------------------------------------------------------------------------

void ExpectAssumed(const FakeClusterLister& lister, AssumeCache& cache, const std::vector<Binding>& bindings,
                   const std::vector<api::PersistentVolumeClaimPtr>& provisions) {
  for (const auto& [claim, pv] : bindings) {
    api::PersistentVolumePtr got = cache.Volume(lister, pv->Name());
    ASSERT_NE(got, nullptr);
    ASSERT_TRUE(got->claim_ref.has_value()) << pv->Name();
    EXPECT_EQ(got->claim_ref->name, claim->Name());
    EXPECT_EQ(got->claim_ref->namespace_, claim->Namespace());
  }
  for (const auto& c : provisions) {
    api::PersistentVolumeClaimPtr got = cache.Claim(lister, c->Namespace(), c->Name());
    ASSERT_NE(got, nullptr);
    const std::string* node = got->annotations.Get(api::kAnnSelectedNode);
    EXPECT_TRUE(node != nullptr && *node == "node1") << c->Name();
  }
}

void ExpectRestored(const FakeClusterLister& lister, AssumeCache& cache, const std::vector<Binding>& bindings,
                    const std::vector<api::PersistentVolumeClaimPtr>& provisions) {
  for (const auto& [claim, pv] : bindings) {
    EXPECT_EQ(cache.Volume(lister, pv->Name()), lister.Volume(pv->Name())) << pv->Name();
  }
  for (const auto& c : provisions) {
    api::PersistentVolumeClaimPtr got = cache.Claim(lister, c->Namespace(), c->Name());
    ASSERT_NE(got, nullptr);
    EXPECT_FALSE(got->annotations.Has(api::kAnnSelectedNode)) << c->Name();
  }
}

TEST(AssumePodVolumes, Cases) {
  Fixtures x;
  struct Case {
    std::string name;
    std::vector<api::PersistentVolumeClaimPtr> claims;
    std::vector<api::PersistentVolumePtr> pvs;
    std::vector<Binding> bindings;
    std::vector<api::PersistentVolumeClaimPtr> provisions;
    bool should_fail = false;
    std::vector<Binding> want_bindings;
    std::vector<api::PersistentVolumeClaimPtr> want_provisions;
  };
  const std::vector<Case> cases = {
      {"one-binding",
       {x.unbound},
       {x.pv_node1a},
       {{x.unbound, x.pv_node1a}},
       {},
       false,
       {{x.unbound, x.pv_node1a_bound}},
       {}},
      {"two-bindings",
       {x.unbound, x.unbound2},
       {x.pv_node1a, x.pv_node1b},
       {{x.unbound, x.pv_node1a}, {x.unbound2, x.pv_node1b}},
       {},
       false,
       {{x.unbound, x.pv_node1a_bound}, {x.unbound2, x.pv_node1b_bound}},
       {}},
      {"pv-already-bound",
       {x.unbound},
       {x.pv_node1a_bound},
       {{x.unbound, x.pv_node1a_bound}},
       {},
       false,
       {{x.unbound, x.pv_node1a_bound}},
       {}},
      {"tmpupdate-failed",
       {x.unbound},
       {x.pv_node1a},
       {{x.unbound, x.pv_node1a}, {x.unbound2, x.pv_node1b}},
       {},
       true,
       {},
       {}},
      {"one-binding, one-pvc-provisioned",
       {x.unbound, x.provisioned},
       {x.pv_node1a},
       {{x.unbound, x.pv_node1a}},
       {x.provisioned},
       false,
       {{x.unbound, x.pv_node1a_bound}},
       {x.selected_node}},
      {"one-binding, one-provision-tmpupdate-failed",
       {x.unbound, x.provisioned_higher_version},
       {x.pv_node1a},
       {{x.unbound, x.pv_node1a}},
       {x.provisioned2},
       true,
       {},
       {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    FakeClusterLister lister;
    AddClasses(lister);
    AddAll(lister, c.claims, c.pvs);
    AssumeCache cache;
    PodVolumes volumes = Volumes(c.bindings, c.provisions);
    ksched::Status s = AssumePodVolumes(cache, lister, "node1", volumes);
    EXPECT_EQ(!s.ok(), c.should_fail) << s.ToString();
    if (c.should_fail) {
      ExpectRestored(lister, cache, c.bindings, c.provisions);
      EXPECT_EQ(cache.NumAssumed(), 0u);
      continue;
    }
    ExpectAssumed(lister, cache, c.want_bindings, c.want_provisions);
    ExpectBindings(volumes, c.want_bindings);
    ExpectProvisions(volumes, c.want_provisions);
  }
}

TEST(AssumePodVolumes, OutOfSyncMessage) {
  Fixtures x;
  FakeClusterLister lister;
  AddClasses(lister);
  AddAll(lister, {x.unbound}, {x.pv_node1b_bound_higher_version});
  AssumeCache cache;
  PodVolumes volumes = Volumes({{x.unbound, x.pv_node1b}}, {});
  ksched::Status s = AssumePodVolumes(cache, lister, "node1", volumes);
  EXPECT_EQ(s.message(), "v1.PersistentVolume \"pv-node1b\" is out of sync (stored: 2, assume: 1)");
  volumes = Volumes({{x.unbound, x.pv_node2}}, {});
  s = AssumePodVolumes(cache, lister, "node1", volumes);
  EXPECT_EQ(s.message(), "could not find v1.PersistentVolume \"pv-node2\"");
}

TEST(AssumePodVolumes, Revert) {
  Fixtures x;
  FakeClusterLister lister;
  AddClasses(lister);
  AddAll(lister, {x.unbound, x.provisioned}, {x.pv_node1a});
  AssumeCache cache;
  PodVolumes volumes = Volumes({{x.unbound, x.pv_node1a}}, {x.provisioned});
  ASSERT_TRUE(AssumePodVolumes(cache, lister, "node1", volumes).ok());
  ExpectAssumed(lister, cache, {{x.unbound, x.pv_node1a_bound}}, {x.selected_node});
  RevertAssumed(cache, volumes.static_bindings, volumes.dynamic_provisions);
  ExpectRestored(lister, cache, {{x.unbound, x.pv_node1a}}, {x.provisioned});
  EXPECT_EQ(cache.NumAssumed(), 0u);
}

// upstream TestFindAssumeVolumes: once assumed, the chosen volume is found again (now as
// pre-bound to the claim), never its equal-sized twin.
TEST(AssumePodVolumes, FindAgainAfterAssume) {
  Fixtures x;
  FakeClusterLister lister;
  AddClasses(lister);
  AddAll(lister, {x.unbound}, {x.pv_node2, x.pv_node1a, x.pv_node1c});
  AssumeCache cache;
  api::Pod pod = MakePod({x.unbound});
  Found f = FindOn(lister, cache, pod, *x.node1);
  ASSERT_FALSE(f.failed);
  ASSERT_TRUE(f.reasons.empty());
  ASSERT_TRUE(AssumePodVolumes(cache, lister, "node1", f.volumes).ok());
  ExpectAssumed(lister, cache, {{x.unbound, f.volumes.static_bindings[0].pv}}, {});
  for (int i = 0; i < 3; ++i) {
    Found again = FindOn(lister, cache, pod, *x.node1);
    ASSERT_TRUE(again.reasons.empty());
    ExpectBindings(again.volumes, {{x.unbound, f.volumes.static_bindings[0].pv}});
  }
}

// ---- the assume cache (upstream assume_cache_test.go) ------------------------------------------

TEST(AssumeCache, ResourceVersionNewer) {
  EXPECT_TRUE(ResourceVersionNewer("10", "9"));
  EXPECT_FALSE(ResourceVersionNewer("9", "10"));
  EXPECT_FALSE(ResourceVersionNewer("5", "5"));
  EXPECT_TRUE(ResourceVersionNewer("abc", "5"));
  EXPECT_FALSE(ResourceVersionNewer("abc", "abc"));
}

TEST(AssumeCache, AssumeVolume) {
  struct Case {
    std::string name;
    std::string old_rv, new_rv;
    bool should_succeed;
  };
  const std::vector<Case> cases = {
      {"success-same-version", "5", "5", true},
      {"success-new-higher-version", "5", "6", true},
      {"fail-new-lower-version", "5", "4", false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    FakeClusterLister lister;
    lister.Add(PVBuilder("pv1").ResourceVersion(c.old_rv).Class("sc").Obj());
    AssumeCache cache;
    auto assumed = PVBuilder("pv1").ResourceVersion(c.new_rv).Class("sc").ClaimRef("ns", "c").Ptr();
    EXPECT_EQ(cache.AssumeVolume(lister, assumed).ok(), c.should_succeed);
    EXPECT_EQ(cache.Volume(lister, "pv1") == assumed, c.should_succeed);
    std::vector<api::PersistentVolumePtr> listed = cache.VolumesOfClass(lister, "sc");
    ASSERT_EQ(listed.size(), 1u);
    EXPECT_EQ(listed[0] == assumed, c.should_succeed);
  }
}

TEST(AssumeCache, RestoreVolume) {
  FakeClusterLister lister;
  lister.Add(PVBuilder("pv1").ResourceVersion("5").Obj());
  api::PersistentVolumePtr original = lister.Volume("pv1");
  AssumeCache cache;
  cache.RestoreVolume("nothing");  // restoring nothing is harmless
  auto assumed = PVBuilder("pv1").ResourceVersion("5").ClaimRef("ns", "c").Ptr();
  ASSERT_TRUE(cache.AssumeVolume(lister, assumed).ok());
  EXPECT_EQ(cache.Volume(lister, "pv1"), assumed);
  cache.RestoreVolume("pv1");
  EXPECT_EQ(cache.Volume(lister, "pv1"), original);
  cache.RestoreVolume("pv1");  // idempotent
  EXPECT_EQ(cache.Volume(lister, "pv1"), original);
}

// upstream TestAssumeUpdatePVCache: an informer update at the assumed version keeps the
// assumed object; a newer one replaces it.
TEST(AssumeCache, ListerOvertakesAssumption) {
  FakeClusterLister lister;
  lister.Add(PVBuilder("pv1").ResourceVersion("5").Class("sc").Obj());
  AssumeCache cache;
  auto assumed = PVBuilder("pv1").ResourceVersion("5").Class("sc").ClaimRef("ns", "c").Ptr();
  ASSERT_TRUE(cache.AssumeVolume(lister, assumed).ok());

  lister.Add(PVBuilder("pv1").ResourceVersion("5").Class("sc").Label("resync", "yes").Obj());
  EXPECT_EQ(cache.Volume(lister, "pv1"), assumed);
  EXPECT_EQ(cache.VolumesOfClass(lister, "sc")[0], assumed);

  lister.Add(PVBuilder("pv1").ResourceVersion("6").Class("sc").Obj());
  EXPECT_EQ(cache.VolumesOfClass(lister, "sc")[0], lister.Volume("pv1"));
  EXPECT_EQ(cache.Volume(lister, "pv1"), lister.Volume("pv1"));
  EXPECT_EQ(cache.NumAssumed(), 0u);
}

TEST(AssumeCache, DeletedObjectDropsAssumption) {
  FakeClusterLister lister;
  lister.Add(PVBuilder("pv1").ResourceVersion("5").Obj());
  lister.Add(PVCBuilder("c", "ns").ResourceVersion("3").Obj());
  AssumeCache cache;
  ASSERT_TRUE(cache.AssumeVolume(lister, PVBuilder("pv1").ResourceVersion("5").ClaimRef("ns", "c").Ptr()).ok());
  ASSERT_TRUE(
      cache.AssumeClaim(lister, PVCBuilder("c", "ns").ResourceVersion("3").Annotation(api::kAnnSelectedNode, "n").Ptr())
          .ok());
  EXPECT_EQ(cache.NumAssumed(), 2u);
  lister.volumes.clear();
  lister.claims.clear();
  EXPECT_EQ(cache.Volume(lister, "pv1"), nullptr);
  EXPECT_EQ(cache.Claim(lister, "ns", "c"), nullptr);
  EXPECT_EQ(cache.NumAssumed(), 0u);
}

TEST(AssumeCache, PruneDropsWhatTheListerOvertook) {
  FakeClusterLister lister;
  lister.Add(PVBuilder("pv1").ResourceVersion("5").Obj());
  lister.Add(PVBuilder("pv2").ResourceVersion("5").Obj());
  lister.Add(PVCBuilder("c", "ns").ResourceVersion("3").Obj());
  AssumeCache cache;
  ASSERT_TRUE(cache.AssumeVolume(lister, PVBuilder("pv1").ResourceVersion("5").ClaimRef("ns", "c").Ptr()).ok());
  ASSERT_TRUE(cache.AssumeVolume(lister, PVBuilder("pv2").ResourceVersion("5").ClaimRef("ns", "d").Ptr()).ok());
  ASSERT_TRUE(
      cache.AssumeClaim(lister, PVCBuilder("c", "ns").ResourceVersion("3").Annotation(api::kAnnSelectedNode, "n").Ptr())
          .ok());
  lister.Add(PVBuilder("pv1").ResourceVersion("6").Obj());
  lister.claims.clear();
  cache.Prune(lister);
  EXPECT_EQ(cache.NumAssumed(), 1u);
  EXPECT_TRUE(cache.Volume(lister, "pv2")->claim_ref.has_value());
}

TEST(AssumeCache, AssumeClaim) {
  FakeClusterLister lister;
  lister.Add(PVCBuilder("c", "ns").ResourceVersion("5").Obj());
  AssumeCache cache;
  EXPECT_FALSE(cache.AssumeClaim(lister, PVCBuilder("c", "ns").ResourceVersion("4").Ptr()).ok());
  EXPECT_EQ(cache.AssumeClaim(lister, PVCBuilder("missing", "ns").Ptr()).message(),
            "could not find v1.PersistentVolumeClaim \"ns/missing\"");
  auto assumed = PVCBuilder("c", "ns").ResourceVersion("5").Annotation(api::kAnnSelectedNode, "n").Ptr();
  ASSERT_TRUE(cache.AssumeClaim(lister, assumed).ok());
  EXPECT_EQ(cache.Claim(lister, "ns", "c"), assumed);
  cache.RestoreClaim("ns", "c");
  EXPECT_EQ(cache.Claim(lister, "ns", "c"), lister.Claim("ns", "c"));
}

}  // namespace
}  // namespace ksched::framework::plugins::volumebinding
