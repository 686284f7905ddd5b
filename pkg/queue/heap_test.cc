#include "pkg/queue/heap.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <vector>

namespace ksched::queue {
namespace {

struct Item {
  int value = 0;
  size_t pos = 0;
};
struct ItemLess {
  bool operator()(const Item& a, const Item& b) const { return a.value < b.value; }
};
using Heap = IndexedHeap<Item, ItemLess, &Item::pos>;

TEST(IndexedHeapTest, PopsInOrder) {
  std::mt19937 rng(7);
  std::vector<std::unique_ptr<Item>> items;
  Heap h;
  for (int i = 0; i < 1000; ++i) {
    items.push_back(std::make_unique<Item>(Item{static_cast<int>(rng() % 100)}));
    h.Push(items.back().get());
  }
  int last = -1;
  while (!h.empty()) {
    Item* top = h.Pop();
    EXPECT_GE(top->value, last);
    last = top->value;
  }
}

TEST(IndexedHeapTest, RemoveAndFixKeepOrder) {
  std::vector<std::unique_ptr<Item>> items;
  Heap h;
  for (int i = 0; i < 100; ++i) {
    items.push_back(std::make_unique<Item>(Item{i}));
    h.Push(items.back().get());
  }
  // Delete by handle (the queue's delete-by-key), update in place both ways.
  for (int i = 0; i < 100; i += 3) h.Remove(items[i].get());
  items[50]->value = -5;
  h.Fix(items[50].get());
  items[1]->value = 1000;
  h.Fix(items[1].get());
  EXPECT_FALSE(h.Contains(items[0].get()));
  EXPECT_TRUE(h.Contains(items[2].get()));
  EXPECT_EQ(h.Top(), items[50].get());
  std::vector<int> out;
  while (!h.empty()) out.push_back(h.Pop()->value);
  EXPECT_TRUE(std::is_sorted(out.begin(), out.end()));
  EXPECT_EQ(out.size(), 100u - 34u);
  EXPECT_EQ(out.back(), 1000);
}

}  // namespace
}  // namespace ksched::queue
