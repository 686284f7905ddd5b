// A plugin's EventsToRegister, looked up in tests: which registration covers a resource,
// and what its queueing hint answers.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <utility>
#include <vector>

#include "pkg/framework/cluster_event.h"
#include "tests/fakes/fake_handle.h"

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

// A plugin made on a FakeHandle (constructor arguments after the handle), with the
// registrations it returned, for hint tests.
template <typename P>
struct RegisteredPlugin {
  template <typename... Args>
  explicit RegisteredPlugin(Args&&... args) : pl(handle, std::forward<Args>(args)...), events(pl.EventsToRegister()) {}

  // RunHint's answer for the registration of `resource` with exactly `action`, which
  // must exist.
  framework::QueueingHint Hint(framework::EventResource resource, framework::ActionType action, const api::Pod& pod,
                               const void* old_obj, const void* new_obj) const {
    const auto* e = FindRegistration(events, resource, action);
    EXPECT_NE(e, nullptr);
    return e == nullptr ? framework::QueueingHint::kQueue : RunHint(*e, pod, old_obj, new_obj);
  }
  // The hint's own answer, errors included, for the registration of `resource`, which
  // must exist and have a hint.
  StatusOr<framework::QueueingHint> HintOrError(framework::EventResource resource, const api::Pod& pod,
                                                const void* old_obj, const void* new_obj) const {
    const auto* e = FindRegistration(events, resource);
    EXPECT_TRUE(e != nullptr && e->hint_fn);
    if (e == nullptr || !e->hint_fn) return ksched::Internal("no hint registered");
    return e->hint_fn(pod, old_obj, new_obj);
  }

  FakeHandle handle;
  P pl;
  std::vector<framework::ClusterEventWithHint> events;
};

}  // namespace ksched::testing
