#include "pkg/cache/pod_groups.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <utility>

#include "pkg/cache/node_info.h"

namespace ksched::cache {
namespace {

// What a group is keyed by: the namespace, the labels and, for a pod with pod
// (anti-)affinity terms, the decoded affinity instance (replicas share one, see
// pkg/api/shared.h); the terms are parsed from exactly these.
const api::Affinity* AffinityOf(const api::Pod& pod) {
  return api::HasPodAffinityTerms(pod) ? pod.spec.affinity.operator->() : nullptr;
}

uint64_t Mix(uint64_t h, uint64_t v) { return (h ^ v) * 0x100000001b3ULL + (h >> 29); }

uint64_t GroupHash(const api::Pod& pod) {
  const std::hash<std::string_view> hash;
  uint64_t h = Mix(pod.IsBeingDeleted() ? 1 : 0, hash(pod.metadata.namespace_));
  for (const auto& [k, v] : pod.metadata.labels) h = Mix(Mix(h, hash(k)), hash(v));
  return Mix(h, std::hash<const void*>{}(AffinityOf(pod)));
}

const api::StringMap* NodeLabels(const NodeInfo* info) {
  return info != nullptr && info->node() != nullptr ? &info->node()->metadata.labels : nullptr;
}

// The pods of a NodeInfo by object address, sorted, for a diff.
void SortedPods(const NodeInfo& info, std::vector<const void*>& out) {
  out.clear();
  for (const PodEntry& e : info.pods()) out.push_back(e.pod.get());
  std::sort(out.begin(), out.end());
}

}  // namespace

uint64_t PodGroupIndex::NextId() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

void TopologyValueCounts::Add(std::string_view value, int64_t delta) {
  const auto i = static_cast<size_t>(values_.Intern(value));
  if (i == counts_.size()) counts_.push_back(0);
  int64_t& c = counts_[i];
  const bool was_zero = c == 0;
  c += delta;
  if (was_zero && c != 0) ++non_zero_;
  if (!was_zero && c == 0) --non_zero_;
}

PodGroup* PodGroupIndex::Find(const api::Pod& pod, uint64_t hash) const {
  const api::Affinity* affinity = AffinityOf(pod);
  auto [begin, end] = by_hash_.equal_range(hash);
  for (auto it = begin; it != end; ++it) {
    PodGroup& g = *it->second;
    if (g.affinity == affinity && g.pod->IsBeingDeleted() == pod.IsBeingDeleted() &&
        g.pod->metadata.namespace_ == pod.metadata.namespace_ && g.pod->metadata.labels == pod.metadata.labels) {
      return &g;
    }
  }
  return nullptr;
}

PodGroup& PodGroupIndex::FindOrAdd(const PodEntry& entry, uint64_t hash) {
  const api::Pod& pod = *entry.pod;
  if (PodGroup* g = Find(pod, hash)) return *g;
  auto group = std::make_unique<PodGroup>();
  group->pod = entry.pod;
  group->affinity = AffinityOf(pod);
  // An entry built without the cache's parse (a what-if pod) is parsed here.
  group->terms = entry.affinity_terms != nullptr || group->affinity == nullptr ? entry.affinity_terms
                                                                              : api::ParsePodAffinityTerms(pod);
  group->hash = hash;
  for (size_t i = 0; i < keys_.size(); ++i) group->counts.push_back(std::make_unique<TopologyValueCounts>());
  group->all_index = all_.size();
  all_.push_back(group.get());
  if (group->terms != nullptr) {
    group->affinity_index = with_affinity_.size();
    with_affinity_.push_back(group.get());
  }
  return *by_hash_.emplace(hash, std::move(group))->second;
}

void PodGroupIndex::Erase(PodGroup& group) {
  const auto unlist = [](std::vector<PodGroup*>& list, size_t PodGroup::*index, PodGroup& g) {
    const size_t at = g.*index;
    list[at] = list.back();
    list[at]->*index = at;
    list.pop_back();
  };
  unlist(all_, &PodGroup::all_index, group);
  if (group.terms != nullptr) unlist(with_affinity_, &PodGroup::affinity_index, group);
  auto [begin, end] = by_hash_.equal_range(group.hash);
  for (auto it = begin; it != end; ++it) {
    if (it->second.get() == &group) {
      by_hash_.erase(it);
      return;
    }
  }
}

void PodGroupIndex::Count(const PodEntry& entry, const api::StringMap& node_labels, int64_t delta) {
  const uint64_t hash = GroupHash(*entry.pod);
  PodGroup* g = delta > 0 ? &FindOrAdd(entry, hash) : Find(*entry.pod, hash);
  if (delta > 0) group_of_[entry.pod.get()] = g;
  else group_of_.erase(entry.pod.get());
  if (g == nullptr) return;  // never counted: nothing to take back
  g->members += delta;
  for (size_t slot = 0; slot < keys_.size(); ++slot) {
    if (const std::string* v = node_labels.Get(keys_[slot])) g->counts[slot]->Add(*v, delta);
    else g->counts[slot]->AddWithoutKey(delta);
  }
  if (g->members <= 0) Erase(*g);
}

void PodGroupIndex::Replace(const NodeInfo* old_info, const NodeInfo* new_info) {
  MutexLock lock(mu_);
  const api::StringMap* old_labels = NodeLabels(old_info);
  const api::StringMap* new_labels = NodeLabels(new_info);
  const auto count_all = [&](const NodeInfo& info, const api::StringMap& labels, int64_t delta) {
    for (const PodEntry& e : info.pods()) Count(e, labels, delta);
  };
  if (old_labels == nullptr || new_labels == nullptr ||
      (old_info->node() != new_info->node() && !(*old_labels == *new_labels))) {
    // Added, dropped, or relabelled (every pod moves to other values): recount.
    ++labels_version_;
    if (old_labels != nullptr) count_all(*old_info, *old_labels, -1);
    if (new_labels != nullptr) count_all(*new_info, *new_labels, 1);
    return;
  }
  // The same labels: only the pods that came or went (usually one) change the counts.
  SortedPods(*old_info, old_pods_);
  SortedPods(*new_info, new_pods_);
  const auto absent = [](const std::vector<const void*>& sorted, const void* p) {
    return !std::binary_search(sorted.begin(), sorted.end(), p);
  };
  for (const PodEntry& e : old_info->pods()) {
    if (absent(new_pods_, e.pod.get())) Count(e, *old_labels, -1);
  }
  for (const PodEntry& e : new_info->pods()) {
    if (absent(old_pods_, e.pod.get())) Count(e, *new_labels, 1);
  }
}

void PodGroupIndex::Clear() {
  MutexLock lock(mu_);
  ++labels_version_;
  by_hash_.clear();
  group_of_.clear();
  all_.clear();
  with_affinity_.clear();
}

size_t PodGroupIndex::Track(std::string_view key, std::span<const NodeInfoPtr> nodes) {
  MutexLock lock(mu_);
  for (size_t slot = 0; slot < keys_.size(); ++slot) {
    if (keys_[slot] == key) return slot;
  }
  const size_t slot = keys_.size();
  keys_.emplace_back(key);
  for (PodGroup* g : all_) g->counts.push_back(std::make_unique<TopologyValueCounts>());
  for (const NodeInfoPtr& info : nodes) {
    const api::StringMap* labels = NodeLabels(info.get());
    if (labels == nullptr) continue;
    const std::string* v = labels->Get(key);
    for (const PodEntry& e : info->pods()) {
      PodGroup* g = Find(*e.pod, GroupHash(*e.pod));
      if (g == nullptr) continue;
      if (v != nullptr) g->counts[slot]->Add(*v, 1);
      else g->counts[slot]->AddWithoutKey(1);
    }
  }
  return slot;
}

}  // namespace ksched::cache
