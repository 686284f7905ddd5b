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

namespace {
// More shared counts than this are folded: a read sums over all of them.
constexpr size_t kMaxShared = 8;
}  // namespace

void TopologyCounts::AddShared(std::string_view key, const cache::TopologyValueCounts& counts, int64_t multiplier) {
  if (counts.empty() || multiplier == 0) return;
  shared_.push_back({key, &counts, multiplier});
  if (pairs_ != 0 || multiplier < 0 || shared_.size() > kMaxShared) Fold();
}

void TopologyCounts::Fold() {
  std::vector<Shared> shared;
  shared.swap(shared_);
  for (const Shared& s : shared) {
    s.counts->ForEach([&](std::string_view value, int64_t n) { Add(s.key, value, n * s.multiplier); });
  }
}

TopologyCounts TopologyCounts::Folded() const {
  TopologyCounts copy = *this;
  copy.Fold();
  return copy;
}

void TopologyCounts::Add(std::string_view key, std::string_view value, int64_t delta, bool erase_zero) {
  if (delta == 0 && erase_zero) return;  // would neither create nor change a pair
  if (!shared_.empty()) Fold();
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
  if (!shared_.empty()) {
    int64_t sum = 0;
    for (const Shared& s : shared_) {
      if (s.key == key) sum += s.counts->Get(value) * s.multiplier;
    }
    return sum;
  }
  const Bucket* b = FindBucket(key);
  const Entry* e = b != nullptr ? b->Find(value) : nullptr;
  return e != nullptr && e->present ? e->count : 0;
}

size_t TopologyCounts::size() const { return shared_.empty() ? pairs_ : Folded().pairs_; }

size_t TopologyCounts::num_keys() const {
  if (!shared_.empty()) return Folded().num_keys();
  size_t n = 0;
  for (const Bucket& b : buckets_) n += b.present == 0 ? 0 : 1;
  return n;
}

bool TopologyCounts::AnyPositive(const api::StringMap& labels) const {
  // Shared counts are positive (pods counted) and multipliers too (PreFilter's).
  for (const Shared& s : shared_) {
    const std::string* v = labels.Get(s.key);
    if (v != nullptr && s.counts->Get(*v) * s.multiplier > 0) return true;
  }
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
  for (const Shared& s : shared_) {
    if (const std::string* v = labels.Get(s.key)) sum += s.counts->Get(*v) * s.multiplier;
  }
  for (const Bucket& b : buckets_) {
    if (b.present == 0) continue;
    const std::string* v = labels.Get(b.key);
    const Entry* e = v != nullptr ? b.Find(*v) : nullptr;
    if (e != nullptr && e->present) sum += e->count;
  }
  return sum;
}

bool TopologyCounts::operator==(const TopologyCounts& other) const {
  if (!shared_.empty() || !other.shared_.empty()) return Folded() == other.Folded();
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
