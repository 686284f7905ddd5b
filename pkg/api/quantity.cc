#include "pkg/api/quantity.h"

#include <cstdint>
#include <limits>
#include <vector>

namespace ksched::api {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
using Milli = Quantity::Milli;
// The largest amount kept; anything larger saturates here.
constexpr Milli kMaxMilli = static_cast<Milli>(~static_cast<unsigned __int128>(0) >> 1);

// Upstream reports every malformed quantity with the regular expression its scanner
// approximates; we keep that text so messages match what users see from kubectl.
constexpr std::string_view kFormatError =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
constexpr std::string_view kSuffixError = "unable to parse quantity's suffix";

Status QuantityError(std::string_view what, std::string_view text) {
  std::string m(what);
  m += " (got \"";
  m += text;
  m += "\")";
  return InvalidArgument(std::move(m));
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

bool IsSuffixChar(char c) {
  switch (c) {
    case 'e': case 'E': case 'i': case 'n': case 'u': case 'm':
    case 'k': case 'K': case 'M': case 'G': case 'T': case 'P':
      return true;
    default:
      return false;
  }
}

// The pieces upstream's scanner splits a quantity into: "-12.50Mi" -> negative, num "12",
// denom "50", suffix "Mi". Leading zeros of the numerator are dropped.
struct Scanned {
  bool negative = false;
  std::string_view num, denom, suffix;
};

// Mirrors the structure of apimachinery's parseQuantityString so the same strings are
// accepted: an optional sign, digits, an optional '.' and digits, then suffix letters
// optionally followed by a signed integer.
bool Scan(std::string_view s, Scanned& out) {
  size_t pos = 0, end = s.size();
  if (pos < end && (s[0] == '-' || s[0] == '+')) {
    out.negative = s[0] == '-';
    ++pos;
  }
  while (pos < end && s[pos] == '0') ++pos;
  size_t start = pos;
  while (pos < end && IsDigit(s[pos])) ++pos;
  out.num = s.substr(start, pos - start);
  if (pos == end) return true;
  if (s[pos] == '.') {
    start = ++pos;
    while (pos < end && IsDigit(s[pos])) ++pos;
    out.denom = s.substr(start, pos - start);
    if (pos == end) return true;
  }
  size_t suffix_start = pos;
  while (pos < end && IsSuffixChar(s[pos])) ++pos;
  if (pos < end && (s[pos] == '-' || s[pos] == '+')) ++pos;
  while (pos < end && IsDigit(s[pos])) ++pos;
  if (pos != end) return false;
  out.suffix = s.substr(suffix_start);
  return true;
}

// A suffix is either a power of ten (decimal SI and e/E exponents) or a power of two.
struct Suffix {
  int64_t exp10 = 0;
  int exp2 = 0;
};

bool ParseSuffixExponent(std::string_view digits, int64_t& out) {
  // strconv.ParseInt semantics: optional sign, at least one digit, no overflow.
  bool neg = false;
  if (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) {
    neg = digits[0] == '-';
    digits.remove_prefix(1);
  }
  if (digits.empty()) return false;
  uint64_t v = 0;
  for (char c : digits) {
    if (!IsDigit(c)) return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
    if (v > static_cast<uint64_t>(kMax) + (neg ? 1 : 0)) return false;
  }
  // Exponents beyond +-1e6 already saturate or round to the smallest unit; clamping
  // keeps the later exponent arithmetic far from overflow.
  constexpr uint64_t kClamp = 1000000;
  if (v > kClamp) v = kClamp;
  out = neg ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
  return true;
}

bool InterpretSuffix(std::string_view s, Suffix& out) {
  if (s.size() <= 1) {
    char c = s.empty() ? '\0' : s[0];
    switch (c) {
      case '\0': out.exp10 = 0; return true;
      case 'n': out.exp10 = -9; return true;
      case 'u': out.exp10 = -6; return true;
      case 'm': out.exp10 = -3; return true;
      case 'k': out.exp10 = 3; return true;
      case 'M': out.exp10 = 6; return true;
      case 'G': out.exp10 = 9; return true;
      case 'T': out.exp10 = 12; return true;
      case 'P': out.exp10 = 15; return true;
      case 'E': out.exp10 = 18; return true;
      default: return false;
    }
  }
  if (s.size() == 2 && s[1] == 'i') {
    switch (s[0]) {
      case 'K': out.exp2 = 10; return true;
      case 'M': out.exp2 = 20; return true;
      case 'G': out.exp2 = 30; return true;
      case 'T': out.exp2 = 40; return true;
      case 'P': out.exp2 = 50; return true;
      case 'E': out.exp2 = 60; return true;
      default: break;
    }
  }
  if (s[0] == 'e' || s[0] == 'E') return ParseSuffixExponent(s.substr(1), out.exp10);
  return false;
}

// Exact conversion of digits * 10^exp10 * 2^exp2 to milli-units, rounding any remaining
// fraction away from zero (upstream rounds "0.1m" up to 1m so a request never becomes
// free) and saturating at kMaxMilli. Works on a little-endian decimal digit array so
// arbitrarily long inputs stay exact.
Milli ToMilli(std::string_view num, std::string_view denom, Suffix suf) {
  // Fast path: the common "500m", "2", "128Mi" forms fit comfortably in 64 bits.
  if (denom.empty() && num.size() <= 9) {
    int64_t v = 0;
    for (char c : num) v = v * 10 + (c - '0');
    // v < 2^30, so v * 2^30 * 1000 < 2^70 would overflow; six digits keep it < 2^60.
    if (suf.exp2 > 0 && suf.exp2 <= 30 && num.size() <= 6) return (v << suf.exp2) * 1000;
    if (suf.exp2 == 0 && suf.exp10 >= -3 && suf.exp10 <= 6) {
      int64_t scaled = v;
      for (int64_t i = -3; i < suf.exp10; ++i) scaled *= 10;
      return scaled;
    }
    if (suf.exp2 == 0 && suf.exp10 < -3 && suf.exp10 >= -9) {
      int64_t div = 1;
      for (int64_t i = suf.exp10; i < -3; ++i) div *= 10;
      return v / div + (v % div != 0 ? 1 : 0);
    }
  }
  std::vector<uint8_t> digits;  // least significant first
  digits.reserve(num.size() + denom.size() + 20);
  for (size_t i = denom.size(); i-- > 0;) digits.push_back(static_cast<uint8_t>(denom[i] - '0'));
  for (size_t i = num.size(); i-- > 0;) digits.push_back(static_cast<uint8_t>(num[i] - '0'));
  int64_t exp10 = suf.exp10 + 3 - static_cast<int64_t>(denom.size());
  for (int remaining = suf.exp2; remaining > 0;) {
    int step = remaining > 28 ? 28 : remaining;
    remaining -= step;
    uint64_t carry = 0;
    for (uint8_t& d : digits) {
      uint64_t v = (static_cast<uint64_t>(d) << step) + carry;
      d = static_cast<uint8_t>(v % 10);
      carry = v / 10;
    }
    while (carry > 0) {
      digits.push_back(static_cast<uint8_t>(carry % 10));
      carry /= 10;
    }
  }
  while (!digits.empty() && digits.back() == 0) digits.pop_back();  // leading zeros
  size_t low = 0;
  while (low < digits.size() && digits[low] == 0) ++low;  // trailing zeros
  if (low == digits.size()) return 0;
  exp10 += static_cast<int64_t>(low);
  int64_t n = static_cast<int64_t>(digits.size() - low);
  int64_t int_digits = n + exp10;
  // kMaxMilli has 39 digits: more never fit, 39 may (checked as the value is built).
  if (int_digits > 39) return kMaxMilli;
  bool fraction = exp10 < 0;
  unsigned __int128 v = 0;
  auto times_ten_plus = [&v](unsigned d) {
    return !__builtin_mul_overflow(v, static_cast<unsigned __int128>(10), &v) &&
           !__builtin_add_overflow(v, static_cast<unsigned __int128>(d), &v);
  };
  for (int64_t i = n - 1; i >= 0 && (n - 1 - i) < int_digits; --i) {
    if (!times_ten_plus(digits[low + static_cast<size_t>(i)])) return kMaxMilli;
  }
  for (int64_t i = 0; i < exp10; ++i) {
    if (!times_ten_plus(0)) return kMaxMilli;
  }
  if (fraction && __builtin_add_overflow(v, static_cast<unsigned __int128>(1), &v)) return kMaxMilli;
  if (v > static_cast<unsigned __int128>(kMaxMilli)) return kMaxMilli;
  return static_cast<Milli>(v);
}

}  // namespace

int64_t Quantity::Int64Of(Milli milli) {
  if (milli > kMax) return kMax;
  if (milli < std::numeric_limits<int64_t>::min()) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(milli);
}

int64_t Quantity::ValueOf(Milli milli) {
  // Rounded away from zero, like upstream's ScaledValue(0) on an int64 amount.
  Milli v = milli / 1000;
  if (milli % 1000 != 0) v += milli > 0 ? 1 : -1;
  return Int64Of(v);
}

int64_t Quantity::MilliValue() const { return Int64Of(milli_); }

StatusOr<Quantity> Quantity::Parse(std::string_view s) {
  if (s.empty()) return QuantityError(kFormatError, s);
  Scanned scanned;
  if (!Scan(s, scanned)) return QuantityError(kFormatError, s);
  Suffix suffix;
  if (!InterpretSuffix(scanned.suffix, suffix)) return QuantityError(kSuffixError, s);
  Milli milli = ToMilli(scanned.num, scanned.denom, suffix);
  // Magnitudes saturate symmetrically, so negation cannot overflow.
  return FromExactMilli(scanned.negative ? -milli : milli);
}

int64_t Quantity::Value() const { return ValueOf(milli_); }

}  // namespace ksched::api
