#include "pkg/simulate/simulator.h"

#include <simdjson.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "informers/cluster_lister.h"
#include "informers/informer.h"
#include "pkg/api/json.h"
#include "pkg/framework/registry.h"
#include "pkg/scheduler/scheduler.h"
#include "pkg/simulate/json_dom.h"
#include "pkg/simulate/json_patch.h"
#include "pkg/simulate/memory_server.h"
#include "pkg/util/json_string.h"
#include "pkg/util/log.h"

namespace ksched::simulate {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

// Counts the changes an informer's handlers have finished with: added after the
// scheduler's handlers, it runs once they are done with each change, and reads the
// change's resourceVersion (the informer takes it before calling the handlers).
template <typename T>
class HandledTracker final : public informers::EventHandler<T> {
 public:
  explicit HandledTracker(informers::Informer<T>& informer) : informer_(informer) {}
  void OnAdd(const std::shared_ptr<const T>&) override { Seen(); }
  void OnUpdate(const std::shared_ptr<const T>&, const std::shared_ptr<const T>&) override { Seen(); }
  void OnDelete(const informers::Deleted<T>&) override { Seen(); }
  // After the first list has been delivered: what it covered counts as handled.
  void Synced() { Seen(); }
  uint64_t Handled() const { return handled_.load(); }

 private:
  void Seen() {
    const uint64_t rv = std::strtoull(informer_.LastSyncResourceVersion().c_str(), nullptr, 10);
    uint64_t prev = handled_.load();
    while (rv > prev && !handled_.compare_exchange_weak(prev, rv)) {
    }
  }
  informers::Informer<T>& informer_;
  std::atomic<uint64_t> handled_{0};
};

struct PriorityClass {
  int32_t value = 0;
  std::string preemption_policy;
};

// What simulate reads of a pod, and the pod as the API server would store it.
struct AdmittedPod {
  std::string json;
  std::string namespace_, name, scheduler_name, node_name, phase;
  std::vector<std::string> gates;
  bool daemon_set = false;  // owned by a DaemonSet
  bool mirror = false;      // a static pod's mirror
  std::string Key() const { return namespace_ + "/" + name; }
};

}  // namespace

struct Simulator::Impl {
  explicit Impl(SimulateOptions o)
      : options(std::move(o)),
        informer_options{.idle_timeout = std::chrono::hours(24 * 365), .seed = options.seed},
        pods(server, "/api/v1/pods", WithSelector(informer_options)),
        nodes(server, "/api/v1/nodes", informer_options),
        listers(server, informer_options),
        pod_tracker(pods),
        node_tracker(nodes),
        claim_tracker(listers.storage().claims()),
        volume_tracker(listers.storage().volumes()),
        resource_claim_tracker(listers.resources().claims()),
        slice_tracker(listers.resources().slices()),
        device_class_tracker(listers.resources().classes()) {}

  static informers::InformerOptions WithSelector(informers::InformerOptions o) {
    o.field_selector = informers::kNonTerminalPodsSelector;
    return o;
  }

  SimulateOptions options;
  informers::InformerOptions informer_options;
  MemoryApiServer server;
  informers::PodInformer pods;
  informers::NodeInformer nodes;
  informers::ClusterListers listers;
  HandledTracker<api::Pod> pod_tracker;
  HandledTracker<api::Node> node_tracker;
  HandledTracker<api::PersistentVolumeClaim> claim_tracker;
  HandledTracker<api::PersistentVolume> volume_tracker;
  HandledTracker<api::ResourceClaim> resource_claim_tracker;
  HandledTracker<api::ResourceSlice> slice_tracker;
  HandledTracker<api::DeviceClass> device_class_tracker;
  std::unique_ptr<scheduler::Scheduler> sched;

  std::map<std::string, PriorityClass, std::less<>> priority_classes;
  std::optional<std::pair<std::string, PriorityClass>> default_priority_class;
  std::set<std::string, std::less<>> profiles;
  std::string default_scheduler_name;
  std::vector<SourceObject> pending;

  std::mutex reports_mu;
  std::condition_variable reports_cv;
  std::deque<scheduler::AttemptReport> reports;

  void OnAttempt(const scheduler::AttemptReport& r) {
    {
      std::lock_guard l(reports_mu);
      reports.push_back(r);
    }
    reports_cv.notify_all();
  }

  StatusOr<AdmittedPod> Admit(std::string_view json, const std::string& source) const;
  Status Start(const ClusterObjects& cluster);
  void Quiesce();
  std::optional<scheduler::AttemptReport> WaitReport(const std::string& uid, const std::string& key,
                                                     std::chrono::milliseconds timeout, std::string* gated_by);
  StatusOr<PodResult> ScheduleJson(std::string_view json, const std::string& source, bool follow_preemption);
  // The pending members of one gang (Coscheduling's PodGroup label), created together
  // since none is bound before minMember of them are assumed: each result in order.
  std::vector<PodResult> ScheduleGang(const std::vector<const SourceObject*>& members);
  // `list` in order, each gang's pods together; a pod the API server would refuse fails
  // the whole call, or with `errors_as_reasons` is reported as not placed.
  StatusOr<std::vector<PodResult>> ScheduleList(const std::vector<SourceObject>& list, bool errors_as_reasons);
  std::string ExplainOf(const AdmittedPod& pod) const {
    if (!options.explain || sched->decisions() == nullptr) return "";
    return sched->decisions()->PodJson(pod.namespace_, pod.name).value_or("");
  }
};

// As the API server's admission would store the pod: in namespace "default" when it
// names none, with the first profile's schedulerName when it names none (the API
// server's default is "default-scheduler"), and with its PriorityClass's priority and
// preemption policy (upstream plugin/pkg/admission/priority), the global default class's
// when it names none.
StatusOr<AdmittedPod> Simulator::Impl::Admit(std::string_view json, const std::string& source) const {
  simdjson::dom::parser parser;
  auto doc = parser.parse(json.data(), json.size());
  if (doc.error()) return InvalidArgument(source + ": not JSON");
  const element pod = doc.value();
  AdmittedPod a;
  a.name = StringField(pod, "metadata.name");
  a.namespace_ = StringField(pod, "metadata.namespace");
  a.scheduler_name = StringField(pod, "spec.schedulerName");
  a.node_name = StringField(pod, "spec.nodeName");
  a.phase = StringField(pod, "status.phase");
  if (auto gates = FieldAt(pod, "spec.schedulingGates"); gates && gates->type() == element_type::ARRAY) {
    for (element g : gates->get_array()) a.gates.push_back(StringField(g, "name"));
  }
  if (auto owners = FieldAt(pod, "metadata.ownerReferences"); owners && owners->type() == element_type::ARRAY) {
    for (element o : owners->get_array()) a.daemon_set = a.daemon_set || StringField(o, "kind") == "DaemonSet";
  }
  a.mirror = MapEntry(pod, "metadata.annotations", "kubernetes.io/config.mirror").has_value();
  std::string spec_patch;
  auto add = [&spec_patch](std::string_view key, const std::string& value) {
    spec_patch += spec_patch.empty() ? "" : ",";
    spec_patch += JsonQuoted(key) + ":" + value;
  };
  if (a.scheduler_name.empty()) {
    a.scheduler_name = default_scheduler_name;
    add("schedulerName", JsonQuoted(a.scheduler_name));
  }
  if (!FieldAt(pod, "spec.priority")) {
    const std::string class_name = StringField(pod, "spec.priorityClassName");
    const PriorityClass* pc = nullptr;
    if (!class_name.empty()) {
      auto it = priority_classes.find(class_name);
      if (it == priority_classes.end()) {
        return InvalidArgument(source + ": pod \"" + (a.namespace_.empty() ? "default" : a.namespace_) + "/" + a.name +
                               "\": no PriorityClass with name " + class_name + " was found");
      }
      pc = &it->second;
    } else if (default_priority_class) {
      pc = &default_priority_class->second;
      add("priorityClassName", JsonQuoted(default_priority_class->first));
    }
    if (pc != nullptr) {
      add("priority", std::to_string(pc->value));
      if (!pc->preemption_policy.empty() && !FieldAt(pod, "spec.preemptionPolicy"))
        add("preemptionPolicy", JsonQuoted(pc->preemption_policy));
    }
  }
  std::string patch = "{";
  if (a.namespace_.empty()) {
    a.namespace_ = "default";
    patch += "\"metadata\":{\"namespace\":\"default\"}";
  }
  if (!spec_patch.empty()) patch += (patch.size() > 1 ? "," : "") + std::string("\"spec\":{") + spec_patch + "}";
  patch += "}";
  if (patch == "{}") {
    a.json = std::string(json);
  } else {
    auto patched = MergePatch(json, patch);
    if (!patched.ok()) return InvalidArgument(source + ": " + patched.status().message());
    a.json = std::move(*patched);
  }
  return a;
}

Status Simulator::Impl::Start(const ClusterObjects& cluster) {
  for (const config::KubeSchedulerProfile& p : options.config.profiles) profiles.insert(p.scheduler_name);
  default_scheduler_name = options.config.profiles.empty() ? "default-scheduler"
                                                           : options.config.profiles.front().scheduler_name;
  // The built-in classes (upstream scheduling.SystemPriorityClasses), then the cluster's.
  priority_classes["system-node-critical"] = {2000001000, ""};
  priority_classes["system-cluster-critical"] = {2000000000, ""};
  simdjson::dom::parser parser;
  for (const SourceObject& o : cluster.objects) {
    if (o.kind->kind != "PriorityClass") continue;
    auto doc = parser.parse(o.json);
    if (doc.error()) continue;
    PriorityClass pc{static_cast<int32_t>(int64_t(doc.value()["value"])), StringField(doc.value(), "preemptionPolicy")};
    priority_classes[o.name] = pc;
    if (auto g = FieldAt(doc.value(), "globalDefault"); g && g->is_bool() && bool(*g)) default_priority_class = {o.name, pc};
  }
  // Every object but pending pods; terminal pods hold nothing and are left out, as the
  // scheduler's pod informer leaves them out. Pods come last, so the claim templates
  // they name exist when they are created.
  std::vector<const SourceObject*> ordered;
  for (const SourceObject& o : cluster.objects)
    if (o.kind->kind != "Pod") ordered.push_back(&o);
  for (const SourceObject& o : cluster.objects)
    if (o.kind->kind == "Pod") ordered.push_back(&o);
  for (const SourceObject* op : ordered) {
    const SourceObject& o = *op;
    if (o.kind->kind == "PriorityClass") continue;
    std::string json = o.json;
    if (o.kind->kind == "Pod") {
      auto admitted = Admit(o.json, o.source);
      if (!admitted.ok()) return admitted.status();
      if (admitted->phase == "Succeeded" || admitted->phase == "Failed") continue;
      if (admitted->node_name.empty()) {
        pending.push_back(o);
        continue;
      }
      json = std::move(admitted->json);
    }
    if (Status s = server.Create(*o.kind, json); !s.ok()) return InvalidArgument(o.source + ": " + s.message());
  }

  scheduler::SchedulerOptions so;
  so.config = options.config;
  // Extenders are asked to filter, score and pick preemption victims as in the scheduler,
  // but never to bind: their bind would write to the real cluster. The in-memory server
  // binds instead.
  for (config::Extender& e : so.config.extenders) e.bind_verb.clear();
  so.registry = options.registry;
  so.bind_client = &server;
  so.status_client = &server;
  so.hostname = "ksched-simulate";
  so.pod_lister = [this](const std::string& key) { return pods.Get(key); };
  so.cluster_lister = &listers;
  so.seed = options.seed;
  so.explain_records = options.explain ? 1000 : 0;
  // Never "stuck": a simulated pod settles in milliseconds.
  so.stuck_check_period = std::chrono::hours(24);
  so.on_attempt = [this](const scheduler::AttemptReport& r) { OnAttempt(r); };
  auto s = scheduler::Scheduler::New(std::move(so));
  if (!s.ok()) return s.status();
  sched = std::move(*s);
  // Gang members are indexed before the scheduler sees a pod (its PreFilter counts them).
  listers.pod_groups().SetWanted(sched->UsesPodGroups());
  if (listers.pod_groups().wanted()) sched->WatchPodGroups(pods, listers.pod_groups());
  pods.AddHandler(&sched->pod_handler());
  nodes.AddHandler(&sched->node_handler());
  sched->WatchStorage(listers.storage());
  sched->WatchResources(listers.resources());
  pods.AddHandler(&pod_tracker);
  nodes.AddHandler(&node_tracker);
  listers.storage().claims().AddHandler(&claim_tracker);
  listers.storage().volumes().AddHandler(&volume_tracker);
  listers.resources().claims().AddHandler(&resource_claim_tracker);
  listers.resources().slices().AddHandler(&slice_tracker);
  listers.resources().classes().AddHandler(&device_class_tracker);
  nodes.Start();
  pods.Start();
  listers.Start();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
  if (!(nodes.WaitForSync(informers::TimeLeft(deadline)) && pods.WaitForSync(informers::TimeLeft(deadline)) &&
        listers.WaitForSync(informers::TimeLeft(deadline)))) {
    return Status(StatusCode::kDeadlineExceeded, "the simulated cluster was not read within 5 minutes");
  }
  pod_tracker.Synced();
  node_tracker.Synced();
  claim_tracker.Synced();
  volume_tracker.Synced();
  resource_claim_tracker.Synced();
  slice_tracker.Synced();
  device_class_tracker.Synced();
  server.ForgetHistory();
  sched->Run();
  return Status::OK();
}

// Until every answer and watch event has been delivered and handled, no binding cycle
// is running and no pod is waiting to be popped or being scheduled.
void Simulator::Impl::Quiesce() {
  auto caught_up = [this] {
    return pod_tracker.Handled() >= server.LastChange(*FindKind("Pod")) &&
           node_tracker.Handled() >= server.LastChange(*FindKind("Node")) &&
           claim_tracker.Handled() >= server.LastChange(*FindKind("PersistentVolumeClaim")) &&
           volume_tracker.Handled() >= server.LastChange(*FindKind("PersistentVolume")) &&
           resource_claim_tracker.Handled() >= server.LastChange(*FindKind("ResourceClaim")) &&
           slice_tracker.Handled() >= server.LastChange(*FindKind("ResourceSlice")) &&
           device_class_tracker.Handled() >= server.LastChange(*FindKind("DeviceClass"));
  };
  // Pods waiting at Permit (a gang's members waiting for the rest) hold a binding cycle
  // and stay in flight until time or another pod decides them: nothing moves meanwhile.
  auto waiting_at_permit = [this] {
    size_t n = 0;
    for (const std::string& profile : profiles) {
      if (auto* fwk = sched->FrameworkFor(profile)) n += fwk->CountWaitingPods([](const api::Pod&) { return true; });
    }
    return n;
  };
  auto busy_queue = [&] {
    size_t in_flight = 0;
    for (const queue::QueuedPodState& st : sched->queue().QueuedPods()) {
      if (st.queue == "activeQ") return true;
      in_flight += st.queue == queue::kInFlightQueueName ? 1 : 0;
    }
    return in_flight > waiting_at_permit();
  };
  auto binds_moving = [&] { return sched->BindsInFlight() > waiting_at_permit(); };
  int spins = 0;
  auto next_report = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (;;) {
    // The server is asked again last: an answer handled meanwhile (a bind's) may have
    // queued more (its event).
    if (server.Idle() && caught_up() && !binds_moving() && !busy_queue() && server.Idle()) return;
    if (std::chrono::steady_clock::now() > next_report) {
      // Not expected: say what is still moving.
      KLOG(WARNING) << "simulated cluster not at rest after 5s: server idle " << server.Idle() << ", pods handled "
                    << pod_tracker.Handled() << "/" << server.LastChange(*FindKind("Pod")) << ", nodes handled "
                    << node_tracker.Handled() << "/" << server.LastChange(*FindKind("Node")) << ", claims handled "
                    << claim_tracker.Handled() << "/" << server.LastChange(*FindKind("PersistentVolumeClaim"))
                    << ", volumes handled " << volume_tracker.Handled() << "/"
                    << server.LastChange(*FindKind("PersistentVolume")) << ", binds in flight "
                    << sched->BindsInFlight() << ", queue busy " << busy_queue();
      next_report += std::chrono::seconds(5);
    }
    if (++spins < 100) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
}

std::optional<scheduler::AttemptReport> Simulator::Impl::WaitReport(const std::string& uid, const std::string& key,
                                                                    std::chrono::milliseconds timeout,
                                                                    std::string* gated_by) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::unique_lock l(reports_mu);
  for (;;) {
    for (auto it = reports.begin(); it != reports.end(); ++it) {
      if (it->pod->metadata.uid != uid) continue;
      scheduler::AttemptReport r = std::move(*it);
      reports.erase(it);
      return r;
    }
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    // A pod held back by a PreEnqueue plugin is never attempted: look for it in the queue,
    // once the cluster is at rest (a pod waiting for its claims is let go when the claim
    // controller's writes arrive).
    l.unlock();
    auto st = sched->queue().QueuedPod(key);
    if (st && st->queue == "gated") {
      Quiesce();
      st = sched->queue().QueuedPod(key);
    }
    l.lock();
    if (st && st->queue == "gated") {
      // An attempt may have ended while the cluster came to rest.
      for (auto it = reports.begin(); it != reports.end(); ++it) {
        if (it->pod->metadata.uid != uid) continue;
        scheduler::AttemptReport r = std::move(*it);
        reports.erase(it);
        return r;
      }
      *gated_by = st->gating_plugin;
      return std::nullopt;
    }
    reports_cv.wait_for(l, std::chrono::milliseconds(5));
  }
}

StatusOr<PodResult> Simulator::Impl::ScheduleJson(std::string_view json, const std::string& source,
                                                  bool follow_preemption) {
  auto pod = Admit(json, source);
  if (!pod.ok()) return pod.status();
  PodResult result{.namespace_ = pod->namespace_, .name = pod->name};
  if (!profiles.contains(pod->scheduler_name)) {
    result.reason = "no profile of the configuration has schedulerName \"" + pod->scheduler_name + "\"";
    return result;
  }
  const KindInfo& pod_kind = *FindKind("Pod");
  if (!pod->node_name.empty()) {
    // Bound already (spec.nodeName): it takes its node, as the API server accepts it.
    if (Status s = server.Create(pod_kind, pod->json); !s.ok()) return InvalidArgument(source + ": " + s.message());
    Quiesce();
    result.node = pod->node_name;
    result.reason = "bound in the input (spec.nodeName)";
    return result;
  }
  {
    std::lock_guard l(reports_mu);
    reports.clear();
  }
  if (Status s = server.Create(pod_kind, pod->json); !s.ok()) return InvalidArgument(source + ": " + s.message());
  auto stored = server.Get(pod_kind, pod->namespace_, pod->name);
  auto uid = stored ? StringAt(*stored, "metadata.uid") : StatusOr<std::optional<std::string>>(std::nullopt);
  const std::string pod_uid = uid.ok() && *uid ? **uid : "";
  auto withdraw = [&] {
    (void)server.Delete(pod_kind, pod->namespace_, pod->name);
    Quiesce();
  };
  for (int attempts = 0;;) {
    std::string gated_by;
    std::optional<scheduler::AttemptReport> r = WaitReport(pod_uid, pod->Key(), options.settle_timeout, &gated_by);
    if (!r) {
      if (gated_by == "SchedulingGates") {
        std::string names;
        for (const std::string& g : pod->gates) names += (names.empty() ? "" : " ") + g;
        result.reason = "waiting for scheduling gates: [" + names + "]";
      } else if (!gated_by.empty()) {
        // Not attempted: a PreEnqueue plugin holds it (DynamicResources: a claim that
        // does not exist yet, or is being deleted).
        result.reason = "held back at PreEnqueue by " + gated_by;
      } else {
        result.reason = "neither bound nor rejected within " + std::to_string(options.settle_timeout.count()) + " ms";
      }
      result.explain = ExplainOf(*pod);
      withdraw();
      return result;
    }
    ++attempts;
    result.victims.insert(result.victims.end(), r->victims.begin(), r->victims.end());
    if (r->scheduled) {
      result.node = r->node;
      result.reason.clear();
      result.explain = ExplainOf(*pod);
      Quiesce();
      return result;
    }
    result.reason = r->message;
    // Preemption evicted victims and nominated a node: the pod is retried once they are
    // gone, as in the scheduler.
    if (follow_preemption && r->nomination && !r->nomination->empty() && attempts < 5) continue;
    Quiesce();
    // An event during the attempt may have sent the pod back for another try already.
    if (auto st = sched->queue().QueuedPod(pod->Key());
        st && st->queue != "unschedulablePods" && st->queue != "gated" && attempts < 5) {
      continue;
    }
    result.explain = ExplainOf(*pod);
    withdraw();
    return result;
  }
}

std::vector<PodResult> Simulator::Impl::ScheduleGang(const std::vector<const SourceObject*>& members) {
  const KindInfo& pod_kind = *FindKind("Pod");
  struct Member {
    AdmittedPod pod;
    std::string uid;
    bool tried = false;  // created and waited for (not bound in the input, not refused)
    bool bound = false;
    bool rejected = false;
  };
  std::vector<PodResult> out(members.size());
  std::vector<Member> ms(members.size());
  {
    std::lock_guard l(reports_mu);
    reports.clear();
  }
  for (size_t i = 0; i < members.size(); ++i) {
    const SourceObject& src = *members[i];
    out[i] = {.namespace_ = src.namespace_.empty() ? "default" : src.namespace_, .name = src.name};
    auto pod = Admit(src.json, src.source);
    if (!pod.ok()) {
      out[i].reason = pod.status().message();
      continue;
    }
    ms[i].pod = std::move(*pod);
    if (!profiles.contains(ms[i].pod.scheduler_name)) {
      out[i].reason = "no profile of the configuration has schedulerName \"" + ms[i].pod.scheduler_name + "\"";
      continue;
    }
    if (Status st = server.Create(pod_kind, ms[i].pod.json); !st.ok()) {
      out[i].reason = src.source + ": " + st.message();
      continue;
    }
    if (!ms[i].pod.node_name.empty()) {
      out[i].node = ms[i].pod.node_name;
      out[i].reason = "bound in the input (spec.nodeName)";
      continue;
    }
    auto stored = server.Get(pod_kind, ms[i].pod.namespace_, ms[i].pod.name);
    auto uid = stored ? StringAt(*stored, "metadata.uid") : StatusOr<std::optional<std::string>>(std::nullopt);
    ms[i].uid = uid.ok() && *uid ? **uid : "";
    ms[i].tried = true;
  }
  auto take_reports = [&] {
    std::lock_guard l(reports_mu);
    for (auto it = reports.begin(); it != reports.end();) {
      auto m = std::find_if(ms.begin(), ms.end(), [&](const Member& x) { return x.tried && x.uid == it->pod->metadata.uid; });
      if (m == ms.end()) {
        ++it;
        continue;
      }
      PodResult& r = out[static_cast<size_t>(m - ms.begin())];
      r.victims.insert(r.victims.end(), it->victims.begin(), it->victims.end());
      if (it->scheduled) {
        m->bound = true;
        r.node = it->node;
        r.reason.clear();
      } else if (!m->bound) {
        m->rejected = true;
        r.reason = it->message;
      }
      it = reports.erase(it);
    }
  };
  // Settled: every member bound, or, with the cluster at rest, each of the others turned
  // away at least once (it would retry after its backoff and fail the same way while
  // nothing else changes), waiting at Permit for members that will not come, or gated.
  const auto deadline = std::chrono::steady_clock::now() + options.settle_timeout;
  auto waiting_at_permit = [&](const Member& m) {
    auto* fwk = sched->FrameworkFor(m.pod.scheduler_name);
    return fwk != nullptr && fwk->CountWaitingPods([&](const api::Pod& p) { return p.metadata.uid == m.uid; }) > 0;
  };
  auto all_bound = [&] {
    return std::all_of(ms.begin(), ms.end(), [](const Member& m) { return !m.tried || m.bound; });
  };
  for (;;) {
    take_reports();
    if (all_bound()) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      for (size_t i = 0; i < ms.size(); ++i) {
        if (ms[i].tried && !ms[i].bound && !ms[i].rejected)
          out[i].reason = "neither bound nor rejected within " + std::to_string(options.settle_timeout.count()) + " ms";
      }
      break;
    }
    Quiesce();
    take_reports();
    if (all_bound()) break;
    bool settled = true;
    for (size_t i = 0; i < ms.size() && settled; ++i) {
      const Member& m = ms[i];
      if (!m.tried || m.bound || m.rejected) continue;
      if (waiting_at_permit(m)) continue;
      auto st = sched->queue().QueuedPod(m.pod.Key());
      settled = st && st->queue == "gated";
    }
    if (settled) {
      for (size_t i = 0; i < ms.size(); ++i) {
        if (!ms[i].tried || ms[i].bound || ms[i].rejected) continue;
        out[i].reason = waiting_at_permit(ms[i]) ? "waiting at Permit for the rest of its gang, which does not come"
                                                 : "held back at PreEnqueue (scheduling gates)";
      }
      break;
    }
    std::unique_lock l(reports_mu);
    reports_cv.wait_for(l, std::chrono::milliseconds(5));
  }
  for (size_t i = 0; i < ms.size(); ++i) {
    if (!ms[i].tried) continue;
    out[i].explain = ExplainOf(ms[i].pod);
    if (!ms[i].bound) (void)server.Delete(pod_kind, ms[i].pod.namespace_, ms[i].pod.name);
  }
  Quiesce();
  return out;
}

Simulator::Simulator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Simulator::~Simulator() {
  if (impl_->sched) impl_->sched->Stop(std::chrono::seconds(5));
  // Answers still queued (an event's) call back into the scheduler: deliver them while it
  // exists.
  (void)impl_->server.WaitIdle(std::chrono::seconds(5));
  impl_->pods.Stop();
  impl_->nodes.Stop();
  impl_->listers.Stop();
}

StatusOr<std::unique_ptr<Simulator>> Simulator::New(const ClusterObjects& cluster, SimulateOptions options) {
  auto impl = std::make_unique<Impl>(std::move(options));
  Impl* raw = impl.get();
  std::unique_ptr<Simulator> sim(new Simulator(std::move(impl)));
  if (Status s = raw->Start(cluster); !s.ok()) return s;
  return sim;
}

namespace {

// The pod's gang, "ns/name" from the label scheduling.x-k8s.io/pod-group; empty without.
std::string GangOf(const SourceObject& pod) {
  simdjson::dom::parser parser;
  auto doc = parser.parse(pod.json);
  if (doc.error()) return "";
  auto label = MapEntry(doc.value(), "metadata.labels", api::kPodGroupLabel);
  if (!label || label->type() != element_type::STRING) return "";
  return (pod.namespace_.empty() ? std::string("default") : pod.namespace_) + "/" + std::string(label->get_string().value());
}

}  // namespace

StatusOr<std::vector<PodResult>> Simulator::Impl::ScheduleList(const std::vector<SourceObject>& list,
                                                                bool errors_as_reasons) {
  std::vector<PodResult> out;
  // With gangs, a group's pods are created together, at the place of its first.
  std::vector<std::string> gangs(list.size());
  if (sched->UsesPodGroups()) {
    for (size_t i = 0; i < list.size(); ++i) gangs[i] = GangOf(list[i]);
  }
  std::map<std::string, std::vector<PodResult>, std::less<>> gang_results;
  for (size_t i = 0; i < list.size(); ++i) {
    const SourceObject& pod = list[i];
    if (!gangs[i].empty()) {
      auto& results = gang_results[gangs[i]];
      if (results.empty()) {
        std::vector<const SourceObject*> members;
        for (size_t j = i; j < list.size(); ++j) {
          if (gangs[j] == gangs[i]) members.push_back(&list[j]);
        }
        results = ScheduleGang(members);
        std::reverse(results.begin(), results.end());  // taken from the back, in order
      }
      out.push_back(std::move(results.back()));
      results.pop_back();
      continue;
    }
    auto r = ScheduleJson(pod.json, pod.source, /*follow_preemption=*/true);
    if (r.ok()) {
      out.push_back(std::move(*r));
    } else if (errors_as_reasons) {
      out.push_back({.namespace_ = pod.namespace_.empty() ? "default" : pod.namespace_,
                     .name = pod.name,
                     .reason = r.status().message()});
    } else {
      return r.status();
    }
  }
  return out;
}

std::vector<PodResult> Simulator::SchedulePending() {
  return *impl_->ScheduleList(impl_->pending, /*errors_as_reasons=*/true);
}

StatusOr<std::vector<PodResult>> Simulator::ScheduleAll(const std::vector<SourceObject>& pods) {
  return impl_->ScheduleList(pods, /*errors_as_reasons=*/false);
}

StatusOr<PodResult> Simulator::Schedule(const SourceObject& pod) {
  return impl_->ScheduleJson(pod.json, pod.source, /*follow_preemption=*/true);
}

StatusOr<CapacityResult> Simulator::CapacityOf(const SourceObject& pod, int max) {
  CapacityResult out;
  for (int i = 1; i <= max; ++i) {
    const std::string name = pod.name + "-capacity-" + std::to_string(i);
    auto copy = MergePatch(pod.json, "{\"metadata\":{\"name\":" + JsonQuoted(name) + ",\"uid\":null}}");
    if (!copy.ok()) return InvalidArgument(pod.source + ": " + copy.status().message());
    auto r = impl_->ScheduleJson(*copy, pod.source, /*follow_preemption=*/false);
    if (!r.ok()) return r.status();
    if (!r->node || !r->victims.empty()) {
      out.next = std::move(*r);
      return out;
    }
    out.fits = i;
  }
  out.reached_max = true;
  return out;
}

StatusOr<std::vector<PodResult>> Simulator::Drain(std::string_view node) {
  const KindInfo& node_kind = *FindKind("Node");
  const KindInfo& pod_kind = *FindKind("Pod");
  if (!impl_->server.Get(node_kind, "", node)) {
    return InvalidArgument("--drain: node \"" + std::string(node) + "\" is not in the cluster");
  }
  if (Status s = impl_->server.Patch(node_kind, "", node, "{\"spec\":{\"unschedulable\":true}}"); !s.ok()) return s;
  std::vector<PodResult> out;
  std::vector<AdmittedPod> evicted;
  for (const std::string& json : impl_->server.List(pod_kind)) {
    auto pod = impl_->Admit(json, "pod");
    if (!pod.ok() || pod->node_name != node) continue;
    if (pod->daemon_set || pod->mirror) {
      out.push_back({.namespace_ = pod->namespace_,
                     .name = pod->name,
                     .node = std::string(node),
                     .reason = pod->daemon_set ? "DaemonSet pod: not evicted" : "mirror pod: not evicted"});
      continue;
    }
    if (Status s = impl_->server.Delete(pod_kind, pod->namespace_, pod->name); !s.ok()) return s;
    evicted.push_back(std::move(*pod));
  }
  impl_->Quiesce();
  for (const AdmittedPod& pod : evicted) {
    // Recreated as its controller would recreate it: unassigned, with a uid and status
    // of its own.
    auto fresh = MergePatch(pod.json,
                            "{\"metadata\":{\"uid\":null,\"resourceVersion\":null},\"spec\":{\"nodeName\":null},"
                            "\"status\":null}");
    if (!fresh.ok()) return fresh.status();
    auto r = impl_->ScheduleJson(*fresh, pod.Key(), /*follow_preemption=*/true);
    if (!r.ok()) return r.status();
    out.push_back(std::move(*r));
  }
  return out;
}

}  // namespace ksched::simulate
