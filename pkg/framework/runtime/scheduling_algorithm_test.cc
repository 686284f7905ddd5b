#include "pkg/framework/runtime/scheduling_algorithm.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "pkg/framework/runtime/runtime_test_util.h"
#include "tests/fakes/fake_extender.h"

namespace ksched::framework::runtime {
namespace {

using namespace testing;  // NOLINT: the fakes
using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

int NodeIndex(const cache::NodeInfo& n) { return std::stoi(n.name().substr(5)); }

TEST(NumFeasibleNodesToFind, UpstreamTable) {
  struct Case {
    std::string name;
    std::optional<int32_t> percentage;
    int32_t nodes, want;
  };
  std::vector<Case> cases = {
      {"not set percentageOfNodesToScore and nodes number not more than 50", std::nullopt, 10, 10},
      {"set percentageOfNodesToScore and nodes number not more than 50", 40, 10, 10},
      {"not set percentageOfNodesToScore and nodes number more than 50", std::nullopt, 1000, 420},
      {"set percentageOfNodesToScore and nodes number more than 50", 40, 1000, 400},
      {"not set percentageOfNodesToScore and nodes number more than 50*125", std::nullopt, 6000, 300},
      {"set percentageOfNodesToScore and nodes number more than 50*125", 40, 6000, 2400},
      // Later upstream cases: 0 means adaptive, >= 100 means all, never below 100 nodes.
      {"zero percentage is adaptive", 0, 1000, 420},
      {"percentage 100", 100, 6000, 6000},
      {"small percentage is raised to 100 nodes", 1, 1000, 100},
      {"adaptive floor is 5%", std::nullopt, 100000, 5000},
      {"99 nodes", 10, 99, 99},
  };
  for (const Case& c : cases) EXPECT_EQ(NumFeasibleNodesToFind(c.percentage, c.nodes), c.want) << c.name;
}

Status Rejection(std::string reason) { return Status(Code::kUnschedulable, std::move(reason)); }

TEST(FitError, MessageCountsAndSortsReasons) {
  FitError fe;
  fe.num_all_nodes = 60;
  fe.diagnosis.emplace("cordoned", Rejection("node(s) were unschedulable"));
  for (int i = 0; i < 53; ++i) fe.diagnosis.emplace("plain-" + std::to_string(i), Rejection("node(s) didn't match Pod's node affinity"));
  for (int i = 0; i < 6; ++i) {
    fe.diagnosis.emplace("gpu-" + std::to_string(i), Rejection("node(s) had taint {dedicated: gpu}, that the pod didn't tolerate"));
  }
  // Upstream pkg/scheduler/core/generic_scheduler.go, FitError.Error (1.20.2): reasons
  // counted per node and sorted as strings; matches kube-scheduler 1.20.2's output.
  EXPECT_EQ(fe.Message(),
            "0/60 nodes are available: 1 node(s) were unschedulable, 53 node(s) didn't match Pod's node affinity, "
            "6 node(s) had taint {dedicated: gpu}, that the pod didn't tolerate.");
}

TEST(FitError, MessageTable) {
  struct Case {
    std::string name;
    int num_all;
    std::vector<std::pair<std::string, Status>> statuses;
    std::string want;
  };
  std::vector<Case> cases = {
      {"one reason", 3,
       {{"a", Rejection("Insufficient cpu")}, {"b", Rejection("Insufficient cpu")}, {"c", Rejection("Insufficient cpu")}},
       "0/3 nodes are available: 3 Insufficient cpu."},
      {"several reasons on one node count separately", 2,
       {{"a", Status(Code::kUnschedulable, std::vector<std::string>{"Insufficient cpu", "Insufficient memory"})},
        {"b", Rejection("Insufficient memory")}},
       "0/2 nodes are available: 1 Insufficient cpu, 2 Insufficient memory."},
      {"sorted as whole strings, count first", 12,
       {{"a", Rejection("z reason")}, {"b", Rejection("a reason")}, {"c", Rejection("a reason")}},
       "0/12 nodes are available: 1 z reason, 2 a reason."},
      {"no statuses", 5, {}, "0/5 nodes are available: ."},
  };
  for (const Case& c : cases) {
    FitError fe;
    fe.num_all_nodes = c.num_all;
    for (const auto& [node, status] : c.statuses) fe.diagnosis.emplace(node, status);
    EXPECT_EQ(fe.Message(), c.want) << c.name;
  }
}

// A scheduler harness: registry + profile + algorithm over a snapshot of N nodes.
struct Harness {
  Registry registry = BaseRegistry();
  config::KubeSchedulerProfile profile = BaseProfile();
  std::unique_ptr<Framework> fw;
  SchedulingAlgorithm algo{SchedulingAlgorithmOptions{.seed = 42}};
  cache::Snapshot snapshot;

  explicit Harness(int nodes) : snapshot(MakeSnapshot(nodes)) {}
  void Build(FrameworkOptions options = {.parallelism = 4}) {
    auto f = NewFramework(registry, profile, std::move(options));
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    fw = std::move(*f);
  }
  ScheduleOutcome Schedule(const api::Pod& pod) {
    CycleState state;
    return algo.SchedulePod(*fw, state, pod, snapshot);
  }
};

TEST(SchedulePod, NoNodes) {
  Harness h(0);
  h.Build();
  ScheduleOutcome out = h.Schedule(*MakePod("p"));
  ASSERT_TRUE(std::holds_alternative<Status>(out));
  EXPECT_EQ(std::get<Status>(out).code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(std::get<Status>(out).Message(), "no nodes available to schedule pods");
}

TEST(SchedulePod, FitErrorNamesRejectingPlugins) {
  Harness h(4);
  Register(h.registry, std::make_unique<FakeFilter>("Taints", std::set<std::string>{"node-0", "node-1"},
                                                    Rejection("node(s) had untolerated taint {k: v}")));
  Register(h.registry, std::make_unique<FakeFilter>("Fit", std::set<std::string>{"node-1", "node-2", "node-3"},
                                                    Rejection("Insufficient cpu")));
  Register(h.registry, std::make_unique<FakeFilter>("Never", std::set<std::string>{"node-0", "node-1", "node-2", "node-3"},
                                                    Rejection("never reached")));
  Enable(h.profile.plugins.filter, {"Taints", "Fit", "Never"});
  h.Build();
  ScheduleOutcome out = h.Schedule(*MakePod("p"));
  ASSERT_TRUE(std::holds_alternative<FitError>(out));
  const FitError& fe = std::get<FitError>(out);
  EXPECT_EQ(fe.num_all_nodes, 4);
  EXPECT_EQ(fe.diagnosis.size(), 4u);
  EXPECT_EQ(fe.diagnosis.at("node-1").plugin(), "Taints");
  EXPECT_THAT(fe.unschedulable_plugins, ElementsAre("Fit", "Taints"));
  EXPECT_EQ(fe.Message(), "0/4 nodes are available: 2 Insufficient cpu, 2 node(s) had untolerated taint {k: v}.");
}

TEST(SchedulePod, PreFilterRejectionAppliesToAllNodes) {
  Harness h(3);
  Register(h.registry, std::make_unique<FakePreFilter>("PF", Status(Code::kUnschedulableAndUnresolvable, "no claim")));
  Enable(h.profile.plugins.pre_filter, {"PF"});
  h.Build();
  ScheduleOutcome out = h.Schedule(*MakePod("p"));
  ASSERT_TRUE(std::holds_alternative<FitError>(out));
  const FitError& fe = std::get<FitError>(out);
  EXPECT_EQ(fe.diagnosis.size(), 3u);
  EXPECT_THAT(fe.unschedulable_plugins, ElementsAre("PF"));
  EXPECT_EQ(fe.Message(), "0/3 nodes are available: no claim.");
}

TEST(SchedulePod, PendingPluginsSeparate) {
  Harness h(2);
  Register(h.registry, std::make_unique<FakeFilter>("Wait", std::set<std::string>{"node-0", "node-1"},
                                                    Status(Code::kPending, "waiting for volume")));
  Enable(h.profile.plugins.filter, {"Wait"});
  h.Build();
  ScheduleOutcome out = h.Schedule(*MakePod("p"));
  const FitError& fe = std::get<FitError>(out);
  EXPECT_TRUE(fe.unschedulable_plugins.empty());
  EXPECT_THAT(fe.pending_plugins, ElementsAre("Wait"));
}

TEST(SchedulePod, PreFilterResultRestrictsCandidates) {
  Harness h(10);
  PreFilterResult only;
  only.node_names = std::set<std::string, std::less<>>{"node-3", "node-7"};
  Register(h.registry, std::make_unique<FakePreFilter>("PF", Status(), only));
  auto* filter = Register(h.registry, std::make_unique<FakeFilter>("F", std::set<std::string>{"node-3"}, Rejection("no")));
  Enable(h.profile.plugins.pre_filter, {"PF"});
  Enable(h.profile.plugins.filter, {"F"});
  h.Build();
  ScheduleOutcome out = h.Schedule(*MakePod("p"));
  ASSERT_TRUE(std::holds_alternative<ScheduleResult>(out));
  EXPECT_EQ(std::get<ScheduleResult>(out).suggested_host, "node-7");
  EXPECT_EQ(std::get<ScheduleResult>(out).evaluated_nodes, 2);
  EXPECT_EQ(filter->calls.load(), 2);
}

TEST(SchedulePod, PreFilterNamesUnknownNode) {
  Harness h(2);
  PreFilterResult only;
  only.node_names = std::set<std::string, std::less<>>{"node-1", "ghost"};
  Register(h.registry, std::make_unique<FakePreFilter>("PF", Status(), only));
  Enable(h.profile.plugins.pre_filter, {"PF"});
  h.Build();
  ScheduleOutcome out = h.Schedule(*MakePod("p"));
  ASSERT_TRUE(std::holds_alternative<Status>(out));
  EXPECT_EQ(std::get<Status>(out).code(), Code::kError);
  EXPECT_EQ(std::get<Status>(out).Message(), "nodeinfo not found for node name \"ghost\"");
}

TEST(SchedulePod, SingleFeasibleNodeSkipsScoring) {
  Harness h(5);
  Register(h.registry, std::make_unique<FuncFilter>("OnlyTwo", [](const cache::NodeInfo& n) {
             return n.name() == "node-2" ? Status() : Rejection("not two");
           }));
  auto* score = Register(h.registry, std::make_unique<FakeScore>("S", [](const cache::NodeInfo&, int64_t& s) {
                           s = 1;
                           return Status();
                         }));
  Enable(h.profile.plugins.filter, {"OnlyTwo"});
  Enable(h.profile.plugins.score, {"S"});
  h.Build();
  ScheduleOutcome out = h.Schedule(*MakePod("p"));
  ASSERT_TRUE(std::holds_alternative<ScheduleResult>(out));
  const ScheduleResult& r = std::get<ScheduleResult>(out);
  EXPECT_EQ(r.suggested_host, "node-2");
  EXPECT_EQ(r.evaluated_nodes, 5);
  EXPECT_EQ(r.feasible_nodes, 1);
  EXPECT_EQ(score->calls.load(), 0);
}

TEST(SchedulePod, HighestWeightedScoreWins) {
  Harness h(8);
  Register(h.registry, std::make_unique<FakeScore>("Idx", [](const cache::NodeInfo& n, int64_t& s) {
             s = NodeIndex(n) * 10;
             return Status();
           }));
  Register(h.registry, std::make_unique<FakeScore>("Inverse", [](const cache::NodeInfo& n, int64_t& s) {
             s = 100 - NodeIndex(n) * 10;
             return Status();
           }));
  h.profile.plugins.score.enabled = {{"Idx", 1}, {"Inverse", 2}};
  h.Build();
  for (int i = 0; i < 5; ++i) {
    ScheduleOutcome out = h.Schedule(*MakePod("p"));
    ASSERT_TRUE(std::holds_alternative<ScheduleResult>(out));
    EXPECT_EQ(std::get<ScheduleResult>(out).suggested_host, "node-0");
    EXPECT_EQ(std::get<ScheduleResult>(out).feasible_nodes, 8);
  }
}

TEST(SchedulePod, TieBreakCoversAllTiedNodes) {
  Harness h(6);
  // node-1, node-3, node-5 tie at the top.
  Register(h.registry, std::make_unique<FakeScore>("Odd", [](const cache::NodeInfo& n, int64_t& s) {
             s = NodeIndex(n) % 2 == 1 ? 50 : 10;
             return Status();
           }));
  Enable(h.profile.plugins.score, {"Odd"});
  h.Build();
  std::map<std::string, int> picks;
  for (int i = 0; i < 600; ++i) ++picks[std::get<ScheduleResult>(h.Schedule(*MakePod("p"))).suggested_host];
  ASSERT_EQ(picks.size(), 3u);
  for (const auto& [node, n] : picks) {
    EXPECT_TRUE(node == "node-1" || node == "node-3" || node == "node-5") << node;
    EXPECT_GT(n, 120) << node;  // ~200 each
  }
}

TEST(SelectHost, SeededRngIsDeterministic) {
  cache::Snapshot snap = MakeSnapshot(10);
  std::vector<cache::NodeInfoPtr> nodes(snap.List().begin(), snap.List().end());
  std::vector<int64_t> scores(nodes.size(), 7);
  SchedulingAlgorithm a(SchedulingAlgorithmOptions{.seed = 1}), b(SchedulingAlgorithmOptions{.seed = 1});
  for (int i = 0; i < 20; ++i) EXPECT_EQ(a.SelectHost(scores), b.SelectHost(scores));
}

TEST(SchedulePod, NoScorePluginsStillPicksAmongFeasible) {
  Harness h(4);
  h.Build();
  std::set<std::string> picks;
  for (int i = 0; i < 100; ++i) picks.insert(std::get<ScheduleResult>(h.Schedule(*MakePod("p"))).suggested_host);
  EXPECT_EQ(picks.size(), 4u);
}

TEST(SchedulePod, ParallelFilterOnThousandNodes) {
  Harness h(1000);
  // Rejects every odd node; a parallel run must find exactly the even ones.
  Register(h.registry, std::make_unique<FuncFilter>("Even", [](const cache::NodeInfo& n) {
             return NodeIndex(n) % 2 == 0 ? Status() : Rejection("odd node");
           }));
  Enable(h.profile.plugins.filter, {"Even"});
  h.profile.percentage_of_nodes_to_score = 100;
  auto* score = Register(h.registry, std::make_unique<FakeScore>("Idx", [](const cache::NodeInfo& n, int64_t& s) {
                           s = NodeIndex(n) / 10;
                           return Status();
                         }));
  Enable(h.profile.plugins.score, {"Idx"});
  h.Build({.parallelism = 8});
  ScheduleOutcome out = h.Schedule(*MakePod("p"));
  ASSERT_TRUE(std::holds_alternative<ScheduleResult>(out));
  const ScheduleResult& r = std::get<ScheduleResult>(out);
  EXPECT_EQ(r.feasible_nodes, 500);
  EXPECT_EQ(r.evaluated_nodes, 1000);
  EXPECT_EQ(score->calls.load(), 500);
  // The best even nodes: 990..998 score 99.
  int idx = std::stoi(r.suggested_host.substr(5));
  EXPECT_EQ(idx % 2, 0);
  EXPECT_GE(idx, 990);
}

TEST(SchedulePod, ParallelFilterAllRejectedDiagnosesEveryNode) {
  Harness h(1000);
  Register(h.registry, std::make_unique<FuncFilter>("Split", [](const cache::NodeInfo& n) {
             return NodeIndex(n) < 300 ? Rejection("too small") : Status(Code::kUnschedulableAndUnresolvable, "wrong zone");
           }));
  Enable(h.profile.plugins.filter, {"Split"});
  h.Build({.parallelism = 8});
  ScheduleOutcome out = h.Schedule(*MakePod("p"));
  ASSERT_TRUE(std::holds_alternative<FitError>(out));
  const FitError& fe = std::get<FitError>(out);
  EXPECT_EQ(fe.diagnosis.size(), 1000u);
  EXPECT_EQ(fe.diagnosis.at("node-299").Message(), "too small");
  EXPECT_EQ(fe.diagnosis.at("node-300").code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(fe.Message(), "0/1000 nodes are available: 300 too small, 700 wrong zone.");
}

TEST(SchedulePod, StopsAfterEnoughFeasibleNodes) {
  Harness h(1000);
  auto* filter = Register(h.registry, std::make_unique<FakeFilter>("F", std::set<std::string>{}, Status()));
  Enable(h.profile.plugins.filter, {"F"});
  h.Build({.parallelism = 8});
  ScheduleOutcome out = h.Schedule(*MakePod("p"));
  const ScheduleResult& r = std::get<ScheduleResult>(out);
  // Adaptive: 1000 nodes -> 42% -> 420.
  EXPECT_EQ(r.feasible_nodes, 420);
  EXPECT_EQ(r.evaluated_nodes, 420);
  EXPECT_LT(filter->calls.load(), 1000);
  EXPECT_EQ(h.algo.next_start_node_index(), 420u);
}

TEST(SchedulePod, RoundRobinStartGivesEveryNodeATurn) {
  // Upstream TestFairEvaluationForNodes: 500 nodes, 230 (46%) evaluated per cycle.
  Harness h(500);
  Register(h.registry, std::make_unique<FakeFilter>("F", std::set<std::string>{}, Status()));
  Enable(h.profile.plugins.filter, {"F"});
  h.Build({.parallelism = 1});
  for (int i = 0; i < 5; ++i) {
    ScheduleResult r = std::get<ScheduleResult>(h.Schedule(*MakePod("p")));
    EXPECT_EQ(r.feasible_nodes, 230);
    EXPECT_EQ(h.algo.next_start_node_index(), static_cast<size_t>((i + 1) * 230 % 500));
  }
}

// The parallel pass cuts its chunks where a sequential walk from the same start would
// have stopped: after the numFeasibleNodesToFind-th feasible node, counting only the
// rejections before it, wherever the cut falls in a chunk.
TEST(SchedulePod, ParallelCutMatchesTheSequentialWalk) {
  for (int parallelism : {1, 2, 8}) {
    for (unsigned seed = 1; seed <= 20; ++seed) {
      std::mt19937 rng(seed);
      const int n = 150 + static_cast<int>(rng() % 900);
      const int reject_percent = static_cast<int>(rng() % 90);
      std::vector<bool> rejects(static_cast<size_t>(n));
      for (int i = 0; i < n; ++i) rejects[static_cast<size_t>(i)] = static_cast<int>(rng() % 100) < reject_percent;
      Harness h(n);
      Register(h.registry, std::make_unique<FuncFilter>("Some", [&rejects](const cache::NodeInfo& node) {
                 return rejects[static_cast<size_t>(NodeIndex(node))] ? Rejection("no") : Status();
               }));
      Enable(h.profile.plugins.filter, {"Some"});
      h.Build({.parallelism = parallelism});
      const size_t to_find = static_cast<size_t>(NumFeasibleNodesToFind(std::nullopt, n));
      size_t start = 0;
      for (int pod = 0; pod < 6; ++pod) {
        // The walk the parallel pass must reproduce.
        size_t feasible = 0, rejected = 0, visited = 0;
        for (; visited < static_cast<size_t>(n) && feasible < to_find; ++visited) {
          rejects[(start + visited) % static_cast<size_t>(n)] ? ++rejected : ++feasible;
        }
        ScheduleOutcome out = h.Schedule(*MakePod("p" + std::to_string(pod)));
        SCOPED_TRACE("parallelism " + std::to_string(parallelism) + " seed " + std::to_string(seed) + " pod " +
                     std::to_string(pod));
        if (feasible == 0) {
          ASSERT_TRUE(std::holds_alternative<FitError>(out));
          break;
        }
        ASSERT_TRUE(std::holds_alternative<ScheduleResult>(out));
        const ScheduleResult& r = std::get<ScheduleResult>(out);
        EXPECT_EQ(r.feasible_nodes, static_cast<int>(feasible));
        EXPECT_EQ(r.evaluated_nodes, static_cast<int>(feasible + rejected));
        start = (start + visited) % static_cast<size_t>(n);
        EXPECT_EQ(h.algo.next_start_node_index(), start);
      }
    }
  }
}

TEST(SchedulePod, FilterErrorIsReturned) {
  Harness h(200);
  Register(h.registry, std::make_unique<FakeFilter>("F", std::set<std::string>{"node-150"}, Status::Error("bad")));
  Enable(h.profile.plugins.filter, {"F"});
  h.profile.percentage_of_nodes_to_score = 100;
  h.Build();
  ScheduleOutcome out = h.Schedule(*MakePod("p"));
  ASSERT_TRUE(std::holds_alternative<Status>(out));
  EXPECT_EQ(std::get<Status>(out).Message(), "running \"F\" filter plugin: bad");
}

TEST(SchedulePod, NominatedNodeTriedFirst) {
  Harness h(50);
  auto* score = Register(h.registry, std::make_unique<FakeScore>("S", [](const cache::NodeInfo&, int64_t& s) {
                           s = 1;
                           return Status();
                         }));
  Enable(h.profile.plugins.score, {"S"});
  h.Build();
  auto pod = std::make_shared<api::Pod>(*MakePod("p"));
  pod->status.nominated_node_name = "node-17";
  ScheduleResult r = std::get<ScheduleResult>(h.Schedule(*pod));
  EXPECT_EQ(r.suggested_host, "node-17");
  EXPECT_EQ(r.evaluated_nodes, 1);
  EXPECT_EQ(score->calls.load(), 0);
}

// ---- explain: the summary behind /debug/pods ----

TEST(Explain, SummaryCountsEveryPluginsRejectionsAndNamesTheClosestNodes) {
  Harness h(4);
  h.algo = SchedulingAlgorithm(SchedulingAlgorithmOptions{.seed = 42, .explain = true});
  // node-0: taint only (closest); node-1: taint and cpu; node-2, node-3: cpu and memory.
  Register(h.registry, std::make_unique<FakeFilter>("Taints", std::set<std::string>{"node-0", "node-1"},
                                                    Rejection("node(s) had untolerated taint {k: v}")));
  Register(h.registry, std::make_unique<FuncFilter>("Fit", [](const cache::NodeInfo& n) {
             if (n.name() == "node-0") return Status();
             if (n.name() == "node-1") return Rejection("Insufficient cpu");
             return Status(Code::kUnschedulable, std::vector<std::string>{"Insufficient cpu", "Insufficient memory"});
           }));
  Enable(h.profile.plugins.filter, {"Taints", "Fit"});
  h.Build();
  ScheduleOutcome out = h.Schedule(*MakePod("p"));
  ASSERT_TRUE(std::holds_alternative<FitError>(out));
  const FitError& fe = std::get<FitError>(out);
  // The condition's message still counts only each node's first rejection.
  EXPECT_EQ(fe.Message(),
            "0/4 nodes are available: 2 Insufficient cpu, 2 Insufficient memory, 2 node(s) had untolerated taint "
            "{k: v}.");
  ASSERT_TRUE(fe.summary.has_value());
  const RejectionSummary& s = *fe.summary;
  EXPECT_EQ(s.considered_nodes, 4);
  ASSERT_EQ(s.plugins.size(), 2u);
  EXPECT_EQ(s.plugins[0].plugin, "Fit");  // most nodes first: Fit rejects 3, Taints 2
  EXPECT_EQ(s.plugins[0].nodes, 3);
  ASSERT_EQ(s.plugins[0].reasons.size(), 2u);
  EXPECT_EQ(s.plugins[0].reasons[0].reason, "Insufficient cpu");
  EXPECT_EQ(s.plugins[0].reasons[0].nodes, 3);
  EXPECT_THAT(s.plugins[0].reasons[0].sample_nodes, ElementsAre("node-1", "node-2", "node-3"));
  EXPECT_EQ(s.plugins[0].reasons[1].nodes, 2);
  EXPECT_EQ(s.plugins[1].plugin, "Taints");
  EXPECT_EQ(s.plugins[1].nodes, 2);
  EXPECT_FALSE(s.plugins[1].pre_filter);
  // Rejected by one plugin only: node-0 (one reason) before node-2 and node-3 (two).
  ASSERT_EQ(s.closest_nodes.size(), 3u);
  EXPECT_EQ(s.closest_nodes[0].node, "node-0");
  EXPECT_EQ(s.closest_nodes[0].plugin, "Taints");
  EXPECT_EQ(s.closest_nodes[1].node, "node-2");
  EXPECT_THAT(s.closest_nodes[1].reasons, ElementsAre("Insufficient cpu", "Insufficient memory"));
}

TEST(Explain, SamplesAreInSnapshotOrderWhereverThePassStarted) {
  Harness h(200);
  h.algo = SchedulingAlgorithm(SchedulingAlgorithmOptions{.seed = 42, .explain = true});
  bool reject_all = false;
  Register(h.registry, std::make_unique<FuncFilter>("Fit", [&reject_all](const cache::NodeInfo&) {
             return reject_all ? Rejection("Insufficient cpu") : Status();
           }));
  Enable(h.profile.plugins.filter, {"Fit"});
  h.Build(FrameworkOptions{.parallelism = 1});
  // A pod that fits stops after 100 feasible nodes: the next pass starts at node-100.
  ASSERT_TRUE(std::holds_alternative<ScheduleResult>(h.Schedule(*MakePod("first"))));
  ASSERT_EQ(h.algo.next_start_node_index(), 100u);
  reject_all = true;
  ScheduleOutcome out = h.Schedule(*MakePod("big"));
  ASSERT_TRUE(std::holds_alternative<FitError>(out));
  const RejectionSummary& s = *std::get<FitError>(out).summary;
  EXPECT_EQ(s.plugins[0].nodes, 200);
  // Pods with the same verdict name the same nodes, wherever their pass started.
  EXPECT_THAT(s.plugins[0].reasons[0].sample_nodes, ElementsAre("node-0", "node-1", "node-2", "node-3", "node-4"));
}

TEST(Explain, PreFilterRejectionIsSummarisedWithoutNodes) {
  Harness h(3);
  h.algo = SchedulingAlgorithm(SchedulingAlgorithmOptions{.seed = 42, .explain = true});
  Register(h.registry, std::make_unique<FakePreFilter>("PF", Status(Code::kUnschedulableAndUnresolvable, "no claim")));
  Enable(h.profile.plugins.pre_filter, {"PF"});
  h.Build();
  ScheduleOutcome out = h.Schedule(*MakePod("p"));
  const FitError& fe = std::get<FitError>(out);
  ASSERT_TRUE(fe.summary.has_value());
  ASSERT_EQ(fe.summary->plugins.size(), 1u);
  EXPECT_TRUE(fe.summary->plugins[0].pre_filter);
  EXPECT_EQ(fe.summary->plugins[0].nodes, 3);
  EXPECT_EQ(fe.summary->plugins[0].reasons[0].reason, "no claim");
  EXPECT_TRUE(fe.summary->plugins[0].reasons[0].sample_nodes.empty());
}

TEST(Explain, ScheduledPodGetsTheTopNodesWithEachPluginsWeightedScore) {
  Harness h(6);
  h.algo = SchedulingAlgorithm(SchedulingAlgorithmOptions{.seed = 42, .explain = true});
  Register(h.registry, std::make_unique<FakeScore>("Idx", [](const cache::NodeInfo& n, int64_t& s) {
             s = NodeIndex(n) * 10;
             return Status();
           }));
  Register(h.registry, std::make_unique<FakeScore>("Flat", [](const cache::NodeInfo&, int64_t& s) {
             s = 7;
             return Status();
           }));
  h.profile.plugins.score.enabled = {{"Idx", 2}, {"Flat", 1}};
  h.Build();
  ScheduleOutcome out = h.Schedule(*MakePod("p"));
  ASSERT_TRUE(std::holds_alternative<ScheduleResult>(out));
  const ScheduleResult& r = std::get<ScheduleResult>(out);
  EXPECT_EQ(r.suggested_host, "node-5");
  ASSERT_EQ(r.top_nodes.size(), 3u);
  EXPECT_EQ(r.top_nodes[0].node, "node-5");
  EXPECT_EQ(r.top_nodes[0].total, 107);
  EXPECT_EQ(r.top_nodes[1].node, "node-4");
  EXPECT_EQ(r.top_nodes[2].node, "node-3");
  ASSERT_EQ(r.top_nodes[0].plugins.size(), 2u);
  EXPECT_EQ(r.top_nodes[0].plugins[0].first, "Idx");
  EXPECT_EQ(r.top_nodes[0].plugins[0].second, 100);
  EXPECT_EQ(r.top_nodes[0].plugins[1].second, 7);
}

TEST(Explain, OffByDefault) {
  Harness h(3);
  Register(h.registry, std::make_unique<FakeFilter>("F", std::set<std::string>{"node-0", "node-1", "node-2"},
                                                    Rejection("no")));
  Enable(h.profile.plugins.filter, {"F"});
  h.Build();
  ScheduleOutcome out = h.Schedule(*MakePod("p"));
  EXPECT_FALSE(std::get<FitError>(out).summary.has_value());
}

// ---- extenders (upstream findNodesThatPassExtenders, prioritizeNodes) ----

// A harness with extenders: the framework hands them to the algorithm.
struct ExtenderHarness : Harness {
  std::vector<std::unique_ptr<FakeExtender>> extenders;
  explicit ExtenderHarness(int nodes) : Harness(nodes) {}
  FakeExtender& Add(std::string name) { return *extenders.emplace_back(std::make_unique<FakeExtender>(std::move(name))); }
  void BuildWithExtenders(bool explain = false) {
    FrameworkOptions o{.parallelism = 4};
    for (auto& e : extenders) o.extenders.push_back(e.get());
    algo = SchedulingAlgorithm(SchedulingAlgorithmOptions{.seed = 42, .explain = explain});
    Build(std::move(o));
  }
};

TEST(Extenders, FilterNarrowsAndTheFitErrorCountsTheirReasons) {
  ExtenderHarness h(4);
  Register(h.registry, std::make_unique<FakeFilter>("Taints", std::set<std::string>{"node-0"}, Rejection("tainted")));
  Enable(h.profile.plugins.filter, {"Taints"});
  FakeExtender& a = h.Add("http://a");
  a.filter = FakeExtender::Rejecting({"node-1"}, {"node-2"}, "no gpu");
  FakeExtender& b = h.Add("http://b");
  b.filter = FakeExtender::Rejecting({"node-3"});
  h.BuildWithExtenders();
  ScheduleOutcome out = h.Schedule(*MakePod("p"));
  ASSERT_TRUE(std::holds_alternative<FitError>(out));
  const FitError& fe = std::get<FitError>(out);
  EXPECT_EQ(fe.Message(), "0/4 nodes are available: 1 rejected by the extender, 1 tainted, 2 no gpu.");
  EXPECT_EQ(fe.diagnosis.at("node-2").code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(fe.diagnosis.at("node-1").code(), Code::kUnschedulable);
  // Extenders register no events: the pod is retried on any.
  EXPECT_THAT(fe.unschedulable_plugins, ElementsAre("Extender", "Taints"));
  // The second extender saw only what the first let through.
  EXPECT_EQ(a.filter_calls, 1);
  EXPECT_EQ(b.filter_calls, 1);
}

TEST(Extenders, FilterLeavesOneNode) {
  ExtenderHarness h(5);
  FakeExtender& e = h.Add("http://a");
  e.filter = FakeExtender::Rejecting({"node-0", "node-1", "node-2", "node-4"});
  e.prioritizer = true;
  h.BuildWithExtenders();
  ScheduleOutcome out = h.Schedule(*MakePod("p"));
  ASSERT_TRUE(std::holds_alternative<ScheduleResult>(out));
  EXPECT_EQ(std::get<ScheduleResult>(out).suggested_host, "node-3");
  EXPECT_EQ(std::get<ScheduleResult>(out).evaluated_nodes, 5);
  // One feasible node is not scored.
  EXPECT_EQ(e.prioritize_calls, 0);
}

TEST(Extenders, AnswersOutOfOrderAreMatchedByName) {
  ExtenderHarness h(5);
  FakeExtender& e = h.Add("http://a");
  e.filter = [](const api::Pod&, std::span<const cache::NodeInfoPtr>) -> StatusOr<ExtenderFilterResult> {
    ExtenderFilterResult r;
    r.passed = {"node-4", "node-1", "node-3"};
    return r;
  };
  e.prioritizer = true;
  e.weight = 1;
  e.scores = {{"node-3", 5}, {"node-1", 2}};
  h.BuildWithExtenders(/*explain=*/true);
  ScheduleOutcome out = h.Schedule(*MakePod("p"));
  ASSERT_TRUE(std::holds_alternative<ScheduleResult>(out));
  const ScheduleResult& r = std::get<ScheduleResult>(out);
  EXPECT_EQ(r.suggested_host, "node-3");
  EXPECT_EQ(r.feasible_nodes, 3);
  ASSERT_EQ(r.top_nodes.size(), 3u);
  EXPECT_EQ(r.top_nodes[1].node, "node-1");
  EXPECT_EQ(r.top_nodes[1].total, 20);
}

TEST(Extenders, ErrorsFailTheAttemptUnlessIgnorable) {
  ExtenderHarness h(3);
  FakeExtender& e = h.Add("http://a");
  e.filter = [](const api::Pod&, std::span<const cache::NodeInfoPtr>) -> StatusOr<ExtenderFilterResult> {
    return Unavailable("failed filter with extender at URL http://a/filter, code 500");
  };
  h.BuildWithExtenders();
  ScheduleOutcome out = h.Schedule(*MakePod("p"));
  ASSERT_TRUE(std::holds_alternative<Status>(out));
  EXPECT_EQ(std::get<Status>(out).code(), Code::kError);
  EXPECT_EQ(std::get<Status>(out).Message(), "failed filter with extender at URL http://a/filter, code 500");

  e.ignorable = true;
  FakeExtender& next = h.Add("http://b");
  next.filter = FakeExtender::Rejecting({"node-0", "node-1"});
  h.BuildWithExtenders();
  out = h.Schedule(*MakePod("p"));
  ASSERT_TRUE(std::holds_alternative<ScheduleResult>(out));
  EXPECT_EQ(std::get<ScheduleResult>(out).suggested_host, "node-2");
}

TEST(Extenders, NotInterestedMeansNotAsked) {
  ExtenderHarness h(3);
  FakeExtender& e = h.Add("http://a");
  e.filter = FakeExtender::Rejecting({"node-0", "node-1", "node-2"});
  e.interested_in = {"gpu-pod"};
  h.BuildWithExtenders();
  EXPECT_TRUE(std::holds_alternative<ScheduleResult>(h.Schedule(*MakePod("p"))));
  EXPECT_EQ(e.filter_calls, 0);
  EXPECT_TRUE(std::holds_alternative<FitError>(h.Schedule(*MakePod("gpu-pod"))));
}

TEST(Extenders, ScoresAreScaledWeightedAndAdded) {
  ExtenderHarness h(4);
  // The plugin prefers node-0 by 30 points over node-1.
  Register(h.registry, std::make_unique<FakeScore>("Idx", [](const cache::NodeInfo& n, int64_t& s) {
             s = 30 - NodeIndex(n) * 10;
             return Status();
           }));
  h.profile.plugins.score.enabled = {{"Idx", 1}};
  FakeExtender& e = h.Add("http://a");
  e.prioritizer = true;
  e.weight = 2;
  e.scores = {{"node-1", 2}, {"node-2", 1}, {"not-feasible", 10}};
  FakeExtender& broken = h.Add("http://b");
  broken.prioritizer = true;
  broken.weight = 5;
  broken.prioritize_error = Unavailable("down");
  h.BuildWithExtenders(/*explain=*/true);
  ScheduleOutcome out = h.Schedule(*MakePod("p"));
  ASSERT_TRUE(std::holds_alternative<ScheduleResult>(out));
  const ScheduleResult& r = std::get<ScheduleResult>(out);
  // node-1: 20 + 2 x 2 x (100 / 10) = 60; node-0: 30; node-2: 10 + 20 = 30.
  EXPECT_EQ(r.suggested_host, "node-1");
  ASSERT_FALSE(r.top_nodes.empty());
  EXPECT_EQ(r.top_nodes[0].total, 60);
  ASSERT_EQ(r.top_nodes[0].plugins.size(), 2u);
  EXPECT_EQ(r.top_nodes[0].plugins[1].first, "http://a");
  EXPECT_EQ(r.top_nodes[0].plugins[1].second, 40);
  EXPECT_EQ(broken.prioritize_calls, 1);
}

TEST(Extenders, WithoutScorePluginsOnlyTheExtenderDecides) {
  ExtenderHarness h(6);
  FakeExtender& e = h.Add("http://a");
  e.prioritizer = true;
  e.scores = {{"node-4", 1}};
  h.BuildWithExtenders();
  for (int i = 0; i < 5; ++i) {
    ScheduleOutcome out = h.Schedule(*MakePod("p"));
    ASSERT_TRUE(std::holds_alternative<ScheduleResult>(out));
    EXPECT_EQ(std::get<ScheduleResult>(out).suggested_host, "node-4");
  }
}

TEST(Extenders, NominatedNodeMustPassThemToo) {
  ExtenderHarness h(3);
  FakeExtender& e = h.Add("http://a");
  e.filter = FakeExtender::Rejecting({"node-1"});
  h.BuildWithExtenders();
  api::Pod pod = *MakePod("p");
  pod.status.nominated_node_name = "node-1";
  ScheduleOutcome out = h.Schedule(pod);
  ASSERT_TRUE(std::holds_alternative<ScheduleResult>(out));
  EXPECT_NE(std::get<ScheduleResult>(out).suggested_host, "node-1");
  // The nominated node alone first, then the full search.
  EXPECT_EQ(e.filter_calls, 2);
}

TEST(Extenders, ExplainListsTheirRejections) {
  ExtenderHarness h(3);
  FakeExtender& e = h.Add("http://a");
  e.filter = FakeExtender::Rejecting({"node-0", "node-1", "node-2"}, {}, "no license");
  h.BuildWithExtenders(/*explain=*/true);
  ScheduleOutcome out = h.Schedule(*MakePod("p"));
  const FitError& fe = std::get<FitError>(out);
  ASSERT_TRUE(fe.summary.has_value());
  ASSERT_EQ(fe.summary->plugins.size(), 1u);
  EXPECT_EQ(fe.summary->plugins[0].plugin, "Extender");
  EXPECT_EQ(fe.summary->plugins[0].nodes, 3);
  EXPECT_EQ(fe.summary->plugins[0].reasons[0].reason, "no license");
}

}  // namespace
}  // namespace ksched::framework::runtime
