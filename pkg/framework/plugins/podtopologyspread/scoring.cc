// The ScheduleAnyway half (upstream podtopologyspread/scoring.go).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <utility>

#include "pkg/framework/plugins/podtopologyspread/pod_topology_spread.h"

namespace ksched::framework::plugins::podtopologyspread {
namespace {

constexpr int64_t kInvalidScore = -1;

// upstream scoring.go topologyNormalizingWeight: log(size + 2), so counts in a topology
// with few domains weigh less than in one with many.
double TopologyNormalizingWeight(size_t size) { return std::log(static_cast<double>(size) + 2); }

// upstream scoring.go scoreForCount: maxSkew-1 is added so that small skews matter less.
double ScoreForCount(int64_t count, int32_t max_skew, double weight) {
  return static_cast<double>(count) * weight + static_cast<double>(max_skew - 1);
}

Status MissingStateError() {
  return Status::Error("error reading \"" + std::string(kPreScoreStateKey) + "\" from cycleState: not found");
}

}  // namespace

// upstream scoring.go PreScore + initPreScoreState.
Status PodTopologySpread::PreScore(CycleState& state, const api::Pod& pod,
                                   std::span<const cache::NodeInfoPtr> nodes) {
  std::span<const cache::NodeInfoPtr> all_nodes = handle_.Snapshot().List();
  if (all_nodes.empty()) return Status(Code::kSkip);

  auto constraints = GetConstraints(pod, api::WhenUnsatisfiable::kScheduleAnyway);
  if (!constraints.ok()) {
    return Status::Error("calculating preScoreState: " + std::string(pod.spec.topology_spread_constraints.empty()
                                                                          ? "setting default"
                                                                          : "obtaining pod's") +
                         " soft topology spread constraints: " + constraints.status().message());
  }
  if (constraints->empty()) return Status(Code::kSkip);

  auto s = std::make_unique<PreScoreState>();
  s->constraints = std::make_shared<const Constraints>(std::move(*constraints));
  const Constraints& cs = *s->constraints;
  s->domains.resize(cs.size());
  // Only the pod's own (or non-system) constraints need every topology key on a node, so
  // that nodes without a zone label still get hostname spreading from the system defaults.
  const bool require_all_topologies = !pod.spec.topology_spread_constraints.empty() || !system_defaulted_;

  const size_t num_constraints = cs.size();
  s->nodes_base = nodes.data();
  s->nodes.reserve(nodes.size());
  s->node_domains.assign(nodes.size() * num_constraints, DomainCounts::kNone);
  std::vector<std::vector<int32_t>> by_zone_id(num_constraints);  // see DomainCounts::InternZone
  for (size_t j = 0; j < nodes.size(); ++j) {
    const cache::NodeInfo& info = *nodes[j];
    s->nodes.push_back(&info);
    if (info.node() == nullptr) continue;
    if (require_all_topologies && !NodeLabelsMatchSpreadConstraints(info, cs)) {
      s->ignored_nodes.insert(info.node()->Name());  // scores 0: no domain recorded
      continue;
    }
    int32_t* domains = &s->node_domains[j * num_constraints];
    for (size_t i = 0; i < num_constraints; ++i) {
      const std::string* value = cs[i].NodeValue(info);
      // Per-node counts (hostname) are computed in Score.
      if (cs[i].is_hostname()) {
        if (value != nullptr) domains[i] = PreScoreState::kHasKey;
        continue;
      }
      // A node without the key adds the "" domain (it counts towards the topology's size)
      // but scores nothing for it.
      if (value == nullptr) {
        s->domains[i].Intern(std::string_view());
      } else if (cs[i].key_kind == KeyKind::kZone) {
        domains[i] = s->domains[i].InternZone(*value, info.zone_id(), by_zone_id[i]);
      } else {
        domains[i] = s->domains[i].Intern(*value);
      }
    }
  }
  s->selected_groups.resize(cs.size());
  for (size_t i = 0; i < cs.size(); ++i) {
    const Constraint& c = cs[i];
    if (!c.is_hostname() || !c.selector.has_value() || c.selector->Empty()) continue;
    s->groups = &handle_.Snapshot().PodGroups();
    std::span<cache::PodGroup* const> groups = s->groups->groups();
    s->selected_groups[i].resize(groups.size());
    for (size_t g = 0; g < groups.size(); ++g) {
      s->selected_groups[i][g] = SelectsPodGroup(c, *groups[g], pod.metadata.namespace_) ? 1 : 0;
    }
  }
  s->normalizing_weights.resize(cs.size());
  for (size_t i = 0; i < cs.size(); ++i) {
    size_t size = cs[i].is_hostname() ? nodes.size() - s->ignored_nodes.size() : s->domains[i].size();
    s->normalizing_weights[i] = TopologyNormalizingWeight(size);
  }

  const api::RequiredNodeAffinity affinity(pod);
  if (!require_all_topologies && CountFromPodGroups(pod, affinity, *s)) {
    state.Write(std::string(kPreScoreStateKey), std::move(s));
    return Status::Success();
  }
  for (const cache::NodeInfoPtr& info : all_nodes) {
    const api::Node* node = info->node();
    if (node == nullptr) continue;
    if (require_all_topologies && !NodeLabelsMatchSpreadConstraints(*info, cs)) continue;
    NodeInclusion inclusion(pod, *node, affinity);
    for (size_t i = 0; i < cs.size(); ++i) {
      const Constraint& c = cs[i];
      if (!inclusion.Matches(c)) continue;
      const std::string* value = c.NodeValue(*info);
      // Only domains of feasible nodes are counted (never hostname ones, see above).
      int32_t d = c.is_hostname()
                      ? DomainCounts::kNone
                      : s->domains[i].Find(value != nullptr ? std::string_view(*value) : std::string_view());
      if (d == DomainCounts::kNone) continue;
      s->domains[i].count(d) += CountPodsMatchSelector(info->pods(), c, pod.metadata.namespace_);
    }
  }
  state.Write(std::string(kPreScoreStateKey), std::move(s));
  return Status::Success();
}

// When every node counts for every constraint (no inclusion policy narrows them: the pod
// has no node affinity to honour and no constraint honours taints), a domain's count is
// the sum over the snapshot's pod groups that the constraint selects of their members in
// the domain; nodes without the key form the "" domain, as in the walk. Those sums are
// what the walk over every node and pod in PreScore finds, read from counts the snapshot
// keeps (cache/pod_groups.h). False (and nothing counted) when a policy applies.
bool PodTopologySpread::CountFromPodGroups(const api::Pod& pod, const api::RequiredNodeAffinity& affinity,
                                           PreScoreState& s) const {
  const Constraints& cs = *s.constraints;
  if (!EveryNodeIncluded(cs, affinity)) return false;
  for (size_t i = 0; i < cs.size(); ++i) {
    // Hostname counts are Score's.
    if (cs[i].is_hostname()) continue;
    CountPodGroups(handle_.Snapshot(), cs[i], pod.metadata.namespace_, /*missing_key_is_empty=*/true, s.domains[i]);
  }
  return true;
}

namespace {

// The pods of `node` that hostname constraint i selects (upstream scoring.go Score's
// countPodsMatchSelector over the node's pods): a pod of the snapshot's pod groups counts
// as PreScore found its group, any other pod is matched here.
int64_t CountNodePods(const PreScoreState& s, size_t i, const api::Pod& pod, const cache::NodeInfo& node) {
  const Constraint& c = (*s.constraints)[i];
  const std::vector<uint8_t>& selected = s.selected_groups[i];
  if (!c.selector.has_value() || c.selector->Empty()) return 0;
  int64_t n = 0;
  for (const cache::PodEntry& e : node.pods()) {
    const cache::PodGroup* g = s.groups != nullptr ? s.groups->GroupOf(e.pod.get()) : nullptr;
    if (g != nullptr && g->all_index < selected.size()) n += selected[g->all_index];
    else n += SelectorCountsPod(c, *e.pod, pod.metadata.namespace_) ? 1 : 0;
  }
  return n;
}

// upstream scoring.go Score: the sum over constraints of the node's domain count times
// the topology's weight, plus maxSkew-1; rounded. `domain_of(i)` is the node's domain
// for constraint i (kNone without the key, kHasKey for a hostname key it has,
// kUnseenValue for a value no domain has, which counts 0).
template <typename DomainOf>
int64_t SumScores(const PreScoreState& s, const api::Pod& pod, const cache::NodeInfo& node, DomainOf domain_of) {
  const Constraints& cs = *s.constraints;
  double sum = 0;
  for (size_t i = 0; i < cs.size(); ++i) {
    const Constraint& c = cs[i];
    const int32_t d = domain_of(i);
    if (d == DomainCounts::kNone) continue;
    const int64_t count = d == PreScoreState::kHasKey       ? CountNodePods(s, i, pod, node)
                          : d == PreScoreState::kUnseenValue ? 0
                                                             : s.domains[i].count(d);
    sum += ScoreForCount(count, c.max_skew, s.normalizing_weights[i]);
  }
  return static_cast<int64_t>(std::round(sum));
}

// A node PreScore was not given (or one handed over outside its span): its labels are
// looked up here.
Status ScoreFromLabels(const PreScoreState* s, const api::Pod& pod, const cache::NodeInfo& node, int64_t& score) {
  score = 0;
  const api::Node* n = node.node();
  if (n == nullptr) return Status::Error("getting node \"" + node.name() + "\" from Snapshot: not found");
  if (s == nullptr) return MissingStateError();
  if (!s->ignored_nodes.empty() && s->ignored_nodes.contains(std::string_view(n->Name()))) return Status::Success();
  const Constraints& cs = *s->constraints;
  score = SumScores(*s, pod, node, [&](size_t i) {
    const std::string* value = cs[i].NodeValue(node);
    if (value == nullptr) return DomainCounts::kNone;
    if (cs[i].is_hostname()) return PreScoreState::kHasKey;
    const int32_t d = s->domains[i].Find(*value);
    return d != DomainCounts::kNone ? d : PreScoreState::kUnseenValue;
  });
  return Status::Success();
}

}  // namespace

Status PodTopologySpread::Score(const CycleState& state, const api::Pod& pod, const cache::NodeInfo& node,
                                int64_t& score) const {
  return ScoreAsRunOfOne(state, pod, node, score);
}

Status PodTopologySpread::ScoreNodes(const CycleState& state, const api::Pod& pod,
                                     std::span<const cache::NodeInfoPtr> nodes, std::span<NodeScore> out) const {
  const auto* s = state.Read<PreScoreState>(kPreScoreStateKey);
  // The run's position in PreScore's span, when it lies inside it (compared as
  // std::less does, since the run may come from anywhere).
  size_t first = SIZE_MAX;
  if (s != nullptr && !nodes.empty() && s->nodes_base != nullptr) {
    const cache::NodeInfoPtr* run = nodes.data();
    const cache::NodeInfoPtr* end = s->nodes_base + s->nodes.size();
    if (!std::less<>()(run, s->nodes_base) && std::less<>()(run, end) &&
        nodes.size() <= static_cast<size_t>(end - run))
      first = static_cast<size_t>(run - s->nodes_base);
  }
  const size_t num_constraints = s != nullptr ? s->constraints->size() : 0;
  for (size_t j = 0; j < nodes.size(); ++j) {
    const cache::NodeInfo& node = *nodes[j];
    const size_t k = first + j;
    // A node without its Node object gets ScoreFromLabels's error.
    if (first == SIZE_MAX || s->nodes[k] != &node || node.node() == nullptr) {
      if (Status st = ScoreFromLabels(s, pod, node, out[j].score); !st.IsSuccess()) return st;
      continue;
    }
    const int32_t* domains = &s->node_domains[k * num_constraints];
    out[j].score = SumScores(*s, pod, node, [&](size_t i) { return domains[i]; });
  }
  return Status::Success();
}

// upstream scoring.go NormalizeScore: fewer matching pods score higher; ignored nodes 0.
Status PodTopologySpread::NormalizeScore(const CycleState& state, const api::Pod& /*pod*/,
                                         std::span<NodeScore> scores) const {
  const auto* s = state.Read<PreScoreState>(kPreScoreStateKey);
  if (s == nullptr) return MissingStateError();

  int64_t min_score = std::numeric_limits<int64_t>::max();
  int64_t max_score = 0;
  for (NodeScore& ns : scores) {
    if (!s->ignored_nodes.empty() && s->ignored_nodes.contains(ns.name)) {
      ns.score = kInvalidScore;
      continue;
    }
    min_score = std::min(min_score, ns.score);
    max_score = std::max(max_score, ns.score);
  }
  for (NodeScore& ns : scores) {
    if (ns.score == kInvalidScore) {
      ns.score = 0;
    } else if (max_score == 0) {
      ns.score = kMaxNodeScore;
    } else {
      ns.score = kMaxNodeScore * (max_score + min_score - ns.score) / max_score;
    }
  }
  return Status::Success();
}

}  // namespace ksched::framework::plugins::podtopologyspread
