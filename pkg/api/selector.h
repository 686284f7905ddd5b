// Label selectors, node selectors and taint tolerations with upstream's matching rules
// (apimachinery labels.Requirement, component-helpers nodeaffinity, core/v1 helper
// ToleratesTaint). Selectors are parsed once into matchers so validation does not run per
// node; a requirement that fails upstream's validation makes its term match nothing.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/api/types.h"
#include "pkg/util/status.h"

namespace ksched::api {

// ---- building blocks ----------------------------------------------------------------------

// Go's strconv.ParseInt(s, 10, 64): optional sign, decimal digits, no spaces, in range.
std::optional<int64_t> ParseInt64(std::string_view s);

// Kubernetes label key (qualified name: optional DNS-subdomain prefix "/" name of at
// most 63 characters) and label value (at most 63 characters, alphanumeric at both ends).
bool IsValidLabelKey(std::string_view key);
bool IsValidLabelValue(std::string_view value);

// Checks one requirement as labels.NewRequirement does: valid key; In/NotIn need values;
// Exists/DoesNotExist take none; Gt/Lt take exactly one integer; every value is a valid
// label value. `allow_gt_lt` is false for pod label selectors, which reject Gt/Lt.
ksched::Status ValidateRequirement(const LabelSelectorRequirement& r, bool allow_gt_lt);

// Whether `labels` satisfy an (already validated) requirement. NotIn and DoesNotExist
// match when the label is absent; Gt/Lt need the label to parse as an integer.
bool RequirementMatches(const LabelSelectorRequirement& r, const StringMap& labels);

// A nodeSelector map: every key present with an equal value (no validation, as upstream's
// labels.SelectorFromSet). An empty map matches every node.
bool MatchesNodeSelectorMap(const StringMap& selector, const StringMap& labels);

// ---- label selectors (pod affinity, topology spread) ---------------------------------------

// A parsed metav1.LabelSelector. An empty selector matches everything; callers model a
// null selector (which matches nothing) as the absence of a LabelSelectorMatcher.
class LabelSelectorMatcher {
 public:
  // InvalidArgument if a requirement is invalid (including Gt/Lt, which pod label
  // selectors do not support).
  static StatusOr<LabelSelectorMatcher> Parse(const LabelSelector& selector);
  bool Matches(const StringMap& labels) const;
  bool Empty() const { return requirements_.empty(); }

 private:
  std::vector<LabelSelectorRequirement> requirements_;  // matchLabels as In [value], then expressions
};

// ---- node selectors (node affinity) ---------------------------------------------------------

// One NodeSelectorTerm: its matchExpressions against the node's labels AND its matchFields
// against metadata.name. A term with neither matches no node.
class NodeSelectorTermMatcher {
 public:
  // On error (an invalid requirement, or a field requirement other than In/NotIn with
  // exactly one value) the term is unusable; the error says why.
  static StatusOr<NodeSelectorTermMatcher> Parse(const NodeSelectorTerm& term);
  bool Matches(const Node& node) const;

 private:
  std::vector<LabelSelectorRequirement> labels_;
  std::vector<LabelSelectorRequirement> fields_;
  bool empty_ = true;
};

// requiredDuringSchedulingIgnoredDuringExecution: the OR of its terms. An empty list of
// terms matches nothing. Invalid terms are dropped (they never match) and their errors kept,
// as upstream's LazyErrorNodeSelector does; the remaining terms still apply.
class NodeSelectorMatcher {
 public:
  static NodeSelectorMatcher Parse(const std::vector<NodeSelectorTerm>& terms);
  bool Matches(const Node& node) const;
  const std::vector<std::string>& errors() const { return errors_; }

 private:
  std::vector<NodeSelectorTermMatcher> terms_;
  std::vector<std::string> errors_;
};

// preferredDuringSchedulingIgnoredDuringExecution: Score is the sum of the weights of the
// terms the node matches.
class PreferredTermsMatcher {
 public:
  // Unlike the required terms, any invalid term is an error (upstream
  // NewPreferredSchedulingTerms).
  static StatusOr<PreferredTermsMatcher> Parse(const std::vector<PreferredSchedulingTerm>& terms);
  int64_t Score(const Node& node) const;
  bool Empty() const { return terms_.empty(); }

 private:
  std::vector<std::pair<int32_t, NodeSelectorTermMatcher>> terms_;
};

// What a pod requires of its node: .spec.nodeSelector AND the required node affinity
// terms (upstream nodeaffinity.RequiredNodeAffinity). Parse errors are ignored for
// backwards compatibility: invalid terms just do not match.
class RequiredNodeAffinity {
 public:
  explicit RequiredNodeAffinity(const Pod& pod);
  bool Matches(const Node& node) const;
  // The pod has neither a nodeSelector nor a required node affinity: every node matches.
  bool MatchesEveryNode() const { return node_selector_.empty() && !required_.has_value(); }

 private:
  StringMap node_selector_;
  std::optional<NodeSelectorMatcher> required_;
};

// ---- taints and tolerations ------------------------------------------------------------------

// Upstream Toleration.ToleratesTaint: the effect (if set) and key (if set) must equal the
// taint's; then Exists tolerates any value and Equal needs the same value. An empty key
// with Exists tolerates every taint (of the effect, if one is given).
bool ToleratesTaint(const Toleration& toleration, const Taint& taint);
bool TolerationsTolerateTaint(const std::vector<Toleration>& tolerations, const Taint& taint);

using TaintFilter = bool (*)(const Taint&);
// The taints the Filter phase cares about: NoSchedule and NoExecute.
bool DoNotScheduleTaintsFilter(const Taint& taint);

// The first taint, in the node's order, that passes `filter` and that no toleration
// tolerates; nullptr when every such taint is tolerated.
const Taint* FindUntoleratedTaint(const std::vector<Taint>& taints, const std::vector<Toleration>& tolerations,
                                  TaintFilter filter);

// The taint NodeUnschedulable checks (node.kubernetes.io/unschedulable:NoSchedule).
inline constexpr std::string_view kTaintNodeUnschedulable = "node.kubernetes.io/unschedulable";

// "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt".
std::string_view SelectorOperatorName(SelectorOperator op);
// The inverse; nullopt for an unknown name.
std::optional<SelectorOperator> SelectorOperatorFromName(std::string_view name);

}  // namespace ksched::api
