#include "pkg/framework/plugins/coscheduling/coscheduling.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "pkg/api/time_format.h"
#include "tests/fakes/builders.h"
#include "tests/fakes/fake_cluster_lister.h"
#include "tests/fakes/fake_handle.h"

namespace ksched::framework::plugins::coscheduling {
namespace {

using testing::FakeClusterLister;
using testing::FakeHandle;
using testing::NodeBuilder;
using testing::PodBuilder;

api::PodGroupPtr Group(std::string ns, std::string name, int32_t min_member, std::string created = "2026-01-01T00:00:00Z",
                       api::ResourceList min_resources = {}, std::optional<int32_t> timeout = std::nullopt) {
  auto pg = std::make_shared<api::PodGroup>();
  pg->metadata.namespace_ = std::move(ns);
  pg->metadata.name = std::move(name);
  pg->min_member = min_member;
  pg->creation_time = api::ParseTime(created);
  pg->min_resources = std::move(min_resources);
  pg->schedule_timeout_seconds = timeout;
  return pg;
}

api::PodPtr Member(std::string name, std::string group, std::string node = "") {
  PodBuilder b;
  b.Name(name).Namespace("ns").UID("uid-" + name).Label(api::kPodGroupLabel, std::move(group));
  if (!node.empty()) b.Node(std::move(node));
  return b.Obj();
}

class CoschedulingTest : public ::testing::Test {
 protected:
  CoschedulingTest() { handle_.SetLister(&lister_); }

  Coscheduling& Plugin(Args args = {}) {
    plugin_ = std::make_unique<Coscheduling>(args, handle_, &clock_);
    return *plugin_;
  }
  void AddGroup(const api::PodGroupPtr& pg) {
    lister_.pod_groups[pg->metadata.namespace_ + "/" + pg->metadata.name] = pg;
  }
  Status RunPreFilter(const api::Pod& pod) {
    CycleState state;
    PreFilterResult result;
    return plugin_->PreFilter(state, pod, result);
  }
  Status RunPermit(const api::Pod& pod, std::chrono::milliseconds* timeout = nullptr) {
    CycleState state;
    std::chrono::milliseconds t{0};
    Status s = plugin_->Permit(state, pod, "n1", t);
    if (timeout) *timeout = t;
    return s;
  }

  FakeClock clock_;
  FakeClusterLister lister_;
  FakeHandle handle_;
  std::unique_ptr<Coscheduling> plugin_;
};

TEST_F(CoschedulingTest, ArgsDefaultAndValidate) {
  auto d = DecodeArgs(std::monostate{});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->permit_waiting_time_seconds, 60);
  EXPECT_EQ(d->pod_group_backoff_seconds, 0);
  EXPECT_EQ(d->pod_group_reject_percentage, 10);

  auto bad = DecodeArgs(config::RawArgs{"permitWaitingTimeSeconds: -1\npodGroupRejectPercentage: 101\n"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("permitWaitingTimeSeconds: Invalid value: -1: must be greater than 0"),
            std::string::npos)
      << bad.status().message();
  EXPECT_NE(bad.status().message().find("podGroupRejectPercentage: Invalid value: 101: must be between 0 and 100"),
            std::string::npos);
  auto typo = DecodeArgs(config::RawArgs{"permitWaitingTime: 5\n"});
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.status().message().find("unknown field \"permitWaitingTime\""), std::string::npos);
}

// The queue keeps a group's pods together: priority first, then the group's creation
// time (a pod without a group: when it entered the queue), then namespace/name.
TEST_F(CoschedulingTest, LessOrdersByPriorityThenGroupTimeThenName) {
  auto& p = Plugin();
  AddGroup(Group("ns", "early", 2, "2026-01-01T00:00:00Z"));
  AddGroup(Group("ns", "late", 2, "2026-01-02T00:00:00Z"));
  auto info = [&](api::PodPtr pod, int32_t prio = 0) {
    auto copy = std::make_shared<api::Pod>(*pod);
    copy->spec.priority = prio;
    QueuedPodInfo q(copy);
    q.initial_attempt_timestamp = clock_.Now();
    return q;
  };
  QueuedPodInfo late_a = info(Member("a", "late"));
  QueuedPodInfo early_z = info(Member("z", "early"));
  QueuedPodInfo early_b = info(Member("b", "early"));
  QueuedPodInfo high = info(Member("h", "late"), 10);
  EXPECT_TRUE(p.Less(high, early_b));           // priority wins
  EXPECT_FALSE(p.Less(early_b, high));
  EXPECT_TRUE(p.Less(early_z, late_a));         // the older group first, whatever the names
  EXPECT_FALSE(p.Less(late_a, early_z));
  EXPECT_TRUE(p.Less(early_b, early_z));        // same group: by name
  EXPECT_FALSE(p.Less(early_z, early_b));
  EXPECT_FALSE(p.Less(early_b, early_b));
}

// A group that failed sorts by its failure time until a member is permitted again, so it
// does not keep the head of the queue.
TEST_F(CoschedulingTest, FailedGroupSortsByItsFailure) {
  auto& p = Plugin();
  AddGroup(Group("ns", "old", 3, "2020-01-01T00:00:00Z"));
  AddGroup(Group("ns", "new", 3, "2025-01-01T00:00:00Z"));
  lister_.pods = {Member("o1", "old"), Member("o2", "old"), Member("o3", "old")};
  QueuedPodInfo o1(Member("o1", "old")), n1(Member("n1", "new"));
  EXPECT_TRUE(p.Less(o1, n1));
  CycleState state;
  p.Unreserve(state, *Member("o1", "old"), "n1");  // the group fails now
  EXPECT_TRUE(p.Less(n1, o1));
  // A member permitted with the whole group there clears the failure.
  for (const char* n : {"o1", "o2", "o3"}) (void)RunPermit(*Member(n, "old"));
  EXPECT_TRUE(p.Less(o1, n1));
}

TEST_F(CoschedulingTest, PreFilterTable) {
  struct Case {
    std::string name;
    api::PodPtr pod;
    std::vector<api::PodPtr> pods;  // every labelled pod the informer holds
    Code want;
    std::string message;
  };
  AddGroup(Group("ns", "pg", 3));
  auto gated = [](api::PodPtr p) {
    auto c = std::make_shared<api::Pod>(*p);
    c->spec.scheduling_gates.push_back("wait");
    return api::PodPtr(c);
  };
  std::vector<Case> cases = {
      {"no label", PodBuilder().Name("x").Namespace("ns").Obj(), {}, Code::kSuccess, ""},
      {"group not found", Member("a", "other"), {Member("a", "other")}, Code::kSuccess, ""},
      {"too few members",
       Member("a", "pg"),
       {Member("a", "pg"), Member("b", "pg")},
       Code::kUnschedulableAndUnresolvable,
       "pre-filter pod a cannot find enough sibling pods, current pods number: 2, minMember of group: 3"},
      {"enough members", Member("a", "pg"), {Member("a", "pg"), Member("b", "pg"), Member("c", "pg")}, Code::kSuccess, ""},
      {"a member is gated",
       Member("a", "pg"),
       {Member("a", "pg"), Member("b", "pg"), gated(Member("c", "pg"))},
       Code::kUnschedulableAndUnresolvable,
       "pre-filter pod a cannot proceed due to gated pods in the same PodGroup"},
  };
  for (const Case& c : cases) {
    Plugin();
    lister_.pods = c.pods;
    Status s = RunPreFilter(*c.pod);
    EXPECT_EQ(s.code(), c.want) << c.name << ": " << s.Message();
    if (!c.message.empty()) {
      EXPECT_EQ(s.Message(), c.message) << c.name;
    }
  }
}

// minResources is checked against the cluster's free resources pooled over the nodes,
// with the group's own pods counted as free.
TEST_F(CoschedulingTest, PreFilterChecksMinResourcesAgainstTheCluster) {
  api::ResourceList want = {{"cpu", *api::Quantity::Parse("6")}};
  AddGroup(Group("ns", "pg", 2, "2026-01-01T00:00:00Z", want));
  auto n1 = NodeBuilder().Name("n1").Capacity({{"cpu", "4"}, {"pods", "10"}}).Obj();
  auto n2 = NodeBuilder().Name("n2").Capacity({{"cpu", "4"}, {"pods", "10"}}).Obj();
  auto other = PodBuilder().Name("busy").Namespace("ns").UID("busy").Node("n2").Req({{"cpu", "3"}}).Obj();
  lister_.pods = {Member("a", "pg"), Member("b", "pg")};
  handle_.SetSnapshot(cache::Snapshot::FromObjects({n1, n2}, {other}));
  Plugin();
  Status s = RunPreFilter(*Member("a", "pg"));
  EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(s.Message(), "resource gap: map[cpu:1000m]");

  // The same room taken by the group's own member counts as free.
  auto own = PodBuilder().Name("c").Namespace("ns").UID("c").Node("n2").Label(api::kPodGroupLabel, "pg")
                 .Req({{"cpu", "3"}}).Obj();
  handle_.SetSnapshot(cache::Snapshot::FromObjects({n1, n2}, {own}));
  lister_.pods.push_back(own);
  Plugin();
  EXPECT_TRUE(RunPreFilter(*Member("a", "pg")).IsSuccess());
}

TEST_F(CoschedulingTest, PermitWaitsThenAdmitsTheWholeGroup) {
  AddGroup(Group("ns", "pg", 3, "2026-01-01T00:00:00Z", {}, 7));
  lister_.pods = {Member("a", "pg"), Member("b", "pg"), Member("c", "pg"), Member("d", "pg")};
  auto& p = Plugin(Args{.permit_waiting_time_seconds = 10});
  std::chrono::milliseconds timeout{0};
  Status a = RunPermit(*Member("a", "pg"), &timeout);
  EXPECT_TRUE(a.IsWait());
  EXPECT_EQ(a.Message(), "waiting for 2 more members of gang ns/pg (1/3 assumed)");
  EXPECT_EQ(timeout, std::chrono::seconds(7));  // the group's scheduleTimeoutSeconds
  // The first member to wait moves its unassigned siblings to activeQ.
  EXPECT_EQ(handle_.activated, (std::vector<std::string>{"ns/b", "ns/c", "ns/d"}));
  handle_.waiting.push_back({Member("a", "pg")});
  Status b = RunPermit(*Member("b", "pg"));
  EXPECT_EQ(b.Message(), "waiting for 1 more member of gang ns/pg (2/3 assumed)");
  EXPECT_EQ(handle_.activated.size(), 3u);  // only the first activates
  handle_.waiting.push_back({Member("b", "pg")});
  handle_.waiting.push_back({Member("x", "other")});
  EXPECT_EQ(p.Progress(*Member("c", "pg")).assigned, 2);
  EXPECT_TRUE(RunPermit(*Member("c", "pg")).IsSuccess());
  EXPECT_TRUE(handle_.waiting[0].allowed);
  EXPECT_TRUE(handle_.waiting[1].allowed);
  EXPECT_FALSE(handle_.waiting[2].allowed);  // another group's pod
  // A late member of an admitted group passes at once.
  EXPECT_TRUE(RunPermit(*Member("d", "pg")).IsSuccess());
}

TEST_F(CoschedulingTest, PermitCountsBoundMembersAndUsesArgsTimeout) {
  AddGroup(Group("ns", "pg", 3));
  lister_.pods = {Member("a", "pg", "n1"), Member("b", "pg"), Member("c", "pg")};
  Plugin(Args{.permit_waiting_time_seconds = 10});
  std::chrono::milliseconds timeout{0};
  EXPECT_TRUE(RunPermit(*Member("b", "pg"), &timeout).IsWait());
  EXPECT_EQ(timeout, std::chrono::seconds(10));
  EXPECT_TRUE(RunPermit(*Member("c", "pg")).IsSuccess());  // a bound + b permitted + c
}

TEST_F(CoschedulingTest, PermitOfAGroupNotFoundIsUnschedulable) {
  Plugin();
  Status s = RunPermit(*Member("a", "missing"));
  EXPECT_EQ(s.code(), Code::kUnschedulable);
  EXPECT_EQ(s.Message(), "PodGroup not found");
  EXPECT_TRUE(RunPermit(*PodBuilder().Name("plain").Namespace("ns").Obj()).IsSuccess());
}

// One member that fails after Permit takes its waiting siblings back: no partial group.
TEST_F(CoschedulingTest, UnreserveRejectsWaitingSiblings) {
  AddGroup(Group("ns", "pg", 3));
  lister_.pods = {Member("a", "pg"), Member("b", "pg"), Member("c", "pg")};
  auto& p = Plugin();
  (void)RunPermit(*Member("a", "pg"));
  (void)RunPermit(*Member("b", "pg"));
  handle_.waiting = {{Member("a", "pg")}, {Member("x", "other")}};
  CycleState state;
  p.Unreserve(state, *Member("b", "pg"), "n1");
  EXPECT_EQ(handle_.waiting[0].rejected,
            "rejection in Unreserve (gang ns/pg: pod b was rejected, timed out or failed to bind)");
  EXPECT_EQ(handle_.waiting[1].rejected, "");
  EXPECT_EQ(p.Progress(*Member("c", "pg")).assigned, 0);  // a is forgotten with its rejection
}

// Members rejected with their group no longer count, even before their own Unreserve
// runs: a later member waits instead of admitting a group in part.
TEST_F(CoschedulingTest, RejectedMembersDoNotCountTowardsAdmission) {
  AddGroup(Group("ns", "pg", 3));
  lister_.pods = {Member("a", "pg"), Member("b", "pg"), Member("c", "pg"), Member("d", "pg")};
  auto& p = Plugin();
  (void)RunPermit(*Member("a", "pg"));
  (void)RunPermit(*Member("b", "pg"));
  handle_.waiting = {{Member("a", "pg")}, {Member("b", "pg")}};
  CycleState state;
  PostFilterResult result;
  (void)p.PostFilter(state, *Member("c", "pg"), {}, result);  // c fits nowhere
  EXPECT_FALSE(handle_.waiting[0].rejected.empty());
  EXPECT_TRUE(RunPermit(*Member("d", "pg")).IsWait());  // not admitted with a and b
}

// A member deleted and created again under its name is a new pod: the old one's Permit
// does not count for it.
TEST_F(CoschedulingTest, AMemberCreatedAgainUnderItsNameIsNotCounted) {
  AddGroup(Group("ns", "pg", 2));
  lister_.pods = {Member("w-0", "pg"), Member("w-1", "pg")};
  auto& p = Plugin();
  (void)RunPermit(*Member("w-0", "pg"));
  auto again = std::make_shared<api::Pod>(*Member("w-0", "pg"));
  again->metadata.uid = "uid-w-0-again";
  lister_.pods = {again, Member("w-1", "pg")};
  EXPECT_EQ(p.Progress(*again).assigned, 0);
  EXPECT_TRUE(RunPermit(*Member("w-1", "pg")).IsWait());
}

// Members wait until one deadline for the group; a group is not admitted in the last
// moments before it, when the waiting members' timeouts could split it.
TEST_F(CoschedulingTest, OneDeadlinePerGroupAndNoAdmissionAtItsEnd) {
  AddGroup(Group("ns", "pg", 3, "2026-01-01T00:00:00Z", {}, 10));
  lister_.pods = {Member("a", "pg"), Member("b", "pg"), Member("c", "pg")};
  Plugin();
  std::chrono::milliseconds timeout{0};
  EXPECT_TRUE(RunPermit(*Member("a", "pg"), &timeout).IsWait());
  EXPECT_EQ(timeout, std::chrono::seconds(10));
  clock_.Advance(std::chrono::seconds(4));
  EXPECT_TRUE(RunPermit(*Member("b", "pg"), &timeout).IsWait());
  EXPECT_EQ(timeout, std::chrono::seconds(6));  // the group's deadline, not a fresh 10 s
  clock_.Advance(std::chrono::milliseconds(5800));
  Status late = RunPermit(*Member("c", "pg"));
  EXPECT_EQ(late.code(), Code::kUnschedulable);
  EXPECT_EQ(late.Message(), "gang ns/pg: the wait of its members at Permit is ending");
}

TEST_F(CoschedulingTest, PostFilterRejectsTheGroupAndBacksItOff) {
  AddGroup(Group("ns", "pg", 4));
  lister_.pods = {Member("a", "pg"), Member("b", "pg"), Member("c", "pg"), Member("d", "pg")};
  auto& p = Plugin(Args{.pod_group_backoff_seconds = 30});
  (void)RunPermit(*Member("a", "pg"));
  handle_.waiting = {{Member("a", "pg")}};
  handle_.SetSnapshot(cache::Snapshot::FromObjects({NodeBuilder().Name("n1").Capacity({{"cpu", "1"}}).Obj()}, {}));
  CycleState state;
  PostFilterResult result;
  NodeToStatusMap filtered = {{"n1", Status(Code::kUnschedulable, "Insufficient cpu")}};
  Status s = p.PostFilter(state, *Member("b", "pg"), filtered, result);
  EXPECT_EQ(s.code(), Code::kUnschedulable);
  EXPECT_EQ(s.Message(), "PodGroup ns/pg gets rejected due to Pod b is unschedulable even after PostFilter");
  EXPECT_EQ(handle_.waiting[0].rejected,
            "optimistic rejection in PostFilter (gang ns/pg: pod b is unschedulable: 0/1 nodes are available: 1 "
            "Insufficient cpu.)");
  Status backed = RunPreFilter(*Member("c", "pg"));
  EXPECT_EQ(backed.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(backed.Message(), "podGroup ns/pg failed recently");
  clock_.Advance(std::chrono::seconds(31));
  EXPECT_TRUE(RunPreFilter(*Member("c", "pg")).IsSuccess());
}

// With few members missing (within podGroupRejectPercentage) a failing member does not
// bring its group down.
TEST_F(CoschedulingTest, PostFilterSparesAGroupAlmostComplete) {
  AddGroup(Group("ns", "pg", 10));
  std::vector<api::PodPtr> pods;
  for (int i = 0; i < 10; ++i) pods.push_back(Member("m" + std::to_string(i), "pg"));
  lister_.pods = pods;
  auto& p = Plugin();
  for (int i = 0; i < 9; ++i) (void)RunPermit(*pods[i]);
  handle_.waiting = {{pods[0]}};
  CycleState state;
  PostFilterResult result;
  Status s = p.PostFilter(state, *pods[9], {}, result);
  EXPECT_EQ(s.code(), Code::kUnschedulable);
  EXPECT_EQ(handle_.waiting[0].rejected, "");
}

// Groups waiting, admitted and turned away (by a timeout or a member that fits nowhere).
TEST_F(CoschedulingTest, Metrics) {
  struct Recorder : runtime::MetricsRecorder {
    void ObservePodGroupAdmitted() override { ++admitted; }
    void ObservePodGroupRejected(std::string_view reason) override { rejected.emplace_back(reason); }
    void AddPodGroupsWaiting(int delta) override { waiting += delta; }
    int admitted = 0, waiting = 0;
    std::vector<std::string> rejected;
  } rec;
  handle_.metrics = &rec;
  AddGroup(Group("ns", "a", 2, "2026-01-01T00:00:00Z", {}, 10));
  AddGroup(Group("ns", "b", 2, "2026-01-01T00:00:00Z", {}, 10));
  lister_.pods = {Member("a0", "a"), Member("a1", "a"), Member("b0", "b"), Member("b1", "b")};
  auto& p = Plugin();
  (void)RunPermit(*Member("a0", "a"));
  (void)RunPermit(*Member("b0", "b"));
  EXPECT_EQ(rec.waiting, 2);
  EXPECT_TRUE(RunPermit(*Member("a1", "a")).IsSuccess());
  EXPECT_EQ(rec.admitted, 1);
  EXPECT_EQ(rec.waiting, 1);
  clock_.Advance(std::chrono::seconds(11));  // b0's wait is over: the framework unreserves it
  CycleState state;
  p.Unreserve(state, *Member("b0", "b"), "n1");
  p.Unreserve(state, *Member("b0", "b"), "n1");  // counted once
  EXPECT_EQ(rec.rejected, (std::vector<std::string>{"timeout"}));
  EXPECT_EQ(rec.waiting, 0);
  (void)RunPermit(*Member("b0", "b"));
  PostFilterResult result;
  (void)p.PostFilter(state, *Member("b1", "b"), {}, result);
  EXPECT_EQ(rec.rejected, (std::vector<std::string>{"timeout", "member_unschedulable"}));
  EXPECT_EQ(rec.waiting, 0);
}

TEST_F(CoschedulingTest, HintsQueueOnlyTheGroupConcerned) {
  AddGroup(Group("ns", "pg", 2));
  AddGroup(Group("ns", "sized", 2, "2026-01-01T00:00:00Z", {{"cpu", *api::Quantity::Parse("1")}}));
  auto& p = Plugin();
  auto events = p.EventsToRegister();
  auto hint_for = [&](EventResource r, ActionType a) -> const QueueingHintFn& {
    for (const auto& e : events) {
      if (e.event.resource == r && (e.event.action_type & a)) return e.hint_fn;
    }
    ADD_FAILURE() << "no registration";
    return events.front().hint_fn;
  };
  auto member = Member("a", "pg");
  auto sibling = Member("b", "pg", "n1");
  auto stranger = Member("z", "other", "n1");
  const auto& pod_add = hint_for(EventResource::kPod, kAdd);
  EXPECT_EQ(*pod_add(*member, nullptr, sibling.get()), QueueingHint::kQueue);
  EXPECT_EQ(*pod_add(*member, nullptr, stranger.get()), QueueingHint::kSkip);
  const auto& group_change = hint_for(EventResource::kPodGroup, kUpdate);
  EXPECT_EQ(*group_change(*member, nullptr, lister_.pod_groups["ns/pg"].get()), QueueingHint::kQueue);
  EXPECT_EQ(*group_change(*member, nullptr, lister_.pod_groups["ns/sized"].get()), QueueingHint::kSkip);
  const auto& node_add = hint_for(EventResource::kNode, kAdd);
  EXPECT_EQ(*node_add(*member, nullptr, nullptr), QueueingHint::kSkip);  // no minResources
  EXPECT_EQ(*node_add(*Member("s", "sized"), nullptr, nullptr), QueueingHint::kQueue);
}

}  // namespace
}  // namespace ksched::framework::plugins::coscheduling
