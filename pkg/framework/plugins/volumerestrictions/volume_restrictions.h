// VolumeRestrictions: a pod may not share an in-tree disk with a pod already on the node
// in a way the disk does not allow (GCE PD and iSCSI and Ceph RBD only read-only, AWS
// EBS never), and may not use a ReadWriteOncePod claim that another pod anywhere in the
// cluster uses. Upstream: pkg/scheduler/framework/plugins/volumerestrictions.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "config/types.h"
#include "pkg/framework/interface.h"
#include "pkg/util/status.h"

namespace ksched::framework::plugins::volumerestrictions {

inline constexpr std::string_view kErrReasonDiskConflict = "node(s) had no available disk";
inline constexpr std::string_view kErrReasonReadWriteOncePodConflict =
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another "
    "pod";

// Whether `volume` is an in-tree disk whose sharing is restricted (GCE PD, AWS EBS, RBD,
// iSCSI; upstream needsRestrictionsCheck).
bool NeedsRestrictionsCheck(const api::Volume& volume);
// Whether `volume` cannot be mounted next to `existing`'s volumes (upstream
// isVolumeConflict).
bool IsVolumeConflict(const api::Volume& volume, const api::Pod& existing);

class VolumeRestrictions final : public PreFilterPlugin,
                                 public PreFilterExtensions,
                                 public FilterPlugin,
                                 public EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "VolumeRestrictions";
  static StatusOr<std::unique_ptr<Plugin>> New(const config::PluginArgs& args, Handle& handle);

  explicit VolumeRestrictions(Handle& handle) : handle_(handle) {}

  std::string_view Name() const override { return kName; }
  // Looks up the pod's claims (UnschedulableAndUnresolvable for a missing one) and
  // counts its ReadWriteOncePod claims that pods of the snapshot already use. Skip when
  // the pod has no restricted disk and no such claim in use.
  Status PreFilter(CycleState& state, const api::Pod& pod, PreFilterResult& result) override;
  const PreFilterExtensions* Extensions() const override { return this; }
  // A nominated pod or preemption victim using one of the pod's ReadWriteOncePod claims.
  Status AddPod(CycleState& state, const api::Pod& pod_to_schedule, const cache::PodEntry& pod_to_add,
                const cache::NodeInfo& node) const override;
  Status RemovePod(CycleState& state, const api::Pod& pod_to_schedule, const cache::PodEntry& pod_to_remove,
                   const cache::NodeInfo& node) const override;
  // Unschedulable kErrReasonDiskConflict, then kErrReasonReadWriteOncePodConflict.
  Status Filter(const CycleState& state, const api::Pod& pod, const cache::NodeInfo& node) const override;
  // Assigned pod deletions (queued when the deleted pod held a conflicting disk or one
  // of the pod's claims), node additions, and additions of the pod's claims.
  std::vector<ClusterEventWithHint> EventsToRegister() const override;

 private:
  Handle& handle_;
};

}  // namespace ksched::framework::plugins::volumerestrictions
