// scheduleOne: the story of one pod, from Pop to an asynchronous bind.
#include <algorithm>
#include <random>
#include <thread>
#include <variant>

#include "pkg/scheduler/scheduler.h"
#include "pkg/util/log.h"

namespace ksched::scheduler {

using framework::Code;
using framework::runtime::FitError;
using framework::runtime::ScheduleResult;

// One attempt: the popped pod, its cycle state and, once assumed, where it goes.
struct Scheduler::Attempt {
  queue::QueuedPodInfoPtr info;
  framework::runtime::Framework* fwk = nullptr;
  std::unique_ptr<framework::CycleState> state;
  api::PodPtr assumed;  // the pod with spec.nodeName set, once assumed
  std::string host;
  Clock::time_point start;
  // What the algorithm found (the decision log's record of a placement).
  ScheduleResult result;
  int num_nodes = 0;
  bool bind_sent = false;  // a Bind plugin ran: a failure may still have bound the pod
  // Released from Permit unbound (a timeout, or a gang sibling's failure): the pod fitted
  // when it was assumed, so it retries after its backoff rather than waiting for a
  // cluster event its rejecting plugin registered (upstream waits for one: with
  // Coscheduling a pod add anywhere, or the unschedulable-pods flush in a quiet cluster,
  // where a gang whose members were all released together would wait minutes).
  bool released_from_permit = false;

  const api::Pod& pod() const { return info->pod(); }
};

// One API server binds a few thousand pods a second at most, and the scheduling thread
// decides faster than that, so without a bound it runs ahead: at 15,000 nodes, 23,000
// binds were queued at once, each holding its attempt, request and assumed pod (130 MB
// in all). The client sends 200 requests at a time, so a thousand waiting keep the
// server as busy as any number would; past that the thread waits for answers, and the
// pod it takes next is decided on a cache that has seen them. Binding cycles that wait
// at Permit or run PreBind are not counted: a gang waiting at Permit for its last
// members must not keep them from being scheduled.
void Scheduler::WaitForBindRoom() {
  if (options_.max_binds_sent == 0) return;
  MutexLock lock(bind_mu_);
  bind_room_.wait(lock, [this]() NO_THREAD_SAFETY_ANALYSIS {
    return binds_sent_ < options_.max_binds_sent || stopping_.load();
  });
}

void Scheduler::ScheduleOne() {
  WaitForBindRoom();
  auto attempt = std::make_unique<Attempt>();
  attempt->info = queue_->Pop();
  if (!attempt->info) return;  // closed
  attempt->start = clock_.Now();
  const api::Pod& pod = attempt->pod();

  attempt->fwk = FrameworkFor(pod.spec.scheduler_name);
  if (!attempt->fwk) {
    KLOG(ERROR) << "no profile for schedulerName \"" << pod.spec.scheduler_name << "\", pod=\"" << pod.Key() << "\"";
    queue_->Done(pod);
    return;
  }
  // A pod being deleted, or one already assumed (its bind is in flight), is not scheduled.
  if (pod.IsBeingDeleted() || cache_->IsAssumedPod(pod)) {
    KLOG_V(3) << "Skip schedule deleting/assumed pod, pod=\"" << pod.Key() << "\"";
    queue_->Done(pod);
    return;
  }
  KLOG_V(3) << "Attempting to schedule pod, pod=\"" << pod.Key() << "\"";

  framework::runtime::Framework& fwk = *attempt->fwk;
  attempt->state = std::make_unique<framework::CycleState>();
  // A pod with ResourceClaims runs only where its claims are allocated and reserved for
  // it. Without the DynamicResources plugin nothing here can do that, and a pod bound
  // anyway would never start on its node: it stays unschedulable and says why.
  if (!pod.spec.resource_claims.empty() && !AllocatesResourceClaims(fwk)) {
    HandleFailure(*attempt,
                  framework::Status(Code::kUnschedulableAndUnresolvable,
                                    "pod uses ResourceClaims, which this profile cannot allocate")
                      .WithPlugin("DynamicResources"),
                  nullptr);
    return;
  }
  attempt->state->record_plugin_metrics = SamplePluginMetrics();
  if (auto s = cache_->UpdateSnapshot(snapshot_); !s.ok()) {
    HandleFailure(*attempt, framework::Status::FromError(s), nullptr);
    return;
  }
  auto algo_start = clock_.Now();
  attempt->num_nodes = static_cast<int>(snapshot_.NumNodes());
  auto outcome = algorithm_.SchedulePod(fwk, *attempt->state, pod, snapshot_);
  // What follows (assume, the bind's dispatch, the next Pop) outlasts the workers' spin.
  fwk.parallelizer().Park();
  if (options_.metrics)
    options_.metrics->ObserveAlgorithm(std::chrono::duration<double>(clock_.Now() - algo_start).count());

  if (auto* fit = std::get_if<FitError>(&outcome)) {
    // No node fits: PostFilter (e.g. preemption) may nominate one for a later attempt.
    std::optional<std::string> nomination;
    if (fwk.HasPostFilterPlugins()) {
      auto [result, pf] = fwk.RunPostFilterPlugins(*attempt->state, pod, fit->diagnosis);
      // Preemption's dry runs woke the workers again; the failure handling that follows
      // outlasts their spin too.
      fwk.parallelizer().Park();
      nomination = std::move(result.nominated_node_name);
      attempt->info->awaiting_preemption = result.awaiting_victims;
      if (!pf.IsSuccess()) fit->post_filter_message = pf.Message();
    }
    HandleFailure(*attempt, framework::Status(Code::kUnschedulable, fit->Message()), fit, nomination);
    return;
  }
  if (auto* err = std::get_if<framework::Status>(&outcome)) {
    HandleFailure(*attempt, *err, nullptr);
    return;
  }
  attempt->result = std::move(std::get<ScheduleResult>(outcome));
  attempt->host = attempt->result.suggested_host;

  // Assume: the cache counts the pod on its node now, so the next cycle sees it,
  // while the bind is still in flight.
  auto assumed = std::make_shared<api::Pod>(pod);
  assumed->spec.node_name = attempt->host;
  attempt->assumed = assumed;
  if (auto s = cache_->AssumePod(assumed); !s.ok()) {
    HandleFailure(*attempt, framework::Status::FromError(s), nullptr);
    return;
  }
  // Its nomination (from an earlier preemption) is spent: the pod now counts on a node.
  queue_->nominator().DeleteNominatedPodIfExists(pod);
  if (auto s = fwk.RunReservePluginsReserve(*attempt->state, pod, attempt->host); !s.IsSuccess()) {
    UndoAssume(*attempt);
    HandleFailure(*attempt, s, nullptr);
    return;
  }
  if (auto s = fwk.RunPermitPlugins(*attempt->state, pod, attempt->host); !s.IsSuccess() && !s.IsWait()) {
    UndoAssume(*attempt);
    HandleFailure(*attempt, s, nullptr);
    return;
  }
  attempt->state->DropSchedulingOnlyData();
  StartBindingCycle(std::move(attempt));
}

// The binding cycle never holds up the scheduling thread. Its blocking parts (waiting at
// Permit, PreBind plugins, a bind plugin that cannot bind asynchronously) run on a
// worker; the bind itself is an asynchronous request whenever the plugins allow it, so
// in the default profile no thread waits for the API server at all.
void Scheduler::StartBindingCycle(std::unique_ptr<Attempt> attempt) {
  {
    MutexLock lock(bind_mu_);
    ++binds_in_flight_;
  }
  framework::runtime::Framework& fwk = *attempt->fwk;
  if (fwk.CanBindAsync() && !fwk.PreBindNeeded(*attempt->state, attempt->pod(), attempt->host) &&
      !fwk.GetWaitingPod(attempt->pod().metadata.uid) && BindingExtender(attempt->pod()) == nullptr) {
    BindAsync(std::move(attempt));
    return;
  }
  binding_pool_->Submit([this, a = attempt.release()] { BindingCycle(std::unique_ptr<Attempt>(a)); });
}

// On a binding worker.
void Scheduler::BindingCycle(std::unique_ptr<Attempt> attempt) {
  framework::runtime::Framework& fwk = *attempt->fwk;
  const api::Pod& pod = attempt->pod();
  framework::Status s = fwk.WaitOnPermit(pod);
  attempt->released_from_permit = s.IsRejected();
  if (s.IsSuccess()) s = fwk.RunPreBindPlugins(*attempt->state, pod, attempt->host);
  if (s.IsSuccess() && fwk.CanBindAsync() && BindingExtender(pod) == nullptr) {
    BindAsync(std::move(attempt));
    return;
  }
  if (s.IsSuccess()) s = CheckMayBind();
  if (s.IsSuccess()) {
    attempt->bind_sent = true;
    s = Bind(*attempt);
  }
  FinishBindingCycle(std::move(attempt), s);
}

framework::Extender* Scheduler::BindingExtender(const api::Pod& pod) const {
  for (const auto& e : extenders_) {
    if (e->IsBinder() && e->IsInterested(pod)) return e.get();
  }
  return nullptr;
}

framework::Status Scheduler::Bind(Attempt& attempt) {
  const api::Pod& pod = attempt.pod();
  for (const auto& e : extenders_) {
    if (!e->IsBinder() || !e->IsInterested(pod)) continue;
    Status s = e->Bind(pod, attempt.host);
    if (s.ok()) return framework::Status();
    if (e->IsIgnorable()) {
      KLOG(WARNING) << "Skipping extender in bind as it returned error and has ignorable flag set, extender=\""
                    << e->Name() << "\" pod=\"" << pod.Key() << "\" err=\"" << s.message() << "\"";
      continue;
    }
    return framework::Status::Error(s.message());
  }
  return attempt.fwk->RunBindPlugins(*attempt.state, pod, attempt.host);
}

framework::Status Scheduler::CheckMayBind() const {
  if (!options_.may_bind || options_.may_bind()) return framework::Status();
  return framework::Status(framework::Code::kError,
                           "not binding: this replica no longer holds a fresh leader election lease");
}

void Scheduler::BindAsync(std::unique_ptr<Attempt> attempt) {
  if (framework::Status gate = CheckMayBind(); !gate.IsSuccess()) {
    binding_pool_->Submit([this, a = attempt.release(), gate] { FinishBindingCycle(std::unique_ptr<Attempt>(a), gate); });
    return;
  }
  attempt->bind_sent = true;
  {
    MutexLock lock(bind_mu_);
    ++binds_sent_;
  }
  Attempt* a = attempt.release();  // owned by the completion below
  a->fwk->RunBindPluginsAsync(*a->state, a->pod(), a->host, [this, a](framework::Status s) {
    {
      MutexLock lock(bind_mu_);
      if (--binds_sent_ + 1 >= options_.max_binds_sent) bind_room_.notify_one();
    }
    // On the API client's I/O thread: the success path is a few cache and queue
    // updates; failures and PostBind plugins go to a worker.
    if (s.IsSuccess() && !a->fwk->HasPostBindPlugins()) {
      FinishBindingCycle(std::unique_ptr<Attempt>(a), s);
      return;
    }
    binding_pool_->Submit([this, a, s] { FinishBindingCycle(std::unique_ptr<Attempt>(a), s); });
  });
}

void Scheduler::FinishBindingCycle(std::unique_ptr<Attempt> attempt, framework::Status s) {
  if (!s.IsSuccess() && s.code() == framework::Code::kError && attempt->bind_sent) s = ResolveBindOutcome(*attempt, s);
  if (s.IsSuccess()) {
    BindingSucceeded(*attempt);
  } else {
    HandleBindingFailure(std::move(attempt), s);
  }
  MutexLock lock(bind_mu_);
  if (--binds_in_flight_ == 0) binds_idle_.notify_all();
}

// Upstream forgets the assumed pod on any bind error; when the bind went through anyway
// (the answer was lost with the connection, or a retry met our own earlier bind as 409
// "already assigned"), the node looks free until the watch reports the pod, and the
// scheduler can fill it twice. So ksched asks the API server first, keeping the pod
// assumed until it knows: bound to our node is a success; unassigned, gone, replaced or
// bound elsewhere is the failure it seemed. If the API server cannot be asked, ask again
// (backing off to 10 s) rather than guess; shutdown stops the asking.
framework::Status Scheduler::ResolveBindOutcome(const Attempt& attempt, const framework::Status& failed) {
  const api::Pod& pod = attempt.pod();
  // Gone or replaced in the informer: whatever the bind did, this pod holds no node (a
  // bind cancelled before it was sent ends here without a read).
  if (options_.pod_lister) {
    api::PodPtr known = options_.pod_lister(pod.Key());
    if (!known || known->metadata.uid != pod.metadata.uid) return failed;
  }
  auto backoff = std::chrono::milliseconds(500);
  while (!stopping_.load()) {
    StatusOr<api::PodPtr> now = writer_->GetPod(pod);
    if (now.ok()) {
      const api::Pod& current = **now;
      if (current.metadata.uid == pod.metadata.uid && current.spec.node_name == attempt.host) {
        KLOG(INFO) << "Bind reported \"" << failed.Message() << "\" but the pod is bound to node \"" << attempt.host
                   << "\", pod=\"" << pod.Key() << "\"";
        return framework::Status::Success();
      }
      return failed;
    }
    if (now.status().code() == StatusCode::kNotFound || now.status().code() == StatusCode::kInvalidArgument) {
      return failed;
    }
    KLOG(WARNING) << "Cannot tell whether pod \"" << pod.Key() << "\" was bound to node \"" << attempt.host
                  << "\" (" << now.status().ToString() << "); keeping it assumed, asking again in " << backoff.count()
                  << "ms";
    for (auto slept = std::chrono::milliseconds(0); slept < backoff && !stopping_.load();
         slept += std::chrono::milliseconds(50)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    backoff = std::min(backoff * 2, std::chrono::milliseconds(10000));
  }
  return failed;
}

// Upstream's success tail of the binding cycle: the assumed pod is confirmed, the pod
// leaves the in-flight set, metrics, the Scheduled event, PostBind.
void Scheduler::BindingSucceeded(Attempt& attempt) {
  framework::runtime::Framework& fwk = *attempt.fwk;
  const api::Pod& pod = attempt.pod();
  (void)cache_->FinishBinding(*attempt.assumed);
  queue_->Done(pod);
  ObserveAttempt("scheduled", attempt);
  if (options_.metrics)
    options_.metrics->ObservePodScheduled(
        attempt.info->attempts,
        std::chrono::duration<double>(clock_.Now() - attempt.info->initial_attempt_timestamp).count());
  KLOG_V(2) << "Successfully bound pod to node, pod=\"" << pod.Key() << "\" node=\"" << attempt.host << "\"";
  writer_->RecordEvent(pod, fwk.ProfileName(), /*warning=*/false, "Scheduled", "Binding",
                       "Successfully assigned " + pod.Key() + " to " + attempt.host);
  if (decisions_) {
    decisions_->RecordPlacement({.pod = attempt.info->pod_ptr(),
                                 .profile = fwk.ProfileName(),
                                 .attempts = attempt.info->attempts,
                                 .time = clock_.Now(),
                                 .node = attempt.host,
                                 .nodes = attempt.num_nodes,
                                 .feasible_nodes = attempt.result.feasible_nodes,
                                 .evaluated_nodes = attempt.result.evaluated_nodes,
                                 .top_nodes = std::move(attempt.result.top_nodes)});
  }
  fwk.RunPostBindPlugins(*attempt.state, pod, attempt.host);
  if (options_.on_attempt) options_.on_attempt({.pod = attempt.info->pod_ptr(), .scheduled = true, .node = attempt.host});
}

// Undoes Reserve and Assume: the one cleanup for every failure after the pod was assumed.
void Scheduler::UndoAssume(Attempt& attempt) {
  attempt.fwk->RunReservePluginsUnreserve(*attempt.state, attempt.pod(), attempt.host);
  if (auto s = cache_->ForgetPod(*attempt.assumed); !s.ok())
    KLOG(ERROR) << "scheduler cache ForgetPod failed, pod=\"" << attempt.pod().Key() << "\": " << s.message();
}

// Every binding-cycle failure cleans up the same way: Unreserve, Forget, wake the pods
// that the assumed pod was crowding out, then the failure handler.
//
// As upstream's handleBindingCycleError: after a rejection the move comes after the
// failure handler has requeued the pod, so that the pod's own AssignedPodDelete is not
// recorded as an event during its attempt (it would move the pod straight back whatever
// the plugins' hints say); the pre-check then leaves the pod itself out. After an error
// the pod backs off anyway, so the move comes first and covers everyone.
void Scheduler::HandleBindingFailure(std::unique_ptr<Attempt> attempt, const framework::Status& status) {
  UndoAssume(*attempt);
  const api::PodPtr assumed = attempt->assumed;
  if (!status.IsRejected()) {
    queue_->MoveAllToActiveOrBackoffQueue(framework::kAssignedPodDelete, assumed, nullptr);
    HandleFailure(*attempt, status, nullptr);
    return;
  }
  HandleFailure(*attempt, status, nullptr);
  const std::string uid = assumed->metadata.uid;
  queue_->MoveAllToActiveOrBackoffQueue(framework::kAssignedPodDelete, assumed, nullptr,
                                        [uid](const api::Pod& p) { return p.metadata.uid != uid; });
}

void Scheduler::HandleFailure(Attempt& attempt, const framework::Status& status, const FitError* fit_error,
                              const std::optional<std::string>& nomination) {
  // Pinned: the queued info (and the pod version in it) is handed back to the queue below.
  const api::PodPtr original = attempt.info->pod_ptr();
  const api::Pod& pod = *original;
  const bool rejected = status.IsRejected();
  const std::string reason = rejected ? "Unschedulable" : "SchedulerError";
  const std::string message = status.Message();
  ObserveAttempt(rejected ? "unschedulable" : "error", attempt);
  // Taken whatever happens next, so the preemptor keeps nothing for a pod that is gone.
  std::vector<std::string> victims;
  if (fit_error && preemptor_) victims = preemptor_->TakeVictims(pod.metadata.uid);

  auto& info = *attempt.info;
  info.unschedulable_plugins.clear();
  info.pending_plugins.clear();
  if (fit_error) {
    info.unschedulable_plugins = fit_error->unschedulable_plugins;
    info.pending_plugins = fit_error->pending_plugins;
  } else if (rejected && !status.plugin().empty() && !attempt.released_from_permit) {
    (status.code() == Code::kPending ? info.pending_plugins : info.unschedulable_plugins).insert(status.plugin());
  }
  if (rejected) {
    KLOG_V(2) << "Unable to schedule pod; no fit; waiting, pod=\"" << pod.Key() << "\" err=\"" << message << "\"";
  } else {
    KLOG(ERROR) << "Error scheduling pod; retrying, pod=\"" << pod.Key() << "\" err=\"" << message << "\"";
  }

  // Requeue the newest version of the pod, unless it is gone or was bound meanwhile
  // (e.g. our bind timed out on the client but succeeded).
  api::PodPtr current = options_.pod_lister ? options_.pod_lister(pod.Key()) : original;
  const bool gone = !current || current->metadata.uid != pod.metadata.uid;
  std::optional<AttemptReport> report;  // for on_attempt, once the pod is requeued
  if (gone) {
    KLOG_V(3) << "Pod doesn't exist in informer cache, pod=\"" << pod.Key() << "\"";
    queue_->Done(pod);
  } else if (current->IsAssigned()) {
    KLOG_V(3) << "Pod has been assigned to node. Abort adding it back to queue., pod=\"" << pod.Key() << "\"";
    queue_->Done(pod);
  } else {
    info.pod_info.Update(current);
    if (options_.on_attempt) {
      report = AttemptReport{.pod = current, .message = message, .error = !rejected, .nomination = nomination,
                             .victims = victims};
    }
    // Recorded while the pod is still in flight, before the queue has it back.
    RecordFailure(attempt, status, fit_error, nomination, std::move(victims));
    if (auto s = queue_->AddUnschedulableIfNotPresent(std::move(attempt.info)); !s.ok())
      KLOG(ERROR) << "Error occurred while requeueing pod, pod=\"" << pod.Key() << "\": " << s.message();
    // After the requeue, as upstream's handleSchedulingFailure: the nomination stands
    // from now on, and filters count the pod on that node.
    if (nomination)
      queue_->nominator().AddNominatedPod(current, {.mode = queue::NominatingInfo::Mode::kOverride,
                                                    .node_name = *nomination});
  }
  if (gone || current->IsAssigned()) return;
  writer_->RecordEvent(*current, attempt.fwk->ProfileName(), /*warning=*/true, "FailedScheduling", "Scheduling",
                       message);
  // The nominated node is written with the condition when it changes.
  std::optional<std::string> write_nomination;
  if (nomination && *nomination != current->status.nominated_node_name) write_nomination = nomination;
  writer_->PatchPodScheduledFalse(*current, reason, message, write_nomination);
  if (report) options_.on_attempt(*report);
}

void Scheduler::RecordFailure(const Attempt& attempt, const framework::Status& status, const FitError* fit_error,
                              const std::optional<std::string>& nomination, std::vector<std::string> victims) {
  if (!decisions_) return;
  const framework::QueuedPodInfo& info = *attempt.info;
  explain::Failure f{.pod = info.pod_ptr(),
                     .profile = attempt.fwk->ProfileName(),
                     .attempts = info.attempts,
                     .time = attempt.start,
                     .message = status.Message(),
                     .error = !status.IsRejected(),
                     .nodes = attempt.num_nodes,
                     .summary = fit_error && fit_error->summary ? &*fit_error->summary : nullptr,
                     .nomination = nomination,
                     .victims = std::move(victims)};
  for (const std::string& p : info.unschedulable_plugins) f.rejected_by.push_back(p);
  for (const std::string& p : info.pending_plugins) f.rejected_by.push_back(p);
  decisions_->RecordFailure(f);
}

bool Scheduler::AllocatesResourceClaims(framework::runtime::Framework& fwk) const {
  for (const auto& [point, plugins] : fwk.ListPlugins()) {
    if (std::find(plugins.begin(), plugins.end(), "DynamicResources") != plugins.end()) return true;
  }
  return false;
}

// Upstream records per-plugin durations in a random 10% of the cycles.
bool Scheduler::SamplePluginMetrics() {
  if (!options_.framework_metrics) return false;
  thread_local std::minstd_rand rng(std::random_device{}());
  return static_cast<int>(rng() % 100) < framework::runtime::kPluginMetricsSamplePercent;
}

void Scheduler::ObserveAttempt(std::string_view result, const Attempt& attempt) {
  if (options_.metrics)
    options_.metrics->ObserveAttempt(result, attempt.fwk ? attempt.fwk->ProfileName() : "",
                                     std::chrono::duration<double>(clock_.Now() - attempt.start).count());
}

}  // namespace ksched::scheduler
