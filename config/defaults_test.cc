#include "config/effective_plugins.h"
#include "config/defaults.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>

#include "config/load.h"

namespace ksched::config {
namespace {

using E = ExtensionPoint;

std::vector<std::string> Names(const std::vector<EnabledPlugin>& list) {
  std::vector<std::string> out;
  for (const EnabledPlugin& p : list) out.push_back(p.name);
  return out;
}

StatusOr<ProfilePlugins> Effective(std::string_view profile_yaml) {
  auto cfg = LoadConfigFromString(
      "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: s\n" +
      std::string(profile_yaml));
  if (!cfg.ok()) return cfg.status();
  return EffectivePlugins(cfg->profiles[0]);
}

TEST(EffectivePluginsTest, DefaultProfile) {
  auto eff = Effective("");
  ASSERT_TRUE(eff.ok()) << eff.status().ToString();
  EXPECT_EQ(Names(eff->at(E::kPreEnqueue)), (std::vector<std::string>{"SchedulingGates", "DynamicResources"}));
  EXPECT_EQ(Names(eff->at(E::kQueueSort)), (std::vector<std::string>{"PrioritySort"}));
  EXPECT_EQ(Names(eff->at(E::kFilter)),
            (std::vector<std::string>{"NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
                                      "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding",
                                      "VolumeZone", "PodTopologySpread", "InterPodAffinity", "DynamicResources"}));
  EXPECT_EQ(Names(eff->at(E::kPreFilter)),
            (std::vector<std::string>{"NodeAffinity", "NodePorts", "NodeResourcesFit", "VolumeRestrictions",
                                      "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "PodTopologySpread",
                                      "InterPodAffinity", "DynamicResources"}));
  // DynamicResources first: freeing an idle claim beats evicting a pod.
  EXPECT_EQ(Names(eff->at(E::kPostFilter)), (std::vector<std::string>{"DynamicResources", "DefaultPreemption"}));
  EXPECT_EQ(eff->at(E::kScore), (std::vector<EnabledPlugin>{{"TaintToleration", 3},
                                                            {"NodeAffinity", 2},
                                                            {"NodeResourcesFit", 1},
                                                            {"VolumeBinding", 1},
                                                            {"PodTopologySpread", 2},
                                                            {"InterPodAffinity", 2},
                                                            {"DynamicResources", 1},
                                                            {"NodeResourcesBalancedAllocation", 1},
                                                            {"ImageLocality", 1}}));
  EXPECT_EQ(Names(eff->at(E::kReserve)), (std::vector<std::string>{"VolumeBinding", "DynamicResources"}));
  EXPECT_EQ(Names(eff->at(E::kPreBind)), (std::vector<std::string>{"VolumeBinding", "DynamicResources"}));
  EXPECT_EQ(Names(eff->at(E::kBind)), (std::vector<std::string>{"DefaultBinder"}));
  EXPECT_TRUE(eff->at(E::kPermit).empty());
  EXPECT_TRUE(eff->at(E::kPostBind).empty());
}

TEST(EffectivePluginsTest, Merges) {
  struct Case {
    std::string_view name, plugins;
    E point;
    std::vector<EnabledPlugin> want;
  } cases[] = {
      {"disable one score plugin", "    score:\n      disabled: [{name: ImageLocality}]\n", E::kScore,
       {{"TaintToleration", 3}, {"NodeAffinity", 2}, {"NodeResourcesFit", 1}, {"VolumeBinding", 1},
        {"PodTopologySpread", 2}, {"InterPodAffinity", 2}, {"DynamicResources", 1},
        {"NodeResourcesBalancedAllocation", 1}}},
      {"disable all score plugins and enable one", "    score:\n      disabled: [{name: '*'}]\n"
                                                   "      enabled: [{name: ImageLocality, weight: 7}]\n",
       E::kScore, {{"ImageLocality", 7}}},
      {"explicit score entry overrides weight and goes first",
       "    score:\n      enabled: [{name: NodeAffinity, weight: 9}]\n", E::kScore,
       {{"NodeAffinity", 9}, {"TaintToleration", 3}, {"NodeResourcesFit", 1}, {"VolumeBinding", 1},
        {"PodTopologySpread", 2}, {"InterPodAffinity", 2}, {"DynamicResources", 1},
        {"NodeResourcesBalancedAllocation", 1}, {"ImageLocality", 1}}},
      {"multiPoint default replaced in place",
       "    multiPoint:\n      enabled: [{name: ImageLocality, weight: 5}]\n", E::kScore,
       {{"TaintToleration", 3}, {"NodeAffinity", 2}, {"NodeResourcesFit", 1}, {"VolumeBinding", 1},
        {"PodTopologySpread", 2}, {"InterPodAffinity", 2}, {"DynamicResources", 1},
        {"NodeResourcesBalancedAllocation", 1}, {"ImageLocality", 5}}},
      {"disable plugin everywhere through multiPoint",
       "    multiPoint:\n      disabled: [{name: TaintToleration}]\n", E::kFilter,
       {{"NodeUnschedulable", 0}, {"NodeName", 0}, {"NodeAffinity", 0}, {"NodePorts", 0}, {"NodeResourcesFit", 0},
        {"VolumeRestrictions", 0}, {"NodeVolumeLimits", 0}, {"VolumeBinding", 0}, {"VolumeZone", 0},
        {"PodTopologySpread", 0}, {"InterPodAffinity", 0}, {"DynamicResources", 0}}},
      {"disable filter star keeps explicit filters only",
       "    filter:\n      disabled: [{name: '*'}]\n      enabled: [{name: NodeName}]\n", E::kFilter,
       {{"NodeName", 0}}},
      {"explicit plugin not in multiPoint goes last", "    filter:\n      enabled: [{name: ImageLocality}]\n",
       E::kPreEnqueue, {{"SchedulingGates", 0}}},
      {"minimal multiPoint", "    multiPoint:\n      disabled: [{name: '*'}]\n"
                             "      enabled: [{name: PrioritySort}, {name: NodeName}, {name: DefaultBinder}]\n",
       E::kFilter, {{"NodeName", 0}}},
  };
  for (const Case& c : cases) {
    auto eff = Effective("  plugins:\n" + std::string(c.plugins));
    if (std::string_view(c.name) == "explicit plugin not in multiPoint goes last") {
      // ImageLocality is not a filter plugin: the framework refuses the profile.
      ASSERT_FALSE(eff.ok());
      EXPECT_EQ(eff.status().message(), "plugin \"ImageLocality\" does not extend FilterPlugin plugin");
      continue;
    }
    ASSERT_TRUE(eff.ok()) << c.name << ": " << eff.status().ToString();
    EXPECT_EQ(eff->at(c.point), c.want) << c.name;
  }
}

TEST(EffectivePluginsTest, Errors) {
  struct Case {
    std::string_view name, plugins, want;
  } cases[] = {
      {"unknown plugin", "    filter:\n      enabled: [{name: Nope}]\n", "FilterPlugin \"Nope\" does not exist"},
      {"unknown multiPoint plugin", "    multiPoint:\n      enabled: [{name: Nope}]\n",
       "PreFilterPlugin \"Nope\" does not exist"},
      {"twice in a point", "    bind:\n      enabled: [{name: DefaultBinder}, {name: DefaultBinder}]\n",
       "plugin \"DefaultBinder\" already registered as \"BindPlugin\""},
      {"no queue sort", "    multiPoint:\n      disabled: [{name: PrioritySort}]\n",
       "only one queue sort plugin required for profile with scheduler name \"s\", but got 0"},
      {"no binder", "    bind:\n      disabled: [{name: '*'}]\n",
       "at least one bind plugin is needed for profile with scheduler name \"s\""},
  };
  for (const Case& c : cases) {
    auto eff = Effective("  plugins:\n" + std::string(c.plugins));
    ASSERT_FALSE(eff.ok()) << c.name;
    EXPECT_EQ(eff.status().message(), c.want) << c.name;
  }
}

TEST(EffectivePluginsTest, CustomRegistry) {
  KubeSchedulerProfile prof;
  prof.scheduler_name = "x";
  prof.plugins.multi_point.enabled = {{"Sort", 0}, {"Both", 4}, {"Bind", 0}};
  auto lookup = [](std::string_view name) -> std::optional<ExtensionPointSet> {
    if (name == "Sort") return Bit(E::kQueueSort);
    if (name == "Both") return Bit(E::kFilter) | Bit(E::kScore);
    if (name == "Bind") return Bit(E::kBind);
    return std::nullopt;
  };
  auto eff = EffectivePlugins(prof, lookup);
  ASSERT_TRUE(eff.ok()) << eff.status().ToString();
  EXPECT_EQ(eff->at(E::kScore), (std::vector<EnabledPlugin>{{"Both", 4}}));
  EXPECT_EQ(Names(eff->at(E::kFilter)), (std::vector<std::string>{"Both"}));
}

TEST(DefaultPluginsTest, DynamicResourcesDirectlyBeforeDefaultPreemption) {
  const std::vector<Plugin>& multi = DefaultPlugins().multi_point.enabled;
  auto at = [&](std::string_view name) {
    return std::find_if(multi.begin(), multi.end(), [&](const Plugin& p) { return p.name == name; }) - multi.begin();
  };
  ASSERT_LT(at("DynamicResources"), static_cast<std::ptrdiff_t>(multi.size()));
  EXPECT_EQ(multi[at("DynamicResources")], (Plugin{"DynamicResources", 0}));  // no weight, as upstream
  EXPECT_EQ(at("DynamicResources"), at("InterPodAffinity") + 1);
  EXPECT_EQ(at("DefaultPreemption"), at("DynamicResources") + 1);
  EXPECT_EQ(multi.size(), 19u);
}

TEST(DefaultArgsForTest, DynamicResources) {
  using namespace std::chrono_literals;
  PluginArgs args = DefaultArgsFor("DynamicResources");
  const auto* dra = std::get_if<DynamicResourcesArgs>(&args);
  ASSERT_NE(dra, nullptr);
  EXPECT_EQ(dra->filter_timeout, 10s);
  EXPECT_EQ(dra->binding_timeout, 10min);
}

TEST(DefaultArgsForTest, UnsetDynamicResourcesFieldsGetDefaults) {
  using namespace std::chrono_literals;
  auto cfg = LoadConfigFromString(
      "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
      "- pluginConfig:\n  - name: DynamicResources\n    args: {bindingTimeout: 30s, filterTimeout: null}\n");
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  const PluginConfig& pc = cfg->profiles[0].plugin_config[0];
  EXPECT_EQ(pc.name, "DynamicResources");
  EXPECT_EQ(*ArgsAs<DynamicResourcesArgs>(pc), (DynamicResourcesArgs{10s, 30s}));
}

TEST(MergePluginsTest, DisabledListsAreKeptCustomFirst) {
  Plugins custom;
  custom.filter.disabled = {{"NodeName", 0}};
  custom.filter.enabled = {{"A", 0}, {"B", 0}};
  Plugins defaults;
  defaults.filter.enabled = {{"NodeName", 0}, {"B", 0}, {"C", 0}};
  defaults.filter.disabled = {{"D", 0}};
  Plugins merged = MergePlugins(defaults, custom);
  EXPECT_EQ(merged.filter.enabled, (std::vector<Plugin>{{"B", 0}, {"C", 0}, {"A", 0}}));
  EXPECT_EQ(merged.filter.disabled, (std::vector<Plugin>{{"NodeName", 0}, {"D", 0}}));
}

}  // namespace
}  // namespace ksched::config
