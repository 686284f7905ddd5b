// Internals of PodTopologySpread shared by its filtering and scoring halves (upstream
// podtopologyspread/common.go): constraints with parsed selectors, per-cycle domain
// counts, and the cycle states. Exposed in a header so the tests can inspect the states.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "pkg/api/selector.h"
#include "pkg/api/types.h"
#include "pkg/cache/node_info.h"
#include "pkg/cache/snapshot.h"
#include "pkg/framework/interface.h"
#include "pkg/util/string_index.h"
#include "pkg/util/strings.h"

namespace ksched::framework::plugins::podtopologyspread {

inline constexpr std::string_view kErrReasonConstraintsNotMatch =
    "node(s) didn't match pod topology spread constraints";
inline constexpr std::string_view kErrReasonNodeLabelNotMatch =
    "node(s) didn't match pod topology spread constraints (missing required label)";
inline constexpr std::string_view kPreFilterStateKey = "PreFilterPodTopologySpread";
inline constexpr std::string_view kPreScoreStateKey = "PreScorePodTopologySpread";
using api::kLabelHostname;
using api::kLabelTopologyZone;

// Which of the labels a NodeInfo keeps found a constraint's topology key is.
enum class KeyKind : uint8_t { kOther, kHostname, kZone };
KeyKind KindOfKey(std::string_view key);

// One constraint with its selector parsed and its optional fields resolved (upstream
// common.go topologySpreadConstraint).
struct Constraint {
  int32_t max_skew = 1;
  std::string topology_key;
  // nullopt models a null labelSelector, which matches no pod.
  std::optional<api::LabelSelectorMatcher> selector;
  int32_t min_domains = 1;           // an unset minDomains counts as 1
  bool honor_node_affinity = true;   // nodeAffinityPolicy, Honor when unset
  bool honor_node_taints = false;    // nodeTaintsPolicy, Ignore when unset
  KeyKind key_kind = KeyKind::kOther;  // KindOfKey(topology_key)

  bool Matches(const api::StringMap& labels) const { return selector.has_value() && selector->Matches(labels); }
  bool is_hostname() const { return key_kind == KeyKind::kHostname; }
  // The node's value for the topology key, null without the label or the Node object.
  const std::string* NodeValue(const cache::NodeInfo& info) const {
    switch (key_kind) {
      case KeyKind::kHostname: return info.hostname_label();
      case KeyKind::kZone: return info.zone_label();
      case KeyKind::kOther: break;
    }
    return info.node() != nullptr ? info.node()->metadata.labels.Get(topology_key) : nullptr;
  }
  // Whether `node` takes part in this constraint's spreading (upstream
  // matchNodeInclusionPolicies).
  bool MatchNodeInclusionPolicies(const api::Pod& pod, const api::Node& node,
                                  const api::RequiredNodeAffinity& affinity) const;
};
using Constraints = std::vector<Constraint>;

// Evaluates a node's inclusion policies for several constraints, matching the pod's
// node affinity and tolerations against the node at most once each.
class NodeInclusion {
 public:
  NodeInclusion(const api::Pod& pod, const api::Node& node, const api::RequiredNodeAffinity& affinity)
      : pod_(pod), node_(node), affinity_(affinity) {}
  bool Matches(const Constraint& c);

 private:
  const api::Pod& pod_;
  const api::Node& node_;
  const api::RequiredNodeAffinity& affinity_;
  int8_t affinity_match_ = -1;  // -1: not evaluated yet
  int8_t tolerated_ = -1;
};

// True when no constraint's inclusion policy can leave a node out: none honours taints,
// and the pod has no node affinity or nodeSelector for those that honour it.
bool EveryNodeIncluded(const Constraints& constraints, const api::RequiredNodeAffinity& affinity);
// True when the node has a label for every constraint's topology key.
bool NodeLabelsMatchSpreadConstraints(const api::StringMap& labels, const Constraints& constraints);
bool NodeLabelsMatchSpreadConstraints(const cache::NodeInfo& info, const Constraints& constraints);
// True when some constraint's selector matches `labels`.
bool PodLabelsMatchSpreadConstraints(const Constraints& constraints, const api::StringMap& labels);
// The pods of `pods` in namespace `ns`, not terminating, that `c` selects (upstream
// countPodsMatchSelector; an empty selector counts nothing).
int64_t CountPodsMatchSelector(const std::vector<cache::PodEntry>& pods, const Constraint& c, std::string_view ns);
// Whether CountPodsMatchSelector counts `pod` (`c` has a non-empty selector).
bool SelectorCountsPod(const Constraint& c, const api::Pod& pod, std::string_view ns);
// The same test for every member of a snapshot pod group (cache/pod_groups.h).
bool SelectsPodGroup(const Constraint& c, const cache::PodGroup& group, std::string_view ns);

// The topology values (domains) of one constraint, interned to dense indices, with a
// matching-pod count each. Lookups take a string_view: no allocation. The values may be
// shared (between a state and its clones, or with the domains PreFilter keeps across
// cycles); the first new value interned into a shared set copies it.
class DomainCounts {
 public:
  static constexpr int32_t kNone = StringIndex::kNone;
  DomainCounts() = default;
  // The domains `values`, each with a count of 0.
  explicit DomainCounts(std::shared_ptr<StringIndex> values)
      : index_(std::move(values)), counts_(index_->size(), 0) {}

  // The index of `value`, added with a count of 0 if new.
  int32_t Intern(std::string_view value);
  int32_t Find(std::string_view value) const { return index_ != nullptr ? index_->Find(value) : kNone; }
  std::string_view value(int32_t index) const { return index_->at(index); }
  int64_t& count(int32_t index) { return counts_[static_cast<size_t>(index)]; }
  int64_t count(int32_t index) const { return counts_[static_cast<size_t>(index)]; }
  // The count of `value`; 0 for an unknown value.
  int64_t CountOf(std::string_view value) const {
    int32_t i = Find(value);
    return i == kNone ? 0 : count(i);
  }
  size_t size() const { return counts_.size(); }
  void Reserve(size_t n);
  // The index of the zone `value` of a node whose NodeInfo::zone_id() is `zone_id`,
  // added if new: `by_zone_id` remembers the answer per zone id for the next node of the
  // same zone (a per-cycle table the caller keeps beside these counts).
  int32_t InternZone(std::string_view value, int32_t zone_id, std::vector<int32_t>& by_zone_id);

 private:
  std::shared_ptr<StringIndex> index_;  // no allocation per domain (hostname: one per node)
  std::vector<int64_t> counts_;
};

// Adds to `domains` the members of the snapshot's pod groups that `c` selects, per value
// of the constraint's key; with `missing_key_is_empty`, those on nodes without the key
// count in the "" domain (PreScore's walk reads a missing label as ""). Values that are
// not domains are skipped.
void CountPodGroups(const cache::Snapshot& snapshot, const Constraint& c, std::string_view ns,
                    bool missing_key_is_empty, DomainCounts& domains);

// The two domains with the fewest matching pods seen so far (upstream criticalPaths):
// paths[0] always holds the minimum; paths[1] is not guaranteed to be the second one.
// Enough for preemption, which changes one node of a cloned state at a time.
struct CriticalPaths {
  struct Path {
    int32_t domain = DomainCounts::kNone;
    int64_t match_num = INT32_MAX;
  };
  Path paths[2];
  void Update(int32_t domain, int64_t num);
};

// Written by PreFilter, read by Filter, updated by AddPod/RemovePod on a cloned state.
struct PreFilterState final : StateData {
  std::shared_ptr<const Constraints> constraints;
  std::shared_ptr<const api::RequiredNodeAffinity> node_affinity;
  std::vector<DomainCounts> domains;  // per constraint
  std::vector<CriticalPaths> critical_paths;  // per constraint
  // Per constraint: 1 when the pod matches the constraint's own selector (Filter adds
  // the pod itself to the node's domain).
  std::vector<int64_t> self_match;
  // Per zone constraint: ZoneId -> domain, for the domains PreFilter counted (kNone for
  // another zone), so Filter finds a node's domain by its NodeInfo::zone_id(). Empty for
  // other constraints.
  std::vector<std::vector<int32_t>> domain_by_zone_id;

  std::unique_ptr<StateData> Clone() const override { return std::make_unique<PreFilterState>(*this); }
  bool NeededForBinding() const override { return false; }  // Filter / Score only
  // The count of `node`'s domain for constraint `i`, `value` being its label.
  int64_t NodeDomainCount(size_t i, const cache::NodeInfo& node, std::string_view value) const {
    if (i < domain_by_zone_id.size()) {
      const std::vector<int32_t>& by_id = domain_by_zone_id[i];
      if (const auto id = static_cast<size_t>(node.zone_id()); id < by_id.size() && by_id[id] != DomainCounts::kNone)
        return domains[i].count(by_id[id]);
    }
    return domains[i].CountOf(value);  // also a domain added since (UpdateWithPod)
  }
  // The global minimum for constraint `i`: 0 while fewer than minDomains domains exist.
  int64_t MinMatchNum(size_t i) const;
  // Counts `pod` (+1) or uncounts it (-1) on `node` (upstream updateWithPod).
  void UpdateWithPod(const api::Pod& updated, const api::Pod& preemptor, const api::Node* node, int64_t delta);
};

// Written by PreScore, read (concurrently) by Score and NormalizeScore.
struct PreScoreState final : StateData {
  std::shared_ptr<const Constraints> constraints;
  // Feasible nodes missing a topology key: they score 0.
  std::unordered_set<std::string, StringViewHash, std::equal_to<>> ignored_nodes;
  std::vector<DomainCounts> domains;  // per constraint; unused for hostname ones
  std::vector<double> normalizing_weights;  // per constraint

  // What PreScore found of each node it was given, in its order, so that Score need not
  // look the node's labels up again: the node (to recognise it) and per constraint its
  // domain (kNone without the key, and for every constraint of an ignored node or one
  // without its Node object; for a hostname constraint kHasKey, its count being the
  // node's own pods).
  static constexpr int32_t kHasKey = -2;
  static constexpr int32_t kUnseenValue = -3;  // Score only: a value that is no domain
  std::vector<const cache::NodeInfo*> nodes;
  std::vector<int32_t> node_domains;  // nodes.size() x constraints->size()
  // The first element of the span PreScore was given: Score finds a node's position
  // from the address of the span it is handed (a run of that one).
  const cache::NodeInfoPtr* nodes_base = nullptr;
  // For a hostname constraint, whose count is the node's own pods that its selector
  // selects: the snapshot's pod groups it selects, by PodGroup::all_index, so that Score
  // counts a node's pods through their groups instead of matching each. Empty for other
  // constraints and for an empty or null selector (which counts nothing).
  const cache::PodGroupIndex* groups = nullptr;
  std::vector<std::vector<uint8_t>> selected_groups;  // per constraint

  std::unique_ptr<StateData> Clone() const override { return std::make_unique<PreScoreState>(*this); }
  bool NeededForBinding() const override { return false; }  // Filter / Score only
};

}  // namespace ksched::framework::plugins::podtopologyspread
