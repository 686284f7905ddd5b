#include "pkg/api/pod_affinity.h"

#include <algorithm>
#include <utility>

namespace ksched::api {
namespace {

// A null selector stays null (it matches nothing); only a given one gains the keys.
std::optional<LabelSelector> WithLabelKeys(const Pod& pod, const PodAffinityTerm& term) {
  if (!term.label_selector) return std::nullopt;
  LabelSelector s = *term.label_selector;
  const auto add = [&](const std::vector<std::string>& keys, SelectorOperator op) {
    for (const std::string& key : keys) {
      const std::string* value = pod.metadata.labels.Get(key);
      if (value != nullptr) s.match_expressions.push_back({key, op, {*value}});
    }
  };
  add(term.match_label_keys, SelectorOperator::kIn);
  add(term.mismatch_label_keys, SelectorOperator::kNotIn);
  return s;
}

std::optional<LabelSelectorMatcher> ParseOptional(const std::optional<LabelSelector>& s,
                                                  std::vector<std::string>* errors) {
  if (!s) return std::nullopt;
  auto m = LabelSelectorMatcher::Parse(*s);
  if (!m.ok()) {
    if (errors != nullptr) errors->push_back(m.status().message());
    return std::nullopt;
  }
  return std::move(*m);
}

template <typename Out, typename In, typename Fn>
std::vector<Out> ParseAll(const std::vector<In>& in, Fn fn) {
  std::vector<Out> out;
  out.reserve(in.size());
  for (const In& t : in) out.push_back(fn(t));
  return out;
}

}  // namespace

bool AffinityTerm::HasNamespace(std::string_view ns) const {
  return std::binary_search(namespaces.begin(), namespaces.end(), ns);
}

bool AffinityTerm::Matches(const Pod& pod, const StringMap* ns_labels) const {
  if (!selector) return false;
  static const StringMap kNoLabels;
  // Unknown labels count as none, as upstream's nil labels.Set: an empty selector still
  // matches, and so do NotIn / DoesNotExist requirements.
  bool ns_ok = HasNamespace(pod.metadata.namespace_) ||
               (namespace_selector && namespace_selector->Matches(ns_labels != nullptr ? *ns_labels : kNoLabels));
  return ns_ok && selector->Matches(pod.metadata.labels);
}

AffinityTerm ParseAffinityTerm(const Pod& pod, const PodAffinityTerm& term, std::vector<std::string>* errors) {
  AffinityTerm t;
  if (term.namespaces.empty() && !term.namespace_selector) {
    t.namespaces.push_back(pod.metadata.namespace_);
  } else {
    t.namespaces = term.namespaces;
    std::sort(t.namespaces.begin(), t.namespaces.end());
    t.namespaces.erase(std::unique(t.namespaces.begin(), t.namespaces.end()), t.namespaces.end());
  }
  t.selector = ParseOptional(WithLabelKeys(pod, term), errors);
  t.topology_key = term.topology_key;
  t.namespace_selector = ParseOptional(term.namespace_selector, errors);
  return t;
}

std::shared_ptr<const PodAffinityTerms> ParsePodAffinityTerms(const Pod& pod) {
  if (!HasPodAffinityTerms(pod)) return nullptr;
  auto out = std::make_shared<PodAffinityTerms>();
  std::vector<std::string>* errors = &out->parse_errors;
  const auto uses_labels = [](const PodAffinityTerm& t) {
    return !t.match_label_keys.empty() || !t.mismatch_label_keys.empty();
  };
  const auto required = [&](const PodAffinityTerm& t) {
    out->uses_own_labels = out->uses_own_labels || uses_labels(t);
    return ParseAffinityTerm(pod, t, errors);
  };
  const auto preferred = [&](const WeightedPodAffinityTerm& t) {
    out->uses_own_labels = out->uses_own_labels || uses_labels(t.term);
    return WeightedAffinityTerm{ParseAffinityTerm(pod, t.term, errors), t.weight};
  };
  if (const auto& a = pod.spec.affinity->pod_affinity) {
    out->required_affinity = ParseAll<AffinityTerm>(a->required, required);
    out->preferred_affinity = ParseAll<WeightedAffinityTerm>(a->preferred, preferred);
  }
  if (const auto& a = pod.spec.affinity->pod_anti_affinity) {
    out->required_anti_affinity = ParseAll<AffinityTerm>(a->required, required);
    out->preferred_anti_affinity = ParseAll<WeightedAffinityTerm>(a->preferred, preferred);
  }
  return out;
}

bool HasPodAffinityTerms(const Pod& pod) {
  const auto& a = pod.spec.affinity;
  return a.has_value() && (a->pod_affinity.has_value() || a->pod_anti_affinity.has_value());
}

bool HasRequiredPodAntiAffinity(const Pod& pod) {
  const auto& a = pod.spec.affinity;
  return a.has_value() && a->pod_anti_affinity.has_value() && !a->pod_anti_affinity->required.empty();
}

}  // namespace ksched::api
