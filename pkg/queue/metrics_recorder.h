// The queue's metrics seam. The Prometheus implementation lives in pkg/metrics; the
// queue only sees this interface, and the default does nothing.
#pragma once

#include <cstddef>
#include <functional>
#include <string_view>

namespace ksched::queue {

// Sub-queue names, the `queue` label of scheduler_pending_pods and
// scheduler_queue_incoming_pods_total.
inline constexpr std::string_view kActiveQueueName = "active";
inline constexpr std::string_view kBackoffQueueName = "backoff";
inline constexpr std::string_view kUnschedulableQueueName = "unschedulable";
inline constexpr std::string_view kGatedQueueName = "gated";

// Pending pods per sub-queue, read from the queue's state when scraped (never kept as
// inc/dec gauges, which drift). `unschedulable` excludes the gated pods.
struct PendingPodCounts {
  size_t active = 0;
  size_t backoff = 0;
  size_t unschedulable = 0;
  size_t gated = 0;
};

class QueueMetricsRecorder {
 public:
  virtual ~QueueMetricsRecorder() = default;

  // A pod entered sub-queue `queue` (kActiveQueueName, ...) because of `event`
  // ("PodAdd", "ScheduleAttemptFailure", "BackoffComplete", "NodeAdd", ...).
  // Called under the queue's lock: must not block.
  virtual void IncomingPod(std::string_view queue, std::string_view event) {}

  // The queue registers its state reader at construction and clears it (empty function)
  // in its destructor; a scrape calls the reader to fill scheduler_pending_pods.
  virtual void SetPendingPodsSource(std::function<PendingPodCounts()> source) {}
};

// The default: discards everything.
inline QueueMetricsRecorder& NoopQueueMetricsRecorder() {
  static QueueMetricsRecorder recorder;
  return recorder;
}

}  // namespace ksched::queue
