#include "informers/resource_lister.h"

#include <algorithm>
#include <thread>

#include "informers/cluster_lister.h"
#include "pkg/api/json.h"
#include "pkg/util/log.h"

namespace ksched::informers {

void SliceSet::OnAdd(const api::ResourceSlicePtr& s) {
  MutexLock lock(mu_);
  by_name_[s->metadata.name] = s;
  ++version_;
  snapshot_.reset();
}

void SliceSet::OnUpdate(const api::ResourceSlicePtr& /*old_s*/, const api::ResourceSlicePtr& new_s) { OnAdd(new_s); }

void SliceSet::OnDelete(const Deleted<api::ResourceSlice>& deleted) {
  MutexLock lock(mu_);
  by_name_.erase(deleted.last_known->metadata.name);
  ++version_;
  snapshot_.reset();
}

std::shared_ptr<const api::ResourceSliceList> SliceSet::Snapshot() const {
  MutexLock lock(mu_);
  if (!snapshot_) {
    auto list = std::make_shared<api::ResourceSliceList>();
    list->version = version_;
    list->slices.reserve(by_name_.size());
    for (const auto& [name, s] : by_name_) list->slices.push_back(s);
    // By name, so the allocator sees slices in the same order on every run.
    std::sort(list->slices.begin(), list->slices.end(),
              [](const auto& a, const auto& b) { return a->metadata.name < b->metadata.name; });
    snapshot_ = std::move(list);
  }
  return snapshot_;
}

void AllocatedDeviceIndex::AddLocked(const api::ResourceClaim& c, int delta) {
  if (!c.allocation) return;
  ++version_;
  for (const api::DeviceRequestAllocationResult& r : c.allocation->results) {
    // Admin access does not take the device (upstream allocateddevices.go skips it).
    if (r.admin_access) continue;
    api::DeviceId id{r.driver, r.pool, r.device};
    int& n = count_[id];
    n += delta;
    if (n <= 0) count_.erase(id);
  }
}

void AllocatedDeviceIndex::OnAdd(const api::ResourceClaimPtr& c) {
  WriterMutexLock lock(mu_);
  AddLocked(*c, 1);
}

void AllocatedDeviceIndex::OnUpdate(const api::ResourceClaimPtr& old_c, const api::ResourceClaimPtr& new_c) {
  if (old_c->allocation == new_c->allocation) return;
  WriterMutexLock lock(mu_);
  AddLocked(*old_c, -1);
  AddLocked(*new_c, 1);
}

void AllocatedDeviceIndex::OnDelete(const Deleted<api::ResourceClaim>& deleted) {
  WriterMutexLock lock(mu_);
  AddLocked(*deleted.last_known, -1);
}

bool AllocatedDeviceIndex::Contains(const api::DeviceId& id) const {
  ReaderMutexLock lock(mu_);
  return count_.contains(id);
}

uint64_t AllocatedDeviceIndex::Version() const {
  ReaderMutexLock lock(mu_);
  return version_;
}

void AllocatedDeviceIndex::ForEach(const std::function<void(const api::DeviceId&)>& fn) const {
  ReaderMutexLock lock(mu_);
  for (const auto& [id, n] : count_) fn(id);
}

bool ServesGroupVersion(client::ApiClient& client, std::string_view group, std::string_view group_version,
                        std::string_view without, const DiscoveryRetry& retry) {
  const std::string path = "/apis/" + std::string(group);
  auto delay = retry.initial;
  for (int attempt = 1;; ++attempt) {
    auto response = client.Do({.path = path});
    if (!response.ok() && response.status().code() == StatusCode::kNotFound) {
      KLOG(INFO) << "the API server has no " << group << " API group: " << without;
      return false;
    }
    api::JsonParser parser;
    StatusOr<std::vector<std::string>> versions =
        response.ok() ? api::DecodeApiGroupVersions(parser, response->body) : response.status();
    if (response.ok() && !versions.ok()) {
      // An answer, but not an APIGroup: asking again would get the same.
      KLOG(WARNING) << "GET " << path << " answered with no API group (" << versions.status().message()
                    << "): " << without;
      return false;
    }
    if (versions.ok()) {
      if (std::find(versions->begin(), versions->end(), group_version) != versions->end()) return true;
      KLOG(WARNING) << "the API server does not serve " << group_version << ": " << without;
      return false;
    }
    Status failed = versions.status().WithContext("discovering the " + std::string(group) + " API group (GET " +
                                                  path + ")");
    if (retry.on_failure) retry.on_failure(failed);
    KLOG(WARNING) << failed.message() << "; attempt " << attempt << ", asking again in " << delay.count() << "ms";
    const bool go_on = retry.wait ? retry.wait(delay) : (std::this_thread::sleep_for(delay), true);
    if (!go_on) return false;
    delay = std::min(delay * 2, retry.max);
  }
}

bool ServesResourceV1(client::ApiClient& client, const DiscoveryRetry& retry) {
  return ServesGroupVersion(client, "resource.k8s.io", api::kResourceVersionV1,
                            "DynamicResources is inactive, and pods with ResourceClaims stay unschedulable", retry);
}

ResourceListers::ResourceListers(client::ApiClient& client, const InformerOptions& options)
    : classes_(client, "/apis/resource.k8s.io/v1/deviceclasses", options),
      slices_(client, "/apis/resource.k8s.io/v1/resourceslices", options),
      claims_(client, "/apis/resource.k8s.io/v1/resourceclaims", options) {
  slices_.AddHandler(&slice_set_);
  claims_.AddHandler(&allocated_);
}

void ResourceListers::Start(bool served) {
  served_.store(served, std::memory_order_release);
  if (served) {
    classes_.Start();
    slices_.Start();
    claims_.Start();
  }
  started_.store(true, std::memory_order_release);
}

void ResourceListers::Stop() {
  if (!served()) return;
  classes_.Stop();
  slices_.Stop();
  claims_.Stop();
}

bool ResourceListers::HasSynced() const {
  if (!started_.load(std::memory_order_acquire)) return false;
  return !served() || (classes_.HasSynced() && slices_.HasSynced() && claims_.HasSynced());
}

bool ResourceListers::WaitForSync(std::chrono::milliseconds timeout) const {
  if (!served()) return started_.load(std::memory_order_acquire);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  return classes_.WaitForSync(TimeLeft(deadline)) && slices_.WaitForSync(TimeLeft(deadline)) &&
         claims_.WaitForSync(TimeLeft(deadline));
}

Status ResourceListers::SyncStatus() const {
  if (!served()) return Status::OK();
  for (Status s : {SyncStatusOf(classes_), SyncStatusOf(slices_), SyncStatusOf(claims_)}) {
    if (!s.ok()) return s;
  }
  return Status::OK();
}

api::ResourceClaimPtr ResourceListers::ResourceClaimNamed(std::string_view ns, std::string_view name) const {
  std::string key(ns);
  key += '/';
  key += name;
  return claims_.Get(key);
}

}  // namespace ksched::informers
