// NodeResourcesFit scoring: upstream's least_allocated, most_allocated and
// requested_to_capacity_ratio test tables, with the current (v1) formulas.
#include <gtest/gtest.h>

#include "pkg/framework/plugins/noderesources/fit.h"
#include "pkg/framework/plugins/noderesources/test_util.h"

namespace ksched::framework::plugins::noderesources {
namespace {

using namespace fixtures;  // test_util.h: builders, ScoreCase, ForEachScoreCase

config::NodeResourcesFitArgs Strategy(std::string_view type, std::vector<config::ResourceSpec> resources,
                                      std::optional<std::vector<config::UtilizationShapePoint>> shape = {}) {
  return config::NodeResourcesFitArgs{
      .scoring_strategy = config::ScoringStrategy{std::string(type), std::move(resources), std::move(shape)}};
}

// Scores every node twice: through PreScore's state, and directly (no PreScore).
void RunScores(const config::NodeResourcesFitArgs& args, const std::vector<ScoreCase>& cases) {
  ForEachScoreCase<Fit>(args, cases, [](Fit& fit, CycleState& state, FakeHandle& handle, const ScoreCase& c) {
    CycleState empty;
    for (size_t i = 0; i < c.nodes.size(); ++i) {
      const cache::NodeInfo* ni = handle.Snapshot().Get(c.nodes[i]->Name());
      ASSERT_NE(ni, nullptr);
      int64_t score = -1, direct = -1;
      ASSERT_TRUE(fit.Score(state, *c.pod, *ni, score).IsSuccess());
      ASSERT_TRUE(fit.Score(empty, *c.pod, *ni, direct).IsSuccess());
      EXPECT_EQ(score, c.want[i]) << c.nodes[i]->Name();
      EXPECT_EQ(direct, c.want[i]) << c.nodes[i]->Name();
    }
  });
}

const std::vector<config::ResourceSpec> kCpuMem = {{"cpu", 1}, {"memory", 1}};

api::PodPtr NoResources() { return Pod("p", "", {}); }

TEST(FitScoreTest, LeastAllocated) {
  auto m1 = [](int64_t c, int64_t m) { return Node("machine1", c, m); };
  auto m2 = [](int64_t c, int64_t m) { return Node("machine2", c, m); };
  const std::vector<ScoreCase> cases = {
      {"nothing scheduled, nothing requested", NoResources(), {m1(4000, 10000), m2(4000, 10000)}, {}, {100, 100}},
      // cpu (4000-3000)*100/4000 = 25, memory 50: 37; machine2: 50, 50.
      {"nothing scheduled, resources requested, differently sized machines", Pod("p", "", CpuAndMemory()),
       {m1(4000, 10000), m2(6000, 10000)}, {}, {37, 50}},
      {"no resources requested, pods scheduled", NoResources(), {m1(4000, 10000), m2(4000, 10000)},
       {Pod("a", "machine1", {}), Pod("b", "machine1", {}), Pod("c", "machine2", {}), Pod("d", "machine2", {})},
       {100, 100}},
      // machine1: cpu 40, memory 100 -> 70; machine2: cpu 40, memory 75 -> 57.
      {"no resources requested, pods scheduled with resources", NoResources(), {m1(10000, 20000), m2(10000, 20000)},
       {Pod("a", "machine1", CpuOnly()), Pod("b", "machine1", CpuOnly()), Pod("c", "machine2", CpuOnly()),
        Pod("d", "machine2", CpuAndMemory())},
       {70, 57}},
      {"resources requested, pods scheduled with resources", Pod("p", "", CpuAndMemory()),
       {m1(10000, 20000), m2(10000, 20000)},
       {Pod("a", "machine1", CpuOnly()), Pod("b", "machine2", CpuAndMemory())}, {57, 45}},
      {"resources requested, pods scheduled with resources, differently sized machines", Pod("p", "", CpuAndMemory()),
       {m1(10000, 20000), m2(10000, 50000)},
       {Pod("a", "machine1", CpuOnly()), Pod("b", "machine2", CpuAndMemory())}, {57, 60}},
      {"requested resources exceed node capacity", Pod("p", "", CpuOnly()), {m1(4000, 10000), m2(4000, 10000)},
       {Pod("a", "machine1", CpuOnly()), Pod("b", "machine2", CpuAndMemory())}, {50, 25}},
      {"zero node resources, pods scheduled with resources", NoResources(), {m1(0, 0), m2(0, 0)},
       {Pod("a", "machine1", CpuOnly()), Pod("b", "machine2", CpuAndMemory())}, {0, 0}},
      // A container without requests counts 100m cpu and 200Mi memory when scoring:
      // machine1 cpu (1000-100)*100/1000 = 90, memory (1Gi-200Mi)*100/1Gi = 80 -> 85.
      {"best-effort pod counts the non-zero defaults", Pod("p", "", {fixtures::Container({})}),
       {m1(1000, 1024LL * 1024 * 1024)}, {}, {85}},
  };
  RunScores(Strategy(config::kLeastAllocated, kCpuMem), cases);

  // (25 * 1 + 50 * 2) / 3 = 41; (50 + 100) / 3 = 50.
  RunScores(Strategy(config::kLeastAllocated, {{"memory", 2}, {"cpu", 1}}),
            {{"different weight on CPU and memory", Pod("p", "", CpuAndMemory()),
              {m1(4000, 10000), m2(6000, 10000)}, {}, {41, 50}}});
}

TEST(FitScoreTest, MostAllocated) {
  auto m1 = [](int64_t c, int64_t m) { return Node("machine1", c, m); };
  auto m2 = [](int64_t c, int64_t m) { return Node("machine2", c, m); };
  std::vector<api::Container> big_cpu_and_memory = {
      fixtures::Container({{"cpu", Milli(2000)}, {"memory", Val(4000)}}),
      fixtures::Container({{"cpu", Milli(3000)}, {"memory", Val(5000)}})};
  const std::vector<ScoreCase> cases = {
      {"nothing scheduled, nothing requested", NoResources(), {m1(4000, 10000), m2(4000, 10000)}, {}, {0, 0}},
      // cpu 3000*100/4000 = 75, memory 50 -> 62; machine2 50, 50.
      {"nothing scheduled, resources requested, differently sized machines", Pod("p", "", CpuAndMemory()),
       {m1(4000, 10000), m2(6000, 10000)}, {}, {62, 50}},
      {"no resources requested, pods scheduled with resources", NoResources(), {m1(10000, 20000), m2(10000, 20000)},
       {Pod("a", "machine1", CpuOnly()), Pod("b", "machine1", CpuOnly()), Pod("c", "machine2", CpuOnly()),
        Pod("d", "machine2", CpuAndMemory())},
       {30, 42}},
      {"resources requested, pods scheduled with resources", Pod("p", "", CpuAndMemory()),
       {m1(10000, 20000), m2(10000, 20000)},
       {Pod("a", "machine1", CpuOnly()), Pod("b", "machine2", CpuAndMemory())}, {42, 55}},
      // Over capacity counts as full (current upstream; 1.20 scored it 0):
      // machine1 cpu 5000 > 4000 -> 100, memory 90 -> 95; machine2 cpu 50, memory 9000 > 8000 -> 100 -> 75.
      {"resources requested with more than the node", Pod("p", "", big_cpu_and_memory),
       {m1(4000, 10000), m2(10000, 8000)}, {}, {95, 75}},
  };
  RunScores(Strategy(config::kMostAllocated, kCpuMem), cases);
  // (75 * 1 + 50 * 2) / 3 = 58; 50.
  RunScores(Strategy(config::kMostAllocated, {{"memory", 2}, {"cpu", 1}}),
            {{"different weight on CPU and memory", Pod("p", "", CpuAndMemory()),
              {m1(4000, 10000), m2(6000, 10000)}, {}, {58, 50}}});
}

api::PodPtr CpuMemPod(std::string node, int64_t milli_cpu, int64_t memory) {
  return Pod("p-" + node + std::to_string(milli_cpu), std::move(node),
             {fixtures::Container({{"cpu", Milli(milli_cpu)}, {"memory", Val(memory)}})});
}

TEST(FitScoreTest, RequestedToCapacityRatio) {
  // Shape (0, 10), (100, 0): least-requested nodes first.
  const std::vector<ScoreCase> cases = {
      {"nothing scheduled, nothing requested", CpuMemPod("", 0, 0), {Node("node1", 4000, 10000), Node("node2", 4000, 10000)},
       {CpuMemPod("node1", 0, 0), CpuMemPod("node2", 0, 0)}, {100, 100}},
      // node1: cpu 75% -> 25, memory 50% -> 50, round(37.5) = 38; node2: 50, 50.
      {"nothing scheduled, resources requested, differently sized machines", CpuMemPod("", 3000, 5000),
       {Node("node1", 4000, 10000), Node("node2", 6000, 10000)},
       {CpuMemPod("node1", 0, 0), CpuMemPod("node2", 0, 0)}, {38, 50}},
      {"no resources requested, pods scheduled with resources", CpuMemPod("", 0, 0),
       {Node("node1", 4000, 10000), Node("node2", 6000, 10000)},
       {CpuMemPod("node1", 3000, 5000), CpuMemPod("node2", 3000, 5000)}, {38, 50}},
  };
  RunScores(Strategy(config::kRequestedToCapacityRatio, {{"memory", 1}, {"cpu", 1}},
                     std::vector<config::UtilizationShapePoint>{{0, 10}, {100, 0}}),
            cases);
}

api::PodPtr ExtPod(std::string node, api::ResourceList requests) {
  return Pod("p-" + node, std::move(node), {fixtures::Container(std::move(requests))});
}

TEST(FitScoreTest, BinPackingSingleExtended) {
  const int64_t mem = 10000LL * 1024 * 1024;
  auto nodes = [&] {
    return std::vector<api::NodePtr>{Node("machine1", 4000, mem, {{"intel.com/foo", Val(8)}}),
                                     Node("machine2", 4000, mem, {{"intel.com/foo", Val(4)}})};
  };
  auto pod1 = [] { return ExtPod("", {{"intel.com/foo", Val(2)}}); };
  const std::vector<ScoreCase> cases = {
      {"nothing scheduled, nothing requested", NoResources(), nodes(), {}, {0, 0}},
      // 2/8 = 25% -> 2; 2/4 = 50% -> 5.
      {"resources requested, pods scheduled with less resources", pod1(), nodes(), {NoResources()}, {2, 5}},
      // machine2: (2+2)/4 = 100% -> 10.
      {"resources requested, pods scheduled with resources, on node with existing pod running", pod1(), nodes(),
       {ExtPod("machine2", {{"intel.com/foo", Val(2)}})}, {2, 10}},
      {"resources requested, pods scheduled with more resources", ExtPod("", {{"intel.com/foo", Val(4)}}), nodes(),
       {NoResources()}, {5, 10}},
  };
  RunScores(Strategy(config::kRequestedToCapacityRatio, {{"intel.com/foo", 1}},
                     std::vector<config::UtilizationShapePoint>{{0, 0}, {100, 1}}),
            cases);
}

TEST(FitScoreTest, BinPackingMultipleExtended) {
  const int64_t mem = 10000LL * 1024 * 1024;
  auto nodes = [&] {
    return std::vector<api::NodePtr>{
        Node("machine1", 4000, mem, {{"intel.com/foo", Val(8)}, {"intel.com/bar", Val(4)}}),
        Node("machine2", 4000, mem, {{"intel.com/foo", Val(4)}, {"intel.com/bar", Val(8)}})};
  };
  api::ResourceList two_two = {{"intel.com/foo", Val(2)}, {"intel.com/bar", Val(2)}};
  const std::vector<ScoreCase> cases = {
      {"nothing scheduled, nothing requested", NoResources(), nodes(), {}, {0, 0}},
      // machine1: foo 25% -> 2 (x3), bar 50% -> 5 (x5): round(31/8) = 4; machine2: round(25/8) = 3.
      {"resources requested, pods scheduled with less resources", ExtPod("", two_two), nodes(), {NoResources()},
       {4, 3}},
      // machine2: foo 100% -> 10, bar 50% -> 5: round(55/8) = 7.
      {"resources requested, pods scheduled with resources, on node with existing pod running", ExtPod("", two_two),
       nodes(), {ExtPod("machine2", two_two)}, {4, 7}},
      {"resources requested, pods scheduled with more resources",
       ExtPod("", {{"intel.com/foo", Val(4)}, {"intel.com/bar", Val(2)}}), nodes(), {NoResources()}, {5, 5}},
  };
  RunScores(Strategy(config::kRequestedToCapacityRatio, {{"intel.com/foo", 3}, {"intel.com/bar", 5}},
                     std::vector<config::UtilizationShapePoint>{{0, 0}, {100, 1}}),
            cases);
}

// Direct checks of the per-resource formulas at their edges.
TEST(FitScoreTest, ScorerEdges) {
  const ResourceUse over[] = {{.requested = 5, .allocatable = 4, .weight = 1}};
  EXPECT_EQ(LeastAllocatedScore(over), 0);
  EXPECT_EQ(MostAllocatedScore(over), 100);
  const ResourceUse none[] = {{.requested = 0, .allocatable = 0, .weight = 1}};
  EXPECT_EQ(LeastAllocatedScore(none), 0);
  EXPECT_EQ(MostAllocatedScore(none), 0);
  auto rtcr = RequestedToCapacityRatioScorer(helper::BrokenLinearFunction({{0, 0}, {100, 100}}));
  EXPECT_EQ(rtcr(over), 100);
  EXPECT_EQ(rtcr(none), 0);
}

}  // namespace
}  // namespace ksched::framework::plugins::noderesources
