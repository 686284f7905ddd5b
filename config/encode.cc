// EncodeConfig: the effective configuration as YAML with upstream's (sorted) key order.
#include <yaml-cpp/yaml.h>

#include <charconv>

#include "config/defaults.h"
#include "config/load.h"

namespace ksched::config {
namespace {

using YAML::BeginMap;
using YAML::BeginSeq;
using YAML::EndMap;
using YAML::EndSeq;
using YAML::Key;
using YAML::Value;

// Strings that a YAML reader would take as null, bool or a number are quoted.
bool NeedsQuotes(std::string_view s) {
  if (s.empty()) return true;
  static const char* kReserved[] = {"~", "null", "Null", "NULL", "true", "True", "TRUE", "false", "False", "FALSE",
                                    "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO",
                                    "on", "On", "ON", "off", "Off", "OFF"};
  for (const char* r : kReserved) {
    if (s == r) return true;
  }
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E')) return false;
  }
  return true;
}

void Str(YAML::Emitter& out, std::string_view s) {
  if (NeedsQuotes(s)) out << YAML::DoubleQuoted;
  out << std::string(s);
}

void KV(YAML::Emitter& out, std::string_view key, std::string_view value) {
  out << Key << std::string(key) << Value;
  Str(out, value);
}

template <typename T>
void KN(YAML::Emitter& out, std::string_view key, T value) {
  out << Key << std::string(key) << Value << value;
}

void KB(YAML::Emitter& out, std::string_view key, bool value) {
  out << Key << std::string(key) << Value << (value ? "true" : "false");
}

std::string FloatText(float f) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), f);
  return std::string(buf, res.ptr);
}

void Resources(YAML::Emitter& out, std::string_view key, const std::vector<ResourceSpec>& rs) {
  out << Key << std::string(key) << Value << BeginSeq;
  for (const ResourceSpec& r : rs) {
    out << BeginMap;
    KV(out, "name", r.name);
    KN(out, "weight", r.weight);
    out << EndMap;
  }
  out << EndSeq;
}

void Shape(YAML::Emitter& out, std::string_view key, const std::vector<UtilizationShapePoint>& shape) {
  out << Key << std::string(key) << Value << BeginSeq;
  for (const UtilizationShapePoint& p : shape) {
    out << BeginMap;
    KN(out, "score", p.score);
    KN(out, "utilization", p.utilization);
    out << EndMap;
  }
  out << EndSeq;
}

void StrList(YAML::Emitter& out, std::string_view key, const std::vector<std::string>& list) {
  out << Key << std::string(key) << Value << BeginSeq;
  for (const std::string& s : list) Str(out, s);
  out << EndSeq;
}

void Requirements(YAML::Emitter& out, std::string_view key, const std::vector<NodeSelectorRequirement>& reqs) {
  if (reqs.empty()) return;
  out << Key << std::string(key) << Value << BeginSeq;
  for (const NodeSelectorRequirement& r : reqs) {
    out << BeginMap;
    KV(out, "key", r.key);
    KV(out, "operator", r.op);
    if (!r.values.empty()) StrList(out, "values", r.values);
    out << EndMap;
  }
  out << EndSeq;
}

void Term(YAML::Emitter& out, const NodeSelectorTerm& t) {
  out << BeginMap;
  Requirements(out, "matchExpressions", t.match_expressions);
  Requirements(out, "matchFields", t.match_fields);
  out << EndMap;
}

void TypeMeta(YAML::Emitter& out, std::string_view kind) {
  KV(out, "apiVersion", kAPIVersion);
  KV(out, "kind", kind);
}

// Keys inside each args kind are emitted in sorted order, apiVersion/kind included.
void Args(YAML::Emitter& out, const PluginArgs& args) {
  if (std::holds_alternative<std::monostate>(args)) return;
  out << Key << "args" << Value;
  if (const auto* a = std::get_if<DefaultPreemptionArgs>(&args)) {
    out << BeginMap;
    KV(out, "apiVersion", kAPIVersion);
    KV(out, "kind", "DefaultPreemptionArgs");
    KN(out, "minCandidateNodesAbsolute", a->min_candidate_nodes_absolute);
    KN(out, "minCandidateNodesPercentage", a->min_candidate_nodes_percentage);
    out << EndMap;
  } else if (const auto* a = std::get_if<InterPodAffinityArgs>(&args)) {
    out << BeginMap;
    KV(out, "apiVersion", kAPIVersion);
    KN(out, "hardPodAffinityWeight", a->hard_pod_affinity_weight);
    KB(out, "ignorePreferredTermsOfExistingPods", a->ignore_preferred_terms_of_existing_pods);
    KV(out, "kind", "InterPodAffinityArgs");
    out << EndMap;
  } else if (const auto* a = std::get_if<NodeAffinityArgs>(&args)) {
    out << BeginMap;
    if (a->added_affinity) {
      out << Key << "addedAffinity" << Value << BeginMap;
      if (!a->added_affinity->preferred.empty()) {
        out << Key << "preferredDuringSchedulingIgnoredDuringExecution" << Value << BeginSeq;
        for (const PreferredSchedulingTerm& p : a->added_affinity->preferred) {
          out << BeginMap << Key << "preference" << Value;
          Term(out, p.preference);
          KN(out, "weight", p.weight);
          out << EndMap;
        }
        out << EndSeq;
      }
      if (a->added_affinity->required) {
        out << Key << "requiredDuringSchedulingIgnoredDuringExecution" << Value << BeginMap;
        out << Key << "nodeSelectorTerms" << Value << BeginSeq;
        for (const NodeSelectorTerm& t : *a->added_affinity->required) Term(out, t);
        out << EndSeq << EndMap;
      }
      out << EndMap;
    }
    TypeMeta(out, "NodeAffinityArgs");
    out << EndMap;
  } else if (const auto* a = std::get_if<NodeResourcesBalancedAllocationArgs>(&args)) {
    out << BeginMap;
    TypeMeta(out, "NodeResourcesBalancedAllocationArgs");
    Resources(out, "resources", a->resources);
    out << EndMap;
  } else if (const auto* a = std::get_if<NodeResourcesFitArgs>(&args)) {
    out << BeginMap;
    KV(out, "apiVersion", kAPIVersion);
    if (!a->ignored_resource_groups.empty()) StrList(out, "ignoredResourceGroups", a->ignored_resource_groups);
    if (!a->ignored_resources.empty()) StrList(out, "ignoredResources", a->ignored_resources);
    KV(out, "kind", "NodeResourcesFitArgs");
    if (a->scoring_strategy) {
      const ScoringStrategy& s = *a->scoring_strategy;
      out << Key << "scoringStrategy" << Value << BeginMap;
      if (s.requested_to_capacity_ratio_shape) {
        out << Key << "requestedToCapacityRatio" << Value << BeginMap;
        Shape(out, "shape", *s.requested_to_capacity_ratio_shape);
        out << EndMap;
      }
      Resources(out, "resources", s.resources);
      KV(out, "type", s.type);
      out << EndMap;
    }
    out << EndMap;
  } else if (const auto* a = std::get_if<PodTopologySpreadArgs>(&args)) {
    out << BeginMap;
    KV(out, "apiVersion", kAPIVersion);
    if (!a->default_constraints.empty()) {
      out << Key << "defaultConstraints" << Value << BeginSeq;
      for (const TopologySpreadConstraint& c : a->default_constraints) {
        out << BeginMap;
        if (!c.match_label_keys.empty()) StrList(out, "matchLabelKeys", c.match_label_keys);
        KN(out, "maxSkew", c.max_skew);
        if (c.min_domains) KN(out, "minDomains", *c.min_domains);
        if (c.node_affinity_policy) KV(out, "nodeAffinityPolicy", *c.node_affinity_policy);
        if (c.node_taints_policy) KV(out, "nodeTaintsPolicy", *c.node_taints_policy);
        KV(out, "topologyKey", c.topology_key);
        KV(out, "whenUnsatisfiable", c.when_unsatisfiable);
        out << EndMap;
      }
      out << EndSeq;
    }
    KV(out, "defaultingType", a->defaulting_type);
    KV(out, "kind", "PodTopologySpreadArgs");
    out << EndMap;
  } else if (const auto* a = std::get_if<VolumeBindingArgs>(&args)) {
    out << BeginMap;
    KV(out, "apiVersion", kAPIVersion);
    KN(out, "bindTimeoutSeconds", a->bind_timeout_seconds);
    KV(out, "kind", "VolumeBindingArgs");
    if (!a->shape.empty()) Shape(out, "shape", a->shape);
    out << EndMap;
  } else if (const auto* a = std::get_if<RawArgs>(&args)) {
    out << YAML::Load(a->yaml);  // produced by our own emitter from bounded input
  }
}

void PluginList(YAML::Emitter& out, std::string_view key, const std::vector<Plugin>& plugins) {
  out << Key << std::string(key) << Value << BeginSeq;
  for (const Plugin& p : plugins) {
    out << BeginMap;
    KV(out, "name", p.name);
    KN(out, "weight", p.weight);
    out << EndMap;
  }
  out << EndSeq;
}

void PluginsBlock(YAML::Emitter& out, const Plugins& plugins) {
  std::vector<const PluginSetField*> fields;
  for (const PluginSetField& f : kPluginSetFields) fields.push_back(&f);
  std::sort(fields.begin(), fields.end(), [](auto* a, auto* b) { return a->json_name < b->json_name; });
  out << Key << "plugins" << Value << BeginMap;
  for (const PluginSetField* f : fields) {
    const PluginSet& set = plugins.*(f->member);
    out << Key << std::string(f->json_name) << Value;
    if (set.enabled.empty() && set.disabled.empty()) {
      out << YAML::Flow << BeginMap << EndMap;
      continue;
    }
    out << BeginMap;
    if (!set.disabled.empty()) PluginList(out, "disabled", set.disabled);
    if (!set.enabled.empty()) PluginList(out, "enabled", set.enabled);
    out << EndMap;
  }
  out << EndMap;
}

}  // namespace

std::string EncodeConfig(const KubeSchedulerConfiguration& cfg) {
  YAML::Emitter out;
  out << BeginMap;
  KV(out, "apiVersion", cfg.api_version);
  out << Key << "clientConnection" << Value << BeginMap;
  KV(out, "acceptContentTypes", cfg.client_connection.accept_content_types);
  KN(out, "burst", cfg.client_connection.burst);
  KV(out, "contentType", cfg.client_connection.content_type);
  KV(out, "kubeconfig", cfg.client_connection.kubeconfig);
  out << Key << "qps" << Value << FloatText(cfg.client_connection.qps);
  out << EndMap;
  if (cfg.delay_cache_until_active) KB(out, "delayCacheUntilActive", true);
  if (cfg.enable_contention_profiling) KB(out, "enableContentionProfiling", *cfg.enable_contention_profiling);
  KB(out, "enableProfiling", cfg.enable_profiling);
  if (cfg.healthz_bind_address) KV(out, "healthzBindAddress", *cfg.healthz_bind_address);
  KV(out, "kind", cfg.kind);
  const LeaderElectionConfiguration& le = cfg.leader_election;
  out << Key << "leaderElection" << Value << BeginMap;
  KB(out, "leaderElect", le.leader_elect);
  KV(out, "leaseDuration", FormatGoDuration(le.lease_duration));
  KV(out, "renewDeadline", FormatGoDuration(le.renew_deadline));
  KV(out, "resourceLock", le.resource_lock);
  KV(out, "resourceName", le.resource_name);
  KV(out, "resourceNamespace", le.resource_namespace);
  KV(out, "retryPeriod", FormatGoDuration(le.retry_period));
  out << EndMap;
  if (cfg.metrics_bind_address) KV(out, "metricsBindAddress", *cfg.metrics_bind_address);
  KN(out, "parallelism", cfg.parallelism);
  if (cfg.percentage_of_nodes_to_score) KN(out, "percentageOfNodesToScore", *cfg.percentage_of_nodes_to_score);
  KN(out, "podInitialBackoffSeconds", cfg.pod_initial_backoff_seconds);
  KN(out, "podMaxBackoffSeconds", cfg.pod_max_backoff_seconds);
  out << Key << "profiles" << Value << BeginSeq;
  for (const KubeSchedulerProfile& p : cfg.profiles) {
    out << BeginMap;
    if (p.percentage_of_nodes_to_score) KN(out, "percentageOfNodesToScore", *p.percentage_of_nodes_to_score);
    if (!p.plugin_config.empty()) {
      out << Key << "pluginConfig" << Value << BeginSeq;
      for (const PluginConfig& pc : p.plugin_config) {
        out << BeginMap;
        Args(out, pc.args);
        KV(out, "name", pc.name);
        out << EndMap;
      }
      out << EndSeq;
    }
    PluginsBlock(out, p.plugins);
    KV(out, "schedulerName", p.scheduler_name);
    out << EndMap;
  }
  out << EndSeq;
  out << EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace ksched::config
