#include "pkg/framework/runtime/parallelizer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
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

bool AllAsleepWithin(const Parallelizer& p, int workers, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (p.sleeping() < workers) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// Idle workers go to sleep (after the spin, or at once when parked), and jobs after
// that, short or long, still run every piece exactly once.
TEST(Parallelizer, SleepingWorkersWakeForTheNextJob) {
  Parallelizer p(3);
  for (bool park : {false, true}) {
    for (int round = 0; round < 20; ++round) {
      std::vector<std::atomic<int>> hits(1000);
      p.Until(1000, [&](int i) { hits[i].fetch_add(1); });
      if (park) p.Park();
      ASSERT_TRUE(AllAsleepWithin(p, 2, std::chrono::seconds(5))) << "park " << park;
      std::vector<std::atomic<int>> again(1000);
      p.Until(1000, [&](int i) {
        if (i % 100 == 0) std::this_thread::sleep_for(std::chrono::microseconds(20));  // outlasts kWakeAfter
        again[i].fetch_add(1);
      });
      for (int i = 0; i < 1000; ++i) ASSERT_EQ(hits[i].load() + again[i].load(), 2) << i;
    }
  }
}

// Workers asleep are left so for a job the caller finishes within kWakeAfter (no futex
// wake, so no worker wakes and goes back to sleep), and are woken for a longer one.
TEST(Parallelizer, OnlyAJobThatOutlastsKWakeAfterWakesSleepingWorkers) {
  Parallelizer p(3);
  auto all_asleep = [&] {
    p.Park();
    return AllAsleepWithin(p, 2, std::chrono::seconds(5));
  };
  p.Until(100, [](int) {});  // the workers have started
  // A scheduler's preemption from its own thread could stretch a short job past
  // kWakeAfter; one quiet run of five shows the rule.
  bool quiet = false;
  for (int attempt = 0; attempt < 5 && !quiet; ++attempt) {
    ASSERT_TRUE(all_asleep());
    const uint64_t before = p.sleeps();
    std::vector<std::atomic<int>> hits(8);
    p.Until(8, [&](int i) { hits[i].fetch_add(1); });
    for (int i = 0; i < 8; ++i) ASSERT_EQ(hits[i].load(), 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    quiet = p.sleeps() == before && p.sleeping() == 2;
  }
  EXPECT_TRUE(quiet) << "every short job woke the sleeping workers";

  ASSERT_TRUE(all_asleep());
  std::mutex mu;
  std::set<std::thread::id> threads;
  p.Until(40, [&](int) {
    std::this_thread::sleep_for(std::chrono::microseconds(500));
    std::lock_guard<std::mutex> lock(mu);
    threads.insert(std::this_thread::get_id());
  });
  EXPECT_GT(threads.size(), 1u) << "a 20 ms job ran on the caller alone";
}

}  // namespace
}  // namespace ksched::framework::runtime
