// The structured-parameters allocator (upstream k8s.io/dynamic-resource-allocation
// structured, the "stable" allocator with admin access, prioritized lists
// (firstAvailable), partitionable devices and device taints): for one pod's unallocated
// claims and one node, the first set of devices that satisfies every request, the
// class and request selectors, the claims' constraints and the pools' shared counters,
// or none.
//
// The search is upstream's: claims in the pod's order, requests in the claim's order,
// for each device a request needs the candidates in pool order (driver, then pool
// name) and slice order, backtracking on a dead end; the first full solution wins. A
// request with firstAvailable tries its subrequests in order. "All" takes every
// matching device of the pools the node reaches, and fails when one of them is being
// updated (incomplete) or invalid.
//
// Upstream evaluates a request's selectors against each candidate once per Allocate
// call; here the result is remembered across calls and pods in the slice index's memo
// (pools.h), keyed by class and selectors, so repeated Filter calls mostly compare
// nothing but in-use sets.
//
// Besides upstream's features this allocator also takes distinctAttribute constraints
// (every device of the constraint's requests has the attribute, each a different value,
// as upstream's incubating allocator). Not covered: consumable capacity (devices with
// allowMultipleAllocations are allocated whole, to one claim), binding conditions.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/api/resource.h"
#include "pkg/api/types.h"
#include "pkg/cel/device_selector.h"
#include "pkg/framework/plugins/dynamicresources/pools.h"
#include "pkg/util/status.h"

namespace ksched::framework::plugins::dynamicresources {

// Devices that other claims hold: allocated in a claim's status (as the informer or
// the assume cache has it) or chosen for a pod still in its binding cycle.
class DevicesInUse {
 public:
  virtual ~DevicesInUse() = default;
  virtual bool Contains(const api::DeviceId& id) const = 0;
};

// The devices in use, as counts per slot of one slice index: the allocator's in-use
// check as an array read instead of hash lookups. Kept current by whoever made it
// (ClaimTracker), so counts change while a search reads them; a search reads each
// slot once per candidate, as it would ask DevicesInUse.
struct SlotUse {
  SlotUse(std::shared_ptr<const SliceIndex> index, uint64_t lister_version)
      : index(std::move(index)), lister_version(lister_version), counts(this->index->num_devices()) {}
  bool InUse(uint32_t slot) const { return counts[slot].load(std::memory_order_relaxed) > 0; }

  const std::shared_ptr<const SliceIndex> index;
  const uint64_t lister_version;  // of the allocated set it was built from
  std::vector<std::atomic<uint32_t>> counts;
};

// What an allocation attempt needs besides the claims.
struct AllocatorInputs {
  std::shared_ptr<const SliceIndex> slices;
  const DevicesInUse* in_use = nullptr;
  // When it is over `slices`, the in-use check reads it rather than `in_use`.
  std::shared_ptr<const SlotUse> slot_use;
  // The DeviceClass of a name, or null when there is none.
  std::function<api::DeviceClassPtr(std::string_view)> classes;
  cel::SelectorCache* selectors = nullptr;
};

class Allocator;

// A device the search chose, by pointers into the slice index (which the allocator
// keeps alive).
struct ChosenDevice {
  const void* request = nullptr;  // the Allocator::RequestData it was chosen for
  const api::Device* device = nullptr;
  const api::ResourceSlice* slice = nullptr;
  const api::DeviceId* id = nullptr;
};

// A solution as the search leaves it: the devices per claim and, per request, the
// firstAvailable alternative taken. Cheap to keep for every feasible node; turned into
// AllocationResults (Allocator::Materialize) only for the node Reserve picks.
struct Solution {
  std::vector<std::vector<ChosenDevice>> devices;  // [claim]
  std::vector<std::vector<size_t>> selected;       // [claim][request]
};

// What Allocate hands back on success: the AllocationResults, only the solution, or
// only the verdict (Filter, which needs no more unless it scores).
enum class Want { kResults, kSolution, kVerdict };

// How an attempt on one node ended. On success `fits` is set, `solution` too unless
// only the verdict was wanted, and `results` (one allocation per claim) when results
// were; all are empty with an OK status when the claims do not fit on the node.
struct AllocateOutcome {
  bool fits = false;
  std::vector<api::AllocationResult> results;
  std::optional<Solution> solution;
  ksched::Status error;  // a broken claim or class, or a selector that fails to evaluate
  // upstream ErrFailedAllocationOnNode: nothing fit, and some pool the node reaches is
  // invalid; `error` says so, but the node only fails (the pod is not aborted).
  bool node_only = false;
  // The deadline passed before the search ended (upstream: filterTimeout).
  bool timed_out = false;
  bool ok() const { return error.ok(); }
  bool allocated() const { return error.ok() && fits; }
};

class Allocator {
 public:
  // Resolves the requests' classes and compiles the selectors once; problems are
  // reported by Allocate, node by node, as upstream reports them.
  Allocator(std::vector<api::ResourceClaimPtr> claims, AllocatorInputs inputs);

  // upstream Allocator.Allocate. Thread-safe: Filter calls it for many nodes at once.
  // `stop`, when set, aborts the search ("filter operation aborted"); past `deadline`
  // the search ends with timed_out.
  AllocateOutcome Allocate(const api::NodePtr& node, const std::atomic<bool>* stop = nullptr,
                           std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt,
                           Want want = Want::kResults) const;
  // The AllocationResults of a solution, one per claim (upstream builds them at the end
  // of Allocate): results, configuration and node selector.
  StatusOr<std::vector<api::AllocationResult>> Materialize(const Solution& solution) const;
  // upstream computeScore (1.35): per firstAvailable request, 8 for its first
  // alternative, 7 for the second, ...; 0 without firstAvailable requests.
  int64_t Score(const Solution& solution) const;
  // Why the claims do not fit on `node`, for explain: the first request that finds
  // fewer devices there than it needs that match its selectors and are available (not
  // allocated, not in flight, no untolerated taint): "claim ns/c, request gpu: 1 device
  // on the node matches its selectors, 0 available, 1 needed"; or that the requests fit
  // one by one but not together (constraints, or devices several requests want).
  std::string WhyNot(const api::NodePtr& node) const;
  bool has_first_available() const { return has_first_available_; }

  const std::vector<api::ResourceClaimPtr>& claims() const { return claims_; }

  // One request or subrequest as the search sees it.
  struct RequestData {
    const api::DeviceRequest* parent = nullptr;  // the request owning a subrequest
    const api::DeviceSubRequest* request = nullptr;
    std::string name;       // the request's name, or the subrequest's
    std::string full_name;  // "request" or "request/subrequest"
    api::DeviceClassPtr device_class;
    std::vector<std::shared_ptr<const cel::DeviceSelector>> class_selectors;
    std::vector<std::shared_ptr<const cel::DeviceSelector>> request_selectors;
    std::shared_ptr<SelectionMemo> memo;
    ksched::Status error;  // reported when the request is validated on a node
  };
  struct ClaimData {
    std::vector<std::vector<RequestData>> requests;  // per request: itself, or its subrequests
  };

 private:
  friend class Search;
  std::vector<api::ResourceClaimPtr> claims_;
  AllocatorInputs inputs_;
  std::vector<ClaimData> data_;
  bool has_first_available_ = false;

  StatusOr<api::AllocationResult> Result(size_t c, const std::vector<ChosenDevice>& devices,
                                         const std::vector<size_t>& selected) const;
};

}  // namespace ksched::framework::plugins::dynamicresources
