// api::ClusterLister over informers: namespaces (for their labels), the Services,
// ReplicationControllers, ReplicaSets and StatefulSets that select pods (for upstream's
// helper.DefaultSelector), and PodDisruptionBudgets (for preemption). The objects keep
// only metadata, selectors and a budget's status (pkg/api/workloads.h); an index by
// namespace, kept by the informers' event handlers, makes DefaultSpreadSelector cost one
// map lookup plus the selectors of the pod's own namespace, with selectors parsed once
// per object version rather than per call.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "informers/informer.h"
#include "informers/pod_group_lister.h"
#include "informers/resource_lister.h"
#include "informers/storage_lister.h"
#include "pkg/api/cluster_lister.h"
#include "pkg/api/selector.h"
#include "pkg/api/workloads.h"
#include "pkg/util/mutex.h"

namespace ksched::informers {

// The lookups over objects put in and removed by event handlers (see IndexFeeder).
// Thread-safe: handlers write from informer threads while the scheduler reads.
class ClusterIndex final : public api::ClusterLister {
 public:
  // Adds or replaces an object by namespace and name. Objects that select no pod (an
  // empty, absent or invalid selector) are dropped, as are their previous versions.
  void Put(const api::NamespacePtr& ns) EXCLUDES(mu_);
  void Put(const api::ServicePtr& svc) EXCLUDES(mu_);
  void Put(const api::ReplicationControllerPtr& rc) EXCLUDES(mu_);
  void Put(const api::ReplicaSetPtr& rs) EXCLUDES(mu_);
  void Put(const api::StatefulSetPtr& ss) EXCLUDES(mu_);
  void Put(const api::PodDisruptionBudgetPtr& pdb) EXCLUDES(mu_);
  void Remove(const api::Namespace& ns) EXCLUDES(mu_);
  void Remove(const api::Service& svc) EXCLUDES(mu_);
  void Remove(const api::ReplicationController& rc) EXCLUDES(mu_);
  void Remove(const api::ReplicaSet& rs) EXCLUDES(mu_);
  void Remove(const api::StatefulSet& ss) EXCLUDES(mu_);
  void Remove(const api::PodDisruptionBudget& pdb) EXCLUDES(mu_);

  std::optional<api::StringMap> NamespaceLabels(std::string_view name) const override EXCLUDES(mu_);
  std::vector<std::string> NamespacesMatching(const api::LabelSelectorMatcher& selector) const override
      EXCLUDES(mu_);
  // Selectors of one namespace are visited in name order: Services, then RCs (into
  // match_labels), then ReplicaSets, then StatefulSets (into match_expressions).
  api::LabelSelector DefaultSpreadSelector(const api::Pod& pod) const override EXCLUDES(mu_);
  std::vector<api::DisruptionBudgetPtr> DisruptionBudgets(std::string_view ns) const override EXCLUDES(mu_);

 private:
  // A ReplicaSet's or StatefulSet's selector (sharing the object) and its parsed form.
  struct WorkloadSelector {
    std::shared_ptr<const api::LabelSelector> selector;
    api::LabelSelectorMatcher matcher;
  };
  template <typename V>
  using ByName = std::map<std::string, V, std::less<>>;
  // The objects of one namespace that select pods, by name.
  struct Selecting {
    ByName<std::shared_ptr<const api::StringMap>> services, controllers;
    ByName<WorkloadSelector> replica_sets, stateful_sets;
    ByName<api::DisruptionBudgetPtr> budgets;  // built once per object version
    bool empty() const {
      return services.empty() && controllers.empty() && replica_sets.empty() && stateful_sets.empty() &&
             budgets.empty();
    }
  };

  // Sets (or with nullopt, erases) the entry of `meta` in `member` of its namespace.
  template <typename V>
  void Set(ByName<V> Selecting::*member, const api::LeanObjectMeta& meta, std::optional<V> value) EXCLUDES(mu_);
  template <typename T>
  static std::optional<WorkloadSelector> ParseWorkload(const std::shared_ptr<const T>& obj);

  mutable Mutex mu_;
  ByName<std::shared_ptr<const api::StringMap>> namespace_labels_ GUARDED_BY(mu_);  // shares the Namespace
  ByName<Selecting> by_namespace_ GUARDED_BY(mu_);
};

// Routes one informer's events into a ClusterIndex.
template <typename T>
class IndexFeeder final : public EventHandler<T> {
 public:
  explicit IndexFeeder(ClusterIndex& index) : index_(index) {}
  void OnAdd(const std::shared_ptr<const T>& obj) override { index_.Put(obj); }
  void OnUpdate(const std::shared_ptr<const T>& /*old_obj*/, const std::shared_ptr<const T>& new_obj) override {
    index_.Put(new_obj);
  }
  void OnDelete(const Deleted<T>& deleted) override { index_.Remove(*deleted.last_known); }

 private:
  ClusterIndex& index_;
};

// How DisruptionBudgetPath retries a discovery that got no answer.
struct DiscoveryRetry {
  std::chrono::milliseconds initial{500};
  std::chrono::milliseconds max{30000};
  // Told each failure before the wait (the first is logged as a warning, later ones too,
  // with the wait): ClusterListers shows the last one in SyncStatus.
  std::function<void(const Status&)> on_failure;
  // Waits `d` (default: sleeps); returns false to give up (then: no budgets).
  std::function<bool(std::chrono::milliseconds d)> wait;
};

// The collection PodDisruptionBudgets are watched at, by API discovery (GET /apis/policy):
// policy/v1 when the server serves it (Kubernetes 1.21 on), else policy/v1beta1. nullopt
// when the server has no policy group (404) or serves neither version: then there are no
// budgets. Any other outcome (403 while the server's RBAC warms up after a restart, 5xx,
// no connection, an unreadable document) decides nothing: discovery is asked again with
// backoff until the server answers, as upstream's discovery-backed informers wait. A
// guess taken on a transient error would be permanent: a 1.20 server answers NotFound
// for policy/v1 for ever, and the budget informer would never sync.
std::optional<std::string> DisruptionBudgetPath(client::ApiClient& client, const DiscoveryRetry& retry = {});

// The six informers (cluster-wide, as kube-scheduler's shared informer factory) and the
// index they feed, plus the storage informers (storage_lister.h). The lookups answer from whatever has been delivered so far; wait for
// WaitForSync before scheduling so they reflect the whole cluster.
class ClusterListers final : public api::ClusterLister {
 public:
  explicit ClusterListers(client::ApiClient& client, const InformerOptions& options = {});
  ClusterListers(const ClusterListers&) = delete;
  ClusterListers& operator=(const ClusterListers&) = delete;

  // Starts the informers, the PodDisruptionBudget and resource.k8s.io ones after
  // discovery (blocking on one GET each).
  void Start();
  void Stop();
  // True once Start() has returned and every informer it started has delivered its first
  // list (without a policy group, there is no budget informer to wait for).
  bool HasSynced() const;
  // Blocks until HasSynced() or `timeout` (real time, for all informers together) passes.
  bool WaitForSync(std::chrono::milliseconds timeout) const;
  // OK once synced; otherwise what is missing and why: discovery still failing, or the
  // first informer that has not synced with its last error.
  Status SyncStatus() const;

  std::optional<api::StringMap> NamespaceLabels(std::string_view name) const override {
    return index_.NamespaceLabels(name);
  }
  std::vector<std::string> NamespacesMatching(const api::LabelSelectorMatcher& selector) const override {
    return index_.NamespacesMatching(selector);
  }
  api::LabelSelector DefaultSpreadSelector(const api::Pod& pod) const override {
    return index_.DefaultSpreadSelector(pod);
  }
  std::vector<api::DisruptionBudgetPtr> DisruptionBudgets(std::string_view ns) const override {
    return index_.DisruptionBudgets(ns);
  }
  api::PersistentVolumeClaimPtr Claim(std::string_view ns, std::string_view name) const override {
    return storage_.Claim(ns, name);
  }
  api::PersistentVolumePtr Volume(std::string_view name) const override { return storage_.Volume(name); }
  std::vector<api::PersistentVolumePtr> VolumesOfClass(std::string_view class_name) const override {
    return storage_.VolumesOfClass(class_name);
  }
  api::StorageClassPtr StorageClassNamed(std::string_view name) const override {
    return storage_.StorageClassNamed(name);
  }
  api::CSINodePtr CSINodeNamed(std::string_view name) const override { return storage_.CSINodeNamed(name); }
  api::CSIDriverPtr CSIDriverNamed(std::string_view name) const override { return storage_.CSIDriverNamed(name); }

  bool ServesDynamicResources() const override { return resources_.served(); }
  api::DeviceClassPtr DeviceClassNamed(std::string_view name) const override {
    return resources_.DeviceClassNamed(name);
  }
  api::ResourceClaimPtr ResourceClaimNamed(std::string_view ns, std::string_view name) const override {
    return resources_.ResourceClaimNamed(ns, name);
  }
  std::shared_ptr<const api::ResourceSliceList> ResourceSlices() const override { return resources_.ResourceSlices(); }
  bool DeviceAllocated(const api::DeviceId& id) const override { return resources_.DeviceAllocated(id); }
  uint64_t AllocatedDevicesVersion() const override { return resources_.AllocatedDevicesVersion(); }
  void ForEachAllocatedDevice(const std::function<void(const api::DeviceId&)>& fn) const override {
    resources_.ForEachAllocatedDevice(fn);
  }

  api::PodGroupPtr PodGroupNamed(std::string_view ns, std::string_view name) const override {
    return pod_groups_.PodGroupNamed(ns, name);
  }
  std::vector<api::PodPtr> PodGroupMembers(std::string_view ns, std::string_view name) const override {
    return pod_groups_.Members(ns, name);
  }

  // The storage informers, for the scheduler's event handlers (add them before Start()).
  StorageListers& storage() { return storage_; }
  // The resource.k8s.io informers, likewise; they run only when discovery finds the group.
  ResourceListers& resources() { return resources_; }
  // The PodGroup informer and member index: the informer runs when SetWanted(true) was
  // called before Start() and discovery finds scheduling.x-k8s.io/v1alpha1; the member
  // index is fed by the scheduler's Pod informer (add pod_groups().members() to it).
  PodGroupListers& pod_groups() { return pod_groups_; }

 private:
  // Declared before the informers, whose threads feed them: destroyed after they stop.
  ClusterIndex index_;
  IndexFeeder<api::Namespace> namespace_feeder_{index_};
  IndexFeeder<api::Service> service_feeder_{index_};
  IndexFeeder<api::ReplicationController> controller_feeder_{index_};
  IndexFeeder<api::ReplicaSet> replica_set_feeder_{index_};
  IndexFeeder<api::StatefulSet> stateful_set_feeder_{index_};
  IndexFeeder<api::PodDisruptionBudget> budget_feeder_{index_};

  client::ApiClient& client_;
  const InformerOptions options_;
  NamespaceInformer namespaces_;
  ServiceInformer services_;
  ReplicationControllerInformer controllers_;
  ReplicaSetInformer replica_sets_;
  StatefulSetInformer stateful_sets_;
  // Set by Start() (when the server serves policy) before it publishes started_.
  std::unique_ptr<DisruptionBudgetInformer> budgets_;
  std::atomic<bool> started_{false};
  mutable Mutex discovery_mu_;
  Status discovery_error_ GUARDED_BY(discovery_mu_);  // the last failed discovery while Start() retries
  StorageListers storage_;
  ResourceListers resources_;
  PodGroupListers pod_groups_;
};

}  // namespace ksched::informers
