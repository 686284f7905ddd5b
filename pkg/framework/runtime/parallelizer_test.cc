#include "pkg/framework/runtime/parallelizer.h"

#include <gtest/gtest.h>

#include <atomic>
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

}  // namespace
}  // namespace ksched::framework::runtime
