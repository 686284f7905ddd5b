// The queue's view of cluster events: which plugins registered which events (with
// their queueing hints), built once from the enabled plugins, plus the labels of the
// queue's own move reasons.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pkg/framework/cluster_event.h"
#include "pkg/framework/queue_plugins.h"

namespace ksched::queue {

// `event` label values for moves that are not cluster events.
inline constexpr std::string_view kPodAddEvent = "PodAdd";
inline constexpr std::string_view kPodUpdateEvent = "PodUpdate";
inline constexpr std::string_view kScheduleAttemptFailure = "ScheduleAttemptFailure";
inline constexpr std::string_view kBackoffComplete = "BackoffComplete";

struct RegisteredHint {
  std::string plugin;
  framework::QueueingHintFn fn;  // empty: always kQueue
};

// clusterEventMap: registered event -> the plugins (and their hints) that registered it.
// Lookups match by ClusterEvent::Match, so a registration {Node, Add|Update} answers
// NodeAdd and NodeTaintChange alike.
class ClusterEventMap {
 public:
  ClusterEventMap() = default;

  // From the plugins that can reject pods (PreEnqueue, PreFilter, Filter, Reserve,
  // Permit): each EnqueueExtensions' EventsToRegister(), or kAllClusterEvents for a
  // plugin that does not implement it. Plugins are borrowed for the call only.
  static ClusterEventMap FromPlugins(std::span<framework::Plugin* const> plugins);

  void Register(std::string_view plugin, framework::ClusterEventWithHint registration);

  // Some registration matches `event` (always true for a wildcard event).
  bool IsEventOfInterest(const framework::ClusterEvent& event) const;
  // Appends every hint whose registration matches `event`, in registration order.
  void MatchingHints(const framework::ClusterEvent& event, std::vector<const RegisteredHint*>* out) const;
  bool empty() const { return entries_.empty(); }
  // The events `plugin` registered, in registration order.
  std::vector<framework::ClusterEvent> EventsOf(std::string_view plugin) const;

 private:
  std::vector<std::pair<framework::ClusterEvent, std::vector<RegisteredHint>>> entries_;
};

}  // namespace ksched::queue
