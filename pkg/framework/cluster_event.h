// Cluster events: what changed in the cluster, as seen by the scheduling queue. Plugins
// register the events that may make a pod they rejected schedulable (EnqueueExtensions);
// the queue moves a pod out of unschedulablePods only on an event registered by one of
// the plugins that rejected it, optionally filtered by the plugin's queueing hint.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "pkg/api/types.h"
#include "pkg/util/status.h"

namespace ksched::framework {

// The kind of object an event is about (upstream GVK).
enum class EventResource : uint8_t {
  kPod,
  kNode,
  kPersistentVolume,
  kPersistentVolumeClaim,
  kStorageClass,
  kCSINode,
  kCSIDriver,
  kCSIStorageCapacity,
  kService,
  kResourceClaim,  // resource.k8s.io
  kResourceSlice,
  kDeviceClass,
  kPodGroup,  // scheduling.x-k8s.io (Coscheduling)
  kWildCard,  // matches every resource
};

// "Pod", "Node", "PersistentVolume", "storage.k8s.io/StorageClass", ..., "*".
std::string_view ResourceName(EventResource resource);

// A bitmask: a registered event matches an incoming one when the masks intersect.
using ActionType = uint32_t;
inline constexpr ActionType kAdd = 1 << 0;
inline constexpr ActionType kDelete = 1 << 1;
// The UpdateNode* kinds apply to Node events only; use kUpdate elsewhere.
inline constexpr ActionType kUpdateNodeAllocatable = 1 << 2;
inline constexpr ActionType kUpdateNodeLabel = 1 << 3;
inline constexpr ActionType kUpdateNodeTaint = 1 << 4;
inline constexpr ActionType kUpdateNodeCondition = 1 << 5;
inline constexpr ActionType kAll = (1 << 6) - 1;
inline constexpr ActionType kUpdate =
    kUpdateNodeAllocatable | kUpdateNodeLabel | kUpdateNodeTaint | kUpdateNodeCondition;

struct ClusterEvent {
  EventResource resource = EventResource::kWildCard;
  ActionType action_type = kAll;
  // Metric label and log name of an incoming event ("NodeAdd"); empty in registrations.
  // Must point to static storage (the named events below), since the queue keeps events.
  std::string_view label;

  // WildCard resource with All actions: "anything may have changed" (timeouts, forced
  // activation); such an event requeues every pod regardless of registrations.
  bool IsWildCard() const { return resource == EventResource::kWildCard && action_type == kAll; }
  // True if this (registered) event covers `incoming`: this one is the wildcard, or the
  // resources agree (or this one is any-resource) and the action masks intersect.
  bool Match(const ClusterEvent& incoming) const {
    return IsWildCard() || ((resource == EventResource::kWildCard || resource == incoming.resource) &&
                            (action_type & incoming.action_type) != 0);
  }
  // Registrations are compared by resource and actions only.
  bool SameRegistration(const ClusterEvent& o) const {
    return resource == o.resource && action_type == o.action_type;
  }
};

// A registration for people: "Node/Add|UpdateNodeAllocatable", "Pod/Delete", "Pod/All",
// "*" for the wildcard.
std::string RegistrationName(const ClusterEvent& event);

// The named events emitted by the scheduler's event handlers and the queue itself.
inline constexpr ClusterEvent kNodeAdd{EventResource::kNode, kAdd, "NodeAdd"};
inline constexpr ClusterEvent kNodeDelete{EventResource::kNode, kDelete, "NodeDelete"};
inline constexpr ClusterEvent kAssignedPodAdd{EventResource::kPod, kAdd, "AssignedPodAdd"};
inline constexpr ClusterEvent kAssignedPodUpdate{EventResource::kPod, kUpdate, "AssignedPodUpdate"};
inline constexpr ClusterEvent kAssignedPodDelete{EventResource::kPod, kDelete, "AssignedPodDelete"};
// An update of a pod still waiting in the queue (its own spec changed).
inline constexpr ClusterEvent kUnscheduledPodUpdate{EventResource::kPod, kUpdate, "PodUpdate"};
inline constexpr ClusterEvent kNodeSpecUnschedulableChange{EventResource::kNode, kUpdateNodeTaint,
                                                           "NodeSpecUnschedulableChange"};
inline constexpr ClusterEvent kNodeAllocatableChange{EventResource::kNode, kUpdateNodeAllocatable,
                                                     "NodeAllocatableChange"};
inline constexpr ClusterEvent kNodeLabelChange{EventResource::kNode, kUpdateNodeLabel, "NodeLabelChange"};
inline constexpr ClusterEvent kNodeTaintChange{EventResource::kNode, kUpdateNodeTaint, "NodeTaintChange"};
inline constexpr ClusterEvent kNodeConditionChange{EventResource::kNode, kUpdateNodeCondition,
                                                   "NodeConditionChange"};
inline constexpr ClusterEvent kPvAdd{EventResource::kPersistentVolume, kAdd, "PvAdd"};
inline constexpr ClusterEvent kPvUpdate{EventResource::kPersistentVolume, kUpdate, "PvUpdate"};
inline constexpr ClusterEvent kPvcAdd{EventResource::kPersistentVolumeClaim, kAdd, "PvcAdd"};
inline constexpr ClusterEvent kPvcUpdate{EventResource::kPersistentVolumeClaim, kUpdate, "PvcUpdate"};
inline constexpr ClusterEvent kStorageClassAdd{EventResource::kStorageClass, kAdd, "StorageClassAdd"};
inline constexpr ClusterEvent kStorageClassUpdate{EventResource::kStorageClass, kUpdate,
                                                  "StorageClassUpdate"};
inline constexpr ClusterEvent kCSINodeAdd{EventResource::kCSINode, kAdd, "CSINodeAdd"};
inline constexpr ClusterEvent kCSINodeUpdate{EventResource::kCSINode, kUpdate, "CSINodeUpdate"};
inline constexpr ClusterEvent kCSIDriverAdd{EventResource::kCSIDriver, kAdd, "CSIDriverAdd"};
inline constexpr ClusterEvent kCSIDriverUpdate{EventResource::kCSIDriver, kUpdate, "CSIDriverUpdate"};
inline constexpr ClusterEvent kCSIStorageCapacityAdd{EventResource::kCSIStorageCapacity, kAdd,
                                                     "CSIStorageCapacityAdd"};
inline constexpr ClusterEvent kCSIStorageCapacityUpdate{EventResource::kCSIStorageCapacity, kUpdate,
                                                        "CSIStorageCapacityUpdate"};
inline constexpr ClusterEvent kServiceAdd{EventResource::kService, kAdd, "ServiceAdd"};
inline constexpr ClusterEvent kServiceUpdate{EventResource::kService, kUpdate, "ServiceUpdate"};
inline constexpr ClusterEvent kServiceDelete{EventResource::kService, kDelete, "ServiceDelete"};
inline constexpr ClusterEvent kResourceClaimAdd{EventResource::kResourceClaim, kAdd, "ResourceClaimAdd"};
inline constexpr ClusterEvent kResourceClaimUpdate{EventResource::kResourceClaim, kUpdate, "ResourceClaimUpdate"};
inline constexpr ClusterEvent kResourceSliceAdd{EventResource::kResourceSlice, kAdd, "ResourceSliceAdd"};
inline constexpr ClusterEvent kResourceSliceUpdate{EventResource::kResourceSlice, kUpdate, "ResourceSliceUpdate"};
inline constexpr ClusterEvent kDeviceClassAdd{EventResource::kDeviceClass, kAdd, "DeviceClassAdd"};
inline constexpr ClusterEvent kDeviceClassUpdate{EventResource::kDeviceClass, kUpdate, "DeviceClassUpdate"};
inline constexpr ClusterEvent kPodGroupAdd{EventResource::kPodGroup, kAdd, "PodGroupAdd"};
inline constexpr ClusterEvent kPodGroupUpdate{EventResource::kPodGroup, kUpdate, "PodGroupUpdate"};
inline constexpr ClusterEvent kWildCardEvent{EventResource::kWildCard, kAll, "WildCardEvent"};
inline constexpr ClusterEvent kUnschedulableTimeout{EventResource::kWildCard, kAll, "UnschedulableTimeout"};
inline constexpr ClusterEvent kForceActivate{EventResource::kWildCard, kAll, "ForceActivate"};

// The events a plugin that does not implement EnqueueExtensions is assumed to care about.
inline constexpr ClusterEvent kAllClusterEvents[] = {
    {EventResource::kPod, kAll, ""},          {EventResource::kNode, kAll, ""},
    {EventResource::kCSINode, kAll, ""},      {EventResource::kPersistentVolume, kAll, ""},
    {EventResource::kPersistentVolumeClaim, kAll, ""}, {EventResource::kStorageClass, kAll, ""},
};

enum class QueueingHint : uint8_t {
  kQueue,  // the event may make the pod schedulable: requeue it
  kSkip,   // the event cannot help this pod: leave it where it is
};

// Decides whether an event may make `pod` (rejected by the registering plugin)
// schedulable. The objects' type is fixed by the event's resource (kPod: api::Pod,
// kNode: api::Node, ...); old_obj is null for Add, new_obj null for Delete. Type-erased
// so the interface does not need every resource type (PV, StorageClass, ...) to exist
// up front; use ObjectAs<T>() to read them. An error is treated as kQueue, so a broken
// hint can only cost a retry, never strand a pod. Runs under the queue's lock: keep it
// cheap and never call back into the queue.
using QueueingHintFn =
    std::function<StatusOr<QueueingHint>(const api::Pod& pod, const void* old_obj, const void* new_obj)>;

template <typename T>
const T* ObjectAs(const void* obj) {
  return static_cast<const T*>(obj);
}

struct ClusterEventWithHint {
  ClusterEvent event;
  QueueingHintFn hint_fn;  // empty: always kQueue
};

}  // namespace ksched::framework
