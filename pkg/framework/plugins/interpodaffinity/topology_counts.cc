#include "pkg/framework/plugins/interpodaffinity/topology_counts.h"

#include <functional>
#include <utility>

namespace ksched::framework::plugins::interpodaffinity {
namespace {

size_t HashOf(std::string_view s) { return std::hash<std::string_view>{}(s); }

}  // namespace

TopologyCounts::TopologyCounts(const TopologyCounts& other) { CopyFrom(other); }

TopologyCounts& TopologyCounts::operator=(const TopologyCounts& other) {
  if (this != &other) {
    buckets_.clear();
    pairs_ = 0;
    storage_ = std::make_unique<std::deque<std::string>>();
    CopyFrom(other);
  }
  return *this;
}

void TopologyCounts::CopyFrom(const TopologyCounts& other) {
  for (const Bucket& b : other.buckets_) {
    Bucket& mine = buckets_.emplace_back(Bucket{b.key, {}, 0, 0});
    for (const Slot& s : b.slots) {
      if (s.value.data() == nullptr) continue;
      Slot& copy = Insert(mine, s.value);
      copy.count = s.count;
      copy.present = s.present;
      if (s.present) ++mine.present;
    }
  }
  pairs_ = other.pairs_;
}

const TopologyCounts::Slot* TopologyCounts::Bucket::Find(std::string_view value) const {
  if (slots.empty()) return nullptr;
  const size_t mask = slots.size() - 1;
  for (size_t i = HashOf(value) & mask;; i = (i + 1) & mask) {
    const Slot& s = slots[i];
    if (s.value.data() == nullptr) return nullptr;
    if (s.value == value) return &s;
  }
}

TopologyCounts::Bucket* TopologyCounts::FindBucket(std::string_view key) {
  for (Bucket& b : buckets_) {
    if (b.key == key) return &b;
  }
  return nullptr;
}

const TopologyCounts::Bucket* TopologyCounts::FindBucket(std::string_view key) const {
  for (const Bucket& b : buckets_) {
    if (b.key == key) return &b;
  }
  return nullptr;
}

TopologyCounts::Slot& TopologyCounts::Insert(Bucket& bucket, std::string_view value) {
  // Grow at 1/2 load so probes stay short; rehashing moves views, not strings.
  if ((bucket.used + 1) * 2 > bucket.slots.size()) {
    std::vector<Slot> old = std::move(bucket.slots);
    bucket.slots.assign(old.empty() ? 16 : old.size() * 2, Slot{});
    const size_t mask = bucket.slots.size() - 1;
    for (const Slot& s : old) {
      if (s.value.data() == nullptr) continue;
      size_t i = HashOf(s.value) & mask;
      while (bucket.slots[i].value.data() != nullptr) i = (i + 1) & mask;
      bucket.slots[i] = s;
    }
  }
  const size_t mask = bucket.slots.size() - 1;
  size_t i = HashOf(value) & mask;
  for (;; i = (i + 1) & mask) {
    Slot& s = bucket.slots[i];
    if (s.value.data() == nullptr) break;
    if (s.value == value) return s;
  }
  const std::string& interned = storage_->emplace_back(value);
  Slot& s = bucket.slots[i];
  s.value = std::string_view(interned.data(), interned.size());
  ++bucket.used;
  return s;
}

void TopologyCounts::Add(std::string_view key, std::string_view value, int64_t delta, bool erase_zero) {
  Bucket* bucket = FindBucket(key);
  if (bucket == nullptr) {
    if (delta == 0 && erase_zero) return;
    bucket = &buckets_.emplace_back(Bucket{std::string(key), {}, 0, 0});
  }
  if (!erase_zero || delta != 0) {
    Slot& s = Insert(*bucket, value);
    if (!s.present) {
      s.present = true;
      s.count = 0;
      ++bucket->present;
      ++pairs_;
    }
    s.count += delta;
    if (erase_zero && s.count == 0) {
      s.present = false;
      --bucket->present;
      --pairs_;
    }
  }
}

int64_t TopologyCounts::Get(std::string_view key, std::string_view value) const {
  const Bucket* b = FindBucket(key);
  if (b == nullptr) return 0;
  const Slot* s = b->Find(value);
  return s != nullptr && s->present ? s->count : 0;
}

size_t TopologyCounts::num_keys() const {
  size_t n = 0;
  for (const Bucket& b : buckets_) n += b.present == 0 ? 0 : 1;
  return n;
}

bool TopologyCounts::AnyPositive(const api::StringMap& labels) const {
  for (const Bucket& b : buckets_) {
    if (b.present == 0) continue;
    const std::string* v = labels.Get(b.key);
    if (v == nullptr) continue;
    const Slot* s = b.Find(*v);
    if (s != nullptr && s->present && s->count > 0) return true;
  }
  return false;
}

int64_t TopologyCounts::Sum(const api::StringMap& labels) const {
  int64_t sum = 0;
  for (const Bucket& b : buckets_) {
    if (b.present == 0) continue;
    const std::string* v = labels.Get(b.key);
    if (v == nullptr) continue;
    const Slot* s = b.Find(*v);
    if (s != nullptr && s->present) sum += s->count;
  }
  return sum;
}

bool TopologyCounts::operator==(const TopologyCounts& other) const {
  if (pairs_ != other.pairs_) return false;
  for (const Bucket& b : buckets_) {
    for (const Slot& s : b.slots) {
      if (s.present && other.Get(b.key, s.value) != s.count) return false;
    }
  }
  return true;
}

}  // namespace ksched::framework::plugins::interpodaffinity
