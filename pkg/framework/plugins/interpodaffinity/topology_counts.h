// (topologyKey, topologyValue) -> count, the shape of upstream interpodaffinity's
// topologyToMatchedTermCount and scoreMap. Grouped by key: a pod's terms name one or two
// topology keys, so a node is checked with one label lookup per key and one probe.
//
// PreFilter adds a pair per matching pod (thousands per cycle in a cluster of
// anti-affine replicas), so each key's values live in an open-addressing table of
// string_views into storage this object owns (a deque never moves its strings, and short
// values sit in the strings' inline buffers): no allocation per pair, no node per entry.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/api/types.h"

namespace ksched::framework::plugins::interpodaffinity {

class TopologyCounts {
 public:
  TopologyCounts() = default;
  // Copies re-intern the values into their own storage (preemption clones states and
  // mutates the clones on several threads at once).
  TopologyCounts(const TopologyCounts& other);
  TopologyCounts& operator=(const TopologyCounts& other);
  TopologyCounts(TopologyCounts&&) noexcept = default;
  TopologyCounts& operator=(TopologyCounts&&) noexcept = default;

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
  struct Slot {
    std::string_view value;  // empty data() pointer: never used
    int64_t count = 0;
    bool present = false;  // the pair exists (upstream: is a key of the map)
  };
  // One topology key's values: linear probing over a power-of-two table.
  struct Bucket {
    std::string key;
    std::vector<Slot> slots;
    size_t used = 0;  // slots with a value (present or not)
    size_t present = 0;
    const Slot* Find(std::string_view value) const;
  };
  Bucket* FindBucket(std::string_view key);
  const Bucket* FindBucket(std::string_view key) const;
  // The slot for `value`, interned and inserted (absent) if new.
  Slot& Insert(Bucket& bucket, std::string_view value);
  void CopyFrom(const TopologyCounts& other);

  std::vector<Bucket> buckets_;
  size_t pairs_ = 0;
  std::unique_ptr<std::deque<std::string>> storage_ = std::make_unique<std::deque<std::string>>();
};

}  // namespace ksched::framework::plugins::interpodaffinity
