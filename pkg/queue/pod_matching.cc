#include "pkg/queue/pod_matching.h"

#include <algorithm>
#include <string>

namespace ksched::queue {
namespace {

const std::string* Lookup(const api::StringMap& map, const std::string& key) {
  for (const auto& [k, v] : map) {
    if (k == key) return &v;
  }
  return nullptr;
}

bool Contains(const std::vector<std::string>& values, const std::string& v) {
  return std::find(values.begin(), values.end(), v) != values.end();
}

bool RequirementMatches(const api::LabelSelectorRequirement& r, const api::StringMap& labels) {
  const std::string* value = Lookup(labels, r.key);
  switch (r.op) {
    case api::SelectorOperator::kIn:
      return value != nullptr && Contains(r.values, *value);
    case api::SelectorOperator::kNotIn:
      return value == nullptr || !Contains(r.values, *value);
    case api::SelectorOperator::kExists:
      return value != nullptr;
    case api::SelectorOperator::kDoesNotExist:
      return value == nullptr;
    default:  // Gt/Lt are not valid in label selectors
      return false;
  }
}

bool NamespaceMatches(const api::PodAffinityTerm& term, const api::Pod& pending, const api::Pod& assigned) {
  const std::string& ns = assigned.metadata.namespace_;
  // {} selects every namespace; any other namespaceSelector needs namespace labels,
  // which the queue does not have: assume a match (at worst one extra retry).
  if (term.namespace_selector.has_value()) return true;
  if (term.namespaces.empty()) return ns == pending.metadata.namespace_;
  return Contains(term.namespaces, ns);
}

bool MetadataChanged(const api::ObjectMeta& a, const api::ObjectMeta& b) {
  return a.name != b.name || a.namespace_ != b.namespace_ || a.uid != b.uid || !(a.labels == b.labels) ||
         !(a.annotations == b.annotations) || a.owner_references != b.owner_references ||
         a.deletion_timestamp != b.deletion_timestamp;
}

// api::PodSpec has no operator==; compare field by field.
bool SpecChanged(const api::PodSpec& a, const api::PodSpec& b) {
  return a.scheduler_name != b.scheduler_name || a.node_name != b.node_name || a.priority != b.priority ||
         a.priority_class_name != b.priority_class_name || a.preemption_policy != b.preemption_policy ||
         a.containers != b.containers || a.init_containers != b.init_containers || a.overhead != b.overhead ||
         !(a.node_selector == b.node_selector) || a.affinity != b.affinity || a.tolerations != b.tolerations ||
         a.topology_spread_constraints != b.topology_spread_constraints ||
         a.scheduling_gates != b.scheduling_gates || a.volumes != b.volumes || a.pod_requests != b.pod_requests ||
         a.resource_claims != b.resource_claims;
}

}  // namespace

bool PodSchedulingPropertiesChanged(const api::Pod& old_pod, const api::Pod& new_pod) {
  // Of the status, only the claims the resourceclaim controller made for the pod count
  // (upstream keeps status.resourceClaimStatuses in isPodUpdated's comparison).
  return MetadataChanged(old_pod.metadata, new_pod.metadata) || SpecChanged(old_pod.spec, new_pod.spec) ||
         old_pod.status.resource_claim_statuses != new_pod.status.resource_claim_statuses;
}

bool SelectorMatches(const api::LabelSelector& selector, const api::StringMap& labels) {
  for (const auto& [k, v] : selector.match_labels) {
    const std::string* value = Lookup(labels, k);
    if (value == nullptr || *value != v) return false;
  }
  for (const auto& r : selector.match_expressions) {
    if (!RequirementMatches(r, labels)) return false;
  }
  return true;
}

bool AffinityTermMatches(const api::Pod& pending, const api::Pod& assigned) {
  const auto& affinity = pending.spec.affinity;
  if (!affinity.has_value() || !affinity->pod_affinity.has_value()) return false;
  for (const api::PodAffinityTerm& term : affinity->pod_affinity->required) {
    // A term without a selector selects no pod.
    if (!term.label_selector.has_value()) continue;
    if (NamespaceMatches(term, pending, assigned) && SelectorMatches(*term.label_selector, assigned.metadata.labels)) {
      return true;
    }
  }
  return false;
}

bool CrossTopologyCandidate(const framework::QueuedPodInfo& pending, const api::Pod& assigned) {
  // The plugins' names, as upstream's queue imports them.
  constexpr std::string_view kPodTopologySpread = "PodTopologySpread";
  constexpr std::string_view kInterPodAffinity = "InterPodAffinity";
  const framework::PluginSet& rejected = pending.unschedulable_plugins;
  if (rejected.contains(kPodTopologySpread) && pending.pod().metadata.namespace_ == assigned.metadata.namespace_) {
    return true;
  }
  return rejected.contains(kInterPodAffinity) || AffinityTermMatches(pending.pod(), assigned);
}

}  // namespace ksched::queue
