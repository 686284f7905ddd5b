// InterPodAffinity: a pod's required pod affinity and anti-affinity, the required
// anti-affinity of the pods already running, and (as a score) the preferred terms of both
// sides plus existing pods' required affinity (upstream plugins/interpodaffinity).
#pragma once

#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "config/types.h"
#include "pkg/api/pod_affinity.h"
#include "pkg/framework/interface.h"
#include "pkg/framework/plugins/interpodaffinity/topology_counts.h"
#include "pkg/util/status.h"

namespace ksched::framework::plugins::interpodaffinity {

inline constexpr std::string_view kErrReasonExistingAntiAffinityRulesNotMatch =
    "node(s) didn't satisfy existing pods anti-affinity rules";
inline constexpr std::string_view kErrReasonAffinityRulesNotMatch = "node(s) didn't match pod affinity rules";
inline constexpr std::string_view kErrReasonAntiAffinityRulesNotMatch = "node(s) didn't match pod anti-affinity rules";

inline constexpr std::string_view kPreFilterStateKey = "PreFilterInterPodAffinity";
inline constexpr std::string_view kPreScoreStateKey = "PreScoreInterPodAffinity";

// What PreFilter computes (upstream preFilterState). Exposed for tests.
struct PreFilterState final : StateData {
  std::unique_ptr<StateData> Clone() const override { return std::make_unique<PreFilterState>(*this); }
  bool NeededForBinding() const override { return false; }  // Filter / Score only

  // The incoming pod's terms with namespaceSelectors resolved into namespaces (upstream
  // mergeAffinityTermNamespacesIfNotEmpty); shared by clones, never modified.
  std::shared_ptr<const api::PodAffinityTerms> terms;
  // The incoming pod matches all of its own required affinity terms.
  bool matches_own_affinity = false;
  // Labels of the incoming pod's namespace (empty when unknown).
  api::StringMap namespace_labels;
  // Existing pods whose required anti-affinity terms match the incoming pod.
  TopologyCounts existing_anti_affinity;
  // Existing pods matching all of the incoming pod's required affinity terms.
  TopologyCounts affinity;
  // Existing pods matching each of the incoming pod's required anti-affinity terms.
  TopologyCounts anti_affinity;

  // upstream preFilterState.updateWithPod: count `entry` on `node` with `multiplier`.
  void UpdateWithPod(const api::Pod& incoming, const cache::PodEntry& entry, const api::Node& node,
                     int64_t multiplier);
};

class InterPodAffinity final : public PreFilterPlugin,
                               public PreFilterExtensions,
                               public FilterPlugin,
                               public PreScorePlugin,
                               public ScorePlugin,
                               public EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "InterPodAffinity";
  // `args`: InterPodAffinityArgs (already validated) or monostate for the defaults.
  static StatusOr<std::unique_ptr<Plugin>> New(const config::PluginArgs& args, Handle& handle);
  InterPodAffinity(Handle& handle, const config::InterPodAffinityArgs& args) : handle_(handle), args_(args) {}

  std::string_view Name() const override { return kName; }

  // Counts, over the snapshot, the existing pods that match the pod's required terms and
  // the existing pods whose required anti-affinity the pod matches. Skip when the pod has
  // no required terms and no existing pod's anti-affinity matches it.
  Status PreFilter(CycleState& state, const api::Pod& pod, PreFilterResult& result) override;
  const PreFilterExtensions* Extensions() const override { return this; }
  Status AddPod(CycleState& state, const api::Pod& pod_to_schedule, const cache::PodEntry& pod_to_add,
                const cache::NodeInfo& node) const override;
  Status RemovePod(CycleState& state, const api::Pod& pod_to_schedule, const cache::PodEntry& pod_to_remove,
                   const cache::NodeInfo& node) const override;
  // Affinity failures are UnschedulableAndUnresolvable; anti-affinity ones (which
  // preemption may resolve) Unschedulable.
  Status Filter(const CycleState& state, const api::Pod& pod, const cache::NodeInfo& node) const override;

  // Sums weights per (topologyKey, value). Skip when nothing contributes.
  Status PreScore(CycleState& state, const api::Pod& pod, std::span<const cache::NodeInfoPtr> nodes) override;
  Status Score(const CycleState& state, const api::Pod& pod, const cache::NodeInfo& node,
               int64_t& score) const override;
  bool HasNormalizeScore() const override { return true; }
  // Min-max scaling to [0, kMaxNodeScore].
  Status NormalizeScore(const CycleState& state, const api::Pod& pod, std::span<NodeScore> scores) const override;

  // Assigned pod add / update / delete and node add / label change, with upstream's hints.
  std::vector<ClusterEventWithHint> EventsToRegister() const override;

 private:
  Handle& handle_;
  config::InterPodAffinityArgs args_;
};

// Queueing hints (upstream isSchedulableAfterPodChange / isSchedulableAfterNodeChange),
// exposed for tests. `old_pod` is null for an add, `new_pod` null for a delete.
StatusOr<QueueingHint> PodChangeHint(const api::Pod& pod, const api::Pod* old_pod, const api::Pod* new_pod);
StatusOr<QueueingHint> NodeChangeHint(const api::Pod& pod, const api::Node* old_node, const api::Node* new_node);

}  // namespace ksched::framework::plugins::interpodaffinity
