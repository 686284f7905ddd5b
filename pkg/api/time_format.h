// The API's timestamp formats, written in one place for every object ksched writes
// (events, conditions, leases).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace ksched::api {

// metav1.MicroTime: RFC 3339 in UTC with microseconds, "2026-11-22T19:30:00.123456Z".
std::string FormatMicroTime(std::chrono::system_clock::time_point t);
// metav1.Time: RFC 3339 in UTC with whole seconds, "2026-11-22T19:30:00Z".
std::string FormatTime(std::chrono::system_clock::time_point t);
// Either form back (and offsets other than Z, fractions of any length); nullopt if `s`
// is not RFC 3339.
std::optional<std::chrono::system_clock::time_point> ParseTime(std::string_view s);

}  // namespace ksched::api
