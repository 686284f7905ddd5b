#include "pkg/client/rate_limiter.h"

#include <gtest/gtest.h>

namespace ksched::client {
namespace {

using namespace std::chrono_literals;

TEST(TokenBucketTest, BurstThenQps) {
  FakeClock clock;
  TokenBucket b(/*qps=*/10, /*burst=*/3, clock.Now());
  for (int i = 0; i < 3; ++i) EXPECT_EQ(b.TryTake(clock.Now()), Clock::duration::zero()) << i;
  auto wait = b.TryTake(clock.Now());
  EXPECT_GT(wait, 99ms);
  EXPECT_LE(wait, 100ms);
  clock.Advance(100ms);
  EXPECT_EQ(b.TryTake(clock.Now()), Clock::duration::zero());
  // Tokens never accumulate beyond the burst.
  clock.Advance(1h);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(b.TryTake(clock.Now()), Clock::duration::zero());
  EXPECT_GT(b.TryTake(clock.Now()), Clock::duration::zero());
}

TEST(TokenBucketTest, NonPositiveQpsDisablesLimiting) {
  FakeClock clock;
  TokenBucket b(0, 1, clock.Now());
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(b.TryTake(clock.Now()), Clock::duration::zero());
}

}  // namespace
}  // namespace ksched::client
