#include "pkg/framework/plugins/volumerestrictions/volume_restrictions.h"

#include <algorithm>
#include <set>
#include <string>
#include <utility>

#include "pkg/framework/plugins/helper/volumes.h"

namespace ksched::framework::plugins::volumerestrictions {
namespace {

constexpr std::string_view kPreFilterStateKey = "PreFilterVolumeRestrictions";

using ClaimNames = std::set<std::string, std::less<>>;

// upstream preFilterState: the pod's ReadWriteOncePod claims and how many of them pods
// already use (at most one user per claim, so a count per claim).
struct PreFilterState final : StateData {
  PreFilterState(std::shared_ptr<const ClaimNames> c, int n) : rwop_claims(std::move(c)), conflicting_refs(n) {}
  std::unique_ptr<StateData> Clone() const override {
    return std::make_unique<PreFilterState>(rwop_claims, conflicting_refs);
  }
  bool NeededForBinding() const override { return false; }

  // upstream conflictingPVCRefCountForPod. As upstream, by claim name alone: a nominated
  // pod or victim of another namespace with a claim of the same name counts too.
  int RefsOf(const api::Pod& pod) const {
    int n = 0;
    for (const api::Volume& v : pod.spec.volumes) {
      if (!v.pvc_claim_name.empty() && rwop_claims->contains(v.pvc_claim_name)) ++n;
    }
    return n;
  }

  std::shared_ptr<const ClaimNames> rwop_claims;  // shared between clones: never changes
  int conflicting_refs = 0;
};

bool IsGcePd(const api::VolumeSource& s) { return !s.gce_pd_name.empty(); }
bool IsAwsEbs(const api::VolumeSource& s) { return !s.aws_volume_id.empty(); }
bool IsIscsi(const api::VolumeSource& s) { return !s.iscsi_iqn.empty(); }
bool IsRbd(const api::VolumeSource& s) { return !s.rbd_monitors.empty() || !s.rbd_image.empty(); }

// upstream haveOverlap: the two lists share an element (monitor lists are short).
bool HaveOverlap(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  return std::any_of(a.begin(), a.end(),
                     [&](const std::string& x) { return std::find(b.begin(), b.end(), x) != b.end(); });
}

// upstream satisfyVolumeConflicts, over any list of pods.
template <typename Pods, typename PodOf>
bool SatisfiesVolumeConflicts(const api::Pod& pod, const Pods& existing, PodOf pod_of) {
  for (const api::Volume& v : pod.spec.volumes) {
    if (!NeedsRestrictionsCheck(v)) continue;
    for (const auto& e : existing) {
      if (IsVolumeConflict(v, pod_of(e))) return false;
    }
  }
  return true;
}

// A deleted pod can only help if it held a disk that conflicts with ours, or one of our
// claims (upstream does not look up the claim's access mode here, to keep hints cheap).
StatusOr<QueueingHint> AssignedPodDeletedHint(const api::Pod& pod, const void* old_obj, const void* /*new_obj*/) {
  const api::Pod* deleted = ObjectAs<api::Pod>(old_obj);
  if (deleted == nullptr) return ksched::InvalidArgument("VolumeRestrictions hint: Pod delete without old object");
  if (deleted->metadata.namespace_ != pod.metadata.namespace_) return QueueingHint::kSkip;
  const api::Pod* one[] = {deleted};
  if (!SatisfiesVolumeConflicts(pod, one, [](const api::Pod* p) -> const api::Pod& { return *p; })) {
    return QueueingHint::kQueue;
  }
  for (const api::Volume& dv : deleted->spec.volumes) {
    if (dv.pvc_claim_name.empty()) continue;
    for (const api::Volume& v : pod.spec.volumes) {
      if (v.pvc_claim_name == dv.pvc_claim_name) return QueueingHint::kQueue;
    }
  }
  return QueueingHint::kSkip;
}

// The claim a pod waits for (its access modes decide) was created.
StatusOr<QueueingHint> ClaimAddedHint(const api::Pod& pod, const void* /*old_obj*/, const void* new_obj) {
  const auto* claim = ObjectAs<api::PersistentVolumeClaim>(new_obj);
  if (claim == nullptr)
    return ksched::InvalidArgument("VolumeRestrictions hint: PersistentVolumeClaim add without object");
  return api::PodUsesClaim(pod, *claim, /*ephemeral_too=*/false) ? QueueingHint::kQueue : QueueingHint::kSkip;
}

}  // namespace

bool NeedsRestrictionsCheck(const api::Volume& volume) {
  const api::VolumeSource& s = volume.source;
  return IsGcePd(s) || IsAwsEbs(s) || IsRbd(s) || IsIscsi(s);
}

bool IsVolumeConflict(const api::Volume& volume, const api::Pod& existing) {
  const api::VolumeSource& s = volume.source;
  for (const api::Volume& ev : existing.spec.volumes) {
    const api::VolumeSource& e = ev.source;
    // The same GCE disk: only if every pod mounts it read-only.
    if (IsGcePd(s) && IsGcePd(e) && s.gce_pd_name == e.gce_pd_name && !(s.read_only && e.read_only)) return true;
    // The same EBS volume: never.
    if (IsAwsEbs(s) && IsAwsEbs(e) && s.aws_volume_id == e.aws_volume_id) return true;
    // The same iSCSI target (by IQN): only if every pod mounts it read-only.
    if (IsIscsi(s) && IsIscsi(e) && s.iscsi_iqn == e.iscsi_iqn && !(s.read_only && e.read_only)) return true;
    // The same RBD image (a shared monitor, the same pool and image): only read-only.
    if (IsRbd(s) && IsRbd(e) && HaveOverlap(s.rbd_monitors, e.rbd_monitors) && s.rbd_pool == e.rbd_pool &&
        s.rbd_image == e.rbd_image && !(s.read_only && e.read_only)) {
      return true;
    }
  }
  return false;
}

StatusOr<std::unique_ptr<Plugin>> VolumeRestrictions::New(const config::PluginArgs& /*args*/, Handle& handle) {
  return std::unique_ptr<Plugin>(std::make_unique<VolumeRestrictions>(handle));
}

Status VolumeRestrictions::PreFilter(CycleState& state, const api::Pod& pod, PreFilterResult& /*result*/) {
  const bool needs_check = std::any_of(pod.spec.volumes.begin(), pod.spec.volumes.end(), NeedsRestrictionsCheck);

  // upstream readWriteOncePodPVCsForPod: only persistentVolumeClaim volumes, not
  // generic ephemeral ones.
  auto rwop = std::make_shared<ClaimNames>();
  const api::ClusterLister& lister = handle_.Lister();
  for (const api::Volume& v : pod.spec.volumes) {
    if (v.pvc_claim_name.empty()) continue;
    api::PersistentVolumeClaimPtr claim = lister.Claim(pod.metadata.namespace_, v.pvc_claim_name);
    if (claim == nullptr) {
      return Status(Code::kUnschedulableAndUnresolvable, helper::ClaimNotFound(v.pvc_claim_name));
    }
    const auto& modes = claim->access_modes;
    if (std::find(modes.begin(), modes.end(), api::kReadWriteOncePod) != modes.end()) rwop->insert(claim->Name());
  }

  // upstream calPreFilterState asks the snapshot's set of claims in use, which upstream
  // keeps per node (NodeInfo.PVCRefCounts). Our NodeInfo has no such index, so this
  // scans the pods of every node: O(pods in the cluster), paid only by pods that have a
  // ReadWriteOncePod claim.
  int conflicting = 0;
  if (!rwop->empty()) {
    ClaimNames used;
    for (const cache::NodeInfoPtr& node : handle_.Snapshot().List()) {
      for (const cache::PodEntry& e : node->pods()) {
        if (e.pod->metadata.namespace_ != pod.metadata.namespace_) continue;
        for (const api::Volume& v : e.pod->spec.volumes) {
          if (!v.pvc_claim_name.empty() && rwop->contains(v.pvc_claim_name)) used.insert(v.pvc_claim_name);
        }
      }
      if (used.size() == rwop->size()) break;
    }
    conflicting = static_cast<int>(used.size());
  }

  if (!needs_check && conflicting == 0) return Status(Code::kSkip);
  state.Write(std::string(kPreFilterStateKey), std::make_unique<PreFilterState>(std::move(rwop), conflicting));
  return Status::Success();
}

Status VolumeRestrictions::AddPod(CycleState& state, const api::Pod& /*pod_to_schedule*/,
                                  const cache::PodEntry& pod_to_add, const cache::NodeInfo& /*node*/) const {
  auto* s = state.Read<PreFilterState>(kPreFilterStateKey);
  if (s == nullptr) return Status::Error("cannot read \"PreFilterVolumeRestrictions\" from cycleState");
  s->conflicting_refs += s->RefsOf(*pod_to_add.pod);
  return Status::Success();
}

Status VolumeRestrictions::RemovePod(CycleState& state, const api::Pod& /*pod_to_schedule*/,
                                     const cache::PodEntry& pod_to_remove, const cache::NodeInfo& /*node*/) const {
  auto* s = state.Read<PreFilterState>(kPreFilterStateKey);
  if (s == nullptr) return Status::Error("cannot read \"PreFilterVolumeRestrictions\" from cycleState");
  s->conflicting_refs -= s->RefsOf(*pod_to_remove.pod);
  return Status::Success();
}

Status VolumeRestrictions::Filter(const CycleState& state, const api::Pod& pod, const cache::NodeInfo& node) const {
  if (!SatisfiesVolumeConflicts(pod, node.pods(), [](const cache::PodEntry& e) -> const api::Pod& { return *e.pod; })) {
    return Status::Constant<kErrReasonDiskConflict>(Code::kUnschedulable);
  }
  const auto* s = state.Read<PreFilterState>(kPreFilterStateKey);
  if (s == nullptr) return Status::Error("cannot read \"PreFilterVolumeRestrictions\" from cycleState");
  if (s->conflicting_refs > 0) return Status::Constant<kErrReasonReadWriteOncePodConflict>(Code::kUnschedulable);
  return Status::Success();
}

std::vector<ClusterEventWithHint> VolumeRestrictions::EventsToRegister() const {
  return {
      // Volumes are immutable, so only deletions of assigned pods can release a disk.
      {ClusterEvent{EventResource::kPod, kDelete, ""}, AssignedPodDeletedHint},
      // Every new node may fit (with queueing hints, node updates cannot change the answer).
      {ClusterEvent{EventResource::kNode, kAdd, ""}, nullptr},
      // A claim the pod names must exist for its access modes to be read.
      {ClusterEvent{EventResource::kPersistentVolumeClaim, kAdd, ""}, ClaimAddedHint},
  };
}

}  // namespace ksched::framework::plugins::volumerestrictions
