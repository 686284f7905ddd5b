// The storage objects the volume plugins read (upstream: the PVC, PV, StorageClass,
// CSINode and CSIDriver informers of the shared informer factory), each watched
// cluster-wide and kept reduced to pkg/api/storage.h's fields. Lookups answer from the
// informers' stores; PersistentVolumes are also indexed by storage class, which is how
// VolumeBinding looks for a claim's candidates (upstream's PV cache index by class).
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "informers/informer.h"
#include "pkg/api/storage.h"
#include "pkg/util/mutex.h"

namespace ksched::informers {

// PersistentVolumes by storage class, then name; kept by the volume informer's handler.
class VolumeClassIndex final : public EventHandler<api::PersistentVolume> {
 public:
  void OnAdd(const api::PersistentVolumePtr& pv) override EXCLUDES(mu_);
  void OnUpdate(const api::PersistentVolumePtr& old_pv, const api::PersistentVolumePtr& new_pv) override
      EXCLUDES(mu_);
  void OnDelete(const Deleted<api::PersistentVolume>& deleted) override EXCLUDES(mu_);
  // Sorted by name.
  std::vector<api::PersistentVolumePtr> OfClass(std::string_view class_name) const EXCLUDES(mu_);

 private:
  // Drops `pv` from its class's entry, and the entry once empty.
  void EraseLocked(const api::PersistentVolume& pv) REQUIRES(mu_);

  mutable Mutex mu_;
  std::map<std::string, std::map<std::string, api::PersistentVolumePtr, std::less<>>, std::less<>> by_class_
      GUARDED_BY(mu_);
};

class StorageListers {
 public:
  explicit StorageListers(client::ApiClient& client, const InformerOptions& options = {});
  StorageListers(const StorageListers&) = delete;
  StorageListers& operator=(const StorageListers&) = delete;

  // Handlers (the scheduler's, which turn these changes into cluster events) must be
  // added before Start().
  ClaimInformer& claims() { return claims_; }
  VolumeInformer& volumes() { return volumes_; }
  StorageClassInformer& classes() { return classes_; }
  CSINodeInformer& csi_nodes() { return csi_nodes_; }
  CSIDriverInformer& csi_drivers() { return csi_drivers_; }

  void Start();
  void Stop();
  bool HasSynced() const;
  bool WaitForSync(std::chrono::milliseconds timeout) const;
  // OK once synced; otherwise the first informer that is not, and why (SyncStatusOf).
  Status SyncStatus() const;

  api::PersistentVolumeClaimPtr Claim(std::string_view ns, std::string_view name) const;
  api::PersistentVolumePtr Volume(std::string_view name) const { return volumes_.Get(std::string(name)); }
  std::vector<api::PersistentVolumePtr> VolumesOfClass(std::string_view class_name) const {
    return by_class_.OfClass(class_name);
  }
  api::StorageClassPtr StorageClassNamed(std::string_view name) const { return classes_.Get(std::string(name)); }
  api::CSINodePtr CSINodeNamed(std::string_view name) const { return csi_nodes_.Get(std::string(name)); }
  api::CSIDriverPtr CSIDriverNamed(std::string_view name) const { return csi_drivers_.Get(std::string(name)); }

 private:
  VolumeClassIndex by_class_;  // before the informers, whose threads feed it
  ClaimInformer claims_;
  VolumeInformer volumes_;
  StorageClassInformer classes_;
  CSINodeInformer csi_nodes_;
  CSIDriverInformer csi_drivers_;
};

}  // namespace ksched::informers
