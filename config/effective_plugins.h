// The plugins a profile runs at each extension point, as upstream's NewFramework builds
// them (updatePluginList, expandMultiPointPlugins, getScoreWeights).
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
