// Go time.Duration text: the form metav1.Duration uses in component configs ("15s", "1m30s").
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "pkg/util/status.h"

namespace ksched::config {

using Duration = std::chrono::nanoseconds;

// Parses like Go's time.ParseDuration: an optionally signed sequence of decimal numbers with
// a unit each (ns, us, µs, μs, ms, s, m, h), or a bare "0". Overflow is an error.
StatusOr<Duration> ParseGoDuration(std::string_view text);

// Formats like Go's Duration.String(): "0s", "1.5s", "2m0s", "1h0m0s", "500ms", "1µs".
std::string FormatGoDuration(Duration d);

}  // namespace ksched::config
