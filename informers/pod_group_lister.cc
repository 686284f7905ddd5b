#include "informers/pod_group_lister.h"

#include "informers/cluster_lister.h"
#include "informers/resource_lister.h"

namespace ksched::informers {

std::string PodGroupKeyOf(const api::Pod& pod) {
  const std::string* group = pod.metadata.labels.Get(api::kPodGroupLabel);
  if (group == nullptr || group->empty()) return {};
  std::string key = pod.metadata.namespace_;
  key += '/';
  key += *group;
  return key;
}

void PodGroupMembers::PutLocked(const api::PodPtr& pod) {
  std::string key = PodGroupKeyOf(*pod);
  if (key.empty()) return;
  groups_[key].insert_or_assign(pod->metadata.name, pod);
}

void PodGroupMembers::RemoveLocked(const api::Pod& pod) {
  std::string key = PodGroupKeyOf(pod);
  if (key.empty()) return;
  auto it = groups_.find(key);
  if (it == groups_.end()) return;
  it->second.erase(pod.metadata.name);
  if (it->second.empty()) groups_.erase(it);
}

void PodGroupMembers::OnAdd(const api::PodPtr& pod) {
  MutexLock lock(mu_);
  PutLocked(pod);
}

void PodGroupMembers::OnUpdate(const api::PodPtr& old_pod, const api::PodPtr& new_pod) {
  MutexLock lock(mu_);
  RemoveLocked(*old_pod);  // its label may have changed
  PutLocked(new_pod);
}

void PodGroupMembers::OnDelete(const Deleted<api::Pod>& deleted) {
  MutexLock lock(mu_);
  RemoveLocked(*deleted.last_known);
}

std::vector<api::PodPtr> PodGroupMembers::Members(std::string_view ns, std::string_view name) const {
  std::string key(ns);
  key += '/';
  key += name;
  std::vector<api::PodPtr> out;
  MutexLock lock(mu_);
  auto it = groups_.find(key);
  if (it == groups_.end()) return out;
  out.reserve(it->second.size());
  for (const auto& [pod_name, pod] : it->second) out.push_back(pod);
  return out;
}

PodGroupListers::PodGroupListers(client::ApiClient& client, const InformerOptions& options)
    : informer_(client, kPodGroupsPath, options) {}

void PodGroupListers::Start(bool served) {
  served_.store(wanted_ && served, std::memory_order_release);
  if (this->served()) informer_.Start();
  started_.store(true, std::memory_order_release);
}

void PodGroupListers::Stop() {
  if (served()) informer_.Stop();
}

bool PodGroupListers::HasSynced() const {
  if (!started_.load(std::memory_order_acquire)) return false;
  return !served() || informer_.HasSynced();
}

bool PodGroupListers::WaitForSync(std::chrono::milliseconds timeout) const {
  if (!served()) return started_.load(std::memory_order_acquire);
  return informer_.WaitForSync(timeout);
}

Status PodGroupListers::SyncStatus() const { return served() ? SyncStatusOf(informer_) : Status::OK(); }

api::PodGroupPtr PodGroupListers::PodGroupNamed(std::string_view ns, std::string_view name) const {
  if (!served()) return nullptr;
  std::string key(ns);
  key += '/';
  key += name;
  return informer_.Get(key);
}

bool ServesPodGroups(client::ApiClient& client, const DiscoveryRetry& retry) {
  return ServesGroupVersion(client, "scheduling.x-k8s.io", "scheduling.x-k8s.io/v1alpha1",
                            "Coscheduling finds no PodGroup, and pods labelled scheduling.x-k8s.io/pod-group are "
                            "turned away at Permit (\"PodGroup not found\")",
                            retry);
}

}  // namespace ksched::informers
