// Kubernetes resource quantities ("100m", "1Gi", "1e3", "0.5").
// Parsing follows k8s.io/apimachinery/pkg/api/resource: suffixes (binary Ki..Ei, decimal
// n u m "" k M G T P E, exponent e/E), and the scheduler's view of a quantity is
// MilliValue() (rounded up) or Value() (rounded up). The amount is kept in milli-units
// in 128 bits, so Value() is exact over int64's whole range: memory and storage compare
// as upstream's int64 Value() does up to 8 EiB ("1E" of memory does not fit "10P"),
// instead of every amount from about 8 PiB up becoming the same number. Only amounts
// beyond about 1.7e35 saturate; MilliValue() and Value() saturate at int64's bounds.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "pkg/util/status.h"

namespace ksched::api {

class Quantity {
 public:
  // Milli-units, exact up to about 1.7e35.
  __extension__ using Milli = __int128;

  Quantity() = default;
  static Quantity FromMilli(int64_t milli) { return FromExactMilli(milli); }
  static Quantity FromExactMilli(Milli milli) {
    Quantity q;
    q.milli_ = milli;
    return q;
  }
  static Quantity FromValue(int64_t value) { return FromExactMilli(static_cast<Milli>(value) * 1000); }

  // Parses a quantity string; the error names the offending text.
  static StatusOr<Quantity> Parse(std::string_view s);

  // Saturated at int64's bounds.
  int64_t MilliValue() const;
  Milli ExactMilli() const { return milli_; }
  // Value rounded up (away from zero), as resource.Quantity.Value() does; saturated at
  // int64's bounds.
  int64_t Value() const;

  bool operator==(const Quantity& o) const { return milli_ == o.milli_; }
  std::strong_ordering operator<=>(const Quantity& o) const {
    if (milli_ < o.milli_) return std::strong_ordering::less;
    if (milli_ > o.milli_) return std::strong_ordering::greater;
    return std::strong_ordering::equal;
  }

  // Milli-units rounded up to whole units, saturated at int64's bounds (Value()).
  static int64_t ValueOf(Milli milli);
  // Saturated at int64's bounds (MilliValue()).
  static int64_t Int64Of(Milli milli);

 private:
  Milli milli_ = 0;
};

}  // namespace ksched::api
