// Framework: one profile's plugins, instantiated once and called at each extension point
// in the configured order (upstream framework/runtime/framework.go). The scheduler holds
// one Framework per profile (schedulerName).
//
// Threading: Run{PreFilter..Permit} run on the scheduling thread; RunFilterPlugins and
// the score fan-out run on the Parallelizer's workers; WaitOnPermit..RunPostBindPlugins
// run on a binding worker. The waiting-pods map is the only state they share.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/effective_plugins.h"
#include "config/defaults.h"
#include "config/types.h"
#include "pkg/cache/snapshot.h"
#include "pkg/framework/interface.h"
#include "pkg/framework/registry.h"
#include "pkg/framework/runtime/metrics_recorder.h"
#include "pkg/framework/runtime/parallelizer.h"
#include "pkg/framework/runtime/pod_entry_memo.h"
#include "pkg/framework/runtime/waiting_pods.h"
#include "pkg/util/clock.h"
#include "pkg/util/status.h"

namespace ksched::framework::runtime {

struct FrameworkOptions {
  // The snapshot plugins read through Handle::Snapshot(); the scheduler updates it in
  // place each cycle (or calls SetSnapshot). Null: an empty snapshot.
  const cache::Snapshot* snapshot = nullptr;
  const PodNominator* nominator = nullptr;
  PodBinder* binder = nullptr;
  // Null: preemption finds no writer and preempts nothing.
  PodPreemptor* preemptor = nullptr;
  // Null: plugins see no namespaces, Services or controllers.
  const api::ClusterLister* lister = nullptr;
  VolumeWriter* volumes = nullptr;  // VolumeBinding's PV and claim writes
  ResourceClaimWriter* claims = nullptr;  // DynamicResources' ResourceClaim writes
  // Shared by the profiles of one scheduler; null: the framework makes its own pool of
  // `parallelism` threads.
  Parallelizer* parallelizer = nullptr;
  int parallelism = 16;
  // The configuration-wide value; the profile's own percentageOfNodesToScore wins.
  std::optional<int32_t> percentage_of_nodes_to_score;
  MetricsRecorder* metrics = &NoopMetricsRecorder();
  Clock* clock = &RealClock();
  // The scheduler's extenders (Handle::Extenders), owned by the caller.
  std::vector<Extender*> extenders;
  // Handle::ActivatePods: the scheduling queue's Activate. Null: nothing is activated.
  std::function<void(std::span<const api::PodPtr>)> activate;
};

// Each Score plugin's part of the totals, as RunScorePlugins left them: plugin k gave
// node i scores[k][i].score (normalised), weighted by weights[k]. Names view the
// plugins' own and live as long as the framework; `scores` views the framework's score
// matrix and lives until its next RunScorePlugins.
struct ScoreBreakdown {
  std::vector<std::string_view> plugins;
  std::vector<int64_t> weights;
  std::span<const std::vector<NodeScore>> scores;
};

class Framework : public Handle {
 public:
  ~Framework() override;

  // ---- Handle ----
  const cache::Snapshot& Snapshot() const override;
  const PodNominator* Nominator() const override { return options_.nominator; }
  PodBinder& Binder() override;
  int Parallelism() const override { return parallelizer_->parallelism(); }
  std::span<Extender* const> Extenders() const override { return options_.extenders; }
  const api::ClusterLister& Lister() const override {
    return options_.lister != nullptr ? *options_.lister : api::EmptyClusterLister();
  }
  PodPreemptor* Preemptor() override { return options_.preemptor; }
  VolumeWriter* Volumes() override { return options_.volumes; }
  ResourceClaimWriter* ResourceClaims() override { return options_.claims; }
  std::stop_token Stopping() const override { return stopping_.get_token(); }
  // Shutdown: plugins waiting in the binding cycle give up (see Handle::Stopping).
  void RequestStop() { stopping_.request_stop(); }
  void ParallelizeUntil(int n, const std::function<void(int)>& fn, const std::atomic<bool>* stop) override {
    parallelizer_->Until(n, [&fn](int i) { fn(i); }, stop);
  }

  void SetSnapshot(const cache::Snapshot* snapshot) { snapshot_.store(snapshot, std::memory_order_release); }
  const std::string& ProfileName() const { return profile_name_; }
  std::optional<int32_t> PercentageOfNodesToScore() const { return percentage_of_nodes_to_score_; }
  Parallelizer& parallelizer() { return *parallelizer_; }

  // ---- what the queue needs ----
  LessFn QueueSortLess() const;
  const std::vector<PreEnqueuePlugin*>& PreEnqueuePlugins() const { return pre_enqueue_; }
  // Every plugin that can reject a pod (PreEnqueue, PreFilter, Filter, Reserve, Permit),
  // once each, for queue::ClusterEventMap::FromPlugins (which reads their
  // EventsToRegister(), or registers every event for a plugin without EnqueueExtensions).
  std::vector<Plugin*> RejectingPlugins() const;

  // ---- scheduling cycle ----
  // Skip marks the plugin's Filter as skipped in `state`; a rejection returns at once
  // with plugin() set; node_names of the results are intersected.
  std::pair<PreFilterResult, Status> RunPreFilterPlugins(CycleState& state, const api::Pod& pod);
  Status RunPreFilterExtensionAddPod(CycleState& state, const api::Pod& pod_to_schedule,
                                     const cache::PodEntry& pod_to_add, const cache::NodeInfo& node) const override;
  Status RunPreFilterExtensionRemovePod(CycleState& state, const api::Pod& pod_to_schedule,
                                        const cache::PodEntry& pod_to_remove,
                                        const cache::NodeInfo& node) const override;
  // The first rejecting plugin (in order) decides; Success if none rejects. Thread-safe.
  Status RunFilterPlugins(const CycleState& state, const api::Pod& pod, const cache::NodeInfo& node) const;
  // Every Filter plugin, not stopping at the first rejection: appends each plugin's
  // rejection (plugin() set; an internal error counts too) to `rejections`. For
  // explaining a pod that fits nowhere, not for deciding. Thread-safe.
  void RunAllFilterPlugins(const CycleState& state, const api::Pod& pod, const cache::NodeInfo& node,
                           std::vector<Status>& rejections) const;
  // Upstream's two passes: with the node's nominated pods of higher or equal priority
  // added (so the pod does not take their room), then, if any were added and the first
  // pass succeeded, without them (filters like pod affinity may need them absent).
  Status RunFilterPluginsWithNominatedPods(const CycleState& state, const api::Pod& pod,
                                           const cache::NodeInfo& node) const override;
  std::vector<api::PodPtr> NominatedPodsToHonor(const api::Pod& pod, std::string_view node) const override;
  Status RunFilterPluginsHonoring(const CycleState& state, const api::Pod& pod, cache::NodeInfo& node,
                                  std::span<const api::PodPtr> nominated) const override;
  std::pair<PostFilterResult, Status> RunPostFilterPlugins(CycleState& state, const api::Pod& pod,
                                                           const NodeToStatusMap& filtered);
  Status RunPreScorePlugins(CycleState& state, const api::Pod& pod, std::span<const cache::NodeInfoPtr> nodes);
  // Per node (aligned with `nodes`): the sum over score plugins of weight x normalized score.
  // `breakdown`, when given, receives each plugin's weighted scores as well.
  std::pair<std::vector<int64_t>, Status> RunScorePlugins(const CycleState& state, const api::Pod& pod,
                                                          std::span<const cache::NodeInfoPtr> nodes,
                                                          ScoreBreakdown* breakdown = nullptr);
  Status RunReservePluginsReserve(CycleState& state, const api::Pod& pod, std::string_view node_name);
  // In reverse order of Reserve.
  void RunReservePluginsUnreserve(CycleState& state, const api::Pod& pod, std::string_view node_name);
  // Success, a rejection, or Wait: the pod is then in the waiting map until WaitOnPermit.
  Status RunPermitPlugins(CycleState& state, const api::Pod& pod, std::string_view node_name);

  // ---- binding cycle ----
  // `timed_out`, when given, is set when a plugin's timeout ended the wait.
  Status WaitOnPermit(const api::Pod& pod, bool* timed_out = nullptr);
  Status RunPreBindPlugins(CycleState& state, const api::Pod& pod, std::string_view node_name);
  // Bind plugins in order until one does not Skip.
  Status RunBindPlugins(CycleState& state, const api::Pod& pod, std::string_view node_name);
  // Whether every Bind plugin can bind asynchronously (RunBindPluginsAsync may be used).
  bool CanBindAsync() const;
  // RunBindPlugins without blocking: `done` gets the status RunBindPlugins would return,
  // exactly once, possibly on another thread. `state`, `pod` and `node_name` must stay
  // valid until then. Requires CanBindAsync().
  void RunBindPluginsAsync(CycleState& state, const api::Pod& pod, std::string_view node_name,
                           std::function<void(Status)> done);
  void RunPostBindPlugins(CycleState& state, const api::Pod& pod, std::string_view node_name);

  // ---- waiting pods (for plugins such as coscheduling, and pod deletion) ----
  std::shared_ptr<WaitingPod> GetWaitingPod(std::string_view uid) const { return waiting_pods_.Get(uid); }
  void IterateOverWaitingPods(const std::function<void(WaitingPod&)>& fn) const { waiting_pods_.Iterate(fn); }
  // Rejects a waiting pod (e.g. it was deleted); true if it was waiting.
  bool RejectWaitingPod(std::string_view uid, std::string_view plugin, std::string_view message) override;
  int AllowWaitingPods(const std::function<bool(const api::Pod&)>& match, std::string_view plugin) override;
  int RejectWaitingPods(const std::function<bool(const api::Pod&)>& match, std::string_view plugin,
                        std::string_view message) override;
  int CountWaitingPods(const std::function<bool(const api::Pod&)>& match) const override;
  void ActivatePods(std::span<const api::PodPtr> pods) override {
    if (options_.activate) options_.activate(pods);
  }
  MetricsRecorder* Metrics() override { return options_.metrics; }

  bool HasFilterPlugins() const { return !filter_.empty(); }
  bool HasPostFilterPlugins() const { return !post_filter_.empty(); }
  // Whether any PreBind plugin has work for this pod (its PreBindPreFlight is not Skip).
  bool PreBindNeeded(const CycleState& state, const api::Pod& pod, std::string_view node_name) const;
  bool HasPostBindPlugins() const { return !post_bind_.empty(); }
  bool HasScorePlugins() const { return !score_.empty(); }
  // Extension point name -> enabled plugin names, in order (configz, debugging).
  std::map<std::string, std::vector<std::string>> ListPlugins() const;

 private:
  friend StatusOr<std::unique_ptr<Framework>> NewFramework(const Registry&, const config::KubeSchedulerProfile&,
                                                           FrameworkOptions);
  struct ScorePluginEntry {
    ScorePlugin* plugin;
    int64_t weight;
  };

  explicit Framework(FrameworkOptions options);
  template <typename F>
  Status Timed(const CycleState& state, std::string_view point, const Plugin& plugin, F&& call) const;
  // When an extension point starts, for RecordPoint (no clock read with metrics off).
  Clock::time_point PointStart() const;
  void RecordPoint(std::string_view point, Code code, Clock::time_point start) const;
  void BindFrom(size_t index, CycleState& state, const api::Pod& pod, std::string_view node_name,
                Clock::time_point start, std::function<void(Status)> done);
  Status BindResult(const BindPlugin& plugin, Status s) const;

  FrameworkOptions options_;
  std::string profile_name_;
  std::optional<int32_t> percentage_of_nodes_to_score_;
  std::atomic<const cache::Snapshot*> snapshot_;
  std::unique_ptr<Parallelizer> own_parallelizer_;
  Parallelizer* parallelizer_ = nullptr;
  bool metrics_enabled_ = false;

  // Each plugin once, shared by its extension points.
  std::map<std::string, std::unique_ptr<Plugin>, std::less<>> plugins_;
  config::ProfilePlugins enabled_;
  std::vector<PreEnqueuePlugin*> pre_enqueue_;
  QueueSortPlugin* queue_sort_ = nullptr;
  std::vector<PreFilterPlugin*> pre_filter_;
  std::vector<FilterPlugin*> filter_;
  std::vector<const std::string*> filter_names_;  // Status::InternedName of each, for rejections
  std::vector<PostFilterPlugin*> post_filter_;
  std::vector<PreScorePlugin*> pre_score_;
  std::vector<ScorePluginEntry> score_;
  // RunScorePlugins' matrix, kept between cycles so that a cycle neither allocates it
  // nor zeroes it on the scheduling thread just before the workers write it (each line
  // would then move from one core's cache to the other's). Scheduling thread only.
  std::vector<std::vector<NodeScore>> score_matrix_;
  std::vector<ReservePlugin*> reserve_;
  std::vector<PermitPlugin*> permit_;
  std::vector<PreBindPlugin*> pre_bind_;
  std::stop_source stopping_;
  std::vector<BindPlugin*> bind_;
  std::vector<PostBindPlugin*> post_bind_;

  WaitingPodsMap waiting_pods_;
  PodEntryMemo nominated_entries_;  // nominated pods added to node copies by filters
};

// Builds the framework for a defaulted, validated profile: instantiates every plugin the
// profile needs once (with its pluginConfig args, or the defaults), then checks each is
// registered and implements the points it is enabled at, exactly one QueueSort and at
// least one Bind plugin, with upstream's error texts.
StatusOr<std::unique_ptr<Framework>> NewFramework(const Registry& registry, const config::KubeSchedulerProfile& profile,
                                                  FrameworkOptions options = {});

// The extension points a plugin object implements (for config::EffectivePlugins).
config::ExtensionPointSet ExtensionPointsOf(const Plugin& plugin);

}  // namespace ksched::framework::runtime
