// Field-by-field strict decoding of KubeSchedulerConfiguration v1 and the in-tree plugin args.
#include "config/decode_config.h"

#include "config/decoder.h"
#include "config/defaults.h"
#include "config/emitter.h"
#include "config/field_error.h"

namespace ksched::config::internal {
namespace {

using Node = YAML::Node;

void DecodePlugin(Decoder& d, const Node& n, Plugin* p) {
  d.Object(n, [&](const std::string& k, const Node& v) {
    if (k == "name") d.String(v, &p->name);
    else if (k == "weight") d.Int32(v, &p->weight);
    else return false;
    return true;
  });
}

void DecodePluginList(Decoder& d, const Node& n, std::vector<Plugin>* out) {
  d.List(n, [&](const Node& e) {
    Plugin p;
    DecodePlugin(d, e, &p);
    out->push_back(std::move(p));
  });
}

void DecodePlugins(Decoder& d, const Node& n, Plugins* plugins) {
  d.Object(n, [&](const std::string& k, const Node& v) {
    for (const PluginSetField& f : kPluginSetFields) {
      if (k != f.json_name) continue;
      PluginSet& set = plugins->*f.member;
      d.Object(v, [&](const std::string& k2, const Node& v2) {
        if (k2 == "enabled") DecodePluginList(d, v2, &set.enabled);
        else if (k2 == "disabled") DecodePluginList(d, v2, &set.disabled);
        else return false;
        return true;
      });
      return true;
    }
    return false;
  });
}

void DecodeResources(Decoder& d, const Node& n, std::vector<ResourceSpec>* out) {
  d.List(n, [&](const Node& e) {
    ResourceSpec r;
    d.Object(e, [&](const std::string& k, const Node& v) {
      if (k == "name") d.String(v, &r.name);
      else if (k == "weight") d.Int64(v, &r.weight);
      else return false;
      return true;
    });
    out->push_back(std::move(r));
  });
}

void DecodeShape(Decoder& d, const Node& n, std::vector<UtilizationShapePoint>* out) {
  d.List(n, [&](const Node& e) {
    UtilizationShapePoint p;
    d.Object(e, [&](const std::string& k, const Node& v) {
      if (k == "utilization") d.Int32(v, &p.utilization);
      else if (k == "score") d.Int32(v, &p.score);
      else return false;
      return true;
    });
    out->push_back(p);
  });
}

void DecodeRequirements(Decoder& d, const Node& n, std::vector<NodeSelectorRequirement>* out) {
  d.List(n, [&](const Node& e) {
    NodeSelectorRequirement r;
    d.Object(e, [&](const std::string& k, const Node& v) {
      if (k == "key") d.String(v, &r.key);
      else if (k == "operator") d.String(v, &r.op);
      else if (k == "values") d.StringList(v, &r.values);
      else return false;
      return true;
    });
    out->push_back(std::move(r));
  });
}

void DecodeTerm(Decoder& d, const Node& n, NodeSelectorTerm* t) {
  d.Object(n, [&](const std::string& k, const Node& v) {
    if (k == "matchExpressions") DecodeRequirements(d, v, &t->match_expressions);
    else if (k == "matchFields") DecodeRequirements(d, v, &t->match_fields);
    else return false;
    return true;
  });
}

void DecodeNodeAffinity(Decoder& d, const Node& n, NodeAffinityArgs* args) {
  if (n.IsNull()) return;
  NodeAffinity a;
  d.Object(n, [&](const std::string& k, const Node& v) {
    if (k == "requiredDuringSchedulingIgnoredDuringExecution") {
      if (v.IsNull()) return true;
      std::vector<NodeSelectorTerm> terms;
      d.Object(v, [&](const std::string& k2, const Node& v2) {
        if (k2 != "nodeSelectorTerms") return false;
        d.List(v2, [&](const Node& e) {
          NodeSelectorTerm t;
          DecodeTerm(d, e, &t);
          terms.push_back(std::move(t));
        });
        return true;
      });
      a.required = std::move(terms);
    } else if (k == "preferredDuringSchedulingIgnoredDuringExecution") {
      d.List(v, [&](const Node& e) {
        PreferredSchedulingTerm p;
        d.Object(e, [&](const std::string& k2, const Node& v2) {
          if (k2 == "weight") d.Int32(v2, &p.weight);
          else if (k2 == "preference") DecodeTerm(d, v2, &p.preference);
          else return false;
          return true;
        });
        a.preferred.push_back(std::move(p));
      });
    } else {
      return false;
    }
    return true;
  });
  args->added_affinity = std::move(a);
}

void DecodeLabelSelector(Decoder& d, const Node& n) {
  d.Object(n, [&](const std::string& k, const Node& v) {
    if (k == "matchLabels") {
      d.Object(v, [&](const std::string&, const Node& v2) {
        std::string ignored;
        d.String(v2, &ignored);
        return true;
      });
    } else if (k == "matchExpressions") {
      std::vector<NodeSelectorRequirement> ignored;
      DecodeRequirements(d, v, &ignored);
    } else {
      return false;
    }
    return true;
  });
}

void DecodeConstraint(Decoder& d, const Node& n, TopologySpreadConstraint* c) {
  d.Object(n, [&](const std::string& k, const Node& v) {
    if (k == "maxSkew") d.Int32(v, &c->max_skew);
    else if (k == "topologyKey") d.String(v, &c->topology_key);
    else if (k == "whenUnsatisfiable") d.String(v, &c->when_unsatisfiable);
    else if (k == "labelSelector") {
      c->has_label_selector = !v.IsNull();
      DecodeLabelSelector(d, v);
    } else if (k == "minDomains") d.Int32(v, &c->min_domains);
    else if (k == "nodeAffinityPolicy") d.String(v, &c->node_affinity_policy);
    else if (k == "nodeTaintsPolicy") d.String(v, &c->node_taints_policy);
    else if (k == "matchLabelKeys") d.StringList(v, &c->match_label_keys);
    else return false;
    return true;
  });
}

// Decodes the fields of one typed args kind; returns false if `name` has no typed args.
bool DecodeTypedArgs(Decoder& d, std::string_view name, const Node& n, PluginArgs* out) {
  // apiVersion/kind inside args are checked by the caller.
  auto meta = [](const std::string& k) { return k == "apiVersion" || k == "kind"; };
  if (name == "DefaultPreemption") {
    DefaultPreemptionArgs a;
    d.Object(n, [&](const std::string& k, const Node& v) {
      if (k == "minCandidateNodesPercentage") d.Int32(v, &a.min_candidate_nodes_percentage);
      else if (k == "minCandidateNodesAbsolute") d.Int32(v, &a.min_candidate_nodes_absolute);
      else return meta(k);
      return true;
    });
    *out = a;
  } else if (name == "DynamicResources") {
    DynamicResourcesArgs a;
    d.Object(n, [&](const std::string& k, const Node& v) {
      if (k == "filterTimeout") d.Dur(v, &a.filter_timeout);
      else if (k == "bindingTimeout") d.Dur(v, &a.binding_timeout);
      else return meta(k);
      return true;
    });
    *out = a;
  } else if (name == "InterPodAffinity") {
    InterPodAffinityArgs a;
    d.Object(n, [&](const std::string& k, const Node& v) {
      if (k == "hardPodAffinityWeight") d.Int32(v, &a.hard_pod_affinity_weight);
      else if (k == "ignorePreferredTermsOfExistingPods") d.Bool(v, &a.ignore_preferred_terms_of_existing_pods);
      else return meta(k);
      return true;
    });
    *out = a;
  } else if (name == "NodeAffinity") {
    NodeAffinityArgs a;
    d.Object(n, [&](const std::string& k, const Node& v) {
      if (k == "addedAffinity") DecodeNodeAffinity(d, v, &a);
      else return meta(k);
      return true;
    });
    *out = std::move(a);
  } else if (name == "NodeResourcesBalancedAllocation") {
    NodeResourcesBalancedAllocationArgs a;
    d.Object(n, [&](const std::string& k, const Node& v) {
      if (k == "resources") DecodeResources(d, v, &a.resources);
      else return meta(k);
      return true;
    });
    *out = std::move(a);
  } else if (name == "NodeResourcesFit") {
    NodeResourcesFitArgs a;
    d.Object(n, [&](const std::string& k, const Node& v) {
      if (k == "ignoredResources") d.StringList(v, &a.ignored_resources);
      else if (k == "ignoredResourceGroups") d.StringList(v, &a.ignored_resource_groups);
      else if (k == "scoringStrategy") {
        if (v.IsNull()) return true;
        ScoringStrategy s;
        d.Object(v, [&](const std::string& k2, const Node& v2) {
          if (k2 == "type") d.String(v2, &s.type);
          else if (k2 == "resources") DecodeResources(d, v2, &s.resources);
          else if (k2 == "requestedToCapacityRatio") {
            if (v2.IsNull()) return true;
            std::vector<UtilizationShapePoint> shape;
            d.Object(v2, [&](const std::string& k3, const Node& v3) {
              if (k3 != "shape") return false;
              DecodeShape(d, v3, &shape);
              return true;
            });
            s.requested_to_capacity_ratio_shape = std::move(shape);
          } else {
            return false;
          }
          return true;
        });
        a.scoring_strategy = std::move(s);
      } else {
        return meta(k);
      }
      return true;
    });
    *out = std::move(a);
  } else if (name == "PodTopologySpread") {
    PodTopologySpreadArgs a;
    d.Object(n, [&](const std::string& k, const Node& v) {
      if (k == "defaultConstraints") {
        d.List(v, [&](const Node& e) {
          TopologySpreadConstraint c;
          DecodeConstraint(d, e, &c);
          a.default_constraints.push_back(std::move(c));
        });
      } else if (k == "defaultingType") {
        d.String(v, &a.defaulting_type);
      } else {
        return meta(k);
      }
      return true;
    });
    *out = std::move(a);
  } else if (name == "VolumeBinding") {
    VolumeBindingArgs a;
    d.Object(n, [&](const std::string& k, const Node& v) {
      if (k == "bindTimeoutSeconds") d.Int64(v, &a.bind_timeout_seconds);
      else if (k == "shape") DecodeShape(d, v, &a.shape);
      else return meta(k);
      return true;
    });
    *out = std::move(a);
  } else {
    return false;
  }
  return true;
}

// Canonical YAML text for out-of-tree args (after the walk has bounded their size).
// Canonical YAML of out-of-tree args, with every scalar's type made explicit (a quoted
// "true" stays a string), so /configz and --write-config-to show what was written.
StatusOr<std::string> EmitRaw(const Node& n) {
  auto out = NewYamlEmitter();
  if (Status s = EmitYamlNode(n, *out); !s.ok()) return s;
  return out->Text();
}

// Upstream decodes args after the main object: errors carry the profile/pluginConfig index.
Status DecodeArgs(size_t* budget, size_t profile_index, size_t config_index, const std::string& name,
                  const Node& n, PluginArgs* out) {
  std::string prefix = "decoding .profiles[" + std::to_string(profile_index) + "].pluginConfig[" +
                       std::to_string(config_index) + "]: ";
  Decoder d(budget);
  if (std::holds_alternative<std::monostate>(DefaultArgsFor(name))) {
    // Out of tree: keep as is (after bounding its size and depth).
    d.PushField("args");
    d.Skip(n);
    if (!d.ok()) return InvalidArgument(prefix + d.fatal());
    if (n.IsNull()) return Status::OK();
    auto raw = EmitRaw(n);
    if (!raw.ok()) return InvalidArgument(prefix + "decoding args for plugin " + name + ": " + raw.status().message());
    *out = RawArgs{std::move(*raw)};
    return Status::OK();
  }
  std::string want_kind = name + "Args";
  if (n.IsMap()) {
    if (Node kind = n["kind"]; kind && kind.IsScalar() && kind.Scalar() != want_kind) {
      return InvalidArgument(prefix + "args for plugin " + name + " were not of type " + want_kind + "." +
                             std::string(kGroup) + ", got " + kind.Scalar() + "." + std::string(kGroup));
    }
    if (Node av = n["apiVersion"]; av && av.IsScalar() && av.Scalar() != kAPIVersion) {
      return InvalidArgument(prefix + "decoding args for plugin " + name + ": apiVersion " + GoQuote(av.Scalar()) +
                             " is not supported, use " + GoQuote(kAPIVersion));
    }
  }
  DecodeTypedArgs(d, name, n, out);
  if (!d.ok()) return InvalidArgument(prefix + "decoding args for plugin " + name + ": " + d.fatal());
  if (!d.strict_errors().empty()) {
    std::string msg = prefix + "decoding args for plugin " + name + ": strict decoding error: ";
    for (size_t i = 0; i < d.strict_errors().size(); ++i) msg += (i ? ", " : "") + d.strict_errors()[i];
    return InvalidArgument(msg);
  }
  return Status::OK();
}

void DecodeProfile(Decoder& d, const Node& n, KubeSchedulerProfile* p, std::vector<Node>* args_nodes) {
  d.Object(n, [&](const std::string& k, const Node& v) {
    if (k == "schedulerName") d.String(v, &p->scheduler_name);
    else if (k == "percentageOfNodesToScore") d.Int32(v, &p->percentage_of_nodes_to_score);
    else if (k == "plugins") DecodePlugins(d, v, &p->plugins);
    else if (k == "pluginConfig") {
      d.List(v, [&](const Node& e) {
        PluginConfig pc;
        Node args;  // default-constructed so assignment rebinds instead of aliasing
        d.Object(e, [&](const std::string& k2, const Node& v2) {
          if (k2 == "name") d.String(v2, &pc.name);
          else if (k2 == "args") args = v2;
          else return false;
          return true;
        });
        p->plugin_config.push_back(std::move(pc));
        args_nodes->push_back(args);
      });
    } else {
      return false;
    }
    return true;
  });
}

void DecodeExtenderTls(Decoder& d, const Node& n, ExtenderTLSConfig* t) {
  d.Object(n, [&](const std::string& k, const Node& v) {
    if (k == "insecure") d.Bool(v, &t->insecure);
    else if (k == "serverName") d.String(v, &t->server_name);
    else if (k == "certFile") d.String(v, &t->cert_file);
    else if (k == "keyFile") d.String(v, &t->key_file);
    else if (k == "caFile") d.String(v, &t->ca_file);
    else if (k == "certData") d.String(v, &t->cert_data);
    else if (k == "keyData") d.String(v, &t->key_data);
    else if (k == "caData") d.String(v, &t->ca_data);
    else return false;
    return true;
  });
}

void DecodeExtender(Decoder& d, const Node& n, Extender* e) {
  d.Object(n, [&](const std::string& k, const Node& v) {
    if (k == "urlPrefix") d.String(v, &e->url_prefix);
    else if (k == "filterVerb") d.String(v, &e->filter_verb);
    else if (k == "preemptVerb") d.String(v, &e->preempt_verb);
    else if (k == "prioritizeVerb") d.String(v, &e->prioritize_verb);
    else if (k == "weight") d.Int64(v, &e->weight);
    else if (k == "bindVerb") d.String(v, &e->bind_verb);
    else if (k == "enableHTTPS") d.Bool(v, &e->enable_https);
    else if (k == "tlsConfig") {
      if (!v.IsNull()) DecodeExtenderTls(d, v, &e->tls_config.emplace());
    } else if (k == "httpTimeout") d.Dur(v, &e->http_timeout);
    else if (k == "nodeCacheCapable") d.Bool(v, &e->node_cache_capable);
    else if (k == "managedResources") {
      d.List(v, [&](const Node& r) {
        ExtenderManagedResource mr;
        d.Object(r, [&](const std::string& k2, const Node& v2) {
          if (k2 == "name") d.String(v2, &mr.name);
          else if (k2 == "ignoredByScheduler") d.Bool(v2, &mr.ignored_by_scheduler);
          else return false;
          return true;
        });
        e->managed_resources.push_back(std::move(mr));
      });
    } else if (k == "ignorable") d.Bool(v, &e->ignorable);
    else return false;
    return true;
  });
}

}  // namespace

StatusOr<KubeSchedulerConfiguration> DecodeConfig(const YAML::Node& root, size_t node_budget) {
  KubeSchedulerConfiguration cfg;
  std::vector<std::vector<Node>> args_nodes;
  size_t budget = node_budget;
  Decoder d(&budget);
  d.Object(root, [&](const std::string& k, const Node& v) {
    if (k == "apiVersion") d.String(v, &cfg.api_version);
    else if (k == "kind") d.String(v, &cfg.kind);
    else if (k == "parallelism") d.Int32(v, &cfg.parallelism);
    else if (k == "leaderElection") {
      LeaderElectionConfiguration& le = cfg.leader_election;
      d.Object(v, [&](const std::string& k2, const Node& v2) {
        if (k2 == "leaderElect") d.Bool(v2, &le.leader_elect);
        else if (k2 == "leaseDuration") d.Dur(v2, &le.lease_duration);
        else if (k2 == "renewDeadline") d.Dur(v2, &le.renew_deadline);
        else if (k2 == "retryPeriod") d.Dur(v2, &le.retry_period);
        else if (k2 == "resourceLock") d.String(v2, &le.resource_lock);
        else if (k2 == "resourceName") d.String(v2, &le.resource_name);
        else if (k2 == "resourceNamespace") d.String(v2, &le.resource_namespace);
        else return false;
        return true;
      });
    } else if (k == "clientConnection") {
      ClientConnectionConfiguration& cc = cfg.client_connection;
      d.Object(v, [&](const std::string& k2, const Node& v2) {
        if (k2 == "kubeconfig") d.String(v2, &cc.kubeconfig);
        else if (k2 == "acceptContentTypes") d.String(v2, &cc.accept_content_types);
        else if (k2 == "contentType") d.String(v2, &cc.content_type);
        else if (k2 == "qps") d.Float(v2, &cc.qps);
        else if (k2 == "burst") d.Int32(v2, &cc.burst);
        else return false;
        return true;
      });
    } else if (k == "percentageOfNodesToScore") d.Int32(v, &cfg.percentage_of_nodes_to_score);
    else if (k == "podInitialBackoffSeconds") d.Int64(v, &cfg.pod_initial_backoff_seconds);
    else if (k == "podMaxBackoffSeconds") d.Int64(v, &cfg.pod_max_backoff_seconds);
    else if (k == "profiles") {
      d.List(v, [&](const Node& e) {
        KubeSchedulerProfile p;
        args_nodes.emplace_back();
        DecodeProfile(d, e, &p, &args_nodes.back());
        cfg.profiles.push_back(std::move(p));
      });
    } else if (k == "extenders") {
      d.List(v, [&](const Node& e) {
        Extender ext;
        DecodeExtender(d, e, &ext);
        cfg.extenders.push_back(std::move(ext));
      });
    } else if (k == "delayCacheUntilActive") d.Bool(v, &cfg.delay_cache_until_active);
    else if (k == "enableProfiling") d.Bool(v, &cfg.enable_profiling);
    else if (k == "enableContentionProfiling") {
      bool b = false;
      bool was_null = v.IsNull();
      d.Bool(v, &b);
      if (!was_null) cfg.enable_contention_profiling = b;
    } else if (k == "healthzBindAddress") d.String(v, &cfg.healthz_bind_address);
    else if (k == "metricsBindAddress") d.String(v, &cfg.metrics_bind_address);
    else return false;
    return true;
  });
  if (!d.ok()) return InvalidArgument(d.fatal());
  for (size_t i = 0; i < cfg.profiles.size(); ++i) {
    for (size_t j = 0; j < cfg.profiles[i].plugin_config.size(); ++j) {
      PluginConfig& pc = cfg.profiles[i].plugin_config[j];
      Status s = DecodeArgs(&budget, i, j, pc.name, args_nodes[i][j], &pc.args);
      if (!s.ok()) return s;
    }
  }
  if (!d.strict_errors().empty()) {
    std::string msg = "strict decoding error: ";
    for (size_t i = 0; i < d.strict_errors().size(); ++i) msg += (i ? ", " : "") + d.strict_errors()[i];
    return InvalidArgument(msg);
  }
  return cfg;
}

}  // namespace ksched::config::internal
