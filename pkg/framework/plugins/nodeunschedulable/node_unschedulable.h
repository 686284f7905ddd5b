// NodeUnschedulable: a cordoned node (.spec.unschedulable) takes only pods that tolerate
// the node.kubernetes.io/unschedulable:NoSchedule taint.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "config/types.h"
#include "pkg/framework/interface.h"
#include "pkg/util/status.h"

namespace ksched::framework::plugins::nodeunschedulable {

inline constexpr std::string_view kErrReasonUnschedulable = "node(s) were unschedulable";
inline constexpr std::string_view kErrReasonUnknownCondition = "node(s) had unknown conditions";

class NodeUnschedulable final : public FilterPlugin, public EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "NodeUnschedulable";
  static StatusOr<std::unique_ptr<Plugin>> New(const config::PluginArgs& args, Handle& handle);

  std::string_view Name() const override { return kName; }
  // UnschedulableAndUnresolvable kErrReasonUnschedulable on a cordoned node the pod does
  // not tolerate; kErrReasonUnknownCondition for a ghost node.
  Status Filter(const CycleState& state, const api::Pod& pod, const cache::NodeInfo& node) const override;
  // Node Add / spec.unschedulable change, queued only when the node became schedulable.
  std::vector<ClusterEventWithHint> EventsToRegister() const override;
};

}  // namespace ksched::framework::plugins::nodeunschedulable
