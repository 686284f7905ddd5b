// Upstream v1 defaulting (pkg/scheduler/apis/config/v1/defaults.go, default_plugins.go).
// The per-extension-point plugin lists built from a profile are in effective_plugins.h.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "config/types.h"
#include "pkg/util/status.h"

namespace ksched::config {

// The v1 default plugins: one multiPoint list, in upstream order, with score weights
// (TaintToleration 3, NodeAffinity 2, PodTopologySpread 2, InterPodAffinity 2,
// NodeResourcesFit 1, NodeResourcesBalancedAllocation 1, ImageLocality 1).
Plugins DefaultPlugins();

// Upstream's mergePluginSet for every point: defaults minus `disabled` (all of them for
// "*"), a custom enabled entry with a default's name replaces it in place, the remaining
// custom entries are appended; disabled lists are concatenated (custom first).
Plugins MergePlugins(const Plugins& defaults, const Plugins& custom);

// Defaulted args for an in-tree plugin with typed args; monostate for any other name.
PluginArgs DefaultArgsFor(std::string_view plugin_name);

// Fills what the field initializers cannot: a default profile when there is none, the
// name "default-scheduler" for a sole unnamed profile, the merged plugin sets, defaults
// inside given args, args for every enabled in-tree plugin that has none (sorted by name,
// as upstream appends them), percentageOfNodesToScore 0 and contention profiling.
void SetDefaults(KubeSchedulerConfiguration& cfg);

}  // namespace ksched::config
