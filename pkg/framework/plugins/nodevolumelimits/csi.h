// NodeVolumeLimits: a node fits only while, for every CSI driver with an attach limit
// (its CSINode's allocatable.count), the unique volumes of the driver used by the pods
// there plus the pod's new ones stay within the limit. Volumes count through claims
// (bound: the PV's driver and handle; unbound: the StorageClass's provisioner), through
// generic ephemeral volumes, and through in-tree disks that CSI migration serves with a
// CSI driver. Upstream: pkg/scheduler/framework/plugins/nodevolumelimits/csi.go
// (CSILimits; the in-tree, non-CSI limit plugins are gone upstream and are not here).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/types.h"
#include "pkg/framework/interface.h"
#include "pkg/util/status.h"

namespace ksched::framework::plugins::nodevolumelimits {

inline constexpr std::string_view kErrReasonMaxVolumeCountExceeded = "node(s) exceed max volume count";

// The CSI migration of an in-tree volume plugin (upstream csi-translation-lib): the
// plugin ("kubernetes.io/aws-ebs") and the CSI driver that serves its volumes.
struct InTreePlugin {
  std::string_view name;
  std::string_view csi_driver;
};
// The in-tree plugin of a provisioner name; null when it is not a migratable plugin
// (upstream IsMigratableIntreePluginByName).
const InTreePlugin* MigratableInTreePlugin(std::string_view provisioner);
// The in-tree plugin of a volume source; null for CSI volumes and sources that no CSI
// driver took over (upstream GetInTreePluginNameFromSpec, for the sources decoded).
const InTreePlugin* InTreePluginOf(const api::VolumeSource& source);
// Whether the node's volumes of `plugin` are served by its CSI driver: the node has a
// CSINode and the plugin's migration is complete upstream (upstream isCSIMigrationOn).
bool IsCSIMigrationOn(const api::CSINode* csi_node, const InTreePlugin& plugin);

class CSILimits final : public PreFilterPlugin, public FilterPlugin, public EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "NodeVolumeLimits";
  static StatusOr<std::unique_ptr<Plugin>> New(const config::PluginArgs& args, Handle& handle);

  // `volume_id_prefix` tells the made-up handles of unbound claims apart from real ones.
  CSILimits(Handle& handle, std::string volume_id_prefix)
      : handle_(handle), volume_id_prefix_(std::move(volume_id_prefix)) {}

  std::string_view Name() const override { return kName; }
  // Skip unless the pod has a claim, a generic ephemeral volume or a migratable in-tree
  // disk.
  Status PreFilter(CycleState& state, const api::Pod& pod, PreFilterResult& result) override;
  // Unschedulable kErrReasonMaxVolumeCountExceeded over a driver's limit;
  // UnschedulableAndUnresolvable when one of the pod's claims is missing.
  Status Filter(const CycleState& state, const api::Pod& pod, const cache::NodeInfo& node) const override;
  // CSINode additions, CSINode updates that raise a limit, deletions of assigned pods
  // with volumes, additions of the pod's claims.
  std::vector<ClusterEventWithHint> EventsToRegister() const override;

 private:
  // unique volume name ("driver/handle") -> driver.
  using VolumeMap = std::map<std::string, std::string, std::less<>>;
  // upstream filterAttachableVolumes. A NotFound status when a claim of the new pod is
  // missing; any other error is an internal one.
  ksched::Status AttachableVolumes(const api::Pod& pod, const api::CSINode* csi_node, bool new_pod,
                                   VolumeMap& out) const;
  // upstream getCSIDriverInfo / getCSIDriverInfoFromSC: the claim's driver and volume
  // handle; empty when it is not counted.
  std::pair<std::string, std::string> DriverInfo(const api::CSINode* csi_node,
                                                 const api::PersistentVolumeClaim& claim) const;
  std::pair<std::string, std::string> DriverInfoFromClass(const api::CSINode* csi_node,
                                                          const api::PersistentVolumeClaim& claim) const;

  Handle& handle_;
  const std::string volume_id_prefix_;
};

}  // namespace ksched::framework::plugins::nodevolumelimits
