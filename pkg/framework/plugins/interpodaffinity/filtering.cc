// PreFilter, its AddPod/RemovePod extensions and Filter (upstream interpodaffinity/filtering.go).
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pkg/framework/plugins/interpodaffinity/common.h"
#include "pkg/framework/plugins/interpodaffinity/inter_pod_affinity.h"

namespace ksched::framework::plugins::interpodaffinity {
namespace {

// upstream updateWithAffinityTerms: when `pod` matches all terms, count it once per term
// in the domain of `node`.
void CountAffinity(TopologyCounts& counts, const std::vector<api::AffinityTerm>& terms, const api::Pod& pod,
                   const api::StringMap& node_labels, int64_t delta) {
  if (!PodMatchesAllTerms(terms, pod)) return;
  for (const api::AffinityTerm& t : terms) {
    if (const std::string* v = node_labels.Get(t.topology_key)) counts.Add(t.topology_key, *v, delta);
  }
}

// upstream updateWithAntiAffinityTerms: count `pod` once per term it matches.
void CountAntiAffinity(TopologyCounts& counts, const std::vector<api::AffinityTerm>& terms, const api::Pod& pod,
                       const api::StringMap* ns_labels, const api::StringMap& node_labels, int64_t delta) {
  for (const api::AffinityTerm& t : terms) {
    if (!t.Matches(pod, ns_labels)) continue;
    if (const std::string* v = node_labels.Get(t.topology_key)) counts.Add(t.topology_key, *v, delta);
  }
}

// The terms of an existing pod: those the cache parsed (no reference count touched on
// this hot path), or parsed now into `holder` for an entry built elsewhere (e.g. a what-if
// pod).
const api::PodAffinityTerms* EntryTerms(const cache::PodEntry& entry,
                                        std::shared_ptr<const api::PodAffinityTerms>& holder) {
  if (entry.affinity_terms != nullptr) return entry.affinity_terms.get();
  holder = api::ParsePodAffinityTerms(*entry.pod);
  return holder.get();
}

// upstream getExistingAntiAffinityCounts: every existing pod counts once per required
// anti-affinity term of its own that the incoming pod matches. Read per pod group: the
// members share their terms.
void CountExistingAntiAffinity(PreFilterState& s, const api::Pod& pod, const cache::PodGroupIndex& groups,
                               TopologySlots& slots) {
  for (const cache::PodGroup* g : groups.groups_with_affinity()) {
    for (const api::AffinityTerm& t : g->terms->required_anti_affinity) {
      if (t.Matches(pod, &s.namespace_labels)) {
        s.existing_anti_affinity.AddShared(t.topology_key, g->Counts(slots.Of(t.topology_key)));
      }
    }
  }
}

// upstream getIncomingAffinityAntiAffinityCounts: existing pods matching all of the
// incoming pod's required affinity terms count once per term; those matching one of its
// anti-affinity terms, once for that term. Matched per pod group (same namespace and labels).
void CountIncoming(PreFilterState& s, const cache::PodGroupIndex& groups, TopologySlots& slots) {
  const auto& affinity = s.terms->required_affinity;
  const auto& anti = s.terms->required_anti_affinity;
  if (affinity.empty() && anti.empty()) return;
  for (const cache::PodGroup* g : groups.groups()) {
    const api::Pod& member = *g->pod;
    if (!affinity.empty() && PodMatchesAllTerms(affinity, member)) {
      for (const api::AffinityTerm& t : affinity) {
        s.affinity.AddShared(t.topology_key, g->Counts(slots.Of(t.topology_key)));
      }
    }
    for (const api::AffinityTerm& t : anti) {
      if (t.Matches(member, nullptr)) s.anti_affinity.AddShared(t.topology_key, g->Counts(slots.Of(t.topology_key)));
    }
  }
}

// upstream satisfyPodAffinity.
bool SatisfyPodAffinity(const PreFilterState& s, const api::StringMap& labels) {
  bool pods_exist = true;
  for (const api::AffinityTerm& t : s.terms->required_affinity) {
    const std::string* v = labels.Get(t.topology_key);
    if (v == nullptr) return false;  // every topology key must be on the node
    if (s.affinity.Get(t.topology_key, *v) <= 0) pods_exist = false;
  }
  if (pods_exist) return true;
  // The first pod of a group with affinity to itself: no pod anywhere matches, but the
  // pod matches its own terms.
  return s.affinity.empty() && s.matches_own_affinity;
}

// upstream satisfyPodAntiAffinity.
bool SatisfyPodAntiAffinity(const PreFilterState& s, const api::StringMap& labels) {
  if (s.anti_affinity.empty()) return true;
  for (const api::AffinityTerm& t : s.terms->required_anti_affinity) {
    const std::string* v = labels.Get(t.topology_key);
    if (v != nullptr && s.anti_affinity.Get(t.topology_key, *v) > 0) return false;
  }
  return true;
}

// Null (with `error` set) when PreFilter did not run or skipped.
PreFilterState* ReadState(const CycleState& state, Status& error) {
  auto* s = state.Read<PreFilterState>(kPreFilterStateKey);
  if (s == nullptr) {
    error = Status::Error("failed to read \"" + std::string(kPreFilterStateKey) + "\" from cycleState: not found");
  }
  return s;
}

}  // namespace

void PreFilterState::UpdateWithPod(const api::Pod& incoming, const cache::PodEntry& entry, const api::Node& node,
                                   int64_t multiplier) {
  const api::StringMap& labels = node.metadata.labels;
  std::shared_ptr<const api::PodAffinityTerms> holder;
  if (const api::PodAffinityTerms* existing = EntryTerms(entry, holder)) {
    CountAntiAffinity(existing_anti_affinity, existing->required_anti_affinity, incoming, &namespace_labels, labels,
                      multiplier);
  }
  CountAffinity(affinity, terms->required_affinity, *entry.pod, labels, multiplier);
  CountAntiAffinity(anti_affinity, terms->required_anti_affinity, *entry.pod, nullptr, labels, multiplier);
}

Status InterPodAffinity::PreFilter(CycleState& state, const api::Pod& pod, PreFilterResult& /*result*/) {
  auto s = std::make_unique<PreFilterState>();
  std::shared_ptr<const api::PodAffinityTerms> parsed = api::ParsePodAffinityTerms(pod);
  if (parsed != nullptr && !parsed->parse_errors.empty()) {
    return Status(Code::kUnschedulableAndUnresolvable, "parsing pod: " + JoinErrors(parsed->parse_errors));
  }
  auto terms = std::make_shared<api::PodAffinityTerms>();
  const api::ClusterLister& lister = handle_.Lister();
  if (parsed != nullptr) {
    // Only the required terms matter here; the preferred ones are PreScore's.
    terms->required_affinity = parsed->required_affinity;
    terms->required_anti_affinity = parsed->required_anti_affinity;
    for (auto& t : terms->required_affinity) MergeNamespaces(t, lister);
    for (auto& t : terms->required_anti_affinity) MergeNamespaces(t, lister);
  }
  s->terms = terms;
  s->matches_own_affinity = PodMatchesAllTerms(terms->required_affinity, pod);
  s->namespace_labels = NamespaceLabels(lister, pod.metadata.namespace_);

  const cache::Snapshot& snapshot = handle_.Snapshot();
  TopologySlots slots(snapshot);
  CountExistingAntiAffinity(*s, pod, snapshot.PodGroups(), slots);
  CountIncoming(*s, snapshot.PodGroups(), slots);

  if (s->existing_anti_affinity.empty() && terms->required_affinity.empty() &&
      terms->required_anti_affinity.empty()) {
    return Status(Code::kSkip);
  }
  state.Write(std::string(kPreFilterStateKey), std::move(s));
  return Status::Success();
}

Status InterPodAffinity::AddPod(CycleState& state, const api::Pod& pod_to_schedule,
                                const cache::PodEntry& pod_to_add, const cache::NodeInfo& node) const {
  Status error;
  PreFilterState* s = ReadState(state, error);
  if (s == nullptr) return error;
  if (node.node() == nullptr) return Status::Error("node not found");
  s->UpdateWithPod(pod_to_schedule, pod_to_add, *node.node(), 1);
  return Status::Success();
}

Status InterPodAffinity::RemovePod(CycleState& state, const api::Pod& pod_to_schedule,
                                   const cache::PodEntry& pod_to_remove, const cache::NodeInfo& node) const {
  Status error;
  PreFilterState* s = ReadState(state, error);
  if (s == nullptr) return error;
  if (node.node() == nullptr) return Status::Error("node not found");
  s->UpdateWithPod(pod_to_schedule, pod_to_remove, *node.node(), -1);
  return Status::Success();
}

Status InterPodAffinity::Filter(const CycleState& state, const api::Pod& /*pod*/, const cache::NodeInfo& node) const {
  Status error;
  const PreFilterState* s = ReadState(state, error);
  if (s == nullptr) return error;
  if (node.node() == nullptr) return Status::Error("node not found");
  const api::StringMap& labels = node.node()->metadata.labels;
  if (!SatisfyPodAffinity(*s, labels)) {
    return Status::Constant<kErrReasonAffinityRulesNotMatch>(Code::kUnschedulableAndUnresolvable);
  }
  if (!SatisfyPodAntiAffinity(*s, labels)) {
    return Status::Constant<kErrReasonAntiAffinityRulesNotMatch>(Code::kUnschedulable);
  }
  if (s->existing_anti_affinity.AnyPositive(labels)) {
    return Status::Constant<kErrReasonExistingAntiAffinityRulesNotMatch>(Code::kUnschedulable);
  }
  return Status::Success();
}

}  // namespace ksched::framework::plugins::interpodaffinity
