// NodePorts: a node fits only if none of the pod's host ports is already in use there
// (same protocol and port, on the same ip or with either side bound to 0.0.0.0).
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "config/types.h"
#include "pkg/cache/node_info.h"
#include "pkg/framework/interface.h"
#include "pkg/util/status.h"

namespace ksched::framework::plugins::nodeports {

inline constexpr std::string_view kErrReason = "node(s) didn't have free ports for the requested pod ports";

// True if none of `want` conflicts with `used`.
bool FitsPorts(const std::vector<cache::HostPort>& want, const cache::HostPortInfo& used);

class NodePorts final : public PreFilterPlugin, public FilterPlugin, public EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "NodePorts";
  static StatusOr<std::unique_ptr<Plugin>> New(const config::PluginArgs& args, Handle& handle);

  std::string_view Name() const override { return kName; }
  // Stores the pod's host ports in the cycle state; Skip when it has none.
  Status PreFilter(CycleState& state, const api::Pod& pod, PreFilterResult& result) override;
  // Unschedulable kErrReason on a conflict.
  Status Filter(const CycleState& state, const api::Pod& pod, const cache::NodeInfo& node) const override;
  // Assigned pod deletions (queued only when the deleted pod held a port this pod
  // wants) and node Add/Update (always queued).
  std::vector<ClusterEventWithHint> EventsToRegister() const override;
};

}  // namespace ksched::framework::plugins::nodeports
