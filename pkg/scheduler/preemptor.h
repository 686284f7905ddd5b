// Preemptor: the scheduler's side of preemption (framework::PodPreemptor). The
// DefaultPreemption plugin decides; this evicts victims through the API writer, records
// the Preempted events, keeps the queue's nominator in step and counts the metrics.
#pragma once

#include <condition_variable>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pkg/framework/interface.h"
#include "pkg/queue/scheduling_queue.h"
#include "pkg/scheduler/api_writer.h"
#include "pkg/scheduler/metrics_recorder.h"
#include "pkg/util/mutex.h"

namespace ksched::scheduler {

class Preemptor final : public framework::PodPreemptor {
 public:
  // `metrics` may be null. The queue is set once built (it is built after the
  // frameworks that hold this object).
  Preemptor(ApiWriter& writer, SchedulerMetrics* metrics) : writer_(writer), metrics_(metrics) {}
  void SetQueue(queue::SchedulingQueue* queue) { queue_ = queue; }

  void PreemptVictim(const api::PodPtr& victim, const api::PodPtr& preemptor, std::string_view node,
                     std::function<void(ksched::Status)> done) override EXCLUDES(mu_);
  void ClearNomination(const api::PodPtr& pod) override;
  void PreemptionFailed(const api::PodPtr& preemptor) override;
  void ObservePreemptionAttempt() override {
    if (metrics_) metrics_->ObservePreemptionAttempt();
  }
  void ObserveVictims(int count) override {
    if (metrics_) metrics_->ObservePreemptionVictims(count);
  }

  // With `record`, the victims of each preemptor are kept until TakeVictims (the
  // decision log shows them).
  void RecordVictims(bool record) { record_victims_ = record; }
  // "namespace/name" of the pods evicted for `preemptor_uid` since the last call.
  std::vector<std::string> TakeVictims(const std::string& preemptor_uid) EXCLUDES(mu_);

  // Blocks until no eviction is waiting for its answer (their callbacks reach into the
  // plugin and the queue, which must outlive them).
  void WaitIdle() EXCLUDES(mu_);

 private:
  ApiWriter& writer_;
  SchedulerMetrics* const metrics_;
  queue::SchedulingQueue* queue_ = nullptr;
  Mutex mu_;
  int in_flight_ GUARDED_BY(mu_) = 0;
  bool record_victims_ = false;
  std::unordered_map<std::string, std::vector<std::string>> victims_ GUARDED_BY(mu_);
  std::condition_variable_any idle_;
};

}  // namespace ksched::scheduler
