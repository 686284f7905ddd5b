// What NodeResourcesFit's scoring strategies and NodeResourcesBalancedAllocation share
// (upstream noderesources/resource_allocation.go): per configured resource, the pod's
// request and the node's allocatable / requested-after-placement amounts, fed to a
// strategy-specific scorer.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "config/types.h"
#include "pkg/cache/node_info.h"
#include "pkg/framework/interface.h"
#include "pkg/framework/plugins/helper/resource_score.h"
#include "pkg/framework/status.h"

namespace ksched::framework::plugins::noderesources {

inline constexpr std::string_view kResourceCpu = "cpu";
inline constexpr std::string_view kResourceMemory = "memory";
inline constexpr std::string_view kResourceEphemeralStorage = "ephemeral-storage";
inline constexpr std::string_view kResourcePods = "pods";

// One configured resource on one node. allocatable == 0 means "not scored here" (the
// node lacks the resource, or the pod does not ask for a scalar resource).
struct ResourceUse {
  int64_t requested = 0;  // node's requested + the pod's request
  int64_t allocatable = 0;
  int64_t weight = 1;
};

using ResourceScorerFn = std::function<int64_t(std::span<const ResourceUse>)>;

// Weighted mean of (allocatable - requested) * 100 / allocatable.
int64_t LeastAllocatedScore(std::span<const ResourceUse> uses);
// Weighted mean of requested * 100 / allocatable (requested capped at allocatable).
int64_t MostAllocatedScore(std::span<const ResourceUse> uses);
// Weighted mean (rounded) of shape(requested * 100 / allocatable), skipping zero scores.
// `shape` holds the config's points with scores already scaled to 0..100.
ResourceScorerFn RequestedToCapacityRatioScorer(helper::BrokenLinearFunction shape);
// (1 - standard deviation of the requested fractions, each capped at 1) * 100; weights
// are ignored, as upstream does.
int64_t BalancedAllocationScore(std::span<const ResourceUse> uses);

// The scoring half of a plugin: which resources, which request view, which formula.
struct ResourceAllocationScorer {
  std::vector<config::ResourceSpec> resources;
  // false: cpu/memory use the non-zero request view (containers without a request count
  // the scheduler defaults) on both the pod and the node side, so best-effort pods still
  // spread; true: actual requests (BalancedAllocation).
  bool use_requested = false;
  ResourceScorerFn scorer;

  // The pod's request for each configured resource, in `resources` order.
  std::vector<int64_t> PodRequests(const cache::PodRequest& request) const;
  // Scores `node` for a pod whose per-resource requests are `pod_requests`.
  Status Score(const cache::NodeInfo& node, std::span<const int64_t> pod_requests, int64_t& score) const;
  // Score for each of `nodes` into out[j].score (a ScorePlugin's ScoreNodes): how each
  // resource is read and which formula applies are decided once for the run.
  Status ScoreNodes(std::span<const cache::NodeInfoPtr> nodes, std::span<const int64_t> pod_requests,
                    std::span<NodeScore> out) const;

 private:
  // node_at(j) is the j-th of n nodes; its score goes to *score_at(j).
  template <typename NodeAt, typename ScoreAt, typename Formula>
  Status ScoreEach(size_t n, NodeAt&& node_at, ScoreAt&& score_at, std::span<const int64_t> pod_requests,
                   Formula&& formula) const;
};

}  // namespace ksched::framework::plugins::noderesources
