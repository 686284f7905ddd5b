// Upstream v1 defaulting (pkg/scheduler/apis/config/v1/defaults.go, default_plugins.go) and
// the per-extension-point plugin lists the framework builds from a profile.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

// ---- effective plugins per extension point -------------------------------------------------

enum class ExtensionPoint {
  kPreEnqueue, kQueueSort, kPreFilter, kFilter, kPostFilter, kPreScore, kScore,
  kReserve, kPermit, kPreBind, kBind, kPostBind,
};
inline constexpr size_t kNumExtensionPoints = 12;
std::string_view ExtensionPointName(ExtensionPoint p);  // "Filter", "PreScore", ...

// Bit i set = implements ExtensionPoint(i).
using ExtensionPointSet = uint32_t;
constexpr ExtensionPointSet Bit(ExtensionPoint p) { return 1u << static_cast<unsigned>(p); }

// Which points a plugin implements; nullopt when no such plugin is registered. The
// framework passes its registry; InTreePluginLookup describes upstream's in-tree plugins.
using PluginLookup = std::function<std::optional<ExtensionPointSet>(std::string_view name)>;
std::optional<ExtensionPointSet> InTreePluginLookup(std::string_view name);

struct EnabledPlugin {
  std::string name;
  int32_t weight = 0;  // Score only: the effective weight (unset -> 1)
  bool operator==(const EnabledPlugin&) const = default;
};

struct ProfilePlugins {
  std::array<std::vector<EnabledPlugin>, kNumExtensionPoints> points;
  const std::vector<EnabledPlugin>& at(ExtensionPoint p) const { return points[static_cast<size_t>(p)]; }
};

// What upstream's NewFramework builds from a defaulted profile: the explicit lists per
// point, then multiPoint expanded into every point its plugins implement (not where a
// point disables "*" or the plugin; a plugin also named at the point keeps that entry and
// goes first), with score weights taken from score.enabled before multiPoint. Errors use
// upstream's text ("FilterPlugin \"X\" does not exist", "plugin \"X\" already registered as
// \"FilterPlugin\"", "plugin \"X\" does not extend filter plugin", ...).
StatusOr<ProfilePlugins> EffectivePlugins(const KubeSchedulerProfile& profile,
                                          const PluginLookup& lookup = InTreePluginLookup);

}  // namespace ksched::config
