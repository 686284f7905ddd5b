// Small string helpers shared by the modules.
#ifndef KSCHED_PKG_UTIL_STRINGS_H_
#define KSCHED_PKG_UTIL_STRINGS_H_

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace ksched {

// `s` between double quotes, as is (no escaping): for names in messages. Built by
// appending, not as "\"" + std::string(s): GCC 12 at -O3 reports that operator+ as an
// overlapping copy (a -Wrestrict false positive), which fails a Release build.
inline std::string Quoted(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  out += s;
  out += '"';
  return out;
}

// Transparent hash for unordered containers keyed by std::string (with
// std::equal_to<>): lookups by string_view build no temporary string.
struct StringViewHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

}  // namespace ksched

#endif  // KSCHED_PKG_UTIL_STRINGS_H_
