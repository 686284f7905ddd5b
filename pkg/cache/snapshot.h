// Snapshot: an immutable view of the cache taken at the start of a scheduling cycle
// (upstream internal/cache.Snapshot). The scheduling thread owns it; the cache updates
// it incrementally, copying only NodeInfos whose generation moved since the last update.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pkg/cache/node_info.h"
#include "pkg/cache/pod_groups.h"
#include "pkg/util/strings.h"

namespace ksched::cache {

class Snapshot {
 public:
  Snapshot() = default;
  // A standalone snapshot of these nodes and pods (tests, benchmarks, what-if runs).
  static Snapshot FromObjects(const std::vector<api::NodePtr>& nodes, const std::vector<api::PodPtr>& pods);

  // Nodes in the order filtering visits them: interleaved across zones, as upstream's
  // node tree does, so a partial scan (percentageOfNodesToScore) spreads over zones.
  std::span<const NodeInfoPtr> List() const { return list_; }
  std::span<const NodeInfoPtr> HavePodsWithAffinity() const { return with_affinity_; }
  std::span<const NodeInfoPtr> HavePodsWithRequiredAntiAffinity() const { return with_required_anti_affinity_; }
  const NodeInfo* Get(std::string_view node_name) const;
  // The snapshot's pods grouped for pod-affinity matching, with counts per topology
  // value (pod_groups.h).
  const PodGroupIndex& PodGroups() const { return *groups_; }
  // The slot of `key`'s counts in PodGroups(), counted from now on if no cycle asked
  // for it before (a walk over the snapshot's pods, once per key).
  size_t TrackTopologyKey(std::string_view key) const { return groups_->Track(key, list_); }
  size_t NumNodes() const { return list_.size(); }
  // The cache generation this snapshot reflects.
  int64_t generation() const { return generation_; }

 private:
  friend class CacheImpl;  // the cache updates snapshots in place

  static constexpr size_t kNotListed = static_cast<size_t>(-1);
  // Positions in the lists, so a changed node is replaced in place without a rebuild.
  struct Entry {
    NodeInfoPtr info;
    size_t list_index = 0;
    size_t affinity_index = kNotListed;
    size_t anti_affinity_index = kNotListed;
  };

  // Rebuilds with_affinity_ and with_required_anti_affinity_ from list_.
  void RebuildAffinityLists();
  // After entry.info changed: adds it to or removes it from the affinity lists when its
  // pods started or stopped having (anti-)affinity. O(1): a removal moves the last
  // element into the hole (the lists' order carries no meaning).
  void UpdateAffinityMembership(Entry& entry);
  void UpdateMembership(std::vector<NodeInfoPtr>& list, size_t Entry::*index, Entry& entry, bool member);
  // Points every list slot of this entry at `info` (same list membership assumed).
  void ReplaceInLists(Entry& entry, NodeInfoPtr info);
  // Sets entry.info, moving its pods' counts in the pod groups from the old NodeInfo.
  void SetInfo(Entry& entry, NodeInfoPtr info);
  // Copies `info` into entry.info's own object when nothing but this snapshot's lists
  // holds it, and says whether it did (else the caller replaces it with a new copy).
  // The copy reuses the object's vectors, and the node keeps its address: the NodeInfos
  // a Filter pass walks stay where the snapshot first put them, close together, instead
  // of scattering over the heap one update at a time.
  bool OverwriteInPlace(Entry& entry, const NodeInfo& info);

  // Transparent, so Get(string_view) needs no temporary string.
  std::unordered_map<std::string, Entry, StringViewHash, std::equal_to<>> by_name_;
  std::vector<NodeInfoPtr> list_;
  std::vector<NodeInfoPtr> with_affinity_;
  std::vector<NodeInfoPtr> with_required_anti_affinity_;
  // Kept in step with by_name_'s NodeInfos; behind a pointer so a snapshot stays movable.
  std::unique_ptr<PodGroupIndex> groups_ = std::make_unique<PodGroupIndex>();
  int64_t generation_ = 0;
  // The cache's node-tree version list_ was ordered from; a different version (nodes
  // added, removed or moved between zones) makes the next update rebuild list_.
  int64_t tree_version_ = 0;
};

}  // namespace ksched::cache
