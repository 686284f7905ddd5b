// DefaultPreemption, case by case after upstream's default_preemption_test.go
// (TestSelectNodesForPreemption, TestPickOneNodeForPreemption, TestPodEligibleToPreemptOthers,
// TestGetOffsetAndNumCandidates, TestPostFilter): the what-if runs go through a real
// framework with NodeResourcesFit, the evictions through a recording PodPreemptor.
#include "pkg/framework/plugins/defaultpreemption/default_preemption.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "pkg/framework/registry.h"
#include "pkg/framework/runtime/framework.h"
#include "tests/fakes/fake_extender.h"
#include "tests/fakes/builders.h"
#include "tests/fakes/fake_cluster_lister.h"

namespace ksched::framework::plugins::defaultpreemption {
namespace {

using testing::NodeBuilder;
using testing::PodBuilder;

// Evictions are recorded and answered when the test says so.
class RecordingPreemptor final : public PodPreemptor {
 public:
  struct Eviction {
    std::string victim, preemptor, node;
    std::function<void(ksched::Status)> done;
  };
  void PreemptVictim(const api::PodPtr& victim, const api::PodPtr& preemptor, std::string_view node,
                     std::function<void(ksched::Status)> done) override {
    evictions.push_back({victim->Key(), preemptor->Key(), std::string(node), std::move(done)});
  }
  void ClearNomination(const api::PodPtr& pod) override { cleared.push_back(pod->Key()); }
  void PreemptionFailed(const api::PodPtr& preemptor) override { failed.push_back(preemptor->Key()); }
  void ObservePreemptionAttempt() override { ++attempts; }
  void ObserveVictims(int count) override { victim_counts.push_back(count); }
  void AnswerAll(ksched::Status s = ksched::Status::OK()) {
    for (Eviction& e : evictions) {
      if (e.done) std::exchange(e.done, nullptr)(s);
    }
  }

  std::vector<Eviction> evictions;
  std::vector<std::string> cleared, failed;
  int attempts = 0;
  std::vector<int> victim_counts;
};

class MapNominator final : public PodNominator {
 public:
  std::vector<api::PodPtr> NominatedPodsForNode(std::string_view node) const override {
    auto it = by_node.find(std::string(node));
    return it == by_node.end() ? std::vector<api::PodPtr>{} : it->second;
  }
  std::map<std::string, std::vector<api::PodPtr>> by_node;
};

// A profile of NodeResourcesFit (PreFilter, Filter) and DefaultPreemption over fixed nodes and pods.
struct Env {
  Env(std::vector<api::NodePtr> nodes, std::vector<api::PodPtr> pods, config::DefaultPreemptionArgs args = {},
      std::vector<Extender*> extenders = {}) {
    snapshot = cache::Snapshot::FromObjects(nodes, pods);
    config::KubeSchedulerProfile profile;
    profile.scheduler_name = "default-scheduler";
    profile.plugins.queue_sort.enabled = {{"PrioritySort"}};
    profile.plugins.pre_filter.enabled = {{"NodeResourcesFit"}};
    profile.plugins.filter.enabled = {{"NodeResourcesFit"}};
    profile.plugins.post_filter.enabled = {{"DefaultPreemption"}};
    profile.plugins.bind.enabled = {{"DefaultBinder"}};
    profile.plugin_config.push_back({"DefaultPreemption", args});
    auto fw = runtime::NewFramework(InTreeRegistry(), profile,
                                    {.snapshot = &snapshot,
                                     .nominator = &nominator,
                                     .preemptor = &preemptor,
                                     .lister = &lister,
                                     .parallelism = 2,
                                     .extenders = std::move(extenders)});
    EXPECT_TRUE(fw.ok()) << fw.status().ToString();
    framework = std::move(*fw);
  }

  // The scheduling cycle up to PostFilter: PreFilter and Filter over every node.
  std::pair<PostFilterResult, Status> Run(const api::Pod& pod) {
    state = std::make_unique<CycleState>();
    EXPECT_TRUE(framework->RunPreFilterPlugins(*state, pod).second.IsSuccess());
    NodeToStatusMap filtered;
    for (const cache::NodeInfoPtr& n : snapshot.List()) {
      Status s = framework->RunFilterPluginsWithNominatedPods(*state, pod, *n);
      EXPECT_FALSE(s.IsSuccess()) << n->name() << " fits; preemption is for pods that fit nowhere";
      filtered.emplace(n->name(), s);
    }
    return framework->RunPostFilterPlugins(*state, pod, filtered);
  }

  // SelectVictimsOnNode on a copy of `node` after PreFilter.
  std::pair<Status, Victims> Select(const api::Pod& pod, std::string_view node) {
    state = std::make_unique<CycleState>();
    EXPECT_TRUE(framework->RunPreFilterPlugins(*state, pod).second.IsSuccess());
    cache::NodeInfo copy(*snapshot.Get(node));
    Victims v;
    Status s = Plugin().SelectVictimsOnNode(*state, pod, copy, v);
    return {s, v};
  }

  // A DefaultPreemption over the same handle as the framework's own instance.
  DefaultPreemption& Plugin() {
    if (plugin_ == nullptr) plugin_ = std::make_unique<DefaultPreemption>(config::DefaultPreemptionArgs{}, *framework, 1);
    return *plugin_;
  }

  cache::Snapshot snapshot;
  MapNominator nominator;
  RecordingPreemptor preemptor;
  testing::FakeClusterLister lister;
  std::unique_ptr<runtime::Framework> framework;
  std::unique_ptr<CycleState> state;
  std::unique_ptr<DefaultPreemption> plugin_;
};

api::NodePtr Node(std::string name, std::string cpu = "1", std::string pods = "110") {
  return NodeBuilder(std::move(name)).Capacity({{"cpu", cpu}, {"memory", "8Gi"}, {"pods", pods}}).Obj();
}

api::PodPtr Pod(std::string name, int32_t priority, std::string cpu, std::string node = "",
                std::string start = "2026-01-01T00:00:00Z") {
  return PodBuilder(name).UID("uid-" + name).Priority(priority).Req({{"cpu", cpu}}).Node(std::move(node))
      .StartTime(std::move(start)).Obj();
}

std::vector<std::string> Keys(const std::vector<api::PodPtr>& pods) {
  std::vector<std::string> out;
  for (const auto& p : pods) out.push_back(p->metadata.name);
  return out;
}

// ---- the four-node scenario of the issue: one victim, one nomination ----

TEST(DefaultPreemptionTest, FourFullNodesOneVictimOneNomination) {
  Env env({Node("n1"), Node("n2"), Node("n3"), Node("n4")},
          {Pod("low1", 0, "900m", "n1"), Pod("low2", 0, "900m", "n2"), Pod("low3", 0, "900m", "n3"),
           Pod("low4", 0, "900m", "n4")});
  auto high = Pod("high", 1000, "900m");
  auto [result, status] = env.Run(*high);
  ASSERT_TRUE(status.IsSuccess()) << status.Message();
  ASSERT_TRUE(result.nominated_node_name.has_value());
  ASSERT_EQ(env.preemptor.evictions.size(), 1u);
  const auto& e = env.preemptor.evictions[0];
  EXPECT_EQ(e.node, *result.nominated_node_name);
  EXPECT_EQ(e.victim, "default/low" + e.node.substr(1));
  EXPECT_EQ(e.preemptor, "default/high");
  EXPECT_EQ(env.preemptor.attempts, 1);
  EXPECT_EQ(env.preemptor.victim_counts, std::vector<int>{1});
  EXPECT_TRUE(result.awaiting_victims);  // the queue holds it until the victim is gone
}

// upstream callExtenders: an extender that preempts narrows the candidates and may
// change their victims; a non-ignorable one that fails, or names a node without victims,
// fails the preemption.
TEST(DefaultPreemptionTest, ExtendersNarrowTheCandidates) {
  testing::FakeExtender ext("http://preempt");
  framework::NodeVictims seen;
  ext.preempt = [&](const api::Pod&, const framework::NodeVictims& candidates) -> StatusOr<framework::NodeVictims> {
    seen = candidates;
    framework::NodeVictims keep;
    keep["n3"] = candidates.at("n3");
    return keep;
  };
  Env env({Node("n1"), Node("n2"), Node("n3")},
          {Pod("low1", 0, "900m", "n1"), Pod("low2", 0, "900m", "n2"), Pod("low3", 0, "900m", "n3")}, {}, {&ext});
  auto [result, status] = env.Run(*Pod("high", 1000, "900m"));
  ASSERT_TRUE(status.IsSuccess()) << status.Message();
  EXPECT_EQ(seen.size(), 3u);
  EXPECT_EQ(result.nominated_node_name, "n3");
  ASSERT_EQ(env.preemptor.evictions.size(), 1u);
  EXPECT_EQ(env.preemptor.evictions[0].victim, "default/low3");
}

TEST(DefaultPreemptionTest, ExtenderFailuresFailThePreemptionUnlessIgnorable) {
  testing::FakeExtender ext("http://preempt");
  ext.preempt = [](const api::Pod&, const framework::NodeVictims&) -> StatusOr<framework::NodeVictims> {
    return Unavailable("extender down");
  };
  {
    Env env({Node("n1")}, {Pod("low1", 0, "900m", "n1")}, {}, {&ext});
    auto [result, status] = env.Run(*Pod("high", 1000, "900m"));
    EXPECT_EQ(status.code(), Code::kError);
    EXPECT_NE(status.Message().find("extender down"), std::string::npos) << status.Message();
    EXPECT_TRUE(env.preemptor.evictions.empty());
  }
  ext.ignorable = true;
  {
    Env env({Node("n1")}, {Pod("low1", 0, "900m", "n1")}, {}, {&ext});
    auto [result, status] = env.Run(*Pod("high", 1000, "900m"));
    EXPECT_TRUE(status.IsSuccess()) << status.Message();
    EXPECT_EQ(result.nominated_node_name, "n1");
  }
  ext.ignorable = false;
  ext.preempt = [](const api::Pod&, const framework::NodeVictims&) -> StatusOr<framework::NodeVictims> {
    framework::NodeVictims none;
    none["n1"];
    return none;
  };
  Env env({Node("n1")}, {Pod("low1", 0, "900m", "n1")}, {}, {&ext});
  auto [result, status] = env.Run(*Pod("high", 1000, "900m"));
  EXPECT_EQ(status.code(), Code::kError);
  EXPECT_NE(status.Message().find("expected at least one victim pod on node \"n1\""), std::string::npos)
      << status.Message();
}

// ---- SelectVictimsOnNode ----

TEST(SelectVictimsOnNodeTest, LeastImportantGoFirstAndAsFewAsPossible) {
  // 3 cpu full of three 1-cpu pods of priorities 10, 5, 5 (the later-started 5 is less
  // important); the pod needs 2 cpu: the two priority-5 pods go, the 10 stays.
  Env env({Node("n1", "3")}, {Pod("p10", 10, "1", "n1"), Pod("p5-old", 5, "1", "n1", "2026-01-01T00:00:00Z"),
                              Pod("p5-new", 5, "1", "n1", "2026-01-02T00:00:00Z")});
  auto [s, v] = env.Select(*Pod("high", 100, "2"), "n1");
  ASSERT_TRUE(s.IsSuccess()) << s.Message();
  EXPECT_EQ(Keys(v.pods), (std::vector<std::string>{"p5-old", "p5-new"}));
  EXPECT_EQ(v.num_pdb_violations, 0);

  // With 1 cpu needed only the least important one goes.
  auto [s1, v1] = env.Select(*Pod("mid", 100, "1"), "n1");
  ASSERT_TRUE(s1.IsSuccess());
  EXPECT_EQ(Keys(v1.pods), std::vector<std::string>{"p5-new"});
}

TEST(SelectVictimsOnNodeTest, EqualOrHigherPriorityPodsAreNeverVictims) {
  Env env({Node("n1", "2")}, {Pod("same", 100, "1", "n1"), Pod("higher", 200, "1", "n1")});
  auto [s, v] = env.Select(*Pod("p", 100, "1"), "n1");
  EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(s.Message(), "No preemption victims found for incoming pod");
}

TEST(SelectVictimsOnNodeTest, NotFittingEvenWithoutVictimsIsTheFilterStatus) {
  Env env({Node("n1", "2")}, {Pod("low", 0, "1", "n1"), Pod("high", 200, "1", "n1")});
  auto [s, v] = env.Select(*Pod("p", 100, "2"), "n1");
  EXPECT_EQ(s.code(), Code::kUnschedulable);
  EXPECT_EQ(s.Message(), "Insufficient cpu");
}

// The node's nominated pods of equal or higher priority count in every Filter run of the
// dry run, and each run leaves the node as it found it: 4 CPU, four 900m victims, a
// 3000m preemptor. With a 100m pod nominated there, one victim comes back (900 + 100 +
// 3000 = 4000); were the nominated pod left behind by a run, it would not. With 200m
// none comes back; a lower-priority nominated pod does not count.
TEST(SelectVictimsOnNodeTest, NominatedPodsCountInEveryRunAndAreTakenOffAgain) {
  struct Case {
    std::string cpu;
    int32_t priority;
    size_t victims;
  };
  for (const Case& c : {Case{"100m", 10, 3}, Case{"200m", 10, 4}, Case{"200m", 5, 3}}) {
    Env env({Node("n1", "4")}, {Pod("low0", 0, "900m", "n1", "2026-01-01T00:00:03Z"),
                               Pod("low1", 0, "900m", "n1", "2026-01-01T00:00:02Z"),
                               Pod("low2", 0, "900m", "n1", "2026-01-01T00:00:01Z"),
                               Pod("low3", 0, "900m", "n1", "2026-01-01T00:00:00Z")});
    env.nominator.by_node["n1"] = {Pod("nominated", c.priority, c.cpu)};
    auto [status, victims] = env.Select(*Pod("high", 10, "3000m"), "n1");
    ASSERT_TRUE(status.IsSuccess()) << c.cpu << " " << c.priority << ": " << status.Message();
    EXPECT_EQ(victims.pods.size(), c.victims) << c.cpu << " at priority " << c.priority;
  }
}

TEST(SelectVictimsOnNodeTest, PdbProtectedPodIsReprievedFirst) {
  // Two equal 1-cpu pods; a budget with no disruption left covers "a": "b" goes instead.
  Env env({Node("n1", "2")}, {PodBuilder("a").UID("uid-a").Priority(1).Label("app", "a").Req({{"cpu", "1"}})
                                  .Node("n1").StartTime("2026-01-02T00:00:00Z").Obj(),
                              Pod("b", 1, "1", "n1", "2026-01-01T00:00:00Z")});
  auto pdb = std::make_shared<api::DisruptionBudget>();
  pdb->namespace_ = "default";
  pdb->name = "pdb-a";
  pdb->selector = *api::LabelSelectorMatcher::Parse(testing::LabelsSelector({{"app", "a"}}));
  pdb->disruptions_allowed = 0;
  env.lister.budgets.push_back(pdb);
  auto [s, v] = env.Select(*Pod("p", 100, "1"), "n1");
  ASSERT_TRUE(s.IsSuccess()) << s.Message();
  EXPECT_EQ(Keys(v.pods), std::vector<std::string>{"b"});
  EXPECT_EQ(v.num_pdb_violations, 0);

  // When both must go, the protected one counts as a violation.
  auto [s2, v2] = env.Select(*Pod("q", 100, "2"), "n1");
  ASSERT_TRUE(s2.IsSuccess());
  EXPECT_EQ(v2.pods.size(), 2u);
  EXPECT_EQ(v2.num_pdb_violations, 1);

  // A pod the server already counted in disruptedPods is not counted again.
  pdb->disrupted_pods.insert("a");
  auto [s3, v3] = env.Select(*Pod("r", 100, "2"), "n1");
  EXPECT_EQ(v3.num_pdb_violations, 0);
}

// ---- PickOneNodeForPreemption (upstream TestPickOneNodeForPreemption's criteria) ----

Candidate C(std::string node, std::vector<api::PodPtr> pods, int64_t pdb = 0) {
  return Candidate{std::move(node), Victims{std::move(pods), pdb}};
}

TEST(PickOneNodeForPreemptionTest, CriteriaInUpstreamOrder) {
  EXPECT_EQ(PickOneNodeForPreemption({}), "");
  // A candidate without victims wins outright.
  std::vector<Candidate> none = {C("a", {Pod("x", 1, "1")}), C("b", {})};
  EXPECT_EQ(PickOneNodeForPreemption(none), "b");
  // Fewest PDB violations beats everything else.
  std::vector<Candidate> pdb = {C("a", {Pod("x", 1, "1")}, 1), C("b", {Pod("y", 5, "1"), Pod("z", 5, "1")}, 0)};
  EXPECT_EQ(PickOneNodeForPreemption(pdb), "b");
  // Then the lowest highest-priority victim.
  std::vector<Candidate> highest = {C("a", {Pod("x", 10, "1")}), C("b", {Pod("y", 5, "1"), Pod("z", 5, "1")})};
  EXPECT_EQ(PickOneNodeForPreemption(highest), "b");
  // Then the smallest sum (shifted, so negative priorities do not favour more victims).
  std::vector<Candidate> sum = {C("a", {Pod("x", 5, "1"), Pod("y", 4, "1")}), C("b", {Pod("z", 5, "1"), Pod("w", 3, "1")})};
  EXPECT_EQ(PickOneNodeForPreemption(sum), "b");
  std::vector<Candidate> negative = {C("a", {Pod("x", -5, "1"), Pod("y", -5, "1")}), C("b", {Pod("z", -5, "1")})};
  EXPECT_EQ(PickOneNodeForPreemption(negative), "b");
  // Then the fewest victims is already implied by equal priorities; the latest start of
  // the highest-priority victims breaks the last tie.
  std::vector<Candidate> start = {C("a", {Pod("x", 5, "1", "", "2026-01-01T00:00:00Z")}),
                                  C("b", {Pod("y", 5, "1", "", "2026-01-03T00:00:00Z")}),
                                  C("c", {Pod("z", 5, "1", "", "2026-01-02T00:00:00Z")})};
  EXPECT_EQ(PickOneNodeForPreemption(start), "b");
  // Fully tied: the first.
  std::vector<Candidate> tied = {C("a", {Pod("x", 5, "1")}), C("b", {Pod("y", 5, "1")})};
  EXPECT_EQ(PickOneNodeForPreemption(tied), "a");
}

TEST(MoreImportantPodTest, PriorityThenEarlierStart) {
  EXPECT_TRUE(MoreImportantPod(*Pod("a", 2, "1"), *Pod("b", 1, "1")));
  EXPECT_TRUE(MoreImportantPod(*Pod("a", 1, "1", "", "2026-01-01T00:00:00Z"), *Pod("b", 1, "1", "", "2026-01-02T00:00:00Z")));
  // Not started yet counts as "now": less important than any started pod.
  EXPECT_TRUE(MoreImportantPod(*Pod("a", 1, "1", "", "2026-01-01T00:00:00Z"), *Pod("b", 1, "1", "", "")));
  EXPECT_FALSE(MoreImportantPod(*Pod("a", 1, "1", "", ""), *Pod("b", 1, "1", "", "")));
}

TEST(NumCandidatesTest, UpstreamCases) {
  Env env({Node("n1")}, {});
  struct Case {
    int32_t pct, abs, nodes, want;
  } cases[] = {{10, 100, 10, 10}, {10, 100, 1000, 100}, {40, 100, 1000, 400}, {10, 500, 1000, 500},
               {0, 5, 10, 5},     {100, 0, 7, 7},       {1, 0, 1000, 10}};
  for (const Case& c : cases) {
    DefaultPreemption p(config::DefaultPreemptionArgs{c.pct, c.abs}, *env.framework, 1);
    EXPECT_EQ(p.NumCandidates(c.nodes), c.want) << c.pct << "% " << c.abs << " of " << c.nodes;
  }
}

// ---- eligibility and the PostFilter outcomes ----

TEST(DefaultPreemptionTest, PreemptionPolicyNeverIsNotEligible) {
  Env env({Node("n1")}, {Pod("low", 0, "900m", "n1")});
  auto p = PodBuilder("high").UID("uid-high").Priority(100).Req({{"cpu", "900m"}}).PreemptionPolicy("Never").Obj();
  auto [result, status] = env.Run(*p);
  EXPECT_EQ(status.code(), Code::kUnschedulable);
  EXPECT_EQ(status.Message(), "preemption: not eligible due to preemptionPolicy=Never.");
  EXPECT_FALSE(result.nominated_node_name.has_value());
  EXPECT_TRUE(env.preemptor.evictions.empty());
  EXPECT_EQ(env.preemptor.attempts, 1);
  EXPECT_FALSE(result.awaiting_victims);
}

TEST(DefaultPreemptionTest, TerminatingVictimOnTheNominatedNodeMeansWait) {
  auto leaving = PodBuilder("low").UID("uid-low").Priority(0).Req({{"cpu", "900m"}}).Node("n1").Terminating().Obj();
  Env env({Node("n1"), Node("n2")}, {leaving, Pod("low2", 0, "900m", "n2")});
  auto p = PodBuilder("high").UID("uid-high").Priority(100).Req({{"cpu", "900m"}}).NominatedNodeName("n1").Obj();
  auto [result, status] = env.Run(*p);
  EXPECT_EQ(status.Message(), "preemption: not eligible due to a terminating pod on the nominated node.");
  EXPECT_TRUE(env.preemptor.evictions.empty());
  EXPECT_FALSE(result.nominated_node_name.has_value());
  EXPECT_TRUE(result.awaiting_victims);
}

TEST(DefaultPreemptionTest, NoLowerPriorityPodAnywhereClearsTheNomination) {
  Env env({Node("n1"), Node("n2")}, {Pod("a", 100, "900m", "n1"), Pod("b", 100, "900m", "n2")});
  auto [result, status] = env.Run(*Pod("p", 100, "900m"));
  EXPECT_EQ(status.code(), Code::kUnschedulable);
  EXPECT_EQ(status.Message(), "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.");
  ASSERT_TRUE(result.nominated_node_name.has_value());
  EXPECT_EQ(*result.nominated_node_name, "");
  EXPECT_FALSE(result.awaiting_victims);
}

TEST(DefaultPreemptionTest, UnresolvableNodesAreNotHelped) {
  // Too big for any node even when empty: NodeResourcesFit rejects it with "Insufficient cpu"
  // (Unschedulable), so the nodes are tried and none fits.
  Env env({Node("n1"), Node("n2")}, {Pod("a", 0, "900m", "n1")});
  auto [result, status] = env.Run(*Pod("p", 100, "4"));
  EXPECT_EQ(status.Message(), "preemption: 0/2 nodes are available: 1 Insufficient cpu, 1 No preemption victims "
                              "found for incoming pod.");
  // Every node ruled out for good: nothing to try.
  Env env2({Node("n1")}, {Pod("a", 0, "900m", "n1")});
  auto state = std::make_unique<CycleState>();
  ASSERT_TRUE(env2.framework->RunPreFilterPlugins(*state, *Pod("p", 100, "900m")).second.IsSuccess());
  NodeToStatusMap filtered{{"n1", Status(Code::kUnschedulableAndUnresolvable, "node(s) were unschedulable")}};
  auto [r2, s2] = env2.framework->RunPostFilterPlugins(*state, *Pod("p", 100, "900m"), filtered);
  EXPECT_EQ(s2.Message(), "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.");
  EXPECT_TRUE(env2.preemptor.evictions.empty());
}

TEST(DefaultPreemptionTest, WaitsForItsEvictionsAndGivesUpOnFailure) {
  Env env({Node("n1")}, {Pod("low", 0, "900m", "n1")});
  auto high = Pod("high", 100, "900m");
  auto [r1, s1] = env.Run(*high);
  ASSERT_TRUE(s1.IsSuccess());
  ASSERT_EQ(env.preemptor.evictions.size(), 1u);
  // While the DELETE is unanswered the pod may not preempt again.
  auto [r2, s2] = env.Run(*high);
  EXPECT_EQ(s2.Message(), "preemption: waiting for the preemption for this pod to be finished");
  EXPECT_TRUE(r2.awaiting_victims);
  EXPECT_EQ(env.preemptor.evictions.size(), 1u);
  // A failed eviction gives the nomination up and retries the pod.
  env.preemptor.AnswerAll(Unavailable("connection refused"));
  EXPECT_EQ(env.preemptor.failed, std::vector<std::string>{"default/high"});
  // Then it may preempt again.
  auto [r3, s3] = env.Run(*high);
  EXPECT_TRUE(s3.IsSuccess());
  EXPECT_EQ(env.preemptor.evictions.size(), 2u);
  env.preemptor.AnswerAll();
  EXPECT_EQ(env.preemptor.failed.size(), 1u);
}

// Answered evictions are not enough: until the snapshot shows the victims leaving (the
// watch runs behind our own DELETEs), a new attempt would see them in place and preempt
// again.
TEST(DefaultPreemptionTest, WaitsUntilTheSnapshotShowsItsVictimsLeaving) {
  Env env({Node("n1")}, {Pod("low", 0, "900m", "n1")});
  auto high = PodBuilder("high").UID("uid-high").Priority(100).Req({{"cpu", "900m"}}).NominatedNodeName("n1").Obj();
  auto [r1, s1] = env.Run(*high);
  ASSERT_TRUE(s1.IsSuccess()) << s1.Message();
  env.preemptor.AnswerAll();
  EXPECT_TRUE(env.preemptor.failed.empty());
  auto [r2, s2] = env.Run(*high);
  EXPECT_EQ(s2.Message(), "preemption: waiting for the preemption for this pod to be finished");
  EXPECT_TRUE(r2.awaiting_victims);
  EXPECT_EQ(env.preemptor.evictions.size(), 1u);
  // The watch catches up: the victim is terminating.
  env.snapshot = cache::Snapshot::FromObjects(
      {Node("n1")}, {PodBuilder("low").UID("uid-low").Priority(0).Req({{"cpu", "900m"}}).Node("n1").Terminating().Obj()});
  auto [r3, s3] = env.Run(*high);
  EXPECT_EQ(s3.Message(), "preemption: not eligible due to a terminating pod on the nominated node.");
  EXPECT_TRUE(r3.awaiting_victims);
  EXPECT_EQ(env.preemptor.evictions.size(), 1u);
}

// Many preemptions in flight (more than a sweep's threshold): each preemptor waits until
// its own victims are seen leaving, and no longer once they are, whichever preemptor
// asks first.
TEST(DefaultPreemptionTest, ManyPreemptorsEachWaitForTheirOwnVictims) {
  std::vector<api::NodePtr> nodes;
  std::vector<api::PodPtr> lows, highs;
  for (int i = 0; i < 80; ++i) {
    std::string n = "n" + std::to_string(i);
    nodes.push_back(Node(n));
    lows.push_back(Pod("low" + std::to_string(i), 0, "900m", n));
    highs.push_back(Pod("high" + std::to_string(i), 100, "900m"));
  }
  Env env(nodes, lows);
  auto post_filter = [&](const api::Pod& pod) {
    CycleState state;
    EXPECT_TRUE(env.framework->RunPreFilterPlugins(state, pod).second.IsSuccess());
    NodeToStatusMap filtered;
    for (const cache::NodeInfoPtr& n : env.snapshot.List())
      filtered.emplace(n->name(), env.framework->RunFilterPluginsWithNominatedPods(state, pod, *n));
    PostFilterResult result;
    return env.Plugin().PostFilter(state, pod, filtered, result);
  };
  for (const api::PodPtr& high : highs) ASSERT_TRUE(post_filter(*high).IsSuccess());
  ASSERT_EQ(env.preemptor.evictions.size(), highs.size());
  for (const api::PodPtr& high : highs) EXPECT_TRUE(env.Plugin().IsPreempting(*high)) << high->Key();
  env.preemptor.AnswerAll();
  // Answered, but the snapshot still shows every victim in place.
  for (const api::PodPtr& high : highs) EXPECT_TRUE(env.Plugin().IsPreempting(*high)) << high->Key();
  // The victims of the first half leave.
  std::vector<api::PodPtr> staying(lows.begin() + 40, lows.end());
  std::set<std::string> left_nodes;
  for (int i = 0; i < 40; ++i) left_nodes.insert("n" + std::to_string(i));
  env.snapshot = cache::Snapshot::FromObjects(nodes, staying);
  for (const auto& e : env.preemptor.evictions) {
    const api::PodPtr& high = *std::find_if(highs.begin(), highs.end(), [&](const api::PodPtr& p) {
      return p->Key() == e.preemptor;
    });
    EXPECT_EQ(env.Plugin().IsPreempting(*high), !left_nodes.contains(e.node)) << e.preemptor << " on " << e.node;
  }
}

TEST(DefaultPreemptionTest, LowerPriorityNominatedPodsLoseTheirNomination) {
  Env env({Node("n1")}, {Pod("low", 0, "900m", "n1")});
  env.nominator.by_node["n1"] = {Pod("nominated-low", 50, "100m"), Pod("nominated-high", 500, "100m")};
  // nominated-high (priority 500, 100m) counts on n1 and still fits next to the pod once
  // the victim is gone; nominated-low (50) is below the pod and loses its nomination.
  auto [result, status] = env.Run(*Pod("high", 100, "800m"));
  ASSERT_TRUE(status.IsSuccess()) << status.Message();
  EXPECT_EQ(env.preemptor.cleared, std::vector<std::string>{"default/nominated-low"});
}

TEST(DefaultPreemptionTest, CandidatesAreCappedButAllNodesAreConsidered) {
  // 200 nodes, each with one low pod; candidates capped at max(10%, 100) = 100, and the
  // choice is still one of the nodes with the least important victim.
  std::vector<api::NodePtr> nodes;
  std::vector<api::PodPtr> pods;
  for (int i = 0; i < 200; ++i) {
    std::string n = "n" + std::to_string(i);
    nodes.push_back(Node(n));
    pods.push_back(Pod("low" + std::to_string(i), i == 150 ? 1 : 2, "900m", n));
  }
  Env env(nodes, pods);
  auto [result, status] = env.Run(*Pod("high", 100, "900m"));
  ASSERT_TRUE(status.IsSuccess());
  ASSERT_EQ(env.preemptor.evictions.size(), 1u);
  // Either the walk reached n150 (priority 1 wins) or it did not; never more than one victim.
  const std::string& victim = env.preemptor.evictions[0].victim;
  EXPECT_EQ(victim, "default/low" + result.nominated_node_name->substr(1));
}

}  // namespace
}  // namespace ksched::framework::plugins::defaultpreemption
