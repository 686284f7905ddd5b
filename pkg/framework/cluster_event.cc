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
    case EventResource::kResourceClaim:
      return "resource.k8s.io/ResourceClaim";
    case EventResource::kResourceSlice:
      return "resource.k8s.io/ResourceSlice";
    case EventResource::kDeviceClass:
      return "resource.k8s.io/DeviceClass";
    case EventResource::kPodGroup:
      return "podgroups.v1alpha1.scheduling.x-k8s.io";
    case EventResource::kWildCard:
      return "*";
  }
  return "Unknown";
}

std::string RegistrationName(const ClusterEvent& event) {
  if (event.IsWildCard()) return "*";
  std::string name(ResourceName(event.resource));
  name += '/';
  if ((event.action_type & kAll) == kAll) return name + "All";
  static constexpr std::pair<ActionType, std::string_view> kActions[] = {
      {kAdd, "Add"},
      {kDelete, "Delete"},
      {kUpdateNodeAllocatable, "UpdateNodeAllocatable"},
      {kUpdateNodeLabel, "UpdateNodeLabel"},
      {kUpdateNodeTaint, "UpdateNodeTaint"},
      {kUpdateNodeCondition, "UpdateNodeCondition"},
  };
  ActionType rest = event.action_type;
  bool first = true;
  auto append = [&](std::string_view action) {
    if (!first) name += '|';
    name += action;
    first = false;
  };
  // All four update kinds together are just "Update" (how non-Node resources register).
  if ((rest & kUpdate) == kUpdate) {
    if (rest & kAdd) append("Add");
    if (rest & kDelete) append("Delete");
    append("Update");
    return name;
  }
  for (const auto& [bit, action] : kActions) {
    if (rest & bit) append(action);
  }
  return name;
}

}  // namespace ksched::framework
