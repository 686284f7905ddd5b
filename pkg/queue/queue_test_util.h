// Helpers shared by the queue tests.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "pkg/api/types.h"
#include "pkg/framework/queue_plugins.h"
#include "tests/fakes/builders.h"

namespace ksched::queue::testing {

inline api::PodPtr MakePod(const std::string& name, int32_t priority = 0,
                           const std::function<void(api::Pod&)>& mutate = nullptr) {
  api::Pod p = ksched::testing::PodBuilder(name).UID("uid-" + name).Priority(priority).Build();
  if (mutate) mutate(p);
  return std::make_shared<const api::Pod>(std::move(p));
}

inline api::PodPtr WithChange(const api::PodPtr& pod, const std::function<void(api::Pod&)>& mutate) {
  auto p = std::make_shared<api::Pod>(*pod);
  mutate(*p);
  return p;
}

// A plugin that registers the given events (with optional hints).
class FakeEnqueuePlugin : public framework::Plugin, public framework::EnqueueExtensions {
 public:
  FakeEnqueuePlugin(std::string name, std::vector<framework::ClusterEventWithHint> events)
      : name_(std::move(name)), events_(std::move(events)) {}
  std::string_view Name() const override { return name_; }
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override { return events_; }

 private:
  std::string name_;
  std::vector<framework::ClusterEventWithHint> events_;
};

// A plugin that does not implement EnqueueExtensions.
class PlainPlugin : public framework::Plugin {
 public:
  explicit PlainPlugin(std::string name) : name_(std::move(name)) {}
  std::string_view Name() const override { return name_; }

 private:
  std::string name_;
};

}  // namespace ksched::queue::testing
