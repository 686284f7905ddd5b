#include "pkg/queue/backoff.h"

#include <gtest/gtest.h>

namespace ksched::queue {
namespace {

using std::chrono::seconds;

// backoff = initial * 2^(attempts-1), capped at max (defaults 1s/10s); the doubling must
// not overflow (upstream pkg/scheduler/internal/queue/scheduling_queue.go,
// calculateBackoffDuration; DefaultPodInitialBackoffDuration, DefaultPodMaxBackoffDuration).
TEST(BackoffTest, DoublesAndCaps) {
  struct Case {
    int attempts;
    Clock::duration initial, max, want;
  };
  const Case cases[] = {
      {0, seconds(1), seconds(10), seconds(1)},   {1, seconds(1), seconds(10), seconds(1)},
      {2, seconds(1), seconds(10), seconds(2)},   {3, seconds(1), seconds(10), seconds(4)},
      {4, seconds(1), seconds(10), seconds(8)},   {5, seconds(1), seconds(10), seconds(10)},
      {1000, seconds(1), seconds(10), seconds(10)}, {3, seconds(20), seconds(10), seconds(10)},
      {200, Clock::duration::max() / 3, Clock::duration::max(), Clock::duration::max()},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(BackoffDuration(c.attempts, c.initial, c.max), c.want) << "attempts=" << c.attempts;
  }
}

}  // namespace
}  // namespace ksched::queue
