#include "pkg/api/storage.h"

namespace ksched::api {

std::string_view PersistentVolumeClaim::StorageClass() const {
  if (const std::string* beta = annotations.Get(kAnnBetaStorageClass)) return *beta;
  return storage_class_name ? std::string_view(*storage_class_name) : std::string_view();
}

std::string ClaimName(const Pod& pod, const Volume& volume) {
  if (!volume.pvc_claim_name.empty()) return volume.pvc_claim_name;
  if (volume.ephemeral) return pod.metadata.name + "-" + volume.name;
  return {};
}

bool ClaimIsForPod(const Pod& pod, const PersistentVolumeClaim& claim) {
  for (const OwnerReference& o : claim.owner_references) {
    if (o.controller) return o.uid == pod.metadata.uid;
  }
  return false;
}

const CSINodeDriver* CSINode::FindDriver(std::string_view name) const {
  for (const CSINodeDriver& d : drivers) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

}  // namespace ksched::api
