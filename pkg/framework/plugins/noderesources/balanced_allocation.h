// NodeResourcesBalancedAllocation: favours nodes whose resource usage, with the pod
// placed, is balanced across the configured resources (upstream
// noderesources/balanced_allocation.go, current formula: score = (1 - std dev of the
// requested fractions) * 100, fractions capped at 1).
#pragma once

#include <memory>
#include <string_view>

#include "config/types.h"
#include "pkg/framework/interface.h"
#include "pkg/framework/plugins/noderesources/resource_allocation.h"
#include "pkg/util/status.h"

namespace ksched::framework::plugins::noderesources {

class BalancedAllocation final : public PreScorePlugin, public ScorePlugin {
 public:
  static constexpr std::string_view kName = "NodeResourcesBalancedAllocation";

  // `args`: NodeResourcesBalancedAllocationArgs, or monostate for cpu and memory.
  static StatusOr<std::unique_ptr<Plugin>> New(const config::PluginArgs& args, Handle& handle);
  explicit BalancedAllocation(const config::NodeResourcesBalancedAllocationArgs& args);

  std::string_view Name() const override { return kName; }

  // Skip for a best-effort pod (no request for any configured resource): balancing on
  // zero requests would pile such pods onto one node (kubernetes #129138).
  Status PreScore(CycleState& state, const api::Pod& pod, std::span<const cache::NodeInfoPtr> nodes) override;
  Status Score(const CycleState& state, const api::Pod& pod, const cache::NodeInfo& node,
               int64_t& score) const override;
  Status ScoreNodes(const CycleState& state, const api::Pod& pod, std::span<const cache::NodeInfoPtr> nodes,
                    std::span<NodeScore> out) const override;

 private:
  ResourceAllocationScorer scorer_;
};

}  // namespace ksched::framework::plugins::noderesources
