// A plugin's EventsToRegister, looked up in tests: which registration covers a resource,
// and what its queueing hint answers.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "pkg/framework/cluster_event.h"

namespace ksched::testing {

// The registration for `resource` (with exactly the actions `action`, when given); null
// when the plugin registers none.
inline const framework::ClusterEventWithHint* FindRegistration(
    const std::vector<framework::ClusterEventWithHint>& events, framework::EventResource resource,
    std::optional<framework::ActionType> action = std::nullopt) {
  for (const auto& e : events) {
    if (e.event.resource == resource && (!action || e.event.action_type == *action)) return &e;
  }
  return nullptr;
}

// What the registration's hint answers for the event; kQueue for a registration without
// a hint. A hint error fails the test and counts as kQueue, as the queue treats it.
inline framework::QueueingHint RunHint(const framework::ClusterEventWithHint& e, const api::Pod& pod,
                                       const void* old_obj, const void* new_obj) {
  if (!e.hint_fn) return framework::QueueingHint::kQueue;
  auto h = e.hint_fn(pod, old_obj, new_obj);
  EXPECT_TRUE(h.ok()) << h.status().message();
  return h.ok() ? *h : framework::QueueingHint::kQueue;
}

}  // namespace ksched::testing
