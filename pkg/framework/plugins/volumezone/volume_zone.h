// VolumeZone: a pod whose bound PersistentVolumes carry zone or region labels fits only
// nodes in those zones and regions. Claims not bound yet are checked only in that they
// must be waiting for their first consumer (then VolumeBinding picks a fitting volume).
// Upstream: pkg/scheduler/framework/plugins/volumezone.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "config/types.h"
#include "pkg/framework/interface.h"
#include "pkg/util/status.h"

namespace ksched::framework::plugins::volumezone {

inline constexpr std::string_view kErrReasonConflict = "node(s) had no available volume zone";

// One topology label of a PersistentVolume: the node's value for `key` must be one of
// `values` (upstream pvTopology).
struct PVTopology {
  std::string pv_name;
  std::string key;
  std::set<std::string, std::less<>> values;
  bool operator==(const PVTopology&) const = default;
};

// The zone and region labels of `pv`, beta labels first; a label whose value does not
// parse (an empty zone in a "__" list) is ignored (upstream getPVTopologies).
std::vector<PVTopology> PVTopologies(const api::PersistentVolume& pv);

class VolumeZone final : public PreFilterPlugin, public FilterPlugin, public EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "VolumeZone";
  static StatusOr<std::unique_ptr<Plugin>> New(const config::PluginArgs& args, Handle& handle);

  explicit VolumeZone(Handle& handle) : handle_(handle) {}

  std::string_view Name() const override { return kName; }
  // Reads the topology of the volumes bound to the pod's claims. Skip when there is none;
  // UnschedulableAndUnresolvable when a claim, its volume or its class is missing, or an
  // unbound claim's class binds immediately.
  Status PreFilter(CycleState& state, const api::Pod& pod, PreFilterResult& result) override;
  // UnschedulableAndUnresolvable kErrReasonConflict when the node has topology labels and
  // one of them does not match a volume's.
  Status Filter(const CycleState& state, const api::Pod& pod, const cache::NodeInfo& node) const override;
  // StorageClass additions (WaitForFirstConsumer ones), node additions and label changes,
  // additions and updates of the pod's claims, PersistentVolume additions and topology
  // changes.
  std::vector<ClusterEventWithHint> EventsToRegister() const override;

 private:
  // upstream getPVbyPod.
  Status PodPVTopologies(const api::Pod& pod, std::vector<PVTopology>& out) const;

  Handle& handle_;
};

}  // namespace ksched::framework::plugins::volumezone
