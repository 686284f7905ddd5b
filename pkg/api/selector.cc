#include "pkg/api/selector.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "pkg/util/strings.h"

namespace ksched::api {
namespace {

constexpr size_t kMaxLabelLength = 63;
constexpr size_t kMaxSubdomainLength = 253;
constexpr std::string_view kObjectNameField = "metadata.name";

bool IsAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }
bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9], at most 63 characters; empty is not allowed.
bool IsQualifiedNamePart(std::string_view s) {
  if (s.empty() || s.size() > kMaxLabelLength) return false;
  if (!IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return IsAlnum(c) || c == '-' || c == '_' || c == '.'; });
}

// RFC 1123 subdomain: dot-separated lowercase labels, alphanumeric at both ends.
bool IsDns1123Subdomain(std::string_view s) {
  if (s.empty() || s.size() > kMaxSubdomainLength) return false;
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    std::string_view label = s.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (label.empty() || !IsLowerAlnum(label.front()) || !IsLowerAlnum(label.back())) return false;
    if (!std::all_of(label.begin(), label.end(), [](char c) { return IsLowerAlnum(c) || c == '-'; })) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

bool Contains(const std::vector<std::string>& values, std::string_view v) {
  return std::find(values.begin(), values.end(), v) != values.end();
}

// Upstream's field requirements support only In/NotIn with exactly one value.
ksched::Status ValidateFieldRequirement(const LabelSelectorRequirement& r) {
  if (r.op != SelectorOperator::kIn && r.op != SelectorOperator::kNotIn) {
    return InvalidArgument(Quoted(SelectorOperatorName(r.op)) + " is not a valid node field selector operator");
  }
  if (r.values.size() != 1) {
    return InvalidArgument("node field selector requirement " + Quoted(r.key) + " must have exactly one value");
  }
  return ksched::Status::OK();
}

bool FieldRequirementMatches(const LabelSelectorRequirement& r, const Node& node) {
  // The node's only selectable field is metadata.name; any other key reads as "".
  std::string_view value = r.key == kObjectNameField ? std::string_view(node.metadata.name) : std::string_view();
  bool equal = value == r.values.front();
  return r.op == SelectorOperator::kIn ? equal : !equal;
}

}  // namespace

std::optional<int64_t> ParseInt64(std::string_view s) {
  if (s.empty()) return std::nullopt;
  bool negative = false;
  if (s.front() == '+' || s.front() == '-') {
    negative = s.front() == '-';
    s.remove_prefix(1);
    if (s.empty()) return std::nullopt;
  }
  // Accumulate as a negative number so INT64_MIN parses without overflow.
  int64_t acc = 0;
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    int digit = c - '0';
    if (acc < (kMin + digit) / 10) return std::nullopt;
    acc = acc * 10 - digit;
  }
  if (negative) return acc;
  if (acc == kMin) return std::nullopt;
  return -acc;
}

bool IsValidLabelKey(std::string_view key) {
  size_t slash = key.find('/');
  if (slash == std::string_view::npos) return IsQualifiedNamePart(key);
  std::string_view prefix = key.substr(0, slash);
  std::string_view name = key.substr(slash + 1);
  if (name.find('/') != std::string_view::npos) return false;
  return IsDns1123Subdomain(prefix) && IsQualifiedNamePart(name);
}

bool IsValidLabelValue(std::string_view value) { return value.empty() || IsQualifiedNamePart(value); }

ksched::Status ValidateRequirement(const LabelSelectorRequirement& r, bool allow_gt_lt) {
  if (!IsValidLabelKey(r.key)) return InvalidArgument("invalid label key " + Quoted(r.key));
  switch (r.op) {
    case SelectorOperator::kIn:
    case SelectorOperator::kNotIn:
      if (r.values.empty()) {
        return InvalidArgument("for 'in', 'notin' operators, values set can't be empty (key " + Quoted(r.key) + ")");
      }
      break;
    case SelectorOperator::kExists:
    case SelectorOperator::kDoesNotExist:
      if (!r.values.empty()) {
        return InvalidArgument("values set must be empty for exists and does not exist (key " + Quoted(r.key) + ")");
      }
      break;
    case SelectorOperator::kGt:
    case SelectorOperator::kLt:
      if (!allow_gt_lt) {
        return InvalidArgument(Quoted(SelectorOperatorName(r.op)) + " is not a valid label selector operator");
      }
      if (r.values.size() != 1) {
        return InvalidArgument("for 'Gt', 'Lt' operators, exactly one value is required (key " + Quoted(r.key) + ")");
      }
      if (!ParseInt64(r.values.front())) {
        return InvalidArgument("for 'Gt', 'Lt' operators, the value must be an integer (key " + Quoted(r.key) + ")");
      }
      break;
    case SelectorOperator::kUnknown:
      return InvalidArgument("unknown operator for key " + Quoted(r.key) + " is not a valid label selector operator");
  }
  for (const std::string& v : r.values) {
    if (!IsValidLabelValue(v)) return InvalidArgument("invalid label value " + Quoted(v) + " for key " + Quoted(r.key));
  }
  return ksched::Status::OK();
}

bool RequirementMatches(const LabelSelectorRequirement& r, const StringMap& labels) {
  const std::string* value = labels.Get(r.key);
  switch (r.op) {
    case SelectorOperator::kIn:
      return value != nullptr && Contains(r.values, *value);
    case SelectorOperator::kNotIn:
      return value == nullptr || !Contains(r.values, *value);
    case SelectorOperator::kExists:
      return value != nullptr;
    case SelectorOperator::kDoesNotExist:
      return value == nullptr;
    case SelectorOperator::kGt:
    case SelectorOperator::kLt: {
      if (value == nullptr || r.values.size() != 1) return false;
      std::optional<int64_t> have = ParseInt64(*value);
      std::optional<int64_t> want = ParseInt64(r.values.front());
      if (!have || !want) return false;
      return r.op == SelectorOperator::kGt ? *have > *want : *have < *want;
    }
    case SelectorOperator::kUnknown:
      return false;
  }
  return false;
}

bool MatchesNodeSelectorMap(const StringMap& selector, const StringMap& labels) {
  for (const auto& [key, want] : selector) {
    const std::string* have = labels.Get(key);
    if (have == nullptr || *have != want) return false;
  }
  return true;
}

// ---- LabelSelectorMatcher --------------------------------------------------------------------

StatusOr<LabelSelectorMatcher> LabelSelectorMatcher::Parse(const LabelSelector& selector) {
  LabelSelectorMatcher m;
  m.requirements_.reserve(selector.match_labels.size() + selector.match_expressions.size());
  for (const auto& [key, value] : selector.match_labels) {
    LabelSelectorRequirement r{key, SelectorOperator::kIn, {value}};
    if (auto st = ValidateRequirement(r, /*allow_gt_lt=*/false); !st.ok()) return st;
    m.requirements_.push_back(std::move(r));
  }
  for (const LabelSelectorRequirement& r : selector.match_expressions) {
    if (auto st = ValidateRequirement(r, /*allow_gt_lt=*/false); !st.ok()) return st;
    m.requirements_.push_back(r);
  }
  return m;
}

bool LabelSelectorMatcher::Matches(const StringMap& labels) const {
  return std::all_of(requirements_.begin(), requirements_.end(),
                     [&](const LabelSelectorRequirement& r) { return RequirementMatches(r, labels); });
}

// ---- node selectors ----------------------------------------------------------------------------

StatusOr<NodeSelectorTermMatcher> NodeSelectorTermMatcher::Parse(const NodeSelectorTerm& term) {
  NodeSelectorTermMatcher m;
  for (const LabelSelectorRequirement& r : term.match_expressions) {
    if (auto st = ValidateRequirement(r, /*allow_gt_lt=*/true); !st.ok()) return st;
  }
  for (const LabelSelectorRequirement& r : term.match_fields) {
    if (auto st = ValidateFieldRequirement(r); !st.ok()) return st;
  }
  m.labels_ = term.match_expressions;
  m.fields_ = term.match_fields;
  m.empty_ = m.labels_.empty() && m.fields_.empty();
  return m;
}

bool NodeSelectorTermMatcher::Matches(const Node& node) const {
  if (empty_) return false;
  for (const LabelSelectorRequirement& r : labels_) {
    if (!RequirementMatches(r, node.metadata.labels)) return false;
  }
  // A node without a name has no fields to select on; upstream then ignores matchFields.
  if (node.metadata.name.empty()) return true;
  for (const LabelSelectorRequirement& r : fields_) {
    if (!FieldRequirementMatches(r, node)) return false;
  }
  return true;
}

NodeSelectorMatcher NodeSelectorMatcher::Parse(const std::vector<NodeSelectorTerm>& terms) {
  NodeSelectorMatcher m;
  m.terms_.reserve(terms.size());
  for (const NodeSelectorTerm& term : terms) {
    auto parsed = NodeSelectorTermMatcher::Parse(term);
    if (parsed.ok()) {
      m.terms_.push_back(std::move(*parsed));
    } else {
      m.errors_.push_back(parsed.status().message());
    }
  }
  return m;
}

bool NodeSelectorMatcher::Matches(const Node& node) const {
  return std::any_of(terms_.begin(), terms_.end(), [&](const NodeSelectorTermMatcher& t) { return t.Matches(node); });
}

StatusOr<PreferredTermsMatcher> PreferredTermsMatcher::Parse(const std::vector<PreferredSchedulingTerm>& terms) {
  PreferredTermsMatcher m;
  m.terms_.reserve(terms.size());
  for (const PreferredSchedulingTerm& term : terms) {
    auto parsed = NodeSelectorTermMatcher::Parse(term.preference);
    if (!parsed.ok()) return parsed.status();
    m.terms_.emplace_back(term.weight, std::move(*parsed));
  }
  return m;
}

int64_t PreferredTermsMatcher::Score(const Node& node) const {
  int64_t score = 0;
  for (const auto& [weight, term] : terms_) {
    if (term.Matches(node)) score += weight;
  }
  return score;
}

RequiredNodeAffinity::RequiredNodeAffinity(const Pod& pod) : node_selector_(pod.spec.node_selector) {
  const auto& affinity = pod.spec.affinity;
  if (affinity && affinity->node_affinity && affinity->node_affinity->required) {
    required_ = NodeSelectorMatcher::Parse(*affinity->node_affinity->required);
  }
}

bool RequiredNodeAffinity::Matches(const Node& node) const {
  if (!MatchesNodeSelectorMap(node_selector_, node.metadata.labels)) return false;
  return !required_ || required_->Matches(node);
}

// ---- taints and tolerations ----------------------------------------------------------------------

bool ToleratesTaint(const Toleration& toleration, const Taint& taint) {
  if (toleration.op_unknown) return false;
  if (toleration.effect != TaintEffect::kNone && toleration.effect != taint.effect) return false;
  if (!toleration.key.empty() && toleration.key != taint.key) return false;
  return toleration.op_exists || toleration.value == taint.value;
}

bool TolerationsTolerateTaint(const std::vector<Toleration>& tolerations, const Taint& taint) {
  return std::any_of(tolerations.begin(), tolerations.end(),
                     [&](const Toleration& t) { return ToleratesTaint(t, taint); });
}

bool DoNotScheduleTaintsFilter(const Taint& taint) {
  return taint.effect == TaintEffect::kNoSchedule || taint.effect == TaintEffect::kNoExecute;
}

const Taint* FindUntoleratedTaint(const std::vector<Taint>& taints, const std::vector<Toleration>& tolerations,
                                  TaintFilter filter) {
  for (const Taint& taint : taints) {
    if (filter != nullptr && !filter(taint)) continue;
    if (!TolerationsTolerateTaint(tolerations, taint)) return &taint;
  }
  return nullptr;
}

std::string_view SelectorOperatorName(SelectorOperator op) {
  switch (op) {
    case SelectorOperator::kIn: return "In";
    case SelectorOperator::kNotIn: return "NotIn";
    case SelectorOperator::kExists: return "Exists";
    case SelectorOperator::kDoesNotExist: return "DoesNotExist";
    case SelectorOperator::kGt: return "Gt";
    case SelectorOperator::kLt: return "Lt";
    case SelectorOperator::kUnknown: return "Unknown";
  }
  return "";
}

std::optional<SelectorOperator> SelectorOperatorFromName(std::string_view name) {
  for (SelectorOperator op : {SelectorOperator::kIn, SelectorOperator::kNotIn, SelectorOperator::kExists,
                              SelectorOperator::kDoesNotExist, SelectorOperator::kGt, SelectorOperator::kLt}) {
    if (SelectorOperatorName(op) == name) return op;
  }
  return std::nullopt;
}

}  // namespace ksched::api
