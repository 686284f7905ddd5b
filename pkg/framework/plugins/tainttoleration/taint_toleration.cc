#include "pkg/framework/plugins/tainttoleration/taint_toleration.h"

#include <utility>

#include "pkg/api/selector.h"
#include "pkg/framework/plugins/helper/normalize_score.h"

namespace ksched::framework::plugins::tainttoleration {
namespace {

constexpr std::string_view kPreScoreStateKey = "PreScoreTaintToleration";

struct PreScoreState final : StateData {
  explicit PreScoreState(std::vector<api::Toleration> t) : tolerations_prefer_no_schedule(std::move(t)) {}
  std::unique_ptr<StateData> Clone() const override {
    return std::make_unique<PreScoreState>(tolerations_prefer_no_schedule);
  }
  std::vector<api::Toleration> tolerations_prefer_no_schedule;
};

bool Untolerated(const api::Node& node, const api::Pod& pod) {
  return api::FindUntoleratedTaint(node.spec.taints, pod.spec.tolerations, api::DoNotScheduleTaintsFilter) !=
         nullptr;
}

// An added node counts as "was untolerated", so adding a tolerated node queues.
StatusOr<QueueingHint> NodeChangeHint(const api::Pod& pod, const void* old_obj, const void* new_obj) {
  const api::Node* old_node = ObjectAs<api::Node>(old_obj);
  const api::Node* new_node = ObjectAs<api::Node>(new_obj);
  if (new_node == nullptr) return ksched::InvalidArgument("TaintToleration hint: Node event without new object");
  bool was_untolerated = old_node == nullptr || Untolerated(*old_node, pod);
  return was_untolerated && !Untolerated(*new_node, pod) ? QueueingHint::kQueue : QueueingHint::kSkip;
}

}  // namespace

std::string UntoleratedTaintReason(const api::Taint& taint) {
  return "node(s) had untolerated taint {" + taint.key + ": " + taint.value + "}";
}

int64_t CountIntolerablePreferNoSchedule(const std::vector<api::Taint>& taints,
                                         const std::vector<api::Toleration>& tolerations) {
  int64_t n = 0;
  for (const api::Taint& taint : taints) {
    if (taint.effect != api::TaintEffect::kPreferNoSchedule) continue;
    if (!api::TolerationsTolerateTaint(tolerations, taint)) ++n;
  }
  return n;
}

StatusOr<std::unique_ptr<Plugin>> TaintToleration::New(const config::PluginArgs& /*args*/, Handle& /*handle*/) {
  return std::unique_ptr<Plugin>(std::make_unique<TaintToleration>());
}

Status TaintToleration::Filter(const CycleState& /*state*/, const api::Pod& pod, const cache::NodeInfo& node) const {
  if (node.node() == nullptr) return Status::Error("invalid nodeInfo");
  if (!node.has_taints()) return Status::Success();
  const api::Taint* taint =
      api::FindUntoleratedTaint(node.node()->spec.taints, pod.spec.tolerations, api::DoNotScheduleTaintsFilter);
  if (taint == nullptr) return Status::Success();
  return Status(Code::kUnschedulableAndUnresolvable, UntoleratedTaintReason(*taint));
}

Status TaintToleration::PreScore(CycleState& state, const api::Pod& pod, std::span<const cache::NodeInfoPtr> nodes) {
  if (nodes.empty()) return Status::Success();
  std::vector<api::Toleration> prefer;
  for (const api::Toleration& t : pod.spec.tolerations) {
    // No effect means every effect, PreferNoSchedule included.
    if (t.effect == api::TaintEffect::kNone || t.effect == api::TaintEffect::kPreferNoSchedule) prefer.push_back(t);
  }
  state.Write(std::string(kPreScoreStateKey), std::make_unique<PreScoreState>(std::move(prefer)));
  return Status::Success();
}

Status TaintToleration::Score(const CycleState& state, const api::Pod& pod, const cache::NodeInfo& node,
                              int64_t& score) const {
  return ScoreAsRunOfOne(state, pod, node, score);  // ScoreNodes holds the rules
}

Status TaintToleration::ScoreNodes(const CycleState& state, const api::Pod& /*pod*/,
                                   std::span<const cache::NodeInfoPtr> nodes, std::span<NodeScore> out) const {
  const auto* s = state.Read<PreScoreState>(kPreScoreStateKey);
  for (size_t j = 0; j < nodes.size(); ++j) {
    const cache::NodeInfo& node = *nodes[j];
    if (node.node() == nullptr) return Status::Error("getting node \"" + node.name() + "\" from Snapshot: not found");
    if (s == nullptr) return Status::Error("failed to read \"PreScoreTaintToleration\" from cycleState");
    out[j].score =
        node.has_taints() ? CountIntolerablePreferNoSchedule(node.node()->spec.taints, s->tolerations_prefer_no_schedule) : 0;
  }
  return Status::Success();
}

Status TaintToleration::NormalizeScore(const CycleState& /*state*/, const api::Pod& /*pod*/,
                                       std::span<NodeScore> scores) const {
  helper::DefaultNormalizeScore(kMaxNodeScore, /*reverse=*/true, scores);
  return Status::Success();
}

std::vector<ClusterEventWithHint> TaintToleration::EventsToRegister() const {
  return {{ClusterEvent{EventResource::kNode, kAdd | kUpdateNodeTaint, ""}, NodeChangeHint}};
}

}  // namespace ksched::framework::plugins::tainttoleration
