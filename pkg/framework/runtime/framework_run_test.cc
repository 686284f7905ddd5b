// The Framework's extension-point runs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <thread>

#include "pkg/framework/runtime/framework.h"
#include "pkg/framework/runtime/runtime_test_util.h"

namespace ksched::framework::runtime {
namespace {

using namespace testing;  // NOLINT: the fakes
using ::testing::ElementsAre;

std::unique_ptr<Framework> Build(const Registry& registry, const config::KubeSchedulerProfile& profile,
                                 FrameworkOptions options = {.parallelism = 2}) {
  auto fw = NewFramework(registry, profile, std::move(options));
  EXPECT_TRUE(fw.ok()) << fw.status().ToString();
  return fw.ok() ? std::move(*fw) : nullptr;
}

TEST(RunFilterPlugins, FirstRejectingPluginInOrderWins) {
  Registry registry = BaseRegistry();
  Register(registry, std::make_unique<FakeFilter>("A", std::set<std::string>{"node-1"},
                                                  Status(Code::kUnschedulable, "A says no")));
  Register(registry, std::make_unique<FakeFilter>("B", std::set<std::string>{"node-1", "node-2"},
                                                  Status(Code::kUnschedulableAndUnresolvable, "B says no")));
  config::KubeSchedulerProfile profile = BaseProfile();
  Enable(profile.plugins.filter, {"A", "B"});
  auto fw = Build(registry, profile);
  cache::Snapshot snap = MakeSnapshot(3);
  CycleState state;
  auto pod = MakePod("p");

  Status s1 = fw->RunFilterPlugins(state, *pod, *snap.Get("node-1"));
  EXPECT_EQ(s1.code(), Code::kUnschedulable);
  EXPECT_EQ(s1.plugin(), "A");
  EXPECT_EQ(s1.Message(), "A says no");
  Status s2 = fw->RunFilterPlugins(state, *pod, *snap.Get("node-2"));
  EXPECT_EQ(s2.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(s2.plugin(), "B");
  EXPECT_TRUE(fw->RunFilterPlugins(state, *pod, *snap.Get("node-0")).IsSuccess());
}

TEST(RunFilterPlugins, NonRejectionIsAnError) {
  Registry registry = BaseRegistry();
  Register(registry, std::make_unique<FakeFilter>("A", std::set<std::string>{"node-0"}, Status::Error("boom")));
  config::KubeSchedulerProfile profile = BaseProfile();
  Enable(profile.plugins.filter, {"A"});
  auto fw = Build(registry, profile);
  cache::Snapshot snap = MakeSnapshot(1);
  CycleState state;
  Status s = fw->RunFilterPlugins(state, *MakePod("p"), *snap.Get("node-0"));
  EXPECT_EQ(s.code(), Code::kError);
  EXPECT_EQ(s.Message(), "running \"A\" filter plugin: boom");
}

TEST(RunPreFilterPlugins, SkipDisablesFilterAndRejectionNamesPlugin) {
  Registry registry = BaseRegistry();
  auto* skip = Register(registry, std::make_unique<FakePreFilter>("Skipper", Status(Code::kSkip)));
  Register(registry, std::make_unique<FakePreFilter>("Ok", Status()));
  config::KubeSchedulerProfile profile = BaseProfile();
  Enable(profile.plugins.pre_filter, {"Skipper", "Ok"});
  Enable(profile.plugins.filter, {"Skipper"});
  auto fw = Build(registry, profile);
  cache::Snapshot snap = MakeSnapshot(1);
  CycleState state;
  auto pod = MakePod("p");
  auto [result, status] = fw->RunPreFilterPlugins(state, *pod);
  EXPECT_TRUE(status.IsSuccess());
  EXPECT_TRUE(result.AllNodes());
  EXPECT_THAT(state.skip_filter_plugins, ElementsAre("Skipper"));
  EXPECT_TRUE(fw->RunFilterPlugins(state, *pod, *snap.Get("node-0")).IsSuccess());
  EXPECT_EQ(skip->filter_calls.load(), 0);
}

TEST(RunPreFilterPlugins, RejectionAndError) {
  Registry registry = BaseRegistry();
  Register(registry, std::make_unique<FakePreFilter>("Rej", Status(Code::kUnschedulableAndUnresolvable, "nope")));
  Register(registry, std::make_unique<FakePreFilter>("Err", Status::Error("broken")));
  {
    config::KubeSchedulerProfile profile = BaseProfile();
    Enable(profile.plugins.pre_filter, {"Rej", "Err"});
    auto fw = Build(registry, profile);
    CycleState state;
    auto [result, status] = fw->RunPreFilterPlugins(state, *MakePod("p"));
    EXPECT_EQ(status.code(), Code::kUnschedulableAndUnresolvable);
    EXPECT_EQ(status.plugin(), "Rej");
    EXPECT_EQ(status.Message(), "nope");
  }
  Registry registry2 = BaseRegistry();
  Register(registry2, std::make_unique<FakePreFilter>("Err", Status::Error("broken")));
  config::KubeSchedulerProfile profile = BaseProfile();
  Enable(profile.plugins.pre_filter, {"Err"});
  auto fw = Build(registry2, profile);
  CycleState state;
  auto [result, status] = fw->RunPreFilterPlugins(state, *MakePod("p"));
  EXPECT_EQ(status.code(), Code::kError);
  EXPECT_EQ(status.Message(), "running PreFilter plugin \"Err\": broken");
  EXPECT_EQ(status.plugin(), "Err");
}

PreFilterResult Names(std::set<std::string, std::less<>> names) {
  PreFilterResult r;
  r.node_names = std::move(names);
  return r;
}

TEST(RunPreFilterPlugins, ResultsIntersect) {
  Registry registry = BaseRegistry();
  Register(registry, std::make_unique<FakePreFilter>("A", Status(), Names({"n1", "n2"})));
  Register(registry, std::make_unique<FakePreFilter>("B", Status(), Names({"n2", "n3"})));
  Register(registry, std::make_unique<FakePreFilter>("C", Status(), Names({"n3"})));
  config::KubeSchedulerProfile profile = BaseProfile();
  Enable(profile.plugins.pre_filter, {"A", "B"});
  auto fw = Build(registry, profile);
  CycleState state;
  auto [result, status] = fw->RunPreFilterPlugins(state, *MakePod("p"));
  ASSERT_TRUE(status.IsSuccess());
  ASSERT_FALSE(result.AllNodes());
  EXPECT_THAT(*result.node_names, ElementsAre("n2"));
}

TEST(RunPreFilterPlugins, EmptyIntersectionIsUnresolvable) {
  Registry registry = BaseRegistry();
  Register(registry, std::make_unique<FakePreFilter>("A", Status(), Names({"n1"})));
  Register(registry, std::make_unique<FakePreFilter>("B", Status(), Names({"n2"})));
  Register(registry, std::make_unique<FakePreFilter>("C", Status(), Names({})));
  {
    config::KubeSchedulerProfile profile = BaseProfile();
    Enable(profile.plugins.pre_filter, {"A", "B"});
    auto fw = Build(registry, profile);
    CycleState state;
    auto [result, status] = fw->RunPreFilterPlugins(state, *MakePod("p"));
    EXPECT_EQ(status.code(), Code::kUnschedulableAndUnresolvable);
    EXPECT_EQ(status.Message(), "node(s) didn't satisfy plugin(s) [A B] simultaneously");
  }
  config::KubeSchedulerProfile profile = BaseProfile();
  Enable(profile.plugins.pre_filter, {"C"});
  Registry r2 = BaseRegistry();
  Register(r2, std::make_unique<FakePreFilter>("C", Status(), Names({})));
  auto fw = Build(r2, profile);
  CycleState state;
  auto [result, status] = fw->RunPreFilterPlugins(state, *MakePod("p"));
  EXPECT_EQ(status.Message(), "node(s) didn't satisfy plugin C");
}

TEST(PreFilterResult, Merge) {
  PreFilterResult all;
  EXPECT_TRUE(all.Merge(all).AllNodes());
  EXPECT_THAT(*all.Merge(Names({"a"})).node_names, ElementsAre("a"));
  EXPECT_THAT(*Names({"a", "b"}).Merge(all).node_names, ElementsAre("a", "b"));
  EXPECT_THAT(*Names({"a", "b"}).Merge(Names({"b", "c"})).node_names, ElementsAre("b"));
}

// Nominated pods: a filter that allows at most one pod on a node.
class FakeNominator : public PodNominator {
 public:
  std::vector<api::PodPtr> NominatedPodsForNode(std::string_view node) const override {
    return node == "node-0" ? pods : std::vector<api::PodPtr>{};
  }
  std::vector<api::PodPtr> pods;
};

// A framework whose one Filter plugin, AtMostOne, rejects a node that holds any pod;
// its nominations are `nominator`'s.
std::unique_ptr<Framework> AtMostOneFramework(const FakeNominator& nominator) {
  Registry registry = BaseRegistry();
  Register(registry, std::make_unique<FuncFilter>("AtMostOne", [](const cache::NodeInfo& n) {
             return n.pods().size() >= 1 ? Status(Code::kUnschedulable, "full") : Status();
           }));
  config::KubeSchedulerProfile profile = BaseProfile();
  Enable(profile.plugins.filter, {"AtMostOne"});
  return Build(registry, profile, {.nominator = &nominator, .parallelism = 1});
}

TEST(RunFilterPluginsWithNominatedPods, HigherOrEqualPriorityNominatedPodsCount) {
  FakeNominator nominator;
  auto fw = AtMostOneFramework(nominator);
  cache::Snapshot snap = MakeSnapshot(1);
  CycleState state;
  auto pod = MakePod("p", 5);

  EXPECT_TRUE(fw->RunFilterPluginsWithNominatedPods(state, *pod, *snap.Get("node-0")).IsSuccess());
  nominator.pods = {MakePod("low", 4)};
  EXPECT_TRUE(fw->RunFilterPluginsWithNominatedPods(state, *pod, *snap.Get("node-0")).IsSuccess());
  nominator.pods = {MakePod("equal", 5)};
  Status s = fw->RunFilterPluginsWithNominatedPods(state, *pod, *snap.Get("node-0"));
  EXPECT_EQ(s.code(), Code::kUnschedulable);
  EXPECT_EQ(s.plugin(), "AtMostOne");
  // The pod itself being nominated there does not count against it.
  nominator.pods = {pod};
  EXPECT_TRUE(fw->RunFilterPluginsWithNominatedPods(state, *pod, *snap.Get("node-0")).IsSuccess());
  // Without a nominator nothing changes.
  EXPECT_EQ(snap.Get("node-0")->pods().size(), 0u);
}

// Preemption looks the nominated pods up once per node (NominatedPodsToHonor: equal or
// higher priority, not the pod itself) and filters the node many times with that list
// (RunFilterPluginsHonoring), whatever the nominator says meanwhile.
TEST(RunFilterPluginsHonoring, TheGivenListDecides) {
  FakeNominator nominator;
  auto fw = AtMostOneFramework(nominator);
  cache::Snapshot snap = MakeSnapshot(1);
  CycleState state;
  auto pod = MakePod("p", 5);
  nominator.pods = {MakePod("low", 4), MakePod("equal", 5), pod, MakePod("high", 6)};
  std::vector<api::PodPtr> honored = fw->NominatedPodsToHonor(*pod, "node-0");
  ASSERT_EQ(honored.size(), 2u);
  EXPECT_EQ(honored[0]->metadata.name, "equal");
  EXPECT_EQ(honored[1]->metadata.name, "high");
  EXPECT_TRUE(fw->NominatedPodsToHonor(*pod, "node-1").empty());

  // On a copy of the node, which it leaves as it found it.
  cache::NodeInfo copy = *snap.Get("node-0");
  nominator.pods.clear();
  EXPECT_EQ(fw->RunFilterPluginsHonoring(state, *pod, copy, honored).code(), Code::kUnschedulable);
  EXPECT_TRUE(copy.pods().empty());
  EXPECT_EQ(copy.requested().milli_cpu, 0);
  nominator.pods = {MakePod("equal", 5)};
  EXPECT_TRUE(fw->RunFilterPluginsHonoring(state, *pod, copy, {}).IsSuccess());
}

TEST(RunFilterPluginsWithNominatedPods, SecondPassWithoutNominatedPods) {
  // Passes only when a pod is on the node: pass 1 (with the nominated pod) succeeds,
  // pass 2 (without it) fails, so the node is rejected.
  Registry registry = BaseRegistry();
  Register(registry, std::make_unique<FuncFilter>("NeedsCompany", [](const cache::NodeInfo& n) {
             return n.pods().empty() ? Status(Code::kUnschedulable, "lonely") : Status();
           }));
  config::KubeSchedulerProfile profile = BaseProfile();
  Enable(profile.plugins.filter, {"NeedsCompany"});
  FakeNominator nominator;
  nominator.pods = {MakePod("friend", 10)};
  auto fw = Build(registry, profile, {.nominator = &nominator, .parallelism = 1});
  cache::Snapshot snap = MakeSnapshot(1);
  CycleState state;
  Status s = fw->RunFilterPluginsWithNominatedPods(state, *MakePod("p", 1), *snap.Get("node-0"));
  EXPECT_EQ(s.Message(), "lonely");
}

// A PreFilter plugin with AddPod/RemovePod extensions that logs its calls; `pre_filter`
// is what PreFilter returns (kSkip: the framework skips its extensions too), `extension`
// what AddPod/RemovePod return.
class FakePreFilterWithExtensions : public NamedPlugin, public PreFilterPlugin, public PreFilterExtensions {
 public:
  FakePreFilterWithExtensions(std::string name, CallLog* log, Status pre_filter = Status(), Status extension = Status())
      : NamedPlugin(std::move(name)), log_(log), pre_filter_(std::move(pre_filter)), extension_(std::move(extension)) {}
  Status PreFilter(CycleState&, const api::Pod&, PreFilterResult&) override { return pre_filter_; }
  const PreFilterExtensions* Extensions() const override { return this; }
  Status AddPod(CycleState&, const api::Pod&, const cache::PodEntry& pod, const cache::NodeInfo& node) const override {
    log_->Add("AddPod:" + std::string(Name()) + ":" + pod.pod->metadata.name + "@" + node.name());
    return extension_;
  }
  Status RemovePod(CycleState&, const api::Pod&, const cache::PodEntry& pod,
                   const cache::NodeInfo& node) const override {
    log_->Add("RemovePod:" + std::string(Name()) + ":" + pod.pod->metadata.name + "@" + node.name());
    return extension_;
  }

 private:
  CallLog* log_;
  Status pre_filter_;
  Status extension_;
};

// Preemption removes each victim from the PreFilter state through RemovePod (upstream
// framework.go, RunPreFilterExtensionRemovePod, called from SelectVictimsOnNode): every
// plugin with extensions runs, in order; plugins without extensions and plugins whose
// PreFilter returned Skip are left out.
TEST(RunPreFilterExtensionRemovePod, RunsEachExtensionInOrderExceptSkipped) {
  CallLog log;
  Registry registry = BaseRegistry();
  Register(registry, std::make_unique<FakePreFilterWithExtensions>("A", &log));
  Register(registry, std::make_unique<FakePreFilter>("NoExtensions", Status()));
  Register(registry, std::make_unique<FakePreFilterWithExtensions>("Skipped", &log, Status(Code::kSkip)));
  Register(registry, std::make_unique<FakePreFilterWithExtensions>("C", &log));
  config::KubeSchedulerProfile profile = BaseProfile();
  Enable(profile.plugins.pre_filter, {"A", "NoExtensions", "Skipped", "C"});
  auto fw = Build(registry, profile);
  cache::Snapshot snap = MakeSnapshot(1);
  CycleState state;
  auto pod = MakePod("p");
  ASSERT_TRUE(fw->RunPreFilterPlugins(state, *pod).second.IsSuccess());
  ASSERT_THAT(state.skip_filter_plugins, ElementsAre("Skipped"));

  cache::PodEntry victim{.pod = MakePod("victim", 0, "node-0")};
  Status s = fw->RunPreFilterExtensionRemovePod(state, *pod, victim, *snap.Get("node-0"));
  EXPECT_TRUE(s.IsSuccess()) << s.ToString();
  EXPECT_THAT(log.entries(), ElementsAre("RemovePod:A:victim@node-0", "RemovePod:C:victim@node-0"));
}

// pre_filter_extensions_active says whether what-if runs must clone the state: only when
// a plugin with extensions was not skipped. The nominated pods' pass then runs AddPod on
// its clone, never on the cycle's own state.
TEST(RunFilterPluginsWithNominatedPods, AddPodExtensionsOnlyWhenActive) {
  for (bool skipped : {true, false}) {
    CallLog log;
    Registry registry = BaseRegistry();
    Register(registry, std::make_unique<FakePreFilterWithExtensions>("Ext", &log,
                                                                     skipped ? Status(Code::kSkip) : Status()));
    config::KubeSchedulerProfile profile = BaseProfile();
    Enable(profile.plugins.pre_filter, {"Ext"});
    FakeNominator nominator;
    nominator.pods = {MakePod("other", 10)};
    auto fw = Build(registry, profile, {.nominator = &nominator, .parallelism = 1});
    cache::Snapshot snap = MakeSnapshot(1);
    CycleState state;
    EXPECT_TRUE(state.pre_filter_extensions_active);  // unknown before PreFilter
    auto pod = MakePod("p", 1);
    ASSERT_TRUE(fw->RunPreFilterPlugins(state, *pod).second.IsSuccess());
    EXPECT_EQ(state.pre_filter_extensions_active, !skipped);
    EXPECT_EQ(state.Clone()->pre_filter_extensions_active, !skipped);
    EXPECT_EQ(state.Clone()->pre_filter_extension_mask, state.pre_filter_extension_mask);
    EXPECT_EQ(state.pre_filter_extension_mask, skipped ? 0u : 1u);
    EXPECT_TRUE(fw->RunFilterPluginsWithNominatedPods(state, *pod, *snap.Get("node-0")).IsSuccess());
    if (skipped) {
      EXPECT_TRUE(log.entries().empty());
    } else {
      EXPECT_THAT(log.entries(), ElementsAre("AddPod:Ext:other@node-0"));
    }
  }
}

// A failing RemovePod stops the run and comes back as an error naming the plugin
// (upstream: "running RemovePod on PreFilter plugin %q"), whatever code it returned.
TEST(RunPreFilterExtensionRemovePod, FailureIsAnErrorNamingThePlugin) {
  for (Status failure : {Status::Error("broken"), Status(Code::kUnschedulable, "broken")}) {
    CallLog log;
    Registry registry = BaseRegistry();
    Register(registry, std::make_unique<FakePreFilterWithExtensions>("A", &log));
    Register(registry, std::make_unique<FakePreFilterWithExtensions>("Bad", &log, Status(), failure));
    Register(registry, std::make_unique<FakePreFilterWithExtensions>("After", &log));
    config::KubeSchedulerProfile profile = BaseProfile();
    Enable(profile.plugins.pre_filter, {"A", "Bad", "After"});
    auto fw = Build(registry, profile);
    cache::Snapshot snap = MakeSnapshot(1);
    CycleState state;
    auto pod = MakePod("p");
    ASSERT_TRUE(fw->RunPreFilterPlugins(state, *pod).second.IsSuccess());

    cache::PodEntry victim{.pod = MakePod("victim", 0, "node-0")};
    Status s = fw->RunPreFilterExtensionRemovePod(state, *pod, victim, *snap.Get("node-0"));
    EXPECT_EQ(s.code(), Code::kError) << failure.ToString();
    EXPECT_EQ(s.plugin(), "Bad");
    EXPECT_EQ(s.Message(), "running RemovePod on PreFilter plugin \"Bad\": broken");
    EXPECT_THAT(log.entries(), ElementsAre("RemovePod:A:victim@node-0", "RemovePod:Bad:victim@node-0"));
  }
}

// ---- score ----

TEST(RunScorePlugins, NormalizesThenWeights) {
  Registry registry = BaseRegistry();
  // Raw score = node index; normalized to index * 10.
  Register(registry, std::make_unique<FakeScore>(
                         "Idx",
                         [](const cache::NodeInfo& n, int64_t& s) {
                           s = std::stoi(n.name().substr(5));
                           return Status();
                         },
                         [](std::span<NodeScore> scores) {
                           for (NodeScore& ns : scores) ns.score *= 10;
                           return Status();
                         }));
  Register(registry, std::make_unique<FakeScore>("Const", [](const cache::NodeInfo&, int64_t& s) {
             s = 7;
             return Status();
           }));
  config::KubeSchedulerProfile profile = BaseProfile();
  profile.plugins.score.enabled = {{"Idx", 2}, {"Const", 0}};
  auto fw = Build(registry, profile);
  cache::Snapshot snap = MakeSnapshot(5);
  std::vector<cache::NodeInfoPtr> nodes(snap.List().begin(), snap.List().end());
  CycleState state;
  auto [totals, status] = fw->RunScorePlugins(state, *MakePod("p"), nodes);
  ASSERT_TRUE(status.IsSuccess()) << status.ToString();
  ASSERT_EQ(totals.size(), nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    int idx = std::stoi(nodes[i]->name().substr(5));
    EXPECT_EQ(totals[i], idx * 10 * 2 + 7) << nodes[i]->name();
  }
  // A skipped plugin does not score.
  state.skip_score_plugins.insert("Idx");
  auto [skipped, s2] = fw->RunScorePlugins(state, *MakePod("p"), nodes);
  EXPECT_THAT(skipped, ::testing::Each(7));
}

TEST(RunScorePlugins, Errors) {
  struct Case {
    std::string name;
    FakeScore::Fn score;
    FakeScore::NormalizeFn normalize;
    std::string want;
  };
  std::vector<Case> cases = {
      {"ScoreFails", [](const cache::NodeInfo&, int64_t&) { return Status::Error("no score"); }, nullptr,
       "running Score plugins: plugin \"S\" failed with: no score"},
      {"NormalizeFails",
       [](const cache::NodeInfo&, int64_t& s) {
         s = 1;
         return Status();
       },
       [](std::span<NodeScore>) { return Status::Error("no normalize"); },
       "running Normalize on Score plugins: plugin \"S\" failed with: no normalize"},
      {"OutOfRange",
       [](const cache::NodeInfo&, int64_t& s) {
         s = 101;
         return Status();
       },
       nullptr,
       "applying score defaultWeights on Score plugins: plugin \"S\" returns an invalid score 101, it should in "
       "the range of [0, 100] after normalizing"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Registry registry = BaseRegistry();
    Register(registry, std::make_unique<FakeScore>("S", c.score, c.normalize));
    config::KubeSchedulerProfile profile = BaseProfile();
    Enable(profile.plugins.score, {"S"});
    auto fw = Build(registry, profile);
    cache::Snapshot snap = MakeSnapshot(20);
    CycleState state;
    auto [totals, status] = fw->RunScorePlugins(state, *MakePod("p"), snap.List());
    EXPECT_EQ(status.code(), Code::kError);
    EXPECT_EQ(status.Message(), c.want);
    EXPECT_EQ(status.plugin(), "S");
  }
}

// ---- reserve, permit, bind ----

TEST(RunReservePlugins, UnreserveRunsInReverseOrder) {
  CallLog log;
  Registry registry = BaseRegistry();
  Register(registry, std::make_unique<FakeReserve>("R1", &log));
  Register(registry, std::make_unique<FakeReserve>("R2", &log, Status(Code::kUnschedulable, "no room")));
  Register(registry, std::make_unique<FakeReserve>("R3", &log));
  config::KubeSchedulerProfile profile = BaseProfile();
  Enable(profile.plugins.reserve, {"R1", "R2", "R3"});
  auto fw = Build(registry, profile);
  CycleState state;
  auto pod = MakePod("p");
  Status s = fw->RunReservePluginsReserve(state, *pod, "n");
  EXPECT_EQ(s.code(), Code::kUnschedulable);
  EXPECT_EQ(s.plugin(), "R2");
  fw->RunReservePluginsUnreserve(state, *pod, "n");
  EXPECT_THAT(log.entries(), ElementsAre("Reserve:R1", "Reserve:R2", "Unreserve:R3", "Unreserve:R2", "Unreserve:R1"));
}

class FakePreBind : public NamedPlugin, public PreBindPlugin {
 public:
  FakePreBind(std::string name, Status preflight) : NamedPlugin(std::move(name)), preflight_(std::move(preflight)) {}
  Status PreBindPreFlight(const CycleState&, const api::Pod&, std::string_view) const override { return preflight_; }
  Status PreBind(CycleState&, const api::Pod&, std::string_view) override { return Status(); }

 private:
  Status preflight_;
};

TEST(PreBindNeeded, UnlessEveryPreFlightSkips) {
  auto build = [](std::vector<std::pair<std::string, Status>> plugins) {
    Registry registry = BaseRegistry();
    config::KubeSchedulerProfile profile = BaseProfile();
    for (auto& [name, preflight] : plugins) {
      Register(registry, std::make_unique<FakePreBind>(name, preflight));
      profile.plugins.pre_bind.enabled.push_back(config::Plugin{name, 0});
    }
    return Build(registry, profile);
  };
  CycleState state;
  auto pod = MakePod("p");
  EXPECT_FALSE(build({})->PreBindNeeded(state, *pod, "n"));
  EXPECT_FALSE(build({{"A", Status(Code::kSkip)}, {"B", Status(Code::kSkip)}})->PreBindNeeded(state, *pod, "n"));
  EXPECT_TRUE(build({{"A", Status(Code::kSkip)}, {"B", Status()}})->PreBindNeeded(state, *pod, "n"));
  EXPECT_TRUE(build({{"A", Status::Error("unsure")}})->PreBindNeeded(state, *pod, "n"));
}

TEST(RunBindPlugins, SkipPassesToNext) {
  CallLog log;
  Registry registry = BaseRegistry();
  Register(registry, std::make_unique<FakeBind>("Skip1", &log, Status(Code::kSkip)));
  Register(registry, std::make_unique<FakeBind>("Real", &log));
  Register(registry, std::make_unique<FakeBind>("Never", &log));
  Register(registry, std::make_unique<FakeBind>("Fails", &log, Status::Error("conflict")));
  config::KubeSchedulerProfile profile = BaseProfile();
  profile.plugins.bind.enabled.clear();
  Enable(profile.plugins.bind, {"Skip1", "Real", "Never"});
  auto fw = Build(registry, profile);
  CycleState state;
  auto pod = MakePod("p");
  EXPECT_TRUE(fw->RunBindPlugins(state, *pod, "n1").IsSuccess());
  EXPECT_THAT(log.entries(), ElementsAre("Bind:Skip1:n1", "Bind:Real:n1"));

  Registry r2 = BaseRegistry();
  Register(r2, std::make_unique<FakeBind>("Skip1", &log, Status(Code::kSkip)));
  Register(r2, std::make_unique<FakeBind>("Fails", &log, Status::Error("conflict")));
  config::KubeSchedulerProfile p2 = BaseProfile();
  p2.plugins.bind.enabled.clear();
  Enable(p2.plugins.bind, {"Skip1", "Fails"});
  auto fw2 = Build(r2, p2);
  Status s = fw2->RunBindPlugins(state, *pod, "n1");
  EXPECT_EQ(s.code(), Code::kError);
  EXPECT_EQ(s.Message(), "running Bind plugin \"Fails\": conflict");

  p2.plugins.bind.enabled.clear();
  Registry r3 = BaseRegistry();
  Register(r3, std::make_unique<FakeBind>("Skip1", &log, Status(Code::kSkip)));
  Enable(p2.plugins.bind, {"Skip1"});
  EXPECT_TRUE(Build(r3, p2)->RunBindPlugins(state, *pod, "n1").IsSkip());
}

TEST(RunBindPluginsAsync, SkipPassesToNextWhenTheCallCompletes) {
  CallLog log;
  Registry registry = BaseRegistry();
  auto* skip = Register(registry, std::make_unique<FakeAsyncBind>("Skip1", &log, Status(Code::kSkip)));
  auto* real = Register(registry, std::make_unique<FakeAsyncBind>("Real", &log));
  Register(registry, std::make_unique<FakeBind>("Sync", &log));
  config::KubeSchedulerProfile profile = BaseProfile();
  profile.plugins.bind.enabled.clear();
  Enable(profile.plugins.bind, {"Skip1", "Real"});
  auto fw = Build(registry, profile);
  ASSERT_TRUE(fw->CanBindAsync());
  CycleState state;
  auto pod = MakePod("p");
  std::optional<Status> result;
  fw->RunBindPluginsAsync(state, *pod, "n1", [&](Status s) { result = std::move(s); });
  EXPECT_FALSE(result.has_value());  // nothing completes before the plugin's call does
  ASSERT_EQ(skip->pending.size(), 1u);
  skip->CompleteOne();
  EXPECT_FALSE(result.has_value());
  ASSERT_EQ(real->pending.size(), 1u);
  real->CompleteOne();
  ASSERT_TRUE(result.has_value());
  EXPECT_TRUE(result->IsSuccess());
  EXPECT_THAT(log.entries(), ElementsAre("Bind:Skip1:n1", "Bind:Real:n1"));

  // A synchronous bind plugin anywhere in the list rules the asynchronous path out.
  Registry r2 = BaseRegistry();
  Register(r2, std::make_unique<FakeAsyncBind>("A", &log));
  Register(r2, std::make_unique<FakeBind>("Sync", &log));
  config::KubeSchedulerProfile p2 = BaseProfile();
  p2.plugins.bind.enabled.clear();
  Enable(p2.plugins.bind, {"A", "Sync"});
  EXPECT_FALSE(Build(r2, p2)->CanBindAsync());
}

TEST(RunBindPluginsAsync, ErrorsAndAllSkipMatchTheSynchronousForm) {
  Registry registry = BaseRegistry();
  auto* fails = Register(registry, std::make_unique<FakeAsyncBind>("Fails", nullptr, Status::Error("conflict")));
  config::KubeSchedulerProfile profile = BaseProfile();
  profile.plugins.bind.enabled.clear();
  Enable(profile.plugins.bind, {"Fails"});
  auto fw = Build(registry, profile);
  CycleState state;
  auto pod = MakePod("p");
  std::optional<Status> result;
  fw->RunBindPluginsAsync(state, *pod, "n1", [&](Status s) { result = std::move(s); });
  fails->CompleteOne();
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->code(), Code::kError);
  EXPECT_EQ(result->Message(), "running Bind plugin \"Fails\": conflict");
  EXPECT_EQ(result->plugin(), "Fails");

  Registry r2 = BaseRegistry();
  auto* skip = Register(r2, std::make_unique<FakeAsyncBind>("Skip1", nullptr, Status(Code::kSkip)));
  config::KubeSchedulerProfile p2 = BaseProfile();
  p2.plugins.bind.enabled.clear();
  Enable(p2.plugins.bind, {"Skip1"});
  auto fw2 = Build(r2, p2);
  result.reset();
  fw2->RunBindPluginsAsync(state, *pod, "n1", [&](Status s) { result = std::move(s); });
  skip->CompleteOne();
  ASSERT_TRUE(result.has_value());
  EXPECT_TRUE(result->IsSkip());
}

struct PermitFixture {
  FakeClock clock;
  std::unique_ptr<Framework> fw;
  CycleState state;
  api::PodPtr pod = MakePod("p");

  explicit PermitFixture(std::vector<std::pair<std::string, Status>> plugins,
                         std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    Registry registry = BaseRegistry();
    config::KubeSchedulerProfile profile = BaseProfile();
    for (auto& [name, status] : plugins) {
      Register(registry, std::make_unique<FakePermit>(name, status, timeout));
      Enable(profile.plugins.permit, {name});
    }
    fw = Build(registry, profile, {.parallelism = 1, .clock = &clock});
  }
};

TEST(Permit, AllowedByEveryWaitingPlugin) {
  PermitFixture f({{"W1", Status(Code::kWait)}, {"Ok", Status()}, {"W2", Status(Code::kWait)}});
  Status s = f.fw->RunPermitPlugins(f.state, *f.pod, "n");
  ASSERT_TRUE(s.IsWait());
  EXPECT_EQ(s.Message(), "one or more plugins asked to wait and no plugin rejected pod \"p\"");
  auto wp = f.fw->GetWaitingPod("uid-p");
  ASSERT_NE(wp, nullptr);
  EXPECT_THAT(wp->GetPendingPlugins(), ElementsAre("W1", "W2"));
  std::thread waiter([&] { EXPECT_TRUE(f.fw->WaitOnPermit(*f.pod).IsSuccess()); });
  wp->Allow("W1");
  int seen = 0;
  f.fw->IterateOverWaitingPods([&](WaitingPod& p) {
    ++seen;
    p.Allow("W2");
  });
  waiter.join();
  EXPECT_EQ(seen, 1);
  EXPECT_EQ(f.fw->GetWaitingPod("uid-p"), nullptr);
  // A pod that is not waiting passes straight through.
  EXPECT_TRUE(f.fw->WaitOnPermit(*f.pod).IsSuccess());
}

TEST(Permit, Rejected) {
  PermitFixture f({{"W", Status(Code::kWait)}});
  ASSERT_TRUE(f.fw->RunPermitPlugins(f.state, *f.pod, "n").IsWait());
  f.fw->GetWaitingPod("uid-p")->Reject("W", "gang incomplete");
  Status s = f.fw->WaitOnPermit(*f.pod);
  EXPECT_EQ(s.code(), Code::kUnschedulable);
  EXPECT_EQ(s.Message(), "gang incomplete");
  EXPECT_EQ(s.plugin(), "W");
}

TEST(Permit, RejectWaitingPodByUid) {
  PermitFixture f({{"W", Status(Code::kWait)}});
  ASSERT_TRUE(f.fw->RunPermitPlugins(f.state, *f.pod, "n").IsWait());
  EXPECT_TRUE(f.fw->RejectWaitingPod("uid-p", "", "removed"));
  EXPECT_FALSE(f.fw->RejectWaitingPod("uid-other", "", "removed"));
  EXPECT_EQ(f.fw->WaitOnPermit(*f.pod).Message(), "removed");
}

TEST(Permit, TimesOut) {
  PermitFixture f({{"W", Status(Code::kWait)}}, std::chrono::seconds(10));
  ASSERT_TRUE(f.fw->RunPermitPlugins(f.state, *f.pod, "n").IsWait());
  Status result;
  std::thread waiter([&] { result = f.fw->WaitOnPermit(*f.pod); });
  ASSERT_TRUE(f.clock.WaitForSleepers(1));
  f.clock.Advance(std::chrono::seconds(9));
  f.clock.Advance(std::chrono::seconds(1));
  waiter.join();
  EXPECT_EQ(result.code(), Code::kUnschedulable);
  EXPECT_EQ(result.Message(), "rejected due to timeout after waiting 10s at plugin W");
  EXPECT_EQ(result.plugin(), "W");
}

TEST(Permit, RejectionAndErrorFromPlugins) {
  PermitFixture rej({{"Ok", Status()}, {"No", Status(Code::kUnschedulable, "not now")}});
  Status s = rej.fw->RunPermitPlugins(rej.state, *rej.pod, "n");
  EXPECT_EQ(s.code(), Code::kUnschedulable);
  EXPECT_EQ(s.plugin(), "No");
  EXPECT_EQ(rej.fw->GetWaitingPod("uid-p"), nullptr);
  PermitFixture err({{"Bad", Status::Error("kaput")}});
  EXPECT_EQ(err.fw->RunPermitPlugins(err.state, *err.pod, "n").Message(), "running Permit plugin \"Bad\": kaput");
}

// ---- post filter ----

class FakePostFilter : public NamedPlugin, public PostFilterPlugin {
 public:
  FakePostFilter(std::string name, Status status, std::string nominate = "")
      : NamedPlugin(std::move(name)), status_(std::move(status)), nominate_(std::move(nominate)) {}
  Status PostFilter(CycleState&, const api::Pod&, const NodeToStatusMap&, PostFilterResult& result) override {
    result.nominated_node_name = nominate_;
    return status_;
  }

 private:
  Status status_;
  std::string nominate_;
};

TEST(RunPostFilterPlugins, FirstSuccessWinsElseMergedUnschedulable) {
  Registry registry = BaseRegistry();
  Register(registry, std::make_unique<FakePostFilter>("P1", Status(Code::kUnschedulable, "no victims")));
  Register(registry, std::make_unique<FakePostFilter>("P2", Status(), "node-7"));
  config::KubeSchedulerProfile profile = BaseProfile();
  Enable(profile.plugins.post_filter, {"P1", "P2"});
  auto fw = Build(registry, profile);
  CycleState state;
  auto [result, status] = fw->RunPostFilterPlugins(state, *MakePod("p"), {});
  EXPECT_TRUE(status.IsSuccess());
  EXPECT_EQ(result.nominated_node_name, "node-7");

  Registry r2 = BaseRegistry();
  Register(r2, std::make_unique<FakePostFilter>("P1", Status(Code::kUnschedulable, "no victims")));
  config::KubeSchedulerProfile p2 = BaseProfile();
  Enable(p2.plugins.post_filter, {"P1"});
  auto fw2 = Build(r2, p2);
  auto [r, s] = fw2->RunPostFilterPlugins(state, *MakePod("p"), {});
  EXPECT_EQ(s.code(), Code::kUnschedulable);
  EXPECT_EQ(s.Message(), "no victims");
  EXPECT_EQ(s.plugin(), "P1");
}

// ---- metrics ----

class CountingRecorder : public MetricsRecorder {
 public:
  void ObserveExtensionPoint(std::string_view point, Code code, std::string_view profile, double) override {
    MutexLock l(mu);
    points.push_back(std::string(point) + ":" + std::string(CodeName(code)) + ":" + std::string(profile));
  }
  void ObservePlugin(std::string_view, std::string_view, Code, double) override { plugin_calls.fetch_add(1); }
  Mutex mu;
  std::vector<std::string> points GUARDED_BY(mu);
  std::atomic<int> plugin_calls{0};
};

TEST(Metrics, ExtensionPointsRecordedAndPluginsSampled) {
  CountingRecorder recorder;
  Registry registry = BaseRegistry();
  Register(registry, std::make_unique<FakeFilter>("F", std::set<std::string>{}, Status()));
  config::KubeSchedulerProfile profile = BaseProfile();
  Enable(profile.plugins.filter, {"F"});
  auto fw = Build(registry, profile, {.parallelism = 1, .metrics = &recorder});
  CycleState state;
  auto pod = MakePod("p");
  fw->RunBindPlugins(state, *pod, "n");
  {
    MutexLock l(recorder.mu);
    EXPECT_THAT(recorder.points, ElementsAre("Bind:Success:test"));
  }
  cache::Snapshot snap = MakeSnapshot(1);
  // Plugin durations are recorded only in sampled cycles, and then for every call.
  for (int i = 0; i < 10; ++i) (void)fw->RunFilterPlugins(state, *pod, *snap.Get("node-0"));
  EXPECT_EQ(recorder.plugin_calls.load(), 0);
  CycleState sampled;
  sampled.record_plugin_metrics = true;
  // Per-node points: one call in eight of a sampled cycle.
  for (int i = 0; i < 80; ++i) (void)fw->RunFilterPlugins(sampled, *pod, *snap.Get("node-0"));
  EXPECT_EQ(recorder.plugin_calls.load(), 10);
  // Other points: every call of a sampled cycle.
  fw->RunBindPlugins(sampled, *pod, "n");
  EXPECT_EQ(recorder.plugin_calls.load(), 11);
  // A clone (preemption's what-if runs) keeps the decision.
  EXPECT_TRUE(sampled.Clone()->record_plugin_metrics);
}

TEST(CycleStateTest, WriteReplacesAndReadChecksType) {
  struct A : StateData {
    int v = 0;
    std::unique_ptr<StateData> Clone() const override { return std::make_unique<A>(*this); }
  };
  struct B : StateData {
    std::unique_ptr<StateData> Clone() const override { return std::make_unique<B>(*this); }
  };
  CycleState state;
  auto a = std::make_unique<A>();
  a->v = 1;
  state.Write("k", std::move(a));
  auto a2 = std::make_unique<A>();
  a2->v = 2;
  state.Write("k", std::move(a2));
  state.Write("b", std::make_unique<B>());
  state.Write("null", nullptr);
  ASSERT_NE(state.Read<A>("k"), nullptr);
  EXPECT_EQ(state.Read<A>("k")->v, 2);
  EXPECT_EQ(state.Read<B>("k"), nullptr);  // wrong type
  EXPECT_NE(state.Read<B>("b"), nullptr);
  EXPECT_EQ(state.Read<A>("null"), nullptr);
  EXPECT_EQ(state.Read<A>("missing"), nullptr);
  auto clone = state.Clone();
  EXPECT_EQ(clone->Read<A>("k")->v, 2);
}

TEST(CycleStateTest, SchedulingOnlyDataIsDroppedBeforeBinding) {
  struct Kept : StateData {
    std::unique_ptr<StateData> Clone() const override { return std::make_unique<Kept>(*this); }
  };
  struct FilterOnly : StateData {
    std::unique_ptr<StateData> Clone() const override { return std::make_unique<FilterOnly>(*this); }
    bool NeededForBinding() const override { return false; }
  };
  CycleState state;
  state.Write("kept", std::make_unique<Kept>());
  state.Write("filter", std::make_unique<FilterOnly>());
  state.Write("null", nullptr);
  state.DropSchedulingOnlyData();
  EXPECT_NE(state.Read<Kept>("kept"), nullptr);
  EXPECT_EQ(state.Read<FilterOnly>("filter"), nullptr);
}

}  // namespace
}  // namespace ksched::framework::runtime
