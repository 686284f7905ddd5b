#include "pkg/framework/plugins/queuesort/priority_sort.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>

namespace ksched::framework::plugins {
namespace {

QueuedPodInfo Info(std::optional<int32_t> priority, int ts_seconds) {
  auto pod = std::make_shared<api::Pod>();
  pod->metadata.name = "p";
  pod->spec.priority = priority;
  QueuedPodInfo info(pod);
  info.timestamp = Clock::time_point(std::chrono::seconds(ts_seconds));
  return info;
}

// Higher .spec.priority first; equal priority, earlier timestamp first (upstream
// pkg/scheduler/framework/plugins/queuesort/priority_sort.go, PrioritySort.Less).
TEST(PrioritySortTest, Less) {
  struct Case {
    std::string name;
    std::optional<int32_t> pa;
    int ta;
    std::optional<int32_t> pb;
    int tb;
    bool less;
  };
  const Case cases[] = {
      {"higher priority first", 10, 5, 1, 1, true},
      {"lower priority later", 1, 1, 10, 5, false},
      {"equal priority, earlier first", 5, 1, 5, 2, true},
      {"equal priority, later second", 5, 2, 5, 1, false},
      {"identical is not less", 5, 1, 5, 1, false},
      {"unset priority is 0", std::nullopt, 1, 1, 2, false},
      {"negative below unset", -1, 1, std::nullopt, 2, false},
  };
  PrioritySort plugin;
  EXPECT_EQ(plugin.Name(), "PrioritySort");
  for (const Case& c : cases) {
    EXPECT_EQ(plugin.Less(Info(c.pa, c.ta), Info(c.pb, c.tb)), c.less) << c.name;
  }
}

}  // namespace
}  // namespace ksched::framework::plugins
