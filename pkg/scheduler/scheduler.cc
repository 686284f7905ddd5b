#include "pkg/scheduler/scheduler.h"

#include <algorithm>

#include "config/effective_plugins.h"
#include "config/defaults.h"
#include "pkg/api/json.h"
#include "pkg/extender/http_extender.h"
#include "pkg/scheduler/event_handlers.h"
#include "pkg/util/log.h"
#include "pkg/util/thread_name.h"

namespace ksched::scheduler {
Scheduler::Scheduler(SchedulerOptions options)
    : options_(std::move(options)),
      clock_(*options_.clock),
      algorithm_(framework::runtime::SchedulingAlgorithmOptions{.seed = options_.seed,
                                                                 .explain = options_.explain_records > 0}) {}

Scheduler::~Scheduler() {
  Stop(std::chrono::seconds(0));
  // Asynchronous binds call back into this object: wait for them (each ends within the
  // client's request timeout, with an error if the client shuts down).
  WaitForBinds(std::chrono::milliseconds::max());
  if (preemptor_) preemptor_->WaitIdle();
}

StatusOr<std::unique_ptr<Scheduler>> Scheduler::New(SchedulerOptions options) {
  if (!options.bind_client || !options.status_client) return InvalidArgument("scheduler: API clients are required");
  std::unique_ptr<Scheduler> s(new Scheduler(std::move(options)));
  const config::KubeSchedulerConfiguration& cfg = s->options_.config;
  s->writer_ = std::make_unique<ApiWriter>(ApiWriterOptions{.bind_client = s->options_.bind_client,
                                                            .status_client = s->options_.status_client,
                                                            .clock = &s->clock_,
                                                            .hostname = s->options_.hostname,
                                                            .disruption_target_condition =
                                                                s->options_.disruption_target_condition,
                                                            .pod_lister = s->options_.pod_lister});
  s->preemptor_ = std::make_unique<Preemptor>(*s->writer_, s->options_.metrics);
  s->cache_ = cache::NewCache();
  // `parallelism` bounds the Filter/Score workers. Upstream runs them as goroutines; as OS
  // threads, more workers than cores only add wake-ups and context switches.
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  s->parallelizer_ = std::make_unique<framework::runtime::Parallelizer>(std::min(cfg.parallelism, cores));
  s->nominator_view_ = std::make_unique<queue::NominatorView>();
  if (Status st = s->BuildExtenders(); !st.ok()) return st;

  queue::QueueOptions qopts;
  qopts.clock = &s->clock_;
  qopts.initial_backoff = std::chrono::seconds(cfg.pod_initial_backoff_seconds);
  qopts.max_backoff = std::chrono::seconds(cfg.pod_max_backoff_seconds);
  qopts.max_in_unschedulable = s->options_.pod_max_in_unschedulable;
  qopts.metrics = s->options_.queue_metrics;
  explain::DecisionLogOptions dopts{.clock = &s->clock_,
                                    .scheduled_records = s->options_.explain_records,
                                    .stuck_after = s->options_.stuck_after,
                                    .retry_after = s->options_.pod_max_in_unschedulable};
  std::vector<framework::Extender*> extenders;
  for (const auto& e : s->extenders_) extenders.push_back(e.get());
  for (const auto& profile : ProfilesWithExtendersIgnoredResources(cfg)) {
    framework::runtime::FrameworkOptions fopts;
    fopts.extenders = extenders;
    fopts.snapshot = &s->snapshot_;
    fopts.nominator = s->nominator_view_.get();
    fopts.binder = s->writer_.get();
    fopts.preemptor = s->preemptor_.get();
    fopts.lister = s->options_.cluster_lister;
    fopts.volumes = s->writer_.get();
    fopts.claims = s->writer_.get();
    fopts.parallelizer = s->parallelizer_.get();
    fopts.parallelism = cfg.parallelism;
    fopts.percentage_of_nodes_to_score = cfg.percentage_of_nodes_to_score;
    fopts.clock = &s->clock_;
    // The queue is made after the frameworks (it sorts with their QueueSort plugin).
    fopts.activate = [sched = s.get()](std::span<const api::PodPtr> pods) {
      if (sched->queue_) sched->queue_->ActivateQueued(pods);
    };
    if (s->options_.framework_metrics) fopts.metrics = s->options_.framework_metrics;
    auto fwk = framework::runtime::NewFramework(
        s->options_.registry, profile, fopts);
    if (!fwk.ok()) return fwk.status().WithContext("profile \"" + profile.scheduler_name + "\"");
    auto& f = **fwk;
    // PrioritySort is the queue's built-in (faster) order; any other sort plugin is used
    // through its Less. All profiles share one queue-sort plugin (config validation).
    auto sorts = f.ListPlugins()["QueueSort"];
    if (!qopts.less && !(sorts.size() == 1 && sorts[0] == "PrioritySort")) qopts.less = f.QueueSortLess();
    std::vector<framework::Plugin*> rejecting = f.RejectingPlugins();
    queue::ClusterEventMap events = queue::ClusterEventMap::FromPlugins(rejecting);
    auto& plugin_events = dopts.plugin_events[profile.scheduler_name];
    for (framework::Plugin* plugin : rejecting) {
      auto& names = plugin_events[std::string(plugin->Name())];
      for (const framework::ClusterEvent& e : events.EventsOf(plugin->Name()))
        names.push_back(framework::RegistrationName(e));
    }
    // A pod extenders turned away is retried on any event (the queue's WorthRequeuing).
    if (!s->extenders_.empty()) plugin_events[std::string(framework::kExtenderName)] = {"any cluster event"};
    qopts.profiles[profile.scheduler_name] = queue::QueueProfile{.pre_enqueue_plugins = f.PreEnqueuePlugins(),
                                                                 .cluster_event_map = std::move(events)};
    s->frameworks_.emplace(profile.scheduler_name, std::move(*fwk));
  }
  s->queue_ = queue::NewSchedulingQueue(std::move(qopts));
  s->nominator_view_->queue = s->queue_.get();
  s->preemptor_->SetQueue(s->queue_.get());
  if (s->options_.explain_records > 0) {
    queue::SchedulingQueue* q = s->queue_.get();
    dopts.queued_pods = [q] { return q->QueuedPods(); };
    dopts.queued_pod = [q](std::string_view key) { return q->QueuedPod(key); };
    s->decisions_ = std::make_unique<explain::DecisionLog>(std::move(dopts));
  }
  // The victims of each preemption, for the decision log and the attempt reports.
  if (s->decisions_ || s->options_.on_attempt) s->preemptor_->RecordVictims(true);

  Scheduler* self = s.get();
  s->pod_handler_ = std::make_unique<PodEventHandler>(
      *s->cache_, *s->queue_, [self](const api::Pod& p) { return self->IsResponsibleFor(p); },
      [self](const api::Pod& p) {
        auto* f = self->FrameworkFor(p.spec.scheduler_name);
        if (f != nullptr) f->RejectWaitingPod(p.metadata.uid, "", "removed");
        self->writer_->CancelBinds(p.metadata.uid);
      });
  s->node_handler_ = std::make_unique<NodeEventHandler>(*s->cache_, *s->queue_);
  s->binding_pool_ = std::make_unique<WorkerPool>(s->options_.binding_workers);
  return s;
}

Status Scheduler::BuildExtenders() {
  const config::KubeSchedulerConfiguration& cfg = options_.config;
  extenders_ = std::move(options_.extenders);
  if (extenders_.empty()) {
    for (size_t i = 0; i < cfg.extenders.size(); ++i) {
      extender::HttpExtenderOptions eo;
      if (options_.framework_metrics) eo.metrics = options_.framework_metrics;
      eo.clock = &clock_;
      eo.field_path = "extenders[" + std::to_string(i) + "]";
      eo.thread_name = "extender-" + std::to_string(i);
      auto e = extender::HttpExtender::New(cfg.extenders[i], std::move(eo));
      if (!e.ok()) return e.status();
      extenders_.push_back(std::move(*e));
    }
  }
  if (extenders_.empty()) return Status::OK();
  // Extenders are sent pods as the scheduler has them: their annotations are kept too
  // (many extenders read their own), for objects decoded from now on.
  api::RetainAnnotationKeys({"*"});
  if (options_.metrics) {
    options_.metrics->SetGoroutinesSource("prioritizing_extender", [] { return extender::PrioritizeCallsInFlight(); });
  }
  return Status::OK();
}

std::vector<config::KubeSchedulerProfile> Scheduler::ProfilesWithExtendersIgnoredResources(
    const config::KubeSchedulerConfiguration& cfg) {
  // upstream buildExtenders: the resources extenders manage with ignoredByScheduler
  // replace NodeResourcesFit's ignoredResources in every profile; the extender accounts
  // for them.
  std::vector<std::string> ignored;
  for (const config::Extender& e : cfg.extenders) {
    for (const config::ExtenderManagedResource& r : e.managed_resources) {
      if (r.ignored_by_scheduler) ignored.push_back(r.name);
    }
  }
  std::vector<config::KubeSchedulerProfile> profiles = cfg.profiles;
  if (ignored.empty()) return profiles;
  for (config::KubeSchedulerProfile& p : profiles) {
    for (config::PluginConfig& pc : p.plugin_config) {
      if (auto* fit = std::get_if<config::NodeResourcesFitArgs>(&pc.args)) fit->ignored_resources = ignored;
    }
  }
  return profiles;
}

framework::runtime::Framework* Scheduler::FrameworkFor(std::string_view scheduler_name) const {
  auto it = frameworks_.find(scheduler_name);
  return it == frameworks_.end() ? nullptr : it->second.get();
}

bool Scheduler::IsResponsibleFor(const api::Pod& pod) const { return frameworks_.count(pod.spec.scheduler_name) > 0; }

void Scheduler::WatchStorage(informers::StorageListers& storage) {
  namespace fw = framework;
  auto make = [this]<typename T>(std::unique_ptr<informers::EventHandler<T>>& slot, informers::Informer<T>& informer,
                                 const fw::ClusterEvent& add, const fw::ClusterEvent& update) {
    slot = std::make_unique<StorageEventHandler<T>>(*queue_, add, update);
    informer.AddHandler(slot.get());
  };
  make(claim_handler_, storage.claims(), fw::kPvcAdd, fw::kPvcUpdate);
  make(volume_handler_, storage.volumes(), fw::kPvAdd, fw::kPvUpdate);
  make(storage_class_handler_, storage.classes(), fw::kStorageClassAdd, fw::kStorageClassUpdate);
  make(csi_node_handler_, storage.csi_nodes(), fw::kCSINodeAdd, fw::kCSINodeUpdate);
  make(csi_driver_handler_, storage.csi_drivers(), fw::kCSIDriverAdd, fw::kCSIDriverUpdate);
}

void Scheduler::WatchResources(informers::ResourceListers& resources) {
  namespace fw = framework;
  auto make = [this]<typename T>(std::unique_ptr<informers::EventHandler<T>>& slot, informers::Informer<T>& informer,
                                 const fw::ClusterEvent& add, const fw::ClusterEvent& update) {
    slot = std::make_unique<StorageEventHandler<T>>(*queue_, add, update);
    informer.AddHandler(slot.get());
  };
  make(resource_claim_handler_, resources.claims(), fw::kResourceClaimAdd, fw::kResourceClaimUpdate);
  make(resource_slice_handler_, resources.slices(), fw::kResourceSliceAdd, fw::kResourceSliceUpdate);
  make(device_class_handler_, resources.classes(), fw::kDeviceClassAdd, fw::kDeviceClassUpdate);
}

bool Scheduler::UsesPodGroups() const {
  for (const auto& [name, fwk] : frameworks_) {
    for (const auto& [point, plugins] : fwk->ListPlugins()) {
      if (std::find(plugins.begin(), plugins.end(), "Coscheduling") != plugins.end()) return true;
    }
  }
  return false;
}

void Scheduler::WatchPodGroups(informers::PodInformer& pods, informers::PodGroupListers& groups) {
  pods.AddHandler(&groups.members());
  if (options_.cluster_lister != nullptr) {
    gang_member_handler_ = std::make_unique<GangMemberHandler>(*queue_, *options_.cluster_lister);
    pods.AddHandler(gang_member_handler_.get());
  }
  pod_group_handler_ =
      std::make_unique<StorageEventHandler<api::PodGroup>>(*queue_, framework::kPodGroupAdd, framework::kPodGroupUpdate);
  groups.informer().AddHandler(pod_group_handler_.get());
}

void Scheduler::Run() {
  queue_->Run();
  loop_ = std::thread([this] {
    SetThreadName("sched-loop");
    while (!stopping_.load()) ScheduleOne();
  });
  if (decisions_) {
    stuck_loop_ = std::jthread([this](std::stop_token stop) {
      SetThreadName("sched-stuck");
      while (clock_.SleepUntil(clock_.Now() + options_.stuck_check_period, stop)) ReportStuckPods();
    });
  }
}

void Scheduler::ReportStuckPods() {
  if (!decisions_) return;
  for (const explain::StuckPod& stuck : decisions_->Sweep()) {
    KLOG(WARNING) << "Pod is stuck, pod=\"" << stuck.pod->Key() << "\": " << stuck.reason;
    writer_->RecordEvent(*stuck.pod, stuck.profile, /*warning=*/true, "SchedulingStuck", "Scheduling", stuck.reason);
  }
}

void Scheduler::Stop(std::chrono::milliseconds grace) {
  if (stopping_.exchange(true)) return;
  {
    MutexLock lock(bind_mu_);
    bind_room_.notify_all();  // a scheduling thread waiting for bind answers moves on
  }
  if (stuck_loop_.joinable()) {
    stuck_loop_.request_stop();
    stuck_loop_.join();
  }
  if (queue_) queue_->Close();  // Pop returns nullptr; the loop exits
  if (loop_.joinable()) loop_.join();
  // Binding cycles waiting on others (VolumeBinding on the PV controller, for up to
  // bindTimeoutSeconds) give up rather than hold the exit.
  for (auto& [name, fwk] : frameworks_) fwk->RequestStop();
  if (!WaitForBinds(grace)) KLOG(WARNING) << BindsInFlight() << " binding cycle(s) still running at shutdown";
}

bool Scheduler::WaitForBinds(std::chrono::milliseconds timeout) {
  MutexLock lock(bind_mu_);
  auto idle = [this]() NO_THREAD_SAFETY_ANALYSIS { return binds_in_flight_ == 0; };
  if (timeout == std::chrono::milliseconds::max()) {
    binds_idle_.wait(lock, idle);
    return true;
  }
  return binds_idle_.wait_for(lock, timeout, idle);
}

}  // namespace ksched::scheduler
