// PodInfo and QueuedPodInfo: a pod as held by the scheduling queue and the framework.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <utility>

#include "pkg/api/types.h"
#include "pkg/util/clock.h"

namespace ksched::framework {

// Names of plugins; small sets, ordered so logs and tests are deterministic.
using PluginSet = std::set<std::string, std::less<>>;

// An immutable pod plus values derived from it once, so hot paths (queue keys, sort)
// do not recompute them.
struct PodInfo {
  explicit PodInfo(api::PodPtr p) : pod(std::move(p)), key(pod->Key()), priority(pod->Priority()) {}

  // Replaces the pod with a newer version of the same namespace/name; the key stays.
  void Update(api::PodPtr p) {
    pod = std::move(p);
    priority = pod->Priority();
  }

  api::PodPtr pod;
  std::string key;        // "namespace/name"
  int32_t priority = 0;  // .spec.priority (0 if unset); read on every queue-sort comparison
};

// A pod waiting in (or popped from) the scheduling queue, with its scheduling history.
struct QueuedPodInfo {
  explicit QueuedPodInfo(api::PodPtr p) : pod_info(std::move(p)) {}

  const api::Pod& pod() const { return *pod_info.pod; }
  const api::PodPtr& pod_ptr() const { return pod_info.pod; }
  // "namespace/name": unique among queued pods.
  const std::string& Key() const { return pod_info.key; }

  PodInfo pod_info;
  // When the pod last entered the queue or last failed; backoff counts from here and
  // PrioritySort breaks priority ties with it.
  Clock::time_point timestamp{};
  // When the pod first entered the queue; never refreshed (end-to-end latency metrics).
  Clock::time_point initial_attempt_timestamp{};
  // Scheduling attempts so far; incremented by Pop.
  int attempts = 0;
  // Plugins that rejected the pod in its last attempt (Unschedulable or
  // UnschedulableAndUnresolvable). Empty after an internal error, so the pod retries
  // after backoff without waiting for an event.
  PluginSet unschedulable_plugins;
  // Plugins that returned Pending in the last attempt; an event they register requeues
  // the pod immediately, skipping backoff.
  PluginSet pending_plugins;
  // Held back by a PreEnqueue plugin (e.g. scheduling gates): waits in unschedulablePods
  // and only leaves it when an update to the pod lets PreEnqueue pass.
  bool gated = false;
  std::string gating_plugin;
  // Its last attempt ended waiting for the victims of its own preemption to leave its
  // nominated node (PostFilterResult::awaiting_victims). Such a pod backs off without
  // being taken early by an idle Pop, and is activated once those victims are gone
  // (SchedulingQueue::ActivateAwaitingPreemption).
  bool awaiting_preemption = false;
};

}  // namespace ksched::framework
