// The ScheduleAnyway half (upstream podtopologyspread/scoring.go).
#include <algorithm>
#include <cmath>
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

  for (const cache::NodeInfoPtr& info : nodes) {
    const api::Node* node = info->node();
    if (node == nullptr) continue;
    if (require_all_topologies && !NodeLabelsMatchSpreadConstraints(node->metadata.labels, cs)) {
      s->ignored_nodes.insert(node->Name());
      continue;
    }
    for (size_t i = 0; i < cs.size(); ++i) {
      // Per-node counts (hostname) are computed in Score.
      if (cs[i].topology_key == kLabelHostname) continue;
      const std::string* value = node->metadata.labels.Get(cs[i].topology_key);
      s->domains[i].Intern(value != nullptr ? std::string_view(*value) : std::string_view());
    }
  }
  s->normalizing_weights.resize(cs.size());
  for (size_t i = 0; i < cs.size(); ++i) {
    size_t size = cs[i].topology_key == kLabelHostname ? nodes.size() - s->ignored_nodes.size() : s->domains[i].size();
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
    const api::StringMap& labels = node->metadata.labels;
    if (require_all_topologies && !NodeLabelsMatchSpreadConstraints(labels, cs)) continue;
    NodeInclusion inclusion(pod, *node, affinity);
    for (size_t i = 0; i < cs.size(); ++i) {
      const Constraint& c = cs[i];
      if (!inclusion.Matches(c)) continue;
      const std::string* value = labels.Get(c.topology_key);
      // Only domains of feasible nodes are counted (never hostname ones, see above).
      int32_t d = c.topology_key == kLabelHostname
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
    if (cs[i].topology_key == kLabelHostname) continue;
    CountPodGroups(handle_.Snapshot(), cs[i], pod.metadata.namespace_, /*missing_key_is_empty=*/true, s.domains[i]);
  }
  return true;
}

// upstream scoring.go Score: the sum over constraints of the node's domain count times
// the topology's weight, plus maxSkew-1; rounded.
Status PodTopologySpread::Score(const CycleState& state, const api::Pod& pod, const cache::NodeInfo& node,
                                int64_t& score) const {
  score = 0;
  const api::Node* n = node.node();
  if (n == nullptr) return Status::Error("getting node \"" + node.name() + "\" from Snapshot: not found");
  const auto* s = state.Read<PreScoreState>(kPreScoreStateKey);
  if (s == nullptr) return MissingStateError();
  if (!s->ignored_nodes.empty() && s->ignored_nodes.contains(std::string_view(n->Name()))) return Status::Success();

  const Constraints& cs = *s->constraints;
  double sum = 0;
  for (size_t i = 0; i < cs.size(); ++i) {
    const Constraint& c = cs[i];
    const std::string* value = n->metadata.labels.Get(c.topology_key);
    if (value == nullptr) continue;
    int64_t count = c.topology_key == kLabelHostname
                        ? CountPodsMatchSelector(node.pods(), c, pod.metadata.namespace_)
                        : s->domains[i].CountOf(*value);
    sum += ScoreForCount(count, c.max_skew, s->normalizing_weights[i]);
  }
  score = static_cast<int64_t>(std::round(sum));
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
    if (s->ignored_nodes.contains(ns.name)) {
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
