#include "pkg/util/string_index.h"

#include <functional>

namespace ksched {
namespace {

size_t HashOf(std::string_view s) { return std::hash<std::string_view>{}(s); }

}  // namespace

StringIndex::StringIndex(const StringIndex& other) {
  Reserve(other.size());
  for (std::string_view s : other.views_) Intern(s);
}

StringIndex& StringIndex::operator=(const StringIndex& other) {
  if (this != &other) {
    StringIndex copy(other);
    *this = std::move(copy);
  }
  return *this;
}

void StringIndex::Reserve(size_t n) {
  views_.reserve(n);
  hashes_.reserve(n);
  size_t capacity = 16;
  while (capacity < n * 2) capacity *= 2;
  if (capacity > slots_.size()) Rehash(capacity);
}

void StringIndex::Rehash(size_t capacity) {
  slots_.assign(capacity, kNone);
  const size_t mask = capacity - 1;
  for (size_t i = 0; i < views_.size(); ++i) {
    size_t at = hashes_[i] & mask;
    while (slots_[at] != kNone) at = (at + 1) & mask;
    slots_[at] = static_cast<int32_t>(i);
  }
}

int32_t StringIndex::Find(std::string_view s) const {
  if (slots_.empty()) return kNone;
  const size_t hash = HashOf(s);
  const size_t mask = slots_.size() - 1;
  for (size_t at = hash & mask;; at = (at + 1) & mask) {
    const int32_t i = slots_[at];
    if (i == kNone) return kNone;
    if (hashes_[static_cast<size_t>(i)] == hash && views_[static_cast<size_t>(i)] == s) return i;
  }
}

int32_t StringIndex::Intern(std::string_view s) {
  // At most half full, so probes stay short.
  if ((views_.size() + 1) * 2 > slots_.size()) Rehash(slots_.empty() ? 16 : slots_.size() * 2);
  const size_t hash = HashOf(s);
  const size_t mask = slots_.size() - 1;
  size_t at = hash & mask;
  for (;; at = (at + 1) & mask) {
    const int32_t i = slots_[at];
    if (i == kNone) break;
    if (hashes_[static_cast<size_t>(i)] == hash && views_[static_cast<size_t>(i)] == s) return i;
  }
  const std::string& owned = storage_.emplace_back(s);
  const auto index = static_cast<int32_t>(views_.size());
  views_.emplace_back(owned);
  hashes_.push_back(hash);
  slots_[at] = index;
  return index;
}

}  // namespace ksched
