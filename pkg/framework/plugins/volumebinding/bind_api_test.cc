// PreBind's two halves: upstream binder_test.go's TestBindAPIUpdate and
// TestCheckBindings, and the merge patches ksched sends instead of upstream's Updates.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pkg/framework/plugins/volumebinding/test_util.h"
#include "pkg/framework/plugins/volumebinding/volume_binding.h"
#include "tests/fakes/fake_volume_writer.h"

namespace ksched::framework::plugins::volumebinding {
namespace {

using namespace testutil;  // NOLINT
using testing::FakeVolumeWriter;

// ---- bindAPIUpdate ---------------------------------------------------------------------------

TEST(BindAPIUpdate, Cases) {
  Fixtures x;
  struct Case {
    std::string name;
    std::vector<Binding> bindings;
    std::vector<api::PersistentVolumePtr> cached_pvs;
    std::vector<api::PersistentVolumePtr> api_pvs;  // the server ahead of the lister
    std::vector<api::PersistentVolumeClaimPtr> provisions;
    std::vector<api::PersistentVolumeClaimPtr> cached_pvcs;
    std::vector<api::PersistentVolumeClaimPtr> api_pvcs;
    bool should_fail = false;
    std::vector<api::PersistentVolumePtr> want_pvs;      // the latest view after the writes
    std::vector<api::PersistentVolumePtr> want_api_pvs;  // empty: want_pvs
    std::vector<api::PersistentVolumeClaimPtr> want_pvcs;
    std::vector<api::PersistentVolumeClaimPtr> want_api_pvcs;
  };
  const std::vector<Case> cases = {
      {.name = "nothing-to-bind-empty"},
      {.name = "one-binding",
       .bindings = {{x.unbound, x.pv_node1a_bound}},
       .cached_pvs = {x.pv_node1a},
       .want_pvs = {x.pv_node1a_bound}},
      {.name = "two-bindings",
       .bindings = {{x.unbound, x.pv_node1a_bound}, {x.unbound2, x.pv_node1b_bound}},
       .cached_pvs = {x.pv_node1a, x.pv_node1b},
       .want_pvs = {x.pv_node1a_bound, x.pv_node1b_bound}},
      {.name = "api-already-updated",
       .bindings = {{x.unbound, x.pv_node1a_bound}},
       .cached_pvs = {x.pv_node1a_bound},
       .want_pvs = {x.pv_node1a_bound}},
      {.name = "api-update-failed",
       .bindings = {{x.unbound, x.pv_node1a_bound}, {x.unbound2, x.pv_node1b_bound}},
       .cached_pvs = {x.pv_node1a, x.pv_node1b},
       .api_pvs = {x.pv_node1b_bound_higher_version},
       .should_fail = true,
       .want_pvs = {x.pv_node1a_bound, x.pv_node1b},
       .want_api_pvs = {x.pv_node1a_bound, x.pv_node1b_bound_higher_version}},
      {.name = "one-provisioned-pvc",
       .provisions = {WithProvisionAnn(x.provisioned)},
       .cached_pvcs = {x.provisioned},
       .want_pvcs = {WithProvisionAnn(x.provisioned)}},
      {.name = "provision-api-update-failed",
       .provisions = {WithProvisionAnn(x.provisioned), WithProvisionAnn(x.provisioned2)},
       .cached_pvcs = {x.provisioned, x.provisioned2},
       .api_pvcs = {x.provisioned_higher_version},
       .should_fail = true,
       .want_pvcs = {WithProvisionAnn(x.provisioned), x.provisioned2},
       .want_api_pvcs = {WithProvisionAnn(x.provisioned), x.provisioned_higher_version}},
      {.name = "binding-succeed, provision-api-update-failed",
       .bindings = {{x.unbound, x.pv_node1a_bound}},
       .cached_pvs = {x.pv_node1a},
       .provisions = {WithProvisionAnn(x.provisioned), WithProvisionAnn(x.provisioned2)},
       .cached_pvcs = {x.provisioned, x.provisioned2},
       .api_pvcs = {x.provisioned_higher_version},
       .should_fail = true,
       .want_pvs = {x.pv_node1a_bound},
       .want_pvcs = {WithProvisionAnn(x.provisioned), x.provisioned2},
       .want_api_pvcs = {WithProvisionAnn(x.provisioned), x.provisioned_higher_version}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    FakeClusterLister lister;
    AddClasses(lister);
    AddAll(lister, c.cached_pvcs, c.cached_pvs);
    FakeVolumeWriter writer(lister);
    for (const auto& pv : c.api_pvs) writer.server_volumes[pv->Name()] = pv;
    for (const auto& pvc : c.api_pvcs) writer.server_claims[pvc->Namespace() + "/" + pvc->Name()] = pvc;
    AssumeCache cache;
    PodVolumes volumes = Volumes(c.bindings, c.provisions);
    Assume(cache, lister, volumes);

    ksched::Status s = BindAPIUpdate(&writer, cache, MakePod({}), volumes);
    EXPECT_EQ(!s.ok(), c.should_fail) << s.ToString();
    if (c.should_fail) {
      EXPECT_EQ(s.code(), ksched::StatusCode::kConflict);
    }

    for (const auto& want : c.want_pvs) {
      EXPECT_EQ(WithoutVersion(*cache.Volume(lister, want->Name())), WithoutVersion(*want)) << want->Name();
    }
    for (const auto& want : c.want_api_pvs.empty() ? c.want_pvs : c.want_api_pvs) {
      auto it = writer.server_volumes.find(want->Name());
      const api::PersistentVolumePtr& server =
          it != writer.server_volumes.end() ? it->second : lister.Volume(want->Name());
      EXPECT_EQ(WithoutVersion(*server), WithoutVersion(*want)) << want->Name();
    }
    for (const auto& want : c.want_pvcs) {
      EXPECT_EQ(WithoutVersion(*cache.Claim(lister, want->Namespace(), want->Name())), WithoutVersion(*want))
          << want->Name();
    }
    for (const auto& want : c.want_api_pvcs.empty() ? c.want_pvcs : c.want_api_pvcs) {
      auto it = writer.server_claims.find(want->Namespace() + "/" + want->Name());
      ASSERT_NE(it, writer.server_claims.end());
      EXPECT_EQ(WithoutVersion(*it->second), WithoutVersion(*want)) << want->Name();
    }
    // What was written comes back as the server answered it (upstream keeps the
    // Update's result for checkBindings).
    if (!c.should_fail) {
      for (const auto& b : volumes.static_bindings) EXPECT_EQ(b.pv, writer.server_volumes[b.pv->Name()]);
    }
  }
}

TEST(BindAPIUpdate, WithoutWriterNothingStaysAssumed) {
  Fixtures x;
  FakeClusterLister lister;
  AddClasses(lister);
  AddAll(lister, {x.unbound, x.provisioned}, {x.pv_node1a});
  AssumeCache cache;
  PodVolumes volumes = Volumes({{x.unbound, x.pv_node1a_bound}}, {WithProvisionAnn(x.provisioned)});
  Assume(cache, lister, volumes);
  ksched::Status s = BindAPIUpdate(nullptr, cache, MakePod({}), volumes);
  EXPECT_EQ(s.message(),
            "binding volumes of pod \"testns/test-pod\": the scheduler cannot write PersistentVolumes and claims");
  EXPECT_EQ(cache.NumAssumed(), 0u);
}

// The merge patches: the same fields upstream's Updates change, with the same
// resourceVersion precondition.
TEST(BindAPIUpdate, Patches) {
  Fixtures x;
  FakeClusterLister lister;
  AddClasses(lister);
  api::PersistentVolumeClaimPtr claim = WithVersion(x.unbound, "42");
  AddAll(lister, {claim, x.provisioned}, {WithVersion(x.pv_node1a, "7")});
  FakeVolumeWriter writer(lister);
  AssumeCache cache;
  PodVolumes volumes = Volumes({{claim, WithVersion(x.pv_node1a, "7")}}, {x.provisioned});
  ASSERT_TRUE(AssumePodVolumes(cache, lister, "node1", volumes).ok());
  ASSERT_TRUE(BindAPIUpdate(&writer, cache, MakePod({}), volumes).ok());
  std::vector<FakeVolumeWriter::Patch> patches = writer.Patches();
  ASSERT_EQ(patches.size(), 2u);
  EXPECT_EQ(patches[0].resource, "persistentvolumes");
  EXPECT_EQ(patches[0].key, "pv-node1a");
  EXPECT_EQ(patches[0].body,
            R"({"metadata":{"resourceVersion":"7","annotations":{"pv.kubernetes.io/bound-by-controller":"yes"}},)"
            R"("spec":{"claimRef":{"kind":"PersistentVolumeClaim","apiVersion":"v1","namespace":"testns",)"
            R"("name":"unbound-pvc","uid":"pvc-uid","resourceVersion":"42"}}})");
  EXPECT_EQ(patches[1].resource, "persistentvolumeclaims");
  EXPECT_EQ(patches[1].key, "testns/provisioned-pvc");
  EXPECT_EQ(patches[1].body,
            R"({"metadata":{"resourceVersion":"1","annotations":{"volume.kubernetes.io/selected-node":"node1"}}})");
  // The server (and, here, the informer) now show the binding.
  ASSERT_TRUE(lister.Volume("pv-node1a")->claim_ref.has_value());
  EXPECT_EQ(lister.Volume("pv-node1a")->claim_ref->uid, "pvc-uid");
  EXPECT_EQ(lister.Volume("pv-node1a")->metadata.resource_version, "8");
  EXPECT_EQ(*lister.Claim(kNs, "provisioned-pvc")->annotations.Get(api::kAnnSelectedNode), "node1");
}

// A volume pre-bound to the claim by its author keeps its claimRef and gets no
// bound-by-controller annotation (upstream GetBindVolumeToClaim).
TEST(BindAPIUpdate, PreboundVolumePatch) {
  Fixtures x;
  FakeClusterLister lister;
  AddClasses(lister);
  api::PersistentVolumePtr prebound =
      PVBuilder("pv-pre").Class(kWaitClass).Capacity("5G").ClaimRef(kNs, "unbound-pvc").Ptr();
  AddAll(lister, {x.unbound}, {prebound});
  FakeVolumeWriter writer(lister);
  AssumeCache cache;
  PodVolumes volumes = Volumes({{x.unbound, prebound}}, {});
  ASSERT_TRUE(AssumePodVolumes(cache, lister, "node1", volumes).ok());
  ASSERT_TRUE(BindAPIUpdate(&writer, cache, MakePod({}), volumes).ok());
  ASSERT_EQ(writer.Patches().size(), 1u);
  EXPECT_EQ(writer.Patches()[0].body,
            R"({"metadata":{"resourceVersion":"1"},"spec":{"claimRef":{"kind":"PersistentVolumeClaim",)"
            R"("apiVersion":"v1","namespace":"testns","name":"unbound-pvc","uid":"pvc-uid","resourceVersion":"1"}}})");
}

// ---- checkBindings -----------------------------------------------------------------------------

TEST(CheckBindings, Cases) {
  Fixtures x;
  struct Case {
    std::string name;
    std::vector<api::PersistentVolumePtr> init_pvs;
    std::vector<api::PersistentVolumeClaimPtr> init_pvcs;
    std::vector<Binding> bindings;
    std::vector<api::PersistentVolumeClaimPtr> provisions;
    std::vector<api::PersistentVolumePtr> api_pvs;  // what the informer delivers before checking
    std::vector<api::PersistentVolumeClaimPtr> api_pvcs;
    bool delete_pvs = false;
    bool delete_pvcs = false;
    bool should_fail = false;
    bool want_bound = false;
  };
  const std::vector<Case> cases = {
      {.name = "nothing-to-bind", .want_bound = true},
      {.name = "binding-bound",
       .init_pvs = {x.pv_node1a_bound},
       .init_pvcs = {x.bound_node1a},
       .bindings = {{x.unbound, x.pv_node1a_bound}},
       .want_bound = true},
      {.name = "binding-prebound",
       .init_pvs = {x.pv_node1a_bound},
       .init_pvcs = {x.prebound_node1a},
       .bindings = {{x.unbound, x.pv_node1a_bound}}},
      {.name = "binding-unbound",
       .init_pvs = {x.pv_node1a_bound},
       .init_pvcs = {x.unbound},
       .bindings = {{x.unbound, x.pv_node1a_bound}}},
      {.name = "binding-pvc-not-exists",
       .init_pvs = {x.pv_node1a_bound},
       .bindings = {{x.unbound, x.pv_node1a_bound}},
       .should_fail = true},
      {.name = "binding-pv-not-exists",
       .init_pvs = {x.pv_node1a_bound},
       .init_pvcs = {x.bound_node1a},
       .bindings = {{x.unbound, x.pv_node1a_bound}},
       .delete_pvs = true,
       .should_fail = true},
      {.name = "binding-claimref-nil",
       .init_pvs = {x.pv_node1a},
       .init_pvcs = {x.bound_node1a},
       .bindings = {{x.unbound, x.pv_node1a_bound}},
       .api_pvs = {WithVersion(x.pv_node1a, "2")},
       .api_pvcs = {x.bound_node1a},
       .should_fail = true},
      {.name = "binding-claimref-uid-empty",
       .init_pvs = {x.pv_node1a_bound},
       .init_pvcs = {x.bound_node1a},
       .bindings = {{x.unbound, x.pv_node1a_bound}},
       .api_pvs = {PVBuilder("pv-node1a")
                       .Capacity("5G")
                       .Class(kWaitClass)
                       .ResourceVersion("2")
                       .NodeAffinityIn(kNodeLabelKey, {"node1"})
                       .ClaimRef(kNs, "unbound-pvc")
                       .Ptr()},
       .api_pvcs = {x.bound_node1a},
       .should_fail = true},
      {.name = "binding-one-bound,one-unbound",
       .init_pvs = {x.pv_node1a_bound, x.pv_node1b_bound},
       .init_pvcs = {x.bound_node1a, x.unbound2},
       .bindings = {{x.unbound, x.pv_node1a_bound}, {x.unbound2, x.pv_node1b_bound}}},
      {.name = "provisioning-pvc-bound",
       .init_pvs = {x.pv_bound},
       .init_pvcs = {x.provisioned_bound},
       .provisions = {WithProvisionAnn(x.provisioned)},
       .api_pvcs = {WithVersion(WithProvisionAnn(x.provisioned_bound), "2")},
       .want_bound = true},
      {.name = "provisioning-pvc-unbound",
       .init_pvcs = {WithProvisionAnn(x.provisioned)},
       .provisions = {WithProvisionAnn(x.provisioned)}},
      {.name = "provisioning-pvc-not-exists",
       .init_pvcs = {x.provisioned},
       .provisions = {WithProvisionAnn(x.provisioned)},
       .delete_pvcs = true,
       .should_fail = true},
      {.name = "provisioning-pvc-annotations-nil",
       .init_pvcs = {x.provisioned},
       .provisions = {WithProvisionAnn(x.provisioned)},
       .api_pvcs = {WithVersion(x.provisioned, "2")},
       .should_fail = true},
      {.name = "provisioning-pvc-selected-node-wrong-node",
       .init_pvcs = {x.provisioned},
       .provisions = {WithProvisionAnn(x.provisioned)},
       .api_pvcs = {WithVersion(WithSelectedNode(x.provisioned, "wrong-node"), "2")},
       .should_fail = true},
      {.name = "binding-bound-provisioning-unbound",
       .init_pvs = {x.pv_node1a_bound},
       .init_pvcs = {x.bound_node1a, WithProvisionAnn(x.provisioned)},
       .bindings = {{x.unbound, x.pv_node1a_bound}},
       .provisions = {WithProvisionAnn(x.provisioned)}},
      {.name = "tolerate-provisioning-pvc-bound-pv-not-found",
       .init_pvs = {x.pv_node1a},
       .init_pvcs = {x.provisioned},
       .provisions = {WithProvisionAnn(x.provisioned)},
       .api_pvcs = {WithVersion(WithProvisionAnn(x.provisioned_bound), "2")},
       .delete_pvs = true},
      // ksched's own: the lister has not caught up with our write yet.
      {.name = "binding-lister-behind-write",
       .init_pvs = {x.pv_node1a_bound},
       .init_pvcs = {x.bound_node1a},
       .bindings = {{x.unbound, WithVersion(x.pv_node1a_bound, "2")}}},
      {.name = "provisioning-lister-behind-write",
       .init_pvcs = {WithProvisionAnn(x.provisioned_bound)},
       .provisions = {WithVersion(WithProvisionAnn(x.provisioned), "2")}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    FakeClusterLister lister;
    AddClasses(lister);
    AddAll(lister, c.init_pvcs, c.init_pvs);
    if (c.delete_pvs) lister.volumes.clear();
    if (c.delete_pvcs) lister.claims.clear();
    AddAll(lister, c.api_pvcs, c.api_pvs);
    auto got = CheckBindings(lister, *x.node1, Volumes(c.bindings, c.provisions));
    EXPECT_EQ(!got.ok(), c.should_fail) << got.status().ToString();
    if (got.ok()) {
      EXPECT_EQ(*got, c.want_bound);
    }
  }
}

TEST(CheckBindings, Messages) {
  Fixtures x;
  FakeClusterLister lister;
  AddClasses(lister);
  PodVolumes binding = Volumes({{x.unbound, x.pv_node1a_bound}}, {});
  EXPECT_EQ(CheckBindings(lister, *x.node1, binding).status().message(),
            "failed to check binding: could not find v1.PersistentVolume \"pv-node1a\"");
  lister.Add(*x.pv_node1a_bound);
  EXPECT_EQ(CheckBindings(lister, *x.node1, binding).status().message(),
            "failed to check binding: could not find v1.PersistentVolumeClaim \"testns/unbound-pvc\"");
  lister.Add(*x.bound_node1a);
  EXPECT_EQ(CheckBindings(lister, *x.node1_no_labels, binding).status().message(),
            "pv \"pv-node1a\" node affinity doesn't match node \"node1\": no matching NodeSelectorTerms");
  lister.Add(*x.pv_node1a);
  EXPECT_EQ(CheckBindings(lister, *x.node1, binding).status().message(), "ClaimRef got reset for pv \"pv-node1a\"");

  PodVolumes provisioning = Volumes({}, {WithProvisionAnn(x.provisioned)});
  EXPECT_EQ(CheckBindings(lister, *x.node1, provisioning).status().message(),
            "failed to check provisioning pvc: could not find v1.PersistentVolumeClaim \"testns/provisioned-pvc\"");
  lister.Add(*x.provisioned);
  EXPECT_EQ(CheckBindings(lister, *x.node1, provisioning).status().message(),
            "selectedNode annotation reset for PVC \"provisioned-pvc\"");
  lister.Add(PVCBuilder("provisioned-pvc", kNs)
                 .Class(kWaitClassWithProvisioner)
                 .Annotation(api::kAnnStorageProvisioner, kProvisioner)
                 .Obj());
  EXPECT_EQ(CheckBindings(lister, *x.node1, provisioning).status().message(),
            "provisioning failed for PVC \"provisioned-pvc\"");
  lister.Add(*WithSelectedNode(x.provisioned_bound, "node1"));
  lister.Add(*x.pv_node2);
  lister.Add(PVCBuilder("provisioned-pvc", kNs)
                 .Class(kWaitClassWithProvisioner)
                 .BoundTo("pv-node2")
                 .Annotation(api::kAnnSelectedNode, "node1")
                 .Obj());
  EXPECT_EQ(CheckBindings(lister, *x.node1, provisioning).status().message(),
            "pv \"pv-node2\" node affinity doesn't match node \"node1\": no matching NodeSelectorTerms");
}

}  // namespace
}  // namespace ksched::framework::plugins::volumebinding
