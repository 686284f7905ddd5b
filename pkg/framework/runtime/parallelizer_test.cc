#include "pkg/framework/runtime/parallelizer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace ksched::framework::runtime {
namespace {

TEST(Parallelizer, ChunkSizeLikeUpstream) {
  struct Case {
    int n, parallelism, want;
  };
  for (const Case& c : {Case{0, 16, 1}, Case{1, 16, 1}, Case{5, 16, 1}, Case{100, 16, 7}, Case{1000, 16, 31},
                        Case{1000, 1, 31}, Case{10000, 16, 100}}) {
    EXPECT_EQ(Parallelizer::ChunkSize(c.n, c.parallelism), c.want) << c.n << " " << c.parallelism;
  }
}

TEST(Parallelizer, EveryPieceExactlyOnce) {
  for (int parallelism : {1, 2, 4, 16}) {
    Parallelizer p(parallelism);
    EXPECT_EQ(p.parallelism(), parallelism);
    for (int n : {0, 1, 7, 100, 1000, 10007}) {
      std::vector<std::atomic<int>> hits(n);
      p.Until(n, [&](int i) { hits[i].fetch_add(1); });
      for (int i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "parallelism " << parallelism << " n " << n;
    }
  }
}

TEST(Parallelizer, RunsConcurrently) {
  Parallelizer p(4);
  std::atomic<int> running{0}, peak{0};
  p.Until(400, [&](int) {
    int now = running.fetch_add(1) + 1;
    int seen = peak.load();
    while (now > seen && !peak.compare_exchange_weak(seen, now)) {
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    running.fetch_sub(1);
  });
  EXPECT_GT(peak.load(), 1);
  EXPECT_LE(peak.load(), 4);
}

TEST(Parallelizer, StopFlagEndsEarly) {
  Parallelizer p(4);
  std::atomic<bool> stop{false};
  std::atomic<int> done{0};
  p.Until(
      100000,
      [&](int) {
        if (done.fetch_add(1) + 1 >= 50) stop.store(true);
      },
      &stop);
  EXPECT_GE(done.load(), 50);
  EXPECT_LT(done.load(), 100000);
}

TEST(Parallelizer, ManyShortCallsAndConcurrentCallers) {
  Parallelizer p(3);
  std::atomic<long> sum{0};
  auto caller = [&] {
    for (int round = 0; round < 2000; ++round) p.Until(5, [&](int i) { sum.fetch_add(i); });
  };
  std::thread t(caller);
  caller();
  t.join();
  EXPECT_EQ(sum.load(), 2 * 2000 * 10);
}


// The chunks that ran are a prefix of the range, each run in full, whoever set stop.
TEST(Parallelizer, UntilChunksRunsAPrefixOfWholeChunks) {
  Parallelizer p(2);
  for (int round = 0; round < 200; ++round) {
    const int n = 5000;
    std::vector<std::atomic<int>> hits(n);
    std::atomic<bool> stop{false};
    std::atomic<int> done{0};
    p.UntilChunks(
        n,
        [&](int begin, int end) {
          for (int i = begin; i < end; ++i) hits[i].fetch_add(1);
          if (done.fetch_add(end - begin) + (end - begin) >= 500) stop.store(true);
        },
        &stop);
    int i = 0;
    while (i < n && hits[i].load() == 1) ++i;
    ASSERT_GE(i, 500) << "round " << round;
    ASSERT_EQ(i % Parallelizer::ChunkSize(n, 2), 0) << "a chunk ran in part, round " << round;
    for (int j = i; j < n; ++j) ASSERT_EQ(hits[j].load(), 0) << "a gap before index " << j << ", round " << round;
  }
}

bool SleepsWithin(const Parallelizer& p, uint64_t than, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (p.sleeps() <= than) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// Idle workers go to sleep (after the spin, or at once when parked) and the next job
// wakes them; every piece still runs exactly once.
TEST(Parallelizer, SleepingWorkersWakeForTheNextJob) {
  Parallelizer p(3);
  for (bool park : {false, true}) {
    for (int round = 0; round < 20; ++round) {
      const uint64_t before = p.sleeps();
      std::vector<std::atomic<int>> hits(1000);
      p.Until(1000, [&](int i) { hits[i].fetch_add(1); });
      if (park) p.Park();
      ASSERT_TRUE(SleepsWithin(p, before, std::chrono::seconds(5))) << "park " << park;
      std::vector<std::atomic<int>> again(1000);
      p.Until(1000, [&](int i) { again[i].fetch_add(1); });
      for (int i = 0; i < 1000; ++i) ASSERT_EQ(hits[i].load() + again[i].load(), 2) << i;
    }
  }
}

}  // namespace
}  // namespace ksched::framework::runtime
