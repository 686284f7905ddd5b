#include "pkg/framework/plugins/dynamicresources/claim_tracker.h"

#include <vector>

#include "pkg/framework/plugins/volumebinding/assume_cache.h"

namespace ksched::framework::plugins::dynamicresources {
namespace {

std::string Key(std::string_view ns, std::string_view name) {
  std::string key(ns);
  key += '/';
  key += name;
  return key;
}

}  // namespace

void ClaimTracker::CountLocked(const api::ResourceClaim& claim, int delta) {
  if (!claim.allocation) return;
  for (const api::DeviceRequestAllocationResult& r : claim.allocation->results) {
    if (r.admin_access) continue;
    api::DeviceId id{r.driver, r.pool, r.device};
    int& n = in_use_[id];
    n += delta;
    if (slots_) {
      if (auto slot = slots_->index->SlotOf(id)) {
        if (delta > 0) slots_->counts[*slot].fetch_add(1, std::memory_order_relaxed);
        else slots_->counts[*slot].fetch_sub(1, std::memory_order_relaxed);
      }
    }
    if (n <= 0) in_use_.erase(id);
  }
}

std::shared_ptr<const SlotUse> ClaimTracker::UseIndex(const std::shared_ptr<const SliceIndex>& index) {
  const uint64_t lister_version = lister_.AllocatedDevicesVersion();
  WriterMutexLock lock(mu_);
  if (slots_ && slots_->index == index && slots_->lister_version == lister_version) return slots_;
  auto slots = std::make_shared<SlotUse>(index, lister_version);
  auto count = [&](const api::DeviceId& id, uint32_t n) {
    if (auto slot = index->SlotOf(id)) slots->counts[*slot].fetch_add(n, std::memory_order_relaxed);
  };
  lister_.ForEachAllocatedDevice([&](const api::DeviceId& id) { count(id, 1); });
  for (const auto& [id, n] : in_use_) count(id, static_cast<uint32_t>(n));
  slots_ = std::move(slots);
  return slots_;
}

api::ResourceClaimPtr ClaimTracker::Get(std::string_view ns, std::string_view name) const {
  api::ResourceClaimPtr informer = lister_.ResourceClaimNamed(ns, name);
  ReaderMutexLock lock(mu_);
  auto it = assumed_.find(Key(ns, name));
  if (it == assumed_.end() || !informer) return informer;
  // The informer's copy wins once it is newer than the one assumed (Prune drops it).
  if (informer->metadata.uid != it->second->metadata.uid ||
      volumebinding::ResourceVersionNewer(informer->metadata.resource_version, it->second->metadata.resource_version))
    return informer;
  return it->second;
}

bool ClaimTracker::HasPendingAllocation(const std::string& uid) const {
  ReaderMutexLock lock(mu_);
  return pending_.contains(uid);
}

void ClaimTracker::SignalPendingAllocation(api::ResourceClaimPtr claim) {
  WriterMutexLock lock(mu_);
  auto& slot = pending_[claim->metadata.uid];
  if (slot) CountLocked(*slot, -1);
  slot = std::move(claim);
  CountLocked(*slot, 1);
}

bool ClaimTracker::RemovePendingAllocation(const std::string& uid) {
  WriterMutexLock lock(mu_);
  auto it = pending_.find(uid);
  if (it == pending_.end()) return false;
  CountLocked(*it->second, -1);
  pending_.erase(it);
  return true;
}

void ClaimTracker::AssumeAfterApiCall(api::ResourceClaimPtr claim) {
  WriterMutexLock lock(mu_);
  auto& slot = assumed_[claim->Key()];
  if (slot) CountLocked(*slot, -1);
  slot = std::move(claim);
  CountLocked(*slot, 1);
}

void ClaimTracker::Restore(std::string_view ns, std::string_view name) {
  WriterMutexLock lock(mu_);
  auto it = assumed_.find(Key(ns, name));
  if (it == assumed_.end()) return;
  CountLocked(*it->second, -1);
  assumed_.erase(it);
}

void ClaimTracker::Prune() {
  std::vector<std::pair<std::string, api::ResourceClaimPtr>> assumed;
  {
    ReaderMutexLock lock(mu_);
    if (assumed_.empty()) return;
    assumed.assign(assumed_.begin(), assumed_.end());
  }
  std::vector<std::string> drop;
  for (const auto& [key, claim] : assumed) {
    api::ResourceClaimPtr informer = lister_.ResourceClaimNamed(claim->metadata.namespace_, claim->metadata.name);
    if (!informer || informer->metadata.uid != claim->metadata.uid ||
        !volumebinding::ResourceVersionNewer(claim->metadata.resource_version, informer->metadata.resource_version))
      drop.push_back(key);
  }
  if (drop.empty()) return;
  WriterMutexLock lock(mu_);
  for (const std::string& key : drop) {
    auto it = assumed_.find(key);
    if (it == assumed_.end()) continue;
    CountLocked(*it->second, -1);
    assumed_.erase(it);
  }
}

bool ClaimTracker::Contains(const api::DeviceId& id) const {
  {
    ReaderMutexLock lock(mu_);
    if (in_use_.contains(id)) return true;
  }
  return lister_.DeviceAllocated(id);
}

size_t ClaimTracker::NumPending() const {
  ReaderMutexLock lock(mu_);
  return pending_.size();
}

size_t ClaimTracker::NumDevicesInUse() const {
  ReaderMutexLock lock(mu_);
  return in_use_.size();
}

size_t ClaimTracker::NumAssumed() const {
  ReaderMutexLock lock(mu_);
  return assumed_.size();
}

}  // namespace ksched::framework::plugins::dynamicresources
