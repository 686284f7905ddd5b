// DynamicResources: a pod's ResourceClaims (resource.k8s.io/v1, structured parameters)
// must be allocated, or allocatable, on the node (upstream
// pkg/scheduler/framework/plugins/dynamicresources as of 1.35, with the allocator of
// allocator.h).
//
//   PreEnqueue  the pod's claims exist (a template's claim through
//               status.resourceClaimStatuses), are not being deleted and, when made from
//               a template, belong to the pod; otherwise it waits for a claim or pod event.
//   PreFilter   sorts the claims: allocated ones (their allocation's node selector is
//               checked per node) and the ones to allocate, for which it prepares an
//               allocator over the slices, classes and devices in use.
//   Filter      per node: allocated claims reachable, and the rest allocatable (the
//               allocation found is kept for Reserve); filterTimeout bounds the search.
//   PostFilter  when no node fits because an allocated claim is out of reach and nobody
//               else uses it: deallocates it, so the next attempt can allocate anew.
//   Score       (with firstAvailable) prefers nodes where earlier alternatives fit.
//   Reserve     marks the chosen allocations in flight: their devices are taken for
//               every other pod from then on. Unreserve forgets them and takes the pod out
//               of reservedFor where PreBind had put it.
//   PreBind     writes each claim: the finalizer, then status.allocation and the pod in
//               status.reservedFor (a conflict is retried on a fresh read, as upstream's
//               RetryOnConflict); the written claim is assumed until the informer has it.
//
// On a server without resource.k8s.io/v1 (api::ClusterLister::ServesDynamicResources)
// a pod with claims is rejected at PreFilter, never bound without an allocation.
//
// Every "unschedulable" this plugin returns is UnschedulableAndUnresolvable, as
// upstream's statusUnschedulable; broken claims or classes (a selector that fails, a
// missing class name) are errors that abort the attempt.
#pragma once

#include <array>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "config/types.h"
#include "pkg/api/resource.h"
#include "pkg/api/selector.h"
#include "pkg/cel/device_selector.h"
#include "pkg/framework/interface.h"
#include "pkg/framework/plugins/dynamicresources/allocator.h"
#include "pkg/framework/plugins/dynamicresources/claim_tracker.h"
#include "pkg/framework/plugins/dynamicresources/pools.h"
#include "pkg/util/mutex.h"

namespace ksched::framework::plugins::dynamicresources {

inline constexpr std::string_view kStateKey = "DynamicResources";
// metadata.finalizers entry that keeps an allocated claim from vanishing under its pod
// (upstream resourceapi.Finalizer).
inline constexpr std::string_view kClaimFinalizer = "resource.kubernetes.io/delete-protection";

// Per feasible node: the solution Filter found there (materialized for the chosen node
// only, by Reserve). In shards by node name, so that parallel Filter calls seldom wait
// for each other.
class NodeSolutions {
 public:
  void Put(const std::string& node, Solution solution);
  // fn(solution) under the shard's lock when there is one for `node`; false otherwise.
  template <typename Fn>
  bool With(std::string_view node, Fn&& fn) const {
    const Shard& shard = ShardOf(node);
    MutexLock lock(shard.mu);
    auto it = shard.map.find(std::string(node));
    if (it == shard.map.end()) return false;
    fn(it->second);
    return true;
  }

 private:
  struct Shard {
    mutable Mutex mu;
    std::unordered_map<std::string, Solution> map GUARDED_BY(mu);
  };
  const Shard& ShardOf(std::string_view node) const { return shards_[std::hash<std::string_view>{}(node) % kShards]; }
  Shard& ShardOf(std::string_view node) { return shards_[std::hash<std::string_view>{}(node) % kShards]; }
  static constexpr size_t kShards = 16;
  std::array<Shard, kShards> shards_;
};

// The pod's claims as resolved for this cycle. Shared by clones (preemption's what-if
// copies), as upstream's stateData, whose Clone returns itself.
struct ClaimsState {
  std::vector<api::ResourceClaimPtr> claims;  // in pod spec order
  // Per claim: the allocation's node selector, for claims already allocated.
  std::vector<std::optional<api::NodeSelectorMatcher>> available_on;
  // The claims to allocate (indices into `claims`) and the allocator for them.
  std::vector<size_t> to_allocate;
  std::shared_ptr<const Allocator> allocator;
  // Per claim: the allocation Reserve chose (for PreBind).
  std::vector<std::optional<api::AllocationResult>> chosen;

  mutable Mutex mu;
  std::set<size_t> unavailable GUARDED_BY(mu);  // allocated claims out of reach of some node
  NodeSolutions node_solutions;
};

struct CycleStateData final : StateData {
  std::unique_ptr<StateData> Clone() const override { return std::make_unique<CycleStateData>(*this); }
  std::shared_ptr<ClaimsState> state;  // null: the pod has no claims
};

class DynamicResources final : public PreEnqueuePlugin,
                               public PreFilterPlugin,
                               public FilterPlugin,
                               public PostFilterPlugin,
                               public ScorePlugin,
                               public ReservePlugin,
                               public PreBindPlugin,
                               public EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "DynamicResources";
  // `args`: DynamicResourcesArgs (already validated) or monostate for the defaults.
  static StatusOr<std::unique_ptr<Plugin>> New(const config::PluginArgs& args, Handle& handle);
  DynamicResources(Handle& handle, const config::DynamicResourcesArgs& args);

  std::string_view Name() const override { return kName; }

  Status PreEnqueue(const api::Pod& pod) override;
  Status PreFilter(CycleState& state, const api::Pod& pod, PreFilterResult& result) override;
  Status Filter(const CycleState& state, const api::Pod& pod, const cache::NodeInfo& node) const override;
  Status PostFilter(CycleState& state, const api::Pod& pod, const NodeToStatusMap& filtered,
                    PostFilterResult& result) override;
  Status Score(const CycleState& state, const api::Pod& pod, const cache::NodeInfo& node,
               int64_t& score) const override;
  bool HasNormalizeScore() const override { return true; }
  Status NormalizeScore(const CycleState& state, const api::Pod& pod, std::span<NodeScore> scores) const override;
  Status Reserve(CycleState& state, const api::Pod& pod, std::string_view node_name) override;
  void Unreserve(CycleState& state, const api::Pod& pod, std::string_view node_name) override;
  Status PreBindPreFlight(const CycleState& state, const api::Pod& pod, std::string_view node_name) const override;
  Status PreBind(CycleState& state, const api::Pod& pod, std::string_view node_name) override;

  // Node adds and label changes; claim adds and updates, the pod's own updates (the
  // controller recording a template's claim), DeviceClass and ResourceSlice adds and
  // updates.
  std::vector<ClusterEventWithHint> EventsToRegister() const override;

  ClaimTracker& tracker() { return tracker_; }

 private:
  // upstream foreachPodResourceClaim: the pod's claims in spec order (entries whose
  // template made no claim are skipped), or why the pod cannot be scheduled yet.
  StatusOr<std::vector<api::ResourceClaimPtr>> PodClaims(const api::Pod& pod) const;
  // The slice index for the lister's current slices, rebuilt when they change.
  std::shared_ptr<const SliceIndex> Slices() const EXCLUDES(slices_mu_);
  // upstream bindClaim: the finalizer, the allocation and the reservation, retried on
  // conflicts. Returns the claim as written.
  StatusOr<api::ResourceClaimPtr> BindClaim(const ClaimsState& s, size_t index, const api::Pod& pod);
  QueueingHint AfterClaimChange(const api::Pod& pod, const api::ResourceClaim* old_claim,
                                const api::ResourceClaim& new_claim) const;
  QueueingHint AfterPodChange(const api::Pod& pod, const api::Pod& modified) const;

  Handle& handle_;
  config::Duration filter_timeout_;  // 0: no limit
  mutable ClaimTracker tracker_;
  mutable cel::SelectorCache selectors_;
  mutable Mutex slices_mu_;
  mutable std::shared_ptr<const api::ResourceSliceList> indexed_list_ GUARDED_BY(slices_mu_);
  mutable std::shared_ptr<const SliceIndex> slice_index_ GUARDED_BY(slices_mu_);
};

}  // namespace ksched::framework::plugins::dynamicresources
