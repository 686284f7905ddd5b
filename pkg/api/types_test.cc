#include "pkg/api/types.h"

#include <gtest/gtest.h>

#include "pkg/api/time_format.h"

namespace ksched::api {
namespace {

TEST(StringMapTest, KeepsKeysSortedAndReplaces) {
  StringMap m{{"zone", "a"}, {"app", "web"}};
  m.Set("tier", "front");
  m.Set("app", "api");
  ASSERT_EQ(m.size(), 3u);
  std::vector<std::string> keys;
  for (const auto& [k, v] : m) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"app", "tier", "zone"}));
  ASSERT_NE(m.Get("app"), nullptr);
  EXPECT_EQ(*m.Get("app"), "api");
  EXPECT_EQ(m.Get("missing"), nullptr);
  EXPECT_TRUE(m.Has("zone"));
  EXPECT_EQ(m, (StringMap{{"tier", "front"}, {"zone", "a"}, {"app", "api"}}));
}

TEST(TypesTest, FindResourceAndCondition) {
  ResourceList list{{"cpu", Quantity::FromMilli(500)}, {"memory", Quantity::FromValue(1 << 20)}};
  ASSERT_NE(FindResource(list, "memory"), nullptr);
  EXPECT_EQ(FindResource(list, "memory")->Value(), 1 << 20);
  EXPECT_EQ(FindResource(list, "gpu"), nullptr);

  Pod pod;
  pod.status.conditions.push_back({.type = "Ready", .status = "True"});
  pod.status.conditions.push_back({.type = "PodScheduled", .status = "False"});
  ASSERT_NE(pod.FindCondition("PodScheduled"), nullptr);
  EXPECT_EQ(pod.FindCondition("PodScheduled")->status, "False");
  EXPECT_EQ(pod.FindCondition("Initialized"), nullptr);
}

TEST(TypesTest, TaintEffectNames) {
  EXPECT_EQ(TaintEffectName(TaintEffect::kNoSchedule), "NoSchedule");
  EXPECT_EQ(TaintEffectName(TaintEffect::kPreferNoSchedule), "PreferNoSchedule");
  EXPECT_EQ(TaintEffectName(TaintEffect::kNoExecute), "NoExecute");
  EXPECT_EQ(TaintEffectName(TaintEffect::kNone), "");
}

TEST(TimeFormatTest, MicroTimeAndTime) {
  using namespace std::chrono;
  auto t = sys_days(year(2026) / 11 / 22) + hours(19) + minutes(30) + microseconds(123456);
  EXPECT_EQ(FormatMicroTime(t), "2026-11-22T19:30:00.123456Z");
  EXPECT_EQ(FormatTime(t), "2026-11-22T19:30:00Z");
  EXPECT_EQ(FormatMicroTime(sys_days(year(2026) / 1 / 1)), "2026-01-01T00:00:00.000000Z");
}

}  // namespace
}  // namespace ksched::api
