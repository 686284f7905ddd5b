// Expansion of a defaulted profile into per-point plugin lists (upstream's NewFramework:
// updatePluginList, expandMultiPointPlugins, getScoreWeights).
#include "config/effective_plugins.h"

#include <algorithm>
#include <limits>
#include <set>

#include "config/defaults.h"
#include "pkg/util/strings.h"

namespace ksched::config {
namespace {

constexpr std::array<std::string_view, kNumExtensionPoints> kPointNames = {
    "PreEnqueue", "QueueSort", "PreFilter", "Filter", "PostFilter", "PreScore", "Score",
    "Reserve", "Permit", "PreBind", "Bind", "PostBind"};

// Upstream's getExtensionPoints order; it decides which error is reported first.
constexpr std::array<ExtensionPoint, kNumExtensionPoints> kExpansionOrder = {
    ExtensionPoint::kPreFilter, ExtensionPoint::kFilter,   ExtensionPoint::kPostFilter,
    ExtensionPoint::kReserve,   ExtensionPoint::kPreScore, ExtensionPoint::kScore,
    ExtensionPoint::kPreBind,   ExtensionPoint::kBind,     ExtensionPoint::kPostBind,
    ExtensionPoint::kPermit,    ExtensionPoint::kPreEnqueue, ExtensionPoint::kQueueSort};

const PluginSet& SetFor(const Plugins& p, ExtensionPoint e) {
  switch (e) {
    case ExtensionPoint::kPreEnqueue: return p.pre_enqueue;
    case ExtensionPoint::kQueueSort: return p.queue_sort;
    case ExtensionPoint::kPreFilter: return p.pre_filter;
    case ExtensionPoint::kFilter: return p.filter;
    case ExtensionPoint::kPostFilter: return p.post_filter;
    case ExtensionPoint::kPreScore: return p.pre_score;
    case ExtensionPoint::kScore: return p.score;
    case ExtensionPoint::kReserve: return p.reserve;
    case ExtensionPoint::kPermit: return p.permit;
    case ExtensionPoint::kPreBind: return p.pre_bind;
    case ExtensionPoint::kBind: return p.bind;
    case ExtensionPoint::kPostBind: return p.post_bind;
  }
  return p.filter;
}

std::string TypeName(ExtensionPoint e) { return std::string(ExtensionPointName(e)) + "Plugin"; }

}  // namespace

std::string_view ExtensionPointName(ExtensionPoint p) { return kPointNames[static_cast<size_t>(p)]; }

std::optional<ExtensionPointSet> InTreePluginLookup(std::string_view name) {
  using E = ExtensionPoint;
  const ExtensionPointSet kFilterish = Bit(E::kPreFilter) | Bit(E::kFilter);
  const ExtensionPointSet kScoreish = Bit(E::kPreScore) | Bit(E::kScore);
  if (name == "SchedulingGates") return Bit(E::kPreEnqueue);
  if (name == "PrioritySort") return Bit(E::kQueueSort);
  if (name == "NodeUnschedulable" || name == "NodeName") return Bit(E::kFilter);
  if (name == "TaintToleration") return Bit(E::kFilter) | kScoreish;
  if (name == "NodeAffinity" || name == "NodeResourcesFit" || name == "PodTopologySpread" ||
      name == "InterPodAffinity") {
    return kFilterish | kScoreish;
  }
  if (name == "NodePorts" || name == "VolumeRestrictions" || name == "NodeVolumeLimits" || name == "VolumeZone") {
    return kFilterish;
  }
  if (name == "VolumeBinding") return kFilterish | kScoreish | Bit(E::kReserve) | Bit(E::kPreBind);
  if (name == "DefaultPreemption") return Bit(E::kPostFilter);
  if (name == "DynamicResources") {
    return Bit(E::kPreEnqueue) | kFilterish | Bit(E::kPostFilter) | Bit(E::kScore) | Bit(E::kReserve) |
           Bit(E::kPreBind);
  }
  if (name == "NodeResourcesBalancedAllocation") return kScoreish;
  if (name == "ImageLocality") return Bit(E::kScore);
  if (name == "DefaultBinder") return Bit(E::kBind);
  return std::nullopt;
}

StatusOr<ProfilePlugins> EffectivePlugins(const KubeSchedulerProfile& profile, const PluginLookup& lookup) {
  ProfilePlugins out;
  // Explicit lists first (updatePluginList).
  for (ExtensionPoint e : kExpansionOrder) {
    std::set<std::string> seen;
    for (const Plugin& p : SetFor(profile.plugins, e).enabled) {
      std::optional<ExtensionPointSet> caps = lookup(p.name);
      if (!caps) return InvalidArgument(TypeName(e) + " " + Quoted(p.name) + " does not exist");
      if (!(*caps & Bit(e))) {
        return InvalidArgument("plugin " + Quoted(p.name) + " does not extend " + TypeName(e) + " plugin");
      }
      if (!seen.insert(p.name).second) {
        return InvalidArgument("plugin " + Quoted(p.name) + " already registered as " + Quoted(TypeName(e)));
      }
      out.points[static_cast<size_t>(e)].push_back(EnabledPlugin{p.name, 0});
    }
  }
  // multiPoint expansion (expandMultiPointPlugins).
  const std::vector<Plugin>& multi = profile.plugins.multi_point.enabled;
  if (!multi.empty()) {
    for (ExtensionPoint e : kExpansionOrder) {
      const PluginSet& set = SetFor(profile.plugins, e);
      std::set<std::string> disabled;
      for (const Plugin& p : set.disabled) disabled.insert(p.name);
      if (disabled.contains("*")) continue;
      std::vector<EnabledPlugin>& list = out.points[static_cast<size_t>(e)];
      std::set<std::string> explicit_names;
      for (const EnabledPlugin& p : list) explicit_names.insert(p.name);
      std::set<std::string> overrides, multi_seen;
      std::vector<std::string> multi_enabled;
      for (const Plugin& p : multi) {
        std::optional<ExtensionPointSet> caps = lookup(p.name);
        if (!caps) return InvalidArgument(TypeName(e) + " " + Quoted(p.name) + " does not exist");
        if (!(*caps & Bit(e)) || disabled.contains(p.name)) continue;
        if (explicit_names.contains(p.name)) {
          overrides.insert(p.name);
          continue;
        }
        if (!multi_seen.insert(p.name).second) {
          return InvalidArgument("plugin " + Quoted(p.name) + " already registered as " + Quoted(TypeName(e)));
        }
        multi_enabled.push_back(p.name);
      }
      // Order: explicit entries that override multiPoint, then multiPoint, then the rest.
      std::vector<EnabledPlugin> reordered;
      for (const EnabledPlugin& p : list) {
        if (overrides.contains(p.name)) reordered.push_back(p);
      }
      for (const std::string& name : multi_enabled) reordered.push_back(EnabledPlugin{name, 0});
      for (const EnabledPlugin& p : list) {
        if (!overrides.contains(p.name)) reordered.push_back(p);
      }
      list = std::move(reordered);
    }
  }
  // Score weights: score.enabled first, then multiPoint; unset (0) means 1.
  std::vector<EnabledPlugin>& scores = out.points[static_cast<size_t>(ExtensionPoint::kScore)];
  std::vector<Plugin> weighted = profile.plugins.score.enabled;
  weighted.insert(weighted.end(), multi.begin(), multi.end());
  constexpr int64_t kMaxNodeScore = 100;
  int64_t total = 0;
  std::set<std::string> weighed;
  for (const Plugin& p : weighted) {
    std::optional<ExtensionPointSet> caps = lookup(p.name);
    if (!caps || !(*caps & Bit(ExtensionPoint::kScore))) continue;
    if (!weighed.insert(p.name).second) continue;
    int32_t w = p.weight == 0 ? 1 : p.weight;
    if (static_cast<int64_t>(w) * kMaxNodeScore > std::numeric_limits<int64_t>::max() - total) {
      return InvalidArgument("total score of Score plugins could overflow");
    }
    total += static_cast<int64_t>(w) * kMaxNodeScore;
    for (EnabledPlugin& s : scores) {
      if (s.name == p.name) s.weight = w;
    }
  }
  if (out.at(ExtensionPoint::kQueueSort).size() != 1) {
    return InvalidArgument("only one queue sort plugin required for profile with scheduler name " +
                           Quoted(profile.scheduler_name) + ", but got " +
                           std::to_string(out.at(ExtensionPoint::kQueueSort).size()));
  }
  if (out.at(ExtensionPoint::kBind).empty()) {
    return InvalidArgument("at least one bind plugin is needed for profile with scheduler name " +
                           Quoted(profile.scheduler_name));
  }
  return out;
}

}  // namespace ksched::config
