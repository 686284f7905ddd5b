// Lookups of cluster objects other than pods and nodes that plugins consult (upstream:
// the Namespace, Service, ReplicationController, ReplicaSet, StatefulSet, PDB and storage
// listers of the shared informer factory). The framework hands plugins one through
// Handle::Lister(); informers/cluster_lister.h implements it over informers that keep
// only the labels and selectors these lookups read.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/api/resource.h"
#include "pkg/api/selector.h"
#include "pkg/api/storage.h"
#include "pkg/api/types.h"
#include "pkg/api/workloads.h"

namespace ksched::api {

// A PodDisruptionBudget as preemption reads it (policy/v1 or policy/v1beta1): which pods
// it covers and how many of them may still be disrupted (upstream
// filterPodsWithPDBViolation in defaultpreemption reads nothing else).
struct DisruptionBudget {
  std::string namespace_;
  std::string name;
  // spec.selector, parsed. A budget whose selector is absent, empty or invalid covers no
  // pod (upstream skips `selector.Empty()`), and is not returned by the lister at all.
  LabelSelectorMatcher selector;
  int32_t disruptions_allowed = 0;  // status.disruptionsAllowed
  // status.disruptedPods' names: evictions the API server has already counted, which
  // preemption does not count again.
  std::set<std::string, std::less<>> disrupted_pods;
};
using DisruptionBudgetPtr = std::shared_ptr<const DisruptionBudget>;

class ClusterLister {
 public:
  virtual ~ClusterLister() = default;

  // The labels of namespace `name`; nullopt when the namespace is not known.
  virtual std::optional<StringMap> NamespaceLabels(std::string_view name) const = 0;
  // The names of the namespaces whose labels `selector` matches, sorted.
  virtual std::vector<std::string> NamespacesMatching(const LabelSelectorMatcher& selector) const = 0;
  // upstream helper.DefaultSelector (pkg/scheduler/framework/plugins/helper/spread.go):
  // the selectors of the Services and ReplicationControllers that select `pod` merged into
  // match_labels, and the requirements of the ReplicaSets and StatefulSets that select it
  // appended to match_expressions, all in the pod's namespace. An empty selector when
  // nothing selects the pod (then no system-default spreading applies).
  virtual LabelSelector DefaultSpreadSelector(const Pod& pod) const = 0;
  // The PodDisruptionBudgets of namespace `ns` that cover any pod, by name.
  virtual std::vector<DisruptionBudgetPtr> DisruptionBudgets(std::string_view ns) const { return {}; }

  // ---- storage, for the volume plugins (upstream: the PVC, PV, StorageClass, CSINode
  // and CSIDriver listers). Each returns null when the object is not known. ----
  virtual PersistentVolumeClaimPtr Claim(std::string_view ns, std::string_view name) const { return nullptr; }
  virtual PersistentVolumePtr Volume(std::string_view name) const { return nullptr; }
  // The PersistentVolumes whose storage class (PersistentVolume::storage_class_name) is
  // `class_name` ("" for volumes without a class), sorted by name.
  virtual std::vector<PersistentVolumePtr> VolumesOfClass(std::string_view class_name) const { return {}; }
  virtual StorageClassPtr StorageClassNamed(std::string_view name) const { return nullptr; }
  virtual CSINodePtr CSINodeNamed(std::string_view name) const { return nullptr; }
  virtual CSIDriverPtr CSIDriverNamed(std::string_view name) const { return nullptr; }

  // ---- dynamic resources (resource.k8s.io/v1), for DynamicResources (upstream: the
  // DeviceClass, ResourceSlice and ResourceClaim listers) ----
  // Whether the API server serves resource.k8s.io/v1. Without it nothing can allocate
  // a claim, and a pod with claims stays unschedulable.
  virtual bool ServesDynamicResources() const { return false; }
  virtual DeviceClassPtr DeviceClassNamed(std::string_view name) const { return nullptr; }
  virtual ResourceClaimPtr ResourceClaimNamed(std::string_view ns, std::string_view name) const { return nullptr; }
  // Every ResourceSlice; null when there are none.
  virtual std::shared_ptr<const ResourceSliceList> ResourceSlices() const { return nullptr; }
  // Whether some claim's status.allocation names the device.
  virtual bool DeviceAllocated(const DeviceId& id) const { return false; }
  // Every device some claim's allocation names, and a number that changes whenever that
  // set does (so a consumer can index the set once per change).
  virtual uint64_t AllocatedDevicesVersion() const { return 0; }
  virtual void ForEachAllocatedDevice(const std::function<void(const DeviceId&)>& fn) const {}

  // ---- gangs (scheduling.x-k8s.io/v1alpha1), for Coscheduling ----
  // The PodGroup `name` of namespace `ns`; null when not known (or not watched).
  virtual PodGroupPtr PodGroupNamed(std::string_view ns, std::string_view name) const { return nullptr; }
  // The non-terminal pods of namespace `ns` labelled scheduling.x-k8s.io/pod-group=`name`
  // (pending, assumed and bound alike), by name.
  virtual std::vector<PodPtr> PodGroupMembers(std::string_view ns, std::string_view name) const { return {}; }
};

// Knows no objects: no namespace labels, no selectors.
const ClusterLister& EmptyClusterLister();

}  // namespace ksched::api
