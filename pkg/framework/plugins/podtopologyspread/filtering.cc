// The DoNotSchedule half (upstream podtopologyspread/filtering.go).
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "pkg/framework/plugins/podtopologyspread/pod_topology_spread.h"

namespace ksched::framework::plugins::podtopologyspread {
namespace {

// PreFilter skipped (or was never run) for this cycle.
Status MissingStateError() {
  return Status::Error("reading \"" + std::string(kPreFilterStateKey) + "\" from cycleState: not found");
}

}  // namespace

// upstream filtering.go calPreFilterState.
Status PodTopologySpread::PreFilter(CycleState& state, const api::Pod& pod, PreFilterResult& /*result*/) {
  auto constraints = GetConstraints(pod, api::WhenUnsatisfiable::kDoNotSchedule);
  if (!constraints.ok()) return Status::Error("get constraints from pod: " + constraints.status().message());
  if (constraints->empty()) return Status(Code::kSkip);

  auto s = std::make_unique<PreFilterState>();
  s->constraints = std::make_shared<const Constraints>(std::move(*constraints));
  s->node_affinity = std::make_shared<const api::RequiredNodeAffinity>(pod);
  const Constraints& cs = *s->constraints;
  s->domains.resize(cs.size());
  s->critical_paths.resize(cs.size());
  for (const Constraint& c : cs) s->self_match.push_back(c.Matches(pod.metadata.labels) ? 1 : 0);
  std::vector<std::shared_ptr<StringIndex>> exact;
  if (EveryNodeIncluded(cs, *s->node_affinity)) exact = ExactDomains(cs);
  if (!exact.empty()) {
    // The domains are the same as last cycle's; their counts are the selected pod
    // groups' members per value (see DomainSets).
    for (size_t i = 0; i < cs.size(); ++i) {
      s->domains[i] = DomainCounts(std::move(exact[i]));
      CountPodGroups(handle_.Snapshot(), cs[i], pod.metadata.namespace_, /*missing_key_is_empty=*/false,
                     s->domains[i]);
    }
  } else {
    for (size_t i = 0; i < cs.size(); ++i) {
      if (cs[i].is_hostname()) s->domains[i].Reserve(handle_.Snapshot().NumNodes());
    }
    for (const cache::NodeInfoPtr& info : handle_.Snapshot().List()) {
      const api::Node* node = info->node();
      if (node == nullptr) continue;
      if (!NodeLabelsMatchSpreadConstraints(*info, cs)) continue;
      NodeInclusion inclusion(pod, *node, *s->node_affinity);
      for (size_t i = 0; i < cs.size(); ++i) {
        const Constraint& c = cs[i];
        if (!inclusion.Matches(c)) continue;
        int32_t d = s->domains[i].Intern(*c.NodeValue(*info));
        s->domains[i].count(d) += CountPodsMatchSelector(info->pods(), c, pod.metadata.namespace_);
      }
    }
  }
  for (size_t i = 0; i < cs.size(); ++i) {
    const DomainCounts& dc = s->domains[i];
    for (int32_t d = 0; d < static_cast<int32_t>(dc.size()); ++d) s->critical_paths[i].Update(d, dc.count(d));
  }
  s->domain_by_zone_id.resize(cs.size());
  for (size_t i = 0; i < cs.size(); ++i) {
    if (cs[i].key_kind != KeyKind::kZone) continue;
    const DomainCounts& dc = s->domains[i];
    for (int32_t d = 0; d < static_cast<int32_t>(dc.size()); ++d) {
      const auto id = static_cast<size_t>(cache::ZoneId(dc.value(d)));
      if (id >= s->domain_by_zone_id[i].size()) s->domain_by_zone_id[i].resize(id + 1, DomainCounts::kNone);
      s->domain_by_zone_id[i][id] = d;
    }
  }
  state.Write(std::string(kPreFilterStateKey), std::move(s));
  return Status::Success();
}

std::vector<std::shared_ptr<StringIndex>> PodTopologySpread::ExactDomains(const Constraints& constraints) {
  const cache::Snapshot& snapshot = handle_.Snapshot();
  const cache::PodGroupIndex& groups = snapshot.PodGroups();
  std::vector<std::string> keys;
  for (const Constraint& c : constraints) keys.push_back(c.topology_key);

  MutexLock lock(domain_sets_mu_);
  DomainSets* sets = nullptr;
  for (DomainSets& d : domain_sets_) {
    if (d.keys == keys) sets = &d;
  }
  if (sets == nullptr) {
    constexpr size_t kMaxKeySets = 4;
    if (domain_sets_.size() == kMaxKeySets) domain_sets_.erase(domain_sets_.begin());  // the oldest
    sets = &domain_sets_.emplace_back();
    sets->keys = std::move(keys);
  }
  if (sets->values.empty() || sets->index_id != groups.id() || sets->labels_version != groups.labels_version()) {
    // One walk over the nodes' labels (upstream's PreFilter walk, without the pods).
    sets->index_id = groups.id();
    sets->labels_version = groups.labels_version();
    sets->exact = true;
    sets->values.clear();
    for (size_t i = 0; i < sets->keys.size(); ++i) sets->values.push_back(std::make_shared<StringIndex>());
    for (const cache::NodeInfoPtr& info : snapshot.List()) {
      const api::Node* node = info->node();
      if (node == nullptr) continue;
      const api::StringMap& labels = node->metadata.labels;
      size_t present = 0;
      for (const std::string& key : sets->keys) present += labels.Has(key) ? 1 : 0;
      if (present == 0) continue;
      if (present < sets->keys.size()) {
        sets->exact = false;
        break;
      }
      for (size_t i = 0; i < sets->keys.size(); ++i) sets->values[i]->Intern(*labels.Get(sets->keys[i]));
    }
  }
  if (!sets->exact) return {};
  return sets->values;
}

Status PodTopologySpread::AddPod(CycleState& state, const api::Pod& pod_to_schedule, const cache::PodEntry& pod_to_add,
                                 const cache::NodeInfo& node) const {
  auto* s = state.Read<PreFilterState>(kPreFilterStateKey);
  if (s == nullptr) return MissingStateError();
  s->UpdateWithPod(*pod_to_add.pod, pod_to_schedule, node.node(), 1);
  return Status::Success();
}

Status PodTopologySpread::RemovePod(CycleState& state, const api::Pod& pod_to_schedule,
                                    const cache::PodEntry& pod_to_remove, const cache::NodeInfo& node) const {
  auto* s = state.Read<PreFilterState>(kPreFilterStateKey);
  if (s == nullptr) return MissingStateError();
  s->UpdateWithPod(*pod_to_remove.pod, pod_to_schedule, node.node(), -1);
  return Status::Success();
}

// upstream filtering.go Filter: for every constraint, the node's domain count, plus one
// if the pod matches its own selector, minus the global minimum must not exceed maxSkew.
Status PodTopologySpread::Filter(const CycleState& state, const api::Pod& /*pod*/, const cache::NodeInfo& node) const {
  const api::Node* n = node.node();
  if (n == nullptr) return Status::Error("node not found");
  const auto* s = state.Read<PreFilterState>(kPreFilterStateKey);
  if (s == nullptr) return MissingStateError();
  if (s->constraints == nullptr || s->constraints->empty()) return Status::Success();

  const Constraints& cs = *s->constraints;
  for (size_t i = 0; i < cs.size(); ++i) {
    const Constraint& c = cs[i];
    const std::string* value = c.NodeValue(node);
    if (value == nullptr) {
      return Status::Constant<kErrReasonNodeLabelNotMatch>(Code::kUnschedulableAndUnresolvable);
    }
    int64_t skew = s->NodeDomainCount(i, node, *value) + s->self_match[i] - s->MinMatchNum(i);
    if (skew > c.max_skew) return Status::Constant<kErrReasonConstraintsNotMatch>(Code::kUnschedulable);
  }
  return Status::Success();
}

}  // namespace ksched::framework::plugins::podtopologyspread
