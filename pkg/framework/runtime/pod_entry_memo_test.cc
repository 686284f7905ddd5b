#include "pkg/framework/runtime/pod_entry_memo.h"

#include <gtest/gtest.h>

#include <memory>

#include "tests/fakes/builders.h"

namespace ksched::framework::runtime {
namespace {

using ksched::testing::PodBuilder;

TEST(PodEntryMemoTest, OneEntryPerPodObjectAndANewOneForAnUpdate) {
  PodEntryMemo memo;
  api::PodPtr pod = PodBuilder("p").UID("u").Req({{"cpu", "300m"}}).Obj();
  cache::PodEntry first = memo.Get(pod);
  EXPECT_EQ(first.pod, pod);
  EXPECT_EQ(first.request.request.milli_cpu, 300);
  // The same object: the remembered entry (its affinity terms are the same shared object).
  EXPECT_EQ(memo.Get(pod).pod, pod);
  // An update is a new object: its own entry, never the old request.
  api::PodPtr updated = PodBuilder("p").UID("u").Req({{"cpu", "500m"}}).Obj();
  EXPECT_EQ(memo.Get(updated).request.request.milli_cpu, 500);
  // A dead object's address reused by another pod is not mistaken for it.
  const api::Pod* address = pod.get();
  pod.reset();
  first = {};
  for (int i = 0; i < 100; ++i) {
    api::PodPtr other = PodBuilder("q").UID("v").Req({{"cpu", "700m"}}).Obj();
    cache::PodEntry e = memo.Get(other);
    EXPECT_EQ(e.request.request.milli_cpu, 700);
    if (other.get() == address) break;
  }
}

TEST(PodEntryMemoTest, BoundedSize) {
  PodEntryMemo memo;
  std::vector<api::PodPtr> keep;
  for (size_t i = 0; i < PodEntryMemo::kMaxEntries + 10; ++i) {
    keep.push_back(PodBuilder("p" + std::to_string(i)).Req({{"cpu", "100m"}}).Obj());
    EXPECT_EQ(memo.Get(keep.back()).pod, keep.back());
  }
  EXPECT_LE(memo.size(), PodEntryMemo::kMaxEntries);
}

}  // namespace
}  // namespace ksched::framework::runtime
