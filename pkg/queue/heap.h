// IndexedHeap: a binary min-heap of non-owning pointers whose items record their own
// position (through a member pointer), so removing or re-sifting a given item is
// O(log n) with no lookup. The scheduling queue keys pods by namespace/name in one map
// for all three sub-queues and keeps these heaps over the map's entries: moving a pod
// between sub-queues never re-hashes, and a pod has exactly one entry, so it cannot be
// in two sub-queues at once.
#pragma once

#include <cassert>
#include <cstddef>
#include <utility>
#include <vector>

namespace ksched::queue {

// Less(a, b): a comes out first. Pos: a size_t member of T holding the item's index.
template <typename T, typename Less, size_t T::*Pos>
class IndexedHeap {
 public:
  explicit IndexedHeap(Less less = Less()) : less_(std::move(less)) {}

  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  void reserve(size_t n) { items_.reserve(n); }
  // Unordered view, for listings.
  const std::vector<T*>& items() const { return items_; }

  T* Top() const { return items_.empty() ? nullptr : items_.front(); }

  void Push(T* item) {
    items_.push_back(item);
    item->*Pos = items_.size() - 1;
    Up(items_.size() - 1);
  }

  T* Pop() {
    assert(!items_.empty());
    T* top = items_.front();
    RemoveAt(0);
    return top;
  }

  // `item` must be in this heap.
  void Remove(T* item) { RemoveAt(item->*Pos); }

  // Restores order after `item`'s sort key changed (update in place).
  void Fix(T* item) {
    size_t i = item->*Pos;
    if (!Down(i)) Up(i);
  }

  bool Contains(const T* item) const {
    size_t i = item->*Pos;
    return i < items_.size() && items_[i] == item;
  }

 private:
  void Set(size_t i, T* item) {
    items_[i] = item;
    item->*Pos = i;
  }

  void RemoveAt(size_t i) {
    assert(i < items_.size());
    size_t last = items_.size() - 1;
    if (i != last) {
      Set(i, items_[last]);
      items_.pop_back();
      if (!Down(i)) Up(i);
    } else {
      items_.pop_back();
    }
  }

  void Up(size_t i) {
    T* item = items_[i];
    while (i > 0) {
      size_t parent = (i - 1) / 2;
      if (!less_(*item, *items_[parent])) break;
      Set(i, items_[parent]);
      i = parent;
    }
    Set(i, item);
  }

  // Returns true if the item moved.
  bool Down(size_t i) {
    size_t start = i;
    T* item = items_[i];
    size_t n = items_.size();
    while (true) {
      size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && less_(*items_[child + 1], *items_[child])) ++child;
      if (!less_(*items_[child], *item)) break;
      Set(i, items_[child]);
      i = child;
    }
    Set(i, item);
    return i != start;
  }

  Less less_;
  std::vector<T*> items_;
};

}  // namespace ksched::queue
