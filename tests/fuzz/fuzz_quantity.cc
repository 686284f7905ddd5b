// libFuzzer target: resource quantities ("100m", "1.5Gi", "1e3") on arbitrary strings,
// and the arithmetic the scheduler does on the parsed value.
//
// Invariants beyond "no crash" (apimachinery resource.Quantity semantics):
//   - AppendQuantity's text parses back to the same quantity (json.h);
//   - a leading '-' negates and a leading '+' changes nothing (magnitudes saturate
//     symmetrically);
//   - suffixes that name the same power agree: k == e3, M == e6, m == e-3, "" == e0;
//   - scaling is monotone: x m <= x <= x k <= x Ki for non-negative x;
//   - Value() is the exact milli amount / 1000 rounded away from zero, saturated at
//     int64's bounds; MilliValue() is the exact amount saturated.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

#include "pkg/api/json.h"
#include "pkg/api/quantity.h"
#include "tests/fuzz/fuzz_util.h"

namespace ksched::fuzz {
namespace {

using api::Quantity;

std::string Describe(std::string_view input, const Quantity& q) {
  return "input \"" + std::string(input) + "\" milli " + std::to_string(q.MilliValue());
}

__int128 Clamp64(__int128 v) {
  if (v > std::numeric_limits<int64_t>::max()) return std::numeric_limits<int64_t>::max();
  if (v < std::numeric_limits<int64_t>::min()) return std::numeric_limits<int64_t>::min();
  return v;
}

void CheckValue(std::string_view input, const Quantity& q) {
  const __int128 milli = q.ExactMilli();
  // Value(): the exact amount over 1000, rounded away from zero, saturated at int64's
  // bounds; MilliValue(): the exact amount saturated.
  __int128 exact_value = milli / 1000;
  if (milli % 1000 != 0) exact_value += milli > 0 ? 1 : -1;
  Check(q.Value() == Clamp64(exact_value), "Value() rounds away from zero and saturates", Describe(input, q));
  Check(q.MilliValue() == Clamp64(milli), "MilliValue() saturates", Describe(input, q));
  // Back to milli-units: exact.
  Check(Quantity::FromValue(q.Value()).ExactMilli() == static_cast<__int128>(q.Value()) * 1000,
        "FromValue(Value()) is exact", Describe(input, q));
}

bool OnlyDigitsAndDot(std::string_view s) {
  for (char c : s) {
    if ((c < '0' || c > '9') && c != '.') return false;
  }
  return true;
}

}  // namespace
}  // namespace ksched::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ksched;
  using api::Quantity;
  using fuzz::Check;
  const std::string_view input = fuzz::AsView(data, size);
  auto q = Quantity::Parse(input);

  // ("" is an error but "-" is zero, as upstream: a sign alone scans as a zero numerator.)
  if (!input.empty() && input[0] != '-' && input[0] != '+') {
    auto neg = Quantity::Parse("-" + std::string(input));
    auto pos = Quantity::Parse("+" + std::string(input));
    Check(neg.ok() == q.ok() && pos.ok() == q.ok(), "a sign does not change validity", input);
    if (q.ok()) {
      Check(neg->ExactMilli() == -q->ExactMilli(), "'-' negates", fuzz::Describe(input, *q));
      Check(*pos == *q, "'+' changes nothing", fuzz::Describe(input, *q));
    }
  }
  if (!q.ok()) return 0;
  fuzz::CheckValue(input, *q);

  std::string text;
  api::AppendQuantity(text, *q);
  auto again = Quantity::Parse(text);
  Check(again.ok() && *again == *q, "AppendQuantity's text parses back", fuzz::Describe(input, *q) + " text " + text);

  if (!input.empty() && fuzz::OnlyDigitsAndDot(input)) {
    auto with = [&](std::string_view suffix) {
      auto r = Quantity::Parse(std::string(input) + std::string(suffix));
      Check(r.ok(), "a number with a valid suffix parses", std::string(input) + std::string(suffix));
      return *r;
    };
    const std::string what = fuzz::Describe(input, *q);
    Check(with("k") == with("e3"), "k == e3", what);
    Check(with("M") == with("e6"), "M == e6", what);
    Check(with("m") == with("e-3"), "m == e-3", what);
    Check(with("") == with("e0") && with("E0") == *q, "no suffix == e0", what);
    Check(with("m") <= *q && *q <= with("k") && with("k") <= with("Ki"), "suffix scaling is monotone", what);
  }
  return 0;
}
