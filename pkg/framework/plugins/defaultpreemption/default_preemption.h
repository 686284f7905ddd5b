// DefaultPreemption (PostFilter): when no node fits a pod, find the node where evicting
// the fewest and least important lower-priority pods makes it fit, evict them and
// nominate the pod to that node (upstream plugins/defaultpreemption/default_preemption.go
// with framework/preemption/preemption.go's Evaluator).
//
// The what-if runs reuse the profile's own Filter plugins on copies of the node and the
// cycle state, so preemption never disagrees with the filters about what fits. The
// victims are evicted asynchronously (upstream's async preemption): the scheduling
// thread moves on while the DELETEs are in flight, and the preemptor is not allowed to
// preempt again until they have been answered.
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "config/types.h"
#include "pkg/api/cluster_lister.h"
#include "pkg/framework/interface.h"
#include "pkg/util/mutex.h"
#include "pkg/util/status.h"

namespace ksched::framework::plugins::defaultpreemption {

// The pods to evict on one node (upstream extenderv1.Victims, shared with extenders).
using Victims = framework::Victims;

struct Candidate {
  std::string node;
  Victims victims;
};

// upstream util.MoreImportantPod: higher priority first; at equal priority the pod that
// started earlier (a pod not started yet counts as starting now).
bool MoreImportantPod(const api::Pod& a, const api::Pod& b);

// upstream pickOneNodeForPreemption: fewest PDB violations, then the lowest highest
// victim priority, the smallest sum of priorities, the fewest victims, the latest start
// of the highest-priority victims; still tied, the first candidate. A candidate without
// victims wins at once. "" for no candidates.
std::string PickOneNodeForPreemption(std::span<const Candidate> candidates);

// Splits `pods` (most important first) into those whose eviction would exceed a
// PodDisruptionBudget covering them and the rest, each keeping the order (upstream
// filterPodsWithPDBViolation).
std::pair<std::vector<const cache::PodEntry*>, std::vector<const cache::PodEntry*>> SplitByPdbViolation(
    std::span<const cache::PodEntry* const> pods, const api::ClusterLister& lister);

class DefaultPreemption final : public PostFilterPlugin {
 public:
  static constexpr std::string_view kName = "DefaultPreemption";
  static StatusOr<std::unique_ptr<Plugin>> New(const config::PluginArgs& args, Handle& handle);
  DefaultPreemption(config::DefaultPreemptionArgs args, Handle& handle, uint64_t seed);

  std::string_view Name() const override { return kName; }
  Status PostFilter(CycleState& state, const api::Pod& pod, const NodeToStatusMap& filtered,
                    PostFilterResult& result) override;

  // ---- the steps, exposed for tests ----
  // upstream PodEligibleToPreemptOthers: "" when eligible, else why not.
  std::string IneligibilityReason(const api::Pod& pod, const NodeToStatusMap& filtered) const;
  // upstream calculateNumCandidates: numNodes x percentage / 100, at least the absolute
  // minimum, at most numNodes.
  int32_t NumCandidates(int32_t num_nodes) const;
  // upstream SelectVictimsOnNode on `node` (a copy the call may change) and `state` (a
  // clone): Success with the victims, or why the pod cannot fit there even so.
  Status SelectVictimsOnNode(CycleState& state, const api::Pod& pod, cache::NodeInfo& node, Victims& victims) const;
  // Whether the victims of an earlier preemption of this pod are still being evicted:
  // their DELETEs are unanswered, or the snapshot does not show them leaving yet (the
  // watch runs behind our own writes; a decision on such a view would preempt again).
  bool IsPreempting(const api::Pod& pod) EXCLUDES(mu_);

 private:
  struct DryRunResult {
    std::vector<Candidate> candidates;  // PDB-respecting ones first
    NodeToStatusMap statuses;           // the potential nodes that are no candidate
    std::vector<std::string> errors;
  };
  // The body of PostFilter before the "preemption: " prefix.
  Status Preempt(CycleState& state, const api::Pod& pod, const NodeToStatusMap& filtered, PostFilterResult& result);
  // upstream Evaluator.callExtenders: each interested extender that preempts may drop
  // candidates or change their victims; an ignorable one that fails is skipped.
  Status CallExtenders(const api::Pod& pod, std::vector<Candidate>& candidates) const;
  DryRunResult DryRun(CycleState& state, const api::Pod& pod, std::span<const cache::NodeInfoPtr> potential,
                      int32_t offset, int32_t num_candidates);
  // Rejects waiting victims, evicts the others, clears the nominations of lower-priority
  // pods on the node; the evictions complete asynchronously. True when victims are to
  // leave the node through the API (evicted now, or already terminating).
  bool PrepareCandidate(const Candidate& c, const api::Pod& pod, PodPreemptor& preemptor) EXCLUDES(mu_);

  const config::DefaultPreemptionArgs args_;
  Handle& handle_;
  std::minstd_rand rng_;  // the dry run's random start (scheduling thread only)
  mutable Mutex mu_;
  struct Preempting {
    bool answered = false;  // every eviction of this preemption was answered, successfully
    std::string node;
    std::vector<api::PodPtr> victims;
  };
  // Whether the snapshot still shows one of p's victims on its node, not leaving.
  bool VictimsStillThere(const Preempting& p) const;
  // By preemptor (PodCacheKey).
  std::unordered_map<std::string, Preempting> preempting_ GUARDED_BY(mu_);
  // preempting_'s size after the last sweep of finished entries (IsPreempting).
  static constexpr size_t kMinSweep = 64;
  size_t size_after_sweep_ GUARDED_BY(mu_) = 0;
};

}  // namespace ksched::framework::plugins::defaultpreemption
