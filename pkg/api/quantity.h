// Kubernetes resource quantities ("100m", "1Gi", "1e3", "0.5").
// Parsing follows k8s.io/apimachinery/pkg/api/resource: suffixes (binary Ki..Ei, decimal
// n u m "" k M G T P E, exponent e/E), and the scheduler's view of a quantity is
// MilliValue() (rounded up) or Value() (rounded up). We keep the value in milli-units
// as a saturating int64, which covers every quantity a scheduler compares.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "pkg/util/status.h"

namespace ksched::api {

class Quantity {
 public:
  Quantity() = default;
  static Quantity FromMilli(int64_t milli) { Quantity q; q.milli_ = milli; return q; }
  static Quantity FromValue(int64_t value);

  // Parses a quantity string; the error names the offending text.
  static StatusOr<Quantity> Parse(std::string_view s);

  int64_t MilliValue() const { return milli_; }
  // Value rounded up to an integer, as resource.Quantity.Value() does.
  int64_t Value() const;

  bool operator==(const Quantity&) const = default;
  auto operator<=>(const Quantity&) const = default;

 private:
  int64_t milli_ = 0;
};

}  // namespace ksched::api
