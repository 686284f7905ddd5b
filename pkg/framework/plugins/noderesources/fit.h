// NodeResourcesFit: filters out nodes without room for the pod's requests (pod count,
// cpu, memory, ephemeral-storage, extended/hugepages resources) and scores the rest by
// the configured strategy: LeastAllocated (default), MostAllocated or
// RequestedToCapacityRatio (upstream noderesources/fit.go, v1 args).
#pragma once

#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "config/types.h"
#include "pkg/framework/interface.h"
#include "pkg/framework/plugins/noderesources/resource_allocation.h"
#include "pkg/util/status.h"

namespace ksched::framework::plugins::noderesources {

// One resource the node lacks for the pod (upstream InsufficientResource).
struct InsufficientResource {
  std::string resource_name;
  std::string reason;  // "Too many pods", "Insufficient cpu", "Insufficient example.com/gpu"
  int64_t requested = 0;
  int64_t used = 0;
  int64_t capacity = 0;
  bool operator==(const InsufficientResource&) const = default;
};

// Extended resources Filter does not check, by exact name or by the name's domain.
struct IgnoredResources {
  std::set<std::string, std::less<>> names;
  std::set<std::string, std::less<>> groups;
};

// Every resource that does not fit, in upstream's order: pods, cpu, memory,
// ephemeral-storage, then the scalar resources in the request's order.
std::vector<InsufficientResource> FitsRequest(const cache::PodRequest& request, const cache::NodeInfo& node,
                                              const IgnoredResources& ignored);

class Fit final : public PreFilterPlugin,
                  public FilterPlugin,
                  public PreScorePlugin,
                  public ScorePlugin,
                  public EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "NodeResourcesFit";

  // `args`: NodeResourcesFitArgs, or monostate for the v1 defaults. Invalid args (as
  // config validation defines them) are an InvalidArgument error.
  static StatusOr<std::unique_ptr<Plugin>> New(const config::PluginArgs& args, Handle& handle);
  explicit Fit(const config::NodeResourcesFitArgs& args);

  std::string_view Name() const override { return kName; }

  Status PreFilter(CycleState& state, const api::Pod& pod, PreFilterResult& result) override;
  // Unschedulable with one reason per insufficient resource.
  Status Filter(const CycleState& state, const api::Pod& pod, const cache::NodeInfo& node) const override;
  Status PreScore(CycleState& state, const api::Pod& pod, std::span<const cache::NodeInfoPtr> nodes) override;
  Status Score(const CycleState& state, const api::Pod& pod, const cache::NodeInfo& node,
               int64_t& score) const override;
  Status ScoreNodes(const CycleState& state, const api::Pod& pod, std::span<const cache::NodeInfoPtr> nodes,
                    std::span<NodeScore> out) const override;

  // An assigned pod's deletion (queued when the deleted pod was on a node), and a node
  // added or its allocatable changed (queued when the pod would fit the empty node and,
  // for an update, one of the resources it requests grew).
  std::vector<ClusterEventWithHint> EventsToRegister() const override;

  const std::string& scoring_strategy() const { return strategy_; }

 private:
  IgnoredResources ignored_;
  std::string strategy_;
  ResourceAllocationScorer scorer_;
};

}  // namespace ksched::framework::plugins::noderesources
