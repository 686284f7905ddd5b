// Queueing hints (upstream scheduling_queue.go with SchedulerQueueingHints on): in-flight
// event replay, error vs unschedulable, PreEnqueue gating and the queue's metrics.
#include <gtest/gtest.h>

#include <map>

#include "pkg/framework/plugins/schedulinggates/scheduling_gates.h"
#include "pkg/queue/priority_queue.h"
#include "pkg/queue/queue_test_util.h"
#include "tests/fakes/fake_plugins.h"

namespace ksched::queue {
namespace {

using framework::ClusterEvent;
using framework::EventResource;
using framework::PluginSet;
using framework::QueueingHint;
using std::chrono::seconds;
using ksched::testing::FakeEnqueuePlugin;
using testing::MakePod;
using testing::WithChange;

// NodeAffinity-like hint: queue only if the new node has the pod's nodeSelector labels.
StatusOr<QueueingHint> NodeMatchesSelector(const api::Pod& pod, const void*, const void* new_obj) {
  const auto* node = framework::ObjectAs<api::Node>(new_obj);
  if (node == nullptr) return Status(StatusCode::kInvalidArgument, "no node");
  for (const auto& [k, v] : pod.spec.node_selector) {
    bool found = false;
    for (const auto& [nk, nv] : node->metadata.labels) found = found || (nk == k && nv == v);
    if (!found) return QueueingHint::kSkip;
  }
  return QueueingHint::kQueue;
}

class RecordingMetrics : public QueueMetricsRecorder {
 public:
  void IncomingPod(std::string_view queue, std::string_view event) override {
    incoming[std::string(queue) + "/" + std::string(event)]++;
  }
  void SetPendingPodsSource(std::function<PendingPodCounts()> s) override { source = std::move(s); }
  std::map<std::string, int> incoming;
  std::function<PendingPodCounts()> source;
};

class QueueHintsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    framework::Plugin* plugins[] = {&node_affinity_, &fit_, &gates_, &pending_};
    QueueOptions o;
    o.clock = &clock_;
    o.cluster_event_map = ClusterEventMap::FromPlugins(plugins);
    o.pre_enqueue_plugins = {&gates_};
    o.metrics = &metrics_;
    q_ = std::make_unique<PriorityQueue>(std::move(o));
  }
  SubQueue Where(const std::string& name) { return q_->Where("default/" + name); }
  std::shared_ptr<const api::Node> Node(std::string zone) {
    auto n = std::make_shared<api::Node>();
    n->metadata.name = "n-" + zone;
    n->metadata.labels.Set("zone", zone);
    return n;
  }
  api::PodPtr ZonePod(const std::string& name) {
    return MakePod(name, 0, [](api::Pod& p) { p.spec.node_selector.Set("zone", "cd"); });
  }
  QueuedPodInfoPtr AddAndPop(api::PodPtr pod) {
    EXPECT_TRUE(q_->Add(pod).ok());
    return q_->Pop();
  }
  Status Fail(QueuedPodInfoPtr info, PluginSet rejectors, PluginSet pending = {}) {
    info->unschedulable_plugins = std::move(rejectors);
    info->pending_plugins = std::move(pending);
    return q_->AddUnschedulableIfNotPresent(std::move(info));
  }

  FakeClock clock_;
  RecordingMetrics metrics_;
  FakeEnqueuePlugin node_affinity_{"NodeAffinity",
                                   {{{EventResource::kNode, framework::kAdd | framework::kUpdateNodeLabel, ""},
                                     NodeMatchesSelector}}};
  FakeEnqueuePlugin fit_{"Fit", {{{EventResource::kNode, framework::kAdd, ""}, nullptr}}};
  FakeEnqueuePlugin pending_{"DRA", {{{EventResource::kPersistentVolumeClaim, framework::kAdd, ""}, nullptr}}};
  framework::plugins::SchedulingGates gates_;
  std::unique_ptr<PriorityQueue> q_;
};

// Item 9: "a NodeAdd for a node the pod's nodeSelector cannot match does not requeue it".
TEST_F(QueueHintsTest, HintDecidesMove) {
  struct Case {
    std::string name;
    PluginSet rejectors, pending;
    std::string zone;
    SubQueue want;
  };
  const Case cases[] = {
      {"hint says skip", {"NodeAffinity"}, {}, "bj", SubQueue::kUnschedulable},
      {"hint says queue, backing off", {"NodeAffinity"}, {}, "cd", SubQueue::kBackoff},
      {"one of two rejectors queues", {"NodeAffinity", "Fit"}, {}, "bj", SubQueue::kBackoff},
      {"pending plugin queues: immediately", {}, {"DRA"}, "cd", SubQueue::kUnschedulable},
  };
  for (const Case& c : cases) {
    SetUp();
    ASSERT_TRUE(Fail(AddAndPop(ZonePod("p")), c.rejectors, c.pending).ok());
    ASSERT_EQ(Where("p"), SubQueue::kUnschedulable) << c.name;
    q_->MoveAllToActiveOrBackoffQueue(framework::kNodeAdd, nullptr, Node(c.zone));
    EXPECT_EQ(Where("p"), c.want) << c.name;
  }
  // A Pending rejector's event skips backoff entirely.
  SetUp();
  ASSERT_TRUE(Fail(AddAndPop(ZonePod("p")), {}, {"DRA"}).ok());
  q_->MoveAllToActiveOrBackoffQueue(framework::kPvcAdd);
  EXPECT_EQ(Where("p"), SubQueue::kActive);
}

TEST_F(QueueHintsTest, HintErrorQueues) {
  ASSERT_TRUE(Fail(AddAndPop(ZonePod("p")), {"NodeAffinity"}).ok());
  q_->MoveAllToActiveOrBackoffQueue(framework::kNodeAdd, nullptr, nullptr);  // hint errors: no node
  EXPECT_EQ(Where("p"), SubQueue::kBackoff);
}

// Item 10 (kubernetes#72122): an event during the attempt is replayed when the pod
// comes back; irrelevant or earlier events are not.
TEST_F(QueueHintsTest, InFlightEventsReplayed) {
  struct Case {
    std::string name;
    std::function<void(PriorityQueue&)> before_pop, during;
    SubQueue want;
  };
  auto node_cd = Node("cd");
  auto node_bj = Node("bj");
  const Case cases[] = {
      {"relevant event during attempt", nullptr,
       [&](PriorityQueue& q) { q.MoveAllToActiveOrBackoffQueue(framework::kNodeAdd, nullptr, node_cd); },
       SubQueue::kBackoff},
      {"event the hint rejects", nullptr,
       [&](PriorityQueue& q) { q.MoveAllToActiveOrBackoffQueue(framework::kNodeAdd, nullptr, node_bj); },
       SubQueue::kUnschedulable},
      {"event for an unregistered resource", nullptr,
       [&](PriorityQueue& q) { q.MoveAllToActiveOrBackoffQueue(framework::kServiceAdd); }, SubQueue::kUnschedulable},
      {"event before the pop", [&](PriorityQueue& q) { q.MoveAllToActiveOrBackoffQueue(framework::kNodeAdd, nullptr, node_cd); },
       nullptr, SubQueue::kUnschedulable},
      {"Activate while in flight", nullptr,
       [&](PriorityQueue& q) {
         api::PodPtr p[] = {ZonePod("p")};
         q.Activate(p);
       },
       SubQueue::kActive},
  };
  for (const Case& c : cases) {
    SetUp();
    ASSERT_TRUE(q_->Add(ZonePod("other")).ok());
    auto other = q_->Pop();  // keeps the log alive before p's pop
    ASSERT_TRUE(q_->Add(ZonePod("p")).ok());
    if (c.before_pop) c.before_pop(*q_);
    auto info = q_->Pop();
    if (c.during) c.during(*q_);
    ASSERT_TRUE(Fail(std::move(info), {"NodeAffinity"}).ok());
    EXPECT_EQ(Where("p"), c.want) << c.name;
    EXPECT_EQ(q_->InFlightPods(), 1u) << c.name;
    q_->Done(other->pod());
    EXPECT_EQ(q_->InFlightPods(), 0u) << c.name;
    EXPECT_EQ(q_->InFlightEvents(), 0u) << c.name;  // log pruned once nobody is in flight
  }
}

// Upstream #118226: an update of a pod being scheduled must not queue a second copy;
// it is replayed (here: gates never matter, the hint of the rejector decides).
TEST_F(QueueHintsTest, UpdateOfInFlightPodIsNotDuplicated) {
  auto pod = ZonePod("p");
  auto info = AddAndPop(pod);
  ASSERT_TRUE(q_->Update(pod, WithChange(pod, [](api::Pod& p) { p.metadata.labels.Set("a", "b"); })).ok());
  EXPECT_EQ(q_->Len(), 0u);
  EXPECT_EQ(q_->InFlightEvents(), 1u);
  ASSERT_TRUE(Fail(std::move(info), {"Fit"}).ok());  // Fit does not register Pod/Update
  EXPECT_EQ(Where("p"), SubQueue::kUnschedulable);
  EXPECT_EQ(q_->Len(), 1u);
}

// Item 11: no rejecting plugin (internal error) → backoff, then activeQ with no event.
TEST_F(QueueHintsTest, ErrorRetriesAfterBackoffWithoutEvent) {
  ASSERT_TRUE(Fail(AddAndPop(MakePod("p")), {}).ok());
  EXPECT_EQ(Where("p"), SubQueue::kBackoff);
  clock_.Advance(seconds(1));
  q_->FlushBackoffQCompleted();
  EXPECT_EQ(Where("p"), SubQueue::kActive);
  EXPECT_EQ(metrics_.incoming["backoff/ScheduleAttemptFailure"], 1);
  EXPECT_EQ(metrics_.incoming["active/BackoffComplete"], 1);
}

// Item 7: a gated pod never reaches activeQ until an update removes its gates.
TEST_F(QueueHintsTest, SchedulingGates) {
  auto gated = MakePod("g", 0, [](api::Pod& p) { p.spec.scheduling_gates = {"a", "b"}; });
  ASSERT_TRUE(q_->Add(gated).ok());
  EXPECT_EQ(Where("g"), SubQueue::kUnschedulable);
  PendingPodCounts c = metrics_.source();
  EXPECT_EQ(c.gated, 1u);
  EXPECT_EQ(c.unschedulable, 0u);
  // Neither events nor timeouts release it.
  q_->MoveAllToActiveOrBackoffQueue(framework::kWildCardEvent);
  clock_.Advance(std::chrono::minutes(10));
  q_->FlushUnschedulablePodsLeftover();
  EXPECT_EQ(Where("g"), SubQueue::kUnschedulable);
  // Removing one gate: still gated.
  auto one = WithChange(gated, [](api::Pod& p) { p.spec.scheduling_gates = {"b"}; });
  ASSERT_TRUE(q_->Update(gated, one).ok());
  EXPECT_EQ(Where("g"), SubQueue::kUnschedulable);
  // Removing the last gate: activeQ at once (a gated pod has no backoff to serve).
  auto none = WithChange(one, [](api::Pod& p) { p.spec.scheduling_gates.clear(); });
  ASSERT_TRUE(q_->Update(one, none).ok());
  EXPECT_EQ(Where("g"), SubQueue::kActive);
  c = metrics_.source();
  EXPECT_EQ(c.gated, 0u);
  EXPECT_EQ(c.active, 1u);
  auto info = q_->Pop();
  EXPECT_FALSE(info->gated);
  EXPECT_EQ(info->attempts, 1);
}

// A PreEnqueue plugin that fails with an internal error until told otherwise.
class FlakyPreEnqueue : public framework::PreEnqueuePlugin {
 public:
  std::string_view Name() const override { return "Flaky"; }
  framework::Status PreEnqueue(const api::Pod&) override {
    return failing ? framework::Status(framework::Code::kError, "webhook unavailable") : framework::Status();
  }
  bool failing = true;
};

// A transient PreEnqueue error must not hold the pod until the pod itself changes: the
// unschedulable-timeout flush (a wildcard event) runs PreEnqueue again.
TEST(QueueGatingTest, TransientPreEnqueueErrorIsRetriedByTheFlush) {
  FakeClock clock;
  FlakyPreEnqueue flaky;
  QueueOptions o;
  o.clock = &clock;
  o.pre_enqueue_plugins = {&flaky};
  PriorityQueue q(std::move(o));
  ASSERT_TRUE(q.Add(MakePod("p")).ok());
  EXPECT_EQ(q.Where("default/p"), SubQueue::kUnschedulable);
  clock.Advance(std::chrono::minutes(6));
  q.FlushUnschedulablePodsLeftover();  // still failing: stays gated, nothing lost
  EXPECT_EQ(q.Where("default/p"), SubQueue::kUnschedulable);
  EXPECT_EQ(q.PendingCounts().gated, 1u);
  flaky.failing = false;
  clock.Advance(std::chrono::minutes(6));
  q.FlushUnschedulablePodsLeftover();
  EXPECT_EQ(q.Where("default/p"), SubQueue::kActive);
  EXPECT_EQ(q.PendingCounts().gated, 0u);
}

// Item 12: incoming pods per {queue, event}; pending counts read from state.
TEST_F(QueueHintsTest, Metrics) {
  ASSERT_TRUE(Fail(AddAndPop(ZonePod("b")), {"Fit"}).ok());
  ASSERT_TRUE(q_->Add(MakePod("a")).ok());
  ASSERT_TRUE(q_->Add(MakePod("c")).ok());
  EXPECT_EQ(metrics_.incoming["active/PodAdd"], 3);
  EXPECT_EQ(metrics_.incoming["unschedulable/ScheduleAttemptFailure"], 1);
  clock_.Advance(seconds(3));
  q_->MoveAllToActiveOrBackoffQueue(framework::kNodeAdd, nullptr, Node("cd"));
  EXPECT_EQ(metrics_.incoming["active/NodeAdd"], 1);
  PendingPodCounts c = metrics_.source();
  EXPECT_EQ(c.active, 3u);
  EXPECT_EQ(c.backoff + c.unschedulable + c.gated, 0u);
  q_.reset();
  EXPECT_FALSE(metrics_.source);  // the queue unregisters itself
}

// scheduler_unschedulable_pods: per (plugin, profile), the queued pods a plugin rejected,
// gated or left pending in their last attempt, in whichever sub-queue they wait; a pod
// stops counting when it is popped for its next attempt or deleted.
TEST_F(QueueHintsTest, UnschedulablePodsByPlugin) {
  auto other_profile = [](api::Pod& p) { p.spec.scheduler_name = "ksched"; };
  ASSERT_TRUE(Fail(AddAndPop(MakePod("fit-and-affinity")), {"Fit", "NodeAffinity"}).ok());
  ASSERT_TRUE(Fail(AddAndPop(MakePod("fit", 0, other_profile)), {"Fit"}).ok());
  ASSERT_TRUE(Fail(AddAndPop(MakePod("pending")), {"Fit"}, {"DRA", "Fit"}).ok());
  ASSERT_TRUE(Fail(AddAndPop(MakePod("error")), {}).ok());  // internal error: no plugin
  ASSERT_TRUE(q_->Add(MakePod("gated", 0, [](api::Pod& p) { p.spec.scheduling_gates = {"g"}; })).ok());
  ASSERT_TRUE(q_->Add(MakePod("fresh")).ok());
  EXPECT_EQ(Where("error"), SubQueue::kBackoff);
  EXPECT_EQ(q_->UnschedulablePodsByPlugin(),
            (UnschedulablePluginCounts{{{"DRA", "default-scheduler"}, 1},
                                       {{"Fit", "default-scheduler"}, 2},  // "pending" counts once
                                       {{"Fit", "ksched"}, 1},
                                       {{"NodeAffinity", "default-scheduler"}, 1},
                                       {{"SchedulingGates", "default-scheduler"}, 1}}));

  // Moved to activeQ by a NodeAdd, the pods still count until they are popped.
  clock_.Advance(seconds(30));
  q_->MoveAllToActiveOrBackoffQueue(framework::kNodeAdd, nullptr, Node("zz"));
  EXPECT_EQ(Where("fit"), SubQueue::kActive);
  EXPECT_EQ(q_->UnschedulablePodsByPlugin().at({"Fit", "ksched"}), 1u);
  q_->Delete(*MakePod("fit-and-affinity"));
  while (q_->PendingCounts().active > 0) q_->Done(q_->Pop()->pod());
  EXPECT_EQ(q_->UnschedulablePodsByPlugin(),
            (UnschedulablePluginCounts{{{"SchedulingGates", "default-scheduler"}, 1}}));
}

// SchedulerPopFromBackoffQ: with activeQ empty, Pop takes a backing-off pod at once
// rather than idling; one backing off after an error still waits for its backoff.
TEST_F(QueueHintsTest, IdlePopTakesFromBackoffButNotAfterAnError) {
  ASSERT_TRUE(Fail(AddAndPop(ZonePod("p")), {"Fit"}).ok());
  q_->MoveAllToActiveOrBackoffQueue(framework::kNodeAdd, nullptr, Node("cd"));
  ASSERT_EQ(Where("p"), SubQueue::kBackoff);
  QueuedPodInfoPtr again = q_->Pop();
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->pod().metadata.name, "p");
  EXPECT_EQ(again->attempts, 2);

  // An error: no plugin named, backoff is kept (Pop would block, so check the queue).
  ASSERT_TRUE(Fail(std::move(again), {}).ok());
  ASSERT_EQ(Where("p"), SubQueue::kBackoff);
  ASSERT_TRUE(q_->Add(ZonePod("other")).ok());
  EXPECT_EQ(q_->Pop()->pod().metadata.name, "other");
  EXPECT_EQ(Where("p"), SubQueue::kBackoff);
}

// A preemptor whose victims are still leaving backs off without being taken by an idle
// Pop (the pods behind it are), leaves backoff when it ends, and goes to activeQ at once
// when its victims are gone; ActivateAwaitingPreemption leaves other pods where they are.
TEST_F(QueueHintsTest, AwaitingPreemptionIsHeldInBackoffUntilItsVictimsGo) {
  QueuedPodInfoPtr info = AddAndPop(ZonePod("p"));
  api::PodPtr pod = info->pod_ptr();
  info->awaiting_preemption = true;
  ASSERT_TRUE(Fail(std::move(info), {"Fit"}).ok());
  q_->MoveAllToActiveOrBackoffQueue(framework::kNodeAdd, nullptr, Node("cd"));
  ASSERT_EQ(Where("p"), SubQueue::kBackoff);
  EXPECT_EQ(q_->PendingCounts().backoff, 1u);
  // A plain pod backing off behind it is still taken by the idle Pop.
  QueuedPodInfoPtr other_info = AddAndPop(ZonePod("other"));
  api::PodPtr other = other_info->pod_ptr();
  ASSERT_TRUE(Fail(std::move(other_info), {"Fit"}).ok());
  q_->MoveAllToActiveOrBackoffQueue(framework::kNodeAdd, nullptr, Node("cd"));
  ASSERT_EQ(Where("other"), SubQueue::kBackoff);
  QueuedPodInfoPtr popped = q_->Pop();
  ASSERT_NE(popped, nullptr);
  EXPECT_EQ(popped->pod().metadata.name, "other");
  EXPECT_EQ(Where("p"), SubQueue::kBackoff);

  // Not awaiting: ActivateAwaitingPreemption leaves "other" (back in unschedulable) alone.
  ASSERT_TRUE(Fail(std::move(popped), {"Fit"}).ok());
  api::PodPtr both[] = {pod, other};
  q_->ActivateAwaitingPreemption(both);
  EXPECT_EQ(Where("p"), SubQueue::kActive);
  EXPECT_EQ(Where("other"), SubQueue::kUnschedulable);
  QueuedPodInfoPtr again = q_->Pop();
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->pod().metadata.name, "p");
  EXPECT_FALSE(again->awaiting_preemption);  // the next failure says again

  // Still awaiting after this attempt: its backoff's end lets it go, as for any pod.
  again->awaiting_preemption = true;
  ASSERT_TRUE(Fail(std::move(again), {"Fit"}).ok());
  q_->MoveAllToActiveOrBackoffQueue(framework::kNodeAdd, nullptr, Node("cd"));
  ASSERT_EQ(Where("p"), SubQueue::kBackoff);
  clock_.Advance(std::chrono::seconds(5));
  q_->FlushBackoffQCompleted();
  EXPECT_EQ(Where("p"), SubQueue::kActive);
}

// In flight when its victims go: the attempt may have seen them, so the failure that
// follows sends it straight back to activeQ, also when an event that only asks for a
// retry after backoff (a victim's deletion) came first.
TEST_F(QueueHintsTest, AwaitingPreemptionInFlightIsRequeuedToActive) {
  QueuedPodInfoPtr info = AddAndPop(ZonePod("p"));
  q_->MoveAllToActiveOrBackoffQueue(framework::kNodeAdd, nullptr, Node("cd"));  // Fit: after backoff
  api::PodPtr pods[] = {info->pod_ptr()};
  q_->ActivateAwaitingPreemption(pods);
  info->awaiting_preemption = true;
  ASSERT_TRUE(Fail(std::move(info), {"Fit"}).ok());
  EXPECT_EQ(Where("p"), SubQueue::kActive);
}

// A nomination made during the attempt (preemption) is not dropped by the requeue that
// follows it, though the pod's status does not carry it yet; a status that names a node
// still wins, and one cleared on the server clears it.
TEST_F(QueueHintsTest, NominationSurvivesTheRequeue) {
  QueuedPodInfoPtr info = AddAndPop(ZonePod("p"));
  api::PodPtr pod = info->pod_ptr();
  q_->nominator().AddNominatedPod(pod, {.mode = NominatingInfo::Mode::kOverride, .node_name = "n1"});
  ASSERT_TRUE(Fail(std::move(info), {"Fit"}).ok());
  EXPECT_EQ(q_->nominator().NominatedNodeFor(*pod), "n1");
  ASSERT_EQ(q_->nominator().NominatedPodsForNode("n1").size(), 1u);

  // The API server's copy arrives with the nomination, then someone clears it.
  api::PodPtr with = WithChange(pod, [](api::Pod& p) { p.status.nominated_node_name = "n1"; });
  ASSERT_TRUE(q_->Update(pod, with).ok());
  EXPECT_EQ(q_->nominator().NominatedNodeFor(*pod), "n1");
  api::PodPtr cleared = WithChange(with, [](api::Pod& p) { p.status.nominated_node_name.clear(); });
  ASSERT_TRUE(q_->Update(with, cleared).ok());
  EXPECT_EQ(q_->nominator().NominatedNodeFor(*pod), "");
}

}  // namespace
}  // namespace ksched::queue
