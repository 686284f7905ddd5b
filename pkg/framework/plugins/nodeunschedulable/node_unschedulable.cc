#include "pkg/framework/plugins/nodeunschedulable/node_unschedulable.h"

#include <string>

#include "pkg/api/selector.h"

namespace ksched::framework::plugins::nodeunschedulable {
namespace {

bool ToleratesUnschedulable(const api::Pod& pod) {
  static const api::Taint kTaint{std::string(api::kTaintNodeUnschedulable), "", api::TaintEffect::kNoSchedule};
  return api::TolerationsTolerateTaint(pod.spec.tolerations, kTaint);
}

// An added node counts as "was unschedulable", so adding a schedulable node queues.
StatusOr<QueueingHint> NodeChangeHint(const api::Pod& /*pod*/, const void* old_obj, const void* new_obj) {
  const api::Node* old_node = ObjectAs<api::Node>(old_obj);
  const api::Node* new_node = ObjectAs<api::Node>(new_obj);
  if (new_node == nullptr) return ksched::InvalidArgument("NodeUnschedulable hint: Node event without new object");
  bool was_schedulable = old_node != nullptr && !old_node->spec.unschedulable;
  bool is_schedulable = !new_node->spec.unschedulable;
  return !was_schedulable && is_schedulable ? QueueingHint::kQueue : QueueingHint::kSkip;
}

}  // namespace

StatusOr<std::unique_ptr<Plugin>> NodeUnschedulable::New(const config::PluginArgs& /*args*/, Handle& /*handle*/) {
  return std::unique_ptr<Plugin>(std::make_unique<NodeUnschedulable>());
}

Status NodeUnschedulable::Filter(const CycleState& /*state*/, const api::Pod& pod,
                                 const cache::NodeInfo& node) const {
  if (node.node() == nullptr) {
    return Status::Constant<kErrReasonUnknownCondition>(Code::kUnschedulableAndUnresolvable);
  }
  if (!node.unschedulable() || ToleratesUnschedulable(pod)) return Status::Success();
  return Status::Constant<kErrReasonUnschedulable>(Code::kUnschedulableAndUnresolvable);
}

std::vector<ClusterEventWithHint> NodeUnschedulable::EventsToRegister() const {
  return {{ClusterEvent{EventResource::kNode, kAdd | kUpdateNodeTaint, ""}, NodeChangeHint}};
}

}  // namespace ksched::framework::plugins::nodeunschedulable
