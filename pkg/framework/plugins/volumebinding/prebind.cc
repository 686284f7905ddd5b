// PreBind: the API writes of the bindings Reserve assumed and the wait for the PV
// controller (upstream volumeBinder.BindPodVolumes, bindAPIUpdate and checkBindings).
//
// Upstream sends whole-object Updates of the PV and the claim; ksched sends JSON merge
// patches of the fields it changes, with metadata.resourceVersion as the same
// optimistic-concurrency precondition. The wait reads the informer-backed lister, which
// has no change notification, so it polls; the lister is local, so it polls every 100 ms
// instead of upstream's second.
#include <algorithm>
#include <chrono>
#include <span>
#include <stop_token>
#include <utility>

#include "config/field_error.h"
#include "pkg/api/json_writer.h"
#include "pkg/framework/plugins/volumebinding/volume_binding.h"

namespace ksched::framework::plugins::volumebinding {
namespace {

// The PV's claimRef (upstream GetBindVolumeToClaim's reference.GetReference of the
// claim) and bound-by-controller, conditional on the version the choice was made from.
std::string VolumePatch(const api::PersistentVolume& assumed, const api::PersistentVolumeClaim& claim) {
  std::string out;
  api::JsonWriter w(out);
  w.BeginObject();
  w.Key("metadata");
  w.BeginObject();
  w.FieldIfSet("resourceVersion", assumed.metadata.resource_version);
  if (const std::string* v = assumed.annotations.Get(api::kAnnBoundByController)) {
    w.Key("annotations");
    w.BeginObject();
    w.Field(api::kAnnBoundByController, *v);
    w.EndObject();
  }
  w.EndObject();
  w.Key("spec");
  w.BeginObject();
  w.Key("claimRef");
  w.BeginObject();
  w.Field("kind", "PersistentVolumeClaim");
  w.Field("apiVersion", "v1");
  w.Field("namespace", claim.Namespace());
  w.Field("name", claim.Name());
  w.Field("uid", claim.metadata.uid);
  w.FieldIfSet("resourceVersion", claim.metadata.resource_version);
  w.EndObject();
  w.EndObject();
  w.EndObject();
  return out;
}

// The selected-node annotation that asks the provisioner for a volume on that node.
std::string ClaimPatch(const api::PersistentVolumeClaim& assumed) {
  std::string out;
  api::JsonWriter w(out);
  w.BeginObject();
  w.Key("metadata");
  w.BeginObject();
  w.FieldIfSet("resourceVersion", assumed.metadata.resource_version);
  w.Key("annotations");
  w.BeginObject();
  const std::string* node = assumed.annotations.Get(api::kAnnSelectedNode);
  w.Field(api::kAnnSelectedNode, node != nullptr ? std::string_view(*node) : std::string_view());
  w.EndObject();
  w.EndObject();
  w.EndObject();
  return out;
}

ksched::Status CheckFailed(std::string message) { return ksched::Internal(std::move(message)); }

std::string AffinityMismatch(const api::PersistentVolume& pv, std::string_view node) {
  return "pv " + config::GoQuote(pv.Name()) + " node affinity doesn't match node " + config::GoQuote(node) +
         ": no matching NodeSelectorTerms";
}

}  // namespace

Status VolumeBinding::PreBindPreFlight(const CycleState& state, const api::Pod&, std::string_view) const {
  const BindingState* b = state.Read<BindingState>(kBindingStateKey);
  return b == nullptr || b->all_bound ? Status(Code::kSkip) : Status::Success();
}

Status VolumeBinding::PreBind(CycleState& state, const api::Pod& pod, std::string_view /*node_name*/) {
  BindingState* b = state.Read<BindingState>(kBindingStateKey);
  if (b == nullptr || b->all_bound) return Status::Success();
  if (ksched::Status s = BindAPIUpdate(handle_.Volumes(), cache_, pod, b->volumes); !s.ok()) {
    return Status::Error(s.message().empty() ? s.ToString() : s.message());
  }

  // upstream wait.PollUntilContextTimeout(interval, bindTimeout, immediate=false): the
  // first look after one interval, none once the deadline has come.
  Clock& clock = *options_.clock;
  const auto interval = std::max<Clock::duration>(options_.poll_interval, std::chrono::milliseconds(1));
  const Clock::time_point deadline = clock.Now() + bind_timeout_;
  Clock::time_point next = clock.Now();
  const std::stop_token stopping = handle_.Stopping();
  for (;;) {
    next += interval;
    if (next >= deadline) {
      if (clock.SleepUntil(deadline, stopping)) return Status::Error("binding volumes: context deadline exceeded");
      return Status::Error("binding volumes: the scheduler is shutting down");
    }
    if (!clock.SleepUntil(next, stopping)) return Status::Error("binding volumes: the scheduler is shutting down");
    StatusOr<bool> bound = CheckBindings(handle_.Lister(), *b->node, b->volumes);
    if (!bound.ok()) return Status::Error("binding volumes: " + bound.status().message());
    if (*bound) return Status::Success();
  }
}

ksched::Status BindAPIUpdate(VolumeWriter* writer, AssumeCache& cache, const api::Pod& pod, PodVolumes& volumes) {
  std::vector<PodVolumes::StaticBinding>& bindings = volumes.static_bindings;
  std::vector<api::PersistentVolumeClaimPtr>& claims = volumes.dynamic_provisions;
  size_t written_bindings = 0, written_claims = 0;
  auto fail = [&](ksched::Status s) {
    RevertAssumed(cache, std::span(bindings).subspan(written_bindings), std::span(claims).subspan(written_claims));
    return s;
  };
  if (writer == nullptr) {
    return fail(ksched::Internal("binding volumes of pod " + config::GoQuote(pod.Key()) +
                                 ": the scheduler cannot write PersistentVolumes and claims"));
  }
  for (; written_bindings < bindings.size(); ++written_bindings) {
    PodVolumes::StaticBinding& binding = bindings[written_bindings];
    auto written = writer->PatchVolume(binding.pv->Name(), VolumePatch(*binding.pv, *binding.claim));
    if (!written.ok()) return fail(written.status());
    binding.pv = std::move(*written);  // the server's answer, to know when the lister has it
  }
  for (; written_claims < claims.size(); ++written_claims) {
    api::PersistentVolumeClaimPtr& claim = claims[written_claims];
    auto written = writer->PatchClaim(claim->Namespace(), claim->Name(), ClaimPatch(*claim));
    if (!written.ok()) return fail(written.status());
    claim = std::move(*written);
  }
  return ksched::Status::OK();
}

StatusOr<bool> CheckBindings(const api::ClusterLister& lister, const api::Node& node, const PodVolumes& volumes) {
  for (const PodVolumes::StaticBinding& binding : volumes.static_bindings) {
    api::PersistentVolumePtr pv = lister.Volume(binding.pv->Name());
    if (pv == nullptr) {
      return CheckFailed("failed to check binding: could not find v1.PersistentVolume " + config::GoQuote(binding.pv->Name()));
    }
    api::PersistentVolumeClaimPtr claim = lister.Claim(binding.claim->Namespace(), binding.claim->Name());
    if (claim == nullptr) {
      return CheckFailed("failed to check binding: could not find v1.PersistentVolumeClaim " +
                         config::GoQuote(binding.claim->Key()));
    }
    // The lister has not seen our write yet.
    if (ResourceVersionNewer(binding.pv->metadata.resource_version, pv->metadata.resource_version)) return false;
    if (!VolumeNodeAffinity(*pv).Matches(node)) return CheckFailed(AffinityMismatch(*pv, node.Name()));
    // The PV controller's unbindVolume() dropped our claimRef.
    if (!pv->claim_ref || pv->claim_ref->uid.empty())
      return CheckFailed("ClaimRef got reset for pv " + config::GoQuote(pv->Name()));
    if (!IsClaimFullyBound(*claim)) return false;
  }
  for (const api::PersistentVolumeClaimPtr& provisioned : volumes.dynamic_provisions) {
    api::PersistentVolumeClaimPtr claim = lister.Claim(provisioned->Namespace(), provisioned->Name());
    if (claim == nullptr) {
      return CheckFailed("failed to check provisioning pvc: could not find v1.PersistentVolumeClaim " +
                         config::GoQuote(provisioned->Key()));
    }
    if (ResourceVersionNewer(provisioned->metadata.resource_version, claim->metadata.resource_version)) return false;
    // A provisioner that gives up removes selected-node to hand the pod back to us.
    // Upstream words a claim without any annotation differently; the decoders keep only
    // the volume annotations, so "none of those" stands in for "none".
    if (claim->annotations.empty())
      return CheckFailed("selectedNode annotation reset for PVC " + config::GoQuote(claim->Name()));
    const std::string* selected = claim->annotations.Get(api::kAnnSelectedNode);
    if (selected == nullptr || *selected != node.Name()) {
      return CheckFailed("provisioning failed for PVC " + config::GoQuote(claim->Name()));
    }
    if (!claim->volume_name.empty()) {
      // A volume the lister does not show yet may just be late.
      api::PersistentVolumePtr pv = lister.Volume(claim->volume_name);
      if (pv == nullptr) return false;
      if (!VolumeNodeAffinity(*pv).Matches(node)) return CheckFailed(AffinityMismatch(*pv, node.Name()));
    }
    if (!IsClaimFullyBound(*claim)) return false;
  }
  return true;
}

}  // namespace ksched::framework::plugins::volumebinding
