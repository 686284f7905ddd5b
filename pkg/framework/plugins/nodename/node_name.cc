#include "pkg/framework/plugins/nodename/node_name.h"

#include <string>

namespace ksched::framework::plugins::nodename {
namespace {

StatusOr<QueueingHint> NodeChangeHint(const api::Pod& pod, const void* /*old_obj*/, const void* new_obj) {
  const api::Node* node = ObjectAs<api::Node>(new_obj);
  if (node == nullptr) return ksched::InvalidArgument("NodeName hint: Node event without new object");
  return Fits(pod, *node) ? QueueingHint::kQueue : QueueingHint::kSkip;
}

}  // namespace

bool Fits(const api::Pod& pod, const api::Node& node) {
  return pod.spec.node_name.empty() || pod.spec.node_name == node.Name();
}

StatusOr<std::unique_ptr<Plugin>> NodeName::New(const config::PluginArgs& /*args*/, Handle& /*handle*/) {
  return std::unique_ptr<Plugin>(std::make_unique<NodeName>());
}

Status NodeName::Filter(const CycleState& /*state*/, const api::Pod& pod, const cache::NodeInfo& node) const {
  if (node.node() == nullptr) return Status::Error("node not found");
  if (!Fits(pod, *node.node())) return Status::Constant<kErrReason>(Code::kUnschedulableAndUnresolvable);
  return Status::Success();
}

std::vector<ClusterEventWithHint> NodeName::EventsToRegister() const {
  return {{ClusterEvent{EventResource::kNode, kAdd | kUpdate, ""}, NodeChangeHint}};
}

}  // namespace ksched::framework::plugins::nodename
