#include "pkg/framework/plugins/schedulinggates/scheduling_gates.h"

#include <string>

namespace ksched::framework::plugins {
namespace {

// Same pod: UID when both have one, otherwise namespace/name.
bool SamePod(const api::Pod& a, const api::Pod& b) {
  if (!a.metadata.uid.empty() && !b.metadata.uid.empty()) return a.metadata.uid == b.metadata.uid;
  return a.metadata.namespace_ == b.metadata.namespace_ && a.metadata.name == b.metadata.name;
}

StatusOr<QueueingHint> GatesRemovedHint(const api::Pod& pod, const void* /*old_obj*/,
                                        const void* new_obj) {
  const api::Pod* updated = ObjectAs<api::Pod>(new_obj);
  if (updated == nullptr) {
    return ksched::Status(StatusCode::kInvalidArgument, "SchedulingGates hint: Pod update without new object");
  }
  if (!SamePod(pod, *updated)) return QueueingHint::kSkip;
  return updated->spec.scheduling_gates.empty() ? QueueingHint::kQueue : QueueingHint::kSkip;
}

}  // namespace

Status SchedulingGates::PreEnqueue(const api::Pod& pod) {
  const auto& gates = pod.spec.scheduling_gates;
  if (gates.empty()) return Status::Success();
  // Go's %v of a []string: "[a b]".
  std::string list = "[";
  for (size_t i = 0; i < gates.size(); ++i) {
    if (i > 0) list += ' ';
    list += gates[i];
  }
  list += ']';
  return Status(Code::kUnschedulableAndUnresolvable, "waiting for scheduling gates: " + list)
      .WithPlugin(std::string(kName));
}

std::vector<ClusterEventWithHint> SchedulingGates::EventsToRegister() const {
  return {{ClusterEvent{EventResource::kPod, kUpdate, ""}, GatesRemovedHint}};
}

}  // namespace ksched::framework::plugins
