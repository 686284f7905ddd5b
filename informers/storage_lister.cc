#include "informers/storage_lister.h"

#include <algorithm>

namespace ksched::informers {

void VolumeClassIndex::OnAdd(const api::PersistentVolumePtr& pv) {
  MutexLock lock(mu_);
  by_class_[pv->storage_class_name][pv->metadata.name] = pv;
}

void VolumeClassIndex::OnUpdate(const api::PersistentVolumePtr& old_pv, const api::PersistentVolumePtr& new_pv) {
  MutexLock lock(mu_);
  if (old_pv->storage_class_name != new_pv->storage_class_name) EraseLocked(*old_pv);
  by_class_[new_pv->storage_class_name][new_pv->metadata.name] = new_pv;
}

void VolumeClassIndex::OnDelete(const Deleted<api::PersistentVolume>& deleted) {
  MutexLock lock(mu_);
  EraseLocked(*deleted.last_known);
}

void VolumeClassIndex::EraseLocked(const api::PersistentVolume& pv) {
  auto it = by_class_.find(pv.storage_class_name);
  if (it == by_class_.end()) return;
  it->second.erase(pv.metadata.name);
  if (it->second.empty()) by_class_.erase(it);  // no empty classes left behind
}

std::vector<api::PersistentVolumePtr> VolumeClassIndex::OfClass(std::string_view class_name) const {
  std::vector<api::PersistentVolumePtr> out;
  MutexLock lock(mu_);
  auto it = by_class_.find(class_name);
  if (it == by_class_.end()) return out;
  out.reserve(it->second.size());
  for (const auto& [name, pv] : it->second) out.push_back(pv);
  return out;
}

StorageListers::StorageListers(client::ApiClient& client, const InformerOptions& options)
    : claims_(client, "/api/v1/persistentvolumeclaims", options),
      volumes_(client, "/api/v1/persistentvolumes", options),
      classes_(client, "/apis/storage.k8s.io/v1/storageclasses", options),
      csi_nodes_(client, "/apis/storage.k8s.io/v1/csinodes", options),
      csi_drivers_(client, "/apis/storage.k8s.io/v1/csidrivers", options) {
  volumes_.AddHandler(&by_class_);
}

void StorageListers::Start() {
  claims_.Start();
  volumes_.Start();
  classes_.Start();
  csi_nodes_.Start();
  csi_drivers_.Start();
}

void StorageListers::Stop() {
  claims_.Stop();
  volumes_.Stop();
  classes_.Stop();
  csi_nodes_.Stop();
  csi_drivers_.Stop();
}

bool StorageListers::HasSynced() const {
  return claims_.HasSynced() && volumes_.HasSynced() && classes_.HasSynced() && csi_nodes_.HasSynced() &&
         csi_drivers_.HasSynced();
}

Status StorageListers::SyncStatus() const {
  for (Status s : {SyncStatusOf(claims_), SyncStatusOf(volumes_), SyncStatusOf(classes_), SyncStatusOf(csi_nodes_),
                   SyncStatusOf(csi_drivers_)}) {
    if (!s.ok()) return s;
  }
  return Status::OK();
}

bool StorageListers::WaitForSync(std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  return claims_.WaitForSync(TimeLeft(deadline)) && volumes_.WaitForSync(TimeLeft(deadline)) &&
         classes_.WaitForSync(TimeLeft(deadline)) && csi_nodes_.WaitForSync(TimeLeft(deadline)) &&
         csi_drivers_.WaitForSync(TimeLeft(deadline));
}

api::PersistentVolumeClaimPtr StorageListers::Claim(std::string_view ns, std::string_view name) const {
  return claims_.Get(api::ClaimKey(ns, name));
}

}  // namespace ksched::informers
