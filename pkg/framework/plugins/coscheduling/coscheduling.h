// Coscheduling: all-or-nothing scheduling of pod groups, as kubernetes-sigs/scheduler-plugins
// defines it (pkg/coscheduling/coscheduling.go and core/core.go). A group is a
// scheduling.x-k8s.io/v1alpha1 PodGroup; its members are the pods of its namespace labelled
// scheduling.x-k8s.io/pod-group=<name>.
//
//   QueueSort   priority, then the group's creation time (or its last failure, so a
//               failing group does not hold the head of the queue), then the pod's
//               namespace/name: a group's pods leave the queue together.
//   PreFilter   a member waits (UnschedulableAndUnresolvable) while its group backs off,
//               while fewer than minMember members exist (or are not gated), and while
//               the cluster's free resources, counting the group's own pods as free,
//               fall short of spec.minResources.
//   PostFilter  a member that fits nowhere rejects its waiting siblings and backs the
//               group off, unless enough members are assigned or few are missing
//               (podGroupRejectPercentage).
//   Permit      a member waits until minMember members are assumed or bound, then all
//               waiting members are allowed at once; the first to wait moves its siblings
//               to activeQ. The wait is the group's scheduleTimeoutSeconds, else
//               permitWaitingTimeSeconds.
//   Unreserve   a member that is rejected, timed out or failed to bind rejects every
//               waiting sibling: no partial group is ever bound.
//
// Thread-safety: Less and the hints run on queue threads under the queue's lock; the other
// points on the scheduling thread, Unreserve also on binding workers. The plugin's own
// state is behind its mutex. Waiting members are allowed and rejected under it (the
// waiting-pods map takes no lock of the queue's or the plugin's), so counting a group and
// deciding its members is one step; the queue (ActivatePods) is called without it.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "config/types.h"
#include "pkg/framework/interface.h"
#include "pkg/util/clock.h"
#include "pkg/util/mutex.h"
#include "pkg/util/thread_annotations.h"

namespace ksched::framework::plugins::coscheduling {

// CoschedulingArgs (scheduler-plugins apis/config/v1 types.go, defaults.go).
struct Args {
  int64_t permit_waiting_time_seconds = 60;
  int64_t pod_group_backoff_seconds = 0;  // 0: no backoff
  int32_t pod_group_reject_percentage = 10;
};

// Decodes and validates the plugin's pluginConfig args (strict, upstream's messages).
StatusOr<Args> DecodeArgs(const config::PluginArgs& args);

class Coscheduling final : public QueueSortPlugin,
                           public PreFilterPlugin,
                           public PostFilterPlugin,
                           public ReservePlugin,
                           public PermitPlugin,
                           public EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "Coscheduling";
  // The cycle-state key upstream's Permit writes for the first member to wait.
  static constexpr std::string_view kPermitStateKey = "PermitCoscheduling";

  Coscheduling(Args args, Handle& handle, Clock* clock = &RealClock());
  static StatusOr<std::unique_ptr<Plugin>> New(const config::PluginArgs& args, Handle& handle);

  std::string_view Name() const override { return kName; }
  bool Less(const QueuedPodInfo& a, const QueuedPodInfo& b) const override;
  Status PreFilter(CycleState& state, const api::Pod& pod, PreFilterResult& result) override;
  Status PostFilter(CycleState& state, const api::Pod& pod, const NodeToStatusMap& filtered,
                    PostFilterResult& result) override;
  Status Reserve(CycleState& state, const api::Pod& pod, std::string_view node_name) override { return Status(); }
  void Unreserve(CycleState& state, const api::Pod& pod, std::string_view node_name) override;
  Status Permit(CycleState& state, const api::Pod& pod, std::string_view node_name,
                std::chrono::milliseconds& timeout) override;
  std::vector<ClusterEventWithHint> EventsToRegister() const override;

  // Members of `pod`'s group assumed (permitted) or bound, and the group's minMember; for
  // explain and tests. {0, 0} for a pod without a known group.
  struct GroupProgress {
    int assigned = 0;
    int min_member = 0;
  };
  GroupProgress Progress(const api::Pod& pod) const EXCLUDES(mu_);

 private:
  // The pod's group: its key "ns/name" and the PodGroup (null when not known); key empty
  // without the label.
  struct GroupRef {
    std::string key;
    std::string_view name;
    api::PodGroupPtr group;
  };
  GroupRef GroupOf(const api::Pod& pod) const;
  // Members assumed or bound: bound members from the informer, plus those this plugin
  // permitted (by uid) that still exist.
  int AssignedLocked(const GroupRef& ref, const std::vector<api::PodPtr>& members) const REQUIRES(mu_);
  // The time the queue sorts a pod by (upstream GetCreationTimestamp).
  std::chrono::system_clock::time_point SortTime(const QueuedPodInfo& info) const;
  Status CheckClusterResource(const GroupRef& ref) const;
  std::chrono::milliseconds WaitTime(const api::PodGroup& group) const;
  // `match` for the waiting pods of `ref`'s group.
  static std::function<bool(const api::Pod&)> SameGroup(const api::Pod& pod, std::string_view group_name);

  const Args args_;
  Handle& handle_;
  Clock& clock_;
  // wall time = steady time + this, fixed at construction so the queue's order of pods
  // without a group never shifts between comparisons.
  const std::chrono::system_clock::duration steady_to_wall_;

  mutable Mutex mu_;
  // "ns/name" -> uids of members Permit has let through (Success or Wait) that are not
  // bound yet and were not unreserved or rejected with their group since (upstream
  // assignedPodsByPG, which is fed by Permit; by uid here, so a member deleted and created
  // again under its name does not count as placed).
  std::map<std::string, std::set<std::string, std::less<>>, std::less<>> permitted_ GUARDED_BY(mu_);
  int permits_since_sweep_ GUARDED_BY(mu_) = 0;
  // Members rejected at Permit by a sibling's failure whose Unreserve has not run yet:
  // theirs does not cascade again.
  std::set<std::string, std::less<>> released_ GUARDED_BY(mu_);
  // Groups backed off until the time given (podGroupBackoffSeconds).
  std::map<std::string, Clock::time_point, std::less<>> backed_off_ GUARDED_BY(mu_);
  // Groups whose minResources check passed, until the time given (upstream permittedPG).
  std::map<std::string, Clock::time_point, std::less<>> resources_checked_ GUARDED_BY(mu_);
  // Groups' last failure, which the queue sorts them by until a member is permitted.
  std::map<std::string, std::chrono::system_clock::time_point, std::less<>> last_failure_ GUARDED_BY(mu_);
  // Groups with members waiting at Permit, and when the first began to wait plus its
  // timeout (a release after it counts as a timeout in the metrics).
  std::map<std::string, Clock::time_point, std::less<>> waiting_until_ GUARDED_BY(mu_);

  // Ends `key`'s wait for the metrics: admitted, or turned away for `reason`.
  void EndWaitLocked(const std::string& key, std::string_view rejection_reason) REQUIRES(mu_);
  // Drops expired backoffs and resource checks and the state of groups with no pod left.
  void SweepLocked() REQUIRES(mu_);
  // Rejects the members of `pod`'s group waiting at Permit (not `pod`) and remembers them
  // in released_.
  void RejectWaitingLocked(const api::Pod& pod, const GroupRef& ref, const std::string& message) REQUIRES(mu_);
};

}  // namespace ksched::framework::plugins::coscheduling
