// The PriorityQueue rules of upstream pkg/scheduler/internal/queue/scheduling_queue.go
// (with SchedulerQueueingHints, the only mode ksched has), one test per rule; each names
// the upstream function it follows. priority_queue_hints_test.cc covers the hints
// themselves.
#include "pkg/queue/priority_queue.h"

#include <gtest/gtest.h>

#include "pkg/queue/pod_matching.h"
#include "pkg/queue/queue_test_util.h"
#include "tests/fakes/fake_plugins.h"

namespace ksched::queue {
namespace {

using framework::PluginSet;
using std::chrono::seconds;
using ksched::testing::FakeEnqueuePlugin;
using testing::MakePod;
using testing::WithChange;

class PriorityQueueTest : public ::testing::Test {
 protected:
  // Fit registers Node Add/Update and Pod Delete; NodeAffinity registers Node Add/Update.
  void Make(std::function<void(QueueOptions&)> tweak = nullptr) {
    QueueOptions o;
    o.clock = &clock_;
    framework::Plugin* plugins[] = {&fit_, &affinity_};
    o.cluster_event_map = ClusterEventMap::FromPlugins(plugins);
    if (tweak) tweak(o);
    q_ = std::make_unique<PriorityQueue>(std::move(o));
  }
  QueuedPodInfoPtr PopName(const std::string& name) {
    QueuedPodInfoPtr info = q_->Pop();
    EXPECT_NE(info, nullptr);
    if (info) {
      EXPECT_EQ(info->pod().metadata.name, name);
    }
    return info;
  }
  // Adds, pops and fails a pod with `rejectors`.
  void AddPopFail(const std::string& name, PluginSet rejectors) {
    ASSERT_TRUE(q_->Add(MakePod(name)).ok());
    QueuedPodInfoPtr info = PopName(name);
    info->unschedulable_plugins = std::move(rejectors);
    ASSERT_TRUE(q_->AddUnschedulableIfNotPresent(std::move(info)).ok());
  }
  SubQueue Where(const std::string& name) { return q_->Where("default/" + name); }

  FakeClock clock_;
  FakeEnqueuePlugin fit_{"Fit",
                         {{{framework::EventResource::kPod, framework::kDelete, ""}, nullptr},
                          {{framework::EventResource::kNode, framework::kAdd | framework::kUpdate, ""}, nullptr}}};
  FakeEnqueuePlugin affinity_{"NodeAffinity",
                              {{{framework::EventResource::kNode, framework::kAdd | framework::kUpdate, ""}, nullptr}}};
  std::unique_ptr<PriorityQueue> q_;
};

// What /debug/pods shows: every pending pod where it is, in-flight ones as "scheduling".
TEST_F(PriorityQueueTest, QueuedPodsSaysWhereEachPodIs) {
  Make();
  AddPopFail("parked", {"Fit"});
  ASSERT_TRUE(q_->Add(MakePod("waiting")).ok());
  ASSERT_TRUE(q_->Add(MakePod("popped", 100)).ok());
  QueuedPodInfoPtr popped = PopName("popped");
  clock_.Advance(std::chrono::seconds(3));

  std::map<std::string, QueuedPodState> by_name;
  for (QueuedPodState& st : q_->QueuedPods()) by_name[st.pod->metadata.name] = st;
  ASSERT_EQ(by_name.size(), 3u);
  EXPECT_EQ(by_name["parked"].queue, "unschedulablePods");
  EXPECT_EQ(by_name["parked"].attempts, 1);
  EXPECT_EQ(by_name["waiting"].queue, "activeQ");
  EXPECT_EQ(by_name["popped"].queue, "scheduling");
  EXPECT_EQ(by_name["popped"].since, clock_.Now() - std::chrono::seconds(3));

  auto one = q_->QueuedPod("default/parked");
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(one->queue, "unschedulablePods");
  EXPECT_FALSE(one->backoff_until.has_value());
  EXPECT_EQ(q_->QueuedPod("default/popped")->queue, "scheduling");
  EXPECT_FALSE(q_->QueuedPod("default/nope").has_value());

  // Back from its attempt into backoffQ: listed once, with the backoff's end.
  ASSERT_TRUE(q_->AddUnschedulableIfNotPresent(std::move(popped)).ok());  // no plugin: an error
  auto back = q_->QueuedPod("default/popped");
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->queue, "backoffQ");
  ASSERT_TRUE(back->backoff_until.has_value());
  EXPECT_EQ(*back->backoff_until, clock_.Now() + std::chrono::seconds(1));
  EXPECT_EQ(q_->QueuedPods().size(), 3u);
}

// activeQ is a heap ordered by the QueueSort plugin (upstream scheduling_queue.go,
// NewPriorityQueue; PrioritySort's Less): higher priority first, then earlier timestamp.
TEST_F(PriorityQueueTest, PopOrderIsPriorityThenTimestamp) {
  Make();
  struct Add {
    std::string name;
    int32_t priority;
  };
  const Add adds[] = {{"low", 1}, {"high-late", 10}, {"mid", 5}, {"high-later", 10}, {"low2", 1}};
  // high-late is added before high-later, so it wins the tie.
  for (const Add& a : adds) {
    ASSERT_TRUE(q_->Add(MakePod(a.name, a.priority)).ok());
    clock_.Advance(seconds(1));
  }
  for (std::string want : {"high-late", "high-later", "mid", "low", "low2"}) PopName(want);
}

// Pop increments the pod's attempts and the queue's scheduling cycle (upstream
// scheduling_queue.go, PriorityQueue.Pop).
TEST_F(PriorityQueueTest, PopIncrementsAttemptsAndCycle) {
  Make();
  ASSERT_TRUE(q_->Add(MakePod("p")).ok());
  EXPECT_EQ(q_->SchedulingCycle(), 0);
  auto info = PopName("p");
  EXPECT_EQ(info->attempts, 1);
  EXPECT_EQ(q_->SchedulingCycle(), 1);
  info->unschedulable_plugins = {"Fit"};
  ASSERT_TRUE(q_->AddUnschedulableIfNotPresent(std::move(info)).ok());
  q_->MoveAllToActiveOrBackoffQueue(framework::kNodeAdd);
  clock_.Advance(seconds(2));
  q_->FlushBackoffQCompleted();
  info = PopName("p");
  EXPECT_EQ(info->attempts, 2);
  EXPECT_EQ(q_->SchedulingCycle(), 2);
  // A popped pod's rejectors are cleared for the next attempt.
  EXPECT_TRUE(info->unschedulable_plugins.empty());
}

// A failed pod goes to backoffQ if an event that arrived during its attempt may help it
// (a rejecting plugin registered for it and its hint says Queue), else to
// unschedulablePods (upstream scheduling_queue.go, AddUnschedulableIfNotPresent and
// determineSchedulingHintForInFlightPod). The first three cases once tested the
// moveRequestCycle rule of the queue without hints (addUnschedulableWithoutQueueingHint),
// which ksched no longer has; the event replay gives the same answers there. The last case
// is where the two differ: a move request for an event the rejector did not register for
// used to send the pod to backoffQ, and now leaves it in unschedulablePods.
TEST_F(PriorityQueueTest, InFlightEventsDecideBackoffOrUnschedulable) {
  struct Case {
    std::string name;
    bool move_before_pop, move_during_attempt;
    PluginSet rejectors;
    framework::ClusterEvent event;
    SubQueue want;
  };
  const Case cases[] = {
      {"no move request", false, false, {"Fit"}, framework::kNodeAdd, SubQueue::kUnschedulable},
      {"move request during attempt", false, true, {"Fit"}, framework::kNodeAdd, SubQueue::kBackoff},
      {"move request before pop only", true, false, {"Fit"}, framework::kNodeAdd, SubQueue::kUnschedulable},
      {"move request during attempt, rejector not registered for it", false, true, {"NodeAffinity"},
       framework::kAssignedPodDelete, SubQueue::kUnschedulable},
  };
  for (const Case& c : cases) {
    Make();
    ASSERT_TRUE(q_->Add(MakePod("other")).ok());
    ASSERT_TRUE(q_->Add(MakePod("p", -1)).ok());
    PopName("other");  // cycle 1, stays in flight: events are recorded from here on
    if (c.move_before_pop) q_->MoveAllToActiveOrBackoffQueue(c.event);
    auto info = PopName("p");  // cycle 2
    if (c.move_during_attempt) q_->MoveAllToActiveOrBackoffQueue(c.event);
    info->unschedulable_plugins = c.rejectors;
    ASSERT_TRUE(q_->AddUnschedulableIfNotPresent(std::move(info)).ok());
    EXPECT_EQ(Where("p"), c.want) << c.name;
  }
}

// AddUnschedulableIfNotPresent refuses a pod already queued, checked in every sub-queue
// (upstream scheduling_queue.go, AddUnschedulableIfNotPresent).
TEST_F(PriorityQueueTest, AddUnschedulableRejectsQueuedPod) {
  struct Case {
    std::string name;
    std::function<void(PriorityQueue&, FakeClock&)> setup;
    std::string message;
  };
  const Case cases[] = {
      {"in activeQ", [](PriorityQueue& q, FakeClock&) { ASSERT_TRUE(q.Add(MakePod("p")).ok()); },
       "Pod default/p is already present in the active queue"},
      {"in unschedulablePods",
       [](PriorityQueue& q, FakeClock&) {
         auto info = std::make_unique<framework::QueuedPodInfo>(MakePod("p"));
         info->unschedulable_plugins = {"Fit"};
         ASSERT_TRUE(q.AddUnschedulableIfNotPresent(std::move(info)).ok());
       },
       "Pod default/p is already present in the unschedulable queue"},
      {"in backoffQ",
       [](PriorityQueue& q, FakeClock&) {
         auto info = std::make_unique<framework::QueuedPodInfo>(MakePod("p"));
         ASSERT_TRUE(q.AddUnschedulableIfNotPresent(std::move(info)).ok());  // error → backoff
       },
       "Pod default/p is already present in the backoff queue"},
  };
  for (const Case& c : cases) {
    Make();
    c.setup(*q_, clock_);
    Status s = q_->AddUnschedulableIfNotPresent(std::make_unique<framework::QueuedPodInfo>(MakePod("p")));
    EXPECT_EQ(s.code(), StatusCode::kAlreadyExists) << c.name;
    EXPECT_EQ(s.message(), c.message) << c.name;
    EXPECT_EQ(q_->Len(), 1u) << c.name;  // never duplicated
  }
}

// Re-adding a failed pod refreshes its timestamp; backoff counts from it (upstream
// scheduling_queue.go, AddUnschedulableIfNotPresent and getBackoffTime = Timestamp +
// calculateBackoffDuration), doubling per attempt.
TEST_F(PriorityQueueTest, BackoffFromRefreshedTimestamp) {
  struct Case {
    int attempts;
    Clock::duration backoff;
  };
  const Case cases[] = {{1, seconds(1)}, {2, seconds(2)}, {3, seconds(4)}, {4, seconds(8)}, {6, seconds(10)}};
  for (const Case& c : cases) {
    Make();
    clock_.Advance(seconds(100));
    auto info = std::make_unique<framework::QueuedPodInfo>(MakePod("p"));
    info->attempts = c.attempts;  // no rejectors: straight to backoffQ
    ASSERT_TRUE(q_->AddUnschedulableIfNotPresent(std::move(info)).ok());
    ASSERT_EQ(Where("p"), SubQueue::kBackoff);
    clock_.Advance(c.backoff - std::chrono::milliseconds(1));
    q_->FlushBackoffQCompleted();
    EXPECT_EQ(Where("p"), SubQueue::kBackoff) << c.attempts;
    clock_.Advance(std::chrono::milliseconds(1));
    q_->FlushBackoffQCompleted();
    EXPECT_EQ(Where("p"), SubQueue::kActive) << c.attempts;
    auto popped = PopName("p");
    EXPECT_EQ(popped->timestamp, clock_.Now() - c.backoff);
  }
}

// flushBackoffQCompleted (upstream scheduling_queue.go): all expired pods move, in expiry
// order, the rest stay.
TEST_F(PriorityQueueTest, FlushBackoffMovesOnlyExpired) {
  Make();
  for (int i = 1; i <= 4; ++i) {
    auto info = std::make_unique<framework::QueuedPodInfo>(MakePod("p" + std::to_string(i)));
    info->attempts = i;  // backoff 1s, 2s, 4s, 8s
    ASSERT_TRUE(q_->AddUnschedulableIfNotPresent(std::move(info)).ok());
  }
  clock_.Advance(seconds(4));
  q_->FlushBackoffQCompleted();
  EXPECT_EQ(q_->PendingCounts().active, 3u);
  EXPECT_EQ(q_->PendingCounts().backoff, 1u);
  EXPECT_EQ(Where("p4"), SubQueue::kBackoff);
}

// A pod in unschedulablePods longer than podMaxInUnschedulablePodsDuration (default 5 min)
// moves to backoffQ or activeQ (upstream scheduling_queue.go,
// flushUnschedulablePodsLeftover).
TEST_F(PriorityQueueTest, FlushUnschedulableLeftover) {
  struct Case {
    std::string name;
    Clock::duration wait;
    Clock::duration max_backoff;
    int attempts;
    SubQueue want;
  };
  const Case cases[] = {
      {"exactly 5 min stays", std::chrono::minutes(5), seconds(10), 1, SubQueue::kUnschedulable},
      {"over 5 min, backoff done → activeQ", std::chrono::minutes(5) + seconds(1), seconds(10), 1, SubQueue::kActive},
      {"over 5 min, still backing off → backoffQ", std::chrono::minutes(5) + seconds(1), std::chrono::hours(1), 20,
       SubQueue::kBackoff},
  };
  for (const Case& c : cases) {
    Make([&](QueueOptions& o) { o.max_backoff = c.max_backoff; });
    auto info = std::make_unique<framework::QueuedPodInfo>(MakePod("p"));
    info->attempts = c.attempts;
    info->unschedulable_plugins = {"Fit"};
    ASSERT_TRUE(q_->AddUnschedulableIfNotPresent(std::move(info)).ok());
    ASSERT_EQ(Where("p"), SubQueue::kUnschedulable);
    clock_.Advance(c.wait);
    q_->FlushUnschedulablePodsLeftover();
    EXPECT_EQ(Where("p"), c.want) << c.name;
  }
}

// An event moves only pods whose UnschedulablePlugins intersect the plugins registered
// for it (upstream scheduling_queue.go, movePodsToActiveOrBackoffQueue via the cluster
// event map).
TEST_F(PriorityQueueTest, MoveOnlyPodsRejectedByInterestedPlugins) {
  struct Case {
    framework::ClusterEvent event;
    PluginSet rejectors;
    bool moves;
  };
  const Case cases[] = {
      {framework::kNodeAdd, {"Fit"}, true},
      {framework::kNodeAdd, {"NodeAffinity"}, true},
      {framework::kNodeTaintChange, {"NodeAffinity"}, true},
      {framework::kAssignedPodDelete, {"Fit"}, true},
      {framework::kAssignedPodDelete, {"NodeAffinity"}, false},
      {framework::kPvcAdd, {"Fit", "NodeAffinity"}, false},
      {framework::kNodeAdd, {"VolumeBinding"}, false},
      {framework::kWildCardEvent, {"VolumeBinding"}, true},
  };
  for (const Case& c : cases) {
    Make();
    AddPopFail("p", c.rejectors);
    ASSERT_EQ(Where("p"), SubQueue::kUnschedulable);
    clock_.Advance(seconds(5));  // backoff over
    q_->MoveAllToActiveOrBackoffQueue(c.event);
    EXPECT_EQ(Where("p"), c.moves ? SubQueue::kActive : SubQueue::kUnschedulable) << c.event.label;
  }
}

// MoveAllToActiveOrBackoffQueue sends a pod still backing off (isPodBackingoff) to
// backoffQ, others to activeQ; preCheck filters (upstream scheduling_queue.go,
// MoveAllToActiveOrBackoffQueue). This test once also checked that the move set
// moveRequestCycle (queue without hints); with hints a move reaches only the pods in
// flight, through the in-flight event log, and with none in flight nothing is recorded.
TEST_F(PriorityQueueTest, MoveGoesToBackoffWhileBackingOff) {
  Make();
  AddPopFail("a", {"Fit"});
  AddPopFail("b", {"Fit"});
  AddPopFail("c", {"Fit"});
  clock_.Advance(std::chrono::milliseconds(500));
  q_->MoveAllToActiveOrBackoffQueue(framework::kNodeAdd, nullptr, nullptr,
                                    [](const api::Pod& p) { return p.metadata.name != "c"; });
  EXPECT_EQ(Where("a"), SubQueue::kBackoff);
  EXPECT_EQ(Where("b"), SubQueue::kBackoff);
  EXPECT_EQ(Where("c"), SubQueue::kUnschedulable);
  EXPECT_EQ(q_->InFlightEvents(), 0u);
  clock_.Advance(seconds(1));
  q_->MoveAllToActiveOrBackoffQueue(framework::kNodeAdd);
  EXPECT_EQ(Where("c"), SubQueue::kActive);
  q_->FlushBackoffQCompleted();
  EXPECT_EQ(q_->PendingCounts().active, 3u);
}

// Update (upstream scheduling_queue.go, PriorityQueue.Update and isPodUpdated): activeQ/
// backoffQ update in place; an unschedulable pod moves only if more than its status
// changed and a rejecting plugin's hint for the pod's own update (UnscheduledPodUpdate)
// says Queue; unknown pods are added. Without hints any such change moved the pod; the
// test now has its pod rejected by a plugin registered for pod updates, and checks that a
// pod rejected only by Fit (no such registration) stays.
TEST_F(PriorityQueueTest, Update) {
  FakeEnqueuePlugin pod_update("PodUpdate", {{{framework::EventResource::kPod, framework::kUpdate, ""}, nullptr}});
  Make([&](QueueOptions& o) {
    framework::Plugin* plugins[] = {&fit_, &affinity_, &pod_update};
    o.cluster_event_map = ClusterEventMap::FromPlugins(plugins);
  });
  // activeQ: a priority bump re-sorts in place.
  auto a = MakePod("a", 1), b = MakePod("b", 2);
  ASSERT_TRUE(q_->Add(a).ok());
  ASSERT_TRUE(q_->Add(b).ok());
  ASSERT_TRUE(q_->Update(a, WithChange(a, [](api::Pod& p) { p.spec.priority = 3; })).ok());
  EXPECT_EQ(q_->Len(), 2u);
  auto popped = PopName("a");
  EXPECT_EQ(popped->pod().Priority(), 3);
  PopName("b");

  // unschedulablePods: a change no rejector's hint is interested in leaves the pod there.
  AddPopFail("f", {"Fit"});
  auto f = MakePod("f");
  ASSERT_TRUE(q_->Update(f, WithChange(f, [](api::Pod& p) { p.metadata.labels.Set("k", "v"); })).ok());
  EXPECT_EQ(Where("f"), SubQueue::kUnschedulable);
  // unschedulablePods: status-only update stays; a spec change moves it.
  AddPopFail("u", {"PodUpdate"});
  auto u = MakePod("u");
  ASSERT_TRUE(q_->Update(u, WithChange(u, [](api::Pod& p) { p.status.phase = "Pending"; })).ok());
  EXPECT_EQ(Where("u"), SubQueue::kUnschedulable);
  ASSERT_TRUE(q_->Update(u, WithChange(u, [](api::Pod& p) { p.metadata.labels.Set("k", "v"); })).ok());
  EXPECT_EQ(Where("u"), SubQueue::kBackoff);  // still backing off
  // backoffQ: stays there, with the new object.
  auto u3 = WithChange(u, [](api::Pod& p) { p.metadata.labels.Set("k", "v3"); });
  ASSERT_TRUE(q_->Update(u, u3).ok());
  EXPECT_EQ(Where("u"), SubQueue::kBackoff);
  // Not queued at all: added to activeQ.
  ASSERT_TRUE(q_->Update(nullptr, MakePod("new")).ok());
  EXPECT_EQ(Where("new"), SubQueue::kActive);
  clock_.Advance(seconds(1));
  q_->FlushBackoffQCompleted();
  PopName("new");
  EXPECT_EQ(PopName("u")->pod_ptr(), u3);
}

// A pod is in at most one sub-queue; Delete removes it from all, and from the nominator
// (upstream scheduling_queue.go, PriorityQueue.Delete) (item 8).
TEST_F(PriorityQueueTest, DeleteFromEverySubQueue) {
  for (SubQueue where : {SubQueue::kActive, SubQueue::kBackoff, SubQueue::kUnschedulable}) {
    Make();
    auto pod = MakePod("p", 0, [](api::Pod& p) { p.status.nominated_node_name = "n1"; });
    if (where == SubQueue::kActive) {
      ASSERT_TRUE(q_->Add(pod).ok());
    } else {
      auto info = std::make_unique<framework::QueuedPodInfo>(pod);
      if (where == SubQueue::kUnschedulable) info->unschedulable_plugins = {"Fit"};
      ASSERT_TRUE(q_->AddUnschedulableIfNotPresent(std::move(info)).ok());
    }
    ASSERT_EQ(Where("p"), where);
    EXPECT_EQ(q_->nominator().NominatedPodsForNode("n1").size(), 1u);
    q_->Delete(*pod);
    EXPECT_EQ(Where("p"), SubQueue::kNone);
    EXPECT_EQ(q_->Len(), 0u);
    EXPECT_TRUE(q_->nominator().NominatedPodsForNode("n1").empty());
  }
}

// Activate moves pods that plugins listed in PodsToActivate straight from backoffQ or
// unschedulablePods to activeQ (upstream scheduling_queue.go, PriorityQueue.Activate).
TEST_F(PriorityQueueTest, ActivateMovesFromBackoffAndUnschedulable) {
  Make();
  AddPopFail("u", {"Fit"});
  ASSERT_TRUE(q_->AddUnschedulableIfNotPresent(std::make_unique<framework::QueuedPodInfo>(MakePod("b"))).ok());
  ASSERT_EQ(Where("b"), SubQueue::kBackoff);
  api::PodPtr pods[] = {MakePod("u"), MakePod("b"), MakePod("unknown")};
  q_->Activate(pods);
  EXPECT_EQ(Where("u"), SubQueue::kActive);
  EXPECT_EQ(Where("b"), SubQueue::kActive);
  EXPECT_EQ(Where("unknown"), SubQueue::kNone);
}

// An assigned pod matching a pending pod's required affinity term moves it
// (AssignedPodAdd); unrelated pods stay (upstream scheduling_queue.go, AssignedPodAdded,
// getUnschedulablePodsWithMatchingAffinityTerm).
TEST_F(PriorityQueueTest, AssignedPodAddedMovesAffinityMatches) {
  Make();
  api::LabelSelector sel;
  sel.match_labels.Set("app", "db");
  auto wants_db = MakePod("wants-db", 0, [&](api::Pod& p) {
    p.spec.affinity.emplace().pod_affinity.emplace().required.push_back({sel, {}, "zone", std::nullopt});
  });
  for (auto pod : {wants_db, MakePod("plain")}) {
    ASSERT_TRUE(q_->Add(pod).ok());
    auto info = q_->Pop();
    info->unschedulable_plugins = {"InterPodAffinity"};  // not in the map → Legacy-free
    ASSERT_TRUE(q_->AddUnschedulableIfNotPresent(std::move(info)).ok());
  }
  clock_.Advance(seconds(2));
  auto db = MakePod("db", 0, [](api::Pod& p) {
    p.metadata.labels.Set("app", "db");
    p.spec.node_name = "n1";
  });
  // InterPodAffinity is not registered: nothing moves.
  q_->AssignedPodAdded(db);
  EXPECT_EQ(Where("wants-db"), SubQueue::kUnschedulable);
  // Registered for Pod/Add: only the matching pod moves. Every InterPodAffinity-rejected
  // pod is a candidate (CrossTopologyCandidate), so the plugin's hint is what keeps
  // "plain" where it is; this one queues on an affinity-term match, as the real plugin's
  // does for these pods. (Without hints, a nil hint did here, the queue itself filtering
  // on the affinity terms.)
  framework::QueueingHintFn term_matches = [](const api::Pod& pending, const void*,
                                              const void* new_obj) -> StatusOr<framework::QueueingHint> {
    const auto* assigned = framework::ObjectAs<api::Pod>(new_obj);
    if (assigned != nullptr && AffinityTermMatches(pending, *assigned)) return framework::QueueingHint::kQueue;
    return framework::QueueingHint::kSkip;
  };
  FakeEnqueuePlugin ipa("InterPodAffinity", {{{framework::EventResource::kPod, framework::kAll, ""}, term_matches}});
  framework::Plugin* plugins[] = {&ipa};
  Make([&](QueueOptions& o) { o.cluster_event_map = ClusterEventMap::FromPlugins(plugins); });
  for (auto pod : {wants_db, MakePod("plain")}) {
    ASSERT_TRUE(q_->Add(pod).ok());
    auto info = q_->Pop();
    info->unschedulable_plugins = {"InterPodAffinity"};
    ASSERT_TRUE(q_->AddUnschedulableIfNotPresent(std::move(info)).ok());
  }
  clock_.Advance(seconds(2));
  q_->AssignedPodAdded(db);
  EXPECT_EQ(Where("wants-db"), SubQueue::kActive);
  EXPECT_EQ(Where("plain"), SubQueue::kUnschedulable);
  q_->AssignedPodUpdated(db, db);
  EXPECT_EQ(Where("plain"), SubQueue::kUnschedulable);
}

// Add drops any stale backoffQ / unschedulablePods entry of the pod; PendingPods lists
// every queued pod once (upstream scheduling_queue.go, PriorityQueue.Add, PendingPods).
TEST_F(PriorityQueueTest, AddReplacesStaleEntryAndPendingPodsListsAll) {
  Make();
  AddPopFail("p", {"Fit"});
  ASSERT_TRUE(q_->Add(MakePod("p")).ok());
  EXPECT_EQ(Where("p"), SubQueue::kActive);
  ASSERT_TRUE(q_->Add(MakePod("q")).ok());
  EXPECT_EQ(q_->PendingPods().size(), 2u);
  EXPECT_EQ(q_->Len(), 2u);
}

// After Close, a Pop blocked on an empty queue returns (upstream scheduling_queue.go,
// PriorityQueue.Close and Pop).
TEST_F(PriorityQueueTest, PopReturnsNullAfterClose) {
  Make();
  ASSERT_TRUE(q_->Add(MakePod("p")).ok());
  q_->Close();
  EXPECT_EQ(q_->Pop(), nullptr);
}

// Run (upstream scheduling_queue.go, PriorityQueue.Run): flushBackoffQCompleted every 1s,
// flushUnschedulablePodsLeftover every 30s, on the injected clock. Pop() blocks until the
// flush thread delivers the pod.
TEST_F(PriorityQueueTest, RunFlushesOnTheInjectedClock) {
  Make();
  ASSERT_TRUE(q_->AddUnschedulableIfNotPresent(std::make_unique<framework::QueuedPodInfo>(MakePod("b"))).ok());
  auto info = std::make_unique<framework::QueuedPodInfo>(MakePod("u"));
  info->unschedulable_plugins = {"Fit"};
  ASSERT_TRUE(q_->AddUnschedulableIfNotPresent(std::move(info)).ok());
  q_->Run();
  ASSERT_TRUE(clock_.WaitForSleepers(2));
  clock_.Advance(seconds(1));
  PopName("b");  // blocks until the 1s loop moved it
  clock_.Advance(std::chrono::minutes(5) + seconds(30));
  PopName("u");  // blocks until the 30s loop moved it
  q_->Close();
}

}  // namespace
}  // namespace ksched::queue
