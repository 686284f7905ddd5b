// Unit tests of the Scheduler without an API server: a FakeApiClient answers binds,
// events and status patches, a FakeClock drives backoff, and the test plays the
// informers (pod_handler / node_handler, plus the store the failure handler re-reads
// through pod_lister). Each test calls ScheduleOne() itself, so every step is
// deterministic; only binding cycles that end on a worker are waited for.
//
// Mirrors upstream's schedule_one_test.go (scheduleOne, handleBindingCycleError,
// handleSchedulingFailure) and eventhandlers_test.go.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "config/defaults.h"
#include "pkg/api/json.h"
#include "pkg/framework/registry.h"
#include "pkg/queue/priority_queue.h"
#include "pkg/scheduler/scheduler.h"
#include "pkg/util/clock.h"
#include "tests/fakes/builders.h"
#include "tests/fakes/fake_api_client.h"
#include "tests/fakes/fake_extender.h"

namespace ksched::scheduler {
namespace {

using namespace std::chrono_literals;
using framework::Code;
using client::Verb;
using ksched::testing::FakeApiClient;
using ksched::testing::NodeBuilder;
using ksched::testing::PodBuilder;
using queue::SubQueue;

constexpr std::string_view kProfile = config::kDefaultSchedulerName;

// ---- a plugin the tests steer ---------------------------------------------------------

// Which pods TestPlugin rejects (by name), shared by the test and the plugin instance the
// framework builds.
struct PluginKnobs {
  std::mutex mu;
  std::set<std::string, std::less<>> reject_filter, reject_reserve, reject_permit, wait_permit;
  int unreserve_calls = 0;

  bool Has(std::set<std::string, std::less<>> PluginKnobs::*set, std::string_view name) {
    std::lock_guard l(mu);
    return (this->*set).contains(name);
  }
  void Add(std::set<std::string, std::less<>> PluginKnobs::*set, std::string name) {
    std::lock_guard l(mu);
    (this->*set).insert(std::move(name));
  }
  int UnreserveCalls() {
    std::lock_guard l(mu);
    return unreserve_calls;
  }
};

// Filter, Reserve and Permit in one. It registers every Pod event without a hint, so any
// pod event that reaches the queue moves the pods it rejected: a stray move shows.
class TestPlugin final : public framework::FilterPlugin,
                         public framework::ReservePlugin,
                         public framework::PermitPlugin,
                         public framework::EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "TestPlugin";
  explicit TestPlugin(std::shared_ptr<PluginKnobs> knobs) : knobs_(std::move(knobs)) {}

  std::string_view Name() const override { return kName; }
  framework::Status Filter(const framework::CycleState&, const api::Pod& pod, const cache::NodeInfo&) const override {
    if (knobs_->Has(&PluginKnobs::reject_filter, pod.metadata.name))
      return framework::Status(Code::kUnschedulable, "rejected by TestPlugin at Filter");
    return {};
  }
  framework::Status Reserve(framework::CycleState&, const api::Pod& pod, std::string_view) override {
    if (knobs_->Has(&PluginKnobs::reject_reserve, pod.metadata.name))
      return framework::Status(Code::kUnschedulable, "rejected by TestPlugin at Reserve");
    return {};
  }
  void Unreserve(framework::CycleState&, const api::Pod&, std::string_view) override {
    std::lock_guard l(knobs_->mu);
    ++knobs_->unreserve_calls;
  }
  framework::Status Permit(framework::CycleState&, const api::Pod& pod, std::string_view,
                           std::chrono::milliseconds& timeout) override {
    if (knobs_->Has(&PluginKnobs::reject_permit, pod.metadata.name))
      return framework::Status(Code::kUnschedulable, "rejected by TestPlugin at Permit");
    if (knobs_->Has(&PluginKnobs::wait_permit, pod.metadata.name)) {
      timeout = 60s;  // on the FakeClock: until the test decides
      return framework::Status(Code::kWait);
    }
    return {};
  }
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override {
    return {{framework::ClusterEvent{framework::EventResource::kPod, framework::kAll, ""}, nullptr}};
  }

 private:
  std::shared_ptr<PluginKnobs> knobs_;
};

// ---- objects --------------------------------------------------------------------------

api::NodePtr Node(std::string name, std::string cpu) {
  return NodeBuilder(std::move(name)).Hostname().Capacity({{"cpu", cpu}, {"memory", "8Gi"}, {"pods", "110"}}).Obj();
}

api::PodPtr Pod(std::string name, std::string uid, std::string cpu) {
  return PodBuilder(std::move(name)).UID(std::move(uid)).SchedulerName(std::string(kProfile)).Req({{"cpu", cpu}}).Obj();
}

// The pod as the informer shows it once it is bound to `node`.
api::PodPtr BoundTo(const api::PodPtr& pod, std::string node) {
  auto p = std::make_shared<api::Pod>(*pod);
  p->spec.node_name = std::move(node);
  return p;
}

bool Contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

FakeApiClient::Matcher BindOf(const std::string& pod_name) {
  return FakeApiClient::Is(Verb::kPost, "/api/v1/namespaces/default/pods/" + pod_name + "/binding");
}
const FakeApiClient::Matcher kAnyBind = FakeApiClient::Is(Verb::kPost, "/binding");

// The API server's 409 for a bind of `pod` when a bind already placed it on `node`.
Status AlreadyAssigned(const std::string& pod, const std::string& node) {
  return FakeApiClient::ApiError(409, "Conflict",
                                 "Operation cannot be fulfilled on pods/binding \"" + pod + "\": pod " + pod +
                                     " is already assigned to node \"" + node + "\"");
}

// ---- the fixture ----------------------------------------------------------------------

struct StartOptions {
  bool with_plugin = false;  // TestPlugin at Filter, Reserve and Permit (acts on knobs_'s pods)
  std::function<bool()> may_bind;
  bool async_client = false;  // the fake answers on its own thread, as a real client's I/O thread
  size_t max_binds_sent = SchedulerOptions{}.max_binds_sent;
  bool without_dynamic_resources = false;  // the default profile with DynamicResources disabled
  // The scheduler's extenders (owned by the test, which outlives the scheduler).
  std::vector<ksched::testing::FakeExtender*> extenders;
};

// Hands an extender owned by the test to the scheduler, which owns what it is given.
class BorrowedExtender final : public framework::Extender {
 public:
  explicit BorrowedExtender(framework::Extender& e) : e_(e) {}
  const std::string& Name() const override { return e_.Name(); }
  bool IsInterested(const api::Pod& pod) const override { return e_.IsInterested(pod); }
  bool IsFilter() const override { return e_.IsFilter(); }
  bool IsPrioritizer() const override { return e_.IsPrioritizer(); }
  bool IsBinder() const override { return e_.IsBinder(); }
  bool SupportsPreemption() const override { return e_.SupportsPreemption(); }
  bool IsIgnorable() const override { return e_.IsIgnorable(); }
  int64_t Weight() const override { return e_.Weight(); }
  StatusOr<framework::ExtenderFilterResult> Filter(const api::Pod& pod,
                                                   std::span<const cache::NodeInfoPtr> nodes) override {
    return e_.Filter(pod, nodes);
  }
  std::future<StatusOr<std::vector<framework::HostPriority>>> Prioritize(
      const api::Pod& pod, std::span<const cache::NodeInfoPtr> nodes) override {
    return e_.Prioritize(pod, nodes);
  }
  Status Bind(const api::Pod& pod, const std::string& node) override { return e_.Bind(pod, node); }
  StatusOr<framework::NodeVictims> ProcessPreemption(const api::Pod& pod, const framework::NodeVictims& c,
                                                     const cache::Snapshot& snapshot) override {
    return e_.ProcessPreemption(pod, c, snapshot);
  }

 private:
  framework::Extender& e_;
};

class SchedulerTest : public ::testing::Test {
 protected:
  // Builds the scheduler on the fixture's clock, fake client and informer store.
  void Start(StartOptions options = {}) {
    if (options.async_client) api_ = std::make_unique<FakeApiClient>(FakeApiClient::Options{.async = true});
    framework::Registry registry = framework::InTreeRegistry();
    config::KubeSchedulerConfiguration cfg;
    if (options.without_dynamic_resources) {
      cfg.profiles.emplace_back();
      cfg.profiles[0].plugins.multi_point.disabled.push_back({"DynamicResources", 0});
    }
    config::SetDefaults(cfg);
    if (options.with_plugin) {
      registry[std::string(TestPlugin::kName)] = [knobs = knobs_](const config::PluginArgs&, framework::Handle&)
          -> StatusOr<std::unique_ptr<framework::Plugin>> {
        return std::unique_ptr<framework::Plugin>(std::make_unique<TestPlugin>(knobs));
      };
      config::Plugins& p = cfg.profiles.at(0).plugins;
      for (config::PluginSet* set : {&p.filter, &p.reserve, &p.permit})
        set->enabled.push_back({std::string(TestPlugin::kName), 0});
    }
    SchedulerOptions o;
    o.clock = &clock_;
    o.config = cfg;
    o.registry = std::move(registry);
    o.bind_client = api_.get();
    o.status_client = api_.get();
    o.binding_workers = 2;
    o.seed = 1;
    o.pod_lister = [this](const std::string& key) { return Lookup(key); };
    o.may_bind = std::move(options.may_bind);
    o.max_binds_sent = options.max_binds_sent;
    for (framework::Extender* e : options.extenders) o.extenders.push_back(std::make_unique<BorrowedExtender>(*e));
    auto s = Scheduler::New(std::move(o));
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    sched_ = std::move(*s);
  }

  void TearDown() override {
    if (!sched_) return;
    // Nothing may stay blocked, or the scheduler's destructor waits for it forever: pods
    // waiting at Permit are rejected, held requests answered.
    if (auto* fwk = sched_->FrameworkFor(kProfile))
      fwk->IterateOverWaitingPods([](framework::runtime::WaitingPod& wp) { wp.Reject("", "test over"); });
    api_->Hold(nullptr);
    api_->Release(nullptr, Status(StatusCode::kCancelled, "test over"));
    EXPECT_TRUE(WaitForBinds());
    sched_.reset();
  }

  // ---- the informers ----

  api::PodPtr Lookup(const std::string& key) {
    std::lock_guard l(store_mu_);
    auto it = store_.find(key);
    return it == store_.end() ? nullptr : it->second;
  }
  // What pod_lister returns from now on, without an event (the informer's store is
  // updated before its handlers run; a watch event may also still be on its way).
  void SetStore(const std::string& key, api::PodPtr pod) {
    std::lock_guard l(store_mu_);
    if (pod) {
      store_[key] = std::move(pod);
    } else {
      store_.erase(key);
    }
  }
  void AddNode(const api::NodePtr& node) { sched_->node_handler().OnAdd(node); }
  void AddPod(const api::PodPtr& pod) {
    SetStore(pod->Key(), pod);
    sched_->pod_handler().OnAdd(pod);
  }
  // An update from the store's current version to `pod`.
  void UpdatePod(const api::PodPtr& pod) {
    api::PodPtr old = Lookup(pod->Key());
    ASSERT_NE(old, nullptr) << pod->Key();
    SetStore(pod->Key(), pod);
    sched_->pod_handler().OnUpdate(old, pod);
  }
  // A delete; `last_known` defaults to the store's version.
  void DeletePod(const std::string& key, api::PodPtr last_known = nullptr) {
    if (!last_known) last_known = Lookup(key);
    ASSERT_NE(last_known, nullptr) << key;
    SetStore(key, nullptr);
    sched_->pod_handler().OnDelete({.last_known = last_known});
  }

  // ---- the scheduling loop ----

  // One scheduleOne iteration. Pop blocks while activeQ is empty, so that is a test bug.
  void ScheduleOneNoWait() {
    if (pq().PendingCounts().active == 0) {
      ADD_FAILURE() << "activeQ is empty: ScheduleOne would block";
      return;
    }
    sched_->ScheduleOne();
  }
  // ... and waits for the binding cycle it started, if any.
  void ScheduleOne() {
    ScheduleOneNoWait();
    EXPECT_TRUE(WaitForBinds());
  }
  // Binding cycles that failed finish on a worker (real time, bounded).
  bool WaitForBinds() {
    auto deadline = std::chrono::steady_clock::now() + 10s;
    while (sched_->BindsInFlight() > 0) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(1ms);
    }
    return true;
  }
  // Backoff on the FakeClock: moves the pods whose backoff has expired to activeQ.
  void AdvanceAndFlush(Clock::duration d) {
    clock_.Advance(d);
    pq().FlushBackoffQCompleted();
  }

  // ---- steps the tests share ----

  // Pod(name, "uid-<name>", cpu), added through the informer.
  api::PodPtr AddNewPod(const std::string& name, std::string cpu) {
    auto pod = Pod(name, "uid-" + name, std::move(cpu));
    AddPod(pod);
    return pod;
  }
  // The common start of a story: node "n1" with `node_cpu`, and pod "p" (uid-p) asking
  // for `pod_cpu`, queued.
  api::PodPtr AddNodeN1AndPodP(std::string node_cpu, std::string pod_cpu) {
    AddNode(Node("n1", std::move(node_cpu)));
    return AddNewPod("p", std::move(pod_cpu));
  }
  // Bind requests are answered by `answer`; every other request succeeds.
  void AnswerBindsWith(FakeApiClient::Handler answer) {
    api_->SetHandler([answer = std::move(answer)](const client::Request& r) -> StatusOr<client::Response> {
      if (!Contains(r.path, "/binding")) return client::Response{201, "{}"};
      return answer(r);
    });
  }
  // One scheduleOne iteration whose bind request the fake client holds unanswered.
  void ScheduleWithBindHeld() {
    api_->Hold(kAnyBind);
    ScheduleOneNoWait();
    ASSERT_EQ(api_->HeldCount(), 1u);
  }
  // Stops holding, answers the held binds with `result`, and waits for their binding cycles.
  [[nodiscard]] bool AnswerHeldBinds(StatusOr<client::Response> result) {
    api_->Hold(nullptr);
    api_->Release(nullptr, std::move(result));
    return WaitForBinds();
  }
  // A pod in backoffQ after a failed attempt: its 1 s backoff ends and it is scheduled again.
  void RetryAfterBackoff(const api::PodPtr& pod) {
    AdvanceAndFlush(1s);
    ASSERT_EQ(Where(pod), SubQueue::kActive);
    ScheduleOne();
  }

  // ---- checks the tests share ----

  // Done with `pod_name` and nothing to retry: the queue is empty, nothing is in flight,
  // and no PodScheduled=False condition was written.
  void ExpectSettledWithoutFailure(const std::string& pod_name) {
    EXPECT_EQ(pq().Len(), 0u);
    EXPECT_EQ(pq().InFlightPods(), 0u);
    EXPECT_TRUE(ConditionPatches(pod_name).empty());
  }
  // `pod_name` got exactly one PodScheduled=False patch, and it says each of `says`.
  void ExpectOneConditionPatch(const std::string& pod_name, std::initializer_list<std::string_view> says) {
    auto patches = ConditionPatches(pod_name);
    ASSERT_EQ(patches.size(), 1u);
    for (std::string_view s : says) EXPECT_TRUE(Contains(patches[0].body, s)) << patches[0].body;
  }
  // A rejection in the scheduling cycle: Unreserve ran once, nothing is bound or cached,
  // and the pod waits in unschedulablePods for `plugin`'s events.
  void ExpectUnreservedAndParked(const api::PodPtr& pod, std::string_view plugin) {
    EXPECT_TRUE(Binds().empty());
    EXPECT_EQ(knobs_->UnreserveCalls(), 1);
    EXPECT_EQ(sched_->cache().PodCount(), 0u);
    EXPECT_EQ(Where(pod), SubQueue::kUnschedulable);
    EXPECT_EQ(RejectedBy(plugin), 1u);
  }
  // The cache holds one pod, on `node`, asking for `milli_cpu`.
  void ExpectCountedOnceOn(const std::string& node, int64_t milli_cpu) {
    EXPECT_EQ(sched_->cache().PodCount(), 1u);
    const cache::NodeInfo* info = CachedNode(node);
    ASSERT_NE(info, nullptr) << node;
    ASSERT_EQ(info->pods().size(), 1u);
    EXPECT_EQ(info->requested().milli_cpu, milli_cpu);
  }
  // Pod "q" asking for `cpu` finds no room: it is parked, and the bind count stays `binds`.
  void ExpectPodQFindsNoRoom(std::string cpu, size_t binds) {
    auto q = AddNewPod("q", std::move(cpu));
    ScheduleOne();
    EXPECT_EQ(Where(q), SubQueue::kUnschedulable);
    EXPECT_EQ(Binds().size(), binds);
  }

  // ---- observations ----

  queue::PriorityQueue& pq() { return dynamic_cast<queue::PriorityQueue&>(sched_->queue()); }
  SubQueue Where(const api::PodPtr& pod) { return pq().Where(pod->Key()); }
  size_t RejectedBy(std::string_view plugin) {
    auto counts = pq().UnschedulablePodsByPlugin();
    auto it = counts.find({std::string(plugin), std::string(kProfile)});
    return it == counts.end() ? 0 : it->second;
  }
  std::vector<client::Request> Binds(const FakeApiClient::Matcher& which = kAnyBind) {
    return api_->Requests(which);
  }
  // PodScheduled=False patches of `pod_name`.
  std::vector<client::Request> ConditionPatches(const std::string& pod_name) {
    return api_->Requests(FakeApiClient::Is(Verb::kPatch, "/api/v1/namespaces/default/pods/" + pod_name + "/status"));
  }
  // Events with `reason` about `pod_name`.
  std::vector<std::string> Events(std::string_view reason, const std::string& pod_name) {
    std::vector<std::string> out;
    for (const auto& r :
         api_->Requests(FakeApiClient::Is(Verb::kPost, "/apis/events.k8s.io/v1/namespaces/default/events"))) {
      if (Contains(r.body, "\"reason\":\"" + std::string(reason) + "\"") &&
          Contains(r.body, R"("kind":"Pod","namespace":"default","name":")" + pod_name + "\""))
        out.push_back(r.body);
    }
    return out;
  }
  const cache::NodeInfo* CachedNode(const std::string& name) {
    dump_ = sched_->cache().Dump();
    auto it = dump_.nodes.find(name);
    return it == dump_.nodes.end() ? nullptr : &it->second;
  }

  FakeClock clock_;
  std::unique_ptr<FakeApiClient> api_ = std::make_unique<FakeApiClient>();  // outlives sched_
  std::shared_ptr<PluginKnobs> knobs_ = std::make_shared<PluginKnobs>();
  std::mutex store_mu_;
  std::map<std::string, api::PodPtr> store_;
  cache::CacheDump dump_;
  std::unique_ptr<Scheduler> sched_;
};

// ---- scheduleOne ----------------------------------------------------------------------

TEST_F(SchedulerTest, ScheduleOneBindsThenTheWatchConfirms) {
  Start();
  auto p = AddNodeN1AndPodP("4", "500m");
  EXPECT_EQ(Where(p), SubQueue::kActive);

  ScheduleOne();
  auto binds = Binds();
  ASSERT_EQ(binds.size(), 1u);
  EXPECT_EQ(binds[0].path, "/api/v1/namespaces/default/pods/p/binding");
  EXPECT_EQ(binds[0].content_type, client::kContentJson);
  EXPECT_TRUE(Contains(binds[0].body, R"("uid":"uid-p")")) << binds[0].body;  // the UID precondition
  EXPECT_TRUE(Contains(binds[0].body, R"("target":{"kind":"Node","name":"n1"})")) << binds[0].body;
  auto scheduled = Events("Scheduled", "p");
  ASSERT_EQ(scheduled.size(), 1u);
  EXPECT_TRUE(Contains(scheduled[0], R"("note":"Successfully assigned default/p to n1")")) << scheduled[0];
  EXPECT_TRUE(ConditionPatches("p").empty());
  // Out of the queue (and no longer in flight), assumed until the watch shows the bind.
  EXPECT_EQ(pq().Len(), 0u);
  EXPECT_EQ(pq().InFlightPods(), 0u);
  EXPECT_EQ(sched_->cache().AssumedPodCount(), 1u);

  UpdatePod(BoundTo(p, "n1"));
  EXPECT_EQ(sched_->cache().AssumedPodCount(), 0u);
  ExpectCountedOnceOn("n1", 500);
}

// handleSchedulingFailure after a FitError: condition, event, unschedulablePods; a
// NodeAdd that fits moves it to backoffQ, and it binds once its backoff (FakeClock) ends.
TEST_F(SchedulerTest, FitErrorParksThePodUntilANodeThatFitsArrives) {
  Start();
  AddNode(Node("small", "1"));
  auto big = AddNewPod("big", "2");

  ScheduleOne();
  EXPECT_TRUE(Binds().empty());
  EXPECT_EQ(Where(big), SubQueue::kUnschedulable);
  EXPECT_EQ(RejectedBy("NodeResourcesFit"), 1u);
  auto patches = ConditionPatches("big");
  ASSERT_EQ(patches.size(), 1u);
  EXPECT_EQ(patches[0].content_type, client::kContentStrategicMerge);
  EXPECT_TRUE(Contains(patches[0].body, R"("reason":"Unschedulable")")) << patches[0].body;
  EXPECT_TRUE(Contains(patches[0].body, "0/1 nodes are available: 1 Insufficient cpu.")) << patches[0].body;
  EXPECT_EQ(Events("FailedScheduling", "big").size(), 1u);
  EXPECT_EQ(sched_->cache().PodCount(), 0u);

  AddNode(Node("large", "4"));
  EXPECT_EQ(Where(big), SubQueue::kBackoff);  // its 1 s backoff has not passed
  AdvanceAndFlush(999ms);
  EXPECT_EQ(Where(big), SubQueue::kBackoff);
  AdvanceAndFlush(1ms);
  EXPECT_EQ(Where(big), SubQueue::kActive);

  ScheduleOne();
  auto binds = Binds();
  ASSERT_EQ(binds.size(), 1u);
  EXPECT_TRUE(Contains(binds[0].body, R"("name":"large")")) << binds[0].body;
}

// A pod with spec.resourceClaims needs its claims allocated and reserved before it can
// run; without the DynamicResources plugin this profile cannot do that, so the pod is
// never bound, stays unschedulable with a reason that says why, and explain shows it.
// (kube-apiserver 1.20 drops the field, so this runs on the scheduling path with the fake
// API client.)
TEST_F(SchedulerTest, PodWithResourceClaimsIsNeverBoundWithoutDynamicResources) {
  Start({.without_dynamic_resources = true});
  AddNode(Node("n1", "4"));
  auto base = Pod("claims", "uid-claims", "100m");
  auto with_claims = std::make_shared<api::Pod>(*base);
  with_claims->spec.resource_claims = {{.name = "gpu", .resource_claim_name = "gpu-claim"}};
  AddPod(with_claims);

  ScheduleOne();
  EXPECT_TRUE(Binds().empty());
  EXPECT_EQ(Where(with_claims), SubQueue::kUnschedulable);
  auto patches = ConditionPatches("claims");
  ASSERT_EQ(patches.size(), 1u);
  EXPECT_TRUE(Contains(patches[0].body, "pod uses ResourceClaims, which this profile cannot allocate"))
      << patches[0].body;
  ASSERT_EQ(Events("FailedScheduling", "claims").size(), 1u);
  auto verdict = sched_->decisions()->PodJson("default", "claims");
  ASSERT_TRUE(verdict.has_value());
  EXPECT_TRUE(Contains(*verdict, "pod uses ResourceClaims, which this profile cannot allocate")) << *verdict;

  // Nothing a cluster event brings changes that: still not bound after a new node and
  // the periodic flush of unschedulablePods.
  AddNode(Node("n2", "8"));
  clock_.Advance(6min);
  pq().FlushUnschedulablePodsLeftover();
  AdvanceAndFlush(1min);
  ASSERT_EQ(pq().PendingCounts().active, 1u);  // retried after the flush
  ScheduleOne();
  EXPECT_TRUE(Binds().empty());
  EXPECT_EQ(sched_->cache().AssumedPodCount(), 0u);
}

// With DynamicResources in the profile but an API server that does not serve
// resource.k8s.io/v1 (this fixture's lister, like a 1.20 server), there is nothing to
// allocate from: the pod is rejected at PreFilter with a reason saying so, never bound.
TEST_F(SchedulerTest, PodWithResourceClaimsIsNeverBoundWithoutTheResourceApi) {
  Start();
  AddNode(Node("n1", "4"));
  auto base = Pod("claims", "uid-claims", "100m");
  auto with_claims = std::make_shared<api::Pod>(*base);
  with_claims->spec.resource_claims = {{.name = "gpu", .resource_claim_name = "gpu-claim"}};
  AddPod(with_claims);

  ScheduleOne();
  EXPECT_TRUE(Binds().empty());
  EXPECT_EQ(Where(with_claims), SubQueue::kUnschedulable);
  auto patches = ConditionPatches("claims");
  ASSERT_EQ(patches.size(), 1u);
  EXPECT_TRUE(Contains(patches[0].body, "the API server does not serve resource.k8s.io/v1: ResourceClaims cannot be allocated"))
      << patches[0].body;
  ASSERT_EQ(Events("FailedScheduling", "claims").size(), 1u);
  EXPECT_EQ(sched_->cache().AssumedPodCount(), 0u);
}

// ---- the decision log (/debug/pods) ----

// A pod that fits nowhere: its verdict is kept while it waits; once scheduled, the log
// says where and why instead.
TEST_F(SchedulerTest, DecisionLogKeepsTheVerdictThenThePlacement) {
  Start();
  AddNode(Node("small", "1"));
  AddNode(Node("medium", "1500m"));
  auto big = AddNewPod("big", "2");
  ScheduleOne();
  ASSERT_NE(sched_->decisions(), nullptr);
  auto pending = sched_->decisions()->PodJson("default", "big");
  ASSERT_TRUE(pending.has_value());
  EXPECT_TRUE(Contains(*pending, R"("status":"Pending")")) << *pending;
  EXPECT_TRUE(Contains(*pending, R"("queue":{"name":"unschedulablePods")")) << *pending;
  EXPECT_TRUE(Contains(*pending, R"("plugin":"NodeResourcesFit","stage":"Filter","nodes":2)")) << *pending;
  EXPECT_TRUE(Contains(*pending, R"("rejectedBy":["NodeResourcesFit"])")) << *pending;
  EXPECT_TRUE(Contains(*pending, R"("event":"Node/Add|UpdateNodeAllocatable")")) << *pending;

  AddNode(Node("large", "4"));
  AdvanceAndFlush(1s);
  ScheduleOne();
  ASSERT_EQ(Binds().size(), 1u);
  auto placed = sched_->decisions()->PodJson("default", "big");
  ASSERT_TRUE(placed.has_value());
  EXPECT_TRUE(Contains(*placed, R"("status":"Scheduled")")) << *placed;
  EXPECT_TRUE(Contains(*placed, R"("node":"large")")) << *placed;
  EXPECT_TRUE(Contains(*placed, R"("attempts":2)")) << *placed;
  EXPECT_EQ(sched_->decisions()->PendingRecords(), 0u);
}

// Three attempts with the same verdict over more than --stuck-after: one SchedulingStuck
// event, however often the stuck check runs.
TEST_F(SchedulerTest, StuckPodGetsOneSchedulingStuckEvent) {
  Start();
  AddNode(Node("small", "1"));
  auto big = AddNewPod("big", "2");
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (attempt > 0) {
      clock_.Advance(6min);
      pq().FlushUnschedulablePodsLeftover();  // the retry after podMaxInUnschedulablePodsDuration
      AdvanceAndFlush(10s);
    }
    ScheduleOne();
    EXPECT_EQ(Where(big), SubQueue::kUnschedulable);
  }
  sched_->ReportStuckPods();
  sched_->ReportStuckPods();
  auto events = Events("SchedulingStuck", "big");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_TRUE(Contains(events[0], R"("type":"Warning")")) << events[0];
  EXPECT_TRUE(Contains(events[0], "with the same verdict in its last 3 attempts: 0/1 nodes are available: 1 "
                                  "Insufficient cpu."))
      << events[0];
  EXPECT_EQ(sched_->decisions()->StuckCounts()["default-scheduler"], 1u);
}

// A rejection at Reserve or Permit (in the scheduling cycle): Unreserve runs, the assumed
// pod is forgotten, nothing is bound, and the pod waits for the rejecting plugin's events.
TEST_F(SchedulerTest, ReserveRejectionUnreservesForgetsAndParks) {
  Start({.with_plugin = true});
  knobs_->Add(&PluginKnobs::reject_reserve, "p");
  auto p = AddNodeN1AndPodP("4", "100m");
  ScheduleOne();
  ExpectUnreservedAndParked(p, TestPlugin::kName);
  EXPECT_EQ(sched_->cache().AssumedPodCount(), 0u);
  ExpectOneConditionPatch("p", {"rejected by TestPlugin at Reserve"});
  EXPECT_EQ(Events("FailedScheduling", "p").size(), 1u);
}

TEST_F(SchedulerTest, PermitRejectionUnreservesForgetsAndParks) {
  Start({.with_plugin = true});
  knobs_->Add(&PluginKnobs::reject_permit, "p");
  auto p = AddNodeN1AndPodP("4", "100m");
  ScheduleOne();
  ExpectUnreservedAndParked(p, TestPlugin::kName);
  ExpectOneConditionPatch("p", {R"("reason":"Unschedulable")", "rejected by TestPlugin at Permit"});
}

// A bind error that is not a rejection: the pod backs off and is retried.
TEST_F(SchedulerTest, BindErrorForgetsThePodAndRetriesAfterBackoff) {
  Start();
  auto p = AddNodeN1AndPodP("4", "100m");
  AnswerBindsWith([](const client::Request&) -> StatusOr<client::Response> {
    return client::Response{500, R"({"kind":"Status","message":"etcd leader changed"})"};
  });
  ScheduleOne();
  EXPECT_EQ(Binds().size(), 1u);
  EXPECT_EQ(sched_->cache().PodCount(), 0u);
  EXPECT_EQ(Where(p), SubQueue::kBackoff);
  ExpectOneConditionPatch("p", {R"("reason":"SchedulerError")", "etcd leader changed"});

  api_->SetHandler(nullptr);
  ASSERT_NO_FATAL_FAILURE(RetryAfterBackoff(p));
  EXPECT_EQ(Binds().size(), 2u);
  EXPECT_EQ(pq().Len(), 0u);
  EXPECT_EQ(sched_->cache().AssumedPodCount(), 1u);
}

// upstream extendersBinding: a binder interested in the pod binds it instead of the Bind
// plugins; an ignorable one that fails leaves it to them; any other failure is the
// binding cycle's.
TEST_F(SchedulerTest, ExtenderBindsInsteadOfTheBindPlugins) {
  ksched::testing::FakeExtender ext("http://binder");
  std::string bound_to;
  ext.bind = [&](const api::Pod& pod, const std::string& node) {
    bound_to = pod.Key() + "@" + node;
    return Status::OK();
  };
  Start({.extenders = {&ext}});
  auto p = AddNodeN1AndPodP("4", "100m");
  ScheduleOne();
  EXPECT_EQ(ext.bind_calls, 1);
  EXPECT_EQ(bound_to, "default/p@n1");
  EXPECT_TRUE(Binds().empty());
  EXPECT_EQ(Events("Scheduled", "p").size(), 1u);
  EXPECT_EQ(sched_->cache().AssumedPodCount(), 1u);
}

TEST_F(SchedulerTest, IgnorableExtenderThatFailsToBindLeavesItToTheBindPlugins) {
  ksched::testing::FakeExtender ext("http://binder");
  ext.ignorable = true;
  ext.bind = [](const api::Pod&, const std::string&) { return Unavailable("connection refused"); };
  Start({.extenders = {&ext}});
  AddNodeN1AndPodP("4", "100m");
  ScheduleOne();
  EXPECT_EQ(ext.bind_calls, 1);
  EXPECT_EQ(Binds().size(), 1u);
  EXPECT_EQ(sched_->cache().AssumedPodCount(), 1u);
}

TEST_F(SchedulerTest, ExtenderBindFailureRequeuesThePod) {
  ksched::testing::FakeExtender ext("http://binder");
  ext.bind = [](const api::Pod&, const std::string&) { return Unavailable("node is being drained"); };
  Start({.extenders = {&ext}});
  auto p = AddNodeN1AndPodP("4", "100m");
  ScheduleOne();
  EXPECT_EQ(ext.bind_calls, 1);
  EXPECT_TRUE(Binds().empty());
  EXPECT_EQ(sched_->cache().PodCount(), 0u);
  EXPECT_EQ(Where(p), SubQueue::kBackoff);
  ExpectOneConditionPatch("p", {R"("reason":"SchedulerError")", "node is being drained"});
}

TEST_F(SchedulerTest, PodAnExtenderRejectedIsRetriedOnAnyEvent) {
  ksched::testing::FakeExtender ext("http://filter");
  ext.filter = ksched::testing::FakeExtender::Rejecting({"n1"});
  Start({.extenders = {&ext}});
  auto p = AddNodeN1AndPodP("4", "100m");
  ScheduleOne();
  EXPECT_EQ(Where(p), SubQueue::kUnschedulable);
  ExpectOneConditionPatch("p", {R"("reason":"Unschedulable")", "0/1 nodes are available: 1 rejected by the extender."});
  // Explain names the extenders and what wakes the pod, and does not call it stuck.
  auto pending = sched_->decisions()->PodJson("default", "p");
  ASSERT_TRUE(pending.has_value());
  EXPECT_TRUE(Contains(*pending, R"("rejectedBy":["Extender"])")) << *pending;
  EXPECT_TRUE(Contains(*pending, R"("event":"any cluster event")")) << *pending;
  EXPECT_FALSE(Contains(*pending, "no cluster event registered")) << *pending;
  // A node label change is an event no plugin of the default profile cares about for a
  // pod that fits everywhere; it may change the extender's mind.
  api::Node labelled = *Node("n1", "4");
  labelled.metadata.labels.Set("team", "a");
  sched_->node_handler().OnUpdate(Node("n1", "4"), std::make_shared<api::Node>(labelled));
  EXPECT_NE(Where(p), SubQueue::kUnschedulable);
}

// SchedulerOptions::may_bind false (a stale lease): no bind request goes out; the pod is
// forgotten and requeued, and binds once the gate opens.
TEST_F(SchedulerTest, BindGateClosedSendsNoBindAndRequeues) {
  std::atomic<bool> leader{false};
  std::atomic<int> asked{0};
  Start({.may_bind = [&] {
    ++asked;
    return leader.load();
  }});
  auto p = AddNodeN1AndPodP("4", "100m");

  ScheduleOne();
  EXPECT_GE(asked.load(), 1);
  EXPECT_TRUE(Binds().empty());
  EXPECT_EQ(sched_->cache().PodCount(), 0u);
  EXPECT_EQ(sched_->cache().AssumedPodCount(), 0u);
  EXPECT_EQ(Where(p), SubQueue::kBackoff);  // an error, not a rejection: retried after backoff
  EXPECT_EQ(pq().InFlightPods(), 0u);
  ExpectOneConditionPatch("p", {"leader election lease"});

  leader = true;
  ASSERT_NO_FATAL_FAILURE(RetryAfterBackoff(p));
  ASSERT_EQ(Binds().size(), 1u);
  EXPECT_EQ(sched_->cache().AssumedPodCount(), 1u);
  EXPECT_EQ(pq().Len(), 0u);
}

// A pod rejected while it waits at Permit (a gang sibling's failure) fitted when it was
// assumed: it goes back to backoffQ to retry, not to unschedulablePods to wait for an
// event. Its assumed room is freed with an AssignedPodDelete move, which takes another
// pod TestPlugin rejected out of unschedulablePods.
TEST_F(SchedulerTest, PodRejectedAtPermitRetriesAfterBackoff) {
  Start({.with_plugin = true});
  knobs_->Add(&PluginKnobs::reject_permit, "other");
  knobs_->Add(&PluginKnobs::wait_permit, "p");
  AddNode(Node("n1", "4"));
  auto other = AddNewPod("other", "100m");
  ScheduleOne();
  ASSERT_EQ(Where(other), SubQueue::kUnschedulable);

  auto p = AddNewPod("p", "100m");
  ScheduleOneNoWait();
  auto* fwk = sched_->FrameworkFor(kProfile);
  ASSERT_NE(fwk, nullptr);
  auto waiting = fwk->GetWaitingPod("uid-p");
  ASSERT_NE(waiting, nullptr);
  EXPECT_EQ(sched_->cache().AssumedPodCount(), 1u);
  waiting->Reject(TestPlugin::kName, "denied by the test");
  ASSERT_TRUE(WaitForBinds());

  EXPECT_TRUE(Binds().empty());
  EXPECT_EQ(sched_->cache().PodCount(), 0u);
  EXPECT_EQ(Where(p), SubQueue::kBackoff);
  EXPECT_EQ(Where(other), SubQueue::kBackoff);
  ExpectOneConditionPatch("p", {R"("reason":"Unschedulable")", "denied by the test"});
}

// A pod whose wait at Permit times out fitted when it was assumed and nothing rejected
// it: it goes to backoffQ to retry, not to unschedulablePods to wait for an event.
TEST_F(SchedulerTest, PodTimedOutAtPermitRetriesAfterBackoff) {
  Start({.with_plugin = true});
  knobs_->Add(&PluginKnobs::wait_permit, "p");
  auto p = AddNodeN1AndPodP("4", "100m");
  ScheduleOneNoWait();
  auto* fwk = sched_->FrameworkFor(kProfile);
  ASSERT_NE(fwk->GetWaitingPod("uid-p"), nullptr);
  clock_.Advance(61s);
  ASSERT_TRUE(WaitForBinds());
  EXPECT_TRUE(Binds().empty());
  EXPECT_EQ(Where(p), SubQueue::kBackoff);
  ExpectOneConditionPatch("p", {R"("reason":"Unschedulable")", "rejected due to timeout after waiting 1m0s"});
}

// A pod deleted while it waits at Permit: the delete handler rejects it, its binding
// cycle ends without a bind, and it is not requeued.
TEST_F(SchedulerTest, PodDeletedWhileWaitingAtPermitIsNeverBound) {
  Start({.with_plugin = true});
  knobs_->Add(&PluginKnobs::wait_permit, "p");
  auto p = AddNodeN1AndPodP("4", "100m");
  ScheduleOneNoWait();
  auto* fwk = sched_->FrameworkFor(kProfile);
  ASSERT_NE(fwk->GetWaitingPod("uid-p"), nullptr);
  EXPECT_EQ(sched_->BindsInFlight(), 1u);

  DeletePod(p->Key());
  EXPECT_EQ(sched_->cache().PodCount(), 0u);  // the delete frees the node at once
  ASSERT_TRUE(WaitForBinds());
  EXPECT_EQ(fwk->GetWaitingPod("uid-p"), nullptr);
  EXPECT_TRUE(Binds().empty());
  ExpectSettledWithoutFailure("p");
}

// Binds awaiting the API server are bounded: with max_binds_sent unanswered, the next
// scheduling cycle waits before it takes a pod, and one answer lets it go on.
TEST_F(SchedulerTest, SchedulingWaitsWhileTooManyBindsAwaitAnswers) {
  Start({.max_binds_sent = 2});
  AddNode(Node("n1", "4"));
  std::vector<api::PodPtr> pods = {AddNewPod("a", "100m"), AddNewPod("b", "100m"), AddNewPod("c", "100m")};
  api_->Hold(kAnyBind);
  ScheduleOneNoWait();
  ScheduleOneNoWait();
  ASSERT_EQ(api_->HeldCount(), 2u);
  std::vector<api::PodPtr> sent, queued;
  for (const api::PodPtr& p : pods) (Where(p) == SubQueue::kActive ? queued : sent).push_back(p);
  ASSERT_EQ(queued.size(), 1u);

  std::atomic<bool> done{false};
  std::thread third([&] {
    sched_->ScheduleOne();
    done = true;
  });
  std::this_thread::sleep_for(100ms);
  EXPECT_FALSE(done.load()) << "scheduled a third pod with two binds unanswered";
  EXPECT_EQ(Where(queued[0]), SubQueue::kActive);
  EXPECT_EQ(api_->HeldCount(), 2u);

  EXPECT_EQ(api_->Release(BindOf(sent[0]->metadata.name), client::Response{201, "{}"}), 1u);
  third.join();
  EXPECT_TRUE(done.load());
  EXPECT_EQ(api_->HeldCount(), 2u);  // the other two pods' binds
  EXPECT_EQ(Binds().size(), 3u);
}

// ---- bind failures (reliability) ------------------------------------------------------

// (7) 409 "already assigned": another scheduler won, and the informer store already shows
// the pod assigned. The assumed pod is forgotten and the pod is not requeued (no retry
// loop, no failure condition written over the other scheduler's bind); the watch event
// then counts the pod where it really runs.
TEST_F(SchedulerTest, BindConflictAlreadyAssignedIsNotRequeued) {
  Start();
  auto p = AddNodeN1AndPodP("4", "500m");
  AddNode(Node("n2", "4"));
  auto elsewhere = BoundTo(p, "n-other");
  AnswerBindsWith([&](const client::Request&) -> StatusOr<client::Response> {
    SetStore(p->Key(), elsewhere);
    return AlreadyAssigned("p", "n-other");
  });

  ScheduleOne();
  EXPECT_EQ(Binds().size(), 1u);
  EXPECT_EQ(sched_->cache().PodCount(), 0u);
  EXPECT_EQ(sched_->cache().AssumedPodCount(), 0u);
  ExpectSettledWithoutFailure("p");
  EXPECT_TRUE(Events("FailedScheduling", "p").empty());

  sched_->pod_handler().OnUpdate(p, elsewhere);  // the watch event, after the bind failed
  ExpectCountedOnceOn("n-other", 500);
  for (const char* n : {"n1", "n2"}) EXPECT_TRUE(CachedNode(n)->pods().empty()) << n;
  EXPECT_EQ(pq().Len(), 0u);
}

// (7b) The same when the watch event arrives while our bind is still in flight: the
// event confirms the assumed pod on the other node, and the later Forget must not drop
// it from there.
TEST_F(SchedulerTest, BindConflictAfterTheWatchShowedThePodElsewhere) {
  Start();
  auto p = AddNodeN1AndPodP("4", "500m");
  ASSERT_NO_FATAL_FAILURE(ScheduleWithBindHeld());

  AddNode(Node("n2", "4"));
  UpdatePod(BoundTo(p, "n2"));
  EXPECT_EQ(sched_->cache().AssumedPodCount(), 0u);  // confirmed (on n2)
  ASSERT_TRUE(AnswerHeldBinds(AlreadyAssigned("p", "n2")));

  EXPECT_TRUE(CachedNode("n1")->pods().empty());
  ExpectCountedOnceOn("n2", 500);
  ExpectSettledWithoutFailure("p");
}

// (8) 404 / 409 "being deleted": the pod is gone from the store (or replaced by a pod
// with another UID). It is forgotten and dropped, and the pods its assumed place kept
// out are woken (upstream handleBindingCycleError's AssignedPodDelete move).
struct GoneCase {
  std::string name;
  long http_code;
  std::string reason, message;
  bool recreated;  // the store shows a new pod of the same name, else nothing
};
void PrintTo(const GoneCase& c, std::ostream* os) { *os << c.name; }

class BindGoneTest : public SchedulerTest, public ::testing::WithParamInterface<GoneCase> {};

TEST_P(BindGoneTest, PodIsDroppedAndWaitingPodsAreWoken) {
  const GoneCase& c = GetParam();
  Start();
  AddNode(Node("n1", "1"));
  auto doomed = AddNewPod("doomed", "800m");
  ASSERT_NO_FATAL_FAILURE(ScheduleWithBindHeld());

  // While the bind is in flight the node is full with the assumed pod.
  auto waiter = AddNewPod("waiter", "800m");
  ScheduleOneNoWait();  // a FitError: nothing to wait for (doomed's bind stays held)
  ASSERT_EQ(Where(waiter), SubQueue::kUnschedulable);
  ASSERT_EQ(RejectedBy("NodeResourcesFit"), 1u);

  SetStore(doomed->Key(), c.recreated ? Pod("doomed", "uid-doomed-2", "800m") : nullptr);
  ASSERT_TRUE(AnswerHeldBinds(FakeApiClient::ApiError(c.http_code, c.reason, c.message)));

  EXPECT_EQ(sched_->cache().PodCount(), 0u);
  EXPECT_EQ(Where(doomed), SubQueue::kNone);
  EXPECT_EQ(pq().InFlightPods(), 0u);
  EXPECT_TRUE(ConditionPatches("doomed").empty());
  EXPECT_TRUE(Events("FailedScheduling", "doomed").empty());
  EXPECT_EQ(Where(waiter), SubQueue::kBackoff);  // woken; backing off from its own attempt

  AdvanceAndFlush(1s);
  ScheduleOne();
  auto binds = Binds(BindOf("waiter"));
  ASSERT_EQ(binds.size(), 1u);
  EXPECT_TRUE(Contains(binds[0].body, R"("name":"n1")")) << binds[0].body;
  EXPECT_EQ(Binds().size(), 2u);
}

INSTANTIATE_TEST_SUITE_P(
    Gone, BindGoneTest,
    ::testing::Values(GoneCase{"NotFound", 404, "NotFound", "pods \"doomed\" not found", false},
                      GoneCase{"BeingDeleted", 409, "Conflict",
                               "Operation cannot be fulfilled on pods/binding \"doomed\": pod doomed is being "
                               "deleted, cannot be assigned to a host",
                               true}),
    [](const ::testing::TestParamInfo<GoneCase>& info) { return info.param.name; });

// (9) The bind timed out on the client but the API server did bind: the store shows the
// pod assigned. It is not requeued, and once the watch event arrives the pod counts once
// on its node, so the node's room is not handed out twice.
TEST_F(SchedulerTest, BindTimeoutThatSucceededIsNotRequeuedNorDoubleBooked) {
  Start();
  auto p = AddNodeN1AndPodP("1", "600m");
  auto bound = BoundTo(p, "n1");
  AnswerBindsWith([&](const client::Request&) -> StatusOr<client::Response> {
    SetStore(p->Key(), bound);  // the server bound it; the answer was lost
    return Status(StatusCode::kDeadlineExceeded, "context deadline exceeded (Client.Timeout exceeded)");
  });

  ScheduleOne();
  EXPECT_EQ(Binds().size(), 1u);
  ExpectSettledWithoutFailure("p");
  EXPECT_EQ(sched_->cache().PodCount(), 0u);  // forgotten until the watch shows it

  sched_->pod_handler().OnUpdate(p, bound);
  EXPECT_EQ(sched_->cache().AssumedPodCount(), 0u);
  ExpectCountedOnceOn("n1", 600);

  api_->SetHandler(nullptr);
  ExpectPodQFindsNoRoom("600m", 1);  // 600m + 600m > 1 cpu
}

// (9c) Better than upstream: when the bind's answer is lost, ksched reads the pod back
// before forgetting it. Bound to our node: a success at once (Scheduled event, not
// requeued), and the pod stays counted on its node before any watch event, so its room
// is never offered twice. While the read itself fails, the pod stays assumed.
TEST_F(SchedulerTest, LostBindAnswerIsReadBackAndTheRoomIsNeverFreed) {
  Start();
  auto p = AddNodeN1AndPodP("1", "600m");
  auto bound = BoundTo(p, "n1");
  std::atomic<int> reads{0};
  api_->SetHandler([&](const client::Request& r) -> StatusOr<client::Response> {
    if (Contains(r.path, "/binding")) return Status(StatusCode::kUnavailable, "connection closed by 127.0.0.1:6443");
    if (r.verb == Verb::kGet && r.path == "/api/v1/namespaces/default/pods/p") {
      if (reads++ == 0) return Status(StatusCode::kUnavailable, "connection refused");  // the server is restarting
      return client::Response{200, api::EncodePod(*bound)};
    }
    return client::Response{201, "{}"};
  });

  ScheduleOne();
  EXPECT_EQ(reads.load(), 2);
  EXPECT_EQ(Binds().size(), 1u);
  ExpectSettledWithoutFailure("p");
  EXPECT_EQ(Events("Scheduled", "p").size(), 1u);
  // Still counted (assumed) with no watch event yet: a second 600m pod does not fit.
  ASSERT_NE(CachedNode("n1"), nullptr);
  EXPECT_EQ(CachedNode("n1")->requested().milli_cpu, 600);
  ExpectPodQFindsNoRoom("600m", 1);
  // The watch event then confirms it, counted once.
  UpdatePod(bound);
  EXPECT_EQ(sched_->cache().AssumedPodCount(), 0u);
  EXPECT_EQ(CachedNode("n1")->requested().milli_cpu, 600);
}

// (9d) A 409 "already assigned" for our own earlier bind (its answer was lost and the
// retry met it) is the same success; a 409 for a pod bound elsewhere stays a failure.
TEST_F(SchedulerTest, ConflictForOurOwnEarlierBindIsASuccess) {
  Start();
  auto p = AddNodeN1AndPodP("1", "600m");
  auto bound = BoundTo(p, "n1");
  api_->SetHandler([&](const client::Request& r) -> StatusOr<client::Response> {
    if (Contains(r.path, "/binding")) return AlreadyAssigned("p", "n1");
    if (r.verb == Verb::kGet) return client::Response{200, api::EncodePod(*bound)};
    return client::Response{201, "{}"};
  });
  ScheduleOne();
  EXPECT_EQ(pq().Len(), 0u);
  EXPECT_EQ(Events("Scheduled", "p").size(), 1u);
  EXPECT_EQ(CachedNode("n1")->requested().milli_cpu, 600);
}

// (9b) The same with the watch event first: it confirms the assumed pod while the bind is
// still in flight; the timeout's Forget must not uncount it.
TEST_F(SchedulerTest, BindTimeoutAfterTheWatchConfirmedTheBind) {
  Start();
  auto p = AddNodeN1AndPodP("1", "600m");
  ASSERT_NO_FATAL_FAILURE(ScheduleWithBindHeld());
  UpdatePod(BoundTo(p, "n1"));
  EXPECT_EQ(sched_->cache().AssumedPodCount(), 0u);

  ASSERT_TRUE(AnswerHeldBinds(Status(StatusCode::kDeadlineExceeded, "context deadline exceeded")));
  ExpectSettledWithoutFailure("p");
  ExpectCountedOnceOn("n1", 600);

  ExpectPodQFindsNoRoom("600m", 1);
}

// (10) The pod was deleted and recreated under the same name while its bind was in
// flight: the server refuses the old UID (precondition), the old attempt is dropped
// without touching the new pod, and the new pod is scheduled on its own and bound once.
TEST_F(SchedulerTest, SameNameNewUidBeforeBindingBindsTheNewPodOnce) {
  Start();
  AddNode(Node("n1", "4"));
  std::mutex server_mu;
  std::string server_uid = "uid-1";  // the UID of the live pod "p" on the API server
  AnswerBindsWith([&](const client::Request& r) -> StatusOr<client::Response> {
    std::lock_guard l(server_mu);
    if (!Contains(r.body, "\"uid\":\"" + server_uid + "\""))
      return FakeApiClient::ApiError(409, "Conflict",
                                     "Operation cannot be fulfilled on pods/binding \"p\": Precondition failed: UID "
                                     "in precondition: uid-1, UID in object meta: " + server_uid);
    return client::Response{201, "{}"};
  });
  auto old_pod = Pod("p", "uid-1", "500m");
  AddPod(old_pod);
  ASSERT_NO_FATAL_FAILURE(ScheduleWithBindHeld());

  auto new_pod = Pod("p", "uid-2", "700m");
  {
    std::lock_guard l(server_mu);
    server_uid = "uid-2";
  }
  DeletePod(old_pod->Key());
  AddPod(new_pod);
  EXPECT_EQ(sched_->cache().PodCount(), 0u);  // the old pod's assumed place is freed
  ASSERT_EQ(Where(new_pod), SubQueue::kActive);

  api_->Hold(nullptr);
  ASSERT_EQ(api_->Release(), 1u);  // answered by the handler: 409
  ASSERT_TRUE(WaitForBinds());
  EXPECT_EQ(Where(new_pod), SubQueue::kActive);  // untouched by the old attempt's failure
  EXPECT_EQ(pq().Len(), 1u);
  EXPECT_TRUE(ConditionPatches("p").empty());

  ScheduleOne();
  auto binds = Binds();
  ASSERT_EQ(binds.size(), 2u);
  EXPECT_TRUE(Contains(binds[0].body, R"("uid":"uid-1")"));
  EXPECT_TRUE(Contains(binds[1].body, R"("uid":"uid-2")"));
  EXPECT_EQ(Events("Scheduled", "p").size(), 1u);
  EXPECT_EQ(pq().Len(), 0u);
  EXPECT_EQ(pq().InFlightPods(), 0u);

  UpdatePod(BoundTo(new_pod, "n1"));
  EXPECT_EQ(sched_->cache().PodCount(), 1u);
  EXPECT_EQ(sched_->cache().AssumedPodCount(), 0u);
  EXPECT_EQ(CachedNode("n1")->requested().milli_cpu, 700);
}

// The real client completes requests on its I/O thread: the same stories with the fake
// answering on its own thread (a successful bind's tail then runs there, a failure on a
// binding worker).
TEST_F(SchedulerTest, BindsAnsweredOnTheClientThread) {
  Start({.async_client = true});
  AddNodeN1AndPodP("1", "600m");
  ScheduleOne();
  // The bind's completion holds events back until it is destroyed, which is after the
  // binding cycle has ended: the Scheduled event is sent once the client is idle.
  ASSERT_TRUE(api_->WaitIdle(5s));
  ASSERT_EQ(Binds().size(), 1u);
  EXPECT_EQ(Events("Scheduled", "p").size(), 1u);
  EXPECT_EQ(sched_->cache().AssumedPodCount(), 1u);
  EXPECT_EQ(pq().InFlightPods(), 0u);

  // The server no longer knows q (404): forgotten and dropped, p stays counted.
  auto q = AddNewPod("q", "300m");
  AnswerBindsWith([&](const client::Request& r) -> StatusOr<client::Response> {
    if (!Contains(r.path, "/pods/q/binding")) return client::Response{201, "{}"};
    SetStore(q->Key(), nullptr);
    return FakeApiClient::ApiError(404, "NotFound", "pods \"q\" not found");
  });
  ScheduleOne();
  EXPECT_EQ(Binds().size(), 2u);
  EXPECT_EQ(Where(q), SubQueue::kNone);
  EXPECT_EQ(pq().InFlightPods(), 0u);
  EXPECT_EQ(sched_->cache().PodCount(), 1u);
  EXPECT_EQ(CachedNode("n1")->requested().milli_cpu, 600);
  EXPECT_TRUE(api_->WaitIdle(5s));
}

// ---- event handlers -------------------------------------------------------------------

TEST_F(SchedulerTest, PodEventsAreRoutedByAssignmentAndSchedulerName) {
  Start();
  AddNode(Node("n1", "4"));
  auto ours = Pod("ours", "uid-ours", "100m");
  auto foreign = PodBuilder("foreign").UID("uid-foreign").SchedulerName("other-scheduler").Req({{"cpu", "100m"}}).Obj();
  auto running = BoundTo(Pod("running", "uid-running", "200m"), "n1");
  auto foreign_running = BoundTo(
      PodBuilder("foreign-running").UID("uid-fr").SchedulerName("other-scheduler").Req({{"cpu", "300m"}}).Obj(), "n1");

  AddPod(ours);  // unassigned, our profile: queued
  EXPECT_EQ(Where(ours), SubQueue::kActive);
  AddPod(foreign);  // unassigned, another scheduler's: ignored
  EXPECT_EQ(Where(foreign), SubQueue::kNone);
  AddPod(running);  // assigned: counted in the cache, whoever bound it
  AddPod(foreign_running);
  EXPECT_EQ(Where(running), SubQueue::kNone);
  EXPECT_EQ(sched_->cache().PodCount(), 2u);
  EXPECT_EQ(CachedNode("n1")->requested().milli_cpu, 500);
  EXPECT_EQ(pq().Len(), 1u);

  // An update of a foreign pod still is not queued.
  auto foreign2 = std::make_shared<api::Pod>(*foreign);
  foreign2->metadata.labels.Set("x", "y");
  UpdatePod(foreign2);
  EXPECT_EQ(Where(foreign), SubQueue::kNone);

  // Bound by someone else while queued: leaves the queue, counts on its node.
  UpdatePod(BoundTo(ours, "n1"));
  EXPECT_EQ(Where(ours), SubQueue::kNone);
  EXPECT_EQ(sched_->cache().PodCount(), 3u);
  EXPECT_EQ(CachedNode("n1")->requested().milli_cpu, 600);

  // Deletes: an assigned pod leaves the cache; a queued one leaves the queue.
  DeletePod(foreign_running->Key());
  EXPECT_EQ(sched_->cache().PodCount(), 2u);
  auto queued = AddNewPod("queued", "100m");
  ASSERT_EQ(Where(queued), SubQueue::kActive);
  DeletePod(queued->Key());
  EXPECT_EQ(Where(queued), SubQueue::kNone);
  EXPECT_EQ(pq().Len(), 0u);
}

// The informer reports a pod recreated under the same name (new UID) as a delete and an
// add; the queue then holds the new pod, and the cache drops the old one.
TEST_F(SchedulerTest, UidChangeReplacesThePodInQueueAndCache) {
  Start();
  AddNode(Node("n1", "4"));
  auto v1 = Pod("p", "uid-1", "100m");
  AddPod(v1);
  auto v2 = Pod("p", "uid-2", "100m");
  DeletePod(v1->Key());
  AddPod(v2);
  ASSERT_EQ(pq().Len(), 1u);
  EXPECT_EQ(pq().PendingPods().at(0)->metadata.uid, "uid-2");

  // An assigned pod replaced by an unassigned one of the same name.
  auto r1 = BoundTo(Pod("r", "uid-r1", "300m"), "n1");
  AddPod(r1);
  ASSERT_EQ(sched_->cache().PodCount(), 1u);
  DeletePod(r1->Key());
  auto r2 = Pod("r", "uid-r2", "300m");
  AddPod(r2);
  EXPECT_EQ(sched_->cache().PodCount(), 0u);
  EXPECT_EQ(Where(r2), SubQueue::kActive);

  ScheduleOne();
  ScheduleOne();
  auto binds = Binds();
  ASSERT_EQ(binds.size(), 2u);
  for (const auto& b : binds) EXPECT_FALSE(Contains(b.body, "uid-1") || Contains(b.body, "uid-r1")) << b.body;
  EXPECT_EQ(Binds(BindOf("p")).size(), 1u);
  EXPECT_EQ(Binds(BindOf("r")).size(), 1u);
}

// After a watch gap the delete's last known state can predate our bind (unassigned), yet
// the assumed pod must still free its node.
TEST_F(SchedulerTest, DeleteWithStaleTombstoneFreesTheAssumedPod) {
  Start();
  auto p = AddNodeN1AndPodP("1", "800m");
  api_->Hold(kAnyBind);
  ScheduleOneNoWait();
  ASSERT_EQ(sched_->cache().AssumedPodCount(), 1u);

  DeletePod(p->Key(), /*last_known=*/p);
  EXPECT_EQ(sched_->cache().PodCount(), 0u);
  ASSERT_TRUE(AnswerHeldBinds(FakeApiClient::ApiError(404, "NotFound", "pods \"p\" not found")));
  EXPECT_EQ(pq().Len(), 0u);
  EXPECT_EQ(pq().InFlightPods(), 0u);

  AddNewPod("q", "800m");
  ScheduleOne();
  EXPECT_EQ(Binds(BindOf("q")).size(), 1u);  // the room p held is free again
}

// AssignedPodChangeMayHelp: the kubelet's status updates of running pods never reach the
// queue (upstream AssignedPodOtherUpdate, which no plugin registers); a label change does
// and may move a pending pod. `fan` needs a pod labelled app=web (required affinity) and
// is held by TestPlugin, which registers every Pod event without a hint: any
// AssignedPodUpdate that reaches the queue moves it.
TEST_F(SchedulerTest, AssignedPodStatusOnlyUpdateDoesNotReachTheQueue) {
  Start({.with_plugin = true});
  AddNode(Node("n1", "4"));
  auto web = BoundTo(PodBuilder("web").UID("uid-web").Label("app", "web").Req({{"cpu", "100m"}}).Obj(), "n1");
  AddPod(web);
  knobs_->Add(&PluginKnobs::reject_filter, "fan");
  auto fan = PodBuilder("fan")
                 .UID("uid-fan")
                 .SchedulerName(std::string(kProfile))
                 .PodAffinityIn("app", "kubernetes.io/hostname", {"web"}, ksched::testing::AffinityKind::kRequired)
                 .Req({{"cpu", "100m"}})
                 .Obj();
  AddPod(fan);
  ScheduleOne();
  ASSERT_EQ(Where(fan), SubQueue::kUnschedulable);
  ASSERT_EQ(RejectedBy(TestPlugin::kName), 1u);

  auto running = std::make_shared<api::Pod>(*web);
  running->status.phase = "Running";
  running->status.conditions.push_back({.type = "PodScheduled", .status = "True"});
  running->metadata.resource_version = "2";
  UpdatePod(running);
  EXPECT_EQ(Where(fan), SubQueue::kUnschedulable);
  auto cached = sched_->cache().GetPod(*running);
  ASSERT_TRUE(cached.ok());
  EXPECT_EQ((*cached)->status.phase, "Running");  // the cache still takes the update

  auto relabelled = std::make_shared<api::Pod>(*running);
  relabelled->metadata.labels.Set("tier", "frontend");
  UpdatePod(relabelled);
  EXPECT_EQ(Where(fan), SubQueue::kBackoff);
}

// ---- the fake client itself ----------------------------------------------------------

TEST(FakeApiClientTest, AnswersInsideSendAndRecordsEveryRequest) {
  FakeApiClient api;
  bool answered = false;
  api.Send({.verb = Verb::kPost, .path = "/api/v1/namespaces/ns/pods/p/binding", .body = "b"},
           [&](StatusOr<client::Response> r) {
             ASSERT_TRUE(r.ok());
             EXPECT_EQ(r->http_code, 201);
             answered = true;
           });
  EXPECT_TRUE(answered);  // before Send returned
  auto got = api.Do({.path = "/api/v1/nodes"});
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->http_code, 200);
  auto all = api.Requests();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].body, "b");
  EXPECT_EQ(api.Count(FakeApiClient::Is(Verb::kPost, "/binding")), 1u);
  EXPECT_EQ(api.Count(FakeApiClient::Is(Verb::kGet)), 1u);
}

TEST(FakeApiClientTest, HandlerErrorsMapLikeTheRealClient) {
  FakeApiClient api;
  api.SetHandler([](const client::Request& r) -> StatusOr<client::Response> {
    if (r.path == "/conflict")
      return client::Response{409, R"({"kind":"Status","reason":"Conflict","message":"stale"})"};
    if (r.path == "/gone") return FakeApiClient::ApiError(404, "NotFound", "pods \"p\" not found");
    return Status(StatusCode::kDeadlineExceeded, "timeout");
  });
  auto conflict = api.Do({.path = "/conflict"});
  ASSERT_FALSE(conflict.ok());
  EXPECT_EQ(conflict.status().code(), StatusCode::kConflict);
  EXPECT_EQ(conflict.status().message(), "stale");
  auto gone = api.Do({.path = "/gone"});
  EXPECT_EQ(gone.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(gone.status().message(), "pods \"p\" not found");
  EXPECT_EQ(api.Do({.path = "/slow"}).status().code(), StatusCode::kDeadlineExceeded);
}

TEST(FakeApiClientTest, HeldRequestsWaitForRelease) {
  FakeApiClient api;
  api.Hold(FakeApiClient::Is(Verb::kPost));
  std::vector<std::string> answers;
  auto record = [&](std::string name) {
    return [&answers, name](StatusOr<client::Response> r) {
      answers.push_back(name + ":" + (r.ok() ? "ok" : std::string(StatusCodeName(r.status().code()))));
    };
  };
  api.Send({.verb = Verb::kPost, .path = "/a"}, record("a"));
  api.Send({.verb = Verb::kPost, .path = "/b"}, record("b"));
  api.Send({.path = "/c"}, record("c"));  // not held
  EXPECT_EQ(answers, std::vector<std::string>{"c:ok"});
  EXPECT_EQ(api.HeldCount(), 2u);
  EXPECT_FALSE(api.WaitIdle(0ms));
  EXPECT_EQ(api.Release(FakeApiClient::Is(Verb::kPost, "/b"), NotFound("gone")), 1u);
  EXPECT_EQ(answers.back(), "b:NotFound");
  EXPECT_EQ(api.Release(), 1u);  // through the handler (default: success)
  EXPECT_EQ(answers.back(), "a:ok");
  EXPECT_TRUE(api.WaitIdle(0ms));
  EXPECT_EQ(api.Count(), 3u);
}

TEST(FakeApiClientTest, AsyncAnswersInOrderOnItsOwnThread) {
  std::mutex mu;
  std::vector<int> order;
  std::set<std::thread::id> threads;
  {
    FakeApiClient api(FakeApiClient::Options{.async = true});
    for (int i = 0; i < 20; ++i)
      api.Send({.path = "/" + std::to_string(i)}, [&, i](StatusOr<client::Response> r) {
        EXPECT_TRUE(r.ok());
        std::lock_guard l(mu);
        order.push_back(i);
        threads.insert(std::this_thread::get_id());
      });
    EXPECT_TRUE(api.WaitIdle(5s));
    EXPECT_TRUE(api.Do({.path = "/x"}).ok());  // Do() from another thread works too
  }
  ASSERT_EQ(order.size(), 20u);
  EXPECT_TRUE(std::is_sorted(order.begin(), order.end()));
  ASSERT_EQ(threads.size(), 1u);
  EXPECT_NE(*threads.begin(), std::this_thread::get_id());
}

TEST(FakeApiClientTest, DestructionAnswersHeldRequestsCancelled) {
  std::optional<StatusCode> code;
  {
    FakeApiClient api;
    api.Hold([](const client::Request&) { return true; });
    api.Send({.path = "/held"}, [&](StatusOr<client::Response> r) { code = r.status().code(); });
    EXPECT_FALSE(code.has_value());
  }
  EXPECT_EQ(code, StatusCode::kCancelled);
}

}  // namespace
}  // namespace ksched::scheduler
