// EncodeConfig / EncodeConfigJSON: the effective configuration with upstream's (sorted)
// key order, one walk for both formats.
#include "config/encode.h"

#include <algorithm>

#include "config/defaults.h"
#include "config/emitter.h"
#include "config/load.h"

namespace ksched::config {
namespace {

void KV(Emitter& out, std::string_view key, std::string_view value) {
  out.Key(key);
  out.String(value);
}

void KN(Emitter& out, std::string_view key, int64_t value) {
  out.Key(key);
  out.Int(value);
}

void KB(Emitter& out, std::string_view key, bool value) {
  out.Key(key);
  out.Bool(value);
}

void Resources(Emitter& out, std::string_view key, const std::vector<ResourceSpec>& rs) {
  out.Key(key);
  out.BeginSeq();
  for (const ResourceSpec& r : rs) {
    out.BeginMap();
    KV(out, "name", r.name);
    KN(out, "weight", r.weight);
    out.EndMap();
  }
  out.EndSeq();
}

void Shape(Emitter& out, std::string_view key, const std::vector<UtilizationShapePoint>& shape) {
  out.Key(key);
  out.BeginSeq();
  for (const UtilizationShapePoint& p : shape) {
    out.BeginMap();
    KN(out, "score", p.score);
    KN(out, "utilization", p.utilization);
    out.EndMap();
  }
  out.EndSeq();
}

void StrList(Emitter& out, std::string_view key, const std::vector<std::string>& list) {
  out.Key(key);
  out.BeginSeq();
  for (const std::string& s : list) out.String(s);
  out.EndSeq();
}

void Requirements(Emitter& out, std::string_view key, const std::vector<NodeSelectorRequirement>& reqs) {
  if (reqs.empty()) return;
  out.Key(key);
  out.BeginSeq();
  for (const NodeSelectorRequirement& r : reqs) {
    out.BeginMap();
    KV(out, "key", r.key);
    KV(out, "operator", r.op);
    if (!r.values.empty()) StrList(out, "values", r.values);
    out.EndMap();
  }
  out.EndSeq();
}

void Term(Emitter& out, const NodeSelectorTerm& t) {
  out.BeginMap();
  Requirements(out, "matchExpressions", t.match_expressions);
  Requirements(out, "matchFields", t.match_fields);
  out.EndMap();
}

void TypeMeta(Emitter& out, std::string_view kind) {
  KV(out, "apiVersion", kAPIVersion);
  KV(out, "kind", kind);
}

// Keys inside each args kind are emitted in sorted order, apiVersion/kind included.
void Args(Emitter& out, const PluginArgs& args) {
  if (std::holds_alternative<std::monostate>(args)) return;
  out.Key("args");
  if (const auto* a = std::get_if<DefaultPreemptionArgs>(&args)) {
    out.BeginMap();
    KV(out, "apiVersion", kAPIVersion);
    KV(out, "kind", "DefaultPreemptionArgs");
    KN(out, "minCandidateNodesAbsolute", a->min_candidate_nodes_absolute);
    KN(out, "minCandidateNodesPercentage", a->min_candidate_nodes_percentage);
    out.EndMap();
  } else if (const auto* a = std::get_if<DynamicResourcesArgs>(&args)) {
    out.BeginMap();
    KV(out, "apiVersion", kAPIVersion);
    KV(out, "bindingTimeout", FormatGoDuration(a->binding_timeout));
    KV(out, "filterTimeout", FormatGoDuration(a->filter_timeout));
    KV(out, "kind", "DynamicResourcesArgs");
    out.EndMap();
  } else if (const auto* a = std::get_if<InterPodAffinityArgs>(&args)) {
    out.BeginMap();
    KV(out, "apiVersion", kAPIVersion);
    KN(out, "hardPodAffinityWeight", a->hard_pod_affinity_weight);
    KB(out, "ignorePreferredTermsOfExistingPods", a->ignore_preferred_terms_of_existing_pods);
    KV(out, "kind", "InterPodAffinityArgs");
    out.EndMap();
  } else if (const auto* a = std::get_if<NodeAffinityArgs>(&args)) {
    out.BeginMap();
    if (a->added_affinity) {
      out.Key("addedAffinity");
      out.BeginMap();
      if (!a->added_affinity->preferred.empty()) {
        out.Key("preferredDuringSchedulingIgnoredDuringExecution");
        out.BeginSeq();
        for (const PreferredSchedulingTerm& p : a->added_affinity->preferred) {
          out.BeginMap();
          out.Key("preference");
          Term(out, p.preference);
          KN(out, "weight", p.weight);
          out.EndMap();
        }
        out.EndSeq();
      }
      if (a->added_affinity->required) {
        out.Key("requiredDuringSchedulingIgnoredDuringExecution");
        out.BeginMap();
        out.Key("nodeSelectorTerms");
        out.BeginSeq();
        for (const NodeSelectorTerm& t : *a->added_affinity->required) Term(out, t);
        out.EndSeq();
        out.EndMap();
      }
      out.EndMap();
    }
    TypeMeta(out, "NodeAffinityArgs");
    out.EndMap();
  } else if (const auto* a = std::get_if<NodeResourcesBalancedAllocationArgs>(&args)) {
    out.BeginMap();
    TypeMeta(out, "NodeResourcesBalancedAllocationArgs");
    Resources(out, "resources", a->resources);
    out.EndMap();
  } else if (const auto* a = std::get_if<NodeResourcesFitArgs>(&args)) {
    out.BeginMap();
    KV(out, "apiVersion", kAPIVersion);
    if (!a->ignored_resource_groups.empty()) StrList(out, "ignoredResourceGroups", a->ignored_resource_groups);
    if (!a->ignored_resources.empty()) StrList(out, "ignoredResources", a->ignored_resources);
    KV(out, "kind", "NodeResourcesFitArgs");
    if (a->scoring_strategy) {
      const ScoringStrategy& s = *a->scoring_strategy;
      out.Key("scoringStrategy");
      out.BeginMap();
      if (s.requested_to_capacity_ratio_shape) {
        out.Key("requestedToCapacityRatio");
        out.BeginMap();
        Shape(out, "shape", *s.requested_to_capacity_ratio_shape);
        out.EndMap();
      }
      Resources(out, "resources", s.resources);
      KV(out, "type", s.type);
      out.EndMap();
    }
    out.EndMap();
  } else if (const auto* a = std::get_if<PodTopologySpreadArgs>(&args)) {
    out.BeginMap();
    KV(out, "apiVersion", kAPIVersion);
    if (!a->default_constraints.empty()) {
      out.Key("defaultConstraints");
      out.BeginSeq();
      for (const TopologySpreadConstraint& c : a->default_constraints) {
        out.BeginMap();
        if (!c.match_label_keys.empty()) StrList(out, "matchLabelKeys", c.match_label_keys);
        KN(out, "maxSkew", c.max_skew);
        if (c.min_domains) KN(out, "minDomains", *c.min_domains);
        if (c.node_affinity_policy) KV(out, "nodeAffinityPolicy", *c.node_affinity_policy);
        if (c.node_taints_policy) KV(out, "nodeTaintsPolicy", *c.node_taints_policy);
        KV(out, "topologyKey", c.topology_key);
        KV(out, "whenUnsatisfiable", c.when_unsatisfiable);
        out.EndMap();
      }
      out.EndSeq();
    }
    KV(out, "defaultingType", a->defaulting_type);
    KV(out, "kind", "PodTopologySpreadArgs");
    out.EndMap();
  } else if (const auto* a = std::get_if<VolumeBindingArgs>(&args)) {
    out.BeginMap();
    KV(out, "apiVersion", kAPIVersion);
    KN(out, "bindTimeoutSeconds", a->bind_timeout_seconds);
    KV(out, "kind", "VolumeBindingArgs");
    if (!a->shape.empty()) Shape(out, "shape", a->shape);
    out.EndMap();
  } else if (const auto* a = std::get_if<RawArgs>(&args)) {
    out.Node(YAML::Load(a->yaml));  // produced by our own emitter from bounded input
  }
}

void PluginList(Emitter& out, std::string_view key, const std::vector<Plugin>& plugins) {
  out.Key(key);
  out.BeginSeq();
  for (const Plugin& p : plugins) {
    out.BeginMap();
    KV(out, "name", p.name);
    KN(out, "weight", p.weight);
    out.EndMap();
  }
  out.EndSeq();
}

void PluginsBlock(Emitter& out, const Plugins& plugins) {
  std::vector<const PluginSetField*> fields;
  for (const PluginSetField& f : kPluginSetFields) fields.push_back(&f);
  std::sort(fields.begin(), fields.end(), [](auto* a, auto* b) { return a->json_name < b->json_name; });
  out.Key("plugins");
  out.BeginMap();
  for (const PluginSetField* f : fields) {
    const PluginSet& set = plugins.*(f->member);
    out.Key(f->json_name);
    if (set.enabled.empty() && set.disabled.empty()) {
      out.EmptyMap();
      continue;
    }
    out.BeginMap();
    if (!set.disabled.empty()) PluginList(out, "disabled", set.disabled);
    if (!set.enabled.empty()) PluginList(out, "enabled", set.enabled);
    out.EndMap();
  }
  out.EndMap();
}

// v1.Extender's fields, sorted; omitempty ones only when set (httpTimeout is a struct and
// always present, as in Go).
void Extenders(Emitter& out, const std::vector<Extender>& extenders) {
  auto kv_if = [&out](std::string_view key, const std::string& value) {
    if (!value.empty()) KV(out, key, value);
  };
  out.Key("extenders");
  out.BeginSeq();
  for (const Extender& e : extenders) {
    out.BeginMap();
    kv_if("bindVerb", e.bind_verb);
    if (e.enable_https) KB(out, "enableHTTPS", true);
    kv_if("filterVerb", e.filter_verb);
    KV(out, "httpTimeout", FormatGoDuration(e.http_timeout));
    if (e.ignorable) KB(out, "ignorable", true);
    if (!e.managed_resources.empty()) {
      out.Key("managedResources");
      out.BeginSeq();
      for (const ExtenderManagedResource& r : e.managed_resources) {
        out.BeginMap();
        if (r.ignored_by_scheduler) KB(out, "ignoredByScheduler", true);
        KV(out, "name", r.name);
        out.EndMap();
      }
      out.EndSeq();
    }
    if (e.node_cache_capable) KB(out, "nodeCacheCapable", true);
    kv_if("preemptVerb", e.preempt_verb);
    kv_if("prioritizeVerb", e.prioritize_verb);
    if (e.tls_config) {
      const ExtenderTLSConfig& t = *e.tls_config;
      out.Key("tlsConfig");
      out.BeginMap();
      kv_if("caData", t.ca_data);
      kv_if("caFile", t.ca_file);
      kv_if("certData", t.cert_data);
      kv_if("certFile", t.cert_file);
      if (t.insecure) KB(out, "insecure", true);
      kv_if("keyData", t.key_data);
      kv_if("keyFile", t.key_file);
      kv_if("serverName", t.server_name);
      out.EndMap();
    }
    KV(out, "urlPrefix", e.url_prefix);
    if (e.weight != 0) KN(out, "weight", e.weight);
    out.EndMap();
  }
  out.EndSeq();
}

void Encode(const KubeSchedulerConfiguration& cfg, Emitter& out) {
  out.BeginMap();
  KV(out, "apiVersion", cfg.api_version);
  out.Key("clientConnection");
  out.BeginMap();
  KV(out, "acceptContentTypes", cfg.client_connection.accept_content_types);
  KN(out, "burst", cfg.client_connection.burst);
  KV(out, "contentType", cfg.client_connection.content_type);
  KV(out, "kubeconfig", cfg.client_connection.kubeconfig);
  out.Key("qps");
  out.Float(cfg.client_connection.qps);
  out.EndMap();
  if (cfg.delay_cache_until_active) KB(out, "delayCacheUntilActive", true);
  if (cfg.enable_contention_profiling) KB(out, "enableContentionProfiling", *cfg.enable_contention_profiling);
  KB(out, "enableProfiling", cfg.enable_profiling);
  if (!cfg.extenders.empty()) Extenders(out, cfg.extenders);
  if (cfg.healthz_bind_address) KV(out, "healthzBindAddress", *cfg.healthz_bind_address);
  KV(out, "kind", cfg.kind);
  const LeaderElectionConfiguration& le = cfg.leader_election;
  out.Key("leaderElection");
  out.BeginMap();
  KB(out, "leaderElect", le.leader_elect);
  KV(out, "leaseDuration", FormatGoDuration(le.lease_duration));
  KV(out, "renewDeadline", FormatGoDuration(le.renew_deadline));
  KV(out, "resourceLock", le.resource_lock);
  KV(out, "resourceName", le.resource_name);
  KV(out, "resourceNamespace", le.resource_namespace);
  KV(out, "retryPeriod", FormatGoDuration(le.retry_period));
  out.EndMap();
  if (cfg.metrics_bind_address) KV(out, "metricsBindAddress", *cfg.metrics_bind_address);
  KN(out, "parallelism", cfg.parallelism);
  if (cfg.percentage_of_nodes_to_score) KN(out, "percentageOfNodesToScore", *cfg.percentage_of_nodes_to_score);
  KN(out, "podInitialBackoffSeconds", cfg.pod_initial_backoff_seconds);
  KN(out, "podMaxBackoffSeconds", cfg.pod_max_backoff_seconds);
  out.Key("profiles");
  out.BeginSeq();
  for (const KubeSchedulerProfile& p : cfg.profiles) {
    out.BeginMap();
    if (p.percentage_of_nodes_to_score) KN(out, "percentageOfNodesToScore", *p.percentage_of_nodes_to_score);
    if (!p.plugin_config.empty()) {
      out.Key("pluginConfig");
      out.BeginSeq();
      for (const PluginConfig& pc : p.plugin_config) {
        out.BeginMap();
        Args(out, pc.args);
        KV(out, "name", pc.name);
        out.EndMap();
      }
      out.EndSeq();
    }
    PluginsBlock(out, p.plugins);
    KV(out, "schedulerName", p.scheduler_name);
    out.EndMap();
  }
  out.EndSeq();
  out.EndMap();
}

}  // namespace

std::string EncodeConfig(const KubeSchedulerConfiguration& cfg) {
  auto out = NewYamlEmitter();
  Encode(cfg, *out);
  return out->Text();
}

std::string EncodeConfigJSON(const KubeSchedulerConfiguration& cfg) {
  auto out = NewJsonEmitter();
  Encode(cfg, *out);
  return out->Text();
}

std::string EncodeConfigz(const KubeSchedulerConfiguration& cfg) {
  return "{\"componentconfig\":" + EncodeConfigJSON(cfg) + "}";
}

}  // namespace ksched::config
