#include "pkg/framework/plugins/interpodaffinity/inter_pod_affinity.h"

#include <algorithm>
#include <utility>

#include "pkg/framework/plugins/interpodaffinity/common.h"

namespace ksched::framework::plugins::interpodaffinity {

bool PodMatchesAllTerms(const std::vector<api::AffinityTerm>& terms, const api::Pod& pod) {
  if (terms.empty()) return false;
  for (const api::AffinityTerm& t : terms) {
    if (!t.Matches(pod, nullptr)) return false;
  }
  return true;
}

bool PodMatchesAnyTerm(const std::vector<api::AffinityTerm>& terms, const api::Pod& pod) {
  for (const api::AffinityTerm& t : terms) {
    if (t.Matches(pod, nullptr)) return true;
  }
  return false;
}

void MergeNamespaces(api::AffinityTerm& term, const api::ClusterLister& lister) {
  if (!term.namespace_selector || term.namespace_selector->Empty()) return;
  std::vector<std::string> selected = lister.NamespacesMatching(*term.namespace_selector);
  term.namespaces.insert(term.namespaces.end(), std::make_move_iterator(selected.begin()),
                         std::make_move_iterator(selected.end()));
  std::sort(term.namespaces.begin(), term.namespaces.end());
  term.namespaces.erase(std::unique(term.namespaces.begin(), term.namespaces.end()), term.namespaces.end());
  term.namespace_selector.reset();
}

PreferredTerms ResolvePreferredTerms(const api::PodAffinityTerms* parsed, const api::ClusterLister& lister) {
  PreferredTerms out;
  if (parsed == nullptr) return out;
  out.affinity = parsed->preferred_affinity;
  out.anti_affinity = parsed->preferred_anti_affinity;
  for (auto* terms : {&out.affinity, &out.anti_affinity}) {
    for (api::WeightedAffinityTerm& t : *terms) MergeNamespaces(t.term, lister);
  }
  return out;
}

api::StringMap NamespaceLabels(const api::ClusterLister& lister, std::string_view ns) {
  std::optional<api::StringMap> labels = lister.NamespaceLabels(ns);
  return labels ? std::move(*labels) : api::StringMap();
}

std::string JoinErrors(const std::vector<std::string>& errors) {
  std::string out;
  for (const std::string& e : errors) {
    if (!out.empty()) out += ", ";
    out += e;
  }
  return out;
}

StatusOr<std::unique_ptr<Plugin>> InterPodAffinity::New(const config::PluginArgs& args, Handle& handle) {
  config::InterPodAffinityArgs typed;
  if (const auto* a = std::get_if<config::InterPodAffinityArgs>(&args)) {
    typed = *a;
  } else if (!std::holds_alternative<std::monostate>(args)) {
    return ksched::InvalidArgument("InterPodAffinity: args are not of type InterPodAffinityArgs");
  }
  return std::unique_ptr<Plugin>(std::make_unique<InterPodAffinity>(handle, typed));
}

// ---- queueing hints (upstream interpodaffinity/plugin.go) -------------------------------------

namespace {

// Whether `existing`'s required anti-affinity matches `pod` (namespace selectors are
// matched without the namespace's labels: the hint has no lister).
bool ExistingAntiAffinityMatches(const api::Pod& existing, const api::Pod& pod) {
  if (!api::HasRequiredPodAntiAffinity(existing)) return false;
  std::shared_ptr<const api::PodAffinityTerms> terms = api::ParsePodAffinityTerms(existing);
  return terms != nullptr && PodMatchesAnyTerm(terms->required_anti_affinity, pod);
}

}  // namespace

StatusOr<QueueingHint> PodChangeHint(const api::Pod& pod, const api::Pod* old_pod, const api::Pod* new_pod) {
  // Only assigned pods count for (anti-)affinity.
  if ((new_pod != nullptr && new_pod->spec.node_name.empty()) ||
      (old_pod != nullptr && old_pod->spec.node_name.empty())) {
    return QueueingHint::kSkip;
  }
  // The symmetric check: the changed pod's own required anti-affinity may be what kept
  // `pod` out (even when `pod` has no terms at all). Its deletion, or an update after
  // which its terms no longer match `pod`, may let `pod` in. Upstream's hint looks only at
  // `pod`'s terms; this errs on the side of a retry.
  if (old_pod != nullptr && ExistingAntiAffinityMatches(*old_pod, pod) &&
      (new_pod == nullptr || !ExistingAntiAffinityMatches(*new_pod, pod))) {
    return QueueingHint::kQueue;
  }
  std::shared_ptr<const api::PodAffinityTerms> terms = api::ParsePodAffinityTerms(pod);
  if (terms == nullptr) return QueueingHint::kSkip;
  if (!terms->parse_errors.empty()) return ksched::InvalidArgument(JoinErrors(terms->parse_errors));
  const auto& affinity = terms->required_affinity;
  const auto& anti = terms->required_anti_affinity;

  if (old_pod != nullptr && new_pod != nullptr) {
    // An update helps when the pod starts matching the affinity or stops matching the
    // anti-affinity.
    if (!PodMatchesAllTerms(affinity, *old_pod) && PodMatchesAllTerms(affinity, *new_pod)) {
      return QueueingHint::kQueue;
    }
    if (PodMatchesAnyTerm(anti, *old_pod) && !PodMatchesAnyTerm(anti, *new_pod)) return QueueingHint::kQueue;
    return QueueingHint::kSkip;
  }
  if (new_pod != nullptr) {
    return PodMatchesAllTerms(affinity, *new_pod) ? QueueingHint::kQueue : QueueingHint::kSkip;
  }
  if (old_pod == nullptr) return ksched::InvalidArgument("InterPodAffinity hint: Pod event without objects");
  return PodMatchesAnyTerm(anti, *old_pod) ? QueueingHint::kQueue : QueueingHint::kSkip;
}

StatusOr<QueueingHint> NodeChangeHint(const api::Pod& pod, const api::Node* old_node, const api::Node* new_node) {
  if (new_node == nullptr) return ksched::InvalidArgument("InterPodAffinity hint: Node event without new object");
  std::shared_ptr<const api::PodAffinityTerms> terms = api::ParsePodAffinityTerms(pod);
  if (terms == nullptr) return QueueingHint::kSkip;
  if (!terms->parse_errors.empty()) return ksched::InvalidArgument(JoinErrors(terms->parse_errors));
  const api::StringMap& new_labels = new_node->metadata.labels;

  // Affinity: a node joining a domain (added with the key, gaining it, or moving).
  for (const api::AffinityTerm& t : terms->required_affinity) {
    const std::string* now = new_labels.Get(t.topology_key);
    if (old_node == nullptr) {
      if (now != nullptr) return QueueingHint::kQueue;
      continue;
    }
    const std::string* before = old_node->metadata.labels.Get(t.topology_key);
    if (before == nullptr && now != nullptr) return QueueingHint::kQueue;
    if (before != nullptr && now != nullptr && *before != *now) return QueueingHint::kQueue;
  }
  // Anti-affinity: any new node, or a node leaving its domain (losing the key or moving).
  for (const api::AffinityTerm& t : terms->required_anti_affinity) {
    if (old_node == nullptr) return QueueingHint::kQueue;
    const std::string* before = old_node->metadata.labels.Get(t.topology_key);
    const std::string* now = new_labels.Get(t.topology_key);
    if (before != nullptr && now == nullptr) return QueueingHint::kQueue;
    if (before != nullptr && now != nullptr && *before != *now) return QueueingHint::kQueue;
  }
  return QueueingHint::kSkip;
}

std::vector<ClusterEventWithHint> InterPodAffinity::EventsToRegister() const {
  auto pod_hint = [](const api::Pod& pod, const void* old_obj, const void* new_obj) {
    return PodChangeHint(pod, ObjectAs<api::Pod>(old_obj), ObjectAs<api::Pod>(new_obj));
  };
  auto node_hint = [](const api::Pod& pod, const void* old_obj, const void* new_obj) {
    return NodeChangeHint(pod, ObjectAs<api::Node>(old_obj), ObjectAs<api::Node>(new_obj));
  };
  // With hints, upstream does not register UpdateNodeTaint (only its pre-hint pre-check needed it).
  return {
      {ClusterEvent{EventResource::kPod, kAdd | kUpdate | kDelete, ""}, pod_hint},
      {ClusterEvent{EventResource::kNode, kAdd | kUpdateNodeLabel, ""}, node_hint},
  };
}

}  // namespace ksched::framework::plugins::interpodaffinity
