#include "pkg/framework/plugins/noderesources/fit.h"

#include <utility>
#include <variant>

#include "config/defaults.h"
#include "config/validate.h"

namespace ksched::framework::plugins::noderesources {
namespace {

constexpr std::string_view kPreFilterStateKey = "PreFilterNodeResourcesFit";
constexpr std::string_view kPreScoreStateKey = "PreScoreNodeResourcesFit";

// Upstream's MaxCustomPriorityScore: shape scores are 0..10, node scores 0..100.
constexpr int64_t kMaxCustomPriorityScore = 10;

struct PreFilterState final : StateData {
  cache::PodRequest request;
  std::unique_ptr<StateData> Clone() const override { return std::make_unique<PreFilterState>(*this); }
};

struct PreScoreState final : StateData {
  std::vector<int64_t> pod_requests;
  std::unique_ptr<StateData> Clone() const override { return std::make_unique<PreScoreState>(*this); }
};

// v1helper.IsExtendedResourceName: a domain-qualified name outside kubernetes.io and not a
// quota "requests." name. Only these can be ignored; hugepages and kubernetes.io
// resources are always checked.
bool IsExtendedResourceName(std::string_view name) {
  if (name.find('/') == std::string_view::npos) return false;
  if (name.find("kubernetes.io/") != std::string_view::npos) return false;
  return !name.starts_with("requests.");
}

bool IsIgnored(std::string_view name, const IgnoredResources& ignored) {
  if (!IsExtendedResourceName(name)) return false;
  if (ignored.names.contains(name)) return true;
  if (ignored.groups.empty()) return false;
  return ignored.groups.contains(name.substr(0, name.find('/')));
}

bool RequestsNothing(const cache::Resource& r) {
  return r.milli_cpu == 0 && r.memory == 0 && r.ephemeral_storage == 0 && r.scalar.empty();
}

// Calls short(name, reason, requested, used, capacity) for every resource the node lacks
// for `req`, in upstream fitsRequest's order. The reason is a constant for pods, cpu,
// memory and ephemeral-storage, and valid only during the call for an extended resource.
template <typename Short>
void ForEachShortResource(const cache::Resource& req, const cache::Resource& allocatable,
                          const cache::Resource& requested, size_t num_pods, const IgnoredResources& ignored,
                          Short&& on_short) {
  if (static_cast<int64_t>(num_pods) + 1 > allocatable.allowed_pod_number) {
    on_short(kResourcePods, std::string_view("Too many pods"), 1, static_cast<int64_t>(num_pods),
             allocatable.allowed_pod_number);
  }
  if (RequestsNothing(req)) return;
  auto check = [&](std::string_view name, std::string_view reason, int64_t want, int64_t alloc, int64_t used) {
    if (want > 0 && want > alloc - used) on_short(name, reason, want, used, alloc);
  };
  check(kResourceCpu, "Insufficient cpu", req.milli_cpu, allocatable.milli_cpu, requested.milli_cpu);
  check(kResourceMemory, "Insufficient memory", req.memory, allocatable.memory, requested.memory);
  check(kResourceEphemeralStorage, "Insufficient ephemeral-storage", req.ephemeral_storage,
        allocatable.ephemeral_storage, requested.ephemeral_storage);
  for (const auto& [name, quantity] : req.scalar) {
    if (quantity == 0 || IsIgnored(name, ignored)) continue;
    const std::string reason = "Insufficient " + name;
    check(name, reason, quantity, allocatable.Scalar(name), requested.Scalar(name));
  }
}

std::vector<InsufficientResource> FitsOn(const cache::Resource& req, const cache::Resource& allocatable,
                                         const cache::Resource& requested, size_t num_pods,
                                         const IgnoredResources& ignored) {
  std::vector<InsufficientResource> out;
  ForEachShortResource(req, allocatable, requested, num_pods, ignored,
                       [&](std::string_view name, std::string_view reason, int64_t want, int64_t used,
                           int64_t capacity) {
                         out.push_back({std::string(name), std::string(reason), want, used, capacity});
                       });
  return out;
}

// Upstream haveAnyRequestedResourcesIncreased: did the update grow the pod count or any
// resource the pod requests?
bool AnyRequestedResourceIncreased(const cache::Resource& req, const cache::Resource& before,
                                   const cache::Resource& after) {
  if (after.allowed_pod_number > before.allowed_pod_number) return true;
  if (RequestsNothing(req)) return false;
  if ((req.milli_cpu > 0 && after.milli_cpu > before.milli_cpu) ||
      (req.memory > 0 && after.memory > before.memory) ||
      (req.ephemeral_storage > 0 && after.ephemeral_storage > before.ephemeral_storage)) {
    return true;
  }
  for (const auto& [name, quantity] : req.scalar) {
    if (quantity != 0 && after.Scalar(name) > before.Scalar(name)) return true;
  }
  return false;
}

StatusOr<QueueingHint> AfterPodDeleted(const api::Pod& /*pod*/, const void* old_obj, const void* new_obj) {
  const api::Pod* deleted = ObjectAs<api::Pod>(old_obj);
  if (new_obj != nullptr) return QueueingHint::kSkip;  // only deletions are registered
  if (deleted == nullptr) {
    return ksched::Status(StatusCode::kInvalidArgument, "NodeResourcesFit hint: Pod delete without old object");
  }
  // Only a pod that was counted on a node frees resources there.
  return deleted->IsAssigned() ? QueueingHint::kQueue : QueueingHint::kSkip;
}

ResourceScorerFn ScorerFor(const config::ScoringStrategy& s) {
  if (s.type == config::kMostAllocated) return MostAllocatedScore;
  if (s.type == config::kRequestedToCapacityRatio) {
    std::vector<helper::FunctionShapePoint> points;
    for (const config::UtilizationShapePoint& p : s.requested_to_capacity_ratio_shape.value_or(
             std::vector<config::UtilizationShapePoint>{})) {
      points.push_back({p.utilization, p.score * (kMaxNodeScore / kMaxCustomPriorityScore)});
    }
    return RequestedToCapacityRatioScorer(helper::BrokenLinearFunction(std::move(points)));
  }
  return LeastAllocatedScore;
}

}  // namespace

std::vector<InsufficientResource> FitsRequest(const cache::PodRequest& request, const cache::NodeInfo& node,
                                              const IgnoredResources& ignored) {
  return FitsOn(request.request, node.allocatable(), node.requested(), node.pods().size(), ignored);
}

StatusOr<std::unique_ptr<Plugin>> Fit::New(const config::PluginArgs& args, Handle& /*handle*/) {
  config::NodeResourcesFitArgs fit_args;
  if (const auto* typed = std::get_if<config::NodeResourcesFitArgs>(&args)) {
    fit_args = *typed;
  } else if (std::holds_alternative<std::monostate>(args)) {
    fit_args = std::get<config::NodeResourcesFitArgs>(config::DefaultArgsFor(kName));
  } else {
    return InvalidArgument("want args to be of type NodeResourcesFitArgs");
  }
  // Args built in code may skip defaulting; fill what the scorer cannot do without.
  if (!fit_args.scoring_strategy) {
    fit_args.scoring_strategy =
        std::get<config::NodeResourcesFitArgs>(config::DefaultArgsFor(kName)).scoring_strategy;
  }
  config::ScoringStrategy& strategy = *fit_args.scoring_strategy;
  if (strategy.resources.empty()) {
    strategy.resources = std::get<config::NodeResourcesFitArgs>(config::DefaultArgsFor(kName))
                             .scoring_strategy->resources;
  }
  for (config::ResourceSpec& r : strategy.resources) {
    if (r.weight == 0) r.weight = 1;  // as defaulting does, for args built in code
  }

  std::vector<std::string> errs = config::ValidateNodeResourcesFitArgs("args", fit_args);
  if (strategy.type == config::kRequestedToCapacityRatio && !strategy.requested_to_capacity_ratio_shape) {
    errs.push_back("args.scoringStrategy.requestedToCapacityRatio: Required value: shape is required");
  }
  if (!errs.empty()) {
    std::string msg = "NodeResourcesFit: ";
    for (size_t i = 0; i < errs.size(); ++i) msg += (i > 0 ? ", " : "") + errs[i];
    return InvalidArgument(std::move(msg));
  }
  return std::unique_ptr<Plugin>(std::make_unique<Fit>(fit_args));
}

Fit::Fit(const config::NodeResourcesFitArgs& args) {
  ignored_.names.insert(args.ignored_resources.begin(), args.ignored_resources.end());
  ignored_.groups.insert(args.ignored_resource_groups.begin(), args.ignored_resource_groups.end());
  config::ScoringStrategy strategy = args.scoring_strategy.value_or(config::ScoringStrategy{
      std::string(config::kLeastAllocated), {{"cpu", 1}, {"memory", 1}}, std::nullopt});
  strategy_ = strategy.type;
  scorer_.resources = strategy.resources;
  scorer_.use_requested = false;
  scorer_.scorer = ScorerFor(strategy);
}

Status Fit::PreFilter(CycleState& state, const api::Pod& pod, PreFilterResult& /*result*/) {
  auto data = std::make_unique<PreFilterState>();
  data->request = cache::ComputePodRequest(pod);
  state.Write(std::string(kPreFilterStateKey), std::move(data));
  return Status::Success();
}

Status Fit::Filter(const CycleState& state, const api::Pod& /*pod*/, const cache::NodeInfo& node) const {
  const auto* s = state.Read<PreFilterState>(kPreFilterStateKey);
  if (s == nullptr) {
    return Status::Error("error reading \"" + std::string(kPreFilterStateKey) + "\" from cycleState: not found");
  }
  // Every failing resource is reported, so the event message lists them all. One reason
  // (the usual case) is shared, not copied, per rejected node.
  Status status;
  ForEachShortResource(s->request.request, node.allocatable(), node.requested(), node.pods().size(), ignored_,
                       [&](std::string_view, std::string_view reason, int64_t, int64_t, int64_t) {
                         if (status.IsSuccess()) status = Status::Constant(Code::kUnschedulable, reason);
                         else status.AppendReason(std::string(reason));
                       });
  return status;
}

Status Fit::PreScore(CycleState& state, const api::Pod& pod, std::span<const cache::NodeInfoPtr> /*nodes*/) {
  auto data = std::make_unique<PreScoreState>();
  data->pod_requests = scorer_.PodRequests(cache::ComputePodRequest(pod));
  state.Write(std::string(kPreScoreStateKey), std::move(data));
  return Status::Success();
}

Status Fit::Score(const CycleState& state, const api::Pod& pod, const cache::NodeInfo& node,
                  int64_t& score) const {
  if (const auto* s = state.Read<PreScoreState>(kPreScoreStateKey)) {
    return scorer_.Score(node, s->pod_requests, score);
  }
  // PreScore did not run (e.g. a caller scoring directly): compute the request here.
  std::vector<int64_t> requests = scorer_.PodRequests(cache::ComputePodRequest(pod));
  return scorer_.Score(node, requests, score);
}

Status Fit::ScoreNodes(const CycleState& state, const api::Pod& pod, std::span<const cache::NodeInfoPtr> nodes,
                       std::span<NodeScore> out) const {
  const auto* s = state.Read<PreScoreState>(kPreScoreStateKey);
  if (s == nullptr) return ScorePlugin::ScoreNodes(state, pod, nodes, out);
  return scorer_.ScoreNodes(nodes, s->pod_requests, out);
}

std::vector<ClusterEventWithHint> Fit::EventsToRegister() const {
  IgnoredResources ignored = ignored_;
  auto after_node_change = [ignored = std::move(ignored)](const api::Pod& pod, const void* old_obj,
                                                          const void* new_obj) -> StatusOr<QueueingHint> {
    const api::Node* before = ObjectAs<api::Node>(old_obj);
    const api::Node* after = ObjectAs<api::Node>(new_obj);
    if (after == nullptr) {
      return ksched::Status(StatusCode::kInvalidArgument, "NodeResourcesFit hint: Node event without new object");
    }
    const cache::Resource req = cache::ComputePodRequest(pod).request;
    const cache::Resource alloc_after = cache::Resource::FromList(after->status.allocatable);
    // Would the pod fit the node with nothing else on it? If not, no change helps.
    if (!FitsOn(req, alloc_after, cache::Resource{}, 0, ignored).empty()) return QueueingHint::kSkip;
    if (before == nullptr) return QueueingHint::kQueue;
    const cache::Resource alloc_before = cache::Resource::FromList(before->status.allocatable);
    return AnyRequestedResourceIncreased(req, alloc_before, alloc_after) ? QueueingHint::kQueue
                                                                          : QueueingHint::kSkip;
  };
  return {
      {ClusterEvent{EventResource::kPod, kDelete, ""}, AfterPodDeleted},
      {ClusterEvent{EventResource::kNode, kAdd | kUpdateNodeAllocatable, ""}, std::move(after_node_change)},
  };
}

}  // namespace ksched::framework::plugins::noderesources
