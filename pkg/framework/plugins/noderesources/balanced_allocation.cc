#include "pkg/framework/plugins/noderesources/balanced_allocation.h"

#include <algorithm>
#include <string>
#include <utility>
#include <variant>

#include "config/defaults.h"
#include "config/validate.h"

namespace ksched::framework::plugins::noderesources {
namespace {

constexpr std::string_view kPreScoreStateKey = "PreScoreNodeResourcesBalancedAllocation";

struct PreScoreState final : StateData {
  std::vector<int64_t> pod_requests;
  std::unique_ptr<StateData> Clone() const override { return std::make_unique<PreScoreState>(*this); }
};

bool IsBestEffort(const std::vector<int64_t>& requests) {
  return std::all_of(requests.begin(), requests.end(), [](int64_t r) { return r == 0; });
}

}  // namespace

StatusOr<std::unique_ptr<Plugin>> BalancedAllocation::New(const config::PluginArgs& args, Handle& /*handle*/) {
  config::NodeResourcesBalancedAllocationArgs typed;
  if (const auto* a = std::get_if<config::NodeResourcesBalancedAllocationArgs>(&args)) {
    typed = *a;
  } else if (!std::holds_alternative<std::monostate>(args)) {
    return InvalidArgument("want args to be of type NodeResourcesBalancedAllocationArgs");
  }
  if (typed.resources.empty()) {
    typed = std::get<config::NodeResourcesBalancedAllocationArgs>(config::DefaultArgsFor(kName));
  }
  for (config::ResourceSpec& r : typed.resources) {
    if (r.weight == 0) r.weight = 1;  // as defaulting does, for args built in code
  }
  std::vector<std::string> errs = config::ValidateNodeResourcesBalancedAllocationArgs("args", typed);
  if (!errs.empty()) {
    std::string msg = "NodeResourcesBalancedAllocation: ";
    for (size_t i = 0; i < errs.size(); ++i) msg += (i > 0 ? ", " : "") + errs[i];
    return InvalidArgument(std::move(msg));
  }
  return std::unique_ptr<Plugin>(std::make_unique<BalancedAllocation>(typed));
}

BalancedAllocation::BalancedAllocation(const config::NodeResourcesBalancedAllocationArgs& args) {
  scorer_.resources = args.resources;
  scorer_.use_requested = true;
  scorer_.scorer = BalancedAllocationScore;
}

Status BalancedAllocation::PreScore(CycleState& state, const api::Pod& pod,
                                    std::span<const cache::NodeInfoPtr> /*nodes*/) {
  auto data = std::make_unique<PreScoreState>();
  data->pod_requests = scorer_.PodRequests(cache::ComputePodRequest(pod));
  if (IsBestEffort(data->pod_requests)) return Status(Code::kSkip);
  state.Write(std::string(kPreScoreStateKey), std::move(data));
  return Status::Success();
}

Status BalancedAllocation::Score(const CycleState& state, const api::Pod& pod, const cache::NodeInfo& node,
                                 int64_t& score) const {
  if (const auto* s = state.Read<PreScoreState>(kPreScoreStateKey)) {
    return scorer_.Score(node, s->pod_requests, score);
  }
  std::vector<int64_t> requests = scorer_.PodRequests(cache::ComputePodRequest(pod));
  if (IsBestEffort(requests)) {
    score = 0;
    return Status::Success();
  }
  return scorer_.Score(node, requests, score);
}

Status BalancedAllocation::ScoreNodes(const CycleState& state, const api::Pod& pod,
                                      std::span<const cache::NodeInfoPtr> nodes, std::span<NodeScore> out) const {
  const auto* s = state.Read<PreScoreState>(kPreScoreStateKey);
  if (s == nullptr) return ScorePlugin::ScoreNodes(state, pod, nodes, out);
  return scorer_.ScoreNodes(nodes, s->pod_requests, out);
}

}  // namespace ksched::framework::plugins::noderesources
