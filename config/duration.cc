#include "config/duration.h"

#include <cstdint>
#include <limits>

namespace ksched::config {
namespace {

Status BadDuration(std::string_view text) {
  return InvalidArgument("time: invalid duration \"" + std::string(text) + "\"");
}

// Unit multipliers in nanoseconds; longest spellings first so "ms" wins over "m".
struct Unit {
  std::string_view name;
  uint64_t ns;
};
constexpr Unit kUnits[] = {
    {"ns", 1},           {"us", 1000},          {"\xC2\xB5s", 1000},        {"\xCE\xBCs", 1000},
    {"ms", 1000000},     {"s", 1000000000ULL},  {"m", 60000000000ULL},      {"h", 3600000000000ULL},
};

}  // namespace

StatusOr<Duration> ParseGoDuration(std::string_view text) {
  std::string_view s = text;
  bool neg = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return Duration(0);
  if (s.empty()) return BadDuration(text);
  constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  uint64_t total = 0;
  while (!s.empty()) {
    // Integer part.
    uint64_t whole = 0;
    size_t i = 0;
    bool overflow = false;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      if (whole > (kMax - (s[i] - '0')) / 10) overflow = true;
      else whole = whole * 10 + (s[i] - '0');
      ++i;
    }
    bool had_whole = i > 0;
    // Fraction, kept as up to 18 significant digits.
    uint64_t frac = 0, scale = 1;
    bool had_frac = false;
    if (i < s.size() && s[i] == '.') {
      ++i;
      while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
        had_frac = true;
        if (scale < 1000000000000000000ULL) {
          frac = frac * 10 + (s[i] - '0');
          scale *= 10;
        }
        ++i;
      }
    }
    if (!had_whole && !had_frac) return BadDuration(text);
    if (overflow) return BadDuration(text);
    s.remove_prefix(i);
    size_t u = 0;
    while (u < s.size() && s[u] != '.' && !(s[u] >= '0' && s[u] <= '9')) ++u;
    std::string_view unit_name = s.substr(0, u);
    if (unit_name.empty()) return InvalidArgument("time: missing unit in duration \"" + std::string(text) + "\"");
    const Unit* unit = nullptr;
    for (const Unit& candidate : kUnits) {
      if (candidate.name == unit_name) unit = &candidate;
    }
    if (unit == nullptr) {
      return InvalidArgument("time: unknown unit \"" + std::string(unit_name) + "\" in duration \"" +
                             std::string(text) + "\"");
    }
    s.remove_prefix(u);
    if (whole > kMax / unit->ns) return BadDuration(text);
    uint64_t v = whole * unit->ns;
    // frac/scale of a unit; computed in long double, precise enough below 2^63 ns.
    v += static_cast<uint64_t>(static_cast<long double>(frac) * unit->ns / scale);
    if (v > kMax || total > kMax - v) return BadDuration(text);
    total += v;
  }
  int64_t signed_total = static_cast<int64_t>(total);
  return Duration(neg ? -signed_total : signed_total);
}

std::string FormatGoDuration(Duration d) {
  int64_t ns = d.count();
  if (ns == 0) return "0s";
  bool neg = ns < 0;
  uint64_t u = neg ? static_cast<uint64_t>(-(ns + 1)) + 1 : static_cast<uint64_t>(ns);
  // Appends u/10^prec with trailing fractional zeros dropped.
  auto fmt_frac = [](uint64_t v, int prec) {
    std::string whole = std::to_string(v / [&] {
                          uint64_t p = 1;
                          for (int i = 0; i < prec; ++i) p *= 10;
                          return p;
                        }());
    uint64_t p = 1;
    for (int i = 0; i < prec; ++i) p *= 10;
    uint64_t f = v % p;
    if (f == 0) return whole;
    std::string digits(prec, '0');
    for (int i = prec - 1; i >= 0; --i, f /= 10) digits[i] = static_cast<char>('0' + f % 10);
    while (!digits.empty() && digits.back() == '0') digits.pop_back();
    return whole + "." + digits;
  };
  std::string out;
  if (u < 1000000000ULL) {
    if (u < 1000) out = std::to_string(u) + "ns";
    else if (u < 1000000) out = fmt_frac(u, 3) + "\xC2\xB5s";
    else out = fmt_frac(u, 6) + "ms";
  } else {
    uint64_t secs_ns = u % 60000000000ULL;
    uint64_t mins = u / 60000000000ULL;
    out = fmt_frac(secs_ns, 9) + "s";
    if (mins > 0) {
      uint64_t hours = mins / 60;
      out = std::to_string(mins % 60) + "m" + out;
      if (hours > 0) out = std::to_string(hours) + "h" + out;
    }
  }
  return neg ? "-" + out : out;
}

}  // namespace ksched::config
