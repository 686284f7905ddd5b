// SchedulingQueue: pods waiting to be scheduled. Three sub-queues hold every pending
// pod, each pod in exactly one of them:
//   activeQ            heap by the QueueSort plugin's Less; Pop() takes its head.
//   backoffQ           heap by backoff expiry; flushed to activeQ every second.
//   unschedulablePods  map; pods leave on a cluster event registered by a plugin that
//                      rejected them (if its queueing hint agrees), after
//                      max_in_unschedulable, or when an update to the pod may help.
// A popped pod is "in flight" until it comes back through AddUnschedulableIfNotPresent
// or Done(); events seen meanwhile are replayed against it when it comes back, so an
// event that arrives mid-attempt is never lost.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pkg/api/types.h"
#include "pkg/framework/cluster_event.h"
#include "pkg/framework/pod_info.h"
#include "pkg/framework/queue_plugins.h"
#include "pkg/queue/events.h"
#include "pkg/queue/metrics_recorder.h"
#include "pkg/queue/nominator.h"
#include "pkg/util/clock.h"
#include "pkg/util/status.h"

namespace ksched::queue {

using QueuedPodInfoPtr = std::unique_ptr<framework::QueuedPodInfo>;
// Filters the unschedulable pods a MoveAll request may move (e.g. "not the pod whose
// binding just failed").
using PreEnqueueCheck = std::function<bool(const api::Pod&)>;
// (plugin, profile) -> number of queued pods; see UnschedulablePodsByPlugin().
using UnschedulablePluginCounts = std::map<std::pair<std::string, std::string>, size_t>;

// Where a pending pod is, for the debug endpoints.
struct QueuedPodState {
  api::PodPtr pod;
  // "activeQ", "backoffQ", "unschedulablePods", "gated" (held back by a PreEnqueue
  // plugin) or "scheduling" (popped: in its scheduling or binding cycle).
  std::string_view queue;
  int attempts = 0;
  Clock::time_point initial_attempt_timestamp{};  // first queued
  Clock::time_point since{};                      // entered `queue`
  std::optional<Clock::time_point> backoff_until;  // backoffQ only
  std::string gating_plugin;                       // gated only
};

inline constexpr std::string_view kInFlightQueueName = "scheduling";

// What a profile (schedulerName) contributes to the queue.
struct QueueProfile {
  // Borrowed; must outlive the queue.
  std::vector<framework::PreEnqueuePlugin*> pre_enqueue_plugins;
  ClusterEventMap cluster_event_map;
};

struct QueueOptions {
  Clock* clock = &RealClock();
  Clock::duration initial_backoff = std::chrono::seconds(1);
  Clock::duration max_backoff = std::chrono::seconds(10);
  // A pod left in unschedulablePods longer than this is retried anyway.
  Clock::duration max_in_unschedulable = std::chrono::minutes(5);
  Clock::duration backoff_flush_period = std::chrono::seconds(1);
  Clock::duration unschedulable_flush_period = std::chrono::seconds(30);
  // activeQ order; empty: PrioritySort.
  framework::LessFn less;
  // The profile for pods whose schedulerName is not in `profiles` (with one profile,
  // just fill these two).
  std::vector<framework::PreEnqueuePlugin*> pre_enqueue_plugins;
  ClusterEventMap cluster_event_map;
  // Per-schedulerName overrides of the two fields above.
  std::map<std::string, QueueProfile, std::less<>> profiles;
  // Borrowed; null: no metrics.
  QueueMetricsRecorder* metrics = nullptr;
  // Today's upstream (SchedulerPopFromBackoffQ, on by default since 1.33): when activeQ
  // is empty, Pop takes the backoffQ pod whose backoff ends first instead of idling
  // until it ends. Pods backing off after an error (not a rejection) still wait, and so
  // do preemptors whose victims are still leaving (QueuedPodInfo::awaiting_preemption):
  // retried early they fail again, and their victims' removal activates them.
  bool pop_from_backoff_q = true;
};

class SchedulingQueue {
 public:
  virtual ~SchedulingQueue() = default;

  // A new unscheduled pod: to activeQ, or to unschedulablePods (gated) if a PreEnqueue
  // plugin rejects it.
  virtual Status Add(api::PodPtr pod) = 0;
  // Moves these pods to activeQ if they are in backoffQ or unschedulablePods (plugins
  // asking for a related pod to be retried now). In-flight pods are requeued
  // immediately when their attempt fails.
  virtual void Activate(std::span<const api::PodPtr> pods) = 0;
  // Activate for the pods that wait in unschedulablePods or backoffQ only: a pod in
  // flight is left to its attempt (a gang member waiting at Permit needs no activation,
  // and one would send it straight back to activeQ if that attempt failed).
  virtual void ActivateQueued(std::span<const api::PodPtr> pods) = 0;
  // The victims of these pods' preemption have left their nominated node: those of them
  // that wait for it (QueuedPodInfo::awaiting_preemption) go to activeQ, and one in
  // flight is requeued to activeQ when its attempt fails.
  virtual void ActivateAwaitingPreemption(std::span<const api::PodPtr> pods) = 0;
  // Returns a pod whose attempt failed (info->unschedulable_plugins / pending_plugins
  // say who rejected it; both empty for an internal error) and ends its in-flight
  // tracking. Upstream also takes the pod's scheduling cycle, which only its queue
  // without hints reads; ksched has no such queue.
  // Fails with kAlreadyExists if the pod is already queued (the info is dropped).
  virtual Status AddUnschedulableIfNotPresent(QueuedPodInfoPtr info) = 0;
  // Incremented by every Pop.
  virtual int64_t SchedulingCycle() const = 0;
  // Blocks until activeQ has a pod; returns it (attempts incremented, rejecting plugins
  // cleared, in flight) or nullptr once the queue is closed.
  virtual QueuedPodInfoPtr Pop() = 0;
  // Ends in-flight tracking of a popped pod that will not come back (bound, deleted).
  virtual void Done(const api::Pod& pod) = 0;
  // An update of an unscheduled pod: in place if in activeQ/backoffQ; out of
  // unschedulablePods if the change may help; recorded for replay if in flight;
  // added to activeQ if not queued at all.
  virtual Status Update(const api::PodPtr& old_pod, api::PodPtr new_pod) = 0;
  // Removes the pod from every sub-queue and from the nominator.
  virtual void Delete(const api::Pod& pod) = 0;
  // A cluster event: moves the unschedulable pods it may help (and that pass
  // `pre_check`) to backoffQ if still backing off, else activeQ. old_obj/new_obj are
  // the changed object (typed by event.resource) for queueing hints.
  virtual void MoveAllToActiveOrBackoffQueue(const framework::ClusterEvent& event,
                                             std::shared_ptr<const void> old_obj = nullptr,
                                             std::shared_ptr<const void> new_obj = nullptr,
                                             const PreEnqueueCheck& pre_check = nullptr) = 0;
  // A pod was bound/updated on a node: moves unschedulable pods with a required pod
  // affinity term it satisfies (AssignedPodAdd / AssignedPodUpdate).
  virtual void AssignedPodAdded(const api::PodPtr& pod) = 0;
  virtual void AssignedPodUpdated(const api::PodPtr& old_pod, const api::PodPtr& new_pod) = 0;
  // Every queued pod (not the in-flight ones), for debugging and cache comparison.
  virtual std::vector<api::PodPtr> PendingPods() const = 0;
  virtual PendingPodCounts PendingCounts() const = 0;
  // Every pending pod, in flight ones included, and where it is (any order).
  virtual std::vector<QueuedPodState> QueuedPods() const = 0;
  // One pending pod by "namespace/name"; nullopt if not queued nor in flight.
  virtual std::optional<QueuedPodState> QueuedPod(std::string_view key) const = 0;
  // scheduler_unschedulable_pods{plugin,profile}: for every queued pod (any sub-queue,
  // gated ones included) each plugin that rejected its last attempt (or returned Pending,
  // or gates it) counts it once under the pod's schedulerName. A popped pod no longer
  // counts, as upstream decrements when it pops. Computed from the queue under its lock.
  virtual UnschedulablePluginCounts UnschedulablePodsByPlugin() const = 0;
  // Number of queued pods across the three sub-queues.
  virtual size_t Len() const = 0;
  // Starts the backoff and unschedulable flush loops on the injected clock.
  virtual void Run() = 0;
  // Wakes Pop() callers (they return nullptr) and stops the flush loops.
  virtual void Close() = 0;
  virtual Nominator& nominator() = 0;
};

std::unique_ptr<SchedulingQueue> NewSchedulingQueue(QueueOptions options);

}  // namespace ksched::queue
