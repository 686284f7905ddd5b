// What the scheduler reports about each attempt, implemented with prometheus-cpp in
// pkg/metrics (a no-op by default). Kept apart from scheduler.h so that pkg/metrics
// depends on this interface only, not on the scheduler (as the queue's and the
// framework runtime's recorders).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace ksched::scheduler {

class SchedulerMetrics {
 public:
  virtual ~SchedulerMetrics() = default;
  // result: scheduled | unschedulable | error.
  virtual void ObserveAttempt(std::string_view result, std::string_view profile, double seconds) {}
  virtual void ObserveAlgorithm(double seconds) {}
  // A pod bound after `attempts` attempts, `seconds` after it first entered the queue.
  virtual void ObservePodScheduled(int attempts, double seconds) {}
  // Preemption (PostFilter): one attempt, and how many victims it chose.
  virtual void ObservePreemptionAttempt() {}
  virtual void ObservePreemptionVictims(int victims) {}
  // scheduler_goroutines{operation}: `source` is read at scrape time.
  virtual void SetGoroutinesSource(std::string operation, std::function<int64_t()> source) {}
};

}  // namespace ksched::scheduler
