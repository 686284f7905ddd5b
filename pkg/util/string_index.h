// StringIndex: a set of strings numbered densely in insertion order (0, 1, 2, ...), for
// tables rebuilt every scheduling cycle and keyed by topology values (one per node for
// kubernetes.io/hostname: thousands per cycle). Open addressing over views into strings
// the index owns; the strings sit in a deque, which never moves them, and short ones in
// their inline buffers, so interning a value costs no allocation of its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

namespace ksched {

class StringIndex {
 public:
  static constexpr int32_t kNone = -1;

  StringIndex() = default;
  // Copies intern the strings again into storage of their own, so a copy can be changed
  // (and dropped) independently of the original.
  StringIndex(const StringIndex& other);
  StringIndex& operator=(const StringIndex& other);
  StringIndex(StringIndex&&) noexcept = default;
  StringIndex& operator=(StringIndex&&) noexcept = default;

  // The index of `s`, added (as size()) if new.
  int32_t Intern(std::string_view s);
  // The index of `s`, or kNone.
  int32_t Find(std::string_view s) const;
  std::string_view at(int32_t index) const { return views_[static_cast<size_t>(index)]; }
  size_t size() const { return views_.size(); }
  void Reserve(size_t n);

 private:
  void Rehash(size_t capacity);

  std::vector<int32_t> slots_;     // kNone or an index; size is a power of two
  std::vector<std::string_view> views_;
  std::vector<size_t> hashes_;     // per index
  std::deque<std::string> storage_;
};

}  // namespace ksched
