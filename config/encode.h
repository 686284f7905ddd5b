// The effective configuration written back out: YAML for --write-config-to, JSON for
// /configz, with upstream's (sorted) key order.
#pragma once

#include <string>

#include "config/types.h"

namespace ksched::config {

// The configuration as YAML, keys sorted like upstream's --write-config-to output; loading
// the text again gives an equal configuration.
std::string EncodeConfig(const KubeSchedulerConfiguration& cfg);
// The same fields as compact JSON (camelCase v1 names, durations as "15s").
std::string EncodeConfigJSON(const KubeSchedulerConfiguration& cfg);
// The /configz body: {"componentconfig": <EncodeConfigJSON>}, as kube-scheduler serves it.
std::string EncodeConfigz(const KubeSchedulerConfiguration& cfg);

}  // namespace ksched::config
