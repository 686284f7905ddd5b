#include "pkg/framework/plugins/nodeports/node_ports.h"

#include <string>
#include <utility>

namespace ksched::framework::plugins::nodeports {
namespace {

constexpr std::string_view kPreFilterStateKey = "PreFilterNodePorts";

struct PreFilterState final : StateData {
  explicit PreFilterState(std::vector<cache::HostPort> p) : ports(std::move(p)) {}
  std::unique_ptr<StateData> Clone() const override { return std::make_unique<PreFilterState>(ports); }
  std::vector<cache::HostPort> ports;
};

// Only the deletion of a bound pod that held one of our ports can free what we need.
StatusOr<QueueingHint> PodDeletedHint(const api::Pod& pod, const void* old_obj, const void* /*new_obj*/) {
  const api::Pod* deleted = ObjectAs<api::Pod>(old_obj);
  if (deleted == nullptr) return ksched::InvalidArgument("NodePorts hint: Pod delete without old object");
  if (deleted->spec.node_name.empty()) return QueueingHint::kSkip;
  std::vector<cache::HostPort> freed = cache::PodHostPorts(*deleted);
  if (freed.empty()) return QueueingHint::kSkip;
  cache::HostPortInfo freed_info;
  for (const cache::HostPort& p : freed) freed_info.Add(p);
  return FitsPorts(cache::PodHostPorts(pod), freed_info) ? QueueingHint::kSkip : QueueingHint::kQueue;
}

}  // namespace

bool FitsPorts(const std::vector<cache::HostPort>& want, const cache::HostPortInfo& used) {
  for (const cache::HostPort& p : want) {
    if (used.CheckConflict(p)) return false;
  }
  return true;
}

StatusOr<std::unique_ptr<Plugin>> NodePorts::New(const config::PluginArgs& /*args*/, Handle& /*handle*/) {
  return std::unique_ptr<Plugin>(std::make_unique<NodePorts>());
}

Status NodePorts::PreFilter(CycleState& state, const api::Pod& pod, PreFilterResult& /*result*/) {
  std::vector<cache::HostPort> ports = cache::PodHostPorts(pod);
  if (ports.empty()) return Status(Code::kSkip);
  state.Write(std::string(kPreFilterStateKey), std::make_unique<PreFilterState>(std::move(ports)));
  return Status::Success();
}

Status NodePorts::Filter(const CycleState& state, const api::Pod& /*pod*/, const cache::NodeInfo& node) const {
  const auto* s = state.Read<PreFilterState>(kPreFilterStateKey);
  if (s == nullptr) return Status::Error("reading \"PreFilterNodePorts\" from cycleState: not found");
  if (!FitsPorts(s->ports, node.used_ports())) return Status::Constant<kErrReason>(Code::kUnschedulable);
  return Status::Success();
}

std::vector<ClusterEventWithHint> NodePorts::EventsToRegister() const {
  return {
      // Container ports are immutable, so pod updates cannot matter.
      {ClusterEvent{EventResource::kPod, kDelete, ""}, PodDeletedHint},
      {ClusterEvent{EventResource::kNode, kAdd | kUpdate, ""}, nullptr},
  };
}

}  // namespace ksched::framework::plugins::nodeports
