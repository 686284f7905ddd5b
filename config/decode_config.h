// Internal: strict decoding of a parsed YAML document into the typed configuration (no
// apiVersion/kind checks and no defaulting; config/load.h does those).
#pragma once

#include <yaml-cpp/yaml.h>

#include "config/types.h"
#include "pkg/util/status.h"

namespace ksched::config::internal {

// `node_budget` bounds the number of YAML nodes visited, aliases counted every time.
StatusOr<KubeSchedulerConfiguration> DecodeConfig(const YAML::Node& root, size_t node_budget);

}  // namespace ksched::config::internal
