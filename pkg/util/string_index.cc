#include "pkg/util/string_index.h"

#include <cstdint>
#include <cstring>

namespace ksched {
namespace {

// Topology values are short (zone names, host names of 5-30 bytes), and this runs for
// every node a spreading or affinity plugin looks at: eight bytes per step, multiplied in
// (as FxHash does), then a finalizer (MurmurHash3's fmix64) so that the low bits the
// table masks with depend on every byte. Not std::hash (a library call of ~70
// instructions for a 10-byte string).
uint64_t Load64(const char* p) {
  uint64_t w;
  std::memcpy(&w, p, 8);
  return w;
}
uint64_t Load32(const char* p) {
  uint32_t w;
  std::memcpy(&w, p, 4);
  return w;
}
// The last 1-7 bytes as one word, without a variable-length copy: two overlapping
// 4-byte loads, or the first, middle and last byte.
uint64_t LoadTail(const char* p, size_t n) {
  if (n >= 4) return Load32(p) | (Load32(p + n - 4) << 32);
  return static_cast<uint64_t>(static_cast<unsigned char>(p[0])) |
         (static_cast<uint64_t>(static_cast<unsigned char>(p[n / 2])) << 8) |
         (static_cast<uint64_t>(static_cast<unsigned char>(p[n - 1])) << 16);
}
inline size_t HashOf(std::string_view s) {
  constexpr uint64_t kMul = 0x517cc1b727220a95ULL;
  const auto step = [](uint64_t h, uint64_t w) { return (((h << 5) | (h >> 59)) ^ w) * kMul; };
  uint64_t h = s.size() * kMul;
  const char* p = s.data();
  size_t n = s.size();
  for (; n >= 8; p += 8, n -= 8) h = step(h, Load64(p));
  if (n > 0) h = step(h, LoadTail(p, n));
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return static_cast<size_t>(h);
}

// a == b for strings of equal hash: the sizes, then eight bytes at a time.
inline bool Equal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  size_t n = a.size();
  const char* p = a.data();
  const char* q = b.data();
  for (; n >= 8; p += 8, q += 8, n -= 8) {
    if (Load64(p) != Load64(q)) return false;
  }
  return n == 0 || LoadTail(p, n) == LoadTail(q, n);  // the tail's bytes, each loaded at least once
}

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
    if (hashes_[static_cast<size_t>(i)] == hash && Equal(views_[static_cast<size_t>(i)], s)) return i;
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
    if (hashes_[static_cast<size_t>(i)] == hash && Equal(views_[static_cast<size_t>(i)], s)) return i;
  }
  const std::string& owned = storage_.emplace_back(s);
  const auto index = static_cast<int32_t>(views_.size());
  views_.emplace_back(owned);
  hashes_.push_back(hash);
  slots_[at] = index;
  return index;
}

}  // namespace ksched
