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

// Which of an existing pod's required anti-affinity terms match the incoming pod, as a
// bit mask, remembered per cycle for pods that share one decoded affinity (replicas of a
// workload, see pkg/api/shared.h) in one namespace: their terms are the same, so the
// selectors run once per workload instead of once per pod.
class AntiAffinityMatchMemo {
 public:
  AntiAffinityMatchMemo(const api::Pod& incoming, const api::StringMap* ns_labels)
      : incoming_(incoming), ns_labels_(ns_labels) {}

  uint64_t Matches(const api::Pod& existing, const api::PodAffinityTerms& terms) {
    const auto& anti = terms.required_anti_affinity;
    const bool memoizable = !terms.uses_own_labels && anti.size() <= 64 && existing.spec.affinity.has_value();
    if (memoizable) {
      const api::Affinity* key = existing.spec.affinity.operator->();
      for (const Entry& e : entries_) {
        if (e.affinity == key && e.ns == existing.metadata.namespace_) return e.mask;
      }
    }
    uint64_t mask = 0;
    for (size_t i = 0; i < anti.size(); ++i) {
      if (anti[i].Matches(incoming_, ns_labels_)) mask |= uint64_t{1} << i;
    }
    if (memoizable && entries_.size() < kMaxEntries) {
      entries_.push_back({existing.spec.affinity.operator->(), existing.metadata.namespace_, mask});
    }
    return mask;
  }

 private:
  static constexpr size_t kMaxEntries = 32;  // a scan of more costs about what it saves
  struct Entry {
    const api::Affinity* affinity;
    std::string_view ns;
    uint64_t mask;
  };
  const api::Pod& incoming_;
  const api::StringMap* ns_labels_;
  std::vector<Entry> entries_;
};

// upstream getExistingAntiAffinityCounts, over the nodes holding pods with required
// anti-affinity only.
void CountExistingAntiAffinity(PreFilterState& s, const api::Pod& pod, std::span<const cache::NodeInfoPtr> nodes) {
  AntiAffinityMatchMemo memo(pod, &s.namespace_labels);
  for (const cache::NodeInfoPtr& info : nodes) {
    const api::Node* node = info->node();
    if (node == nullptr) continue;
    for (const cache::PodEntry& e : info->pods()) {
      if (!e.has_required_anti_affinity) continue;
      std::shared_ptr<const api::PodAffinityTerms> holder;
      const api::PodAffinityTerms* terms = EntryTerms(e, holder);
      if (terms == nullptr) continue;
      const auto& anti = terms->required_anti_affinity;
      if (anti.size() > 64) {  // beyond the mask: match term by term
        CountAntiAffinity(s.existing_anti_affinity, anti, pod, &s.namespace_labels, node->metadata.labels, 1);
        continue;
      }
      const uint64_t mask = memo.Matches(*e.pod, *terms);
      for (size_t i = 0; i < anti.size(); ++i) {
        if ((mask >> i & 1) == 0) continue;
        if (const std::string* v = node->metadata.labels.Get(anti[i].topology_key)) {
          s.existing_anti_affinity.Add(anti[i].topology_key, *v, 1);
        }
      }
    }
  }
}

// upstream getIncomingAffinityAntiAffinityCounts, over all nodes. A node without any of
// the terms' topology keys cannot be counted, so its pods are not matched at all.
void CountIncoming(PreFilterState& s, std::span<const cache::NodeInfoPtr> nodes) {
  const auto& affinity = s.terms->required_affinity;
  const auto& anti = s.terms->required_anti_affinity;
  if (affinity.empty() && anti.empty()) return;
  for (const cache::NodeInfoPtr& info : nodes) {
    const api::Node* node = info->node();
    if (node == nullptr || info->pods().empty()) continue;
    const api::StringMap& labels = node->metadata.labels;
    bool any_key = false;
    for (const auto* terms : {&affinity, &anti}) {
      for (const api::AffinityTerm& t : *terms) any_key = any_key || labels.Has(t.topology_key);
    }
    if (!any_key) continue;
    for (const cache::PodEntry& e : info->pods()) {
      if (!affinity.empty()) CountAffinity(s.affinity, affinity, *e.pod, labels, 1);
      CountAntiAffinity(s.anti_affinity, anti, *e.pod, nullptr, labels, 1);
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
  CountExistingAntiAffinity(*s, pod, snapshot.HavePodsWithRequiredAntiAffinity());
  CountIncoming(*s, snapshot.List());

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
    return Status(Code::kUnschedulableAndUnresolvable, std::string(kErrReasonAffinityRulesNotMatch));
  }
  if (!SatisfyPodAntiAffinity(*s, labels)) {
    return Status(Code::kUnschedulable, std::string(kErrReasonAntiAffinityRulesNotMatch));
  }
  if (s->existing_anti_affinity.AnyPositive(labels)) {
    return Status(Code::kUnschedulable, std::string(kErrReasonExistingAntiAffinityRulesNotMatch));
  }
  return Status::Success();
}

}  // namespace ksched::framework::plugins::interpodaffinity
