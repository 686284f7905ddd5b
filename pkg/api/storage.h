// The storage objects the volume plugins read (VolumeBinding, VolumeRestrictions,
// NodeVolumeLimits, VolumeZone): PersistentVolumeClaims, PersistentVolumes,
// StorageClasses, CSINodes and CSIDrivers, each reduced to the fields those plugins and
// the volume-binding writes use. As with the workload objects (workloads.h), the
// decoders keep nothing else: a PV's status message, a claim's conditions or a
// StorageClass's parameters never reach the scheduler's memory.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/api/quantity.h"
#include "pkg/api/types.h"
#include "pkg/api/workloads.h"

namespace ksched::api {

// Annotations of the volume-binding protocol between the scheduler and the PV
// controller (upstream pkg/controller/volume/persistentvolume/util). The decoders keep
// these and no other annotation of claims and volumes.
inline constexpr std::string_view kAnnSelectedNode = "volume.kubernetes.io/selected-node";
inline constexpr std::string_view kAnnBindCompleted = "pv.kubernetes.io/bind-completed";
inline constexpr std::string_view kAnnBoundByController = "pv.kubernetes.io/bound-by-controller";
inline constexpr std::string_view kAnnStorageProvisioner = "volume.kubernetes.io/storage-provisioner";
inline constexpr std::string_view kAnnBetaStorageProvisioner = "volume.beta.kubernetes.io/storage-provisioner";
// The storage class of a claim or volume before spec.storageClassName existed; it wins
// over the field when present (upstream storagehelpers.GetPersistentVolumeClaimClass).
inline constexpr std::string_view kAnnBetaStorageClass = "volume.beta.kubernetes.io/storage-class";
// CSINode: the in-tree plugins whose volumes the node's CSI drivers serve (CSI migration).
inline constexpr std::string_view kAnnMigratedPlugins = "storage.alpha.kubernetes.io/migrated-plugins";

// Access modes, as their API names.
inline constexpr std::string_view kReadWriteOnce = "ReadWriteOnce";
inline constexpr std::string_view kReadOnlyMany = "ReadOnlyMany";
inline constexpr std::string_view kReadWriteMany = "ReadWriteMany";
inline constexpr std::string_view kReadWriteOncePod = "ReadWriteOncePod";

inline constexpr std::string_view kVolumeBindingImmediate = "Immediate";
inline constexpr std::string_view kVolumeBindingWaitForFirstConsumer = "WaitForFirstConsumer";

// Phases (status.phase) of claims and volumes.
inline constexpr std::string_view kClaimPending = "Pending";
inline constexpr std::string_view kClaimBound = "Bound";
inline constexpr std::string_view kClaimLost = "Lost";
inline constexpr std::string_view kVolumeAvailable = "Available";
inline constexpr std::string_view kVolumeBound = "Bound";
inline constexpr std::string_view kVolumeReleased = "Released";
inline constexpr std::string_view kVolumeFailed = "Failed";

// A v1 PersistentVolumeClaim.
struct PersistentVolumeClaim {
  LeanObjectMeta metadata;  // name, namespace, uid, resourceVersion (no labels)
  StringMap annotations;    // only the kAnn* keys above
  bool being_deleted = false;  // metadata.deletionTimestamp is set
  // metadata.ownerReferences: a generic ephemeral volume's claim is owned by its pod.
  std::vector<OwnerReference> owner_references;
  std::vector<std::string> access_modes;  // spec.accessModes
  std::optional<LabelSelector> selector;  // spec.selector
  std::optional<Quantity> storage_request;  // spec.resources.requests.storage
  std::string volume_name;                  // spec.volumeName
  std::optional<std::string> storage_class_name;  // spec.storageClassName (nullopt: absent)
  std::string volume_mode;  // spec.volumeMode; "" when absent (Filesystem)
  std::string phase;        // status.phase

  const std::string& Name() const { return metadata.name; }
  const std::string& Namespace() const { return metadata.namespace_; }
  // "namespace/name" (ClaimKey).
  std::string Key() const;
  // The claim's storage class: the beta annotation when present, else
  // spec.storageClassName, else "" (upstream storagehelpers.GetPersistentVolumeClaimClass).
  std::string_view StorageClass() const;
  bool operator==(const PersistentVolumeClaim&) const = default;
};

// spec.claimRef of a PersistentVolume.
struct ClaimReference {
  std::string namespace_, name, uid;
  bool operator==(const ClaimReference&) const = default;
};

// A v1 PersistentVolume.
struct PersistentVolume {
  LeanObjectMeta metadata;  // name, uid, resourceVersion, labels (zone labels for VolumeZone)
  StringMap annotations;    // only the kAnn* keys above
  bool being_deleted = false;
  std::optional<Quantity> capacity;  // spec.capacity.storage
  std::vector<std::string> access_modes;
  std::string storage_class_name;  // the beta annotation when present, else spec.storageClassName
  std::string volume_mode;         // spec.volumeMode; "" when absent (Filesystem)
  std::optional<ClaimReference> claim_ref;
  // spec.nodeAffinity.required.nodeSelectorTerms; nullopt when there is no required
  // node affinity (the volume is reachable from every node).
  std::optional<std::vector<NodeSelectorTerm>> node_affinity;
  VolumeSource source;
  std::string phase;  // status.phase

  const std::string& Name() const { return metadata.name; }
  bool operator==(const PersistentVolume&) const = default;
};

// One term of a StorageClass's allowedTopologies: every requirement must hold.
struct TopologySelectorRequirement {
  std::string key;
  std::vector<std::string> values;
  bool operator==(const TopologySelectorRequirement&) const = default;
};
using TopologySelectorTerm = std::vector<TopologySelectorRequirement>;

// A storage.k8s.io/v1 StorageClass.
struct StorageClass {
  LeanObjectMeta metadata;
  std::string provisioner;
  // volumeBindingMode; "" when absent (the API server defaults it to Immediate).
  std::string volume_binding_mode;
  std::vector<TopologySelectorTerm> allowed_topologies;

  const std::string& Name() const { return metadata.name; }
  bool WaitForFirstConsumer() const { return volume_binding_mode == kVolumeBindingWaitForFirstConsumer; }
  bool operator==(const StorageClass&) const = default;
};

// One driver of a storage.k8s.io/v1 CSINode.
struct CSINodeDriver {
  std::string name;
  std::string node_id;
  std::optional<int32_t> allocatable_count;  // allocatable.count: the attach limit
  std::vector<std::string> topology_keys;
  bool operator==(const CSINodeDriver&) const = default;
};

struct CSINode {
  LeanObjectMeta metadata;  // named after its node
  StringMap annotations;    // only kAnnMigratedPlugins
  std::vector<CSINodeDriver> drivers;

  const std::string& Name() const { return metadata.name; }
  const CSINodeDriver* FindDriver(std::string_view name) const;
  bool operator==(const CSINode&) const = default;
};

// A storage.k8s.io/v1 CSIDriver.
struct CSIDriver {
  LeanObjectMeta metadata;
  bool attach_required = true;  // spec.attachRequired (defaults to true)

  const std::string& Name() const { return metadata.name; }
  bool operator==(const CSIDriver&) const = default;
};

// "namespace/name": a claim's key in listers and caches, and its name in messages.
std::string ClaimKey(std::string_view ns, std::string_view name);

// The claim a pod volume uses: persistentVolumeClaim.claimName, or for a generic
// ephemeral volume "<pod name>-<volume name>" (upstream ephemeral.VolumeClaimName); ""
// for volumes of other kinds.
std::string ClaimName(const Pod& pod, const Volume& volume);

// Whether `claim` may serve `pod`'s generic ephemeral volume: the pod must be its
// controlling owner (upstream ephemeral.VolumeIsForPod). When it is not, the claim
// belongs to someone else and the pod cannot start.
bool ClaimIsForPod(const Pod& pod, const PersistentVolumeClaim& claim);
// Upstream's error for a claim that fails ClaimIsForPod: "PVC ns/c was not created for
// pod ns/p (pod is not owner)".
std::string NotOwnedClaimMessage(const Pod& pod, const PersistentVolumeClaim& claim);

// Whether `pod` uses `claim` through a persistentVolumeClaim volume or, with
// `ephemeral_too`, also through a generic ephemeral volume (the queueing hints of the
// volume plugins: each plugin looks at the volumes upstream's does).
bool PodUsesClaim(const Pod& pod, const PersistentVolumeClaim& claim, bool ephemeral_too);

using PersistentVolumeClaimPtr = std::shared_ptr<const PersistentVolumeClaim>;
using PersistentVolumePtr = std::shared_ptr<const PersistentVolume>;
using StorageClassPtr = std::shared_ptr<const StorageClass>;
using CSINodePtr = std::shared_ptr<const CSINode>;
using CSIDriverPtr = std::shared_ptr<const CSIDriver>;

}  // namespace ksched::api
