// PriorityQueue: the SchedulingQueue implementation (see scheduling_queue.h for the
// contract). One mutex guards everything; Pop() waits on a condition variable.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "pkg/queue/heap.h"
#include "pkg/queue/in_flight_log.h"
#include "pkg/queue/scheduling_queue.h"
#include "pkg/util/mutex.h"
#include "pkg/util/thread_annotations.h"

namespace ksched::queue {

enum class SubQueue : uint8_t { kNone, kActive, kBackoff, kUnschedulable };
std::string_view SubQueueName(SubQueue q);

class PriorityQueue final : public SchedulingQueue {
 public:
  explicit PriorityQueue(QueueOptions options);
  ~PriorityQueue() override;
  PriorityQueue(const PriorityQueue&) = delete;
  PriorityQueue& operator=(const PriorityQueue&) = delete;

  Status Add(api::PodPtr pod) override EXCLUDES(mu_);
  void Activate(std::span<const api::PodPtr> pods) override EXCLUDES(mu_);
  void ActivateQueued(std::span<const api::PodPtr> pods) override EXCLUDES(mu_);
  void ActivateAwaitingPreemption(std::span<const api::PodPtr> pods) override EXCLUDES(mu_);
  Status AddUnschedulableIfNotPresent(QueuedPodInfoPtr info) override EXCLUDES(mu_);
  int64_t SchedulingCycle() const override EXCLUDES(mu_);
  QueuedPodInfoPtr Pop() override EXCLUDES(mu_);
  void Done(const api::Pod& pod) override EXCLUDES(mu_);
  Status Update(const api::PodPtr& old_pod, api::PodPtr new_pod) override EXCLUDES(mu_);
  void Delete(const api::Pod& pod) override EXCLUDES(mu_);
  // Same defaults as the interface (callers through PriorityQueue see them too).
  void MoveAllToActiveOrBackoffQueue(const framework::ClusterEvent& event, std::shared_ptr<const void> old_obj = nullptr,
                                     std::shared_ptr<const void> new_obj = nullptr,
                                     const PreEnqueueCheck& pre_check = nullptr) override EXCLUDES(mu_);
  void AssignedPodAdded(const api::PodPtr& pod) override EXCLUDES(mu_);
  void AssignedPodUpdated(const api::PodPtr& old_pod, const api::PodPtr& new_pod) override EXCLUDES(mu_);
  std::vector<api::PodPtr> PendingPods() const override EXCLUDES(mu_);
  std::vector<QueuedPodState> QueuedPods() const override EXCLUDES(mu_);
  std::optional<QueuedPodState> QueuedPod(std::string_view key) const override EXCLUDES(mu_);
  PendingPodCounts PendingCounts() const override EXCLUDES(mu_);
  UnschedulablePluginCounts UnschedulablePodsByPlugin() const override EXCLUDES(mu_);
  size_t Len() const override EXCLUDES(mu_);
  void Run() override EXCLUDES(mu_);
  void Close() override EXCLUDES(mu_);
  Nominator& nominator() override { return nominator_; }

  // The two background flushes, also callable directly (tests, or a caller that drives
  // its own timers).
  // Moves every pod whose backoff has expired from backoffQ to activeQ.
  void FlushBackoffQCompleted() EXCLUDES(mu_);
  // Moves pods that stayed in unschedulablePods longer than max_in_unschedulable
  // (event UnschedulableTimeout).
  void FlushUnschedulablePodsLeftover() EXCLUDES(mu_);

  // Introspection for tests and debug endpoints.
  SubQueue Where(std::string_view key) const EXCLUDES(mu_);
  size_t InFlightPods() const EXCLUDES(mu_);
  size_t InFlightEvents() const EXCLUDES(mu_);

 private:
  // One queued pod. Entries live in `pods_` (node-based, so addresses are stable); the
  // sub-queues hold pointers to them.
  struct Entry {
    QueuedPodInfoPtr info;
    SubQueue where = SubQueue::kNone;
    size_t index = 0;                   // position in its heap / unschedulable list
    Clock::time_point backoff_expiry{};  // cached while in backoffQ
    Clock::time_point placed_at{};       // when it entered its sub-queue
    bool held = false;                   // in backoff_held_ rather than backoff_
    // PrioritySort keys, cached while in activeQ so comparisons touch only the entry.
    int32_t priority = 0;
    Clock::time_point sort_timestamp{};
  };
  struct ActiveLess {
    const framework::LessFn* less;  // null: PrioritySort on the cached keys
    bool operator()(const Entry& a, const Entry& b) const {
      if (less == nullptr) {
        return a.priority > b.priority || (a.priority == b.priority && a.sort_timestamp < b.sort_timestamp);
      }
      return (*less)(*a.info, *b.info);
    }
  };
  struct BackoffLess {
    bool operator()(const Entry& a, const Entry& b) const { return a.backoff_expiry < b.backoff_expiry; }
  };
  enum class Strategy { kSkip, kAfterBackoff, kImmediately };

  // Matching hints per profile for one event, computed once per move request.
  struct HintCache {
    const std::vector<const RegisteredHint*>& For(const QueueProfile& profile, const framework::ClusterEvent& event);
    std::vector<std::pair<const QueueProfile*, std::vector<const RegisteredHint*>>> entries;
  };

  static std::string IdOf(const api::Pod& pod);
  QueuedPodState StateOf(const Entry& e) const;
  static QueuedPodState StateOf(const InFlightPod& p);
  const QueueProfile& ProfileFor(const api::Pod& pod) const;
  bool AnyProfileInterested(const framework::ClusterEvent& event) const;
  Clock::time_point BackoffExpiry(const framework::QueuedPodInfo& info) const;
  bool IsBackingOff(const framework::QueuedPodInfo& info, Clock::time_point now) const;

  Entry* Find(std::string_view key) REQUIRES(mu_);
  Entry* Insert(QueuedPodInfoPtr info) REQUIRES(mu_);
  // Detaches the entry, removes it from pods_ and hands back its info.
  QueuedPodInfoPtr Extract(Entry* e) REQUIRES(mu_);
  void Detach(Entry* e) REQUIRES(mu_);
  void Place(Entry* e, SubQueue q) REQUIRES(mu_);
  // Runs PreEnqueue; places the (detached) entry in activeQ or, gated, unschedulablePods.
  SubQueue AddToActiveOrGate(Entry* e) REQUIRES(mu_);
  // A pod just popped off backoffQ goes to activeQ through PreEnqueue (true), or is
  // gated.
  bool ActivateFromBackoff(Entry* e) REQUIRES(mu_);
  // Activate, or ActivateAwaitingPreemption with `only_awaiting_preemption`.
  // `in_flight_too`: a pod in flight is recorded to go straight to activeQ when it comes
  // back.
  void ActivateLocked(std::span<const api::PodPtr> pods, bool only_awaiting_preemption, bool in_flight_too = true)
      REQUIRES(mu_);
  // Backing off after an internal error rather than a rejection (no plugin named).
  static bool BackingOffAfterError(const framework::QueuedPodInfo& info) {
    return info.unschedulable_plugins.empty() && info.pending_plugins.empty();
  }
  // Whether an idle Pop may take the pod before its backoff ends: not after an internal
  // error (upstream keeps those in a heap of their own), nor while the victims of its
  // own preemption are leaving (a retry then cannot use the node it is nominated to;
  // their removal activates it instead).
  static bool HeldInBackoff(const framework::QueuedPodInfo& info) {
    return BackingOffAfterError(info) || info.awaiting_preemption;
  }
  // Places a detached entry according to `s`; records the incoming-pod metric.
  SubQueue Requeue(Entry* e, Strategy s, std::string_view event, Clock::time_point now) REQUIRES(mu_);

  Strategy WorthRequeuing(const framework::QueuedPodInfo& info, const framework::ClusterEvent& event,
                          std::span<const RegisteredHint* const> hints, const void* old_obj,
                          const void* new_obj) const REQUIRES(mu_);
  Strategy ReplayInFlightEvents(const framework::QueuedPodInfo& info, const std::string& id) REQUIRES(mu_);
  // Moves the given unschedulable entries on `event`.
  void MovePods(const std::vector<Entry*>& entries, const framework::ClusterEvent& event, const void* old_obj,
                const void* new_obj) REQUIRES(mu_);
  void MoveAllLocked(const framework::ClusterEvent& event, std::shared_ptr<const void> old_obj,
                     std::shared_ptr<const void> new_obj, const PreEnqueueCheck& pre_check) REQUIRES(mu_);
  void AssignedPodEvent(const framework::ClusterEvent& event, const api::PodPtr& old_pod, const api::PodPtr& pod)
      EXCLUDES(mu_);
  QueuedPodInfoPtr NewQueuedPodInfo(api::PodPtr pod) const;
  void FlushLoop(Clock::duration period, void (PriorityQueue::*flush)(), std::stop_token stop);

  QueueOptions options_;  // pre_enqueue_plugins/cluster_event_map moved to default_profile_
  Clock& clock_;
  QueueMetricsRecorder& metrics_;
  framework::LessFn less_;
  QueueProfile default_profile_;
  Nominator nominator_;

  mutable Mutex mu_;
  std::condition_variable_any cv_;  // activeQ became non-empty, or closed
  // Every queued pod by namespace/name (keys view the entry's own info->Key()).
  std::unordered_map<std::string_view, Entry> pods_ GUARDED_BY(mu_);
  IndexedHeap<Entry, ActiveLess, &Entry::index> active_ GUARDED_BY(mu_);
  // backoffQ is two heaps: backoff_ may be popped early when the scheduler would idle,
  // backoff_held_ (HeldInBackoff) only when the backoff ends.
  IndexedHeap<Entry, BackoffLess, &Entry::index> backoff_ GUARDED_BY(mu_);
  IndexedHeap<Entry, BackoffLess, &Entry::index> backoff_held_ GUARDED_BY(mu_);
  std::vector<Entry*> unschedulable_ GUARDED_BY(mu_);  // swap-remove via Entry::index
  size_t gated_ GUARDED_BY(mu_) = 0;
  int64_t scheduling_cycle_ GUARDED_BY(mu_) = 0;
  bool closed_ GUARDED_BY(mu_) = false;
  // Popped pods and the events they missed (not thread-safe itself: under mu_).
  InFlightLog in_flight_ GUARDED_BY(mu_);
  std::vector<std::jthread> loops_ GUARDED_BY(mu_);
  std::stop_source stop_;
};

}  // namespace ksched::queue
