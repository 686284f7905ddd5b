// SchedulingAlgorithm: finds a node for one pod with a profile's Framework (upstream
// core/generic_scheduler.go, later schedule_one.go's schedulePod): PreFilter, Filter over
// the nodes in parallel until enough feasible ones are found, PreScore/Score, and a
// random pick among the best. Used by scheduleOne on the scheduling thread only.
#pragma once

#include <cstdint>
#include <future>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "pkg/api/types.h"
#include "pkg/cache/snapshot.h"
#include "pkg/framework/interface.h"
#include "pkg/framework/runtime/framework.h"

namespace ksched::framework::runtime {

// One of the best nodes for a scheduled pod, for people (SchedulingAlgorithmOptions::explain).
struct NodeScores {
  std::string node;
  int64_t total = 0;
  // Each Score plugin's normalised score times its weight, in the profile's order. The
  // names view the plugins' own (they live as long as the framework).
  std::vector<std::pair<std::string_view, int64_t>> plugins;
};

struct ScheduleResult {
  std::string suggested_host;
  int evaluated_nodes = 0;  // feasible + rejected nodes looked at
  int feasible_nodes = 0;
  // With explain: the chosen node first, then the next best, at most kMaxTopNodes.
  std::vector<NodeScores> top_nodes;
  static constexpr size_t kMaxTopNodes = 3;
};

// Why a pod fits nowhere, for people (SchedulingAlgorithmOptions::explain). Filter stops
// at a node's first rejection; this runs every Filter plugin on every rejected node, so
// each plugin counts all the nodes it rejects and the nodes rejected by exactly one
// plugin (the closest: fix that and the pod fits) can be named.
struct RejectionSummary {
  static constexpr size_t kMaxSampleNodes = 5;
  static constexpr size_t kMaxClosestNodes = 5;
  static constexpr size_t kMaxReasonsPerPlugin = 8;

  struct Reason {
    std::string reason;
    int nodes = 0;
    std::vector<std::string> sample_nodes;  // in snapshot order
  };
  struct PluginRejections {
    std::string plugin;
    bool pre_filter = false;  // rejected the pod before any node was looked at
    int nodes = 0;
    std::vector<Reason> reasons;  // at most kMaxReasonsPerPlugin, most nodes first
  };
  struct ClosestNode {
    std::string node;
    std::string plugin;
    std::vector<std::string> reasons;
  };
  // Counts `node` as rejected by `plugin` for `reasons` ("(no reason given)" when empty).
  void Count(std::string_view plugin, const std::string& node, const std::vector<std::string>& reasons);
  // Plugins, and each plugin's reasons, with the most nodes first (stable).
  void SortByNodes();

  std::vector<PluginRejections> plugins;  // most nodes first
  std::vector<ClosestNode> closest_nodes;  // fewest reasons first
  int considered_nodes = 0;               // nodes Filter ran on (PreFilter may narrow them)
};

// The pod fits on no node: why, per node.
struct FitError {
  int num_all_nodes = 0;
  // Node -> the status of the first plugin that rejected it. Holds the nodes that were
  // evaluated; when `absent_nodes_unresolvable`, PreFilter narrowed the candidates and
  // the nodes missing here count as UnschedulableAndUnresolvable (preemption skips them).
  NodeToStatusMap diagnosis;
  bool absent_nodes_unresolvable = false;
  // Plugins that rejected some node (or the pod at PreFilter), for the queue's hints.
  PluginSet unschedulable_plugins;
  // Plugins that returned Pending.
  PluginSet pending_plugins;
  // With explain: every plugin's rejections.
  std::optional<RejectionSummary> summary;
  // What PostFilter said (preemption's "preemption: 0/3 nodes are available: ..."),
  // appended to the message as upstream's Diagnosis.PostFilterMsg.
  std::string post_filter_message;
  // What a PreFilter rejection said (upstream's Diagnosis.PreFilterMsg): the message
  // names it once instead of counting it per node.
  std::string pre_filter_message;

  // "0/3 nodes are available: 1 node(s) had untolerated taint {k: v}, 2 Insufficient
  // cpu." (NodesAvailableMessage), or "0/3 nodes are available: <pre_filter_message>."
  // after a PreFilter rejection; then post_filter_message and ".".
  std::string Message() const;
};

// Exactly one of: a host; a FitError; or a framework Status that is either an internal
// Error or, when the snapshot has no nodes, UnschedulableAndUnresolvable kNoNodesAvailable.
using ScheduleOutcome = std::variant<ScheduleResult, FitError, Status>;

inline constexpr std::string_view kNoNodesAvailable = "no nodes available to schedule pods";

// Upstream numFeasibleNodesToFind: all nodes below 100 or at >= 100%; else the
// percentage (unset/0: adaptive 50 - nodes/125, at least 5%) of the nodes, at least 100.
int32_t NumFeasibleNodesToFind(std::optional<int32_t> percentage, int32_t num_all_nodes);

struct SchedulingAlgorithmOptions {
  // Seeds the tie-break between equally scored nodes; unset: random.
  std::optional<uint64_t> seed;
  // Fill FitError::summary and ScheduleResult::top_nodes (the debug endpoints).
  bool explain = false;
};

class SchedulingAlgorithm {
 public:
  explicit SchedulingAlgorithm(SchedulingAlgorithmOptions options = {});

  ScheduleOutcome SchedulePod(Framework& fwk, CycleState& state, const api::Pod& pod,
                              const cache::Snapshot& snapshot);

  // The index of the highest score; ties broken uniformly at random. `scores` is
  // non-empty.
  size_t SelectHost(std::span<const int64_t> scores);

  // Where the next Filter pass starts, so every node gets its turn when only a part of
  // the cluster is searched.
  size_t next_start_node_index() const { return next_start_node_index_; }

 private:
  // upstream findNodesThatPassExtenders: each interested filtering extender in turn
  // narrows `feasible`; what they reject goes to `statuses` (reasons appended to a
  // status already there). An error of an ignorable extender is logged and skipped.
  static Status FindNodesThatPassExtenders(Framework& fwk, const api::Pod& pod,
                                           std::vector<cache::NodeInfoPtr>& feasible, NodeToStatusMap& statuses);
  // upstream prioritizeNodes' extender part: each interested prioritizer's scores times
  // its weight, scaled from kMaxExtenderPriority to MaxNodeScore, added to `totals`
  // (by feasible_'s order). The requests went out in `pending` before the plugins
  // scored; errors only lose that extender's scores.
  struct PendingPriorities {
    Extender* extender;
    std::future<StatusOr<std::vector<HostPriority>>> result;
  };
  // Each extender's weighted scores by feasible_'s order, for explain.
  using ExtenderParts = std::vector<std::pair<std::string_view, std::vector<int64_t>>>;
  void AddExtenderScores(const api::Pod& pod, std::vector<PendingPriorities>& pending, std::vector<int64_t>& totals,
                         ExtenderParts* parts) const;
  // Fills feasible_ from `nodes` (starting at next_start_node_index_); rejected nodes'
  // statuses go to statuses_, and every outcome to outcome_, by visit position.
  Status FindNodesThatPassFilters(Framework& fwk, const CycleState& state, const api::Pod& pod,
                                  std::span<const cache::NodeInfoPtr> nodes, size_t start, int& rejected);
  FitError MakeFitError(std::span<const cache::NodeInfoPtr> nodes, size_t start, int num_all_nodes) const;
  // Fills fe.summary from every Filter plugin on the nodes the last pass rejected.
  void SummarizeRejections(Framework& fwk, const CycleState& state, const api::Pod& pod,
                           std::span<const cache::NodeInfoPtr> nodes, size_t start, FitError& fe) const;
  // The chosen node (nodes[chosen_index]) and the next best by total score, with each
  // plugin's part.
  static std::vector<NodeScores> TopNodes(std::span<const cache::NodeInfoPtr> nodes, std::span<const int64_t> totals,
                                          const ScoreBreakdown& breakdown, size_t chosen_index);

  bool explain_ = false;
  std::mt19937_64 rng_;
  size_t next_start_node_index_ = 0;
  // Per-cycle buffers, kept to avoid reallocating them for every pod.
  // Views, not owners (shared_ptrs made with the aliasing constructor and no control
  // block): the snapshot owns the nodes for the whole cycle, and a copy that counted
  // references would write into each NodeInfo's first cache line right before the Score
  // workers on the other core read it. Valid until the next UpdateSnapshot; plugins use
  // the span they are given during the cycle and keep none of it.
  std::vector<cache::NodeInfoPtr> feasible_;
  std::vector<Status> statuses_;
  // Per visit position: what Filter said of the node in the last pass.
  enum Outcome : uint8_t { kNotEvaluated, kPassed, kRejected };
  std::vector<uint8_t> outcome_;
  // Filled by each chunk of the Filter pass for its own range of visit positions: its
  // passing nodes (views, as feasible_) packed from the chunk's first position, and at
  // that first position how many passed. The cut then copies whole runs.
  std::vector<cache::NodeInfoPtr> passing_;
  std::vector<int> passing_positions_;
  std::vector<int> chunk_passed_;
  std::vector<cache::NodeInfoPtr> candidates_;
};

}  // namespace ksched::framework::runtime
