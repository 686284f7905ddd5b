// SchedulingGates: keeps a pod with .spec.schedulingGates out of activeQ until every
// gate has been removed (by an update of the pod).
#pragma once

#include <string_view>
#include <vector>

#include "pkg/framework/queue_plugins.h"

namespace ksched::framework::plugins {

class SchedulingGates final : public PreEnqueuePlugin, public EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "SchedulingGates";

  std::string_view Name() const override { return kName; }
  // UnschedulableAndUnresolvable "waiting for scheduling gates: [a b]" while gated.
  Status PreEnqueue(const api::Pod& pod) override;
  // Pod updates, with a hint that queues only the updated pod itself and only once its
  // gates are gone; any other pod's update, or a gate change that leaves gates, is kSkip.
  std::vector<ClusterEventWithHint> EventsToRegister() const override;
};

}  // namespace ksched::framework::plugins
