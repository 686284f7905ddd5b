#include "pkg/framework/cluster_event.h"

namespace ksched::framework {

std::string_view ResourceName(EventResource resource) {
  switch (resource) {
    case EventResource::kPod:
      return "Pod";
    case EventResource::kNode:
      return "Node";
    case EventResource::kPersistentVolume:
      return "PersistentVolume";
    case EventResource::kPersistentVolumeClaim:
      return "PersistentVolumeClaim";
    case EventResource::kStorageClass:
      return "storage.k8s.io/StorageClass";
    case EventResource::kCSINode:
      return "storage.k8s.io/CSINode";
    case EventResource::kCSIDriver:
      return "storage.k8s.io/CSIDriver";
    case EventResource::kCSIStorageCapacity:
      return "storage.k8s.io/CSIStorageCapacity";
    case EventResource::kService:
      return "Service";
    case EventResource::kWildCard:
      return "*";
  }
  return "Unknown";
}

}  // namespace ksched::framework
