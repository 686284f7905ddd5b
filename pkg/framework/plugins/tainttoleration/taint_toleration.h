// TaintToleration: filters out nodes with a NoSchedule/NoExecute taint the pod does not
// tolerate, and prefers nodes with fewer untolerated PreferNoSchedule taints.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "config/types.h"
#include "pkg/framework/interface.h"
#include "pkg/util/status.h"

namespace ksched::framework::plugins::tainttoleration {

// "node(s) had untolerated taint {key: value}" (Go's "{%s: %s}", so an empty value
// leaves "{key: }").
std::string UntoleratedTaintReason(const api::Taint& taint);

// The PreferNoSchedule taints on `taints` that none of `tolerations` tolerates.
int64_t CountIntolerablePreferNoSchedule(const std::vector<api::Taint>& taints,
                                         const std::vector<api::Toleration>& tolerations);

class TaintToleration final : public FilterPlugin,
                              public PreScorePlugin,
                              public ScorePlugin,
                              public EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "TaintToleration";
  static StatusOr<std::unique_ptr<Plugin>> New(const config::PluginArgs& args, Handle& handle);

  std::string_view Name() const override { return kName; }
  // UnschedulableAndUnresolvable for the node's first untolerated NoSchedule/NoExecute taint.
  Status Filter(const CycleState& state, const api::Pod& pod, const cache::NodeInfo& node) const override;
  // Keeps the tolerations that apply to PreferNoSchedule (that effect or any effect).
  Status PreScore(CycleState& state, const api::Pod& pod, std::span<const cache::NodeInfoPtr> nodes) override;
  // The number of untolerated PreferNoSchedule taints (higher is worse).
  Status Score(const CycleState& state, const api::Pod& pod, const cache::NodeInfo& node,
               int64_t& score) const override;
  Status ScoreNodes(const CycleState& state, const api::Pod& pod, std::span<const cache::NodeInfoPtr> nodes,
                    std::span<NodeScore> out) const override;
  bool HasNormalizeScore() const override { return true; }
  // Reversed default normalization: the fewest intolerable taints scores 100.
  Status NormalizeScore(const CycleState& state, const api::Pod& pod, std::span<NodeScore> scores) const override;
  // Node Add / taint change, queued only when the node went from untolerated to tolerated.
  std::vector<ClusterEventWithHint> EventsToRegister() const override;
};

}  // namespace ksched::framework::plugins::tainttoleration
