// Fluent builders for the storage objects of the volume plugins' tests, shaped after
// upstream's st.MakePersistentVolume() / MakePersistentVolumeClaim() wrappers:
//
//   PVBuilder("pv-a").Capacity("5Gi").Class("local").AccessModes({"ReadWriteOnce"})
//       .NodeAffinityIn("kubernetes.io/hostname", {"node-a"}).Obj()
//   PVCBuilder("claim", "ns").Class("local").Request("1Gi").Obj()
//   StorageClassBuilder("local").WaitForFirstConsumer().Obj()
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pkg/api/quantity.h"
#include "pkg/api/storage.h"

namespace ksched::testing {

namespace storage_builders_internal {
inline api::Quantity Q(std::string_view s) {
  auto q = api::Quantity::Parse(s);
  return q.ok() ? *q : api::Quantity();
}
}  // namespace storage_builders_internal

class PVBuilder {
 public:
  explicit PVBuilder(std::string name) {
    pv_.metadata.name = std::move(name);
    pv_.metadata.uid = "uid-" + pv_.metadata.name;
    pv_.metadata.resource_version = "1";
    pv_.phase = std::string(api::kVolumeAvailable);
  }
  PVBuilder& Capacity(std::string_view q) { pv_.capacity = storage_builders_internal::Q(q); return *this; }
  PVBuilder& Class(std::string v) { pv_.storage_class_name = std::move(v); return *this; }
  PVBuilder& AccessModes(std::vector<std::string> v) { pv_.access_modes = std::move(v); return *this; }
  PVBuilder& VolumeMode(std::string v) { pv_.volume_mode = std::move(v); return *this; }
  PVBuilder& Label(std::string k, std::string v) { pv_.metadata.labels.Set(std::move(k), std::move(v)); return *this; }
  PVBuilder& Annotation(std::string_view k, std::string v) { pv_.annotations.Set(std::string(k), std::move(v)); return *this; }
  PVBuilder& ResourceVersion(std::string v) { pv_.metadata.resource_version = std::move(v); return *this; }
  PVBuilder& Phase(std::string_view v) { pv_.phase = std::string(v); return *this; }
  PVBuilder& BeingDeleted() { pv_.being_deleted = true; return *this; }
  // spec.claimRef to ns/name (uid optional, as a pre-bound volume may leave it out).
  PVBuilder& ClaimRef(std::string ns, std::string name, std::string uid = "") {
    pv_.claim_ref = api::ClaimReference{std::move(ns), std::move(name), std::move(uid)};
    return *this;
  }
  // A required node affinity term `key In values` (one more term per call: terms are ORed).
  PVBuilder& NodeAffinityIn(std::string key, std::vector<std::string> values) {
    if (!pv_.node_affinity) pv_.node_affinity.emplace();
    api::NodeSelectorTerm term;
    term.match_expressions.push_back({std::move(key), api::SelectorOperator::kIn, std::move(values)});
    pv_.node_affinity->push_back(std::move(term));
    return *this;
  }
  PVBuilder& CSI(std::string driver, std::string handle) {
    pv_.source.csi_driver = std::move(driver);
    pv_.source.csi_volume_handle = std::move(handle);
    return *this;
  }
  PVBuilder& Source(api::VolumeSource s) { pv_.source = std::move(s); return *this; }
  api::PersistentVolume Obj() const { return pv_; }
  api::PersistentVolumePtr Ptr() const { return std::make_shared<const api::PersistentVolume>(pv_); }

 private:
  api::PersistentVolume pv_;
};

class PVCBuilder {
 public:
  explicit PVCBuilder(std::string name, std::string ns = "default") {
    c_.metadata.name = std::move(name);
    c_.metadata.namespace_ = std::move(ns);
    c_.metadata.uid = "uid-" + c_.metadata.namespace_ + "-" + c_.metadata.name;
    c_.metadata.resource_version = "1";
    c_.phase = std::string(api::kClaimPending);
    c_.access_modes = {std::string(api::kReadWriteOnce)};
  }
  PVCBuilder& Class(std::string v) { c_.storage_class_name = std::move(v); return *this; }
  PVCBuilder& Request(std::string_view q) { c_.storage_request = storage_builders_internal::Q(q); return *this; }
  PVCBuilder& AccessModes(std::vector<std::string> v) { c_.access_modes = std::move(v); return *this; }
  PVCBuilder& VolumeMode(std::string v) { c_.volume_mode = std::move(v); return *this; }
  PVCBuilder& Selector(api::LabelSelector s) { c_.selector = std::move(s); return *this; }
  PVCBuilder& Annotation(std::string_view k, std::string v) { c_.annotations.Set(std::string(k), std::move(v)); return *this; }
  PVCBuilder& ResourceVersion(std::string v) { c_.metadata.resource_version = std::move(v); return *this; }
  PVCBuilder& UID(std::string v) { c_.metadata.uid = std::move(v); return *this; }
  PVCBuilder& BeingDeleted() { c_.being_deleted = true; return *this; }
  PVCBuilder& OwnedBy(std::string kind, std::string name, std::string uid) {
    c_.owner_references.push_back({.api_version = "v1", .kind = std::move(kind), .name = std::move(name),
                                   .uid = std::move(uid), .controller = true});
    return *this;
  }
  // spec.volumeName set and status.phase Bound (with bind-completed, as the PV
  // controller leaves a claim it bound).
  PVCBuilder& BoundTo(std::string volume) {
    c_.volume_name = std::move(volume);
    c_.phase = std::string(api::kClaimBound);
    c_.annotations.Set(std::string(api::kAnnBindCompleted), "yes");
    return *this;
  }
  // spec.volumeName set but not yet bound (a claim pre-bound by its author).
  PVCBuilder& VolumeName(std::string volume) { c_.volume_name = std::move(volume); return *this; }
  PVCBuilder& Phase(std::string_view v) { c_.phase = std::string(v); return *this; }
  api::PersistentVolumeClaim Obj() const { return c_; }
  api::PersistentVolumeClaimPtr Ptr() const { return std::make_shared<const api::PersistentVolumeClaim>(c_); }

 private:
  api::PersistentVolumeClaim c_;
};

class StorageClassBuilder {
 public:
  explicit StorageClassBuilder(std::string name) {
    sc_.metadata.name = std::move(name);
    sc_.provisioner = "kubernetes.io/no-provisioner";
    sc_.volume_binding_mode = std::string(api::kVolumeBindingImmediate);
  }
  StorageClassBuilder& Provisioner(std::string v) { sc_.provisioner = std::move(v); return *this; }
  StorageClassBuilder& WaitForFirstConsumer() {
    sc_.volume_binding_mode = std::string(api::kVolumeBindingWaitForFirstConsumer);
    return *this;
  }
  // One allowedTopologies term with a single requirement `key In values`.
  StorageClassBuilder& AllowedTopology(std::string key, std::vector<std::string> values) {
    sc_.allowed_topologies.push_back({{std::move(key), std::move(values)}});
    return *this;
  }
  api::StorageClass Obj() const { return sc_; }

 private:
  api::StorageClass sc_;
};

class CSINodeBuilder {
 public:
  explicit CSINodeBuilder(std::string node) { n_.metadata.name = std::move(node); }
  CSINodeBuilder& Driver(std::string name, std::optional<int32_t> limit = std::nullopt,
                         std::vector<std::string> topology_keys = {}) {
    n_.drivers.push_back({.name = std::move(name),
                          .node_id = n_.metadata.name,
                          .allocatable_count = limit,
                          .topology_keys = std::move(topology_keys)});
    return *this;
  }
  CSINodeBuilder& MigratedPlugins(std::string v) {
    n_.annotations.Set(std::string(api::kAnnMigratedPlugins), std::move(v));
    return *this;
  }
  api::CSINode Obj() const { return n_; }

 private:
  api::CSINode n_;
};

}  // namespace ksched::testing
