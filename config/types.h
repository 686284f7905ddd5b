// KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) as ksched uses it.
//
// Fields carry upstream's defaults as initializers, so a value the file leaves out ends up
// with the same value upstream's pointer defaulting would give. The few defaults that depend
// on other fields (profiles, plugin sets, per-plugin args, contention profiling) are applied
// by SetDefaults() in config/defaults.h; LoadConfig* calls it.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "config/duration.h"

namespace ksched::config {

inline constexpr std::string_view kGroup = "kubescheduler.config.k8s.io";
inline constexpr std::string_view kAPIVersion = "kubescheduler.config.k8s.io/v1";
inline constexpr std::string_view kKind = "KubeSchedulerConfiguration";
inline constexpr std::string_view kDefaultSchedulerName = "default-scheduler";

struct LeaderElectionConfiguration {
  bool leader_elect = true;
  Duration lease_duration = std::chrono::seconds(15);
  Duration renew_deadline = std::chrono::seconds(10);
  Duration retry_period = std::chrono::seconds(2);
  std::string resource_lock = "leases";
  std::string resource_name = "kube-scheduler";
  std::string resource_namespace = "kube-system";
  bool operator==(const LeaderElectionConfiguration&) const = default;
};

struct ClientConnectionConfiguration {
  std::string kubeconfig;
  std::string accept_content_types;
  // Upstream's default is kept so --write-config-to matches; ksched itself speaks JSON.
  std::string content_type = "application/vnd.kubernetes.protobuf";
  float qps = 50;
  int32_t burst = 100;
  bool operator==(const ClientConnectionConfiguration&) const = default;
};

// ---- plugins ----------------------------------------------------------------------------

struct Plugin {
  std::string name;
  int32_t weight = 0;  // score plugins only; 0 means "unset" (the framework uses 1)
  bool operator==(const Plugin&) const = default;
};

struct PluginSet {
  std::vector<Plugin> enabled;
  std::vector<Plugin> disabled;  // name "*" disables every default plugin of the point
  bool operator==(const PluginSet&) const = default;
};

struct Plugins {
  PluginSet pre_enqueue, queue_sort, pre_filter, filter, post_filter, pre_score, score, reserve,
      permit, pre_bind, bind, post_bind, multi_point;
  bool operator==(const Plugins&) const = default;
};

// The plugin sets in the order of their JSON names, for code that walks all of them.
struct PluginSetField {
  std::string_view json_name;
  PluginSet Plugins::*member;
};
inline constexpr std::array<PluginSetField, 13> kPluginSetFields = {{
    {"preEnqueue", &Plugins::pre_enqueue},
    {"queueSort", &Plugins::queue_sort},
    {"preFilter", &Plugins::pre_filter},
    {"filter", &Plugins::filter},
    {"postFilter", &Plugins::post_filter},
    {"preScore", &Plugins::pre_score},
    {"score", &Plugins::score},
    {"reserve", &Plugins::reserve},
    {"permit", &Plugins::permit},
    {"preBind", &Plugins::pre_bind},
    {"bind", &Plugins::bind},
    {"postBind", &Plugins::post_bind},
    {"multiPoint", &Plugins::multi_point},
}};

// ---- typed plugin args --------------------------------------------------------------------

struct ResourceSpec {
  std::string name;
  int64_t weight = 0;
  bool operator==(const ResourceSpec&) const = default;
};

struct UtilizationShapePoint {
  int32_t utilization = 0;
  int32_t score = 0;
  bool operator==(const UtilizationShapePoint&) const = default;
};

struct DefaultPreemptionArgs {
  int32_t min_candidate_nodes_percentage = 10;
  int32_t min_candidate_nodes_absolute = 100;
  bool operator==(const DefaultPreemptionArgs&) const = default;
};

// Upstream defaults each field only while its feature gates are on (filterTimeout:
// DRASchedulerFilterTimeout; bindingTimeout: DRADeviceBindingConditions and
// DRAResourceClaimDeviceStatus). All three are on by default in kube-scheduler 1.36, so
// both are set here, as its --write-config-to prints them.
struct DynamicResourcesArgs {
  Duration filter_timeout = std::chrono::seconds(10);  // 0 disables the Filter time limit
  Duration binding_timeout = std::chrono::minutes(10);  // PreBind's wait for binding conditions
  bool operator==(const DynamicResourcesArgs&) const = default;
};

struct InterPodAffinityArgs {
  int32_t hard_pod_affinity_weight = 1;
  bool ignore_preferred_terms_of_existing_pods = false;
  bool operator==(const InterPodAffinityArgs&) const = default;
};

// core/v1 node selector shapes, kept local so config depends on nothing else of ours.
struct NodeSelectorRequirement {
  std::string key;
  std::string op;  // "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"
  std::vector<std::string> values;
  bool operator==(const NodeSelectorRequirement&) const = default;
};

struct NodeSelectorTerm {
  std::vector<NodeSelectorRequirement> match_expressions;
  std::vector<NodeSelectorRequirement> match_fields;
  bool operator==(const NodeSelectorTerm&) const = default;
};

struct PreferredSchedulingTerm {
  int32_t weight = 0;
  NodeSelectorTerm preference;
  bool operator==(const PreferredSchedulingTerm&) const = default;
};

struct NodeAffinity {
  std::optional<std::vector<NodeSelectorTerm>> required;  // requiredDuring...: nodeSelectorTerms
  std::vector<PreferredSchedulingTerm> preferred;
  bool operator==(const NodeAffinity&) const = default;
};

struct NodeAffinityArgs {
  std::optional<NodeAffinity> added_affinity;
  bool operator==(const NodeAffinityArgs&) const = default;
};

struct NodeResourcesBalancedAllocationArgs {
  std::vector<ResourceSpec> resources;  // defaulted to cpu=1, memory=1
  bool operator==(const NodeResourcesBalancedAllocationArgs&) const = default;
};

inline constexpr std::string_view kLeastAllocated = "LeastAllocated";
inline constexpr std::string_view kMostAllocated = "MostAllocated";
inline constexpr std::string_view kRequestedToCapacityRatio = "RequestedToCapacityRatio";

struct ScoringStrategy {
  std::string type;
  std::vector<ResourceSpec> resources;
  std::optional<std::vector<UtilizationShapePoint>> requested_to_capacity_ratio_shape;
  bool operator==(const ScoringStrategy&) const = default;
};

struct NodeResourcesFitArgs {
  std::vector<std::string> ignored_resources;
  std::vector<std::string> ignored_resource_groups;
  std::optional<ScoringStrategy> scoring_strategy;  // defaulted to LeastAllocated cpu/memory
  bool operator==(const NodeResourcesFitArgs&) const = default;
};

struct TopologySpreadConstraint {
  int32_t max_skew = 0;
  std::string topology_key;
  std::string when_unsatisfiable;
  bool has_label_selector = false;  // forbidden in defaults; kept only to report it
  std::optional<int32_t> min_domains;
  std::optional<std::string> node_affinity_policy;
  std::optional<std::string> node_taints_policy;
  std::vector<std::string> match_label_keys;
  bool operator==(const TopologySpreadConstraint&) const = default;
};

inline constexpr std::string_view kSystemDefaulting = "System";
inline constexpr std::string_view kListDefaulting = "List";

struct PodTopologySpreadArgs {
  std::vector<TopologySpreadConstraint> default_constraints;
  std::string defaulting_type = std::string(kSystemDefaulting);
  bool operator==(const PodTopologySpreadArgs&) const = default;
};

struct VolumeBindingArgs {
  int64_t bind_timeout_seconds = 600;
  std::vector<UtilizationShapePoint> shape;
  bool operator==(const VolumeBindingArgs&) const = default;
};

// Args of a plugin ksched has no typed args for (out of tree): kept as canonical YAML.
struct RawArgs {
  std::string yaml;
  bool operator==(const RawArgs&) const = default;
};

using PluginArgs = std::variant<std::monostate, DefaultPreemptionArgs, DynamicResourcesArgs, InterPodAffinityArgs,
                                NodeAffinityArgs, NodeResourcesBalancedAllocationArgs, NodeResourcesFitArgs,
                                PodTopologySpreadArgs, VolumeBindingArgs, RawArgs>;

struct PluginConfig {
  std::string name;
  PluginArgs args;
  bool operator==(const PluginConfig&) const = default;
};

// Returns a pointer to the typed args when `pc` holds T, else nullptr.
template <typename T>
const T* ArgsAs(const PluginConfig& pc) {
  return std::get_if<T>(&pc.args);
}

struct KubeSchedulerProfile {
  // Empty for a sole profile means "default-scheduler" after SetDefaults.
  std::string scheduler_name;
  std::optional<int32_t> percentage_of_nodes_to_score;
  Plugins plugins;
  std::vector<PluginConfig> plugin_config;
  bool operator==(const KubeSchedulerProfile&) const = default;
};

// An HTTP scheduler extender (KubeSchedulerConfiguration v1 `extenders`), shared by every
// profile. An empty verb means the extender does not offer that call.
struct ExtenderManagedResource {
  std::string name;
  // Left out of NodeResourcesFit's checks: the extender accounts for it.
  bool ignored_by_scheduler = false;
  bool operator==(const ExtenderManagedResource&) const = default;
};

struct ExtenderTLSConfig {
  bool insecure = false;
  std::string server_name;
  std::string cert_file, key_file, ca_file;
  // certData, keyData, caData: base64 text as written (Go's []byte in JSON); decoded when
  // the extender's client is built, which names the field when it is not valid base64.
  std::string cert_data, key_data, ca_data;
  bool operator==(const ExtenderTLSConfig&) const = default;
};

struct Extender {
  std::string url_prefix;
  std::string filter_verb;
  std::string preempt_verb;
  std::string prioritize_verb;
  int64_t weight = 0;
  std::string bind_verb;
  bool enable_https = false;
  std::optional<ExtenderTLSConfig> tls_config;
  Duration http_timeout{0};  // zero: upstream's 5s (DefaultExtenderTimeout)
  bool node_cache_capable = false;
  std::vector<ExtenderManagedResource> managed_resources;
  bool ignorable = false;
  bool operator==(const Extender&) const = default;
};

struct KubeSchedulerConfiguration {
  std::string api_version = std::string(kAPIVersion);
  std::string kind = std::string(kKind);
  int32_t parallelism = 16;
  LeaderElectionConfiguration leader_election;
  ClientConnectionConfiguration client_connection;
  std::optional<int32_t> percentage_of_nodes_to_score;  // 0 after defaulting: adaptive
  int64_t pod_initial_backoff_seconds = 1;
  int64_t pod_max_backoff_seconds = 10;
  std::vector<KubeSchedulerProfile> profiles;
  std::vector<Extender> extenders;
  bool delay_cache_until_active = false;
  bool enable_profiling = true;
  // Unset means "same as enableProfiling" (upstream's defaulting); set after SetDefaults.
  std::optional<bool> enable_contention_profiling;
  // Removed from the v1 API upstream; accepted so older files load, ignored, warned about.
  std::optional<std::string> healthz_bind_address;
  std::optional<std::string> metrics_bind_address;
  bool operator==(const KubeSchedulerConfiguration&) const = default;
};

}  // namespace ksched::config
