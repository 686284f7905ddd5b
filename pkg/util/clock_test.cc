#include "pkg/util/clock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace ksched {
namespace {

using namespace std::chrono_literals;

TEST(FakeClockTest, AdvanceWakesSleeperAtDeadline) {
  FakeClock clock;
  auto deadline = clock.Now() + 10s;
  std::atomic<bool> woke{false};
  std::jthread t([&](std::stop_token st) { woke = clock.SleepUntil(deadline, st); });
  ASSERT_TRUE(clock.WaitForSleepers(1));
  clock.Advance(9s);
  EXPECT_EQ(clock.Sleepers(), 1);  // still asleep one second before the deadline
  clock.Advance(1s);
  t.join();
  EXPECT_TRUE(woke);
}

TEST(FakeClockTest, StopRequestEndsSleep) {
  FakeClock clock;
  std::atomic<int> result{-1};
  std::jthread t([&](std::stop_token st) { result = clock.SleepFor(1h, st) ? 1 : 0; });
  ASSERT_TRUE(clock.WaitForSleepers(1));
  t.request_stop();
  t.join();
  EXPECT_EQ(result, 0);
}

TEST(FakeClockTest, WallTimeMovesWithMonotonicTime) {
  FakeClock clock;
  auto w = clock.WallNow();
  clock.Advance(90s);
  EXPECT_EQ(clock.WallNow() - w, std::chrono::duration_cast<Clock::wall_time::duration>(90s));
}

TEST(ClockWakeupTest, NotifyEndsArmedSleep) {
  FakeClock clock;
  ClockWakeup wakeup;
  std::atomic<int> result{-1};
  std::stop_token woken = wakeup.Arm();
  std::jthread t([&] { result = clock.SleepFor(1h, woken) ? 1 : 0; });
  ASSERT_TRUE(clock.WaitForSleepers(1));
  wakeup.Notify();
  t.join();
  EXPECT_EQ(result, 0);
}

TEST(ClockWakeupTest, NotifyBeforeSleepIsNotLost) {
  FakeClock clock;
  ClockWakeup wakeup;
  std::stop_token woken = wakeup.Arm();
  wakeup.Notify();
  EXPECT_FALSE(clock.SleepFor(1h, woken));
}

TEST(ClockWakeupTest, ArmAfterNotifyStartsAFreshWait) {
  FakeClock clock;
  ClockWakeup wakeup;
  wakeup.Arm();
  wakeup.Notify();  // ends the previous wait only
  std::stop_token woken = wakeup.Arm();
  EXPECT_FALSE(woken.stop_requested());
  std::atomic<int> result{-1};
  std::jthread t([&] { result = clock.SleepFor(10s, woken) ? 1 : 0; });
  ASSERT_TRUE(clock.WaitForSleepers(1));
  clock.Advance(10s);
  t.join();
  EXPECT_EQ(result, 1);  // the deadline, on the fake clock, ended it
}

TEST(RealClockTest, StopRequestEndsSleepEarly) {
  std::stop_source src;
  src.request_stop();
  EXPECT_FALSE(RealClock().SleepFor(1h, src.get_token()));
}

}  // namespace
}  // namespace ksched
