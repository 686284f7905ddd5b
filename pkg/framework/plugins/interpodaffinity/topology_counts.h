// (topologyKey, topologyValue) -> count, the shape of upstream interpodaffinity's
// topologyToMatchedTermCount and scoreMap. Grouped by key: a pod's terms name one or two
// topology keys, so a node is checked with one label lookup per key and one probe.
// Pairs added one by one are interned per key in a StringIndex with the counts in a
// parallel array: no allocation per pair.
//
// PreFilter mostly adds whole groups of pods at once: the counts a snapshot keeps per pod
// group (cache/pod_groups.h) are referred to, not copied (AddShared). The first Add after
// that folds them in, so a what-if change (AddPod / RemovePod) never touches the snapshot.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/api/types.h"
#include "pkg/cache/pod_groups.h"
#include "pkg/util/string_index.h"

namespace ksched::framework::plugins::interpodaffinity {

class TopologyCounts {
 public:
  // Adds `delta` to the pair. With erase_zero (the filter counts), a pair that drops to
  // zero no longer exists, as upstream deletes it; scores keep zero entries (upstream
  // scoreMap).
  void Add(std::string_view key, std::string_view value, int64_t delta, bool erase_zero = true);
  // Reads `counts` as if each of its pairs were added `multiplier` (> 0) times under `key`.
  // `key` and `counts` must outlive this map and its copies (a cycle's state: the
  // snapshot's groups and the pod's terms do). Empty counts are ignored.
  void AddShared(std::string_view key, const cache::TopologyValueCounts& counts, int64_t multiplier = 1);
  // 0 for an absent pair.
  int64_t Get(std::string_view key, std::string_view value) const;
  // The number of pairs (upstream len(topologyToMatchedTermCount)).
  size_t size() const;
  bool empty() const { return pairs_ == 0 && shared_.empty(); }
  // The number of keys with any pair (upstream len(scoreMap)).
  size_t num_keys() const;

  // Whether some label (k, v) of `labels` has a positive count (upstream
  // satisfyExistingPodsAntiAffinity's walk over the node's labels).
  bool AnyPositive(const api::StringMap& labels) const;
  // Sum over keys of the count at the node's value for that key (upstream Score).
  int64_t Sum(const api::StringMap& labels) const;

  bool operator==(const TopologyCounts& other) const;

 private:
  struct Entry {
    int64_t count = 0;
    bool present = false;  // the pair exists (upstream: is a key of the map)
  };
  // One topology key's values: entries[i] belongs to values.at(i).
  struct Bucket {
    std::string key;
    StringIndex values;
    std::vector<Entry> entries;
    size_t present = 0;
    const Entry* Find(std::string_view value) const;
  };
  const Bucket* FindBucket(std::string_view key) const;
  struct Shared {
    std::string_view key;
    const cache::TopologyValueCounts* counts;
    int64_t multiplier;
  };
  // Adds the shared counts as pairs of this map and forgets them.
  void Fold();
  // This map with the shared counts folded in.
  TopologyCounts Folded() const;

  // Either the pairs or the shared counts are empty: AddShared folds into existing pairs
  // and Add folds the shared counts first, so every read looks at one or the other.
  std::vector<Bucket> buckets_;
  size_t pairs_ = 0;
  std::vector<Shared> shared_;
};

}  // namespace ksched::framework::plugins::interpodaffinity
