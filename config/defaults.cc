#include "config/defaults.h"

#include <algorithm>
#include <map>
#include <set>

namespace ksched::config {
namespace {

std::vector<ResourceSpec> DefaultResourceSpec() { return {{"cpu", 1}, {"memory", 1}}; }

PluginSet MergePluginSet(const PluginSet& defaults, const PluginSet& custom) {
  PluginSet out;
  std::set<std::string> disabled;
  for (const Plugin& p : custom.disabled) {
    out.disabled.push_back(Plugin{p.name, 0});
    disabled.insert(p.name);
  }
  for (const Plugin& p : defaults.disabled) {
    out.disabled.push_back(Plugin{p.name, 0});
    disabled.insert(p.name);
  }
  // Later duplicates win, as in upstream's name -> index map.
  std::map<std::string, size_t> custom_index;
  for (size_t i = 0; i < custom.enabled.size(); ++i) custom_index[custom.enabled[i].name] = i;
  std::set<size_t> replaced;
  if (!disabled.contains("*")) {
    for (const Plugin& d : defaults.enabled) {
      if (disabled.contains(d.name)) continue;
      auto it = custom_index.find(d.name);
      if (it != custom_index.end()) {
        out.enabled.push_back(custom.enabled[it->second]);
        replaced.insert(it->second);
      } else {
        out.enabled.push_back(d);
      }
    }
  }
  for (size_t i = 0; i < custom.enabled.size(); ++i) {
    if (!replaced.contains(i)) out.enabled.push_back(custom.enabled[i]);
  }
  return out;
}

void DefaultArgs(PluginArgs& args) {
  if (auto* fit = std::get_if<NodeResourcesFitArgs>(&args)) {
    if (!fit->scoring_strategy) fit->scoring_strategy = ScoringStrategy{std::string(kLeastAllocated), {}, {}};
    auto& res = fit->scoring_strategy->resources;
    if (res.empty()) res = DefaultResourceSpec();
    for (ResourceSpec& r : res) {
      if (r.weight == 0) r.weight = 1;
    }
  } else if (auto* bal = std::get_if<NodeResourcesBalancedAllocationArgs>(&args)) {
    if (bal->resources.empty()) bal->resources = DefaultResourceSpec();
    for (ResourceSpec& r : bal->resources) {
      if (r.weight == 0) r.weight = 1;
    }
  } else if (auto* pts = std::get_if<PodTopologySpreadArgs>(&args)) {
    if (pts->defaulting_type.empty()) pts->defaulting_type = std::string(kSystemDefaulting);
  }
}

void SetProfileDefaults(KubeSchedulerProfile& prof) {
  prof.plugins = MergePlugins(DefaultPlugins(), prof.plugins);
  std::set<std::string> existing;
  for (PluginConfig& pc : prof.plugin_config) {
    existing.insert(pc.name);
    DefaultArgs(pc.args);
  }
  std::set<std::string> names;  // sorted, like upstream's sets.List
  for (const PluginSetField& f : kPluginSetFields) {
    for (const Plugin& p : (prof.plugins.*f.member).enabled) names.insert(p.name);
  }
  for (const std::string& name : names) {
    if (existing.contains(name)) continue;
    PluginArgs args = DefaultArgsFor(name);
    if (std::holds_alternative<std::monostate>(args)) continue;
    prof.plugin_config.push_back(PluginConfig{name, std::move(args)});
  }
}

}  // namespace

Plugins DefaultPlugins() {
  Plugins p;
  p.multi_point.enabled = {
      {"SchedulingGates", 0},
      {"PrioritySort", 0},
      {"NodeUnschedulable", 0},
      {"NodeName", 0},
      {"TaintToleration", 3},
      {"NodeAffinity", 2},
      {"NodePorts", 0},
      {"NodeResourcesFit", 1},
      {"VolumeRestrictions", 0},
      {"NodeVolumeLimits", 0},
      {"VolumeBinding", 0},
      {"VolumeZone", 0},
      {"PodTopologySpread", 2},
      {"InterPodAffinity", 2},
      // Before DefaultPreemption: PostFilter first frees an idle allocated claim rather
      // than evicting a pod (upstream's applyFeatureGates, DynamicResourceAllocation GA).
      {"DynamicResources", 0},
      {"DefaultPreemption", 0},
      {"NodeResourcesBalancedAllocation", 1},
      {"ImageLocality", 1},
      {"DefaultBinder", 0},
  };
  return p;
}

Plugins MergePlugins(const Plugins& defaults, const Plugins& custom) {
  Plugins out;
  for (const PluginSetField& f : kPluginSetFields) out.*f.member = MergePluginSet(defaults.*f.member, custom.*f.member);
  return out;
}

PluginArgs DefaultArgsFor(std::string_view name) {
  PluginArgs args;
  if (name == "DefaultPreemption") args = DefaultPreemptionArgs{};
  else if (name == "DynamicResources") args = DynamicResourcesArgs{};
  else if (name == "InterPodAffinity") args = InterPodAffinityArgs{};
  else if (name == "NodeAffinity") args = NodeAffinityArgs{};
  else if (name == "NodeResourcesBalancedAllocation") args = NodeResourcesBalancedAllocationArgs{};
  else if (name == "NodeResourcesFit") args = NodeResourcesFitArgs{};
  else if (name == "PodTopologySpread") args = PodTopologySpreadArgs{};
  else if (name == "VolumeBinding") args = VolumeBindingArgs{};
  DefaultArgs(args);
  return args;
}

void SetDefaults(KubeSchedulerConfiguration& cfg) {
  if (cfg.profiles.empty()) cfg.profiles.emplace_back();
  if (cfg.profiles.size() == 1 && cfg.profiles[0].scheduler_name.empty()) {
    cfg.profiles[0].scheduler_name = std::string(kDefaultSchedulerName);
  }
  for (KubeSchedulerProfile& prof : cfg.profiles) SetProfileDefaults(prof);
  if (!cfg.percentage_of_nodes_to_score) cfg.percentage_of_nodes_to_score = 0;
  if (!cfg.enable_contention_profiling) cfg.enable_contention_profiling = cfg.enable_profiling;
}

}  // namespace ksched::config
