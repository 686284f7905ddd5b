// Helpers shared by the queue tests (the fake plugins are in tests/fakes/fake_plugins.h).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "pkg/api/types.h"
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

}  // namespace ksched::queue::testing
