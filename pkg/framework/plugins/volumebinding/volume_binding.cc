// Construction, PreFilter, Filter, scoring, Reserve/Unreserve and queueing hints
// (upstream volumebinding/volume_binding.go).
#include "pkg/framework/plugins/volumebinding/volume_binding.h"

#include <utility>
#include <variant>

#include "config/field_error.h"
#include "pkg/framework/plugins/helper/volumes.h"

namespace ksched::framework::plugins::volumebinding {
namespace {

Status Unresolvable(std::string reason) { return Status(Code::kUnschedulableAndUnresolvable, std::move(reason)); }

// A generic ephemeral volume (its claim is named after the pod and owned by it).
bool IsEphemeral(const api::Volume& vol) { return vol.pvc_claim_name.empty() && vol.ephemeral; }

}  // namespace

StatusOr<std::unique_ptr<Plugin>> VolumeBinding::New(const config::PluginArgs& args, Handle& handle) {
  config::VolumeBindingArgs a;
  if (const auto* typed = std::get_if<config::VolumeBindingArgs>(&args)) {
    a = *typed;
  } else if (!std::holds_alternative<std::monostate>(args)) {
    return ksched::InvalidArgument("want args to be of type VolumeBindingArgs");
  }
  return std::unique_ptr<Plugin>(std::make_unique<VolumeBinding>(handle, a));
}

VolumeBinding::VolumeBinding(Handle& handle, const config::VolumeBindingArgs& args, VolumeBindingOptions options)
    : handle_(handle), bind_timeout_(args.bind_timeout_seconds), options_(options) {}

// upstream podHasPVCs, then GetPodVolumeClaims. No PreFilterResult: upstream dropped
// GetEligibleNodes (it read hostname labels as node names, which they need not be).
Status VolumeBinding::PreFilter(CycleState& state, const api::Pod& pod, PreFilterResult& /*result*/) {
  const api::ClusterLister& lister = handle_.Lister();
  bool has_claims = false;
  for (const api::Volume& vol : pod.spec.volumes) {
    std::string name = api::ClaimName(pod, vol);
    if (name.empty()) continue;
    has_claims = true;
    api::PersistentVolumeClaimPtr claim = lister.Claim(pod.metadata.namespace_, name);
    if (claim == nullptr) {
      // Normal for a moment after a pod with an ephemeral volume is created.
      if (IsEphemeral(vol)) {
        return Unresolvable("waiting for ephemeral volume controller to create the persistentvolumeclaim " +
                            config::GoQuote(name));
      }
      return Unresolvable(helper::ClaimNotFound(name));
    }
    if (claim->phase == api::kClaimLost) {
      return Unresolvable("persistentvolumeclaim " + config::GoQuote(name) + " bound to non-existent persistentvolume " +
                          config::GoQuote(claim->volume_name));
    }
    if (claim->being_deleted) return Unresolvable("persistentvolumeclaim " + config::GoQuote(name) + " is being deleted");
    if (IsEphemeral(vol) && !api::ClaimIsForPod(pod, *claim)) {
      return Unresolvable(api::NotOwnedClaimMessage(pod, *claim));
    }
  }
  if (!has_claims) {
    state.Write(std::string(kStateKey), std::make_unique<PreFilterState>());
    return Status(Code::kSkip);
  }
  auto claims = GetPodVolumeClaims(pod, lister, cache_);
  if (!claims.ok()) return Status::Error(claims.status().message());
  if ((*claims)->has_unbound_immediate) return Unresolvable(std::string(kErrReasonUnboundImmediate));
  auto s = std::make_unique<PreFilterState>();
  s->claims = std::move(*claims);
  state.Write(std::string(kStateKey), std::move(s));
  return Status::Success();
}

Status VolumeBinding::Filter(const CycleState& state, const api::Pod& pod, const cache::NodeInfo& node) const {
  const PreFilterState* s = state.Read<PreFilterState>(kStateKey);
  if (s == nullptr) return Status::Error("not found");
  if (s->claims == nullptr) return Status::Success();
  if (node.node() == nullptr) return Status::Error("node not found");
  FindResult r = FindPodVolumes(*s->claims, *node.node(), nullptr);
  if (!r.error.empty()) return Status::Error(std::move(r.error));
  if (r.Fits()) return Status::Success();
  return Status(Code::kUnschedulableAndUnresolvable, r.Reasons());
}

// Upstream scores only with the VolumeCapacityPriority (now StorageCapacityScoring)
// alpha gate on; with it off (the default) it has no scorer and PreScore skips.
Status VolumeBinding::PreScore(CycleState&, const api::Pod&, std::span<const cache::NodeInfoPtr>) {
  return Status(Code::kSkip);
}

Status VolumeBinding::Score(const CycleState&, const api::Pod&, const cache::NodeInfo&, int64_t& score) const {
  score = 0;
  return Status::Success();
}

bool VolumeBinding::ArePodVolumesBound(const api::Pod& pod) const {
  const api::ClusterLister& lister = handle_.Lister();
  for (const api::Volume& vol : pod.spec.volumes) {
    std::string name = api::ClaimName(pod, vol);
    if (name.empty()) continue;
    api::PersistentVolumeClaimPtr claim = cache_.Claim(lister, pod.metadata.namespace_, name);
    if (claim == nullptr || !IsClaimFullyBound(*claim)) return false;
    if (IsEphemeral(vol) && !api::ClaimIsForPod(pod, *claim)) return false;
  }
  return true;
}

Status VolumeBinding::Reserve(CycleState& state, const api::Pod& pod, std::string_view node_name) {
  const PreFilterState* s = state.Read<PreFilterState>(kStateKey);
  if (s == nullptr) return Status::Error("not found");
  if (s->claims == nullptr) return Status::Success();  // no claims: nothing to bind

  cache_.Prune(handle_.Lister());
  const cache::NodeInfo* info = handle_.Snapshot().Get(node_name);
  if (info == nullptr || info->node() == nullptr) {
    return Status::Error("getting node " + config::GoQuote(node_name) + " from Snapshot: not found");
  }
  auto b = std::make_unique<BindingState>();
  b->node = info->node_ptr();
  if (ArePodVolumesBound(pod)) {
    state.Write(std::string(kBindingStateKey), std::move(b));
    return Status::Success();
  }
  // Filter accepted this node with the same inputs, so this finds what it found.
  FindResult r = FindPodVolumes(*s->claims, *b->node, &b->volumes);
  if (!r.error.empty()) return Status::Error(std::move(r.error));
  if (!r.Fits()) return Status::Error("no pod volumes found for node " + config::GoQuote(node_name));
  if (ksched::Status assumed = AssumePodVolumes(cache_, handle_.Lister(), node_name, b->volumes); !assumed.ok()) {
    return Status::Error(assumed.message());
  }
  b->all_bound = false;
  state.Write(std::string(kBindingStateKey), std::move(b));
  return Status::Success();
}

void VolumeBinding::Unreserve(CycleState& state, const api::Pod&, std::string_view) {
  const BindingState* b = state.Read<BindingState>(kBindingStateKey);
  if (b == nullptr) return;
  RevertAssumed(cache_, b->volumes.static_bindings, b->volumes.dynamic_provisions);
}

std::vector<ClusterEventWithHint> VolumeBinding::EventsToRegister() const {
  // A new class, or one whose allowedTopologies changed (volumeBindingMode is
  // immutable), may let a claim provision on more nodes.
  auto storage_class_hint = [](const api::Pod&, const void* old_obj, const void* new_obj) -> StatusOr<QueueingHint> {
    const auto* new_class = ObjectAs<api::StorageClass>(new_obj);
    if (new_class == nullptr)
      return ksched::InvalidArgument("VolumeBinding hint: StorageClass event without new object");
    const auto* old_class = ObjectAs<api::StorageClass>(old_obj);
    if (old_class == nullptr) return QueueingHint::kQueue;
    return old_class->allowed_topologies != new_class->allowed_topologies ? QueueingHint::kQueue : QueueingHint::kSkip;
  };
  // Almost any change of one of the pod's own claims may help it.
  auto claim_hint = [](const api::Pod& pod, const void*, const void* new_obj) -> StatusOr<QueueingHint> {
    const auto* claim = ObjectAs<api::PersistentVolumeClaim>(new_obj);
    if (claim == nullptr) {
      return ksched::InvalidArgument("VolumeBinding hint: PersistentVolumeClaim event without new object");
    }
    return api::PodUsesClaim(pod, *claim, /*ephemeral_too=*/true) ? QueueingHint::kQueue : QueueingHint::kSkip;
  };
  // CSINodes matter for translating in-tree volumes to CSI: only the migrated-plugins
  // annotation can change the verdict.
  auto csi_node_hint = [](const api::Pod&, const void* old_obj, const void* new_obj) -> StatusOr<QueueingHint> {
    const auto* old_node = ObjectAs<api::CSINode>(old_obj);
    if (old_node == nullptr) return QueueingHint::kQueue;
    const auto* new_node = ObjectAs<api::CSINode>(new_obj);
    if (new_node == nullptr) return ksched::InvalidArgument("VolumeBinding hint: CSINode event without new object");
    const std::string* before = old_node->annotations.Get(api::kAnnMigratedPlugins);
    const std::string* after = new_node->annotations.Get(api::kAnnMigratedPlugins);
    std::string_view b = before != nullptr ? std::string_view(*before) : std::string_view();
    std::string_view a = after != nullptr ? std::string_view(*after) : std::string_view();
    return a != b ? QueueingHint::kQueue : QueueingHint::kSkip;
  };
  // Upstream also registers CSIDriver and CSIStorageCapacity events, which only matter
  // to the capacity check this plugin does not make.
  return {
      {ClusterEvent{EventResource::kStorageClass, kAdd | kUpdate, ""}, storage_class_hint},
      {ClusterEvent{EventResource::kPersistentVolumeClaim, kAdd | kUpdate, ""}, claim_hint},
      {ClusterEvent{EventResource::kPersistentVolume, kAdd | kUpdate, ""}, nullptr},
      // Node labels decide PV node affinity and allowedTopologies.
      {ClusterEvent{EventResource::kNode, kAdd | kUpdateNodeLabel, ""}, nullptr},
      {ClusterEvent{EventResource::kCSINode, kAdd | kUpdate, ""}, csi_node_hint},
  };
}

}  // namespace ksched::framework::plugins::volumebinding
