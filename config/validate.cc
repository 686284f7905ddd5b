#include "config/validate.h"

#include <algorithm>
#include <map>
#include <regex>
#include <set>

#include "config/field_error.h"

namespace ksched::config {
namespace {

using Errors = std::vector<std::string>;

void Append(Errors& to, Errors from) {
  for (std::string& e : from) to.push_back(std::move(e));
}

std::string Idx(const std::string& path, size_t i) { return path + "[" + std::to_string(i) + "]"; }

// k8s.io/apimachinery/pkg/util/validation.IsQualifiedName.
Errors IsQualifiedName(std::string_view value) {
  static const std::regex kName("^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$");
  static const std::regex kDns1123Subdomain("^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$");
  const std::string kNameMsg =
      "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
      "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
      "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
  Errors errs;
  std::string name;
  size_t slashes = std::count(value.begin(), value.end(), '/');
  if (slashes == 0) {
    name = std::string(value);
  } else if (slashes == 1) {
    size_t slash = value.find('/');
    std::string prefix(value.substr(0, slash));
    name = std::string(value.substr(slash + 1));
    if (prefix.empty()) {
      errs.push_back("prefix part must be non-empty");
    } else {
      if (prefix.size() > 253) errs.push_back("prefix part must be no more than 253 characters");
      if (!std::regex_match(prefix, kDns1123Subdomain)) {
        errs.push_back(
            "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
            "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
            "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
      }
    }
  } else {
    errs.push_back("a qualified name " + kNameMsg +
                   " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')");
    return errs;
  }
  if (name.empty()) errs.push_back("name part must be non-empty");
  else if (name.size() > 63) errs.push_back("name part must be no more than 63 characters");
  if (!std::regex_match(name, kName)) errs.push_back("name part " + kNameMsg);
  return errs;
}

// metav1validation.ValidateLabelName: one Invalid error per message.
Errors ValidateLabelName(const std::string& path, std::string_view name) {
  Errors errs;
  for (const std::string& msg : IsQualifiedName(name)) errs.push_back(FieldInvalidString(path, name, msg));
  return errs;
}

std::string RenderStringList(const std::vector<std::string>& v) {
  std::string s = "[]string{";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + GoQuote(v[i]);
  return s + "}";
}

Errors ValidateShape(const std::string& path, const std::vector<UtilizationShapePoint>& shape) {
  Errors errs;
  if (shape.empty()) return {FieldRequired(path, "at least one point must be specified")};
  for (size_t i = 1; i < shape.size(); ++i) {
    if (shape[i - 1].utilization >= shape[i].utilization) {
      errs.push_back(FieldInvalid(Idx(path, i) + ".utilization", shape[i].utilization,
                                  "should be greater than prior element"));
      break;
    }
  }
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i].utilization < 0 || shape[i].utilization > 100) {
      errs.push_back(FieldInvalid(Idx(path, i) + ".utilization", shape[i].utilization, "not in valid range [0, 100]"));
    }
    if (shape[i].score < 0 || shape[i].score > 10) {
      errs.push_back(FieldInvalid(Idx(path, i) + ".score", shape[i].score, "not in valid range [0, 10]"));
    }
  }
  return errs;
}

Errors ValidateRequirements(const std::string& path, const std::vector<NodeSelectorRequirement>& reqs) {
  Errors errs;
  for (size_t j = 0; j < reqs.size(); ++j) {
    const NodeSelectorRequirement& r = reqs[j];
    std::string p = Idx(path, j);
    if (r.op == "In" || r.op == "NotIn") {
      if (r.values.empty()) errs.push_back(FieldRequired(p + ".values", "must be specified when `operator` is 'In' or 'NotIn'"));
    } else if (r.op == "Exists" || r.op == "DoesNotExist") {
      if (!r.values.empty()) {
        errs.push_back(FieldForbidden(p + ".values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
      }
    } else if (r.op == "Gt" || r.op == "Lt") {
      if (r.values.size() != 1) {
        errs.push_back(FieldRequired(p + ".values", "must be specified single value when `operator` is 'Lt' or 'Gt'"));
      }
    } else {
      errs.push_back(FieldNotSupported(p + ".operator", r.op, {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"}));
    }
    Errors key_msgs = IsQualifiedName(r.key);
    if (!key_msgs.empty()) {
      std::string joined;
      for (size_t k = 0; k < key_msgs.size(); ++k) joined += (k ? "; " : "") + key_msgs[k];
      errs.push_back(FieldInvalidString(p + ".key", r.key, joined));
    }
  }
  return errs;
}

Errors ValidateFieldRequirements(const std::string& path, const std::vector<NodeSelectorRequirement>& reqs) {
  Errors errs;
  for (size_t j = 0; j < reqs.size(); ++j) {
    const NodeSelectorRequirement& r = reqs[j];
    std::string p = Idx(path, j);
    if (r.values.size() != 1) errs.push_back(FieldInvalid(p + ".values", RenderStringList(r.values), "must have one element"));
    if (r.key != "metadata.name") errs.push_back(FieldInvalidString(p + ".key", r.key, "not a valid field selector key"));
    if (r.op != "In" && r.op != "NotIn") errs.push_back(FieldInvalidString(p + ".operator", r.op, "not a valid selector operator"));
  }
  return errs;
}

Errors ValidateTerm(const std::string& path, const NodeSelectorTerm& t) {
  Errors errs = ValidateRequirements(path + ".matchExpressions", t.match_expressions);
  Append(errs, ValidateFieldRequirements(path + ".matchFields", t.match_fields));
  return errs;
}

bool IsRemovedPlugin(std::string_view name) {
  return name == "AzureDiskLimits" || name == "CinderLimits" || name == "EBSLimits" || name == "GCEPDLimits";
}

std::string RemovedDetail(const std::string& api_version) {
  return "was invalid in version " + GoQuote(kAPIVersion) + " (KubeSchedulerConfiguration is version " +
         GoQuote(api_version) + ")";
}

// Go's %#v of config.PluginSet, which upstream prints for a queueSort mismatch.
std::string RenderPluginSet(const PluginSet& s) {
  auto list = [](const std::vector<Plugin>& v) {
    if (v.empty()) return std::string("[]config.Plugin(nil)");
    std::string out = "[]config.Plugin{";
    for (size_t i = 0; i < v.size(); ++i) {
      out += (i ? ", " : "") + std::string("config.Plugin{Name:") + GoQuote(v[i].name) +
             ", Weight:" + std::to_string(v[i].weight) + "}";
    }
    return out + "}";
  };
  return "config.PluginSet{Enabled:" + list(s.enabled) + ", Disabled:" + list(s.disabled) + "}";
}

Errors ValidatePercentage(const std::string& path, const std::optional<int32_t>& pct) {
  if (pct && (*pct < 0 || *pct > 100)) return {FieldInvalid(path, *pct, "not in valid range [0-100]")};
  return {};
}

Errors ValidateArgs(const std::string& path, const PluginArgs& args) {
  return std::visit(
      [&](const auto& a) -> Errors {
        using T = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<T, DefaultPreemptionArgs>) return ValidateDefaultPreemptionArgs(path, a);
        else if constexpr (std::is_same_v<T, DynamicResourcesArgs>) return ValidateDynamicResourcesArgs(path, a);
        else if constexpr (std::is_same_v<T, InterPodAffinityArgs>) return ValidateInterPodAffinityArgs(path, a);
        else if constexpr (std::is_same_v<T, NodeAffinityArgs>) return ValidateNodeAffinityArgs(path, a);
        else if constexpr (std::is_same_v<T, NodeResourcesBalancedAllocationArgs>) {
          return ValidateNodeResourcesBalancedAllocationArgs(path, a);
        } else if constexpr (std::is_same_v<T, NodeResourcesFitArgs>) return ValidateNodeResourcesFitArgs(path, a);
        else if constexpr (std::is_same_v<T, PodTopologySpreadArgs>) return ValidatePodTopologySpreadArgs(path, a);
        else if constexpr (std::is_same_v<T, VolumeBindingArgs>) return ValidateVolumeBindingArgs(path, a);
        else return {};
      },
      args);
}

Errors ValidateProfile(const std::string& path, const std::string& api_version, const KubeSchedulerProfile& prof) {
  Errors errs;
  if (prof.scheduler_name.empty()) errs.push_back(FieldRequired(path + ".schedulerName"));
  Append(errs, ValidatePercentage(path + ".percentageOfNodesToScore", prof.percentage_of_nodes_to_score));
  std::set<std::string> seen;
  for (size_t i = 0; i < prof.plugin_config.size(); ++i) {
    const PluginConfig& pc = prof.plugin_config[i];
    std::string p = Idx(path + ".pluginConfig", i);
    if (!seen.insert(pc.name).second) errs.push_back(FieldDuplicate(p, GoQuote(pc.name)));
    if (IsRemovedPlugin(pc.name)) {
      errs.push_back(FieldInvalidString(p, pc.name, RemovedDetail(api_version)));
      continue;
    }
    Append(errs, ValidateArgs(p + ".args", pc.args));
  }
  for (const PluginSetField& f : kPluginSetFields) {
    const PluginSet& set = prof.plugins.*f.member;
    std::string sp = path + ".plugins." + std::string(f.json_name);
    for (size_t i = 0; i < set.enabled.size(); ++i) {
      if (IsRemovedPlugin(set.enabled[i].name)) {
        errs.push_back(FieldInvalidString(Idx(sp + ".enabled", i), set.enabled[i].name, RemovedDetail(api_version)));
      }
      // ksched addition: upstream turns 0 into 1 but lets negative weights through.
      if (set.enabled[i].weight < 0) {
        errs.push_back(FieldInvalid(Idx(sp + ".enabled", i) + ".weight", set.enabled[i].weight,
                                    "must be greater than or equal to 0"));
      }
    }
  }
  return errs;
}

std::string RenderArgs(const PluginArgs& args) {
  if (const auto* raw = std::get_if<RawArgs>(&args)) return GoQuote(raw->yaml);
  return "runtime.Object";
}

Errors ValidateCommonQueueSort(const std::vector<KubeSchedulerProfile>& profiles) {
  Errors errs;
  const PluginSet& canon = profiles[0].plugins.queue_sort;
  std::string queue_sort_name = canon.enabled.empty() ? "" : canon.enabled[0].name;
  if (canon.enabled.size() > 1) {
    errs.push_back(FieldInvalid("profiles[0].plugins.queueSort.Enabled", static_cast<int64_t>(canon.enabled.size()),
                                "only one queue sort plugin can be enabled"));
  }
  const PluginArgs* canon_args = nullptr;
  static const PluginArgs kNone;
  for (const PluginConfig& pc : profiles[0].plugin_config) {
    if (!queue_sort_name.empty() && pc.name == queue_sort_name) canon_args = &pc.args;
  }
  for (size_t i = 1; i < profiles.size(); ++i) {
    const PluginSet& curr = profiles[i].plugins.queue_sort;
    if (!(curr == canon)) {
      errs.push_back(FieldInvalid(Idx("profiles", i) + ".plugins.queueSort", RenderPluginSet(curr),
                                  "must be the same for all profiles"));
    }
    for (const PluginConfig& pc : profiles[i].plugin_config) {
      if (pc.name == queue_sort_name && !(pc.args == (canon_args ? *canon_args : kNone))) {
        errs.push_back(FieldInvalid(Idx("profiles", i) + ".pluginConfig.args", RenderArgs(pc.args),
                                    "queueSort must be the same for all profiles"));
      }
    }
  }
  return errs;
}

// v1helper.IsExtendedResourceName: a name with a domain prefix outside kubernetes.io that
// still is a qualified name once quota's "requests." prefix is put in front of it.
bool IsExtendedResourceName(std::string_view name) {
  if (name.find('/') == std::string_view::npos || name.find("kubernetes.io/") != std::string_view::npos) return false;
  if (name.starts_with("requests.")) return false;
  return IsQualifiedName(std::string("requests.") + std::string(name)).empty();
}

// validation.go validateExtenders: a prioritizer needs a positive weight, managed resource
// names are extended resource names listed once across all extenders, and at most one
// extender binds.
Errors ValidateExtenders(const std::string& path, const std::vector<Extender>& extenders) {
  Errors errs;
  int binders = 0;
  std::set<std::string> managed;
  for (size_t i = 0; i < extenders.size(); ++i) {
    const Extender& e = extenders[i];
    const std::string p = Idx(path, i);
    if (!e.prioritize_verb.empty() && e.weight <= 0) {
      errs.push_back(FieldInvalid(p + ".weight", e.weight, "must have a positive weight applied to it"));
    }
    if (!e.bind_verb.empty()) ++binders;
    for (size_t j = 0; j < e.managed_resources.size(); ++j) {
      const std::string& name = e.managed_resources[j].name;
      const std::string np = Idx(p + ".managedResources", j) + ".name";
      Errors qualified = IsQualifiedName(name);
      for (const std::string& msg : qualified) errs.push_back(FieldInvalidString(np, name, msg));
      if (qualified.empty() && !IsExtendedResourceName(name)) {
        errs.push_back(FieldInvalidString(np, name, "is an invalid extended resource name"));
      }
      if (!managed.insert(name).second) {
        errs.push_back(FieldInvalidString(np, name, "duplicate extender managed resource name"));
      }
    }
  }
  if (binders > 1) {
    errs.push_back(FieldInvalidString(path, "found " + std::to_string(binders) + " extenders implementing bind",
                                      "only one extender can implement bind"));
  }
  return errs;
}

}  // namespace

std::vector<std::string> ValidateDefaultPreemptionArgs(const std::string& path, const DefaultPreemptionArgs& a) {
  Errors errs;
  std::string pct = path + ".minCandidateNodesPercentage", abs = path + ".minCandidateNodesAbsolute";
  if (a.min_candidate_nodes_percentage < 0 || a.min_candidate_nodes_percentage > 100) {
    errs.push_back(FieldInvalid(pct, a.min_candidate_nodes_percentage, "not in valid range [0, 100]"));
  }
  if (a.min_candidate_nodes_absolute < 0) {
    errs.push_back(FieldInvalid(abs, a.min_candidate_nodes_absolute, "not in valid range [0, inf)"));
  }
  if (a.min_candidate_nodes_percentage == 0 && a.min_candidate_nodes_absolute == 0) {
    errs.push_back(FieldInvalid(pct, 0, "cannot be zero at the same time as minCandidateNodesAbsolute"));
    errs.push_back(FieldInvalid(abs, 0, "cannot be zero at the same time as minCandidateNodesPercentage"));
  }
  return errs;
}

std::vector<std::string> ValidateDynamicResourcesArgs(const std::string& path, const DynamicResourcesArgs& a) {
  Errors errs;
  // The value prints as metav1.Duration's String(), unquoted: "Invalid value: -1s".
  if (a.filter_timeout < Duration::zero()) {
    errs.push_back(FieldInvalid(path + ".filterTimeout", FormatGoDuration(a.filter_timeout), "must be zero or positive"));
  }
  if (a.binding_timeout < std::chrono::seconds(1)) {
    errs.push_back(
        FieldInvalid(path + ".bindingTimeout", FormatGoDuration(a.binding_timeout), "must be at least 1 second"));
  }
  return errs;
}

std::vector<std::string> ValidateInterPodAffinityArgs(const std::string& path, const InterPodAffinityArgs& a) {
  if (a.hard_pod_affinity_weight < 0 || a.hard_pod_affinity_weight > 100) {
    return {FieldInvalid(path + ".hardPodAffinityWeight", a.hard_pod_affinity_weight, "not in valid range [0, 100]")};
  }
  return {};
}

std::vector<std::string> ValidateNodeAffinityArgs(const std::string& path, const NodeAffinityArgs& a) {
  Errors errs;
  if (!a.added_affinity) return errs;
  if (a.added_affinity->required) {
    std::string p = path + ".addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms";
    for (size_t i = 0; i < a.added_affinity->required->size(); ++i) {
      Append(errs, ValidateTerm(Idx(p, i), (*a.added_affinity->required)[i]));
    }
  }
  std::string p = path + ".addedAffinity.preferredDuringSchedulingIgnoredDuringExecution";
  for (size_t i = 0; i < a.added_affinity->preferred.size(); ++i) {
    Append(errs, ValidateTerm(Idx(p, i) + ".preference", a.added_affinity->preferred[i].preference));
  }
  return errs;
}

std::vector<std::string> ValidateNodeResourcesBalancedAllocationArgs(const std::string& path,
                                                                     const NodeResourcesBalancedAllocationArgs& a) {
  Errors errs;
  std::set<std::string> seen;
  for (size_t i = 0; i < a.resources.size(); ++i) {
    std::string p = Idx(path + ".resources", i);
    if (!seen.insert(a.resources[i].name).second) errs.push_back(FieldDuplicate(p + ".name", GoQuote(a.resources[i].name)));
    if (a.resources[i].weight != 1) errs.push_back(FieldInvalid(p + ".weight", a.resources[i].weight, "must be 1"));
  }
  return errs;
}

std::vector<std::string> ValidateNodeResourcesFitArgs(const std::string& path, const NodeResourcesFitArgs& a) {
  Errors errs;
  for (size_t i = 0; i < a.ignored_resources.size(); ++i) {
    Append(errs, ValidateLabelName(Idx(path + ".ignoredResources", i), a.ignored_resources[i]));
  }
  for (size_t i = 0; i < a.ignored_resource_groups.size(); ++i) {
    std::string p = Idx(path + ".ignoredResourceGroups", i);
    const std::string& g = a.ignored_resource_groups[i];
    if (g.find('/') != std::string::npos) errs.push_back(FieldInvalidString(p, g, "resource group name can't contain '/'"));
    Append(errs, ValidateLabelName(p, g));
  }
  if (a.scoring_strategy) {
    const ScoringStrategy& s = *a.scoring_strategy;
    std::string sp = path + ".scoringStrategy";
    if (s.type != kLeastAllocated && s.type != kMostAllocated && s.type != kRequestedToCapacityRatio) {
      errs.push_back(FieldNotSupported(sp + ".type", s.type, {kLeastAllocated, kMostAllocated, kRequestedToCapacityRatio}));
    }
    for (size_t i = 0; i < s.resources.size(); ++i) {
      if (s.resources[i].weight <= 0 || s.resources[i].weight > 100) {
        errs.push_back(FieldInvalid(Idx(sp + ".resources", i) + ".weight", s.resources[i].weight,
                                    "resource weight of " + s.resources[i].name + " not in valid range (0, 100]"));
      }
    }
    if (s.requested_to_capacity_ratio_shape) Append(errs, ValidateShape(sp + ".shape", *s.requested_to_capacity_ratio_shape));
  }
  return errs;
}

std::vector<std::string> ValidatePodTopologySpreadArgs(const std::string& path, const PodTopologySpreadArgs& a) {
  Errors errs;
  std::string dt = path + ".defaultingType";
  if (a.defaulting_type != kSystemDefaulting && a.defaulting_type != kListDefaulting) {
    errs.push_back(FieldNotSupported(dt, a.defaulting_type, {kSystemDefaulting, kListDefaulting}));
  } else if (a.defaulting_type == kSystemDefaulting && !a.default_constraints.empty()) {
    errs.push_back(FieldInvalidString(dt, a.defaulting_type, "when .defaultConstraints are not empty"));
  }
  std::string cp = path + ".defaultConstraints";
  for (size_t i = 0; i < a.default_constraints.size(); ++i) {
    const TopologySpreadConstraint& c = a.default_constraints[i];
    std::string p = Idx(cp, i);
    if (c.max_skew <= 0) errs.push_back(FieldInvalid(p + ".maxSkew", c.max_skew, "not in valid range (0, inf)"));
    if (c.topology_key.empty()) errs.push_back(FieldRequired(p + ".topologyKey", "can not be empty"));
    else Append(errs, ValidateLabelName(p + ".topologyKey", c.topology_key));
    if (c.when_unsatisfiable.empty()) {
      errs.push_back(FieldRequired(p + ".whenUnsatisfiable", "can not be empty"));
    } else if (c.when_unsatisfiable != "DoNotSchedule" && c.when_unsatisfiable != "ScheduleAnyway") {
      errs.push_back(FieldNotSupported(p + ".whenUnsatisfiable", c.when_unsatisfiable, {"DoNotSchedule", "ScheduleAnyway"}));
    }
    if (c.has_label_selector) {
      errs.push_back(FieldForbidden(p + ".labelSelector", "constraint must not define a selector, as they deduced for each pod"));
    }
    for (size_t j = 0; j < i; ++j) {
      const TopologySpreadConstraint& o = a.default_constraints[j];
      if (o.topology_key == c.topology_key && o.when_unsatisfiable == c.when_unsatisfiable) {
        errs.push_back(FieldDuplicate(p, GoQuote("{" + c.topology_key + ", " + c.when_unsatisfiable + "}")));
        break;
      }
    }
  }
  return errs;
}

std::vector<std::string> ValidateVolumeBindingArgs(const std::string& path, const VolumeBindingArgs& a) {
  Errors errs;
  if (a.bind_timeout_seconds < 0) {
    errs.push_back(FieldInvalid(path + ".bindTimeoutSeconds", a.bind_timeout_seconds,
                                "invalid BindTimeoutSeconds, should not be a negative value"));
  }
  if (!a.shape.empty()) Append(errs, ValidateShape(path + ".shape", a.shape));
  return errs;
}

std::vector<std::string> ValidationErrors(const KubeSchedulerConfiguration& cfg) {
  Errors errs;
  if (cfg.client_connection.burst < 0) {
    errs.push_back(FieldInvalid("clientConnection.burst", cfg.client_connection.burst, "must be non-negative"));
  }
  const LeaderElectionConfiguration& le = cfg.leader_election;
  if (le.leader_elect) {
    auto positive = [&](std::string_view name, Duration d) {
      if (d.count() <= 0) {
        errs.push_back(FieldInvalid("leaderElection." + std::string(name), FormatGoDuration(d), "must be greater than zero"));
      }
    };
    positive("leaseDuration", le.lease_duration);
    positive("renewDeadline", le.renew_deadline);
    positive("retryPeriod", le.retry_period);
    if (le.lease_duration <= le.renew_deadline) {
      errs.push_back(FieldInvalid("leaderElection.leaseDuration", FormatGoDuration(le.renew_deadline),
                                  "LeaseDuration must be greater than RenewDeadline"));
    }
    // client-go's elector refuses this at startup (JitterFactor 1.2); reported here instead.
    if (le.retry_period.count() > 0 && le.renew_deadline.count() > 0 &&
        le.renew_deadline.count() <= le.retry_period.count() * 12 / 10) {
      errs.push_back(FieldInvalid("leaderElection.renewDeadline", FormatGoDuration(le.renew_deadline),
                                  "renewDeadline must be greater than retryPeriod*JitterFactor"));
    }
    if (le.resource_lock.empty()) errs.push_back(FieldInvalidString("leaderElection.resourceLock", "", "resourceLock is required"));
    if (le.resource_namespace.empty()) {
      errs.push_back(FieldInvalidString("leaderElection.resourceNamespace", "", "resourceNamespace is required"));
    }
    if (le.resource_name.empty()) errs.push_back(FieldInvalidString("leaderElection.resourceName", "", "resourceName is required"));
    if (le.resource_lock != "leases") {
      errs.push_back(FieldInvalidString("leaderElection.resourceLock", le.resource_lock, "resourceLock value must be \"leases\""));
    }
  }
  if (cfg.parallelism <= 0) {
    errs.push_back(FieldInvalid("parallelism", cfg.parallelism, "should be an integer value greater than zero"));
  }
  if (cfg.profiles.empty()) {
    errs.push_back(FieldRequired("profiles"));
  } else {
    std::map<std::string, size_t> names;
    for (size_t i = 0; i < cfg.profiles.size(); ++i) {
      const KubeSchedulerProfile& prof = cfg.profiles[i];
      Append(errs, ValidateProfile(Idx("profiles", i), cfg.api_version, prof));
      if (names.contains(prof.scheduler_name)) {
        errs.push_back(FieldDuplicate(Idx("profiles", i) + ".schedulerName", GoQuote(prof.scheduler_name)));
      }
      names[prof.scheduler_name] = i;
    }
    Append(errs, ValidateCommonQueueSort(cfg.profiles));
  }
  Append(errs, ValidatePercentage("percentageOfNodesToScore", cfg.percentage_of_nodes_to_score));
  if (cfg.pod_initial_backoff_seconds <= 0) {
    errs.push_back(FieldInvalid("podInitialBackoffSeconds", cfg.pod_initial_backoff_seconds, "must be greater than 0"));
  }
  if (cfg.pod_max_backoff_seconds < cfg.pod_initial_backoff_seconds) {
    errs.push_back(FieldInvalid("podMaxBackoffSeconds", cfg.pod_max_backoff_seconds,
                                "must be greater than or equal to PodInitialBackoffSeconds"));
  }
  Append(errs, ValidateExtenders("extenders", cfg.extenders));
  return errs;
}

Status ValidateConfig(const KubeSchedulerConfiguration& cfg) { return AggregateErrors(ValidationErrors(cfg)); }

}  // namespace ksched::config
