// NodeName: a pod that names its node (.spec.nodeName) fits only that node.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "config/types.h"
#include "pkg/framework/interface.h"
#include "pkg/util/status.h"

namespace ksched::framework::plugins::nodename {

inline constexpr std::string_view kErrReason = "node(s) didn't match the requested node name";

// True if the pod names no node or names this one.
bool Fits(const api::Pod& pod, const api::Node& node);

class NodeName final : public FilterPlugin, public EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "NodeName";
  static StatusOr<std::unique_ptr<Plugin>> New(const config::PluginArgs& args, Handle& handle);

  std::string_view Name() const override { return kName; }
  // UnschedulableAndUnresolvable kErrReason on another node; Error for a ghost node.
  Status Filter(const CycleState& state, const api::Pod& pod, const cache::NodeInfo& node) const override;
  // Node Add/Update, queued only when the node is the one the pod names.
  std::vector<ClusterEventWithHint> EventsToRegister() const override;
};

}  // namespace ksched::framework::plugins::nodename
