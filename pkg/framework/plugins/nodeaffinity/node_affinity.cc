#include "pkg/framework/plugins/nodeaffinity/node_affinity.h"

#include <algorithm>
#include <iterator>
#include <set>
#include <string>
#include <utility>

#include "pkg/framework/plugins/helper/normalize_score.h"

namespace ksched::framework::plugins::nodeaffinity {
namespace {

constexpr std::string_view kPreFilterStateKey = "PreFilterNodeAffinity";
constexpr std::string_view kPreScoreStateKey = "PreScoreNodeAffinity";
constexpr std::string_view kObjectNameField = "metadata.name";

struct PreFilterState final : StateData {
  explicit PreFilterState(const api::Pod& pod) : required(pod) {}
  std::unique_ptr<StateData> Clone() const override { return std::make_unique<PreFilterState>(*this); }
  api::RequiredNodeAffinity required;
};

struct PreScoreState final : StateData {
  std::unique_ptr<StateData> Clone() const override { return std::make_unique<PreScoreState>(*this); }
  std::optional<api::PreferredTermsMatcher> preferred;
};

using NameSet = std::set<std::string, std::less<>>;

StatusOr<std::vector<api::LabelSelectorRequirement>> ConvertRequirements(
    const std::vector<config::NodeSelectorRequirement>& in) {
  std::vector<api::LabelSelectorRequirement> out;
  out.reserve(in.size());
  for (const auto& r : in) {
    auto op = api::SelectorOperatorFromName(r.op);
    if (!op) return ksched::InvalidArgument("\"" + r.op + "\" is not a valid node selector operator");
    out.push_back(api::LabelSelectorRequirement{r.key, *op, r.values});
  }
  return out;
}

StatusOr<api::NodeSelectorTerm> ConvertTerm(const config::NodeSelectorTerm& in) {
  auto exprs = ConvertRequirements(in.match_expressions);
  if (!exprs.ok()) return exprs.status();
  auto fields = ConvertRequirements(in.match_fields);
  if (!fields.ok()) return fields.status();
  return api::NodeSelectorTerm{std::move(*exprs), std::move(*fields)};
}

bool HasRequiredAffinity(const api::Pod& pod) {
  const auto& a = pod.spec.affinity;
  return a && a->node_affinity && a->node_affinity->required;
}

// Preferred terms of the pod, parsed; nullopt when it has none.
StatusOr<std::optional<api::PreferredTermsMatcher>> PodPreferred(const api::Pod& pod) {
  const auto& a = pod.spec.affinity;
  if (!a || !a->node_affinity || a->node_affinity->preferred.empty()) return std::optional<api::PreferredTermsMatcher>();
  auto parsed = api::PreferredTermsMatcher::Parse(a->node_affinity->preferred);
  if (!parsed.ok()) return parsed.status();
  return std::optional<api::PreferredTermsMatcher>(std::move(*parsed));
}

// The node names a term pins the pod to (intersection of its metadata.name In fields);
// nullopt when the term does not restrict names.
std::optional<NameSet> TermNodeNames(const api::NodeSelectorTerm& term) {
  std::optional<NameSet> names;
  for (const auto& r : term.match_fields) {
    if (r.key != kObjectNameField || r.op != api::SelectorOperator::kIn) continue;
    NameSet values(r.values.begin(), r.values.end());
    if (!names) {
      names = std::move(values);
      continue;
    }
    NameSet both;
    std::set_intersection(names->begin(), names->end(), values.begin(), values.end(),
                          std::inserter(both, both.end()), std::less<>());
    names = std::move(both);
  }
  return names;
}

}  // namespace

StatusOr<api::NodeAffinity> ConvertAffinity(const config::NodeAffinity& in) {
  api::NodeAffinity out;
  if (in.required) {
    out.required.emplace();
    for (const auto& t : *in.required) {
      auto term = ConvertTerm(t);
      if (!term.ok()) return term.status();
      out.required->push_back(std::move(*term));
    }
  }
  for (const auto& p : in.preferred) {
    auto term = ConvertTerm(p.preference);
    if (!term.ok()) return term.status();
    out.preferred.push_back(api::PreferredSchedulingTerm{p.weight, std::move(*term)});
  }
  return out;
}

StatusOr<std::unique_ptr<Plugin>> NodeAffinity::New(const config::PluginArgs& args, Handle& /*handle*/) {
  config::NodeAffinityArgs typed;
  if (const auto* a = std::get_if<config::NodeAffinityArgs>(&args)) {
    typed = *a;
  } else if (!std::holds_alternative<std::monostate>(args)) {
    return ksched::InvalidArgument("NodeAffinity: args are not of type NodeAffinityArgs");
  }
  auto pl = Create(typed);
  if (!pl.ok()) return pl.status();
  return std::unique_ptr<Plugin>(std::move(*pl));
}

StatusOr<std::unique_ptr<NodeAffinity>> NodeAffinity::Create(const config::NodeAffinityArgs& args) {
  auto pl = std::make_unique<NodeAffinity>();
  if (!args.added_affinity) return pl;
  auto added = ConvertAffinity(*args.added_affinity);
  if (!added.ok()) return ksched::InvalidArgument("NodeAffinity addedAffinity: " + added.status().message());
  if (added->required) {
    // Unlike a pod's terms, the profile's must all be valid.
    api::NodeSelectorMatcher m = api::NodeSelectorMatcher::Parse(*added->required);
    if (!m.errors().empty()) {
      return ksched::InvalidArgument("parsing addedAffinity.requiredDuringSchedulingIgnoredDuringExecution: " +
                                     m.errors().front());
    }
    pl->added_node_selector_ = std::move(m);
  }
  if (!added->preferred.empty()) {
    auto p = api::PreferredTermsMatcher::Parse(added->preferred);
    if (!p.ok()) {
      return ksched::InvalidArgument("parsing addedAffinity.preferredDuringSchedulingIgnoredDuringExecution: " +
                                     p.status().message());
    }
    pl->added_preferred_ = std::move(*p);
  }
  return pl;
}

Status NodeAffinity::PreFilter(CycleState& state, const api::Pod& pod, PreFilterResult& result) {
  bool has_required = HasRequiredAffinity(pod);
  if (!has_required && !added_node_selector_ && pod.spec.node_selector.empty()) return Status(Code::kSkip);
  state.Write(std::string(kPreFilterStateKey), std::make_unique<PreFilterState>(pod));
  if (!has_required) return Status::Success();
  const auto& terms = *pod.spec.affinity->node_affinity->required;
  if (terms.empty()) return Status::Success();

  // Terms are ORed: the pod is pinned to named nodes only if every term names some.
  NameSet all;
  for (const auto& term : terms) {
    std::optional<NameSet> names = TermNodeNames(term);
    if (!names) return Status::Success();
    all.insert(names->begin(), names->end());
  }
  if (all.empty()) return Status::Constant<kErrReasonConflict>(Code::kUnschedulableAndUnresolvable);
  result.node_names = std::move(all);
  return Status::Success();
}

Status NodeAffinity::Filter(const CycleState& state, const api::Pod& pod, const cache::NodeInfo& node) const {
  const api::Node* n = node.node();
  if (n == nullptr) return Status::Error("node not found");
  if (added_node_selector_ && !added_node_selector_->Matches(*n)) {
    return Status::Constant<kErrReasonEnforced>(Code::kUnschedulableAndUnresolvable);
  }
  bool match;
  if (const auto* s = state.Read<PreFilterState>(kPreFilterStateKey)) {
    match = s->required.Matches(*n);
  } else {
    // PreFilter is disabled in this profile: compute per node.
    match = api::RequiredNodeAffinity(pod).Matches(*n);
  }
  if (!match) return Status::Constant<kErrReasonPod>(Code::kUnschedulableAndUnresolvable);
  return Status::Success();
}

Status NodeAffinity::PreScore(CycleState& state, const api::Pod& pod, std::span<const cache::NodeInfoPtr> nodes) {
  if (nodes.empty()) return Status::Success();
  auto preferred = PodPreferred(pod);
  if (!preferred.ok()) return Status::FromError(preferred.status());
  if (!preferred->has_value() && !added_preferred_) return Status(Code::kSkip);
  auto s = std::make_unique<PreScoreState>();
  s->preferred = std::move(*preferred);
  state.Write(std::string(kPreScoreStateKey), std::move(s));
  return Status::Success();
}

Status NodeAffinity::Score(const CycleState& state, const api::Pod& pod, const cache::NodeInfo& node,
                           int64_t& score) const {
  const api::Node* n = node.node();
  if (n == nullptr) return Status::Error("getting node \"" + node.name() + "\" from Snapshot: not found");
  int64_t count = added_preferred_ ? added_preferred_->Score(*n) : 0;
  if (const auto* s = state.Read<PreScoreState>(kPreScoreStateKey)) {
    if (s->preferred) count += s->preferred->Score(*n);
  } else {
    // PreScore is disabled in this profile: parse per node.
    auto preferred = PodPreferred(pod);
    if (!preferred.ok()) return Status::FromError(preferred.status());
    if (preferred->has_value()) count += (*preferred)->Score(*n);
  }
  score = count;
  return Status::Success();
}

Status NodeAffinity::NormalizeScore(const CycleState& /*state*/, const api::Pod& /*pod*/,
                                    std::span<NodeScore> scores) const {
  helper::DefaultNormalizeScore(kMaxNodeScore, /*reverse=*/false, scores);
  return Status::Success();
}

StatusOr<QueueingHint> NodeAffinity::NodeChangeHint(const api::Pod& pod, const api::Node* old_node,
                                                    const api::Node& new_node) const {
  if (added_node_selector_ && !added_node_selector_->Matches(new_node)) return QueueingHint::kSkip;
  api::RequiredNodeAffinity required(pod);
  if (!required.Matches(new_node)) return QueueingHint::kSkip;
  if (old_node == nullptr) return QueueingHint::kQueue;
  // Already matching before the update: the pod was rejected for another reason.
  bool was_matched = required.Matches(*old_node) &&
                     (!added_node_selector_ || added_node_selector_->Matches(*old_node));
  return was_matched ? QueueingHint::kSkip : QueueingHint::kQueue;
}

std::vector<ClusterEventWithHint> NodeAffinity::EventsToRegister() const {
  auto hint = [this](const api::Pod& pod, const void* old_obj, const void* new_obj) -> StatusOr<QueueingHint> {
    const api::Node* new_node = ObjectAs<api::Node>(new_obj);
    if (new_node == nullptr) return ksched::InvalidArgument("NodeAffinity hint: Node event without new object");
    return NodeChangeHint(pod, ObjectAs<api::Node>(old_obj), *new_node);
  };
  return {{ClusterEvent{EventResource::kNode, kAdd | kUpdateNodeLabel, ""}, hint}};
}

}  // namespace ksched::framework::plugins::nodeaffinity
