// PodTopologySpread: spreads pods that match a selector evenly over topology domains
// (zones, hosts, ...). DoNotSchedule constraints filter nodes whose domain would exceed
// maxSkew; ScheduleAnyway constraints score nodes by how many matching pods their
// domains already hold. Pods without constraints of their own get the configured
// default constraints, selecting the pods of the same Services and workload controllers.
// Upstream: pkg/scheduler/framework/plugins/podtopologyspread.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "config/types.h"
#include "pkg/framework/interface.h"
#include "pkg/framework/plugins/podtopologyspread/common.h"
#include "pkg/util/mutex.h"
#include "pkg/util/status.h"
#include "pkg/util/string_index.h"
#include "pkg/util/thread_annotations.h"

namespace ksched::framework::plugins::podtopologyspread {

// upstream plugin.go systemDefaultConstraints: hostname maxSkew 3, zone maxSkew 5, both
// ScheduleAnyway.
std::vector<api::TopologySpreadConstraint> SystemDefaultConstraints();

class PodTopologySpread final : public PreFilterPlugin,
                                public PreFilterExtensions,
                                public FilterPlugin,
                                public PreScorePlugin,
                                public ScorePlugin,
                                public EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "PodTopologySpread";
  // `args` holds config::PodTopologySpreadArgs, or std::monostate for the defaults.
  static StatusOr<std::unique_ptr<Plugin>> New(const config::PluginArgs& args, Handle& handle);

  PodTopologySpread(Handle& handle, std::vector<api::TopologySpreadConstraint> default_constraints,
                    bool system_defaulted)
      : handle_(handle), default_constraints_(std::move(default_constraints)), system_defaulted_(system_defaulted) {}

  std::string_view Name() const override { return kName; }

  // Counts matching pods per domain of every DoNotSchedule constraint; Skip without any.
  Status PreFilter(CycleState& state, const api::Pod& pod, PreFilterResult& result) override;
  const PreFilterExtensions* Extensions() const override { return this; }
  Status AddPod(CycleState& state, const api::Pod& pod_to_schedule, const cache::PodEntry& pod_to_add,
                const cache::NodeInfo& node) const override;
  Status RemovePod(CycleState& state, const api::Pod& pod_to_schedule, const cache::PodEntry& pod_to_remove,
                   const cache::NodeInfo& node) const override;
  // UnschedulableAndUnresolvable when the node lacks a topology key; Unschedulable when
  // placing the pod there would exceed a constraint's maxSkew.
  Status Filter(const CycleState& state, const api::Pod& pod, const cache::NodeInfo& node) const override;

  // Counts matching pods per domain of every ScheduleAnyway constraint; Skip without any.
  Status PreScore(CycleState& state, const api::Pod& pod, std::span<const cache::NodeInfoPtr> nodes) override;
  // The weighted matching-pod count of the node's domains (higher is worse).
  Status Score(const CycleState& state, const api::Pod& pod, const cache::NodeInfo& node,
               int64_t& score) const override;
  // The nodes PreScore was given (or any run of them) read what PreScore found of each
  // node; other nodes are looked up as Score does.
  Status ScoreNodes(const CycleState& state, const api::Pod& pod, std::span<const cache::NodeInfoPtr> nodes,
                    std::span<NodeScore> out) const override;
  bool HasNormalizeScore() const override { return true; }
  // Reverses the counts into [0, 100]; ignored nodes score 0.
  Status NormalizeScore(const CycleState& state, const api::Pod& pod, std::span<NodeScore> scores) const override;

  // Assigned pods added/updated/deleted and nodes added/deleted/relabelled/retainted, with
  // upstream's hints.
  std::vector<ClusterEventWithHint> EventsToRegister() const override;

  // The pod's own constraints of `action`, or the default ones when it has none
  // (upstream getConstraints for DoNotSchedule).
  StatusOr<Constraints> GetConstraints(const api::Pod& pod, api::WhenUnsatisfiable action) const;

 private:
  StatusOr<Constraints> FilterConstraints(const std::vector<api::TopologySpreadConstraint>& constraints,
                                          const api::StringMap& pod_labels, api::WhenUnsatisfiable action) const;
  StatusOr<Constraints> BuildDefaultConstraints(const api::Pod& pod, api::WhenUnsatisfiable action) const;
  // PreScore's counting from the snapshot's pod groups, where that is exact (scoring.cc).
  bool CountFromPodGroups(const api::Pod& pod, const api::RequiredNodeAffinity& affinity, PreScoreState& s) const;

  // The domains of a set of topology keys (a pod's DoNotSchedule constraints, in order):
  // each key's values over the nodes that carry all of the keys, in the snapshot's node
  // order. `exact`: every node with one of the keys has all of them, so a pod group's
  // counts per value are counts over exactly those nodes. Kept across cycles until the
  // snapshot's node labels change (filtering.cc).
  struct DomainSets {
    uint64_t index_id = 0;
    uint64_t labels_version = 0;
    std::vector<std::string> keys;
    bool exact = false;
    std::vector<std::shared_ptr<StringIndex>> values;  // per key
  };
  // The domains of these constraints' keys (per constraint), from the cache or built by
  // one walk over the nodes; empty unless exact.
  std::vector<std::shared_ptr<StringIndex>> ExactDomains(const Constraints& constraints);

  StatusOr<QueueingHint> PodChangeHint(const api::Pod& pod, const void* old_obj, const void* new_obj) const;
  StatusOr<QueueingHint> NodeChangeHint(const api::Pod& pod, const void* old_obj, const void* new_obj) const;

  Handle& handle_;
  std::vector<api::TopologySpreadConstraint> default_constraints_;
  // With the system defaults, nodes need not carry every topology key to be scored.
  bool system_defaulted_ = false;
  // A few key sets' domains (a profile's pods usually share one or two); PreFilter runs
  // on the scheduling thread, the lock keeps any other caller safe.
  Mutex domain_sets_mu_;
  std::vector<DomainSets> domain_sets_ GUARDED_BY(domain_sets_mu_);
};

}  // namespace ksched::framework::plugins::podtopologyspread
