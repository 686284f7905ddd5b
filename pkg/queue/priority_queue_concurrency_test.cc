// Producers and consumers on one queue (run under TSan in CI): every pod added is popped
// exactly once, nothing is lost or duplicated, and Close() releases blocked consumers.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>

#include "pkg/queue/priority_queue.h"
#include "pkg/queue/queue_test_util.h"

namespace ksched::queue {
namespace {

using testing::MakePod;

TEST(PriorityQueueConcurrencyTest, ProducersConsumersNoLossNoDuplicates) {
  FakeClock clock;
  QueueOptions o;
  o.clock = &clock;
  PriorityQueue q(std::move(o));
  q.Run();

  constexpr int kProducers = 4, kPerProducer = 2000, kConsumers = 3;
  std::mutex mu;
  std::multiset<std::string> seen;
  std::atomic<int> popped{0};
  std::vector<std::thread> consumers;
  for (int c = 0; c < kConsumers; ++c) {
    consumers.emplace_back([&] {
      while (auto info = q.Pop()) {
        // Every third first attempt fails with an error and comes back through backoff.
        if (info->attempts == 1 && std::hash<std::string>()(info->Key()) % 3 == 0) {
          ASSERT_TRUE(q.AddUnschedulableIfNotPresent(std::move(info)).ok());
          continue;
        }
        q.Done(info->pod());
        {
          std::lock_guard lock(mu);
          seen.insert(info->Key());
        }
        popped.fetch_add(1);
      }
    });
  }
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      for (int i = 0; i < kPerProducer; ++i) {
        auto pod = MakePod("p" + std::to_string(p) + "-" + std::to_string(i), i % 7);
        ASSERT_TRUE(q.Add(pod).ok());
        if (i % 50 == 0) q.MoveAllToActiveOrBackoffQueue(framework::kNodeAdd);
        if (i % 100 == 0) (void)q.PendingCounts();
      }
    });
  }
  for (auto& t : producers) t.join();
  // Drive the backoff flush (on the fake clock) until everything has been popped.
  const int total = kProducers * kPerProducer;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (popped.load() < total && std::chrono::steady_clock::now() < deadline) {
    clock.Advance(std::chrono::seconds(1));
    q.FlushBackoffQCompleted();
    std::this_thread::yield();
  }
  q.Close();
  for (auto& t : consumers) t.join();
  EXPECT_EQ(popped.load(), total);
  std::lock_guard lock(mu);
  EXPECT_EQ(seen.size(), static_cast<size_t>(total));
  std::set<std::string> unique(seen.begin(), seen.end());
  EXPECT_EQ(unique.size(), seen.size());
  EXPECT_EQ(q.Len(), 0u);
  EXPECT_EQ(q.InFlightPods(), 0u);
}

TEST(PriorityQueueConcurrencyTest, CloseWakesBlockedPop) {
  PriorityQueue q(QueueOptions{});
  std::thread consumer([&] { EXPECT_EQ(q.Pop(), nullptr); });
  q.Close();
  consumer.join();
}

}  // namespace
}  // namespace ksched::queue
