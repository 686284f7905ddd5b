#include "pkg/framework/runtime/waiting_pods.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

namespace ksched::framework::runtime {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

api::PodPtr Pod() {
  auto p = std::make_shared<api::Pod>();
  p->metadata.name = "p";
  p->metadata.namespace_ = "ns";
  return p;
}

TEST(WaitingPod, EarliestTimeoutRejects) {
  FakeClock clock;
  WaitingPod wp(Pod(), {{"Slow", seconds(90)}, {"Fast", milliseconds(1500)}}, clock);
  Status result;
  std::thread waiter([&] { result = wp.Wait(); });
  ASSERT_TRUE(clock.WaitForSleepers(1));
  clock.Advance(milliseconds(1500));
  waiter.join();
  EXPECT_EQ(result.Message(), "rejected due to timeout after waiting 1.5s at plugin Fast");
  EXPECT_EQ(result.plugin(), "Fast");
}

TEST(WaitingPod, AllowOfTheEarliestThenTheOtherTimesOut) {
  FakeClock clock;
  WaitingPod wp(Pod(), {{"A", seconds(1)}, {"B", seconds(60)}}, clock);
  Status result;
  std::thread waiter([&] { result = wp.Wait(); });
  ASSERT_TRUE(clock.WaitForSleepers(1));
  wp.Allow("A");
  EXPECT_THAT(wp.GetPendingPlugins(), ::testing::ElementsAre("B"));
  clock.Advance(seconds(2));
  ASSERT_TRUE(clock.WaitForSleepers(1));  // woke at A's deadline, sleeps again for B
  clock.Advance(seconds(58));
  waiter.join();
  EXPECT_EQ(result.Message(), "rejected due to timeout after waiting 1m0s at plugin B");
}

TEST(WaitingPod, TimeoutIsCapped) {
  FakeClock clock;
  WaitingPod wp(Pod(), {{"A", std::chrono::hours(2)}}, clock);
  Status result;
  std::thread waiter([&] { result = wp.Wait(); });
  ASSERT_TRUE(clock.WaitForSleepers(1));
  clock.Advance(std::chrono::minutes(15));
  waiter.join();
  EXPECT_EQ(result.Message(), "rejected due to timeout after waiting 15m0s at plugin A");
}

TEST(WaitingPod, FirstDecisionWins) {
  FakeClock clock;
  WaitingPod wp(Pod(), {{"A", seconds(1)}}, clock);
  wp.Reject("A", "no");
  wp.Allow("A");
  EXPECT_EQ(wp.Wait().code(), Code::kUnschedulable);
}

TEST(WaitingPodKey, UidOrKey) {
  api::Pod p;
  p.metadata.namespace_ = "ns";
  p.metadata.name = "a";
  EXPECT_EQ(WaitingPodKey(p), "ns/a");
  p.metadata.uid = "u1";
  EXPECT_EQ(WaitingPodKey(p), "u1");
}

}  // namespace
}  // namespace ksched::framework::runtime
