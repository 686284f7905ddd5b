#include "pkg/framework/plugins/podtopologyspread/common.h"

#include <utility>

#include "pkg/framework/plugins/podtopologyspread/pod_topology_spread.h"

namespace ksched::framework::plugins::podtopologyspread {

bool Constraint::MatchNodeInclusionPolicies(const api::Pod& pod, const api::Node& node,
                                            const api::RequiredNodeAffinity& affinity) const {
  if (honor_node_affinity && !affinity.Matches(node)) return false;
  if (honor_node_taints && api::FindUntoleratedTaint(node.spec.taints, pod.spec.tolerations,
                                                     api::DoNotScheduleTaintsFilter) != nullptr) {
    return false;
  }
  return true;
}

bool NodeInclusion::Matches(const Constraint& c) {
  if (c.honor_node_affinity) {
    if (affinity_match_ < 0) affinity_match_ = affinity_.Matches(node_) ? 1 : 0;
    if (affinity_match_ == 0) return false;
  }
  if (c.honor_node_taints) {
    if (tolerated_ < 0) {
      tolerated_ = api::FindUntoleratedTaint(node_.spec.taints, pod_.spec.tolerations,
                                             api::DoNotScheduleTaintsFilter) == nullptr
                       ? 1
                       : 0;
    }
    if (tolerated_ == 0) return false;
  }
  return true;
}

bool EveryNodeIncluded(const Constraints& constraints, const api::RequiredNodeAffinity& affinity) {
  for (const Constraint& c : constraints) {
    if (c.honor_node_taints || (c.honor_node_affinity && !affinity.MatchesEveryNode())) return false;
  }
  return true;
}

bool NodeLabelsMatchSpreadConstraints(const api::StringMap& labels, const Constraints& constraints) {
  for (const Constraint& c : constraints) {
    if (!labels.Has(c.topology_key)) return false;
  }
  return true;
}

bool NodeLabelsMatchSpreadConstraints(const cache::NodeInfo& info, const Constraints& constraints) {
  for (const Constraint& c : constraints) {
    if (c.NodeValue(info) == nullptr) return false;
  }
  return true;
}

KeyKind KindOfKey(std::string_view key) {
  if (key == kLabelHostname) return KeyKind::kHostname;
  if (key == kLabelTopologyZone) return KeyKind::kZone;
  return KeyKind::kOther;
}

bool PodLabelsMatchSpreadConstraints(const Constraints& constraints, const api::StringMap& labels) {
  for (const Constraint& c : constraints) {
    if (c.Matches(labels)) return true;
  }
  return false;
}

int64_t CountPodsMatchSelector(const std::vector<cache::PodEntry>& pods, const Constraint& c, std::string_view ns) {
  // upstream common.go countPodsMatchSelector: an empty selector counts nothing, a null
  // one matches nothing.
  if (!c.selector.has_value() || c.selector->Empty()) return 0;
  int64_t n = 0;
  for (const cache::PodEntry& e : pods) n += SelectorCountsPod(c, *e.pod, ns) ? 1 : 0;
  return n;
}

bool SelectorCountsPod(const Constraint& c, const api::Pod& pod, std::string_view ns) {
  // Terminating pods do not count (upstream #87621).
  return !pod.IsBeingDeleted() && pod.metadata.namespace_ == ns && c.selector->Matches(pod.metadata.labels);
}

bool SelectsPodGroup(const Constraint& c, const cache::PodGroup& group, std::string_view ns) {
  return c.selector.has_value() && !c.selector->Empty() && SelectorCountsPod(c, *group.pod, ns);
}

void CountPodGroups(const cache::Snapshot& snapshot, const Constraint& c, std::string_view ns,
                    bool missing_key_is_empty, DomainCounts& domains) {
  if (!c.selector.has_value() || c.selector->Empty()) return;
  const size_t slot = snapshot.TrackTopologyKey(c.topology_key);
  for (const cache::PodGroup* g : snapshot.PodGroups().groups()) {
    if (!SelectsPodGroup(c, *g, ns)) continue;
    const cache::TopologyValueCounts& counts = g->Counts(slot);
    counts.ForEach([&](std::string_view value, int64_t n) {
      if (const int32_t d = domains.Find(value); d != DomainCounts::kNone) domains.count(d) += n;
    });
    if (missing_key_is_empty && counts.without_key() != 0) {
      if (const int32_t d = domains.Find(""); d != DomainCounts::kNone) domains.count(d) += counts.without_key();
    }
  }
}

int32_t DomainCounts::Intern(std::string_view value) {
  if (const int32_t i = Find(value); i != kNone) return i;
  if (index_ == nullptr) index_ = std::make_shared<StringIndex>();
  else if (index_.use_count() > 1) index_ = std::make_shared<StringIndex>(*index_);
  const auto i = index_->Intern(value);
  counts_.push_back(0);
  return i;
}

int32_t DomainCounts::InternZone(std::string_view value, int32_t zone_id, std::vector<int32_t>& by_zone_id) {
  const auto at = static_cast<size_t>(zone_id);
  if (at >= by_zone_id.size()) by_zone_id.resize(at + 1, kNone);
  if (by_zone_id[at] == kNone) by_zone_id[at] = Intern(value);
  return by_zone_id[at];
}

void DomainCounts::Reserve(size_t n) {
  if (index_ == nullptr) index_ = std::make_shared<StringIndex>();
  if (index_.use_count() == 1) index_->Reserve(n);
  counts_.reserve(n);
}

void CriticalPaths::Update(int32_t domain, int64_t num) {
  int i = -1;
  if (domain == paths[0].domain) {
    i = 0;
  } else if (domain == paths[1].domain) {
    i = 1;
  }
  if (i >= 0) {
    paths[i].match_num = num;
    if (paths[0].match_num > paths[1].match_num) std::swap(paths[0], paths[1]);
  } else if (num < paths[0].match_num) {
    paths[1] = paths[0];
    paths[0] = {domain, num};
  } else if (num < paths[1].match_num) {
    paths[1] = {domain, num};
  }
}

int64_t PreFilterState::MinMatchNum(size_t i) const {
  // upstream filtering.go minMatchNum: with fewer eligible domains than minDomains the
  // global minimum is taken as 0.
  if (domains[i].size() < static_cast<size_t>((*constraints)[i].min_domains)) return 0;
  return critical_paths[i].paths[0].match_num;
}

void PreFilterState::UpdateWithPod(const api::Pod& updated, const api::Pod& preemptor, const api::Node* node,
                                   int64_t delta) {
  if (constraints == nullptr || node == nullptr || updated.metadata.namespace_ != preemptor.metadata.namespace_) {
    return;
  }
  if (!NodeLabelsMatchSpreadConstraints(node->metadata.labels, *constraints)) return;
  for (size_t i = 0; i < constraints->size(); ++i) {
    const Constraint& c = (*constraints)[i];
    if (!c.Matches(updated.metadata.labels)) continue;
    if (!c.MatchNodeInclusionPolicies(preemptor, *node, *node_affinity)) continue;
    // As upstream, a domain first seen here is added (even when removing).
    int32_t d = domains[i].Intern(*node->metadata.labels.Get(c.topology_key));
    domains[i].count(d) += delta;
    critical_paths[i].Update(d, domains[i].count(d));
  }
}

// ---- building constraints ------------------------------------------------------------------

std::vector<api::TopologySpreadConstraint> SystemDefaultConstraints() {
  api::TopologySpreadConstraint host;
  host.topology_key = std::string(kLabelHostname);
  host.when_unsatisfiable = api::WhenUnsatisfiable::kScheduleAnyway;
  host.max_skew = 3;
  api::TopologySpreadConstraint zone;
  zone.topology_key = std::string(kLabelTopologyZone);
  zone.when_unsatisfiable = api::WhenUnsatisfiable::kScheduleAnyway;
  zone.max_skew = 5;
  return {std::move(host), std::move(zone)};
}

// upstream common.go filterTopologySpreadConstraints (with the matchLabelKeys and node
// inclusion policy gates on, as they are by default today).
StatusOr<Constraints> PodTopologySpread::FilterConstraints(
    const std::vector<api::TopologySpreadConstraint>& constraints, const api::StringMap& pod_labels,
    api::WhenUnsatisfiable action) const {
  Constraints out;
  for (const api::TopologySpreadConstraint& c : constraints) {
    if (c.when_unsatisfiable != action) continue;
    Constraint tsc;
    tsc.max_skew = c.max_skew;
    tsc.topology_key = c.topology_key;
    tsc.key_kind = KindOfKey(tsc.topology_key);
    if (c.label_selector.has_value()) {
      api::LabelSelector selector = *c.label_selector;
      // matchLabelKeys: the pod's values for those keys are ANDed with the selector
      // (upstream mergeLabelSetWithSelector; a null selector stays null).
      for (const std::string& key : c.match_label_keys) {
        if (const std::string* v = pod_labels.Get(key)) {
          selector.match_expressions.push_back({key, api::SelectorOperator::kIn, {*v}});
        }
      }
      auto m = api::LabelSelectorMatcher::Parse(selector);
      if (!m.ok()) return m.status();
      tsc.selector = std::move(*m);
    }
    tsc.min_domains = c.min_domains.value_or(1);
    tsc.honor_node_affinity = c.node_affinity_policy.value_or(api::InclusionPolicy::kHonor) == api::InclusionPolicy::kHonor;
    tsc.honor_node_taints = c.node_taints_policy.value_or(api::InclusionPolicy::kIgnore) == api::InclusionPolicy::kHonor;
    out.push_back(std::move(tsc));
  }
  return out;
}

// upstream common.go buildDefaultConstraints: the default constraints of `action` with
// the selector of the Services/RCs/RSs/StatefulSets selecting the pod; none without one.
StatusOr<Constraints> PodTopologySpread::BuildDefaultConstraints(const api::Pod& pod,
                                                                api::WhenUnsatisfiable action) const {
  auto constraints = FilterConstraints(default_constraints_, pod.metadata.labels, action);
  if (!constraints.ok() || constraints->empty()) return constraints;
  api::LabelSelector selector = handle_.Lister().DefaultSpreadSelector(pod);
  if (selector.match_labels.empty() && selector.match_expressions.empty()) return Constraints{};
  auto m = api::LabelSelectorMatcher::Parse(selector);
  if (!m.ok()) return m.status();
  for (Constraint& c : *constraints) c.selector = *m;
  return constraints;
}

StatusOr<Constraints> PodTopologySpread::GetConstraints(const api::Pod& pod, api::WhenUnsatisfiable action) const {
  if (!pod.spec.topology_spread_constraints.empty()) {
    return FilterConstraints(pod.spec.topology_spread_constraints, pod.metadata.labels, action);
  }
  return BuildDefaultConstraints(pod, action);
}

}  // namespace ksched::framework::plugins::podtopologyspread
