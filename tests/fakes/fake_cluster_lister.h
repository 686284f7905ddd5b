// An api::ClusterLister over objects a test sets directly: namespaces with labels, the
// selectors of Services, ReplicationControllers, ReplicaSets and StatefulSets, with the
// same selection rules as informers/cluster_lister.h (upstream helper.DefaultSelector),
// PodDisruptionBudgets, the storage objects of the volume plugins and the
// resource.k8s.io objects of DynamicResources.
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "pkg/api/cluster_lister.h"

namespace ksched::testing {

class FakeClusterLister final : public api::ClusterLister {
 public:
  struct MapSelector {  // Service / ReplicationController: spec.selector is a map
    std::string ns;
    api::StringMap selector;
  };
  struct WorkloadSelector {  // ReplicaSet / StatefulSet: spec.selector is a LabelSelector
    std::string ns;
    api::LabelSelector selector;
  };

  std::map<std::string, api::StringMap, std::less<>> namespaces;  // name -> labels
  std::vector<MapSelector> services, replication_controllers;
  std::vector<WorkloadSelector> replica_sets, stateful_sets;
  // Any order, any namespace; DisruptionBudgets() answers as ClusterIndex does.
  std::vector<api::DisruptionBudgetPtr> budgets;

  // A budget over `selector`; an invalid one leaves it covering no pod (and unlisted).
  static api::DisruptionBudgetPtr Budget(std::string ns, std::string name, const api::LabelSelector& selector,
                                         int32_t disruptions_allowed,
                                         std::set<std::string, std::less<>> disrupted = {}) {
    auto matcher = api::LabelSelectorMatcher::Parse(selector);
    return std::make_shared<const api::DisruptionBudget>(api::DisruptionBudget{
        .namespace_ = std::move(ns),
        .name = std::move(name),
        .selector = matcher.ok() ? std::move(*matcher) : api::LabelSelectorMatcher{},
        .disruptions_allowed = disruptions_allowed,
        .disrupted_pods = std::move(disrupted),
    });
  }

  std::optional<api::StringMap> NamespaceLabels(std::string_view name) const override {
    auto it = namespaces.find(name);
    if (it == namespaces.end()) return std::nullopt;
    return it->second;
  }

  std::vector<std::string> NamespacesMatching(const api::LabelSelectorMatcher& selector) const override {
    std::vector<std::string> out;
    for (const auto& [name, labels] : namespaces) {
      if (selector.Matches(labels)) out.push_back(name);
    }
    return out;
  }

  api::LabelSelector DefaultSpreadSelector(const api::Pod& pod) const override {
    api::LabelSelector out;
    const auto& labels = pod.metadata.labels;
    const auto& ns = pod.metadata.namespace_;
    for (const auto* list : {&services, &replication_controllers}) {
      // An empty map selects nothing (not everything); a pod without labels matches none.
      for (const MapSelector& s : *list) {
        if (s.ns != ns || s.selector.empty() || labels.empty()) continue;
        if (!api::MatchesNodeSelectorMap(s.selector, labels)) continue;
        for (const auto& [k, v] : s.selector) out.match_labels.Set(k, v);
      }
    }
    for (const auto* list : {&replica_sets, &stateful_sets}) {
      for (const WorkloadSelector& w : *list) {
        if (w.ns != ns || labels.empty()) continue;
        auto m = api::LabelSelectorMatcher::Parse(w.selector);
        if (!m.ok() || m->Empty() || !m->Matches(labels)) continue;
        for (const auto& [k, v] : w.selector.match_labels) {
          out.match_expressions.push_back({k, api::SelectorOperator::kIn, {v}});
        }
        for (const auto& r : w.selector.match_expressions) out.match_expressions.push_back(r);
      }
    }
    return out;
  }

  std::vector<api::DisruptionBudgetPtr> DisruptionBudgets(std::string_view ns) const override {
    std::vector<api::DisruptionBudgetPtr> out;
    for (const auto& b : budgets) {
      if (b->namespace_ == ns && !b->selector.Empty()) out.push_back(b);
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a->name < b->name; });
    return out;
  }

  // ---- storage: objects by key ("ns/name" for claims, the name for the rest) ----
  std::map<std::string, api::PersistentVolumeClaimPtr, std::less<>> claims;
  std::map<std::string, api::PersistentVolumePtr, std::less<>> volumes;
  std::map<std::string, api::StorageClassPtr, std::less<>> storage_classes;
  std::map<std::string, api::CSINodePtr, std::less<>> csi_nodes;
  std::map<std::string, api::CSIDriverPtr, std::less<>> csi_drivers;

  void Add(api::PersistentVolumeClaim c) {
    std::string key = c.metadata.namespace_ + "/" + c.metadata.name;
    claims[key] = std::make_shared<const api::PersistentVolumeClaim>(std::move(c));
  }
  void Add(api::PersistentVolume v) {
    std::string key = v.metadata.name;
    volumes[key] = std::make_shared<const api::PersistentVolume>(std::move(v));
  }
  void Add(api::StorageClass c) {
    std::string key = c.metadata.name;
    storage_classes[key] = std::make_shared<const api::StorageClass>(std::move(c));
  }
  void Add(api::CSINode n) {
    std::string key = n.metadata.name;
    csi_nodes[key] = std::make_shared<const api::CSINode>(std::move(n));
  }
  void Add(api::CSIDriver d) {
    std::string key = d.metadata.name;
    csi_drivers[key] = std::make_shared<const api::CSIDriver>(std::move(d));
  }

  api::PersistentVolumeClaimPtr Claim(std::string_view ns, std::string_view name) const override {
    return Find(claims, std::string(ns) + "/" + std::string(name));
  }
  api::PersistentVolumePtr Volume(std::string_view name) const override { return Find(volumes, name); }
  std::vector<api::PersistentVolumePtr> VolumesOfClass(std::string_view class_name) const override {
    std::vector<api::PersistentVolumePtr> out;  // the map is ordered by name
    for (const auto& [name, pv] : volumes) {
      if (pv->storage_class_name == class_name) out.push_back(pv);
    }
    return out;
  }
  api::StorageClassPtr StorageClassNamed(std::string_view name) const override {
    return Find(storage_classes, name);
  }
  api::CSINodePtr CSINodeNamed(std::string_view name) const override { return Find(csi_nodes, name); }
  api::CSIDriverPtr CSIDriverNamed(std::string_view name) const override { return Find(csi_drivers, name); }

  // ---- resource.k8s.io: objects by key ("ns/name" for claims, the name for the rest).
  // Call TouchSlices() after changing `slices` so ResourceSlices() hands out a new list;
  // change `resource_claims` through Add/Put (they keep the allocated-device index).
  bool serves_dynamic_resources = true;
  std::map<std::string, api::DeviceClassPtr, std::less<>> device_classes;
  std::map<std::string, api::ResourceSlicePtr, std::less<>> slices;
  std::map<std::string, api::ResourceClaimPtr, std::less<>> resource_claims;

  void Add(api::DeviceClass c) {
    std::string key = c.metadata.name;
    device_classes[key] = std::make_shared<const api::DeviceClass>(std::move(c));
  }
  void Add(api::ResourceSlice s) {
    std::string key = s.metadata.name;
    slices[key] = std::make_shared<const api::ResourceSlice>(std::move(s));
    TouchSlices();
  }
  void Add(api::ResourceClaim c) { Put(std::make_shared<const api::ResourceClaim>(std::move(c))); }
  void Put(api::ResourceClaimPtr c) {
    api::ResourceClaimPtr& slot = resource_claims[c->Key()];
    if (slot) Count(*slot, -1);
    slot = std::move(c);
    Count(*slot, 1);
  }
  void TouchSlices() { slice_list_.reset(); }

  bool ServesDynamicResources() const override { return serves_dynamic_resources; }
  api::DeviceClassPtr DeviceClassNamed(std::string_view name) const override { return Find(device_classes, name); }
  api::ResourceClaimPtr ResourceClaimNamed(std::string_view ns, std::string_view name) const override {
    return Find(resource_claims, std::string(ns) + "/" + std::string(name));
  }
  std::shared_ptr<const api::ResourceSliceList> ResourceSlices() const override {
    if (!slice_list_) {
      auto list = std::make_shared<api::ResourceSliceList>();
      list->version = ++slice_version_;
      for (const auto& [name, s] : slices) list->slices.push_back(s);
      slice_list_ = std::move(list);
    }
    return slice_list_;
  }
  bool DeviceAllocated(const api::DeviceId& id) const override { return allocated_.contains(id); }
  uint64_t AllocatedDevicesVersion() const override { return allocated_version_; }
  void ForEachAllocatedDevice(const std::function<void(const api::DeviceId&)>& fn) const override {
    for (const auto& [id, n] : allocated_) fn(id);
  }

  // PodGroups by "ns/name", and every pod that may carry the pod-group label (members are
  // picked from them by label, as the informer's index does).
  std::map<std::string, api::PodGroupPtr, std::less<>> pod_groups;
  std::vector<api::PodPtr> pods;
  api::PodGroupPtr PodGroupNamed(std::string_view ns, std::string_view name) const override {
    return Find(pod_groups, std::string(ns) + "/" + std::string(name));
  }
  std::vector<api::PodPtr> PodGroupMembers(std::string_view ns, std::string_view name) const override {
    std::vector<api::PodPtr> out;
    for (const api::PodPtr& p : pods) {
      const std::string* group = p->metadata.labels.Get(api::kPodGroupLabel);
      if (p->metadata.namespace_ == ns && group != nullptr && *group == name) out.push_back(p);
    }
    return out;
  }

 private:
  mutable std::shared_ptr<const api::ResourceSliceList> slice_list_;
  std::map<api::DeviceId, int> allocated_;  // devices of the claims' allocations

  uint64_t allocated_version_ = 0;

  void Count(const api::ResourceClaim& c, int delta) {
    if (!c.allocation) return;
    ++allocated_version_;
    for (const auto& r : c.allocation->results) {
      if (r.admin_access) continue;
      int& n = allocated_[{r.driver, r.pool, r.device}];
      n += delta;
      if (n <= 0) allocated_.erase({r.driver, r.pool, r.device});
    }
  }
  mutable uint64_t slice_version_ = 0;

  template <typename M>
  static typename M::mapped_type Find(const M& m, std::string_view key) {
    auto it = m.find(key);
    return it == m.end() ? nullptr : it->second;
  }
};

}  // namespace ksched::testing
