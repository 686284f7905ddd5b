// The plugin interfaces the scheduling queue consumes. The framework runtime (Filter,
// Score, ...) adds its extension points next to these; every extension point derives
// virtually from Plugin so a plugin implementing several has one Name().
#pragma once

#include <functional>
#include <string_view>
#include <vector>

#include "pkg/api/types.h"
#include "pkg/framework/cluster_event.h"
#include "pkg/framework/pod_info.h"
#include "pkg/framework/status.h"

namespace ksched::framework {

class Plugin {
 public:
  virtual ~Plugin() = default;
  virtual std::string_view Name() const = 0;
};

// Orders activeQ. Exactly one per scheduler (all profiles share it).
class QueueSortPlugin : public virtual Plugin {
 public:
  // True if `a` should be scheduled before `b`. Must be a strict weak ordering.
  virtual bool Less(const QueuedPodInfo& a, const QueuedPodInfo& b) const = 0;
};

using LessFn = std::function<bool(const QueuedPodInfo&, const QueuedPodInfo&)>;

// The default activeQ order (the PrioritySort plugin's, upstream's Less): higher
// .spec.priority first; among equal priorities, the pod queued (or last failed) earlier.
// The queue uses it when no QueueSort plugin is given, without depending on a plugin.
inline bool PriorityLess(const QueuedPodInfo& a, const QueuedPodInfo& b) {
  const int32_t pa = a.pod_info.priority;
  const int32_t pb = b.pod_info.priority;
  return pa > pb || (pa == pb && a.timestamp < b.timestamp);
}

// Runs when a pod is about to enter activeQ. A non-success status keeps the pod out of
// activeQ (it waits, "gated", in unschedulablePods) until an update lets it pass. Runs
// under the queue's lock: must be cheap and must not call into the queue.
class PreEnqueuePlugin : public virtual Plugin {
 public:
  virtual Status PreEnqueue(const api::Pod& pod) = 0;
};

// Optional, implemented next to an extension point that can reject pods: the events
// that may make a pod rejected by this plugin schedulable. Must be static (independent
// of configuration) because the queue reads it once. A rejecting plugin that does not
// implement this is assumed to care about every event (kAllClusterEvents); one that
// returns an empty list is requeued only by timeouts and wildcard events.
class EnqueueExtensions {
 public:
  virtual ~EnqueueExtensions() = default;
  virtual std::vector<ClusterEventWithHint> EventsToRegister() const = 0;
};

}  // namespace ksched::framework
