// The cluster's ResourceSlices indexed for the allocator: which pools a node reaches
// (upstream structured GatherPools), and a memo of selector results per device.
//
// Upstream gathers pools from every slice on each Filter call. Here the slices are
// indexed once per change of the slice set: node-local slices by node name, the others
// (all nodes, node selectors, per-device node selection) in one list with their node
// selectors parsed once, and the pools a node object reaches cached until the slice set
// or the node changes. Selector results depend only on the device and the selectors, so
// the index also keeps, per combination of class and request selectors, whether each
// device matched: with a CEL selector per request, most Filter calls then evaluate no
// CEL at all.
#pragma once

#include <atomic>
#include <map>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pkg/api/resource.h"
#include "pkg/api/selector.h"
#include "pkg/api/types.h"
#include "pkg/util/mutex.h"
#include "pkg/util/status.h"
#include "pkg/util/thread_annotations.h"

namespace ksched::framework::plugins::dynamicresources {

// One pool as reachable from one node (upstream structured Pool).
struct Pool {
  std::string_view driver, name;
  // The slices of the pool's newest generation that reach the node (slices with shared
  // counters reach every node), in the order the index was given them.
  std::vector<const api::ResourceSlice*> slices;
  // Per entry of `slices`: the slot of its first device in the slice index (devices
  // are numbered slice by slice), so a candidate's slot costs an addition.
  std::vector<uint32_t> bases;
  // The pool's other slices of that generation: their devices are not allocated here,
  // but those in use consume the pool's shared counters.
  std::vector<const api::ResourceSlice*> other_slices;
  // Fewer slices of the newest generation than spec.pool.resourceSliceCount: the
  // driver is publishing, and "all devices" cannot be decided.
  bool incomplete = false;
  // Device names repeat within the pool, a counter set name repeats, or a device
  // consumes a counter set or counter the pool does not have.
  bool invalid = false;
  std::string invalid_reason;
  std::string Id() const { return std::string(driver) + "/" + std::string(name); }
};

// Whether each device matched one selector combination: 0 unknown, 1 yes, 2 no.
// Evaluation errors are not remembered (they are reported each time).
class SelectionMemo {
 public:
  explicit SelectionMemo(size_t num_devices) : results_(num_devices) {}
  std::optional<bool> Get(uint32_t device) const {
    uint8_t v = results_[device].load(std::memory_order_relaxed);
    if (v == 0) return std::nullopt;
    return v == 1;
  }
  void Set(uint32_t device, bool matches) {
    results_[device].store(matches ? 1 : 2, std::memory_order_relaxed);
  }

 private:
  std::vector<std::atomic<uint8_t>> results_;
};

class SliceIndex {
 public:
  explicit SliceIndex(std::vector<api::ResourceSlicePtr> slices);
  SliceIndex(const SliceIndex&) = delete;
  SliceIndex& operator=(const SliceIndex&) = delete;

  // The pools `node` reaches, sorted by driver then pool name. An error for a slice
  // whose node selector does not parse (upstream: "failed to perform node selection
  // for slice ...").
  StatusOr<std::shared_ptr<const std::vector<Pool>>> PoolsFor(const api::NodePtr& node) const EXCLUDES(mu_);

  // The memo slot of device `i` of `slice` (a slice of this index).
  uint32_t MemoSlot(const api::ResourceSlice* slice, size_t i) const;
  // The driver, pool and name of the device in `slot`, built once per index.
  const api::DeviceId& Id(uint32_t slot) const { return ids_[slot]; }
  // The slot of a device; nullopt when no slice of the index has it.
  std::optional<uint32_t> SlotOf(const api::DeviceId& id) const {
    auto it = slot_of_.find(id);
    return it == slot_of_.end() ? std::nullopt : std::optional<uint32_t>(it->second);
  }
  uint32_t num_devices() const { return num_devices_; }
  // The memo of one selector combination, created on first use; null once kMaxMemos
  // combinations have one (the index is rebuilt, memos and all, when slices change).
  std::shared_ptr<SelectionMemo> Memo(const std::string& key) const EXCLUDES(mu_);
  static constexpr size_t kMaxMemos = 1024;

  const std::vector<api::ResourceSlicePtr>& slices() const { return slices_; }
  // Whether `node` is reachable for a device of a slice with perDeviceNodeSelection.
  static bool DeviceReaches(const api::Device& device, const api::Node& node);

 private:
  struct Cached {
    api::NodePtr node;  // keeps the pointer compared against alive
    std::shared_ptr<const std::vector<Pool>> pools;
  };
  StatusOr<std::shared_ptr<const std::vector<Pool>>> Gather(const api::Node& node) const;
  // Marks `pool` invalid (with the reason) when its slices contradict each other.
  static void Validate(Pool& pool);

  std::vector<api::ResourceSlicePtr> slices_;
  std::unordered_map<std::string, std::vector<size_t>> node_local_;  // node name -> slice indices
  std::vector<size_t> others_;
  // (driver, pool name) -> every slice of the pool, for pools not all of whose slices
  // reach a node (upstream checkSlicesInPool).
  std::map<std::pair<std::string_view, std::string_view>, std::vector<size_t>> by_pool_;
  // Parsed spec.nodeSelector per slice index (nullopt without one, or when it did not parse).
  std::vector<std::optional<api::NodeSelectorMatcher>> node_selectors_;
  std::unordered_map<const api::ResourceSlice*, uint32_t> memo_base_;
  uint32_t num_devices_ = 0;
  std::vector<api::DeviceId> ids_;  // by slot
  std::unordered_map<api::DeviceId, uint32_t, api::DeviceIdHash> slot_of_;

  mutable SharedMutex mu_;
  mutable std::unordered_map<std::string, Cached> by_node_ GUARDED_BY(mu_);
  mutable std::unordered_map<std::string, std::shared_ptr<SelectionMemo>> memos_ GUARDED_BY(mu_);
};

}  // namespace ksched::framework::plugins::dynamicresources
