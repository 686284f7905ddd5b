// The DoNotSchedule half (upstream podtopologyspread/filtering.go).
#include <utility>

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
  const size_t num_nodes = handle_.Snapshot().NumNodes();
  for (size_t i = 0; i < cs.size(); ++i) {
    if (cs[i].topology_key == kLabelHostname) s->domains[i].Reserve(num_nodes);
  }

  for (const cache::NodeInfoPtr& info : handle_.Snapshot().List()) {
    const api::Node* node = info->node();
    if (node == nullptr) continue;
    const api::StringMap& labels = node->metadata.labels;
    if (!NodeLabelsMatchSpreadConstraints(labels, cs)) continue;
    NodeInclusion inclusion(pod, *node, *s->node_affinity);
    for (size_t i = 0; i < cs.size(); ++i) {
      const Constraint& c = cs[i];
      if (!inclusion.Matches(c)) continue;
      int32_t d = s->domains[i].Intern(*labels.Get(c.topology_key));
      s->domains[i].count(d) += CountPodsMatchSelector(info->pods(), c, pod.metadata.namespace_);
    }
  }
  for (size_t i = 0; i < cs.size(); ++i) {
    const DomainCounts& dc = s->domains[i];
    for (int32_t d = 0; d < static_cast<int32_t>(dc.size()); ++d) s->critical_paths[i].Update(d, dc.count(d));
  }
  state.Write(std::string(kPreFilterStateKey), std::move(s));
  return Status::Success();
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
Status PodTopologySpread::Filter(const CycleState& state, const api::Pod& pod, const cache::NodeInfo& node) const {
  const api::Node* n = node.node();
  if (n == nullptr) return Status::Error("node not found");
  const auto* s = state.Read<PreFilterState>(kPreFilterStateKey);
  if (s == nullptr) return MissingStateError();
  if (s->constraints == nullptr || s->constraints->empty()) return Status::Success();

  const Constraints& cs = *s->constraints;
  for (size_t i = 0; i < cs.size(); ++i) {
    const Constraint& c = cs[i];
    const std::string* value = n->metadata.labels.Get(c.topology_key);
    if (value == nullptr) {
      return Status(Code::kUnschedulableAndUnresolvable, std::string(kErrReasonNodeLabelNotMatch));
    }
    int64_t self_match = c.Matches(pod.metadata.labels) ? 1 : 0;
    int64_t skew = s->domains[i].CountOf(*value) + self_match - s->MinMatchNum(i);
    if (skew > c.max_skew) return Status(Code::kUnschedulable, std::string(kErrReasonConstraintsNotMatch));
  }
  return Status::Success();
}

}  // namespace ksched::framework::plugins::podtopologyspread
