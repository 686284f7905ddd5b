#include "pkg/framework/plugins/volumezone/volume_zone.h"

#include <utility>

#include "pkg/framework/plugins/helper/volumes.h"

namespace ksched::framework::plugins::volumezone {
namespace {

constexpr std::string_view kPreFilterStateKey = "PreFilterVolumeZone";

struct PreFilterState final : StateData {
  explicit PreFilterState(std::vector<PVTopology> t) : topologies(std::move(t)) {}
  std::unique_ptr<StateData> Clone() const override { return std::make_unique<PreFilterState>(topologies); }
  bool NeededForBinding() const override { return false; }
  std::vector<PVTopology> topologies;
};

// Beta labels first, as upstream's topologyLabels.
constexpr std::string_view kTopologyLabels[] = {
    helper::kLabelFailureDomainBetaZone,
    helper::kLabelFailureDomainBetaRegion,
    helper::kLabelTopologyZone,
    helper::kLabelTopologyRegion,
};

// upstream translateToGALabel: a volume's beta label may match the node's GA one.
std::string_view ToGALabel(std::string_view key) {
  if (key == helper::kLabelFailureDomainBetaRegion) return helper::kLabelTopologyRegion;
  if (key == helper::kLabelFailureDomainBetaZone) return helper::kLabelTopologyZone;
  return key;
}

StatusOr<QueueingHint> ClaimChangedHint(const api::Pod& pod, const void* /*old_obj*/, const void* new_obj) {
  const auto* claim = ObjectAs<api::PersistentVolumeClaim>(new_obj);
  if (claim == nullptr) return ksched::InvalidArgument("VolumeZone hint: PersistentVolumeClaim event without object");
  // Only persistentVolumeClaim volumes, as upstream (not generic ephemeral ones).
  return api::PodUsesClaim(pod, *claim, /*ephemeral_too=*/false) ? QueueingHint::kQueue : QueueingHint::kSkip;
}

// Only a WaitForFirstConsumer class lets an unbound claim pass; the binding mode is
// immutable, so class updates are not registered at all.
StatusOr<QueueingHint> StorageClassAddedHint(const api::Pod& /*pod*/, const void* /*old_obj*/, const void* new_obj) {
  const auto* sc = ObjectAs<api::StorageClass>(new_obj);
  if (sc == nullptr) return ksched::InvalidArgument("VolumeZone hint: StorageClass add without object");
  return sc->WaitForFirstConsumer() ? QueueingHint::kQueue : QueueingHint::kSkip;
}

StatusOr<QueueingHint> VolumeChangedHint(const api::Pod& /*pod*/, const void* old_obj, const void* new_obj) {
  const auto* now = ObjectAs<api::PersistentVolume>(new_obj);
  if (now == nullptr) return ksched::InvalidArgument("VolumeZone hint: PersistentVolume event without object");
  const auto* before = ObjectAs<api::PersistentVolume>(old_obj);
  if (before == nullptr) return QueueingHint::kQueue;  // a new volume
  return PVTopologies(*before) != PVTopologies(*now) ? QueueingHint::kQueue : QueueingHint::kSkip;
}

}  // namespace

std::vector<PVTopology> PVTopologies(const api::PersistentVolume& pv) {
  std::vector<PVTopology> out;
  for (std::string_view key : kTopologyLabels) {
    const std::string* value = pv.metadata.labels.Get(key);
    if (value == nullptr) continue;
    auto zones = helper::LabelZonesToSet(*value);
    if (!zones.ok()) continue;
    out.push_back({pv.Name(), std::string(key), std::move(*zones)});
  }
  return out;
}

StatusOr<std::unique_ptr<Plugin>> VolumeZone::New(const config::PluginArgs& /*args*/, Handle& handle) {
  return std::unique_ptr<Plugin>(std::make_unique<VolumeZone>(handle));
}

Status VolumeZone::PodPVTopologies(const api::Pod& pod, std::vector<PVTopology>& out) const {
  const api::ClusterLister& lister = handle_.Lister();
  // Only persistentVolumeClaim volumes, as upstream (not generic ephemeral ones).
  for (const api::Volume& v : pod.spec.volumes) {
    if (v.pvc_claim_name.empty()) continue;
    api::PersistentVolumeClaimPtr claim = lister.Claim(pod.metadata.namespace_, v.pvc_claim_name);
    if (claim == nullptr) {
      return Status(Code::kUnschedulableAndUnresolvable, helper::ClaimNotFound(v.pvc_claim_name));
    }
    const std::string& pv_name = claim->volume_name;
    if (pv_name.empty()) {
      const std::string_view class_name = claim->StorageClass();
      if (class_name.empty()) {
        return Status(Code::kUnschedulableAndUnresolvable,
                      "PersistentVolumeClaim had no pv name and storageClass name");
      }
      api::StorageClassPtr sc = lister.StorageClassNamed(class_name);
      if (sc == nullptr) return Status(Code::kUnschedulableAndUnresolvable, helper::StorageClassNotFound(class_name));
      if (sc->volume_binding_mode.empty()) {
        return Status(Code::kUnschedulableAndUnresolvable,
                      "VolumeBindingMode not set for StorageClass \"" + std::string(class_name) + "\"");
      }
      if (sc->WaitForFirstConsumer()) continue;  // VolumeBinding will choose a volume
      return Status(Code::kUnschedulableAndUnresolvable, "PersistentVolume had no name");
    }
    api::PersistentVolumePtr pv = lister.Volume(pv_name);
    if (pv == nullptr) return Status(Code::kUnschedulableAndUnresolvable, helper::VolumeNotFound(pv_name));
    std::vector<PVTopology> t = PVTopologies(*pv);
    out.insert(out.end(), std::make_move_iterator(t.begin()), std::make_move_iterator(t.end()));
  }
  return Status::Success();
}

Status VolumeZone::PreFilter(CycleState& state, const api::Pod& pod, PreFilterResult& /*result*/) {
  std::vector<PVTopology> topologies;
  if (Status s = PodPVTopologies(pod, topologies); !s.IsSuccess()) return s;
  if (topologies.empty()) return Status(Code::kSkip);
  state.Write(std::string(kPreFilterStateKey), std::make_unique<PreFilterState>(std::move(topologies)));
  return Status::Success();
}

Status VolumeZone::Filter(const CycleState& state, const api::Pod& pod, const cache::NodeInfo& node) const {
  if (pod.spec.volumes.empty()) return Status::Success();
  std::vector<PVTopology> computed;
  const std::vector<PVTopology>* topologies = nullptr;
  if (const auto* s = state.Read<PreFilterState>(kPreFilterStateKey)) {
    topologies = &s->topologies;
  } else {
    // As upstream, without PreFilter's state (PreFilter was not run) read the volumes
    // here; the lister is safe to read from Filter's threads.
    if (Status s = PodPVTopologies(pod, computed); !s.IsSuccess()) return s;
    topologies = &computed;
  }

  const api::Node* n = node.node();
  if (n == nullptr) return Status::Error("node not found");
  const api::StringMap& labels = n->metadata.labels;
  bool node_has_topology = false;
  for (std::string_view key : kTopologyLabels) node_has_topology = node_has_topology || labels.Has(key);
  // A node without topology labels (a single-zone cluster) fits every volume.
  if (!node_has_topology) return Status::Success();

  for (const PVTopology& t : *topologies) {
    const std::string* value = labels.Get(t.key);
    if (value == nullptr) value = labels.Get(ToGALabel(t.key));
    if (value == nullptr || !t.values.contains(*value)) {
      return Status::Constant<kErrReasonConflict>(Code::kUnschedulableAndUnresolvable);
    }
  }
  return Status::Success();
}

std::vector<ClusterEventWithHint> VolumeZone::EventsToRegister() const {
  return {
      {ClusterEvent{EventResource::kStorageClass, kAdd, ""}, StorageClassAddedHint},
      {ClusterEvent{EventResource::kNode, kAdd | kUpdateNodeLabel, ""}, nullptr},
      // A new claim, or one whose volumeName got filled in.
      {ClusterEvent{EventResource::kPersistentVolumeClaim, kAdd | kUpdate, ""}, ClaimChangedHint},
      {ClusterEvent{EventResource::kPersistentVolume, kAdd | kUpdate, ""}, VolumeChangedHint},
  };
}

}  // namespace ksched::framework::plugins::volumezone
