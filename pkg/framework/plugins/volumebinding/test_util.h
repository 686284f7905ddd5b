// The fixtures of upstream's volumebinding binder_test.go (makeTestPVC, makeTestPV, the
// four storage classes, node1/node2 labelled nodeKey=<name>), built with our builders so
// the ported cases read the same.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "pkg/api/storage.h"
#include "pkg/api/types.h"
#include "pkg/framework/plugins/volumebinding/assume_cache.h"
#include "pkg/framework/plugins/volumebinding/binder.h"
#include "tests/fakes/builders.h"
#include "tests/fakes/fake_cluster_lister.h"
#include "tests/fakes/storage_builders.h"

namespace ksched::framework::plugins::volumebinding::testutil {

using testing::FakeClusterLister;
using testing::NodeBuilder;
using testing::PodBuilder;
using testing::PVBuilder;
using testing::PVCBuilder;
using testing::StorageClassBuilder;

inline const std::string kProvisioner = "test-provisioner";
inline const std::string kWaitClass = "waitClass";
inline const std::string kImmediateClass = "immediateClass";
inline const std::string kWaitClassWithProvisioner = "waitClassWithProvisioner";
inline const std::string kTopoMismatchClass = "topoMismatchClass";
inline const std::string kNodeLabelKey = "nodeKey";
inline const std::string kNs = "testns";

enum class ClaimState { kUnbound, kPrebound, kBound, kSelectedNode };

// upstream makeTestPVC: namespace testns, uid "pvc-uid", no access modes.
inline api::PersistentVolumeClaimPtr MakeClaim(const std::string& name, std::string_view size, ClaimState state,
                                               const std::string& volume = "", const std::string& rv = "1",
                                               const std::string& cls = kWaitClass, const std::string& node = "") {
  PVCBuilder b(name, kNs);
  b.UID("pvc-uid").Request(size).Class(cls).ResourceVersion(rv).AccessModes({});
  switch (state) {
    case ClaimState::kSelectedNode:
      b.Annotation(api::kAnnSelectedNode, node);
      break;
    case ClaimState::kBound:
      b.BoundTo(volume);
      break;
    case ClaimState::kPrebound:
      b.VolumeName(volume);
      break;
    case ClaimState::kUnbound:
      break;
  }
  return b.Ptr();
}

// upstream makeTestPV: Available, node affinity nodeKey In [node] unless node is "",
// claimRef (and bound-by-controller) to `bound_to` when given.
inline api::PersistentVolumePtr MakeVolume(const std::string& name, const std::string& node, std::string_view capacity,
                                           const std::string& rv, const api::PersistentVolumeClaimPtr& bound_to,
                                           const std::string& cls = kWaitClass) {
  PVBuilder b(name);
  b.Capacity(capacity).Class(cls).ResourceVersion(rv);
  if (!node.empty()) b.NodeAffinityIn(kNodeLabelKey, {node});
  if (bound_to != nullptr) {
    b.ClaimRef(bound_to->Namespace(), bound_to->Name(), bound_to->metadata.uid);
    b.Annotation(api::kAnnBoundByController, "yes");
  }
  return b.Ptr();
}

inline api::PersistentVolumeClaimPtr WithSelectedNode(const api::PersistentVolumeClaimPtr& c, const std::string& node) {
  auto out = std::make_shared<api::PersistentVolumeClaim>(*c);
  out->annotations.Set(std::string(api::kAnnSelectedNode), node);
  return out;
}

using Binding = std::pair<api::PersistentVolumeClaimPtr, api::PersistentVolumePtr>;

// Bindings and provisionings as FindPodVolumes or Reserve would leave them.
inline PodVolumes Volumes(const std::vector<Binding>& bindings,
                          const std::vector<api::PersistentVolumeClaimPtr>& claims) {
  PodVolumes v;
  for (const auto& [claim, pv] : bindings) v.static_bindings.push_back({pv, claim});
  v.dynamic_provisions = claims;
  return v;
}

// upstream addProvisionAnn: selected-node node1.
inline api::PersistentVolumeClaimPtr WithProvisionAnn(const api::PersistentVolumeClaimPtr& c) {
  return WithSelectedNode(c, "node1");
}

template <typename T>
std::shared_ptr<const T> WithVersion(const std::shared_ptr<const T>& obj, std::string rv) {
  auto out = std::make_shared<T>(*obj);
  out->metadata.resource_version = std::move(rv);
  return out;
}

template <typename T>
T WithoutVersion(const T& obj) {
  T copy = obj;
  copy.metadata.resource_version.clear();
  return copy;
}

// upstream testEnv.assumeVolumes.
inline void Assume(AssumeCache& cache, const FakeClusterLister& lister, const PodVolumes& v) {
  for (const auto& b : v.static_bindings) ASSERT_TRUE(cache.AssumeVolume(lister, b.pv).ok()) << b.pv->Name();
  for (const auto& c : v.dynamic_provisions) ASSERT_TRUE(cache.AssumeClaim(lister, c).ok()) << c->Name();
}

inline api::NodePtr MakeNode(const std::string& name, bool labelled = true) {
  NodeBuilder b(name);
  if (labelled) b.Label(kNodeLabelKey, name);
  return b.Obj();
}

// The pod upstream's tests schedule: test-pod in testns with one volume per claim.
inline api::Pod MakePod(const std::vector<api::PersistentVolumeClaimPtr>& claims) {
  PodBuilder b("test-pod");
  b.Namespace(kNs).UID("test-pod-uid");
  for (const auto& c : claims) b.PVC(c->Name());
  return b.Build();
}

// upstream's claims and volumes (binder_test.go's package variables).
struct Fixtures {
  api::PersistentVolumeClaimPtr unbound = MakeClaim("unbound-pvc", "1G", ClaimState::kUnbound);
  api::PersistentVolumeClaimPtr unbound2 = MakeClaim("unbound-pvc2", "5G", ClaimState::kUnbound);
  api::PersistentVolumeClaimPtr prebound = MakeClaim("prebound-pvc", "1G", ClaimState::kPrebound, "pv-node1a");
  api::PersistentVolumeClaimPtr prebound_node1a = MakeClaim("unbound-pvc", "1G", ClaimState::kPrebound, "pv-node1a");
  api::PersistentVolumeClaimPtr bound = MakeClaim("bound-pvc", "1G", ClaimState::kBound, "pv-bound");
  api::PersistentVolumeClaimPtr bound_node1a = MakeClaim("unbound-pvc", "1G", ClaimState::kBound, "pv-node1a");
  api::PersistentVolumeClaimPtr immediate_unbound =
      MakeClaim("immediate-unbound-pvc", "1G", ClaimState::kUnbound, "", "1", kImmediateClass);
  api::PersistentVolumeClaimPtr immediate_bound =
      MakeClaim("immediate-bound-pvc", "1G", ClaimState::kBound, "pv-bound-immediate", "1", kImmediateClass);

  api::PersistentVolumeClaimPtr provisioned =
      MakeClaim("provisioned-pvc", "1Gi", ClaimState::kUnbound, "", "1", kWaitClassWithProvisioner);
  api::PersistentVolumeClaimPtr provisioned2 =
      MakeClaim("provisioned-pvc2", "1Gi", ClaimState::kUnbound, "", "1", kWaitClassWithProvisioner);
  api::PersistentVolumeClaimPtr provisioned_higher_version =
      MakeClaim("provisioned-pvc2", "1Gi", ClaimState::kUnbound, "", "2", kWaitClassWithProvisioner);
  api::PersistentVolumeClaimPtr provisioned_bound =
      MakeClaim("provisioned-pvc", "1Gi", ClaimState::kBound, "pv-bound", "1", kWaitClassWithProvisioner);
  api::PersistentVolumeClaimPtr no_provisioner =
      MakeClaim("no-provisioner-pvc", "1Gi", ClaimState::kUnbound, "", "1", kWaitClass);
  api::PersistentVolumeClaimPtr topo_mismatch =
      MakeClaim("topo-mismatch-pvc", "1Gi", ClaimState::kUnbound, "", "1", kTopoMismatchClass);
  api::PersistentVolumeClaimPtr selected_node =
      MakeClaim("provisioned-pvc", "1Gi", ClaimState::kSelectedNode, "", "1", kWaitClassWithProvisioner, "node1");

  api::PersistentVolumePtr pv_node1a = MakeVolume("pv-node1a", "node1", "5G", "1", nullptr);
  api::PersistentVolumePtr pv_node1b = MakeVolume("pv-node1b", "node1", "10G", "1", nullptr);
  api::PersistentVolumePtr pv_node1c = MakeVolume("pv-node1b", "node1", "5G", "1", nullptr);
  api::PersistentVolumePtr pv_node2 = MakeVolume("pv-node2", "node2", "1G", "1", nullptr);
  api::PersistentVolumePtr pv_bound = MakeVolume("pv-bound", "node1", "1G", "1", bound);
  api::PersistentVolumePtr pv_node1a_bound = MakeVolume("pv-node1a", "node1", "5G", "1", unbound);
  api::PersistentVolumePtr pv_node1b_bound = MakeVolume("pv-node1b", "node1", "10G", "1", unbound2);
  api::PersistentVolumePtr pv_node1b_bound_higher_version = MakeVolume("pv-node1b", "node1", "10G", "2", unbound2);
  api::PersistentVolumePtr pv_bound_immediate =
      MakeVolume("pv-bound-immediate", "node1", "1G", "1", immediate_bound, kImmediateClass);
  api::PersistentVolumePtr pv_bound_immediate_node2 =
      MakeVolume("pv-bound-immediate", "node2", "1G", "1", immediate_bound, kImmediateClass);

  api::NodePtr node1 = MakeNode("node1");
  api::NodePtr node2 = MakeNode("node2");
  api::NodePtr node1_no_labels = MakeNode("node1", false);
};

// upstream newTestBinder's storage classes.
inline void AddClasses(FakeClusterLister& lister) {
  lister.Add(StorageClassBuilder(kWaitClassWithProvisioner)
                 .WaitForFirstConsumer()
                 .Provisioner(kProvisioner)
                 .AllowedTopology(kNodeLabelKey, {"node1", "reference-value"})
                 .Obj());
  lister.Add(StorageClassBuilder(kImmediateClass).Obj());
  lister.Add(StorageClassBuilder(kWaitClass).WaitForFirstConsumer().Obj());
  lister.Add(StorageClassBuilder(kTopoMismatchClass)
                 .WaitForFirstConsumer()
                 .Provisioner(kProvisioner)
                 .AllowedTopology(kNodeLabelKey, {"reference-value"})
                 .Obj());
}

inline void AddAll(FakeClusterLister& lister, const std::vector<api::PersistentVolumeClaimPtr>& claims,
                   const std::vector<api::PersistentVolumePtr>& volumes) {
  for (const auto& c : claims) lister.Add(*c);
  for (const auto& v : volumes) lister.Add(*v);
}

}  // namespace ksched::framework::plugins::volumebinding::testutil
