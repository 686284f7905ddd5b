#include "pkg/framework/plugins/volumebinding/binder.h"

#include <algorithm>
#include <map>
#include <utility>

namespace ksched::framework::plugins::volumebinding {
namespace {

constexpr std::string_view kFilesystem = "Filesystem";

std::string_view VolumeMode(const std::string& mode) { return mode.empty() ? kFilesystem : std::string_view(mode); }

api::Quantity Requested(const api::PersistentVolumeClaim& claim) {
  return claim.storage_request.value_or(api::Quantity());
}

api::Quantity Capacity(const api::PersistentVolume& pv) { return pv.capacity.value_or(api::Quantity()); }

// upstream volume.CheckAccessModes: the volume offers every mode the claim asks for.
bool HasAccessModes(const api::PersistentVolumeClaim& claim, const api::PersistentVolume& pv) {
  for (const std::string& mode : claim.access_modes) {
    if (std::find(pv.access_modes.begin(), pv.access_modes.end(), mode) == pv.access_modes.end()) return false;
  }
  return true;
}

// The node-independent checks of upstream FindMatchingVolume, run once per cycle: which
// of the class's volumes the claim could be bound to, on some node.
class CandidateBuilder {
 public:
  explicit CandidateBuilder(std::deque<VolumeInfo>& storage) : storage_(storage) {}

  void Plan(UnboundClaim& u, const std::vector<api::PersistentVolumePtr>& volumes) {
    const api::PersistentVolumeClaim& claim = *u.claim;
    std::optional<api::LabelSelectorMatcher> selector;
    if (claim.selector) {
      auto parsed = api::LabelSelectorMatcher::Parse(*claim.selector);
      if (!parsed.ok()) {
        u.match_error =
            "error creating internal label selector for claim: " + claim.Key() + ": " + parsed.status().message();
        return;
      }
      selector = std::move(*parsed);
    }
    const api::Quantity requested = Requested(claim);
    const std::string_view requested_class = claim.StorageClass();
    for (const api::PersistentVolumePtr& pv : volumes) {
      const bool bound_to_claim = IsVolumeBoundToClaim(*pv, claim);
      if (pv->claim_ref && !bound_to_claim) continue;
      if (Capacity(*pv) < requested) continue;
      if (VolumeMode(claim.volume_mode) != VolumeMode(pv->volume_mode)) continue;
      if (pv->being_deleted) continue;
      if (bound_to_claim) {
        u.prebound.push_back(Info(pv));
        continue;
      }
      if (pv->phase != api::kVolumeAvailable) continue;
      if (selector && !selector->Matches(pv->metadata.labels)) continue;
      if (pv->storage_class_name != requested_class) continue;
      if (!HasAccessModes(claim, *pv)) continue;
      u.candidates.push_back(Info(pv));
    }
    // Smallest first; among equal sizes the lister's (name) order, as upstream's scan
    // keeps the first of equal volumes.
    std::stable_sort(u.candidates.begin(), u.candidates.end(),
                     [](const VolumeInfo* a, const VolumeInfo* b) { return Capacity(*a->pv) < Capacity(*b->pv); });
  }

 private:
  // One VolumeInfo per volume, however many claims may take it.
  const VolumeInfo* Info(const api::PersistentVolumePtr& pv) {
    auto [it, inserted] = by_volume_.try_emplace(pv.get(), nullptr);
    if (inserted) it->second = &storage_.emplace_back(VolumeInfo{pv, VolumeNodeAffinity(*pv)});
    return it->second;
  }

  std::deque<VolumeInfo>& storage_;
  std::map<const api::PersistentVolume*, const VolumeInfo*> by_volume_;
};

// upstream FindMatchingVolume's per-node half: the first pre-bound volume not taken by
// another claim of the pod decides; otherwise the smallest candidate fitting the node.
const VolumeInfo* MatchOnNode(const UnboundClaim& u, const api::Node& node,
                              const std::vector<const VolumeInfo*>& chosen) {
  auto taken = [&](const VolumeInfo* v) { return std::find(chosen.begin(), chosen.end(), v) != chosen.end(); };
  for (const VolumeInfo* v : u.prebound) {
    if (taken(v)) continue;
    return v->affinity.Matches(node) ? v : nullptr;
  }
  for (const VolumeInfo* v : u.candidates) {
    if (!taken(v) && v->affinity.Matches(node)) return v;
  }
  return nullptr;
}

}  // namespace

VolumeNodeAffinity::VolumeNodeAffinity(const api::PersistentVolume& pv) {
  if (!pv.node_affinity) return;
  required_ = api::NodeSelectorMatcher::Parse(*pv.node_affinity);
  for (const api::NodeSelectorTerm& term : *pv.node_affinity) {
    if (!term.match_fields.empty()) has_field_terms_ = true;
  }
}

bool VolumeNodeAffinity::Matches(const api::Node& node) const {
  if (!required_) return true;
  if (!has_field_terms_) return required_->Matches(node);
  api::Node labels_only;
  labels_only.metadata.labels = node.metadata.labels;
  return required_->Matches(labels_only);
}

bool IsVolumeBoundToClaim(const api::PersistentVolume& pv, const api::PersistentVolumeClaim& claim) {
  if (!pv.claim_ref) return false;
  const api::ClaimReference& ref = *pv.claim_ref;
  if (ref.name != claim.Name() || ref.namespace_ != claim.Namespace()) return false;
  return ref.uid.empty() || ref.uid == claim.metadata.uid;
}

bool IsClaimFullyBound(const api::PersistentVolumeClaim& claim) {
  return !claim.volume_name.empty() && claim.annotations.Has(api::kAnnBindCompleted);
}

BoundVolume BindVolumeToClaim(const api::PersistentVolumePtr& pv, const api::PersistentVolumeClaim& claim) {
  const bool set_bound_by_controller = !IsVolumeBoundToClaim(*pv, claim);
  auto clone = std::make_shared<api::PersistentVolume>(*pv);
  bool dirty = false;
  if (!pv->claim_ref || pv->claim_ref->name != claim.Name() || pv->claim_ref->namespace_ != claim.Namespace() ||
      pv->claim_ref->uid != claim.metadata.uid) {
    clone->claim_ref = api::ClaimReference{claim.Namespace(), claim.Name(), claim.metadata.uid};
    dirty = true;
  }
  if (set_bound_by_controller && !clone->annotations.Has(api::kAnnBoundByController)) {
    clone->annotations.Set(std::string(api::kAnnBoundByController), "yes");
    dirty = true;
  }
  if (!dirty) return {pv, false};
  return {std::move(clone), true};
}

bool MatchesTopology(const std::vector<api::TopologySelectorTerm>& terms, const api::StringMap& labels) {
  if (terms.empty()) return true;
  for (const api::TopologySelectorTerm& term : terms) {
    bool all = true;
    for (const api::TopologySelectorRequirement& req : term) {
      const std::string* value = labels.Get(req.key);
      if (value == nullptr || std::find(req.values.begin(), req.values.end(), *value) == req.values.end()) {
        all = false;
        break;
      }
    }
    if (all) return true;
  }
  return false;
}

StatusOr<std::shared_ptr<const PodVolumeClaims>> GetPodVolumeClaims(const api::Pod& pod,
                                                                    const api::ClusterLister& lister,
                                                                    AssumeCache& cache) {
  auto out = std::make_shared<PodVolumeClaims>();
  const std::string& ns = pod.metadata.namespace_;
  for (const api::Volume& vol : pod.spec.volumes) {
    std::string name = api::ClaimName(pod, vol);
    if (name.empty()) continue;
    api::PersistentVolumeClaimPtr claim = cache.Claim(lister, ns, name);
    if (claim == nullptr) {
      std::string key = api::ClaimKey(ns, name);
      return ksched::NotFound("error getting PVC \"" + key + "\": could not find v1.PersistentVolumeClaim \"" + key +
                              "\"");
    }
    if (vol.pvc_claim_name.empty() && vol.ephemeral && !api::ClaimIsForPod(pod, *claim)) {
      return ksched::Internal(api::NotOwnedClaimMessage(pod, *claim));
    }
    if (IsClaimFullyBound(*claim)) {
      out->bound.push_back({std::move(claim), nullptr});
      continue;
    }
    // upstream volume.IsDelayBindingMode: no class, or an unknown one, binds immediately.
    api::StorageClassPtr storage_class;
    bool delay = false;
    if (std::string_view class_name = claim->StorageClass(); !class_name.empty()) {
      storage_class = lister.StorageClassNamed(class_name);
      if (storage_class != nullptr) {
        if (storage_class->volume_binding_mode.empty()) {
          return ksched::Internal("VolumeBindingMode not set for StorageClass \"" + std::string(class_name) + "\"");
        }
        delay = storage_class->WaitForFirstConsumer();
      }
    }
    // A claim naming its volume is pre-bound: the PV controller binds it, not us.
    if (delay && claim->volume_name.empty()) {
      UnboundClaim u;
      if (const std::string* node = claim->annotations.Get(api::kAnnSelectedNode)) u.selected_node = *node;
      u.claim = std::move(claim);
      u.storage_class = std::move(storage_class);
      out->unbound.push_back(std::move(u));
    } else {
      out->has_unbound_immediate = true;
    }
  }
  if (out->has_unbound_immediate) return std::shared_ptr<const PodVolumeClaims>(std::move(out));

  for (PodVolumeClaims::Bound& b : out->bound) {
    if (api::PersistentVolumePtr pv = cache.Volume(lister, b.claim->volume_name)) {
      b.volume = &out->volumes.emplace_back(VolumeInfo{pv, VolumeNodeAffinity(*pv)});
    }
  }

  std::map<std::string, std::vector<api::PersistentVolumePtr>, std::less<>> by_class;
  CandidateBuilder builder(out->volumes);
  for (size_t i = 0; i < out->unbound.size(); ++i) {
    UnboundClaim& u = out->unbound[i];
    if (u.selected_node) {
      out->with_selected_node.push_back(i);
      continue;
    }
    std::string_view class_name = u.claim->StorageClass();
    auto it = by_class.find(class_name);
    if (it == by_class.end()) {
      it = by_class.emplace(std::string(class_name), cache.VolumesOfClass(lister, class_name)).first;
    }
    builder.Plan(u, it->second);
    out->to_match.push_back(i);
  }
  // upstream findMatchingVolumes sorts the claims by requested size first.
  std::stable_sort(out->to_match.begin(), out->to_match.end(), [&](size_t a, size_t b) {
    return Requested(*out->unbound[a].claim) < Requested(*out->unbound[b].claim);
  });
  return std::shared_ptr<const PodVolumeClaims>(std::move(out));
}

std::vector<std::string> FindResult::Reasons() const {
  std::vector<std::string> out;
  if (node_conflict) out.emplace_back(kErrReasonNodeConflict);
  if (bind_conflict) out.emplace_back(kErrReasonBindConflict);
  if (pv_not_exist) out.emplace_back(kErrReasonPVNotExist);
  return out;
}

FindResult FindPodVolumes(const PodVolumeClaims& claims, const api::Node& node, PodVolumes* out) {
  FindResult r;
  // upstream checkBoundClaims: stops at the first missing or mismatching volume.
  for (const PodVolumeClaims::Bound& b : claims.bound) {
    if (b.volume == nullptr) {
      r.pv_not_exist = true;
      break;
    }
    if (!b.volume->affinity.Matches(node)) {
      r.node_conflict = true;
      break;
    }
  }
  if (claims.unbound.empty()) return r;

  // Provisioning already asked for on another node: only that node will do.
  for (size_t i : claims.with_selected_node) {
    if (*claims.unbound[i].selected_node != node.Name()) {
      r.bind_conflict = true;
      return r;
    }
  }

  bool satisfied = true;
  std::vector<const VolumeInfo*> chosen;
  std::vector<PodVolumes::StaticBinding> bindings;
  std::vector<const UnboundClaim*> to_provision;
  for (size_t i : claims.with_selected_node) to_provision.push_back(&claims.unbound[i]);
  for (size_t i : claims.to_match) {
    const UnboundClaim& u = claims.unbound[i];
    if (!u.match_error.empty()) {
      r.error = u.match_error;
      return r;
    }
    const VolumeInfo* v = MatchOnNode(u, node, chosen);
    if (v == nullptr) {
      to_provision.push_back(&u);
      satisfied = false;
      continue;
    }
    chosen.push_back(v);
    bindings.push_back({v->pv, u.claim});
  }

  // upstream checkVolumeProvisions: its verdict replaces the matching one.
  std::vector<api::PersistentVolumeClaimPtr> provisions;
  if (!to_provision.empty()) {
    satisfied = true;
    for (const UnboundClaim* u : to_provision) {
      std::string_view class_name = u->claim->StorageClass();
      if (class_name.empty()) {
        r.error = "no class for claim \"" + u->claim->Key() + "\"";
        return r;
      }
      if (u->storage_class == nullptr) {
        r.error = "failed to find storage class \"" + std::string(class_name) + "\"";
        return r;
      }
      const std::string& provisioner = u->storage_class->provisioner;
      if (provisioner.empty() || provisioner == kNotSupportedProvisioner ||
          !MatchesTopology(u->storage_class->allowed_topologies, node.metadata.labels)) {
        satisfied = false;
        provisions.clear();
        break;
      }
      provisions.push_back(u->claim);
    }
  }
  r.bind_conflict = !satisfied;
  if (out != nullptr) {
    out->static_bindings = std::move(bindings);
    out->dynamic_provisions = std::move(provisions);
  }
  return r;
}

void RevertAssumed(AssumeCache& cache, std::span<const PodVolumes::StaticBinding> bindings,
                   std::span<const api::PersistentVolumeClaimPtr> claims) {
  for (const PodVolumes::StaticBinding& b : bindings) cache.RestoreVolume(b.pv->Name());
  for (const api::PersistentVolumeClaimPtr& c : claims) cache.RestoreClaim(c->Namespace(), c->Name());
}

ksched::Status AssumePodVolumes(AssumeCache& cache, const api::ClusterLister& lister, std::string_view node_name,
                                PodVolumes& volumes) {
  PodVolumes assumed;
  for (const PodVolumes::StaticBinding& b : volumes.static_bindings) {
    BoundVolume bound = BindVolumeToClaim(b.pv, *b.claim);
    if (bound.dirty) {
      if (ksched::Status s = cache.AssumeVolume(lister, bound.pv); !s.ok()) {
        RevertAssumed(cache, assumed.static_bindings, {});
        return s;
      }
    }
    assumed.static_bindings.push_back({std::move(bound.pv), b.claim});
  }
  for (const api::PersistentVolumeClaimPtr& claim : volumes.dynamic_provisions) {
    auto clone = std::make_shared<api::PersistentVolumeClaim>(*claim);
    clone->annotations.Set(std::string(api::kAnnSelectedNode), std::string(node_name));
    if (ksched::Status s = cache.AssumeClaim(lister, clone); !s.ok()) {
      RevertAssumed(cache, assumed.static_bindings, assumed.dynamic_provisions);
      return s;
    }
    assumed.dynamic_provisions.push_back(std::move(clone));
  }
  volumes = std::move(assumed);
  return ksched::Status::OK();
}

}  // namespace ksched::framework::plugins::volumebinding
