// The extension points of DynamicResources (upstream
// dynamicresources/dynamicresources.go, 1.35).
#include "pkg/framework/plugins/dynamicresources/dynamic_resources.h"

#include <algorithm>
#include <thread>
#include <utility>
#include <variant>

#include "config/field_error.h"
#include "config/validate.h"
#include "pkg/api/json.h"
#include "pkg/util/json_string.h"
#include "pkg/util/log.h"

namespace ksched::framework::plugins::dynamicresources {
namespace {

Status Unresolvable(std::string reason) { return Status(Code::kUnschedulableAndUnresolvable, std::move(reason)); }

std::string PodRef(const api::Pod& pod) { return pod.metadata.namespace_ + "/" + pod.metadata.name; }
std::string ClaimRef(const api::ResourceClaim& c) { return c.metadata.namespace_ + "/" + c.metadata.name; }

bool IsReservedForPod(const api::Pod& pod, const api::ResourceClaim& claim) {
  return std::any_of(claim.reserved_for.begin(), claim.reserved_for.end(),
                     [&](const api::ResourceClaimConsumerReference& r) { return r.uid == pod.metadata.uid; });
}

// upstream resourceclaim.IsForPod: same namespace, and the pod is the controlling owner.
bool IsForPod(const api::Pod& pod, const api::ResourceClaim& claim) {
  if (claim.metadata.namespace_ != pod.metadata.namespace_) return false;
  return std::any_of(claim.owner_references.begin(), claim.owner_references.end(),
                     [&](const api::OwnerReference& o) { return o.controller && o.uid == pod.metadata.uid; });
}

// upstream retry.DefaultRetry: five tries, 10ms apart.
constexpr int kConflictRetries = 5;
constexpr std::chrono::milliseconds kConflictDelay{10};

std::string FinalizersPatch(const api::ResourceClaim& claim, const std::vector<std::string>& finalizers) {
  std::string out = "{\"metadata\":{\"resourceVersion\":" + JsonQuoted(claim.metadata.resource_version) +
                    ",\"finalizers\":[";
  for (size_t i = 0; i < finalizers.size(); ++i) {
    if (i) out += ',';
    out += JsonQuoted(finalizers[i]);
  }
  return out + "]}}";
}

// A status patch guarded by the claim's uid and resourceVersion: `status_fields` are
// the members of "status" to write.
std::string StatusPatch(const api::ResourceClaim& claim, const std::string& status_fields) {
  return "{\"metadata\":{\"uid\":" + JsonQuoted(claim.metadata.uid) +
         ",\"resourceVersion\":" + JsonQuoted(claim.metadata.resource_version) + "},\"status\":{" + status_fields + "}}";
}

}  // namespace

StatusOr<std::unique_ptr<Plugin>> DynamicResources::New(const config::PluginArgs& args, Handle& handle) {
  config::DynamicResourcesArgs a;
  if (const auto* typed = std::get_if<config::DynamicResourcesArgs>(&args)) {
    a = *typed;
  } else if (!std::holds_alternative<std::monostate>(args)) {
    return ksched::InvalidArgument("want args to be of type DynamicResourcesArgs");
  }
  if (auto errs = config::ValidateDynamicResourcesArgs("", a); !errs.empty()) return ksched::InvalidArgument(errs.front());
  return std::unique_ptr<Plugin>(std::make_unique<DynamicResources>(handle, a));
}

DynamicResources::DynamicResources(Handle& handle, const config::DynamicResourcesArgs& args)
    : handle_(handle), filter_timeout_(args.filter_timeout), tracker_(handle.Lister()) {}

StatusOr<std::vector<api::ResourceClaimPtr>> DynamicResources::PodClaims(const api::Pod& pod) const {
  std::vector<api::ResourceClaimPtr> claims;
  claims.reserve(pod.spec.resource_claims.size());
  for (const api::PodResourceClaim& entry : pod.spec.resource_claims) {
    // upstream resourceclaim.Name.
    std::string name;
    bool must_check_owner = false;
    if (entry.resource_claim_name) {
      name = *entry.resource_claim_name;
    } else if (entry.resource_claim_template_name) {
      auto it = std::find_if(pod.status.resource_claim_statuses.begin(), pod.status.resource_claim_statuses.end(),
                             [&](const api::PodResourceClaimStatus& s) { return s.name == entry.name; });
      if (it == pod.status.resource_claim_statuses.end())
        return InvalidArgument("pod \"" + PodRef(pod) + "\": ResourceClaim not created yet");
      // The controller decided no claim is needed for this entry.
      if (!it->resource_claim_name) continue;
      name = *it->resource_claim_name;
      must_check_owner = true;
    } else {
      return InvalidArgument("pod \"" + PodRef(pod) + "\", spec.resourceClaim " + config::GoQuote(entry.name) +
                             ": none of the supported fields are set");
    }
    api::ResourceClaimPtr claim = tracker_.Get(pod.metadata.namespace_, name);
    if (!claim) return NotFound("could not find ResourceClaim \"" + pod.metadata.namespace_ + "/" + name + "\"");
    if (claim->being_deleted) return InvalidArgument("resourceclaim " + config::GoQuote(claim->metadata.name) + " is being deleted");
    if (must_check_owner && !IsForPod(pod, *claim)) {
      return InvalidArgument("ResourceClaim " + ClaimRef(*claim) + " was not created for pod " + PodRef(pod) +
                             " (pod is not owner)");
    }
    claims.push_back(std::move(claim));
  }
  return claims;
}

void NodeSolutions::Put(const std::string& node, Solution solution) {
  Shard& shard = ShardOf(node);
  MutexLock lock(shard.mu);
  shard.map.insert_or_assign(node, std::move(solution));
}

Status DynamicResources::PreEnqueue(const api::Pod& pod) {
  if (pod.spec.resource_claims.empty()) return Status::Success();
  // Without resource.k8s.io there is nothing to wait for: PreFilter rejects the pod and
  // says why in its PodScheduled condition (a rejection here would leave it silent).
  if (!handle_.Lister().ServesDynamicResources()) return Status::Success();
  auto claims = PodClaims(pod);
  if (!claims.ok()) return Unresolvable(std::string(claims.status().message()));
  return Status::Success();
}

std::shared_ptr<const SliceIndex> DynamicResources::Slices() const {
  std::shared_ptr<const api::ResourceSliceList> list = handle_.Lister().ResourceSlices();
  MutexLock lock(slices_mu_);
  if (slice_index_ && indexed_list_ == list) return slice_index_;
  slice_index_ = std::make_shared<const SliceIndex>(list ? list->slices : std::vector<api::ResourceSlicePtr>{});
  indexed_list_ = std::move(list);
  return slice_index_;
}

Status DynamicResources::PreFilter(CycleState& state, const api::Pod& pod, PreFilterResult& /*result*/) {
  auto data = std::make_unique<CycleStateData>();
  if (pod.spec.resource_claims.empty()) {
    state.Write(std::string(kStateKey), std::move(data));
    return Status(Code::kSkip);
  }
  // A server without resource.k8s.io/v1 has no claims to allocate: the pod cannot run
  // anywhere, and binding it without an allocation would strand it on its node.
  if (!handle_.Lister().ServesDynamicResources()) {
    state.Write(std::string(kStateKey), std::move(data));
    return Unresolvable("the API server does not serve resource.k8s.io/v1: ResourceClaims cannot be allocated");
  }
  tracker_.Prune();
  auto claims = PodClaims(pod);
  if (!claims.ok()) {
    state.Write(std::string(kStateKey), std::move(data));
    return Unresolvable(std::string(claims.status().message()));
  }
  if (claims->empty()) {
    state.Write(std::string(kStateKey), std::move(data));
    return Status(Code::kSkip);
  }
  auto s = std::make_shared<ClaimsState>();
  s->claims = std::move(*claims);
  s->available_on.resize(s->claims.size());
  s->chosen.resize(s->claims.size());
  const api::ClusterLister& lister = handle_.Lister();
  std::vector<api::ResourceClaimPtr> to_allocate;
  Status verdict;
  auto validate_class = [&](const std::string& class_name, const std::string& request_name) -> Status {
    if (class_name.empty()) return Status::Error("request " + request_name + ": unsupported request type");
    if (!lister.DeviceClassNamed(class_name))
      return Unresolvable("request " + request_name + ": device class " + class_name + " does not exist");
    return Status::Success();
  };
  for (size_t i = 0; i < s->claims.size() && verdict.IsSuccess(); ++i) {
    const api::ResourceClaim& claim = *s->claims[i];
    if (claim.allocation) {
      // upstream CanBeReserved: reservedFor is capped by the API.
      if (claim.reserved_for.size() >= api::kResourceClaimReservedForMaxSize && !IsReservedForPod(pod, claim)) {
        verdict = Unresolvable("resourceclaim in use");
        break;
      }
      if (claim.allocation->node_selector) {
        auto matcher = api::NodeSelectorMatcher::Parse(*claim.allocation->node_selector);
        if (!matcher.errors().empty()) {
          verdict = Status::Error(matcher.errors().front());
          break;
        }
        s->available_on[i] = std::move(matcher);
      }
      continue;
    }
    s->to_allocate.push_back(i);
    to_allocate.push_back(s->claims[i]);
    if (tracker_.HasPendingAllocation(claim.metadata.uid)) {
      verdict = Unresolvable("resource claim " + ClaimRef(claim) + " is in the process of being allocated");
      break;
    }
    for (const api::DeviceRequest& req : claim.spec.requests) {
      if (req.exactly) {
        verdict = validate_class(req.exactly->device_class_name, req.name);
      } else if (!req.first_available.empty()) {
        for (const api::DeviceSubRequest& sub : req.first_available) {
          verdict = validate_class(sub.device_class_name, req.name + "/" + sub.name);
          if (!verdict.IsSuccess()) break;
        }
      } else {
        verdict = Unresolvable("resource claim " + ClaimRef(claim) + ", request " + req.name + ": unknown request type");
      }
      if (!verdict.IsSuccess()) break;
    }
  }
  if (verdict.IsSuccess() && !to_allocate.empty()) {
    std::shared_ptr<const SliceIndex> slices = Slices();
    std::shared_ptr<const SlotUse> slot_use = tracker_.UseIndex(slices);
    AllocatorInputs inputs{
        .slices = std::move(slices),
        .in_use = &tracker_,
        .slot_use = std::move(slot_use),
        .classes = [&lister](std::string_view name) { return lister.DeviceClassNamed(name); },
        .selectors = &selectors_,
    };
    s->allocator = std::make_shared<const Allocator>(std::move(to_allocate), std::move(inputs));
  }
  // As upstream, the claims reach the cycle state only when PreFilter succeeds: after a
  // rejection PostFilter has no claims to deallocate.
  if (verdict.IsSuccess()) data->state = std::move(s);
  state.Write(std::string(kStateKey), std::move(data));
  return verdict;
}

Status DynamicResources::Filter(const CycleState& state, const api::Pod& /*pod*/, const cache::NodeInfo& node_info) const {
  const CycleStateData* data = state.Read<CycleStateData>(kStateKey);
  if (data == nullptr) return Status::Error("reading \"DynamicResources\" from cycle state: not found");
  if (!data->state) return Status::Success();
  ClaimsState& s = *data->state;
  const api::NodePtr& node = node_info.node_ptr();
  if (!node) return Status::Error("node not found");
  std::vector<size_t> unavailable;
  for (size_t i = 0; i < s.claims.size(); ++i) {
    if (s.available_on[i] && !s.available_on[i]->Matches(*node)) unavailable.push_back(i);
  }
  std::optional<Solution> solution;
  if (s.allocator) {
    std::optional<std::chrono::steady_clock::time_point> deadline;
    if (filter_timeout_.count() > 0)
      deadline = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(filter_timeout_);
    // The solution is kept only for scoring; Reserve finds the chosen node's again.
    const Want want = s.allocator->has_first_available() ? Want::kSolution : Want::kVerdict;
    AllocateOutcome outcome = s.allocator->Allocate(node, nullptr, deadline, want);
    if (outcome.timed_out) return Unresolvable("timed out trying to allocate devices");
    if (!outcome.ok()) {
      if (outcome.node_only) return Unresolvable(std::string(outcome.error.message()));
      return Status::Error(std::string(outcome.error.message()));
    }
    if (!outcome.fits) return Unresolvable("cannot allocate all claims").WithDetail(s.allocator->WhyNot(node));
    solution = std::move(outcome.solution);
  }
  if (!unavailable.empty()) {
    MutexLock lock(s.mu);
    s.unavailable.insert(unavailable.begin(), unavailable.end());
    return Unresolvable("resourceclaim not available on the node");
  }
  if (solution) s.node_solutions.Put(node->metadata.name, std::move(*solution));
  return Status::Success();
}

Status DynamicResources::PostFilter(CycleState& state, const api::Pod& pod, const NodeToStatusMap& /*filtered*/,
                                    PostFilterResult& /*result*/) {
  if (pod.spec.resource_claims.empty()) return Status(Code::kUnschedulable);
  const CycleStateData* data = state.Read<CycleStateData>(kStateKey);
  if (data == nullptr || !data->state || data->state->claims.empty())
    return Status(Code::kUnschedulable, "no new claims to deallocate");
  ClaimsState& s = *data->state;
  std::set<size_t> unavailable;
  {
    MutexLock lock(s.mu);
    unavailable = s.unavailable;
  }
  // Upstream picks one at random; the first is as good and repeatable.
  for (size_t index : unavailable) {
    const api::ResourceClaim& claim = *s.claims[index];
    bool idle = claim.reserved_for.empty() ||
                (claim.reserved_for.size() == 1 && claim.reserved_for[0].uid == pod.metadata.uid);
    if (!idle) continue;
    ResourceClaimWriter* writer = handle_.ResourceClaims();
    if (writer == nullptr) return Status::Error("no ResourceClaim writer: cannot deallocate " + ClaimRef(claim));
    auto written = writer->PatchResourceClaim(claim.metadata.namespace_, claim.metadata.name,
                                              StatusPatch(claim, "\"allocation\":null,\"reservedFor\":null,\"devices\":null"),
                                              /*status=*/true);
    if (!written.ok()) return Status::Error(std::string(written.status().message()));
    tracker_.AssumeAfterApiCall(*written);
    return Status(Code::kUnschedulable, "deallocation of ResourceClaim completed");
  }
  return Status(Code::kUnschedulable, "still not schedulable");
}

Status DynamicResources::Score(const CycleState& state, const api::Pod& /*pod*/, const cache::NodeInfo& node,
                               int64_t& score) const {
  score = 0;
  const CycleStateData* data = state.Read<CycleStateData>(kStateKey);
  if (data == nullptr || !data->state || !data->state->allocator) return Status::Success();
  const ClaimsState& s = *data->state;
  if (!s.allocator->has_first_available()) return Status::Success();
  s.node_solutions.With(node.node()->metadata.name, [&](const Solution& solution) { score = s.allocator->Score(solution); });
  return Status::Success();
}

Status DynamicResources::NormalizeScore(const CycleState& /*state*/, const api::Pod& /*pod*/,
                                        std::span<NodeScore> scores) const {
  int64_t max = 0;
  for (const NodeScore& s : scores) max = std::max(max, s.score);
  if (max == 0) return Status::Success();
  for (NodeScore& s : scores) s.score = s.score * kMaxNodeScore / max;
  return Status::Success();
}

Status DynamicResources::Reserve(CycleState& state, const api::Pod& /*pod*/, std::string_view node_name) {
  const CycleStateData* data = state.Read<CycleStateData>(kStateKey);
  if (data == nullptr) return Status::Error("reading \"DynamicResources\" from cycle state: not found");
  if (!data->state || !data->state->allocator) return Status::Success();
  ClaimsState& s = *data->state;
  StatusOr<std::vector<api::AllocationResult>> allocations = InvalidArgument("claim allocation not found for node");
  if (!s.node_solutions.With(node_name,
                             [&](const Solution& solution) { allocations = s.allocator->Materialize(solution); })) {
    // Filter kept no solution (it does only for scoring): the search again, on the
    // chosen node, with the in-use devices Filter saw plus any freed since.
    const cache::NodeInfo* node = handle_.Snapshot().Get(node_name);
    if (node == nullptr || !node->node_ptr()) return Status::Error("claim allocation not found for node");
    AllocateOutcome outcome = s.allocator->Allocate(node->node_ptr());
    if (!outcome.ok()) return Status::Error(std::string(outcome.error.message()));
    if (!outcome.fits) return Status::Error("claim allocation not found for node");
    allocations = std::move(outcome.results);
  }
  if (!allocations.ok()) return Status::Error(std::string(allocations.status().message()));
  if (allocations->size() != s.to_allocate.size()) {
    return Status::Error("internal error, have " + std::to_string(allocations->size()) + " allocations, " +
                         std::to_string(s.to_allocate.size()) + " claims to allocate, want " +
                         std::to_string(s.to_allocate.size()) + " claims");
  }
  for (size_t k = 0; k < s.to_allocate.size(); ++k) {
    size_t index = s.to_allocate[k];
    auto claim = std::make_shared<api::ResourceClaim>(*s.claims[index]);
    if (std::find(claim->finalizers.begin(), claim->finalizers.end(), kClaimFinalizer) == claim->finalizers.end())
      claim->finalizers.emplace_back(kClaimFinalizer);
    claim->allocation = (*allocations)[k];
    s.chosen[index] = std::move((*allocations)[k]);
    tracker_.SignalPendingAllocation(std::move(claim));
  }
  return Status::Success();
}

void DynamicResources::Unreserve(CycleState& state, const api::Pod& pod, std::string_view /*node_name*/) {
  const CycleStateData* data = state.Read<CycleStateData>(kStateKey);
  if (data == nullptr || !data->state) return;
  ClaimsState& s = *data->state;
  for (size_t i = 0; i < s.claims.size(); ++i) {
    const api::ResourceClaim& claim = *s.claims[i];
    if (tracker_.RemovePendingAllocation(claim.metadata.uid)) tracker_.Restore(claim.metadata.namespace_, claim.metadata.name);
    if (!claim.allocation || !IsReservedForPod(pod, claim)) continue;
    // Take the pod out of reservedFor; the allocation stays (upstream Unreserve).
    ResourceClaimWriter* writer = handle_.ResourceClaims();
    if (writer == nullptr) continue;
    api::ResourceClaimPtr current = s.claims[i];
    for (int attempt = 0; attempt < kConflictRetries; ++attempt) {
      std::vector<api::ResourceClaimConsumerReference> rest;
      for (const auto& r : current->reserved_for)
        if (r.uid != pod.metadata.uid) rest.push_back(r);
      auto written = writer->PatchResourceClaim(current->metadata.namespace_, current->metadata.name,
                                                StatusPatch(*current, "\"reservedFor\":" + api::EncodeReservedFor(rest)),
                                                /*status=*/true);
      if (written.ok()) {
        tracker_.AssumeAfterApiCall(*written);
        break;
      }
      if (written.status().code() != StatusCode::kConflict) {
        KLOG(ERROR) << "unreserve: resourceclaim " << ClaimRef(claim) << ": " << written.status().message();
        break;
      }
      auto fresh = writer->GetResourceClaim(current->metadata.namespace_, current->metadata.name);
      if (!fresh.ok() || !IsReservedForPod(pod, **fresh)) break;
      current = *fresh;
    }
  }
}

Status DynamicResources::PreBindPreFlight(const CycleState& state, const api::Pod& /*pod*/,
                                          std::string_view /*node_name*/) const {
  const CycleStateData* data = state.Read<CycleStateData>(kStateKey);
  if (data == nullptr || !data->state) return Status(Code::kSkip);
  return Status::Success();
}

Status DynamicResources::PreBind(CycleState& state, const api::Pod& pod, std::string_view /*node_name*/) {
  const CycleStateData* data = state.Read<CycleStateData>(kStateKey);
  if (data == nullptr || !data->state) return Status::Success();
  ClaimsState& s = *data->state;
  for (size_t i = 0; i < s.claims.size(); ++i) {
    if (IsReservedForPod(pod, *s.claims[i])) continue;
    auto written = BindClaim(s, i, pod);
    if (!written.ok()) return Status::Error(std::string(written.status().message()));
    s.claims[i] = *written;
  }
  return Status::Success();
}

StatusOr<api::ResourceClaimPtr> DynamicResources::BindClaim(const ClaimsState& s, size_t index, const api::Pod& pod) {
  api::ResourceClaimPtr claim = s.claims[index];
  const std::optional<api::AllocationResult>& allocation = s.chosen[index];
  const std::string ref = ClaimRef(*claim);
  ResourceClaimWriter* writer = handle_.ResourceClaims();
  // upstream bindClaim's deferred cleanup: any claim written is assumed (a reservation
  // alone too, so the next cycle sees it before the informer does); the allocation is no
  // longer in flight, whether the write worked or not.
  auto finish = [&](StatusOr<api::ResourceClaimPtr> result) {
    if (result.ok()) tracker_.AssumeAfterApiCall(*result);
    if (allocation) tracker_.RemovePendingAllocation(claim->metadata.uid);
    return result;
  };
  if (writer == nullptr) return finish(Internal("no ResourceClaim writer: cannot reserve claim " + ref));
  ksched::Status last;
  for (int attempt = 0; attempt < kConflictRetries; ++attempt) {
    if (attempt > 0) {
      std::this_thread::sleep_for(kConflictDelay);
      auto fresh = writer->GetResourceClaim(claim->metadata.namespace_, claim->metadata.name);
      if (!fresh.ok())
        return finish(fresh.status().WithContext("get updated claim " + ref + " after conflict"));
      claim = *fresh;
    }
    if (claim->being_deleted) return finish(ksched::Status(StatusCode::kFailedPrecondition, "claim " + ref + " got deleted in the meantime"));
    std::string status_fields;
    if (allocation) {
      if (claim->allocation) return finish(ksched::Status(StatusCode::kFailedPrecondition, "claim " + ref + " got allocated elsewhere in the meantime"));
      if (std::find(claim->finalizers.begin(), claim->finalizers.end(), kClaimFinalizer) == claim->finalizers.end()) {
        std::vector<std::string> finalizers = claim->finalizers;
        finalizers.emplace_back(kClaimFinalizer);
        auto updated = writer->PatchResourceClaim(claim->metadata.namespace_, claim->metadata.name,
                                                  FinalizersPatch(*claim, finalizers), /*status=*/false);
        if (!updated.ok()) {
          last = updated.status().WithContext("add finalizer to claim " + ref);
          if (updated.status().code() == StatusCode::kConflict) continue;
          return finish(last);
        }
        claim = *updated;
      }
      status_fields = "\"allocation\":" + api::EncodeAllocationResult(*allocation) + ",";
    }
    std::vector<api::ResourceClaimConsumerReference> reserved = claim->reserved_for;
    reserved.push_back({.api_group = "", .resource = "pods", .name = pod.metadata.name, .uid = pod.metadata.uid});
    status_fields += "\"reservedFor\":" + api::EncodeReservedFor(reserved);
    auto updated = writer->PatchResourceClaim(claim->metadata.namespace_, claim->metadata.name,
                                              StatusPatch(*claim, status_fields), /*status=*/true);
    if (updated.ok()) return finish(*updated);
    last = updated.status().WithContext((allocation ? "add allocation and reservation to claim " : "add reservation to claim ") + ref);
    if (updated.status().code() != StatusCode::kConflict) return finish(last);
  }
  return finish(last);
}

QueueingHint DynamicResources::AfterClaimChange(const api::Pod& pod, const api::ResourceClaim* old_claim,
                                                const api::ResourceClaim& new_claim) const {
  auto claims = PodClaims(pod);
  if (!claims.ok()) return QueueingHint::kSkip;
  // Any deallocation frees devices this pod may use.
  if (old_claim && old_claim->allocation && !new_claim.allocation) return QueueingHint::kQueue;
  bool uses = std::any_of(claims->begin(), claims->end(),
                          [&](const api::ResourceClaimPtr& c) { return c->metadata.uid == new_claim.metadata.uid; });
  if (!uses) return QueueingHint::kSkip;
  if (!old_claim) return QueueingHint::kQueue;
  bool same_status = old_claim->allocation == new_claim.allocation && old_claim->reserved_for == new_claim.reserved_for;
  return same_status ? QueueingHint::kSkip : QueueingHint::kQueue;
}

QueueingHint DynamicResources::AfterPodChange(const api::Pod& pod, const api::Pod& modified) const {
  if (pod.metadata.uid != modified.metadata.uid) return QueueingHint::kSkip;
  return PodClaims(modified).ok() ? QueueingHint::kQueue : QueueingHint::kSkip;
}

std::vector<ClusterEventWithHint> DynamicResources::EventsToRegister() const {
  auto claim_hint = [this](const api::Pod& pod, const void* old_obj, const void* new_obj) -> StatusOr<QueueingHint> {
    const auto* new_claim = ObjectAs<api::ResourceClaim>(new_obj);
    if (new_claim == nullptr) return InvalidArgument("unexpected object in isSchedulableAfterClaimChange");
    return AfterClaimChange(pod, ObjectAs<api::ResourceClaim>(old_obj), *new_claim);
  };
  auto pod_hint = [this](const api::Pod& pod, const void* /*old_obj*/, const void* new_obj) -> StatusOr<QueueingHint> {
    const auto* modified = ObjectAs<api::Pod>(new_obj);
    if (modified == nullptr) return InvalidArgument("unexpected object in isSchedulableAfterPodChange");
    return AfterPodChange(pod, *modified);
  };
  return {
      {ClusterEvent{EventResource::kNode, kAdd | kUpdateNodeLabel | kUpdateNodeAllocatable, ""}, nullptr},
      {ClusterEvent{EventResource::kResourceClaim, kAdd | kUpdate, ""}, claim_hint},
      {ClusterEvent{EventResource::kPod, kUpdate, ""}, pod_hint},
      {ClusterEvent{EventResource::kDeviceClass, kAdd | kUpdate, ""}, nullptr},
      {ClusterEvent{EventResource::kResourceSlice, kAdd | kUpdate, ""}, nullptr},
  };
}

}  // namespace ksched::framework::plugins::dynamicresources
