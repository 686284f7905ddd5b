// The objects of dynamic resource allocation (resource.k8s.io/v1) that DynamicResources
// reads (upstream: the DeviceClass, ResourceSlice and ResourceClaim informers of the
// shared informer factory, started when the server serves the group). Besides lookups
// they keep two indexes fed by the informers' handlers:
//   - the slice set: every ResourceSlice as one immutable list with a version number,
//     replaced on any slice change, so the plugin indexes slices once per change rather
//     than once per pod;
//   - the allocated devices: how many claims' status.allocation name each device
//     (upstream allocateddevices.go keeps the same set from claim events).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "informers/informer.h"
#include "pkg/api/resource.h"
#include "pkg/util/mutex.h"
#include "pkg/util/thread_annotations.h"

namespace ksched::informers {

// Every ResourceSlice by name, with a snapshot list rebuilt lazily after a change.
class SliceSet final : public EventHandler<api::ResourceSlice> {
 public:
  void OnAdd(const api::ResourceSlicePtr& s) override EXCLUDES(mu_);
  void OnUpdate(const api::ResourceSlicePtr& old_s, const api::ResourceSlicePtr& new_s) override EXCLUDES(mu_);
  void OnDelete(const Deleted<api::ResourceSlice>& deleted) override EXCLUDES(mu_);
  std::shared_ptr<const api::ResourceSliceList> Snapshot() const EXCLUDES(mu_);

 private:
  mutable Mutex mu_;
  std::unordered_map<std::string, api::ResourceSlicePtr> by_name_ GUARDED_BY(mu_);
  uint64_t version_ GUARDED_BY(mu_) = 1;
  mutable std::shared_ptr<const api::ResourceSliceList> snapshot_ GUARDED_BY(mu_);
};

// Devices named by claims' status.allocation, counted per claim.
class AllocatedDeviceIndex final : public EventHandler<api::ResourceClaim> {
 public:
  void OnAdd(const api::ResourceClaimPtr& c) override EXCLUDES(mu_);
  void OnUpdate(const api::ResourceClaimPtr& old_c, const api::ResourceClaimPtr& new_c) override EXCLUDES(mu_);
  void OnDelete(const Deleted<api::ResourceClaim>& deleted) override EXCLUDES(mu_);
  bool Contains(const api::DeviceId& id) const EXCLUDES(mu_);
  uint64_t Version() const EXCLUDES(mu_);
  void ForEach(const std::function<void(const api::DeviceId&)>& fn) const EXCLUDES(mu_);

 private:
  void AddLocked(const api::ResourceClaim& c, int delta) REQUIRES(mu_);
  mutable SharedMutex mu_;
  std::unordered_map<api::DeviceId, int, api::DeviceIdHash> count_ GUARDED_BY(mu_);
  uint64_t version_ GUARDED_BY(mu_) = 0;
};

// Whether the server serves resource.k8s.io/v1 (GET /apis/resource.k8s.io): false on a
// NotFound or when the group has no v1 (a 1.31-1.33 server with only beta versions);
// other failures are retried as DisruptionBudgetPath retries them (cluster_lister.h).
struct DiscoveryRetry;
bool ServesResourceV1(client::ApiClient& client, const DiscoveryRetry& retry);
// Whether GET /apis/<group> lists `group_version` (e.g. "scheduling.x-k8s.io/v1alpha1"),
// with ServesResourceV1's answers and retries; `without` says what is missing when not
// (logged).
bool ServesGroupVersion(client::ApiClient& client, std::string_view group, std::string_view group_version,
                        std::string_view without, const DiscoveryRetry& retry);

class ResourceListers {
 public:
  ResourceListers(client::ApiClient& client, const InformerOptions& options = {});
  ResourceListers(const ResourceListers&) = delete;
  ResourceListers& operator=(const ResourceListers&) = delete;

  // Handlers (the scheduler's) must be added before Start().
  DeviceClassInformer& classes() { return classes_; }
  ResourceSliceInformer& slices() { return slices_; }
  ResourceClaimInformer& claims() { return claims_; }

  // Starts the informers when `served`; otherwise there is nothing to watch, and the
  // lookups stay empty.
  void Start(bool served);
  void Stop();
  bool served() const { return served_.load(std::memory_order_acquire); }
  bool HasSynced() const;
  bool WaitForSync(std::chrono::milliseconds timeout) const;
  Status SyncStatus() const;

  api::DeviceClassPtr DeviceClassNamed(std::string_view name) const { return classes_.Get(std::string(name)); }
  api::ResourceClaimPtr ResourceClaimNamed(std::string_view ns, std::string_view name) const;
  std::shared_ptr<const api::ResourceSliceList> ResourceSlices() const { return slice_set_.Snapshot(); }
  bool DeviceAllocated(const api::DeviceId& id) const { return allocated_.Contains(id); }
  uint64_t AllocatedDevicesVersion() const { return allocated_.Version(); }
  void ForEachAllocatedDevice(const std::function<void(const api::DeviceId&)>& fn) const { allocated_.ForEach(fn); }

 private:
  SliceSet slice_set_;  // before the informers, whose threads feed them
  AllocatedDeviceIndex allocated_;
  DeviceClassInformer classes_;
  ResourceSliceInformer slices_;
  ResourceClaimInformer claims_;
  std::atomic<bool> started_{false};
  std::atomic<bool> served_{false};
};

}  // namespace ksched::informers
