// Every Prometheus metric of ksched, declared in one place with upstream kube-scheduler's
// names, labels and buckets (upstream pkg/scheduler/metrics/metrics.go).
//
// Counters and histograms live in a prometheus-cpp Registry and are updated by the three
// recorder interfaces. Gauges that describe state (pending pods, cache size, unschedulable
// pods, busy workers) are never kept as inc/dec values, which drift when an update path is
// missed: Serialize() asks the registered callbacks for the current numbers and builds
// those families on the spot.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>
#include <string_view>
#include <utility>

#include "pkg/framework/runtime/metrics_recorder.h"
#include "pkg/queue/metrics_recorder.h"
#include "pkg/scheduler/metrics_recorder.h"
#include "pkg/util/mutex.h"

namespace prometheus {
class Registry;
}  // namespace prometheus

namespace ksched::metrics {

// The `type` values of scheduler_cache_size.
struct CacheSizes {
  size_t nodes = 0;
  size_t pods = 0;
  size_t assumed_pods = 0;
};

// scheduler_unschedulable_pods{plugin,profile}: (plugin, profile) -> count.
using UnschedulablePodCounts = std::map<std::pair<std::string, std::string>, size_t>;

struct MetricsOptions {
  // Read at scrape time. An empty function leaves the family out of the output. The
  // queue can also register its reader through SetPendingPodsSource(), which wins.
  std::function<queue::PendingPodCounts()> pending_pods;
  std::function<CacheSizes()> cache_sizes;
  std::function<UnschedulablePodCounts()> unschedulable_pods;
  // ksched_stuck_pods{profile}: profile -> stuck pending pods.
  std::function<std::map<std::string, size_t>()> stuck_pods;
  // leader_election_master_status{name}: the lease's name and whether this replica holds
  // it. Empty function, or nullopt (no leader election): the family is left out.
  std::function<std::optional<std::pair<std::string, bool>>()> leader;
  // The process collector's process_* families (client_golang's, as kube-scheduler
  // registers it), read from /proc at scrape time.
  bool process_metrics = false;
  // --disabled-metrics: families left out of every scrape (this wins over show_hidden).
  std::vector<std::string> disabled;
  // --show-hidden-metrics-for-version given: the deprecated families upstream hides by
  // default (scheduler_pod_scheduling_duration_seconds, deprecated since 1.29) are shown.
  bool show_hidden = false;
};

class Metrics final : public queue::QueueMetricsRecorder,
                      public framework::runtime::MetricsRecorder,
                      public scheduler::SchedulerMetrics {
 public:
  explicit Metrics(MetricsOptions options = {});
  ~Metrics() override;
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  // queue::QueueMetricsRecorder
  void IncomingPod(std::string_view queue, std::string_view event) override;
  void SetPendingPodsSource(std::function<queue::PendingPodCounts()> source) override;

  // framework::runtime::MetricsRecorder
  void ObserveExtensionPoint(std::string_view point, framework::Code code, std::string_view profile,
                             double seconds) override;
  void ObservePlugin(std::string_view point, std::string_view plugin, framework::Code code,
                     double seconds) override;
  void ObservePermitWait(framework::Code code, double seconds) override;
  void ObserveExtenderCall(std::string_view extender, std::string_view call, bool ok, double seconds) override;
  void ObservePodGroupAdmitted() override;
  void ObservePodGroupRejected(std::string_view reason) override;
  void AddPodGroupsWaiting(int delta) override;

  // scheduler::SchedulerMetrics
  void ObserveAttempt(std::string_view result, std::string_view profile, double seconds) override;
  void ObserveAlgorithm(double seconds) override;
  void ObservePodScheduled(int attempts, double seconds) override;

  void ObservePreemptionAttempt() override;
  void ObservePreemptionVictims(int victims) override;

  // scheduler_goroutines{operation}: `source` is read at scrape time (e.g. "binding" ->
  // binding workers currently busy). An empty function unregisters the operation.
  void SetGoroutinesSource(std::string operation, std::function<int64_t()> source) override;

  // The Prometheus text exposition format (version 0.0.4) of every metric.
  std::string Serialize() const;

 private:
  struct Families;
  std::shared_ptr<prometheus::Registry> registry_;
  std::unique_ptr<Families> families_;
  MetricsOptions options_;

  // Scrape callbacks run under mu_, so a source that unregisters itself (the queue's
  // destructor) waits for an in-progress scrape instead of racing it.
  mutable Mutex mu_;
  std::function<queue::PendingPodCounts()> pending_source_ GUARDED_BY(mu_);
  std::map<std::string, std::function<int64_t()>> goroutine_sources_ GUARDED_BY(mu_);
};

// The content type of Serialize()'s output, for the /metrics handler.
inline constexpr std::string_view kTextContentType = "text/plain; version=0.0.4; charset=utf-8";

}  // namespace ksched::metrics
