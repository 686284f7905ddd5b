// The text `ksched explain` prints for the scheduler's /debug/pods answers (the JSON in
// README's "Why pending, why here"). Pure functions of the JSON, apart from the date
// shown for timestamps, so every rendering is unit-tested from canned answers.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "pkg/util/status.h"

namespace ksched::cmd {

struct RenderOptions {
  // Timestamps (all shown in UTC) on this instant's UTC date print as "10:04:11", others
  // as "2026-11-25 10:04:11". Unset: always with the date.
  std::optional<std::chrono::system_clock::time_point> now;
};

// GET /debug/pods/{namespace}/{name}: why a pending pod fits nowhere (the plugins that
// rejected it and on how many nodes, the closest nodes, preemption, the events that would
// retry it), or where a scheduled pod went and the scores that put it there.
// Absent optional fields are left out. Malformed JSON, or a field of the wrong type, is an
// InvalidArgument naming it, e.g. "lastFailure.plugins[0].nodes: want a number, got string".
StatusOr<std::string> RenderPodText(std::string_view json, const RenderOptions& options = {});

// GET /debug/pods: one row per pending pod, in the server's order (stuck first, then
// oldest), then "N pending, M stuck". Errors as RenderPodText's.
StatusOr<std::string> RenderPodListText(std::string_view json, const RenderOptions& options = {});

}  // namespace ksched::cmd
