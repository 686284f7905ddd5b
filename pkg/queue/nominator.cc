#include "pkg/queue/nominator.h"

#include <algorithm>

namespace ksched::queue {

std::string Nominator::IdOf(const api::Pod& pod) {
  return pod.metadata.uid.empty() ? pod.Key() : pod.metadata.uid;
}

void Nominator::AddNominatedPod(const api::PodPtr& pod, const NominatingInfo& info) {
  WriterMutexLock lock(mu_);
  AddLocked(pod, info);
}

void Nominator::AddLocked(const api::PodPtr& pod, const NominatingInfo& info) {
  std::string id = IdOf(*pod);
  // Never more than one entry per pod.
  DeleteLocked(id);
  const std::string& node = info.mode == NominatingInfo::Mode::kOverride
                                ? info.node_name
                                : pod->status.nominated_node_name;
  if (node.empty()) return;
  node_of_[id] = node;
  by_node_[node].push_back(pod);
  count_.store(node_of_.size(), std::memory_order_release);
}

void Nominator::DeleteLocked(const std::string& id) {
  auto it = node_of_.find(id);
  if (it == node_of_.end()) return;
  auto bucket = by_node_.find(it->second);
  if (bucket != by_node_.end()) {
    auto& pods = bucket->second;
    pods.erase(std::remove_if(pods.begin(), pods.end(), [&](const api::PodPtr& p) { return IdOf(*p) == id; }),
               pods.end());
    if (pods.empty()) by_node_.erase(bucket);
  }
  node_of_.erase(it);
  count_.store(node_of_.size(), std::memory_order_release);
}

void Nominator::DeleteNominatedPodIfExists(const api::Pod& pod) {
  WriterMutexLock lock(mu_);
  DeleteLocked(IdOf(pod));
}

void Nominator::UpdateNominatedPod(const api::Pod& old_pod, const api::PodPtr& new_pod) {
  WriterMutexLock lock(mu_);
  NominatingInfo info;
  // Only when neither version names a node do we keep the in-memory nomination: the
  // update may predate our own write of nominatedNodeName. Any explicit change wins.
  if (old_pod.status.nominated_node_name.empty() && new_pod->status.nominated_node_name.empty()) {
    auto it = node_of_.find(IdOf(old_pod));
    if (it != node_of_.end()) info = {NominatingInfo::Mode::kOverride, it->second};
  }
  DeleteLocked(IdOf(old_pod));
  AddLocked(new_pod, info);
}

std::vector<api::PodPtr> Nominator::NominatedPodsForNode(std::string_view node) const {
  ReaderMutexLock lock(mu_);
  auto it = by_node_.find(node);
  if (it == by_node_.end()) return {};
  return it->second;
}

std::string Nominator::NominatedNodeFor(const api::Pod& pod) const {
  ReaderMutexLock lock(mu_);
  auto it = node_of_.find(IdOf(pod));
  return it == node_of_.end() ? std::string() : it->second;
}

size_t Nominator::size() const {
  ReaderMutexLock lock(mu_);
  return node_of_.size();
}

}  // namespace ksched::queue
