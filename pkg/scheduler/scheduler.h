// Scheduler: wires profiles (one Framework per schedulerName), the scheduling queue, the
// cache and the API writer, and runs the scheduleOne loop on one thread with the binding
// cycle on a worker pool. The informers feed it through the two handlers, which only
// route events (event_handlers.cc); scheduleOne tells one pod's story (schedule_one.cc).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "config/types.h"
#include "informers/informer.h"
#include "informers/pod_group_lister.h"
#include "informers/resource_lister.h"
#include "informers/storage_lister.h"
#include "pkg/cache/cache.h"
#include "pkg/cache/snapshot.h"
#include "pkg/explain/decision_log.h"
#include "pkg/framework/registry.h"
#include "pkg/framework/runtime/framework.h"
#include "pkg/framework/runtime/scheduling_algorithm.h"
#include "pkg/queue/nominator_view.h"
#include "pkg/queue/scheduling_queue.h"
#include "pkg/scheduler/api_writer.h"
#include "pkg/scheduler/metrics_recorder.h"
#include "pkg/scheduler/preemptor.h"
#include "pkg/util/clock.h"
#include "pkg/util/mutex.h"
#include "pkg/util/worker_pool.h"

namespace ksched::scheduler {

// How one scheduling attempt ended, for SchedulerOptions::on_attempt.
struct AttemptReport {
  api::PodPtr pod;
  bool scheduled = false;  // bound to `node`
  std::string node;
  std::string message;  // the failure's message (the FailedScheduling event's)
  bool error = false;   // an internal error rather than a rejection
  // What PostFilter decided about the pod's nominated node (see explain::Failure).
  std::optional<std::string> nomination;
  std::vector<std::string> victims;  // "namespace/name" of the pods preemption evicted
};

struct SchedulerOptions {
  Clock* clock = &RealClock();
  config::KubeSchedulerConfiguration config;  // defaulted and validated
  framework::Registry registry;
  client::ApiClient* bind_client = nullptr;
  client::ApiClient* status_client = nullptr;
  std::string hostname = "localhost";
  int binding_workers = 32;
  Clock::duration pod_max_in_unschedulable = std::chrono::minutes(5);
  // Looks a pod up in the informer store by "namespace/name" (failure handler re-read).
  std::function<api::PodPtr(const std::string& key)> pod_lister;
  // Namespaces, Services and workload controllers for the plugins (null: none known).
  const api::ClusterLister* cluster_lister = nullptr;
  queue::QueueMetricsRecorder* queue_metrics = nullptr;
  framework::runtime::MetricsRecorder* framework_metrics = nullptr;
  SchedulerMetrics* metrics = nullptr;
  std::optional<uint64_t> seed;  // tie-break RNG seed (tests)
  // Asked right before each bind is sent; false fails the binding cycle instead (the pod
  // is forgotten and requeued). With leader election: whether we still hold a fresh
  // lease, so a process that was frozen past its lease never binds on waking before its
  // elector has noticed (LeaderElector::IsLeader). Empty: always true.
  std::function<bool()> may_bind;
  // Preemption marks victims with the DisruptionTarget condition before deleting them
  // (API servers from 1.26 on).
  bool disruption_target_condition = false;
  // The decision log behind /debug/pods: how many scheduled pods it remembers; 0 turns
  // it off (no verdicts are kept or summarised).
  size_t explain_records = 1000;
  // Binds sent to the API server and not yet answered, past which the scheduling thread
  // waits for answers before it takes the next pod; 0: no bound (see WaitForBindRoom).
  size_t max_binds_sent = 1000;
  // --stuck-after: unschedulable this long with the same verdict is stuck.
  Clock::duration stuck_after = std::chrono::minutes(10);
  // How often stuck pods are looked for (each gets one SchedulingStuck event).
  Clock::duration stuck_check_period = std::chrono::seconds(10);
  // Called once per attempt when it has ended: after a bind succeeded (on the thread
  // that finished the binding cycle), or after a failure was handled and the pod
  // requeued (not for a pod that was deleted or bound meanwhile). `ksched simulate`
  // follows its pods with it. Must be quick.
  std::function<void(const AttemptReport&)> on_attempt;
  // The extenders to call, in place of those `config.extenders` describes (tests).
  // Empty: an HttpExtender for each configured one.
  std::vector<std::unique_ptr<framework::Extender>> extenders;
};

class Scheduler {
 public:
  static StatusOr<std::unique_ptr<Scheduler>> New(SchedulerOptions options);
  ~Scheduler();

  informers::EventHandler<api::Pod>& pod_handler() { return *pod_handler_; }
  informers::EventHandler<api::Node>& node_handler() { return *node_handler_; }
  // Adds the handlers that turn storage changes into cluster events (before the
  // informers start).
  void WatchStorage(informers::StorageListers& storage);
  // The same for the resource.k8s.io informers (DynamicResources' events).
  void WatchResources(informers::ResourceListers& resources);
  // Whether a profile enables Coscheduling (then PodGroups are watched).
  bool UsesPodGroups() const;
  // PodGroup adds and updates as cluster events, and the group member index with the
  // handler that wakes a group's members once it has enough pods, both on `pods`. Call it
  // before adding pod_handler() to `pods`, so a pod's PreFilter always counts the pod
  // itself among its group.
  void WatchPodGroups(informers::PodInformer& pods, informers::PodGroupListers& groups);

  // Starts the queue's flush loops and the scheduling thread. Call once the informers
  // have synced.
  void Run();
  // Stops popping, waits up to `grace` for in-flight binding cycles, closes the queue.
  void Stop(std::chrono::milliseconds grace = std::chrono::seconds(30));

  // One iteration of the scheduling loop (blocks in Pop). Exposed for tests.
  void ScheduleOne();
  // Blocks while max_binds_sent binds await their answers (or until Stop).
  void WaitForBindRoom() EXCLUDES(bind_mu_);

  queue::SchedulingQueue& queue() { return *queue_; }
  cache::Cache& cache() { return *cache_; }
  framework::runtime::Framework* FrameworkFor(std::string_view scheduler_name) const;
  // The decision log (/debug/pods, ksched_stuck_pods); null when explain_records is 0.
  explain::DecisionLog* decisions() { return decisions_.get(); }
  // Looks for newly stuck pods and sends each its SchedulingStuck event (the stuck loop
  // calls it every stuck_check_period; exposed for tests).
  void ReportStuckPods();
  bool IsResponsibleFor(const api::Pod& pod) const;
  // Pods whose binding cycle has not finished.
  size_t BindsInFlight() const EXCLUDES(bind_mu_) {
    MutexLock lock(bind_mu_);
    return binds_in_flight_;
  }

 private:
  explicit Scheduler(SchedulerOptions options);

  struct Attempt;  // one pod's scheduling attempt, carried into the binding cycle
  // extenders_ from SchedulerOptions::extenders, or from the configuration.
  Status BuildExtenders();
  static std::vector<config::KubeSchedulerProfile> ProfilesWithExtendersIgnoredResources(
      const config::KubeSchedulerConfiguration& cfg);
  void StartBindingCycle(std::unique_ptr<Attempt> attempt) EXCLUDES(bind_mu_);
  void BindingCycle(std::unique_ptr<Attempt> attempt);
  void BindAsync(std::unique_ptr<Attempt> attempt);
  // The leadership gate before a bind goes out (SchedulerOptions::may_bind).
  framework::Status CheckMayBind() const;
  // The extender that binds this pod instead of the Bind plugins, if any (upstream
  // extendersBinding: a binder interested in the pod).
  framework::Extender* BindingExtender(const api::Pod& pod) const;
  // The Bind plugins' bind, or the binding extender's (an ignorable one that fails
  // leaves it to the plugins).
  framework::Status Bind(Attempt& attempt);
  void FinishBindingCycle(std::unique_ptr<Attempt> attempt, framework::Status s) EXCLUDES(bind_mu_);
  // After a bind that failed with an error (not a rejection): whether it went through
  // anyway (a lost answer, a 409 for our own earlier bind), read back from the API
  // server. The pod stays assumed meanwhile, so its node is never offered twice.
  framework::Status ResolveBindOutcome(const Attempt& attempt, const framework::Status& failed);
  void BindingSucceeded(Attempt& attempt);
  // Waits until no binding cycle is in flight, at most `timeout`; false on timeout.
  bool WaitForBinds(std::chrono::milliseconds timeout) EXCLUDES(bind_mu_);
  // Upstream's handleSchedulingFailure: condition, event, requeue.
  // `nomination`: what PostFilter decided about the pod's nominated node (nullopt: leave
  // it), applied after the pod is requeued and written with the condition.
  void HandleFailure(Attempt& attempt, const framework::Status& status,
                     const framework::runtime::FitError* fit_error,
                     const std::optional<std::string>& nomination = std::nullopt);
  void HandleBindingFailure(std::unique_ptr<Attempt> attempt, const framework::Status& status);
  void UndoAssume(Attempt& attempt);
  // Whether the profile can allocate a pod's ResourceClaims (it runs DynamicResources).
  bool AllocatesResourceClaims(framework::runtime::Framework& fwk) const;
  void ObserveAttempt(std::string_view result, const Attempt& attempt);
  bool SamplePluginMetrics();
  // Hands a failed attempt to the decision log (`victims`: what its preemption evicted).
  void RecordFailure(const Attempt& attempt, const framework::Status& status,
                     const framework::runtime::FitError* fit_error, const std::optional<std::string>& nomination,
                     std::vector<std::string> victims);

  SchedulerOptions options_;
  Clock& clock_;
  std::unique_ptr<ApiWriter> writer_;
  std::unique_ptr<Preemptor> preemptor_;
  std::unique_ptr<cache::Cache> cache_;
  std::unique_ptr<queue::SchedulingQueue> queue_;
  std::unique_ptr<framework::runtime::Parallelizer> parallelizer_;
  std::unique_ptr<queue::NominatorView> nominator_view_;
  // Before the frameworks, which hold pointers to them.
  std::vector<std::unique_ptr<framework::Extender>> extenders_;
  std::map<std::string, std::unique_ptr<framework::runtime::Framework>, std::less<>> frameworks_;
  std::unique_ptr<informers::EventHandler<api::Pod>> pod_handler_;
  std::unique_ptr<informers::EventHandler<api::Node>> node_handler_;
  std::unique_ptr<informers::EventHandler<api::PersistentVolumeClaim>> claim_handler_;
  std::unique_ptr<informers::EventHandler<api::PersistentVolume>> volume_handler_;
  std::unique_ptr<informers::EventHandler<api::StorageClass>> storage_class_handler_;
  std::unique_ptr<informers::EventHandler<api::CSINode>> csi_node_handler_;
  std::unique_ptr<informers::EventHandler<api::CSIDriver>> csi_driver_handler_;
  std::unique_ptr<informers::EventHandler<api::ResourceClaim>> resource_claim_handler_;
  std::unique_ptr<informers::EventHandler<api::ResourceSlice>> resource_slice_handler_;
  std::unique_ptr<informers::EventHandler<api::DeviceClass>> device_class_handler_;
  std::unique_ptr<informers::EventHandler<api::PodGroup>> pod_group_handler_;
  std::unique_ptr<informers::EventHandler<api::Pod>> gang_member_handler_;
  std::unique_ptr<explain::DecisionLog> decisions_;

  // Owned by the scheduling thread.
  cache::Snapshot snapshot_;
  framework::runtime::SchedulingAlgorithm algorithm_;

  std::unique_ptr<WorkerPool> binding_pool_;
  mutable Mutex bind_mu_;
  size_t binds_in_flight_ GUARDED_BY(bind_mu_) = 0;
  std::condition_variable_any binds_idle_;
  size_t binds_sent_ GUARDED_BY(bind_mu_) = 0;  // asynchronous binds awaiting the API server
  std::condition_variable_any bind_room_;
  std::atomic<bool> stopping_{false};
  std::thread loop_;
  std::jthread stuck_loop_;
};

}  // namespace ksched::scheduler
