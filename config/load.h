// Loading and printing KubeSchedulerConfiguration files.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "config/types.h"
#include "pkg/util/status.h"

namespace ksched::config {

// Limits for hostile input: the file size, and the number of YAML nodes the decoder may
// visit (aliases are counted each time they are used, which defeats "billion laughs").
inline constexpr size_t kMaxConfigBytes = 4 << 20;
inline constexpr size_t kMaxConfigNodes = 1 << 20;

// Parses, strictly decodes and defaults (like upstream's UniversalDecoder), without
// validating: call ValidateConfig (config/validate.h) next. Errors are InvalidArgument with
// upstream-style text, e.g. `strict decoding error: unknown field "profiles[0].foo"`.
StatusOr<KubeSchedulerConfiguration> LoadConfigFromString(std::string_view yaml);
// As above; a missing or unreadable file, or one over kMaxConfigBytes, is an error.
StatusOr<KubeSchedulerConfiguration> LoadConfigFile(const std::string& path);

}  // namespace ksched::config
