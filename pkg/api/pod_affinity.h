// Pod (anti-)affinity terms parsed once per pod (upstream framework.AffinityTerm and
// framework.WeightedAffinityTerm, built by getAffinityTerms / getWeightedAffinityTerms in
// pkg/scheduler/framework/types.go). The cache parses the terms of every pod it counts when
// the pod is added, so InterPodAffinity never re-parses an existing pod's selectors per
// cycle; the incoming pod's terms are parsed in PreFilter.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/api/selector.h"
#include "pkg/api/types.h"

namespace ksched::api {

struct AffinityTerm {
  // The namespaces the term names. When the term names none and has no
  // namespaceSelector, the owning pod's own namespace (upstream
  // getNamespacesFromPodAffinityTerm). Sorted, unique.
  std::vector<std::string> namespaces;
  // labelSelector, with matchLabelKeys / mismatchLabelKeys folded in. nullopt: a null or
  // invalid selector, which matches no pod.
  std::optional<LabelSelectorMatcher> selector;
  std::string topology_key;
  // namespaceSelector. nullopt: none given (or invalid), which matches no namespace; an
  // empty selector ({}) matches every namespace.
  std::optional<LabelSelectorMatcher> namespace_selector;

  bool HasNamespace(std::string_view ns) const;
  // upstream AffinityTerm.Matches: `pod` is in one of the term's namespaces (or its
  // namespace's labels, `ns_labels`, match the namespaceSelector) and its labels match
  // the selector. `ns_labels` may be null when the namespace's labels are unknown; they
  // then count as no labels (an empty namespaceSelector still matches every namespace).
  bool Matches(const Pod& pod, const StringMap* ns_labels) const;
};

struct WeightedAffinityTerm {
  AffinityTerm term;
  int32_t weight = 0;
};

// All four kinds of terms of one pod.
struct PodAffinityTerms {
  std::vector<AffinityTerm> required_affinity;
  std::vector<AffinityTerm> required_anti_affinity;
  std::vector<WeightedAffinityTerm> preferred_affinity;
  std::vector<WeightedAffinityTerm> preferred_anti_affinity;
  // Selectors that did not parse (their terms match nothing). The API server validates
  // selectors, so only a hand-made object has any; InterPodAffinity's PreFilter fails the
  // incoming pod with them, as upstream does on a PodInfo parse error.
  std::vector<std::string> parse_errors;
  // Some term folded in the pod's own labels (matchLabelKeys / mismatchLabelKeys), so
  // pods sharing one decoded affinity (replicas, see shared.h) may still differ in terms.
  bool uses_own_labels = false;

  bool Empty() const {
    return required_affinity.empty() && required_anti_affinity.empty() && preferred_affinity.empty() &&
           preferred_anti_affinity.empty();
  }
};

// Builds one term of `pod`; a selector that does not parse is left null and its error
// appended to `errors` (when given). matchLabelKeys / mismatchLabelKeys whose key is one of the
// pod's labels add `key In (value)` / `key NotIn (value)` to a non-null labelSelector (as
// newer API servers do at pod creation: doing it again yields the same selector).
AffinityTerm ParseAffinityTerm(const Pod& pod, const PodAffinityTerm& term,
                               std::vector<std::string>* errors = nullptr);

// The parsed terms of `pod`; null when the pod has no pod affinity or anti-affinity.
std::shared_ptr<const PodAffinityTerms> ParsePodAffinityTerms(const Pod& pod);

// Whether the pod has any pod affinity or anti-affinity term.
bool HasPodAffinityTerms(const Pod& pod);
// Whether the pod has a required anti-affinity term.
bool HasRequiredPodAntiAffinity(const Pod& pod);

}  // namespace ksched::api
