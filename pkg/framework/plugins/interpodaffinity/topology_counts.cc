#include "pkg/framework/plugins/interpodaffinity/topology_counts.h"

namespace ksched::framework::plugins::interpodaffinity {

const TopologyCounts::Entry* TopologyCounts::Bucket::Find(std::string_view value) const {
  const int32_t i = values.Find(value);
  return i == StringIndex::kNone ? nullptr : &entries[static_cast<size_t>(i)];
}

const TopologyCounts::Bucket* TopologyCounts::FindBucket(std::string_view key) const {
  for (const Bucket& b : buckets_) {
    if (b.key == key) return &b;
  }
  return nullptr;
}

void TopologyCounts::Add(std::string_view key, std::string_view value, int64_t delta, bool erase_zero) {
  if (delta == 0 && erase_zero) return;  // would neither create nor change a pair
  Bucket* bucket = nullptr;
  for (Bucket& b : buckets_) {
    if (b.key == key) bucket = &b;
  }
  if (bucket == nullptr) bucket = &buckets_.emplace_back(Bucket{std::string(key), {}, {}, 0});
  const auto i = static_cast<size_t>(bucket->values.Intern(value));
  if (i == bucket->entries.size()) bucket->entries.emplace_back();
  Entry& e = bucket->entries[i];
  if (!e.present) {
    e = Entry{0, true};
    ++bucket->present;
    ++pairs_;
  }
  e.count += delta;
  if (erase_zero && e.count == 0) {
    e.present = false;
    --bucket->present;
    --pairs_;
  }
}

int64_t TopologyCounts::Get(std::string_view key, std::string_view value) const {
  const Bucket* b = FindBucket(key);
  const Entry* e = b != nullptr ? b->Find(value) : nullptr;
  return e != nullptr && e->present ? e->count : 0;
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
    const Entry* e = v != nullptr ? b.Find(*v) : nullptr;
    if (e != nullptr && e->present && e->count > 0) return true;
  }
  return false;
}

int64_t TopologyCounts::Sum(const api::StringMap& labels) const {
  int64_t sum = 0;
  for (const Bucket& b : buckets_) {
    if (b.present == 0) continue;
    const std::string* v = labels.Get(b.key);
    const Entry* e = v != nullptr ? b.Find(*v) : nullptr;
    if (e != nullptr && e->present) sum += e->count;
  }
  return sum;
}

bool TopologyCounts::operator==(const TopologyCounts& other) const {
  if (pairs_ != other.pairs_) return false;
  for (const Bucket& b : buckets_) {
    for (size_t i = 0; i < b.entries.size(); ++i) {
      const Entry& e = b.entries[i];
      if (e.present && other.Get(b.key, b.values.at(static_cast<int32_t>(i))) != e.count) return false;
    }
  }
  return true;
}

}  // namespace ksched::framework::plugins::interpodaffinity
