// VolumeBinding: a pod's PersistentVolumeClaims must be bound, or bindable, on the node
// (upstream pkg/scheduler/framework/plugins/volumebinding, as of the releases after
// GetEligibleNodes was removed from PreFilter).
//
//   PreFilter  sorts the pod's claims once per cycle: bound ones (their volumes' node
//              affinity is checked per node) and unbound WaitForFirstConsumer ones (with
//              the volumes each could take); unbound claims of Immediate classes are the
//              PV controller's job and make the pod unschedulable until it is done.
//   Filter     per node: bound volumes reachable, and every unbound claim either matched
//              to a distinct available volume or provisionable there.
//   Reserve    recomputes the choice for the chosen node (cheaper than keeping one per
//              node, and the same answer: it depends only on the cycle state and the
//              node) and assumes it in memory, so the next pod does not take the same
//              volume; Unreserve forgets it.
//   PreBind    writes the choice (claimRef on volumes, selected-node on claims to
//              provision) and waits until the PV controller has bound every claim.
//
// Not covered: storage capacity (CSIStorageCapacity; the 1.20 API server does not
// serve storage.k8s.io/v1 capacities), so provisioning never fails for lack of space;
// translating in-tree volumes (GCE PD, EBS, Azure Disk, Cinder) to CSI before checking
// their node affinity on CSI-migrated nodes. Scoring (VolumeCapacityPriority /
// StorageCapacityScoring) is behind an alpha feature gate that is off by default:
// PreScore skips, as upstream does with the gate off.
#pragma once

#include <chrono>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "config/types.h"
#include "pkg/framework/interface.h"
#include "pkg/framework/plugins/volumebinding/assume_cache.h"
#include "pkg/framework/plugins/volumebinding/binder.h"
#include "pkg/util/clock.h"
#include "pkg/util/status.h"

namespace ksched::framework::plugins::volumebinding {

inline constexpr std::string_view kErrReasonUnboundImmediate = "pod has unbound immediate PersistentVolumeClaims";

inline constexpr std::string_view kStateKey = "VolumeBinding";
inline constexpr std::string_view kBindingStateKey = "VolumeBinding/bindings";

// What PreFilter computed for Filter and Reserve. Immutable, so clones share it.
struct PreFilterState final : StateData {
  std::unique_ptr<StateData> Clone() const override { return std::make_unique<PreFilterState>(*this); }
  bool NeededForBinding() const override { return false; }

  std::shared_ptr<const PodVolumeClaims> claims;  // null: the pod has no claims
};

// What Reserve assumed, for PreBind and Unreserve.
struct BindingState final : StateData {
  std::unique_ptr<StateData> Clone() const override { return std::make_unique<BindingState>(*this); }

  bool all_bound = true;  // nothing to write or wait for
  api::NodePtr node;      // the chosen node as of Reserve
  // The assumed objects; PreBind replaces them with the API server's answers.
  PodVolumes volumes;
};

struct VolumeBindingOptions {
  Clock* clock = &RealClock();
  // How often PreBind looks at the lister while waiting for the PV controller (upstream
  // asks its informer caches every second; ours are local too, so it can look sooner).
  std::chrono::milliseconds poll_interval{100};
};

class VolumeBinding final : public PreFilterPlugin,
                            public FilterPlugin,
                            public PreScorePlugin,
                            public ScorePlugin,
                            public ReservePlugin,
                            public PreBindPlugin,
                            public EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "VolumeBinding";
  // `args`: VolumeBindingArgs (already validated) or monostate for the defaults.
  static StatusOr<std::unique_ptr<Plugin>> New(const config::PluginArgs& args, Handle& handle);
  VolumeBinding(Handle& handle, const config::VolumeBindingArgs& args, VolumeBindingOptions options = {});

  std::string_view Name() const override { return kName; }

  // Skip without claims; UnschedulableAndUnresolvable for a missing, lost, deleting or
  // foreign (ephemeral) claim and for unbound Immediate claims.
  Status PreFilter(CycleState& state, const api::Pod& pod, PreFilterResult& result) override;
  // UnschedulableAndUnresolvable with upstream's conflict reasons.
  Status Filter(const CycleState& state, const api::Pod& pod, const cache::NodeInfo& node) const override;

  // Always Skip / 0: capacity scoring is off (see above).
  Status PreScore(CycleState& state, const api::Pod& pod, std::span<const cache::NodeInfoPtr> nodes) override;
  Status Score(const CycleState& state, const api::Pod& pod, const cache::NodeInfo& node,
               int64_t& score) const override;

  Status Reserve(CycleState& state, const api::Pod& pod, std::string_view node_name) override;
  void Unreserve(CycleState& state, const api::Pod& pod, std::string_view node_name) override;
  // Skip when Reserve left nothing to write or wait for.
  Status PreBindPreFlight(const CycleState& state, const api::Pod& pod, std::string_view node_name) const override;
  // Blocks up to bindTimeoutSeconds on a binding worker.
  Status PreBind(CycleState& state, const api::Pod& pod, std::string_view node_name) override;

  // StorageClass, PVC, PV and CSINode adds and updates and node adds and label changes,
  // with upstream's hints for StorageClasses, claims and CSINodes.
  std::vector<ClusterEventWithHint> EventsToRegister() const override;

  AssumeCache& assume_cache() { return cache_; }

 private:
  // upstream volumeBinder.arePodVolumesBound, through the assumed view.
  bool ArePodVolumesBound(const api::Pod& pod) const;

  Handle& handle_;
  std::chrono::seconds bind_timeout_;
  VolumeBindingOptions options_;
  mutable AssumeCache cache_;
};

}  // namespace ksched::framework::plugins::volumebinding
