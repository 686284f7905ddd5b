// PreScore, Score and NormalizeScore (upstream interpodaffinity/scoring.go).
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "pkg/framework/plugins/interpodaffinity/common.h"
#include "pkg/framework/plugins/interpodaffinity/inter_pod_affinity.h"

namespace ksched::framework::plugins::interpodaffinity {
namespace {

struct PreScoreState final : StateData {
  // Read-only after PreScore, so clones share it.
  std::unique_ptr<StateData> Clone() const override { return std::make_unique<PreScoreState>(*this); }
  bool NeededForBinding() const override { return false; }  // Filter / Score only
  std::shared_ptr<const TopologyCounts> scores;
};

// upstream scoreMap.processTerm, for a whole pod group: `weight` in the domain of each
// member's node when the group's pods match the term (`matches`).
void ProcessTerm(TopologyCounts& scores, const api::AffinityTerm& term, int64_t weight, bool matches,
                 const cache::PodGroup& group, TopologySlots& slots) {
  if (!matches) return;
  group.Counts(slots.Of(term.topology_key)).ForEach([&](std::string_view value, int64_t members) {
    scores.Add(term.topology_key, value, weight * members, /*erase_zero=*/false);
  });
}

}  // namespace

Status InterPodAffinity::PreScore(CycleState& state, const api::Pod& pod, std::span<const cache::NodeInfoPtr> nodes) {
  if (nodes.empty()) return Status(Code::kSkip);
  std::shared_ptr<const api::PodAffinityTerms> parsed = api::ParsePodAffinityTerms(pod);
  const bool has_constraints =
      parsed != nullptr && (!parsed->preferred_affinity.empty() || !parsed->preferred_anti_affinity.empty());
  // Existing pods' preferences may be ignored unless the pod has its own.
  if (args_.ignore_preferred_terms_of_existing_pods && !has_constraints) return Status(Code::kSkip);
  if (parsed != nullptr && !parsed->parse_errors.empty()) {
    return Status::Error("failed to parse pod: " + JoinErrors(parsed->parse_errors));
  }

  const api::ClusterLister& lister = handle_.Lister();
  const auto [preferred, preferred_anti] = ResolvePreferredTerms(parsed.get(), lister);
  const api::StringMap ns_labels = NamespaceLabels(lister, pod.metadata.namespace_);

  // upstream processExistingPod, per pod group: without preferences of its own, only
  // existing pods with affinity can contribute.
  const cache::Snapshot& snapshot = handle_.Snapshot();
  const cache::PodGroupIndex& groups = snapshot.PodGroups();
  TopologySlots slots(snapshot);
  auto scores = std::make_shared<TopologyCounts>();
  if (has_constraints) {
    for (const cache::PodGroup* g : groups.groups()) {
      for (const auto& t : preferred) ProcessTerm(*scores, t.term, t.weight, t.term.Matches(*g->pod, nullptr), *g, slots);
      for (const auto& t : preferred_anti) {
        ProcessTerm(*scores, t.term, -int64_t{t.weight}, t.term.Matches(*g->pod, nullptr), *g, slots);
      }
    }
  }
  const int64_t hard_weight = args_.hard_pod_affinity_weight;
  for (const cache::PodGroup* g : groups.groups_with_affinity()) {
    const api::PodAffinityTerms& existing = *g->terms;
    if (hard_weight > 0) {
      for (const api::AffinityTerm& t : existing.required_affinity) {
        ProcessTerm(*scores, t, hard_weight, t.Matches(pod, &ns_labels), *g, slots);
      }
    }
    for (const auto& t : existing.preferred_affinity) {
      ProcessTerm(*scores, t.term, t.weight, t.term.Matches(pod, &ns_labels), *g, slots);
    }
    for (const auto& t : existing.preferred_anti_affinity) {
      ProcessTerm(*scores, t.term, -int64_t{t.weight}, t.term.Matches(pod, &ns_labels), *g, slots);
    }
  }
  if (scores->num_keys() == 0) return Status(Code::kSkip);

  auto s = std::make_unique<PreScoreState>();
  s->scores = std::move(scores);
  state.Write(std::string(kPreScoreStateKey), std::move(s));
  return Status::Success();
}

Status InterPodAffinity::Score(const CycleState& state, const api::Pod& /*pod*/, const cache::NodeInfo& node,
                               int64_t& score) const {
  const auto* s = state.Read<PreScoreState>(kPreScoreStateKey);
  if (s == nullptr) {
    return Status::Error("failed to read \"" + std::string(kPreScoreStateKey) + "\" from cycleState: not found");
  }
  if (node.node() == nullptr) return Status::Error("getting node \"" + node.name() + "\" from Snapshot: not found");
  score = s->scores->Sum(node.node()->metadata.labels);
  return Status::Success();
}

Status InterPodAffinity::NormalizeScore(const CycleState& state, const api::Pod& /*pod*/,
                                        std::span<NodeScore> scores) const {
  const auto* s = state.Read<PreScoreState>(kPreScoreStateKey);
  if (s == nullptr) {
    return Status::Error("failed to read \"" + std::string(kPreScoreStateKey) + "\" from cycleState: not found");
  }
  if (s->scores->num_keys() == 0) return Status::Success();
  int64_t min_count = std::numeric_limits<int64_t>::max();
  int64_t max_count = std::numeric_limits<int64_t>::min();
  for (const NodeScore& ns : scores) {
    max_count = std::max(max_count, ns.score);
    min_count = std::min(min_count, ns.score);
  }
  const int64_t diff = max_count - min_count;
  for (NodeScore& ns : scores) {
    double f = 0;
    if (diff > 0) f = static_cast<double>(kMaxNodeScore) * (static_cast<double>(ns.score - min_count) / diff);
    ns.score = static_cast<int64_t>(f);
  }
  return Status::Success();
}

}  // namespace ksched::framework::plugins::interpodaffinity
