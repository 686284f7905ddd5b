// Writers (informer handlers, the binding cycle) and the scheduling thread's snapshots at
// the same time; run under TSan to check the locking.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "pkg/cache/cache.h"
#include "pkg/cache/cache_test_util.h"

namespace ksched::cache {
namespace {

using testing::MakeNode;
using testing::MakePod;
using testing::Res;

TEST(CacheConcurrencyTest, WritersAndSnapshotter) {
  constexpr int kNodes = 8;
  constexpr int kWriters = 3;
  constexpr int kPodsPerWriter = 300;
  auto cache = NewCache();
  for (int i = 0; i < kNodes; ++i) ASSERT_TRUE(cache->AddNode(MakeNode("n" + std::to_string(i))).ok());

  std::atomic<bool> done{false};
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      for (int i = 0; i < kPodsPerWriter; ++i) {
        std::string node = "n" + std::to_string((w + i) % kNodes);
        auto pod = MakePod("w" + std::to_string(w) + "-" + std::to_string(i), node, Res({{"cpu", "10m"}}));
        EXPECT_TRUE(cache->AssumePod(pod).ok());
        EXPECT_TRUE(cache->IsAssumedPod(*pod));
        if (i % 3 == 0) {
          EXPECT_TRUE(cache->ForgetPod(*pod).ok());
        } else {
          EXPECT_TRUE(cache->FinishBinding(*pod).ok());
          EXPECT_TRUE(cache->AddPod(pod).ok());
          if (i % 3 == 1) {
            EXPECT_TRUE(cache->RemovePod(*pod).ok());
          }
        }
        if (w == 0 && i % 50 == 0) {
          // Node churn: a node with pods becomes a ghost and comes back.
          auto n = MakeNode("n" + std::to_string(i % kNodes), "8", "16Gi");
          EXPECT_TRUE(cache->RemoveNode(*n).ok());
          EXPECT_TRUE(cache->AddNode(n).ok());
        }
      }
    });
  }
  std::thread snapshotter([&] {
    Snapshot snap;
    std::vector<NodeInfoPtr> held;  // copies from earlier cycles, still read later
    while (!done.load()) {
      Status s = cache->UpdateSnapshot(snap);
      EXPECT_TRUE(s.ok()) << s.ToString();
      int64_t total = 0;
      for (const auto& info : snap.List()) {
        int64_t sum = 0;
        for (const auto& e : info->pods()) sum += e.request.request.milli_cpu;
        EXPECT_EQ(sum, info->requested().milli_cpu);
        total += sum;
      }
      if (!snap.List().empty()) held.push_back(snap.List()[0]);
      for (const auto& h : held) EXPECT_GE(h->requested().milli_cpu, 0);
      if (held.size() > 64) held.clear();
      (void)cache->Dump();
      (void)total;
    }
  });
  for (auto& t : writers) t.join();
  done = true;
  snapshotter.join();

  // Every third pod stays (added and never removed).
  size_t kept = 0;
  for (int i = 0; i < kPodsPerWriter; ++i) kept += (i % 3 == 2);
  EXPECT_EQ(cache->PodCount(), kept * kWriters);
  EXPECT_EQ(cache->AssumedPodCount(), 0u);
  Snapshot fresh;
  ASSERT_TRUE(cache->UpdateSnapshot(fresh).ok());
  int64_t cpu = 0;
  for (const auto& info : fresh.List()) cpu += info->requested().milli_cpu;
  EXPECT_EQ(cpu, static_cast<int64_t>(kept * kWriters * 10));
}

}  // namespace
}  // namespace ksched::cache
