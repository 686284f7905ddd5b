#include "pkg/explain/decision_log.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <atomic>
#include <thread>

#include "tests/fakes/builders.h"

namespace ksched::explain {
namespace {

using framework::runtime::NodeScores;
using framework::runtime::RejectionSummary;
using testing::PodBuilder;

// A scheduling queue as the log sees it: a list of where pods are.
struct FakeQueue {
  std::vector<queue::QueuedPodState> pods;

  void Put(api::PodPtr pod, std::string_view where, Clock::time_point t) {
    std::erase_if(pods, [&](const auto& st) { return st.pod->metadata.uid == pod->metadata.uid; });
    pods.push_back({.pod = std::move(pod), .queue = where, .attempts = 1, .initial_attempt_timestamp = t, .since = t});
  }
  void Remove(const api::Pod& pod) {
    std::erase_if(pods, [&](const auto& st) { return st.pod->metadata.uid == pod.metadata.uid; });
  }
};

class DecisionLogTest : public ::testing::Test {
 protected:
  DecisionLogOptions Options() {
    DecisionLogOptions o;
    o.clock = &clock_;
    o.scheduled_records = 3;
    o.stuck_after = std::chrono::minutes(10);
    o.plugin_events["ksched"]["NodeResourcesFit"] = {"Node/Add|UpdateNodeAllocatable", "Pod/Delete"};
    o.plugin_events["ksched"]["TaintToleration"] = {"Node/Add|UpdateNodeTaint"};
    o.plugin_events["ksched"]["NoEvents"] = {};
    o.queued_pods = [this] { return queue_.pods; };
    o.queued_pod = [this](std::string_view key) -> std::optional<queue::QueuedPodState> {
      for (const auto& st : queue_.pods) {
        if (st.pod->Key() == key) return st;
      }
      return std::nullopt;
    };
    return o;
  }

  static RejectionSummary CpuSummary(int nodes) {
    RejectionSummary s;
    s.considered_nodes = nodes;
    RejectionSummary::PluginRejections fit{.plugin = "NodeResourcesFit", .nodes = nodes};
    RejectionSummary::Reason cpu{.reason = "Insufficient cpu", .nodes = nodes};
    for (int i = 0; i < nodes && i < 5; ++i) cpu.sample_nodes.push_back("node-" + std::to_string(i));
    fit.reasons.push_back(cpu);
    s.plugins.push_back(fit);
    s.closest_nodes.push_back({.node = "node-0", .plugin = "NodeResourcesFit", .reasons = {"Insufficient cpu"}});
    return s;
  }

  Failure CpuFailure(const api::PodPtr& pod, int attempts, const RejectionSummary& s) {
    return Failure{.pod = pod,
                   .profile = "ksched",
                   .attempts = attempts,
                   .time = clock_.Now(),
                   .message = "0/3 nodes are available: 3 Insufficient cpu.",
                   .rejected_by = {"NodeResourcesFit"},
                   .nodes = 3,
                   .summary = &s};
  }

  // A pod of the "ksched" profile, queued in `where` from now on.
  api::PodPtr Queued(const std::string& name, const std::string& uid, std::string_view where) {
    auto pod = PodBuilder(name).Namespace("default").UID(uid).SchedulerName("ksched").Obj();
    queue_.Put(pod, where, clock_.Now());
    return pod;
  }

  static simdjson::dom::element Parse(simdjson::dom::parser& parser, const std::string& json) {
    auto doc = parser.parse(json);
    EXPECT_EQ(doc.error(), simdjson::SUCCESS) << json;
    return doc.value();
  }

  FakeClock clock_;
  FakeQueue queue_;
};

TEST_F(DecisionLogTest, PendingPodShowsItsLastVerdictAndWhatCanWakeIt) {
  DecisionLog log(Options());
  auto pod = Queued("big", "u1", "unschedulablePods");
  RejectionSummary s = CpuSummary(3);
  log.RecordFailure(CpuFailure(pod, 1, s));

  auto body = log.PodJson("default", "big");
  ASSERT_TRUE(body.has_value());
  simdjson::dom::parser parser;
  auto doc = Parse(parser, *body);
  EXPECT_EQ(std::string_view(doc["status"]), "Pending");
  EXPECT_EQ(std::string_view(doc["queue"]["name"]), "unschedulablePods");
  EXPECT_EQ(int64_t(doc["attempts"]), 1);
  auto failure = doc["lastFailure"];
  EXPECT_EQ(std::string_view(failure["message"]), "0/3 nodes are available: 3 Insufficient cpu.");
  EXPECT_FALSE(bool(failure["error"]));
  auto plugin = failure["plugins"].at(0);
  EXPECT_EQ(std::string_view(plugin["plugin"]), "NodeResourcesFit");
  EXPECT_EQ(std::string_view(plugin["stage"]), "Filter");
  EXPECT_EQ(int64_t(plugin["nodes"]), 3);
  auto reason = plugin["reasons"].at(0);
  EXPECT_EQ(std::string_view(reason["reason"]), "Insufficient cpu");
  EXPECT_EQ(simdjson::dom::array(reason["sampleNodes"]).size(), 3u);
  EXPECT_EQ(std::string_view(failure["closestNodes"].at(0)["node"]), "node-0");
  auto events = simdjson::dom::array(doc["wakeUpEvents"]);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(std::string_view(events.at(0)["event"]), "Node/Add|UpdateNodeAllocatable");
  EXPECT_EQ(std::string_view(events.at(0)["plugins"].at(0)), "NodeResourcesFit");
  EXPECT_EQ(std::string_view(doc["retryAfter"]), "5m0s");
  EXPECT_FALSE(bool(doc["stuck"]));

  EXPECT_FALSE(log.PodJson("default", "unknown").has_value());
}

TEST_F(DecisionLogTest, SameVerdictForTenMinutesAndThreeAttemptsIsStuckAndReportedOnce) {
  DecisionLog log(Options());
  auto pod = Queued("big", "u1", "unschedulablePods");
  RejectionSummary s = CpuSummary(3);
  log.RecordFailure(CpuFailure(pod, 1, s));
  clock_.Advance(std::chrono::minutes(5));
  log.RecordFailure(CpuFailure(pod, 2, s));
  clock_.Advance(std::chrono::minutes(6));
  EXPECT_TRUE(log.Sweep().empty()) << "two attempts are not enough";
  log.RecordFailure(CpuFailure(pod, 3, s));
  EXPECT_EQ(log.StuckCounts()["ksched"], 1u);

  auto stuck = log.Sweep();
  ASSERT_EQ(stuck.size(), 1u);
  EXPECT_EQ(stuck[0].pod->Key(), "default/big");
  EXPECT_EQ(stuck[0].profile, "ksched");
  EXPECT_NE(stuck[0].reason.find("unschedulable for 11m0s with the same verdict in its last 3 attempts"),
            std::string::npos)
      << stuck[0].reason;
  EXPECT_TRUE(log.Sweep().empty()) << "reported once, not every sweep";

  simdjson::dom::parser parser;
  auto list = Parse(parser, log.PodsJson());
  EXPECT_EQ(int64_t(list["stuckPods"]), 1);
  EXPECT_TRUE(bool(list["pods"].at(0)["stuck"]));
}

TEST_F(DecisionLogTest, ADifferentVerdictRestartsTheCount) {
  DecisionLog log(Options());
  auto pod = Queued("big", "u1", "unschedulablePods");
  RejectionSummary three = CpuSummary(3), four = CpuSummary(4);
  log.RecordFailure(CpuFailure(pod, 1, three));
  clock_.Advance(std::chrono::minutes(6));
  log.RecordFailure(CpuFailure(pod, 2, three));
  clock_.Advance(std::chrono::minutes(6));
  Failure changed = CpuFailure(pod, 3, four);
  changed.message = "0/4 nodes are available: 4 Insufficient cpu.";
  log.RecordFailure(changed);
  EXPECT_EQ(log.StuckCounts()["ksched"], 0u);
  simdjson::dom::parser parser;
  auto doc = Parse(parser, *log.PodJson("default", "big"));
  EXPECT_EQ(int64_t(doc["lastFailure"]["sameVerdictAttempts"]), 1);
}

TEST_F(DecisionLogTest, NoEventCanMoveItIsStuckAtOnce) {
  DecisionLog log(Options());
  auto pod = Queued("p", "u1", "unschedulablePods");
  log.RecordFailure(Failure{.pod = pod,
                            .profile = "ksched",
                            .attempts = 1,
                            .time = clock_.Now(),
                            .message = "0/3 nodes are available: 3 never.",
                            .rejected_by = {"NoEvents"},
                            .nodes = 3});
  auto stuck = log.Sweep();
  ASSERT_EQ(stuck.size(), 1u);
  EXPECT_NE(stuck[0].reason.find("no cluster event registered by the plugins that rejected it (NoEvents)"),
            std::string::npos)
      << stuck[0].reason;
  simdjson::dom::parser parser;
  auto doc = Parse(parser, *log.PodJson("default", "p"));
  EXPECT_EQ(simdjson::dom::array(doc["wakeUpEvents"]).size(), 0u);
}

TEST_F(DecisionLogTest, AnInternalErrorIsNeverStuck) {
  DecisionLog log(Options());
  auto pod = Queued("p", "u1", "backoffQ");
  for (int i = 1; i <= 4; ++i) {
    log.RecordFailure(Failure{.pod = pod, .profile = "ksched", .attempts = i, .time = clock_.Now(),
                              .message = "etcd timeout", .error = true, .nodes = 3});
    clock_.Advance(std::chrono::minutes(5));
  }
  EXPECT_TRUE(log.Sweep().empty());
  simdjson::dom::parser parser;
  auto doc = Parse(parser, *log.PodJson("default", "p"));
  EXPECT_TRUE(bool(doc["lastFailure"]["error"]));
}

TEST_F(DecisionLogTest, PlacementEndsThePendingRecordAndTheRingIsBounded) {
  DecisionLog log(Options());
  auto pod = Queued("web", "u1", "unschedulablePods");
  RejectionSummary s = CpuSummary(3);
  log.RecordFailure(CpuFailure(pod, 1, s));
  queue_.Remove(*pod);
  std::vector<NodeScores> top = {{.node = "node-2", .total = 150, .plugins = {{"NodeResourcesBalancedAllocation", 97}}},
                                 {.node = "node-1", .total = 120, .plugins = {{"NodeResourcesBalancedAllocation", 80}}}};
  log.RecordPlacement({.pod = pod, .profile = "ksched", .attempts = 2, .time = clock_.Now(), .node = "node-2",
                       .nodes = 4, .feasible_nodes = 2, .evaluated_nodes = 4, .top_nodes = top});
  EXPECT_EQ(log.PendingRecords(), 0u);
  simdjson::dom::parser parser;
  auto doc = Parse(parser, *log.PodJson("default", "web"));
  EXPECT_EQ(std::string_view(doc["status"]), "Scheduled");
  EXPECT_EQ(std::string_view(doc["scheduled"]["node"]), "node-2");
  EXPECT_EQ(int64_t(doc["scheduled"]["feasibleNodes"]), 2);
  EXPECT_EQ(int64_t(doc["scheduled"]["topNodes"].at(1)["score"]), 120);
  EXPECT_EQ(std::string_view(doc["scheduled"]["topNodes"].at(0)["plugins"].at(0)["plugin"]),
            "NodeResourcesBalancedAllocation");

  for (int i = 0; i < 3; ++i) {
    auto other = PodBuilder("o" + std::to_string(i)).Namespace("default").UID("o" + std::to_string(i)).Obj();
    log.RecordPlacement({.pod = other, .profile = "ksched", .attempts = 1, .time = clock_.Now(), .node = "node-1"});
  }
  EXPECT_FALSE(log.PodJson("default", "web").has_value()) << "the oldest left the ring of 3";
  EXPECT_TRUE(log.PodJson("default", "o0").has_value());
}

TEST_F(DecisionLogTest, PreemptionStaysOnRecordWhileTheVictimsLeave) {
  DecisionLog log(Options());
  auto pod = Queued("high", "u1", "unschedulablePods");
  RejectionSummary s = CpuSummary(3);
  Failure preempted = CpuFailure(pod, 1, s);
  preempted.nomination = "node-1";
  preempted.victims = {"default/low-1"};
  log.RecordFailure(preempted);
  log.RecordFailure(CpuFailure(pod, 2, s));  // waits for its victim: nomination unchanged
  auto body = *log.PodJson("default", "high");
  EXPECT_NE(body.find(R"("preemption":{"nominatedNode":"node-1","victims":["default/low-1"]})"), std::string::npos)
      << body;
  Failure cleared = CpuFailure(pod, 3, s);
  cleared.nomination = "";
  log.RecordFailure(cleared);
  body = *log.PodJson("default", "high");
  EXPECT_EQ(body.find("preemption"), std::string::npos) << body;
}

TEST_F(DecisionLogTest, SweepDropsPodsThatAreNoLongerPending) {
  DecisionLog log(Options());
  auto pod = Queued("p", "u1", "unschedulablePods");
  RejectionSummary s = CpuSummary(3);
  log.RecordFailure(CpuFailure(pod, 1, s));
  EXPECT_EQ(log.PendingRecords(), 1u);
  queue_.Remove(*pod);  // deleted
  log.Sweep();
  EXPECT_EQ(log.PendingRecords(), 0u);
}

TEST_F(DecisionLogTest, ListPutsStuckPodsFirstThenTheOldest) {
  DecisionLog log(Options());
  auto old_pod = Queued("old", "u1", "activeQ");
  clock_.Advance(std::chrono::seconds(1));
  auto stuck = Queued("stuck", "u2", "unschedulablePods");
  log.RecordFailure(Failure{.pod = stuck, .profile = "ksched", .attempts = 1, .time = clock_.Now(),
                            .message = "no", .rejected_by = {"NoEvents"}, .nodes = 1});
  clock_.Advance(std::chrono::seconds(1));
  auto young = Queued("young", "u3", "scheduling");

  simdjson::dom::parser parser;
  auto list = Parse(parser, log.PodsJson());
  auto pods = simdjson::dom::array(list["pods"]);
  ASSERT_EQ(pods.size(), 3u);
  EXPECT_EQ(std::string_view(pods.at(0)["name"]), "stuck");
  EXPECT_EQ(std::string_view(pods.at(1)["name"]), "old");
  EXPECT_EQ(std::string_view(pods.at(1)["reason"]), "");
  EXPECT_EQ(std::string_view(pods.at(2)["queue"]), "scheduling");
  EXPECT_EQ(int64_t(list["pendingPods"]), 3);
}

TEST_F(DecisionLogTest, ServeDebugPodsRoutesAndAnswers404) {
  DecisionLog log(Options());
  auto pod = Queued("big", "u1", "activeQ");
  EXPECT_EQ(ServeDebugPods(&log, "/debug/pods").first, 200);
  EXPECT_EQ(ServeDebugPods(&log, "/debug/pods/").first, 200);
  EXPECT_EQ(ServeDebugPods(&log, "/debug/pods/default/big").first, 200);
  auto [status, body] = ServeDebugPods(&log, "/debug/pods/default/nope");
  EXPECT_EQ(status, 404);
  EXPECT_NE(body.find("pod default/nope is not known to ksched"), std::string::npos) << body;
  EXPECT_EQ(ServeDebugPods(&log, "/debug/pods/default").first, 404);
  EXPECT_EQ(ServeDebugPods(&log, "/debug/pods/a/b/c").first, 404);
  auto [off_status, off_body] = ServeDebugPods(nullptr, "/debug/pods");
  EXPECT_EQ(off_status, 404);
  EXPECT_NE(off_body.find("the decision log is off (--explain-records=0)"), std::string::npos) << off_body;
}

// The scheduling thread records failures, the binding completions placements, the
// server and the scrape read, the stuck loop sweeps: all at once (run under TSan too).
TEST_F(DecisionLogTest, WritersAndReadersAtOnce) {
  std::vector<queue::QueuedPodState> snapshot;
  for (int i = 0; i < 50; ++i) Queued("p" + std::to_string(i), "u" + std::to_string(i), "unschedulablePods");
  snapshot = queue_.pods;
  DecisionLogOptions o = Options();
  o.queued_pods = [snapshot] { return snapshot; };
  o.queued_pod = [snapshot](std::string_view key) -> std::optional<queue::QueuedPodState> {
    for (const auto& st : snapshot) {
      if (st.pod->Key() == key) return st;
    }
    return std::nullopt;
  };
  DecisionLog log(std::move(o));
  RejectionSummary s = CpuSummary(3);
  std::atomic<bool> done{false};
  std::thread failures([&] {
    for (int round = 0; round < 200; ++round) {
      for (const auto& st : snapshot) log.RecordFailure(CpuFailure(st.pod, round + 1, s));
    }
  });
  std::thread placements([&] {
    for (int i = 0; i < 2000; ++i) {
      auto pod = PodBuilder("b" + std::to_string(i)).Namespace("default").UID("b" + std::to_string(i)).Obj();
      log.RecordPlacement({.pod = pod, .profile = "ksched", .attempts = 1, .time = clock_.Now(), .node = "node-1"});
    }
  });
  std::thread readers([&] {
    while (!done.load()) {
      EXPECT_FALSE(log.PodsJson().empty());
      (void)log.PodJson("default", "p7");
      (void)log.StuckCounts();
      (void)log.Sweep();
    }
  });
  failures.join();
  placements.join();
  done = true;
  readers.join();
  EXPECT_EQ(log.PendingRecords(), 50u);
  EXPECT_TRUE(log.PodJson("default", "b1999").has_value());
}

// Memory: at 5,000 nodes, 1,000 pending pods with a verdict each (the worst case for
// sharing: every verdict different) stay under 1 KB a pod.
TEST_F(DecisionLogTest, PendingPodsCostLessThanOneKilobyteEachAt5000Nodes) {
  DecisionLog log(Options());
  constexpr int kNodes = 5000, kPods = 1000;
  for (int i = 0; i < kPods; ++i) {
    auto pod = PodBuilder("pod-" + std::to_string(i)).Namespace("default").UID("uid-" + std::to_string(i))
                   .SchedulerName("ksched").Obj();
    queue_.Put(pod, "unschedulablePods", clock_.Now());
    // Two plugins, two reasons, realistic cloud node names, all different per pod.
    RejectionSummary s;
    s.considered_nodes = kNodes;
    RejectionSummary::PluginRejections fit{.plugin = "NodeResourcesFit", .nodes = kNodes - i};
    RejectionSummary::PluginRejections taint{.plugin = "TaintToleration", .nodes = i + 1};
    for (const char* r : {"Insufficient cpu", "Insufficient memory"}) {
      RejectionSummary::Reason reason{.reason = r, .nodes = kNodes - i};
      for (int k = 0; k < 5; ++k)
        reason.sample_nodes.push_back("ip-10-0-" + std::to_string((i + k) % kNodes) + ".ec2.internal");
      fit.reasons.push_back(reason);
    }
    taint.reasons.push_back({.reason = "node(s) had untolerated taint {dedicated: gpu}", .nodes = i + 1,
                             .sample_nodes = {"ip-10-1-" + std::to_string(i) + ".ec2.internal"}});
    s.plugins = {fit, taint};
    for (int k = 0; k < 5; ++k) {
      s.closest_nodes.push_back({.node = "ip-10-2-" + std::to_string((i + k) % kNodes) + ".ec2.internal",
                                 .plugin = "NodeResourcesFit",
                                 .reasons = {"Insufficient cpu"}});
    }
    log.RecordFailure(Failure{.pod = pod,
                              .profile = "ksched",
                              .attempts = 1,
                              .time = clock_.Now(),
                              .message = "0/5000 nodes are available: " + std::to_string(kNodes - i) +
                                         " Insufficient cpu, " + std::to_string(i + 1) +
                                         " node(s) had untolerated taint {dedicated: gpu}.",
                              .rejected_by = {"NodeResourcesFit", "TaintToleration"},
                              .nodes = kNodes,
                              .summary = &s});
  }
  const size_t per_pod = log.PendingBytes() / kPods;
  EXPECT_LE(per_pod, 1024u);
  std::printf("pending pod record: %zu bytes each (distinct verdicts)\n", per_pod);

  // The same verdict for many pods is kept once.
  DecisionLog shared(Options());
  RejectionSummary s = CpuSummary(kNodes);
  for (int i = 0; i < kPods; ++i) {
    auto pod = PodBuilder("r-" + std::to_string(i)).Namespace("default").UID("r" + std::to_string(i))
                   .SchedulerName("ksched").Obj();
    shared.RecordFailure(CpuFailure(pod, 1, s));
  }
  EXPECT_LE(shared.PendingBytes() / kPods, 256u);
}

}  // namespace
}  // namespace ksched::explain
