#include "pkg/queue/priority_queue.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "pkg/framework/extender.h"
#include "pkg/queue/backoff.h"
#include "pkg/queue/pod_matching.h"
#include "pkg/util/log.h"

namespace ksched::queue {

using framework::QueuedPodInfo;

std::string_view SubQueueName(SubQueue q) {
  switch (q) {
    case SubQueue::kActive:
      return kActiveQueueName;
    case SubQueue::kBackoff:
      return kBackoffQueueName;
    case SubQueue::kUnschedulable:
      return kUnschedulableQueueName;
    case SubQueue::kNone:
      break;
  }
  return "none";
}

namespace {

// The sub-queues as upstream's code and docs name them (the metric labels are shorter).
std::string_view DebugQueueName(SubQueue q) {
  switch (q) {
    case SubQueue::kActive:
      return "activeQ";
    case SubQueue::kBackoff:
      return "backoffQ";
    case SubQueue::kUnschedulable:
      return "unschedulablePods";
    case SubQueue::kNone:
      break;
  }
  return "none";
}

}  // namespace

std::unique_ptr<SchedulingQueue> NewSchedulingQueue(QueueOptions options) {
  return std::make_unique<PriorityQueue>(std::move(options));
}

PriorityQueue::PriorityQueue(QueueOptions options)
    : options_(std::move(options)),
      clock_(*options_.clock),
      metrics_(options_.metrics != nullptr ? *options_.metrics : NoopQueueMetricsRecorder()),
      less_(options_.less ? options_.less : framework::LessFn(&framework::PriorityLess)),
      default_profile_{std::move(options_.pre_enqueue_plugins), std::move(options_.cluster_event_map)},
      active_(ActiveLess{options_.less ? &less_ : nullptr}) {
  metrics_.SetPendingPodsSource([this] { return PendingCounts(); });
}

PriorityQueue::~PriorityQueue() {
  Close();
  metrics_.SetPendingPodsSource(nullptr);
}

// ---- helpers ------------------------------------------------------------------------

std::string PriorityQueue::IdOf(const api::Pod& pod) {
  return pod.metadata.uid.empty() ? pod.Key() : pod.metadata.uid;
}

const QueueProfile& PriorityQueue::ProfileFor(const api::Pod& pod) const {
  if (!options_.profiles.empty()) {
    auto it = options_.profiles.find(pod.spec.scheduler_name);
    if (it != options_.profiles.end()) return it->second;
  }
  return default_profile_;
}

Clock::time_point PriorityQueue::BackoffExpiry(const QueuedPodInfo& info) const {
  return info.timestamp + BackoffDuration(info.attempts, options_.initial_backoff, options_.max_backoff);
}

bool PriorityQueue::IsBackingOff(const QueuedPodInfo& info, Clock::time_point now) const {
  // A gated pod has not been tried since it was gated; nothing to back off from.
  return !info.gated && BackoffExpiry(info) > now;
}

QueuedPodInfoPtr PriorityQueue::NewQueuedPodInfo(api::PodPtr pod) const {
  auto info = std::make_unique<QueuedPodInfo>(std::move(pod));
  info->timestamp = clock_.Now();
  info->initial_attempt_timestamp = info->timestamp;
  return info;
}

PriorityQueue::Entry* PriorityQueue::Find(std::string_view key) {
  auto it = pods_.find(key);
  return it == pods_.end() ? nullptr : &it->second;
}

PriorityQueue::Entry* PriorityQueue::Insert(QueuedPodInfoPtr info) {
  std::string_view key = info->Key();  // the entry's own info keeps this alive
  auto [it, inserted] = pods_.try_emplace(key);
  it->second.info = std::move(info);
  return &it->second;
}

QueuedPodInfoPtr PriorityQueue::Extract(Entry* e) {
  Detach(e);
  auto it = pods_.find(e->info->Key());
  QueuedPodInfoPtr info = std::move(it->second.info);
  pods_.erase(it);
  return info;
}

void PriorityQueue::Place(Entry* e, SubQueue q) {
  e->where = q;
  e->placed_at = clock_.Now();
  switch (q) {
    case SubQueue::kActive:
      e->priority = e->info->pod_info.priority;
      e->sort_timestamp = e->info->timestamp;
      active_.Push(e);
      break;
    case SubQueue::kBackoff:
      e->backoff_expiry = BackoffExpiry(*e->info);
      e->held = HeldInBackoff(*e->info);
      if (e->held) {
        backoff_held_.Push(e);
      } else {
        backoff_.Push(e);
        // An idle Pop may take it at once (QueueOptions::pop_from_backoff_q).
        if (options_.pop_from_backoff_q) cv_.notify_one();
      }
      break;
    case SubQueue::kUnschedulable:
      e->index = unschedulable_.size();
      unschedulable_.push_back(e);
      if (e->info->gated) ++gated_;
      break;
    case SubQueue::kNone:
      break;
  }
}

void PriorityQueue::Detach(Entry* e) {
  switch (e->where) {
    case SubQueue::kActive:
      active_.Remove(e);
      break;
    case SubQueue::kBackoff:
      (e->held ? backoff_held_ : backoff_).Remove(e);
      break;
    case SubQueue::kUnschedulable: {
      Entry* last = unschedulable_.back();
      unschedulable_[e->index] = last;
      last->index = e->index;
      unschedulable_.pop_back();
      if (e->info->gated) --gated_;
      break;
    }
    case SubQueue::kNone:
      break;
  }
  e->where = SubQueue::kNone;
}

SubQueue PriorityQueue::AddToActiveOrGate(Entry* e) {
  QueuedPodInfo& info = *e->info;
  for (framework::PreEnqueuePlugin* plugin : ProfileFor(info.pod()).pre_enqueue_plugins) {
    framework::Status s = plugin->PreEnqueue(info.pod());
    if (s.IsSuccess()) continue;
    if (s.code() == framework::Code::kError) {
      KLOG(ERROR) << "PreEnqueue plugin failed pod=\"" << info.Key() << "\" plugin=\"" << plugin->Name()
                  << "\" status=\"" << s.ToString() << "\"";
    } else {
      KLOG_V(4) << "Pod gated pod=\"" << info.Key() << "\" plugin=\"" << plugin->Name() << "\" status=\""
                << s.ToString() << "\"";
    }
    info.gated = true;
    info.gating_plugin = std::string(plugin->Name());
    info.unschedulable_plugins.emplace(plugin->Name());
    Place(e, SubQueue::kUnschedulable);
    return SubQueue::kUnschedulable;
  }
  info.gated = false;
  info.gating_plugin.clear();
  Place(e, SubQueue::kActive);
  return SubQueue::kActive;
}

bool PriorityQueue::ActivateFromBackoff(Entry* e) {
  e->where = SubQueue::kNone;
  if (AddToActiveOrGate(e) != SubQueue::kActive) return false;
  metrics_.IncomingPod(kActiveQueueName, kBackoffComplete);
  return true;
}

SubQueue PriorityQueue::Requeue(Entry* e, Strategy s, std::string_view event, Clock::time_point now) {
  SubQueue q;
  if (s == Strategy::kSkip) {
    Place(e, SubQueue::kUnschedulable);
    q = SubQueue::kUnschedulable;
  } else if (s == Strategy::kAfterBackoff && IsBackingOff(*e->info, now)) {
    Place(e, SubQueue::kBackoff);
    q = SubQueue::kBackoff;
  } else {
    q = AddToActiveOrGate(e);
    if (e->info->gated) return q;  // held by PreEnqueue: not an arrival in any queue
  }
  metrics_.IncomingPod(SubQueueName(q), event);
  KLOG_V(5) << "Pod moved to an internal scheduling queue pod=\"" << e->info->Key() << "\" event=\"" << event
            << "\" queue=\"" << SubQueueName(q) << "\"";
  return q;
}

// ---- requeue decisions ----------------------------------------------------------------

PriorityQueue::Strategy PriorityQueue::WorthRequeuing(const QueuedPodInfo& info,
                                                      const framework::ClusterEvent& event,
                                                      std::span<const RegisteredHint* const> hints,
                                                      const void* old_obj, const void* new_obj) const {
  // No plugin rejected it (an internal error): any event is worth a retry.
  if (info.unschedulable_plugins.empty() && info.pending_plugins.empty()) return Strategy::kAfterBackoff;
  // Someone wants every pod retried (timeouts, forced flushes).
  if (event.IsWildCard()) return Strategy::kAfterBackoff;
  // Extenders register no events: any may change their verdict.
  if (info.unschedulable_plugins.contains(framework::kExtenderName)) return Strategy::kAfterBackoff;
  Strategy result = Strategy::kSkip;
  for (const RegisteredHint* h : hints) {
    bool pending = info.pending_plugins.contains(h->plugin);
    if (!pending && !info.unschedulable_plugins.contains(h->plugin)) continue;
    framework::QueueingHint hint = framework::QueueingHint::kQueue;
    if (h->fn) {
      StatusOr<framework::QueueingHint> r = h->fn(info.pod(), old_obj, new_obj);
      if (r.ok()) {
        hint = *r;
      } else {
        // Queue on error: a broken hint must not strand the pod.
        KLOG(ERROR) << "QueueingHintFn returned an error pod=\"" << info.Key() << "\" plugin=\"" << h->plugin
                    << "\" event=\"" << event.label << "\" err=\"" << r.status().ToString() << "\"";
      }
    }
    if (hint == framework::QueueingHint::kSkip) continue;
    // Pending plugins wait for something outside the scheduler: retry at once.
    if (pending) return Strategy::kImmediately;
    if (info.pending_plugins.empty()) return Strategy::kAfterBackoff;
    result = Strategy::kAfterBackoff;  // a pending plugin may still say "immediately"
  }
  return result;
}

PriorityQueue::Strategy PriorityQueue::ReplayInFlightEvents(const QueuedPodInfo& info, const std::string& id) {
  const ClusterEventMap& map = ProfileFor(info.pod()).cluster_event_map;
  std::vector<const RegisteredHint*> hints;
  Strategy result = Strategy::kSkip;
  // An activation during the attempt wins, whatever came before it (an earlier event's
  // "after backoff" must not hide it).
  for (const InFlightEvent& e : in_flight_.EventsOf(id)) {
    if (e.force_activate) return Strategy::kImmediately;
  }
  // A pod not in flight has no events: it stays unschedulable until the next one.
  for (const InFlightEvent& e : in_flight_.EventsOf(id)) {
    hints.clear();
    map.MatchingHints(e.event, &hints);
    switch (WorthRequeuing(info, e.event, hints, e.old_obj.get(), e.new_obj.get())) {
      case Strategy::kSkip:
        break;
      case Strategy::kImmediately:
        return Strategy::kImmediately;
      case Strategy::kAfterBackoff:
        // A pending plugin may still say "immediately" on a later event.
        if (info.pending_plugins.empty()) return Strategy::kAfterBackoff;
        result = Strategy::kAfterBackoff;
        break;
    }
  }
  return result;
}

const std::vector<const RegisteredHint*>& PriorityQueue::HintCache::For(const QueueProfile& profile,
                                                                        const framework::ClusterEvent& event) {
  for (auto& [p, hints] : entries) {
    if (p == &profile) return hints;
  }
  entries.emplace_back(&profile, std::vector<const RegisteredHint*>());
  profile.cluster_event_map.MatchingHints(event, &entries.back().second);
  return entries.back().second;
}

bool PriorityQueue::AnyProfileInterested(const framework::ClusterEvent& event) const {
  if (default_profile_.cluster_event_map.IsEventOfInterest(event)) return true;
  for (const auto& [name, profile] : options_.profiles) {
    if (profile.cluster_event_map.IsEventOfInterest(event)) return true;
  }
  return false;
}

void PriorityQueue::MovePods(const std::vector<Entry*>& entries, const framework::ClusterEvent& event,
                             const void* old_obj, const void* new_obj) {
  Clock::time_point now = clock_.Now();
  HintCache cache;
  bool activated = false;
  for (Entry* e : entries) {
    // A gated pod is moved like any other (its gating plugin is among its rejectors, so
    // only that plugin's events or a wildcard one pass), and Requeue runs PreEnqueue
    // again: a gate lifted by something other than the pod's own update (or a transient
    // PreEnqueue error) does not hold the pod until the pod changes.
    Strategy s = WorthRequeuing(*e->info, event, cache.For(ProfileFor(e->info->pod()), event), old_obj, new_obj);
    if (s == Strategy::kSkip) continue;
    Detach(e);
    if (Requeue(e, s, event.label, now) == SubQueue::kActive) activated = true;
  }
  if (activated) cv_.notify_all();
}

void PriorityQueue::MoveAllLocked(const framework::ClusterEvent& event, std::shared_ptr<const void> old_obj,
                                  std::shared_ptr<const void> new_obj, const PreEnqueueCheck& pre_check) {
  // No plugin cares: skip the scan, and record nothing for in-flight pods.
  if (!AnyProfileInterested(event)) return;
  std::vector<Entry*> entries;
  entries.reserve(unschedulable_.size());
  for (Entry* e : unschedulable_) {
    if (!pre_check || pre_check(e->info->pod())) entries.push_back(e);
  }
  MovePods(entries, event, old_obj.get(), new_obj.get());
  in_flight_.Record(event, std::move(old_obj), std::move(new_obj), {}, false);
}

// ---- public API -----------------------------------------------------------------------

Status PriorityQueue::Add(api::PodPtr pod) {
  MutexLock lock(mu_);
  if (Entry* old = Find(pod->Key())) {
    // The informer adds a pod once; a stale entry would be a bug elsewhere. Keep one.
    KLOG(ERROR) << "Pod is already in the " << SubQueueName(old->where) << " queue; replacing it pod=\""
                << pod->Key() << "\"";
    Extract(old);
  }
  Entry* e = Insert(NewQueuedPodInfo(std::move(pod)));
  if (AddToActiveOrGate(e) != SubQueue::kActive) return Status::OK();
  metrics_.IncomingPod(kActiveQueueName, kPodAddEvent);
  nominator_.AddNominatedPod(e->info->pod_ptr());
  cv_.notify_one();
  return Status::OK();
}

void PriorityQueue::Activate(std::span<const api::PodPtr> pods) {
  MutexLock lock(mu_);
  ActivateLocked(pods, /*only_awaiting_preemption=*/false);
}

void PriorityQueue::ActivateQueued(std::span<const api::PodPtr> pods) {
  MutexLock lock(mu_);
  ActivateLocked(pods, /*only_awaiting_preemption=*/false, /*in_flight_too=*/false);
}

void PriorityQueue::ActivateAwaitingPreemption(std::span<const api::PodPtr> pods) {
  MutexLock lock(mu_);
  ActivateLocked(pods, /*only_awaiting_preemption=*/true);
}

void PriorityQueue::ActivateLocked(std::span<const api::PodPtr> pods, bool only_awaiting_preemption,
                                   bool in_flight_too) {
  bool activated = false;
  for (const api::PodPtr& pod : pods) {
    Entry* e = Find(pod->Key());
    if (e == nullptr) {
      if (!in_flight_too) continue;
      // In flight: make its coming back go straight to activeQ (its attempt may have
      // seen the cluster from before what activates it).
      in_flight_.Record(framework::kForceActivate, nullptr, pod, IdOf(*pod), true);
      continue;
    }
    if (e->where == SubQueue::kActive || (only_awaiting_preemption && !e->info->awaiting_preemption)) continue;
    Detach(e);
    if (AddToActiveOrGate(e) == SubQueue::kActive) {
      metrics_.IncomingPod(kActiveQueueName, framework::kForceActivate.label);
      activated = true;
    }
  }
  if (activated) cv_.notify_all();
}

Status PriorityQueue::AddUnschedulableIfNotPresent(QueuedPodInfoPtr info) {
  MutexLock lock(mu_);
  std::string id = IdOf(info->pod());
  if (Entry* existing = Find(info->Key())) {
    in_flight_.End(id);
    return Status(StatusCode::kAlreadyExists, "Pod " + info->Key() + " is already present in the " +
                                                  std::string(SubQueueName(existing->where)) + " queue");
  }
  Clock::time_point now = clock_.Now();
  info->timestamp = now;  // backoff counts from the failure

  Strategy s;
  if (info->unschedulable_plugins.empty() && info->pending_plugins.empty()) {
    // An internal error, not a rejection: no event will "fix" it, so retry after backoff.
    s = Strategy::kAfterBackoff;
  } else {
    // The events seen during its attempt decide, through the rejecting plugins' hints
    // (upstream determineSchedulingHintForInFlightPod). A pod the queue never popped has
    // no recorded events: it waits for the next one (or the leftover flush).
    s = ReplayInFlightEvents(*info, id);
  }
  in_flight_.End(id);

  Entry* e = Insert(std::move(info));
  SubQueue q = Requeue(e, s, kScheduleAttemptFailure, now);
  // A nomination the pod's status does not carry yet (the scheduler's write of
  // nominatedNodeName may still be in flight) is kept, not dropped with the requeue.
  nominator_.UpdateNominatedPod(e->info->pod(), e->info->pod_ptr());
  if (q == SubQueue::kActive) cv_.notify_one();
  return Status::OK();
}

int64_t PriorityQueue::SchedulingCycle() const {
  MutexLock lock(mu_);
  return scheduling_cycle_;
}

QueuedPodInfoPtr PriorityQueue::Pop() {
  MutexLock lock(mu_);
  while (active_.empty() && !closed_) {
    if (options_.pop_from_backoff_q && !backoff_.empty()) {
      // The scheduler would idle: the pod whose backoff ends first goes now (through
      // PreEnqueue, as any move to activeQ).
      ActivateFromBackoff(backoff_.Pop());
      continue;
    }
    cv_.wait(lock);
  }
  if (closed_) return nullptr;
  QueuedPodInfoPtr info = Extract(active_.Top());
  ++info->attempts;
  ++scheduling_cycle_;
  // The next failure records its own rejectors.
  info->unschedulable_plugins.clear();
  info->pending_plugins.clear();
  info->awaiting_preemption = false;
  in_flight_.Start(IdOf(info->pod()), InFlightPod{.pod = info->pod_ptr(),
                                                   .attempts = info->attempts,
                                                   .initial_attempt_timestamp = info->initial_attempt_timestamp,
                                                   .popped_at = clock_.Now()});
  return info;
}

void PriorityQueue::Done(const api::Pod& pod) {
  MutexLock lock(mu_);
  in_flight_.End(IdOf(pod));
}

Status PriorityQueue::Update(const api::PodPtr& old_pod, api::PodPtr new_pod) {
  MutexLock lock(mu_);
  const api::Pod& old_ref = old_pod ? *old_pod : *new_pod;
  Entry* e = Find(new_pod->Key());
  if (e == nullptr) {
    std::string id = IdOf(*new_pod);
    if (in_flight_.Tracking(id)) {
      // Being scheduled: re-adding it would schedule it twice (kubernetes#118226).
      // Remember the update; it is replayed if this attempt fails.
      nominator_.UpdateNominatedPod(old_ref, new_pod);
      in_flight_.Record(framework::kUnscheduledPodUpdate, old_pod, new_pod, id, false);
      return Status::OK();
    }
    // Not queued at all (e.g. its add was missed): treat as new.
    e = Insert(NewQueuedPodInfo(std::move(new_pod)));
    if (AddToActiveOrGate(e) == SubQueue::kActive) {
      metrics_.IncomingPod(kActiveQueueName, kPodUpdateEvent);
      nominator_.AddNominatedPod(e->info->pod_ptr());
      cv_.notify_one();
    }
    return Status::OK();
  }

  nominator_.UpdateNominatedPod(old_ref, new_pod);
  switch (e->where) {
    case SubQueue::kActive:
      e->info->pod_info.Update(std::move(new_pod));
      e->priority = e->info->pod_info.priority;
      active_.Fix(e);  // priority may have changed
      return Status::OK();
    case SubQueue::kBackoff:
      // Stays: an update does not cut a backoff short (its expiry does not change).
      e->info->pod_info.Update(std::move(new_pod));
      return Status::OK();
    case SubQueue::kUnschedulable:
    case SubQueue::kNone:
      break;
  }
  bool changed = !old_pod || PodSchedulingPropertiesChanged(*old_pod, *new_pod);
  e->info->pod_info.Update(new_pod);
  if (!changed) return Status::OK();
  // Only the rejecting plugins' hints for the pod's own update can move it (upstream
  // PriorityQueue.Update with SchedulerQueueingHints).
  std::vector<const RegisteredHint*> hints;
  ProfileFor(*new_pod).cluster_event_map.MatchingHints(framework::kUnscheduledPodUpdate, &hints);
  Strategy s = WorthRequeuing(*e->info, framework::kUnscheduledPodUpdate, hints, old_pod.get(), new_pod.get());
  if (s == Strategy::kSkip) return Status::OK();
  Detach(e);
  if (Requeue(e, s, kPodUpdateEvent, clock_.Now()) == SubQueue::kActive) cv_.notify_one();
  return Status::OK();
}

void PriorityQueue::Delete(const api::Pod& pod) {
  MutexLock lock(mu_);
  nominator_.DeleteNominatedPodIfExists(pod);
  if (Entry* e = Find(pod.Key())) Extract(e);
}

void PriorityQueue::MoveAllToActiveOrBackoffQueue(const framework::ClusterEvent& event,
                                                  std::shared_ptr<const void> old_obj,
                                                  std::shared_ptr<const void> new_obj,
                                                  const PreEnqueueCheck& pre_check) {
  MutexLock lock(mu_);
  MoveAllLocked(event, std::move(old_obj), std::move(new_obj), pre_check);
}

void PriorityQueue::AssignedPodEvent(const framework::ClusterEvent& event, const api::PodPtr& old_pod,
                                     const api::PodPtr& pod) {
  MutexLock lock(mu_);
  // No plugin cares: no scan under the lock, nothing to record (upstream's
  // movePodsToActiveOrBackoffQueue checks isEventOfInterest first).
  if (!AnyProfileInterested(event)) return;
  // Only pods with a cross-topology constraint can be helped by an assigned pod's arrival
  // or change; their plugins' hints decide.
  std::vector<Entry*> entries;
  for (Entry* e : unschedulable_) {
    if (CrossTopologyCandidate(*e->info, *pod)) entries.push_back(e);
  }
  MovePods(entries, event, old_pod.get(), pod.get());
  in_flight_.Record(event, old_pod, pod, {}, false);
}

void PriorityQueue::AssignedPodAdded(const api::PodPtr& pod) {
  AssignedPodEvent(framework::kAssignedPodAdd, nullptr, pod);
}

void PriorityQueue::AssignedPodUpdated(const api::PodPtr& old_pod, const api::PodPtr& new_pod) {
  AssignedPodEvent(framework::kAssignedPodUpdate, old_pod, new_pod);
}

std::vector<api::PodPtr> PriorityQueue::PendingPods() const {
  MutexLock lock(mu_);
  std::vector<api::PodPtr> out;
  out.reserve(pods_.size());
  for (const auto& [key, e] : pods_) out.push_back(e.info->pod_ptr());
  return out;
}

PendingPodCounts PriorityQueue::PendingCounts() const {
  MutexLock lock(mu_);
  return {.active = active_.size(),
          .backoff = backoff_.size() + backoff_held_.size(),
          .unschedulable = unschedulable_.size() - gated_,
          .gated = gated_};
}

UnschedulablePluginCounts PriorityQueue::UnschedulablePodsByPlugin() const {
  MutexLock lock(mu_);
  UnschedulablePluginCounts counts;
  for (const auto& [key, e] : pods_) {
    const framework::QueuedPodInfo& info = *e.info;
    const std::string& profile = info.pod().spec.scheduler_name;
    for (const std::string& plugin : info.unschedulable_plugins) ++counts[{plugin, profile}];
    for (const std::string& plugin : info.pending_plugins) {
      // A plugin in both sets still counts the pod once.
      if (!info.unschedulable_plugins.contains(plugin)) ++counts[{plugin, profile}];
    }
  }
  return counts;
}

size_t PriorityQueue::Len() const {
  MutexLock lock(mu_);
  return pods_.size();
}

void PriorityQueue::FlushBackoffQCompleted() {
  MutexLock lock(mu_);
  Clock::time_point now = clock_.Now();
  bool activated = false;
  for (auto* heap : {&backoff_, &backoff_held_}) {
    while (!heap->empty() && heap->Top()->backoff_expiry <= now) {
      if (ActivateFromBackoff(heap->Pop())) activated = true;
    }
  }
  if (activated) cv_.notify_all();
}

void PriorityQueue::FlushUnschedulablePodsLeftover() {
  MutexLock lock(mu_);
  Clock::time_point now = clock_.Now();
  std::vector<Entry*> entries;
  for (Entry* e : unschedulable_) {
    if (now - e->info->timestamp > options_.max_in_unschedulable) entries.push_back(e);
  }
  // Not recorded for in-flight pods: a timeout elsewhere says nothing about them.
  if (!entries.empty()) MovePods(entries, framework::kUnschedulableTimeout, nullptr, nullptr);
}

void PriorityQueue::FlushLoop(Clock::duration period, void (PriorityQueue::*flush)(), std::stop_token stop) {
  while (clock_.SleepUntil(clock_.Now() + period, stop)) (this->*flush)();
}

void PriorityQueue::Run() {
  MutexLock lock(mu_);
  if (closed_ || !loops_.empty()) return;
  std::stop_token stop = stop_.get_token();
  loops_.emplace_back([this, stop] {
    FlushLoop(options_.backoff_flush_period, &PriorityQueue::FlushBackoffQCompleted, stop);
  });
  loops_.emplace_back([this, stop] {
    FlushLoop(options_.unschedulable_flush_period, &PriorityQueue::FlushUnschedulablePodsLeftover, stop);
  });
}

void PriorityQueue::Close() {
  std::vector<std::jthread> loops;
  {
    MutexLock lock(mu_);
    closed_ = true;
    loops.swap(loops_);
  }
  stop_.request_stop();
  cv_.notify_all();
  // Joined here, not in the destructor: the flushes run plugins' hints and PreEnqueue,
  // and the owner destroys those plugins (the frameworks) before the queue.
  for (auto& t : loops) t.join();
}

SubQueue PriorityQueue::Where(std::string_view key) const {
  MutexLock lock(mu_);
  auto it = pods_.find(key);
  return it == pods_.end() ? SubQueue::kNone : it->second.where;
}

QueuedPodState PriorityQueue::StateOf(const Entry& e) const {
  const QueuedPodInfo& info = *e.info;
  QueuedPodState st{.pod = info.pod_ptr(),
                    .queue = info.gated ? kGatedQueueName : DebugQueueName(e.where),
                    .attempts = info.attempts,
                    .initial_attempt_timestamp = info.initial_attempt_timestamp,
                    .since = e.placed_at,
                    .gating_plugin = info.gating_plugin};
  if (e.where == SubQueue::kBackoff) st.backoff_until = e.backoff_expiry;
  return st;
}

QueuedPodState PriorityQueue::StateOf(const InFlightPod& p) {
  return QueuedPodState{.pod = p.pod,
                        .queue = kInFlightQueueName,
                        .attempts = p.attempts,
                        .initial_attempt_timestamp = p.initial_attempt_timestamp,
                        .since = p.popped_at};
}

std::vector<QueuedPodState> PriorityQueue::QueuedPods() const {
  MutexLock lock(mu_);
  std::vector<QueuedPodState> out;
  out.reserve(pods_.size() + in_flight_.pods().size());
  for (const auto& [key, e] : pods_) out.push_back(StateOf(e));
  for (const auto& [id, p] : in_flight_.pods()) {
    // A pod that failed and is queued again is listed once, where it is now.
    if (!pods_.contains(p.pod->Key())) out.push_back(StateOf(p));
  }
  return out;
}

std::optional<QueuedPodState> PriorityQueue::QueuedPod(std::string_view key) const {
  MutexLock lock(mu_);
  if (auto it = pods_.find(key); it != pods_.end()) return StateOf(it->second);
  for (const auto& [id, p] : in_flight_.pods()) {
    if (p.pod->Key() == key) return StateOf(p);
  }
  return std::nullopt;
}

size_t PriorityQueue::InFlightPods() const {
  MutexLock lock(mu_);
  return in_flight_.pods().size();
}

size_t PriorityQueue::InFlightEvents() const {
  MutexLock lock(mu_);
  return in_flight_.EventCount();
}

}  // namespace ksched::queue
