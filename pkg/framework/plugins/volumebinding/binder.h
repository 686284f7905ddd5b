// The decision half of upstream's volumebinding/binder.go (volumeBinder): sorting a
// pod's claims once per cycle (GetPodVolumeClaims), finding volumes for them on one node
// (FindPodVolumes, checkBoundClaims, findMatchingVolumes, checkVolumeProvisions) and the
// PersistentVolume helpers of component-helpers/storage/volume (FindMatchingVolume,
// CheckNodeAffinity, GetBindVolumeToClaim, IsVolumeBoundToClaim). The in-memory
// assumptions are in assume_cache.h; the API writes and the wait in prebind.cc.
//
// Where upstream's FindMatchingVolume walks every volume of the class on every node, the
// node-independent half of its checks (claimRef, capacity, volume mode, deletion, phase,
// selector, class, access modes) runs once in PreFilter: each claim keeps the volumes
// pre-bound to it and the volumes it could take, smallest first, so Filter only
// evaluates node affinity. The result is the same volume upstream picks (the first
// pre-bound volume decides; otherwise the smallest fitting one, the earliest in the
// lister's name order among equals).
#pragma once

#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/api/cluster_lister.h"
#include "pkg/api/selector.h"
#include "pkg/api/storage.h"
#include "pkg/api/types.h"
#include "pkg/framework/interface.h"
#include "pkg/framework/plugins/volumebinding/assume_cache.h"
#include "pkg/util/status.h"

namespace ksched::framework::plugins::volumebinding {

// Why a node cannot serve the pod's volumes (upstream ConflictReason). The capacity
// reason ("node(s) did not have enough free storage") cannot occur: CSIStorageCapacity
// is not checked (see volume_binding.h).
inline constexpr std::string_view kErrReasonBindConflict = "node(s) didn't find available persistent volumes to bind";
inline constexpr std::string_view kErrReasonNodeConflict = "node(s) had volume node affinity conflict";
inline constexpr std::string_view kErrReasonPVNotExist =
    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)";

// A StorageClass provisioner that means "no dynamic provisioning" (upstream
// volume.NotSupportedProvisioner).
inline constexpr std::string_view kNotSupportedProvisioner = "kubernetes.io/no-provisioner";

// A PersistentVolume's required node affinity, parsed once (upstream
// volume.CheckNodeAffinity). Upstream matches a Node carrying only the labels, and a
// node without a name has no fields, so matchFields requirements are ignored;
// Matches() does the same.
class VolumeNodeAffinity {
 public:
  explicit VolumeNodeAffinity(const api::PersistentVolume& pv);
  bool Matches(const api::Node& node) const;

 private:
  std::optional<api::NodeSelectorMatcher> required_;  // nullopt: every node
  bool has_field_terms_ = false;
};

struct VolumeInfo {
  api::PersistentVolumePtr pv;
  VolumeNodeAffinity affinity;
};

// upstream volume.IsVolumeBoundToClaim: the PV's claimRef names the claim (and its uid,
// when the claimRef has one).
bool IsVolumeBoundToClaim(const api::PersistentVolume& pv, const api::PersistentVolumeClaim& claim);
// upstream volumeBinder.isPVCFullyBound: spec.volumeName set and bind-completed.
bool IsClaimFullyBound(const api::PersistentVolumeClaim& claim);

// upstream volume.GetBindVolumeToClaim: `pv` with its claimRef pointing at `claim`, and
// bound-by-controller set unless the volume was already (pre-)bound to the claim.
// `dirty` says whether anything changed.
struct BoundVolume {
  api::PersistentVolumePtr pv;
  bool dirty = false;
};
BoundVolume BindVolumeToClaim(const api::PersistentVolumePtr& pv, const api::PersistentVolumeClaim& claim);

// upstream v1helper.MatchTopologySelectorTerms: no terms match every node; otherwise
// some term must have each of its keys among the labels with one of its values.
bool MatchesTopology(const std::vector<api::TopologySelectorTerm>& terms, const api::StringMap& labels);

// An unbound claim of a WaitForFirstConsumer class, with the volumes it could take.
struct UnboundClaim {
  api::PersistentVolumeClaimPtr claim;
  api::StorageClassPtr storage_class;  // the claim's class, looked up in PreFilter
  // volume.kubernetes.io/selected-node: provisioning was already asked for on that node.
  std::optional<std::string> selected_node;
  // FindMatchingVolume's error (the claim's selector is invalid); reported when the
  // claim is matched.
  std::string match_error;
  // Volumes whose claimRef names this claim, in the lister's order: the first one that
  // is not taken by another claim of the pod decides (it fits the node or nothing does).
  std::vector<const VolumeInfo*> prebound;
  // Available volumes passing every node-independent check, smallest first.
  std::vector<const VolumeInfo*> candidates;
};

// A pod's claims as one scheduling cycle sees them (upstream PodVolumeClaims plus the
// volumes of unboundVolumesDelayBinding), with the assumed overlay applied. Immutable
// once built; Filter reads it concurrently.
struct PodVolumeClaims {
  struct Bound {
    api::PersistentVolumeClaimPtr claim;
    const VolumeInfo* volume = nullptr;  // null: the claim's volume does not exist
  };
  std::vector<Bound> bound;
  std::vector<UnboundClaim> unbound;  // the pod's volume order
  // Indices into `unbound`: the claims with a selected node (pod order), and the others
  // in the order upstream matches them (by requested size, stable).
  std::vector<size_t> with_selected_node;
  std::vector<size_t> to_match;
  // Unbound claims of Immediate classes (or pre-bound by name): the PV controller's job.
  bool has_unbound_immediate = false;

  std::deque<VolumeInfo> volumes;  // owns what `bound` and `unbound` point to
};

// upstream GetPodVolumeClaims: the pod's claims (through `cache`) split into bound,
// unbound delayed and unbound immediate ones, and the candidate volumes of the delayed
// ones. An error (a claim vanished since podHasPVCs, a class without volumeBindingMode)
// is the plugin's Error.
StatusOr<std::shared_ptr<const PodVolumeClaims>> GetPodVolumeClaims(const api::Pod& pod,
                                                                    const api::ClusterLister& lister,
                                                                    AssumeCache& cache);

// What a pod would bind on one node (upstream PodVolumes).
struct PodVolumes {
  struct StaticBinding {
    api::PersistentVolumePtr pv;
    api::PersistentVolumeClaimPtr claim;
  };
  std::vector<StaticBinding> static_bindings;
  std::vector<api::PersistentVolumeClaimPtr> dynamic_provisions;
};

struct FindResult {
  bool node_conflict = false;  // a bound claim's volume does not fit the node
  bool bind_conflict = false;  // an unbound claim finds no volume and cannot provision
  bool pv_not_exist = false;   // a bound claim's volume does not exist
  std::string error;           // non-empty: an internal error, not a verdict on the node

  bool Fits() const { return error.empty() && !node_conflict && !bind_conflict && !pv_not_exist; }
  // The reasons in upstream's order.
  std::vector<std::string> Reasons() const;
};

// upstream FindPodVolumes for one node. `out` (optional) receives the bindings found
// and, when provisioning is possible, the claims to provision.
FindResult FindPodVolumes(const PodVolumeClaims& claims, const api::Node& node, PodVolumes* out);

// upstream AssumePodVolumes for `volumes` chosen on `node_name`: each volume bound to
// its claim and each claim to provision annotated with the node, in `cache`; `volumes`
// then holds the assumed objects. On error nothing of it stays assumed.
ksched::Status AssumePodVolumes(AssumeCache& cache, const api::ClusterLister& lister, std::string_view node_name,
                                PodVolumes& volumes);
// upstream RevertAssumedPodVolumes (and revertAssumedPVs / revertAssumedPVCs).
void RevertAssumed(AssumeCache& cache, std::span<const PodVolumes::StaticBinding> bindings,
                   std::span<const api::PersistentVolumeClaimPtr> claims);

// ---- PreBind (prebind.cc) ----

// upstream bindAPIUpdate: writes the volumes' claimRefs, then the claims' selected-node
// annotations; `volumes` then holds the API server's answers. On a failed write, what
// was not written yet is no longer assumed; the error is the writer's. A null writer
// fails everything.
ksched::Status BindAPIUpdate(VolumeWriter* writer, AssumeCache& cache, const api::Pod& pod, PodVolumes& volumes);

// upstream checkBindings on the lister (the API objects, never the assumed ones): true
// once every claim is fully bound to a volume that fits `node`; false while binding is
// in progress; an error when it can no longer succeed (a claim or volume deleted, the
// claimRef reset, provisioning given up, node affinity broken).
StatusOr<bool> CheckBindings(const api::ClusterLister& lister, const api::Node& node, const PodVolumes& volumes);

}  // namespace ksched::framework::plugins::volumebinding
