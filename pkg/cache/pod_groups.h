// PodGroupIndex: a snapshot's pods grouped by everything pod-affinity matching reads of a
// pod (its namespace, its labels and the decoded affinity it carries), with each group's
// count of pods per (topology key, value) kept up to date as the snapshot changes.
//
// Upstream InterPodAffinity walks every node and matches every pod on it in each PreFilter
// (interpodaffinity/filtering.go getIncomingAffinityAntiAffinityCounts,
// getExistingAntiAffinityCounts) and PreScore (scoring.go). The replicas of a workload all
// look the same to a selector, so with this index the plugin matches a term once per group
// and reads the group's counts, instead of touching every node and pod: the per-cycle cost
// follows the number of workloads, not of nodes. The counts are exactly what the walk would
// sum.
//
// A topology key is counted from the first cycle that asks for it (Track), then kept up to
// date on every change. Not synchronised beyond Track: like the rest of a snapshot it is
// updated by its owner (the scheduling thread) between cycles.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pkg/api/pod_affinity.h"
#include "pkg/api/types.h"
#include "pkg/util/mutex.h"
#include "pkg/util/string_index.h"

namespace ksched::cache {

class NodeInfo;
struct PodEntry;
using NodeInfoPtr = std::shared_ptr<const NodeInfo>;

// value -> number of pods, for one topology key, plus the pods on nodes without the key.
// A value whose count fell back to zero stays interned but reads as absent.
class TopologyValueCounts {
 public:
  void Add(std::string_view value, int64_t delta);
  void AddWithoutKey(int64_t delta) { without_key_ += delta; }
  // Pods on nodes that lack the key (PodTopologySpread counts them in the "" domain).
  int64_t without_key() const { return without_key_; }
  // 0 for an absent value.
  int64_t Get(std::string_view value) const {
    const int32_t i = values_.Find(value);
    return i == StringIndex::kNone ? 0 : counts_[static_cast<size_t>(i)];
  }
  bool empty() const { return non_zero_ == 0; }
  // Calls f(value, count) for every value with a non-zero count.
  template <typename F>
  void ForEach(F&& f) const {
    for (size_t i = 0; i < counts_.size(); ++i) {
      if (counts_[i] != 0) f(values_.at(static_cast<int32_t>(i)), counts_[i]);
    }
  }

 private:
  StringIndex values_;
  std::vector<int64_t> counts_;  // counts_[i] belongs to values_.at(i)
  size_t non_zero_ = 0;
  int64_t without_key_ = 0;
};

// The pods of a snapshot that share namespace, labels, affinity and whether they are
// being deleted.
struct PodGroup {
  // A member (the first counted; it may have left since): its namespace, labels and
  // deletion timestamp are what selectors (and PodTopologySpread's skipping of
  // terminating pods) look at, and they are every member's.
  api::PodPtr pod;
  // The members' parsed pod (anti-)affinity terms, equal for all of them (they depend on
  // nothing else); null when they have none.
  std::shared_ptr<const api::PodAffinityTerms> terms;
  int64_t members = 0;

  // The members counted under the topology key of `slot` (PodGroupIndex::Track).
  const TopologyValueCounts& Counts(size_t slot) const { return *counts[slot]; }

  // ---- kept by the index ----
  const api::Affinity* affinity = nullptr;  // the decoded instance the members share
  uint64_t hash = 0;
  size_t all_index = 0;
  size_t affinity_index = 0;
  // Per tracked key; held by pointer, so tracking another key never moves the counts a
  // cycle holds.
  std::vector<std::unique_ptr<TopologyValueCounts>> counts;
};

class PodGroupIndex {
 public:
  PodGroupIndex() = default;
  PodGroupIndex(const PodGroupIndex&) = delete;
  PodGroupIndex& operator=(const PodGroupIndex&) = delete;

  // Every group, and those whose pods have pod affinity or anti-affinity terms.
  std::span<PodGroup* const> groups() const { return all_; }
  std::span<PodGroup* const> groups_with_affinity() const { return with_affinity_; }

  // A node's NodeInfo changed from `old_info` to `new_info`; either may be null (a node
  // added to or dropped from the snapshot). Pods are matched by object: an updated pod is
  // a removal and an addition. A node without its Node object counts nothing.
  void Replace(const NodeInfo* old_info, const NodeInfo* new_info);
  // Forgets every pod; the tracked keys stay tracked.
  void Clear();

  // Which index this is (unique in the process) and how many times its nodes' labels
  // changed (a node added, dropped or relabelled): together they tell a plugin when
  // something it derived from the nodes' labels alone must be derived again.
  uint64_t id() const { return id_; }
  uint64_t labels_version() const { return labels_version_; }

  // The slot of `key`'s counts in every group. A key no one asked for before is counted
  // first over `nodes`, which must be the NodeInfos the index holds.
  size_t Track(std::string_view key, std::span<const NodeInfoPtr> nodes);
  size_t num_tracked_keys() const { return keys_.size(); }

  // The group of `pod`, an object on one of the index's nodes; null for any other pod.
  // A plugin that decided something for every group (a selector matched once per group)
  // reads a node's pods through it instead of matching each one.
  const PodGroup* GroupOf(const api::Pod* pod) const {
    auto it = group_of_.find(pod);
    return it == group_of_.end() ? nullptr : it->second;
  }

 private:
  // The group of this pod, or null.
  PodGroup* Find(const api::Pod& pod, uint64_t hash) const;
  PodGroup& FindOrAdd(const PodEntry& entry, uint64_t hash);
  void Erase(PodGroup& group);
  // Counts one pod of a node with these labels in its group, `delta` = +1 or -1.
  void Count(const PodEntry& entry, const api::StringMap& node_labels, int64_t delta);

  std::unordered_multimap<uint64_t, std::unique_ptr<PodGroup>> by_hash_;
  std::vector<PodGroup*> all_;
  std::vector<PodGroup*> with_affinity_;
  std::vector<std::string> keys_;  // tracked topology keys, by slot
  // Every counted pod object's group. A pod object counted twice (on two nodes at once)
  // loses its entry when either count is taken back: GroupOf then answers null, never a
  // group the pod has left.
  std::unordered_map<const api::Pod*, PodGroup*> group_of_;
  const uint64_t id_ = NextId();
  uint64_t labels_version_ = 0;
  static uint64_t NextId();
  // Track runs from a plugin through the (const) snapshot; Replace from the snapshot's owner.
  Mutex mu_;
  // Scratch for Replace's diff, kept to avoid an allocation per changed node.
  std::vector<const void*> old_pods_, new_pods_;
};

}  // namespace ksched::cache
