#include "pkg/api/storage.h"

namespace ksched::api {

std::string_view PersistentVolumeClaim::StorageClass() const {
  if (const std::string* beta = annotations.Get(kAnnBetaStorageClass)) return *beta;
  return storage_class_name ? std::string_view(*storage_class_name) : std::string_view();
}

std::string PersistentVolumeClaim::Key() const { return ClaimKey(metadata.namespace_, metadata.name); }

std::string ClaimKey(std::string_view ns, std::string_view name) {
  std::string key;
  key.reserve(ns.size() + 1 + name.size());
  key.append(ns).append("/").append(name);
  return key;
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

std::string NotOwnedClaimMessage(const Pod& pod, const PersistentVolumeClaim& claim) {
  return "PVC " + claim.Key() + " was not created for pod " + pod.Key() + " (pod is not owner)";
}

bool PodUsesClaim(const Pod& pod, const PersistentVolumeClaim& claim, bool ephemeral_too) {
  if (claim.Namespace() != pod.metadata.namespace_) return false;
  for (const Volume& v : pod.spec.volumes) {
    if (!ephemeral_too && v.pvc_claim_name.empty()) continue;
    const std::string name = ClaimName(pod, v);
    if (!name.empty() && name == claim.Name()) return true;
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
