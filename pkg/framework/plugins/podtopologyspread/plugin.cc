// Construction and queueing hints (upstream podtopologyspread/plugin.go).
#include <utility>
#include <variant>

#include "pkg/framework/plugins/podtopologyspread/pod_topology_spread.h"

namespace ksched::framework::plugins::podtopologyspread {
namespace {

StatusOr<api::InclusionPolicy> ParsePolicy(const std::string& v) {
  if (v == "Honor") return api::InclusionPolicy::kHonor;
  if (v == "Ignore") return api::InclusionPolicy::kIgnore;
  return ksched::InvalidArgument("PodTopologySpread: unknown node inclusion policy \"" + v + "\"");
}

// config's string-typed default constraint as a pod-spec constraint (without selector:
// default constraints take the selector of the pod's Services and controllers).
StatusOr<api::TopologySpreadConstraint> FromConfig(const config::TopologySpreadConstraint& in) {
  api::TopologySpreadConstraint out;
  out.max_skew = in.max_skew;
  out.topology_key = in.topology_key;
  if (in.when_unsatisfiable == "DoNotSchedule") {
    out.when_unsatisfiable = api::WhenUnsatisfiable::kDoNotSchedule;
  } else if (in.when_unsatisfiable == "ScheduleAnyway") {
    out.when_unsatisfiable = api::WhenUnsatisfiable::kScheduleAnyway;
  } else {
    return ksched::InvalidArgument("PodTopologySpread: unknown whenUnsatisfiable \"" + in.when_unsatisfiable + "\"");
  }
  out.min_domains = in.min_domains;
  if (in.node_affinity_policy) {
    auto p = ParsePolicy(*in.node_affinity_policy);
    if (!p.ok()) return p.status();
    out.node_affinity_policy = *p;
  }
  if (in.node_taints_policy) {
    auto p = ParsePolicy(*in.node_taints_policy);
    if (!p.ok()) return p.status();
    out.node_taints_policy = *p;
  }
  out.match_label_keys = in.match_label_keys;
  return out;
}

// upstream plugin.go involvedInTopologySpreading: the pod itself, or an assigned pod of
// its namespace.
bool InvolvedInTopologySpreading(const api::Pod& incoming, const api::Pod& pod) {
  return incoming.metadata.uid == pod.metadata.uid ||
         (!incoming.spec.node_name.empty() && incoming.metadata.namespace_ == pod.metadata.namespace_);
}

bool HasConstraintWithNodeTaintsPolicyHonor(const Constraints& constraints) {
  for (const Constraint& c : constraints) {
    if (c.honor_node_taints) return true;
  }
  return false;
}

bool TopologyKeyLabelsChanged(const api::StringMap& before, const api::StringMap& after,
                              const Constraints& constraints) {
  for (const Constraint& c : constraints) {
    const std::string* a = before.Get(c.topology_key);
    const std::string* b = after.Get(c.topology_key);
    // A missing label reads as "" (Go map semantics).
    if ((a != nullptr ? std::string_view(*a) : std::string_view()) !=
        (b != nullptr ? std::string_view(*b) : std::string_view())) {
      return true;
    }
  }
  return false;
}

}  // namespace

StatusOr<std::unique_ptr<Plugin>> PodTopologySpread::New(const config::PluginArgs& args, Handle& handle) {
  config::PodTopologySpreadArgs a;
  if (const auto* typed = std::get_if<config::PodTopologySpreadArgs>(&args)) {
    a = *typed;
  } else if (!std::holds_alternative<std::monostate>(args)) {
    return ksched::InvalidArgument("want args to be of type PodTopologySpreadArgs");
  }
  std::vector<api::TopologySpreadConstraint> defaults;
  bool system_defaulted = false;
  if (a.defaulting_type == config::kSystemDefaulting) {
    defaults = SystemDefaultConstraints();
    system_defaulted = true;
  } else {
    for (const config::TopologySpreadConstraint& c : a.default_constraints) {
      auto converted = FromConfig(c);
      if (!converted.ok()) return converted.status();
      defaults.push_back(std::move(*converted));
    }
  }
  return std::unique_ptr<Plugin>(std::make_unique<PodTopologySpread>(handle, std::move(defaults), system_defaulted));
}

std::vector<ClusterEventWithHint> PodTopologySpread::EventsToRegister() const {
  auto pod_hint = [this](const api::Pod& pod, const void* old_obj, const void* new_obj) {
    return PodChangeHint(pod, old_obj, new_obj);
  };
  auto node_hint = [this](const api::Pod& pod, const void* old_obj, const void* new_obj) {
    return NodeChangeHint(pod, old_obj, new_obj);
  };
  return {
      // An assigned pod added, relabelled or deleted changes the counts; an update of the
      // pod itself (a new toleration) matters with nodeTaintsPolicy Honor.
      {ClusterEvent{EventResource::kPod, kAdd | kUpdate | kDelete, ""}, pod_hint},
      // Nodes appearing, disappearing or changing topology labels or taints change domains.
      {ClusterEvent{EventResource::kNode, kAdd | kDelete | kUpdateNodeLabel | kUpdateNodeTaint, ""}, node_hint},
  };
}

// upstream plugin.go isSchedulableAfterPodChange.
StatusOr<QueueingHint> PodTopologySpread::PodChangeHint(const api::Pod& pod, const void* old_obj,
                                                        const void* new_obj) const {
  const api::Pod* before = ObjectAs<api::Pod>(old_obj);
  const api::Pod* after = ObjectAs<api::Pod>(new_obj);
  if (before == nullptr && after == nullptr) return ksched::InvalidArgument("PodTopologySpread hint: no pod");
  if ((after != nullptr && !InvolvedInTopologySpreading(*after, pod)) ||
      (before != nullptr && !InvolvedInTopologySpreading(*before, pod))) {
    return QueueingHint::kSkip;
  }
  auto constraints = GetConstraints(pod, api::WhenUnsatisfiable::kDoNotSchedule);
  if (!constraints.ok()) return constraints.status();

  if (before != nullptr && after != nullptr) {
    if (pod.metadata.uid == after->metadata.uid &&
        !(after->spec.tolerations == before->spec.tolerations) && HasConstraintWithNodeTaintsPolicyHonor(*constraints)) {
      return QueueingHint::kQueue;
    }
    if (after->metadata.labels == before->metadata.labels) return QueueingHint::kSkip;
    for (const Constraint& c : *constraints) {
      if (c.Matches(before->metadata.labels) != c.Matches(after->metadata.labels)) return QueueingHint::kQueue;
    }
    return QueueingHint::kSkip;
  }
  const api::Pod& changed = after != nullptr ? *after : *before;
  return PodLabelsMatchSpreadConstraints(*constraints, changed.metadata.labels) ? QueueingHint::kQueue
                                                                                : QueueingHint::kSkip;
}

// upstream plugin.go isSchedulableAfterNodeChange.
StatusOr<QueueingHint> PodTopologySpread::NodeChangeHint(const api::Pod& pod, const void* old_obj,
                                                         const void* new_obj) const {
  const api::Node* before = ObjectAs<api::Node>(old_obj);
  const api::Node* after = ObjectAs<api::Node>(new_obj);
  if (before == nullptr && after == nullptr) return ksched::InvalidArgument("PodTopologySpread hint: no node");
  auto constraints = GetConstraints(pod, api::WhenUnsatisfiable::kDoNotSchedule);
  if (!constraints.ok()) return constraints.status();

  bool before_matching = before != nullptr && NodeLabelsMatchSpreadConstraints(before->metadata.labels, *constraints);
  bool after_matching = after != nullptr && NodeLabelsMatchSpreadConstraints(after->metadata.labels, *constraints);
  if (before != nullptr && after != nullptr) {
    if (before_matching != after_matching) return QueueingHint::kQueue;
    if (after_matching && (TopologyKeyLabelsChanged(before->metadata.labels, after->metadata.labels, *constraints) ||
                           !(before->spec.taints == after->spec.taints))) {
      return QueueingHint::kQueue;
    }
    return QueueingHint::kSkip;
  }
  // Added: queue when the new node has every topology key; deleted: when the old one had.
  return (after != nullptr ? after_matching : before_matching) ? QueueingHint::kQueue : QueueingHint::kSkip;
}

}  // namespace ksched::framework::plugins::podtopologyspread
