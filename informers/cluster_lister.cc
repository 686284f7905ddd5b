#include "informers/cluster_lister.h"

#include <algorithm>
#include <thread>

#include "pkg/api/json.h"
#include "pkg/util/log.h"

namespace ksched::informers {
namespace {

// A Service's or ReplicationController's selector, sharing the object; nullopt when it
// selects nothing. An empty map selects nothing rather than everything (upstream
// GetPodServices skips nil selectors, and the API server sends empty ones as absent;
// GetPodControllers skips empty ones).
template <typename T>
std::optional<std::shared_ptr<const api::StringMap>> MapSelector(const std::shared_ptr<const T>& obj,
                                                                 const api::StringMap* selector) {
  if (selector == nullptr || selector->empty()) return std::nullopt;
  return std::shared_ptr<const api::StringMap>(obj, selector);
}

// The budget preemption reads, built here on the informer's thread; nullopt when it
// covers no pod. As upstream filterPodsWithPDBViolation (defaultpreemption), an invalid
// selector matches nothing, and neither does a nil or empty one.
std::optional<api::DisruptionBudgetPtr> MakeBudget(const api::PodDisruptionBudget& pdb) {
  if (!pdb.selector) return std::nullopt;
  auto matcher = api::LabelSelectorMatcher::Parse(*pdb.selector);
  if (!matcher.ok()) {
    KLOG(WARNING) << "PodDisruptionBudget " << pdb.metadata.namespace_ << "/" << pdb.metadata.name
                  << " is ignored (it covers no pods): spec.selector: " << matcher.status().message();
    return std::nullopt;
  }
  if (matcher->Empty()) return std::nullopt;
  return std::make_shared<const api::DisruptionBudget>(api::DisruptionBudget{
      .namespace_ = pdb.metadata.namespace_,
      .name = pdb.metadata.name,
      .selector = std::move(*matcher),
      .disruptions_allowed = pdb.disruptions_allowed,
      .disrupted_pods = {pdb.disrupted_pods.begin(), pdb.disrupted_pods.end()},
  });
}

}  // namespace

std::optional<std::string> DisruptionBudgetPath(client::ApiClient& client, const DiscoveryRetry& retry) {
  constexpr char kV1[] = "/apis/policy/v1/poddisruptionbudgets";
  constexpr char kV1beta1[] = "/apis/policy/v1beta1/poddisruptionbudgets";
  auto delay = retry.initial;
  for (int attempt = 1;; ++attempt) {
    auto response = client.Do({.path = "/apis/policy"});
    if (!response.ok() && response.status().code() == StatusCode::kNotFound) {
      KLOG(WARNING) << "the API server has no policy API group: PodDisruptionBudgets are not watched, "
                       "and preemption sees none";
      return std::nullopt;
    }
    api::JsonParser parser;
    StatusOr<std::vector<std::string>> versions =
        response.ok() ? api::DecodeApiGroupVersions(parser, response->body) : response.status();
    if (versions.ok()) {
      auto served = [&](std::string_view v) {
        return std::find(versions->begin(), versions->end(), v) != versions->end();
      };
      if (served("policy/v1")) return kV1;
      if (served("policy/v1beta1")) return kV1beta1;
      KLOG(WARNING) << "the API server serves neither policy/v1 nor policy/v1beta1: PodDisruptionBudgets are not "
                       "watched, and preemption sees none";
      return std::nullopt;
    }
    Status failed = versions.status().WithContext("discovering the policy API group (GET /apis/policy)");
    if (retry.on_failure) retry.on_failure(failed);
    KLOG(WARNING) << failed.message() << "; attempt " << attempt << ", asking again in " << delay.count() << "ms";
    const bool go_on = retry.wait ? retry.wait(delay) : (std::this_thread::sleep_for(delay), true);
    if (!go_on) return std::nullopt;
    delay = std::min(delay * 2, retry.max);
  }
}

// Parsed here, on the informer's thread, so DefaultSpreadSelector never parses. As
// upstream GetPodReplicaSets / GetPodStatefulSets, a null or empty selector selects
// nothing; so does an invalid one (the API server's validation keeps those out).
template <typename T>
std::optional<ClusterIndex::WorkloadSelector> ClusterIndex::ParseWorkload(const std::shared_ptr<const T>& obj) {
  if (!obj->selector) return std::nullopt;
  auto matcher = api::LabelSelectorMatcher::Parse(*obj->selector);
  if (!matcher.ok() || matcher->Empty()) return std::nullopt;
  return WorkloadSelector{std::shared_ptr<const api::LabelSelector>(obj, &*obj->selector), std::move(*matcher)};
}

template <typename V>
void ClusterIndex::Set(ByName<V> Selecting::*member, const api::LeanObjectMeta& meta, std::optional<V> value) {
  MutexLock lock(mu_);
  auto it = by_namespace_.find(meta.namespace_);
  if (value) {
    if (it == by_namespace_.end()) it = by_namespace_.emplace(meta.namespace_, Selecting{}).first;
    (it->second.*member).insert_or_assign(meta.name, std::move(*value));
    return;
  }
  if (it == by_namespace_.end()) return;
  auto& by_name = it->second.*member;
  if (auto e = by_name.find(meta.name); e != by_name.end()) by_name.erase(e);
  if (it->second.empty()) by_namespace_.erase(it);
}

void ClusterIndex::Put(const api::NamespacePtr& ns) {
  std::shared_ptr<const api::StringMap> labels(ns, &ns->metadata.labels);
  MutexLock lock(mu_);
  namespace_labels_.insert_or_assign(ns->metadata.name, std::move(labels));
}

void ClusterIndex::Remove(const api::Namespace& ns) {
  MutexLock lock(mu_);
  if (auto it = namespace_labels_.find(ns.metadata.name); it != namespace_labels_.end()) namespace_labels_.erase(it);
}

void ClusterIndex::Put(const api::ServicePtr& svc) {
  Set(&Selecting::services, svc->metadata, MapSelector(svc, svc->selector ? &*svc->selector : nullptr));
}

void ClusterIndex::Remove(const api::Service& svc) {
  Set<std::shared_ptr<const api::StringMap>>(&Selecting::services, svc.metadata, std::nullopt);
}

void ClusterIndex::Put(const api::ReplicationControllerPtr& rc) {
  Set(&Selecting::controllers, rc->metadata, MapSelector(rc, &rc->selector));
}

void ClusterIndex::Remove(const api::ReplicationController& rc) {
  Set<std::shared_ptr<const api::StringMap>>(&Selecting::controllers, rc.metadata, std::nullopt);
}

void ClusterIndex::Put(const api::ReplicaSetPtr& rs) {
  Set(&Selecting::replica_sets, rs->metadata, ParseWorkload(rs));
}

void ClusterIndex::Remove(const api::ReplicaSet& rs) {
  Set<WorkloadSelector>(&Selecting::replica_sets, rs.metadata, std::nullopt);
}

void ClusterIndex::Put(const api::StatefulSetPtr& ss) {
  Set(&Selecting::stateful_sets, ss->metadata, ParseWorkload(ss));
}

void ClusterIndex::Remove(const api::StatefulSet& ss) {
  Set<WorkloadSelector>(&Selecting::stateful_sets, ss.metadata, std::nullopt);
}

void ClusterIndex::Put(const api::PodDisruptionBudgetPtr& pdb) {
  Set(&Selecting::budgets, pdb->metadata, MakeBudget(*pdb));
}

void ClusterIndex::Remove(const api::PodDisruptionBudget& pdb) {
  Set<api::DisruptionBudgetPtr>(&Selecting::budgets, pdb.metadata, std::nullopt);
}

std::optional<api::StringMap> ClusterIndex::NamespaceLabels(std::string_view name) const {
  MutexLock lock(mu_);
  auto it = namespace_labels_.find(name);
  if (it == namespace_labels_.end()) return std::nullopt;
  return *it->second;
}

std::vector<std::string> ClusterIndex::NamespacesMatching(const api::LabelSelectorMatcher& selector) const {
  std::vector<std::string> out;
  MutexLock lock(mu_);
  for (const auto& [name, labels] : namespace_labels_) {  // sorted by name
    if (selector.Matches(*labels)) out.push_back(name);
  }
  return out;
}

// upstream helper.DefaultSelector with client-go's GetPodControllers, GetPodReplicaSets
// and GetPodStatefulSets: only objects of the pod's namespace, and a pod without labels
// is selected by none of them.
api::LabelSelector ClusterIndex::DefaultSpreadSelector(const api::Pod& pod) const {
  api::LabelSelector out;
  const api::StringMap& labels = pod.metadata.labels;
  if (labels.empty()) return out;
  MutexLock lock(mu_);
  auto it = by_namespace_.find(pod.metadata.namespace_);
  if (it == by_namespace_.end()) return out;
  const Selecting& sel = it->second;
  // Whatever selects the same pod cannot disagree on a key's value, so merging is safe.
  for (const auto* by_name : {&sel.services, &sel.controllers}) {
    for (const auto& [name, selector] : *by_name) {
      if (!api::MatchesNodeSelectorMap(*selector, labels)) continue;
      for (const auto& [k, v] : *selector) out.match_labels.Set(k, v);
    }
  }
  for (const auto* by_name : {&sel.replica_sets, &sel.stateful_sets}) {
    for (const auto& [name, w] : *by_name) {
      if (!w.matcher.Matches(labels)) continue;
      for (const auto& [k, v] : w.selector->match_labels) {
        out.match_expressions.push_back({k, api::SelectorOperator::kIn, {v}});
      }
      out.match_expressions.insert(out.match_expressions.end(), w.selector->match_expressions.begin(),
                                   w.selector->match_expressions.end());
    }
  }
  return out;
}

std::vector<api::DisruptionBudgetPtr> ClusterIndex::DisruptionBudgets(std::string_view ns) const {
  std::vector<api::DisruptionBudgetPtr> out;
  MutexLock lock(mu_);
  auto it = by_namespace_.find(ns);
  if (it == by_namespace_.end()) return out;
  out.reserve(it->second.budgets.size());
  for (const auto& [name, budget] : it->second.budgets) out.push_back(budget);  // by name
  return out;
}

ClusterListers::ClusterListers(client::ApiClient& client, const InformerOptions& options)
    : client_(client),
      options_(options),
      namespaces_(client, "/api/v1/namespaces", options),
      services_(client, "/api/v1/services", options),
      controllers_(client, "/api/v1/replicationcontrollers", options),
      replica_sets_(client, "/apis/apps/v1/replicasets", options),
      stateful_sets_(client, "/apis/apps/v1/statefulsets", options),
      storage_(client, options),
      resources_(client, options),
      pod_groups_(client, options) {
  namespaces_.AddHandler(&namespace_feeder_);
  services_.AddHandler(&service_feeder_);
  controllers_.AddHandler(&controller_feeder_);
  replica_sets_.AddHandler(&replica_set_feeder_);
  stateful_sets_.AddHandler(&stateful_set_feeder_);
}

void ClusterListers::Start() {
  DiscoveryRetry retry{.on_failure = [this](const Status& s) {
    MutexLock lock(discovery_mu_);
    discovery_error_ = s;
  }};
  if (auto path = DisruptionBudgetPath(client_, retry)) {
    budgets_ = std::make_unique<DisruptionBudgetInformer>(client_, std::move(*path), options_);
    budgets_->AddHandler(&budget_feeder_);
  }
  const bool serves_resources = ServesResourceV1(client_, retry);
  const bool serves_pod_groups = pod_groups_.wanted() && ServesPodGroups(client_, retry);
  // Published before any informer starts: one that has synced implies started_.
  started_.store(true, std::memory_order_release);
  namespaces_.Start();
  services_.Start();
  controllers_.Start();
  replica_sets_.Start();
  stateful_sets_.Start();
  if (budgets_) budgets_->Start();
  storage_.Start();
  resources_.Start(serves_resources);
  pod_groups_.Start(serves_pod_groups);
}

void ClusterListers::Stop() {
  namespaces_.Stop();
  services_.Stop();
  controllers_.Stop();
  replica_sets_.Stop();
  stateful_sets_.Stop();
  if (started_.load(std::memory_order_acquire) && budgets_) budgets_->Stop();
  storage_.Stop();
  if (started_.load(std::memory_order_acquire)) {
    resources_.Stop();
    pod_groups_.Stop();
  }
}

bool ClusterListers::HasSynced() const {
  return started_.load(std::memory_order_acquire) && namespaces_.HasSynced() && services_.HasSynced() &&
         controllers_.HasSynced() && replica_sets_.HasSynced() && stateful_sets_.HasSynced() &&
         (!budgets_ || budgets_->HasSynced()) && storage_.HasSynced() && resources_.HasSynced() &&
         pod_groups_.HasSynced();
}

Status ClusterListers::SyncStatus() const {
  if (!started_.load(std::memory_order_acquire)) {
    MutexLock lock(discovery_mu_);
    if (!discovery_error_.ok()) return Status(StatusCode::kUnavailable, discovery_error_.message());
    return Status(StatusCode::kUnavailable, "discovering the policy API group");
  }
  for (Status s : {SyncStatusOf(namespaces_), SyncStatusOf(services_), SyncStatusOf(controllers_),
                   SyncStatusOf(replica_sets_), SyncStatusOf(stateful_sets_)}) {
    if (!s.ok()) return s;
  }
  if (budgets_) {
    if (Status s = SyncStatusOf(*budgets_); !s.ok()) return s;
  }
  if (Status s = storage_.SyncStatus(); !s.ok()) return s;
  if (Status s = resources_.SyncStatus(); !s.ok()) return s;
  return pod_groups_.SyncStatus();
}

bool ClusterListers::WaitForSync(std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  // None syncs before Start() has published budgets_.
  return namespaces_.WaitForSync(TimeLeft(deadline)) && services_.WaitForSync(TimeLeft(deadline)) &&
         controllers_.WaitForSync(TimeLeft(deadline)) && replica_sets_.WaitForSync(TimeLeft(deadline)) &&
         stateful_sets_.WaitForSync(TimeLeft(deadline)) && started_.load(std::memory_order_acquire) &&
         (!budgets_ || budgets_->WaitForSync(TimeLeft(deadline))) && storage_.WaitForSync(TimeLeft(deadline)) &&
         resources_.WaitForSync(TimeLeft(deadline)) && pod_groups_.WaitForSync(TimeLeft(deadline));
}

}  // namespace ksched::informers
