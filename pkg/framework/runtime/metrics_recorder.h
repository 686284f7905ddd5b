// The framework's narrow view of metrics (upstream framework_extension_point_duration_seconds,
// plugin_execution_duration_seconds, permit_wait_duration_seconds). pkg/metrics implements
// it with Prometheus; the framework never sees Prometheus types.
#pragma once

#include <string_view>

#include "pkg/framework/status.h"

namespace ksched::framework::runtime {

class MetricsRecorder {
 public:
  virtual ~MetricsRecorder() = default;
  // One extension point run for one pod (Filter and Score: for all nodes together).
  virtual void ObserveExtensionPoint(std::string_view point, Code code, std::string_view profile, double seconds) {}
  // One plugin call, in sampled cycles only (CycleState::record_plugin_metrics, set for
  // kPluginMetricsSamplePercent of the cycles; of the per-node Filter and Score calls,
  // one in eight), because timing every Filter call on every node would cost more
  // than the filters.
  virtual void ObservePlugin(std::string_view point, std::string_view plugin, Code code, double seconds) {}
  // How long a pod waited in WaitOnPermit, by the final result.
  virtual void ObservePermitWait(Code code, double seconds) {}
  // One call to an HTTP extender: its name (URL prefix), the verb's role (filter,
  // prioritize, bind, preempt) and whether it answered usably.
  virtual void ObserveExtenderCall(std::string_view extender, std::string_view call, bool ok, double seconds) {}
  // Gangs (Coscheduling): a group admitted (minMember assumed or bound, its waiting
  // members allowed); a group turned away, by reason ("timeout", "member_unschedulable",
  // "member_failed"); groups with members waiting at Permit, as a change of the count.
  virtual void ObservePodGroupAdmitted() {}
  virtual void ObservePodGroupRejected(std::string_view reason) {}
  virtual void AddPodGroupsWaiting(int delta) {}
};

// Upstream samples plugin durations in 10% of the cycles.
inline constexpr int kPluginMetricsSamplePercent = 10;

// Records nothing; the default.
MetricsRecorder& NoopMetricsRecorder();

}  // namespace ksched::framework::runtime
