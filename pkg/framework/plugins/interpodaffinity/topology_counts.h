// (topologyKey, topologyValue) -> count, the shape of upstream interpodaffinity's
// topologyToMatchedTermCount and scoreMap. Grouped by key: a pod's terms name one or two
// topology keys, so a node is checked with one label lookup per key and one probe.
// PreFilter adds a pair per matching pod (thousands per cycle in a cluster of anti-affine
// replicas), so each key's values are interned in a StringIndex with the counts in a
// parallel array: no allocation per pair.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/api/types.h"
#include "pkg/util/string_index.h"

namespace ksched::framework::plugins::interpodaffinity {

class TopologyCounts {
 public:
  // Adds `delta` to the pair. With erase_zero (the filter counts), a pair that drops to
  // zero no longer exists, as upstream deletes it; scores keep zero entries (upstream
  // scoreMap).
  void Add(std::string_view key, std::string_view value, int64_t delta, bool erase_zero = true);
  // 0 for an absent pair.
  int64_t Get(std::string_view key, std::string_view value) const;
  // The number of pairs (upstream len(topologyToMatchedTermCount)).
  size_t size() const { return pairs_; }
  bool empty() const { return pairs_ == 0; }
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

  std::vector<Bucket> buckets_;
  size_t pairs_ = 0;
};

}  // namespace ksched::framework::plugins::interpodaffinity
