// ClaimTracker: the scheduler's view of ResourceClaims beyond the informer (upstream
// DefaultDRAManager's claim tracker: the claim assume cache, the in-flight allocations
// and the allocated-devices set).
//
//   - In flight: an allocation chosen by Reserve and not yet written by PreBind. Its
//     devices count as taken for every other pod, and another pod sharing the claim
//     waits ("in the process of being allocated").
//   - Assumed: the claim as PreBind's write returned it, laid over the informer's copy
//     until the informer holds a newer resourceVersion (or the claim is gone), as
//     VolumeBinding's assume cache does for volumes.
//   - In use: a device named by an informer claim's allocation (the lister's index), an
//     assumed claim's or an in-flight one's. Results with admin access take nothing.
//
// Thread-safe: PreFilter, Filter and Reserve run on the scheduling thread and its
// workers, PreBind and Unreserve on binding workers.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <unordered_map>

#include "pkg/api/cluster_lister.h"
#include "pkg/api/resource.h"
#include "pkg/framework/plugins/dynamicresources/allocator.h"
#include "pkg/util/mutex.h"
#include "pkg/util/thread_annotations.h"

namespace ksched::framework::plugins::dynamicresources {

class ClaimTracker final : public DevicesInUse {
 public:
  explicit ClaimTracker(const api::ClusterLister& lister) : lister_(lister) {}

  // The newest version known: the assumed one while the informer has not overtaken it.
  api::ResourceClaimPtr Get(std::string_view ns, std::string_view name) const EXCLUDES(mu_);

  bool HasPendingAllocation(const std::string& uid) const EXCLUDES(mu_);
  // Reserve: `claim` (with its chosen allocation) is in flight.
  void SignalPendingAllocation(api::ResourceClaimPtr claim) EXCLUDES(mu_);
  // PreBind's end or Unreserve: no longer in flight. False when it was not.
  bool RemovePendingAllocation(const std::string& uid) EXCLUDES(mu_);

  // After a successful write: the server's answer is the claim's newest version.
  void AssumeAfterApiCall(api::ResourceClaimPtr claim) EXCLUDES(mu_);
  // Back to the informer's version.
  void Restore(std::string_view ns, std::string_view name) EXCLUDES(mu_);
  // Drops assumed claims the informer has caught up with (or that are gone).
  void Prune() EXCLUDES(mu_);

  bool Contains(const api::DeviceId& id) const override EXCLUDES(mu_);

  // The devices in use counted per slot of `index` (informer allocations as of now,
  // pending and assumed ones kept current from then on); rebuilt when the index or the
  // lister's allocated set changed since the last call.
  std::shared_ptr<const SlotUse> UseIndex(const std::shared_ptr<const SliceIndex>& index) EXCLUDES(mu_);

  // For tests.
  size_t NumPending() const EXCLUDES(mu_);
  size_t NumAssumed() const EXCLUDES(mu_);
  // Distinct devices the pending and assumed claims take.
  size_t NumDevicesInUse() const EXCLUDES(mu_);

 private:
  void CountLocked(const api::ResourceClaim& claim, int delta) REQUIRES(mu_);

  const api::ClusterLister& lister_;
  mutable SharedMutex mu_;
  std::unordered_map<std::string, api::ResourceClaimPtr> pending_ GUARDED_BY(mu_);  // by uid
  std::map<std::string, api::ResourceClaimPtr, std::less<>> assumed_ GUARDED_BY(mu_);  // "ns/name"
  std::unordered_map<api::DeviceId, int, api::DeviceIdHash> in_use_ GUARDED_BY(mu_);  // pending + assumed
  std::shared_ptr<SlotUse> slots_ GUARDED_BY(mu_);
};

}  // namespace ksched::framework::plugins::dynamicresources
