// libFuzzer target: label selectors, node selector terms and tolerations built from
// fuzzer bytes (FuzzedDataProvider splits the input into keys, operators, values and the
// labels they are matched against). Pod JSON whose affinity carries selectors is covered
// by fuzz_pod_decode, which parses and matches every decoded pod's selectors.
//
// ksched has no parser for the string form of selectors ("app in (a,b),!tier"); the API
// objects carry structured selectors only.
//
// Invariants beyond "no crash", each against an independent statement of upstream's rule:
//   - ParseInt64 is strconv.ParseInt(s, 10, 64);
//   - IsValidLabelKey / IsValidLabelValue are validation.IsQualifiedName /
//     IsValidLabelValue (their regular expressions and length limits);
//   - a selector parses iff every requirement validates, and then matches exactly when
//     all its requirements do (labels.Selector.Matches);
//   - a node selector term matches exactly when its expressions match the labels and its
//     fields match metadata.name (nodeaffinity.nodeSelectorTerm.match);
//   - ToleratesTaint is v1 Toleration.ToleratesTaint.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "pkg/api/selector.h"
#include "tests/fuzz/fuzz_util.h"

namespace ksched::fuzz {
namespace {

using namespace ksched::api;

// Strings from a small alphabet collide often (the same key in a selector and in the
// labels, a value in the In list), which a uniformly random string rarely does.
std::string ConsumeString(FuzzedDataProvider& in, size_t max_len) {
  static constexpr std::string_view kWords[] = {"app", "web", "tier", "kubernetes.io/hostname", "node-1", "10",
                                                 "-5", "a.b/c", "", "metadata.name", "x_y", "9223372036854775807"};
  if (in.ConsumeBool()) return std::string(kWords[in.ConsumeIntegralInRange<size_t>(0, std::size(kWords) - 1)]);
  return in.ConsumeRandomLengthString(max_len);
}

std::vector<std::string> ConsumeValues(FuzzedDataProvider& in) {
  std::vector<std::string> values(in.ConsumeIntegralInRange<size_t>(0, 3));
  for (auto& v : values) v = ConsumeString(in, 70);
  return values;
}

LabelSelectorRequirement ConsumeRequirement(FuzzedDataProvider& in) {
  static constexpr std::string_view kOperators[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
  LabelSelectorRequirement r;
  r.key = ConsumeString(in, 80);
  r.op = *SelectorOperatorFromName(kOperators[in.ConsumeIntegralInRange<size_t>(0, std::size(kOperators) - 1)]);
  r.values = ConsumeValues(in);
  return r;
}

StringMap ConsumeLabels(FuzzedDataProvider& in) {
  StringMap labels;
  for (size_t n = in.ConsumeIntegralInRange<size_t>(0, 4); n > 0; --n) {
    std::string key = ConsumeString(in, 80);
    labels.Set(std::move(key), ConsumeString(in, 70));
  }
  return labels;
}

// strconv.ParseInt(s, 10, 64), stated over 128-bit arithmetic.
std::optional<int64_t> ReferenceParseInt64(std::string_view s) {
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return std::nullopt;
  __int128 v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    // Saturate past 2^64 (out of range either way); leading zeros are allowed.
    v = std::min<__int128>(v * 10 + (c - '0'), static_cast<__int128>(1) << 64);
  }
  if (negative) v = -v;
  if (v < std::numeric_limits<int64_t>::min() || v > std::numeric_limits<int64_t>::max()) return std::nullopt;
  return static_cast<int64_t>(v);
}

// The regular expressions of apimachinery's validation package, verbatim.
bool ReferenceQualifiedNamePart(const std::string& s) {
  static const std::regex re("([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]");
  return !s.empty() && s.size() <= 63 && std::regex_match(s, re);
}
bool ReferenceLabelKey(const std::string& key) {
  static const std::regex subdomain("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  if (key.size() > 400) return false;  // beyond 253 + 1 + 63 either way; keeps std::regex cheap
  size_t slash = key.find('/');
  if (slash == std::string::npos) return ReferenceQualifiedNamePart(key);
  std::string prefix = key.substr(0, slash), name = key.substr(slash + 1);
  if (name.find('/') != std::string::npos) return false;
  return !prefix.empty() && prefix.size() <= 253 && std::regex_match(prefix, subdomain) &&
         ReferenceQualifiedNamePart(name);
}
bool ReferenceLabelValue(const std::string& v) {
  return v.empty() || (v.size() <= 63 && ReferenceQualifiedNamePart(v));
}

bool ReferenceValid(const LabelSelectorRequirement& r, bool allow_gt_lt) {
  if (!ReferenceLabelKey(r.key)) return false;
  for (const auto& v : r.values) {
    if (!ReferenceLabelValue(v)) return false;
  }
  switch (r.op) {
    case SelectorOperator::kIn:
    case SelectorOperator::kNotIn:
      return !r.values.empty();
    case SelectorOperator::kExists:
    case SelectorOperator::kDoesNotExist:
      return r.values.empty();
    case SelectorOperator::kGt:
    case SelectorOperator::kLt:
      return allow_gt_lt && r.values.size() == 1 && ReferenceParseInt64(r.values[0]).has_value();
    default:
      return false;
  }
}

bool ReferenceMatches(const LabelSelectorRequirement& r, const StringMap& labels) {
  const std::string* v = labels.Get(r.key);
  auto in_values = [&] { return v && std::find(r.values.begin(), r.values.end(), *v) != r.values.end(); };
  switch (r.op) {
    case SelectorOperator::kIn: return in_values();
    case SelectorOperator::kNotIn: return !in_values();
    case SelectorOperator::kExists: return v != nullptr;
    case SelectorOperator::kDoesNotExist: return v == nullptr;
    case SelectorOperator::kGt:
    case SelectorOperator::kLt: {
      if (!v || r.values.size() != 1) return false;
      auto have = ReferenceParseInt64(*v), want = ReferenceParseInt64(r.values[0]);
      if (!have || !want) return false;
      return r.op == SelectorOperator::kGt ? *have > *want : *have < *want;
    }
    default:
      return false;
  }
}

void CheckLabelSelector(FuzzedDataProvider& in, const StringMap& labels) {
  LabelSelector selector;
  selector.match_labels = ConsumeLabels(in);
  for (size_t n = in.ConsumeIntegralInRange<size_t>(0, 3); n > 0; --n) {
    selector.match_expressions.push_back(ConsumeRequirement(in));
  }
  std::vector<LabelSelectorRequirement> all;
  for (const auto& [k, v] : selector.match_labels) all.push_back({k, SelectorOperator::kIn, {v}});
  all.insert(all.end(), selector.match_expressions.begin(), selector.match_expressions.end());
  bool valid = true, matches = true;
  for (const auto& r : all) {
    valid = valid && ReferenceValid(r, /*allow_gt_lt=*/false);
    matches = matches && ReferenceMatches(r, labels);
  }
  auto m = LabelSelectorMatcher::Parse(selector);
  Check(m.ok() == valid, "LabelSelectorMatcher::Parse validates like upstream",
        m.ok() ? "accepted" : m.status().message());
  if (!m.ok()) return;
  Check(m->Empty() == all.empty(), "an empty selector is Empty()");
  Check(m->Matches(labels) == matches, "a selector matches when all its requirements do");
}

void CheckNodeSelectorTerm(FuzzedDataProvider& in, const StringMap& labels) {
  Node node;
  node.metadata.name = ConsumeString(in, 70);
  node.metadata.labels = labels;
  NodeSelectorTerm term;
  for (size_t n = in.ConsumeIntegralInRange<size_t>(0, 3); n > 0; --n) {
    term.match_expressions.push_back(ConsumeRequirement(in));
  }
  for (size_t n = in.ConsumeIntegralInRange<size_t>(0, 2); n > 0; --n) {
    term.match_fields.push_back(ConsumeRequirement(in));
  }

  bool valid = true, matches = !term.match_expressions.empty() || !term.match_fields.empty();
  for (const auto& r : term.match_expressions) {
    valid = valid && ReferenceValid(r, /*allow_gt_lt=*/true);
    matches = matches && ReferenceMatches(r, labels);
  }
  for (const auto& r : term.match_fields) {
    valid = valid && (r.op == SelectorOperator::kIn || r.op == SelectorOperator::kNotIn) && r.values.size() == 1;
    // Only metadata.name is a node field; a nameless node skips field matching.
    if (valid && !node.metadata.name.empty()) {
      bool equal = r.key == "metadata.name" && r.values[0] == node.metadata.name;
      equal = equal || (r.key != "metadata.name" && r.values[0].empty());
      matches = matches && (r.op == SelectorOperator::kIn ? equal : !equal);
    }
  }
  auto m = NodeSelectorTermMatcher::Parse(term);
  Check(m.ok() == valid, "NodeSelectorTermMatcher::Parse validates like upstream",
        m.ok() ? "accepted" : m.status().message());
  if (m.ok()) Check(m->Matches(node) == matches, "a term matches when its expressions and fields do");

  // The same term as required and preferred node affinity.
  auto required = NodeSelectorMatcher::Parse({term});
  Check(required.errors().empty() == valid, "an invalid required term is reported");
  Check(required.Matches(node) == (valid && matches), "required affinity is the OR of its valid terms");
  auto preferred = PreferredTermsMatcher::Parse({{.weight = 7, .preference = term}});
  Check(preferred.ok() == valid, "an invalid preferred term fails the preferred terms");
  if (preferred.ok()) Check(preferred->Score(node) == (matches ? 7 : 0), "a matching preferred term adds its weight");
}

void CheckToleration(FuzzedDataProvider& in) {
  static constexpr TaintEffect kEffects[] = {TaintEffect::kNone, TaintEffect::kNoSchedule,
                                             TaintEffect::kPreferNoSchedule, TaintEffect::kNoExecute};
  Toleration t;
  t.key = ConsumeString(in, 20);
  t.op_exists = in.ConsumeBool();
  t.value = ConsumeString(in, 20);
  t.effect = kEffects[in.ConsumeIntegralInRange<size_t>(0, 3)];
  Taint taint{ConsumeString(in, 20), ConsumeString(in, 20), kEffects[in.ConsumeIntegralInRange<size_t>(1, 3)]};
  bool want = (t.effect == TaintEffect::kNone || t.effect == taint.effect) && (t.key.empty() || t.key == taint.key) &&
              (t.op_exists || t.value == taint.value);
  Check(ToleratesTaint(t, taint) == want, "ToleratesTaint is upstream's");
  const Taint* left = FindUntoleratedTaint({taint}, {t}, DoNotScheduleTaintsFilter);
  Check((left != nullptr) == (!want && DoNotScheduleTaintsFilter(taint)),
        "FindUntoleratedTaint filters, then tolerates");
}

}  // namespace
}  // namespace ksched::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ksched::fuzz;
  FuzzedDataProvider in(data, size);
  {
    std::string s = ConsumeString(in, 30);
    Check(ksched::api::ParseInt64(s) == ReferenceParseInt64(s), "ParseInt64 is strconv.ParseInt", s);
    s = ConsumeString(in, 300);
    Check(ksched::api::IsValidLabelKey(s) == ReferenceLabelKey(s), "IsValidLabelKey is IsQualifiedName", s);
    s = ConsumeString(in, 80);
    Check(ksched::api::IsValidLabelValue(s) == ReferenceLabelValue(s), "IsValidLabelValue is upstream's", s);
  }
  const ksched::api::StringMap labels = ConsumeLabels(in);
  CheckLabelSelector(in, labels);
  CheckNodeSelectorTerm(in, labels);
  CheckToleration(in);
  return 0;
}
