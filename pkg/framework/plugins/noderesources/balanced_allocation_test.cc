#include "pkg/framework/plugins/noderesources/balanced_allocation.h"

#include <gtest/gtest.h>

#include "pkg/framework/plugins/noderesources/test_util.h"

namespace ksched::framework::plugins::noderesources {
namespace {

using namespace fixtures;  // test_util.h: builders, ScoreCase, ForEachScoreCase
using Case = ScoreCase;

void RunCases(const config::PluginArgs& args, const std::vector<Case>& cases) {
  ForEachScoreCase<BalancedAllocation>(
      args, cases, [](BalancedAllocation& ba, CycleState& state, FakeHandle& handle, const Case& c) {
        for (size_t i = 0; i < c.nodes.size(); ++i) {
          int64_t score = -1;
          ASSERT_TRUE(ba.Score(state, *c.pod, *handle.Snapshot().Get(c.nodes[i]->Name()), score).IsSuccess());
          EXPECT_EQ(score, c.want[i]) << c.nodes[i]->Name();
        }
      });
}

// Upstream's balanced_allocation_test table, with the current formula
// score = (1 - std) * 100 where for two resources std = |f1 - f2| / 2, fractions capped at 1,
// and actual (not non-zero) requests.
TEST(BalancedAllocationTest, Scores) {
  auto m1 = [](int64_t c, int64_t m) { return Node("machine1", c, m); };
  auto m2 = [](int64_t c, int64_t m) { return Node("machine2", c, m); };
  const std::vector<Case> cases = {
      // machine1: cpu 0.75, memory 0.5 -> std 0.125 -> 87; machine2: 0.5, 0.5 -> 100.
      {"nothing scheduled, resources requested, differently sized machines", Pod("p", "", CpuAndMemory()),
       {m1(4000, 10000), m2(6000, 10000)}, {}, {87, 100}},
      // machine1: cpu 0.6, memory 0.25 -> 82; machine2: 0.6, 0.5 -> 95.
      {"resources requested, pods scheduled with resources", Pod("p", "", CpuAndMemory()),
       {m1(10000, 20000), m2(10000, 20000)},
       {Pod("a", "machine1", CpuOnly()), Pod("b", "machine2", CpuAndMemory())}, {82, 95}},
      // machine2: cpu 0.6, memory 0.2 -> 80.
      {"resources requested, pods scheduled with resources, differently sized machines", Pod("p", "", CpuAndMemory()),
       {m1(10000, 20000), m2(10000, 50000)},
       {Pod("a", "machine1", CpuOnly()), Pod("b", "machine2", CpuAndMemory())}, {82, 80}},
      // machine1: cpu 6000/4000 capped to 1, memory 0 -> 50; machine2: 1, 0.5 -> 75.
      {"requested resources at node capacity", Pod("p", "", CpuOnly()), {m1(4000, 10000), m2(4000, 10000)},
       {Pod("a", "machine1", CpuOnly()), Pod("b", "machine2", CpuAndMemory())}, {50, 75}},
      // No resource has allocatable: no fractions, std 0.
      {"zero node resources, pods scheduled with resources", Pod("p", "", CpuOnly()), {m1(0, 0), m2(0, 0)},
       {Pod("a", "machine1", CpuOnly()), Pod("b", "machine2", CpuAndMemory())}, {100, 100}},
  };
  RunCases(std::monostate{}, cases);
}

TEST(BalancedAllocationTest, ThreeResourcesUseStandardDeviation) {
  // cpu 3000/4000 = 0.75, memory 5000/10000 = 0.5, intel.com/foo 1/4 = 0.25: mean 0.5,
  // std = sqrt((0.0625 + 0 + 0.0625) / 3) = 0.2041 -> 79.
  // machine2 lacks the extended resource: only cpu and memory count -> 87.
  std::vector<api::Container> containers = CpuAndMemory();
  containers[0].requests.emplace_back("intel.com/foo", Val(1));
  config::NodeResourcesBalancedAllocationArgs args{.resources = {{"cpu", 1}, {"memory", 1}, {"intel.com/foo", 1}}};
  RunCases(args, {{"three resources", Pod("p", "", containers),
              {Node("machine1", 4000, 10000, {{"intel.com/foo", Val(4)}}), Node("machine2", 4000, 10000)},
              {},
              {79, 87}}});
}

TEST(BalancedAllocationTest, BestEffortPodIsSkipped) {
  FakeHandle handle(cache::Snapshot::FromObjects({Node("m", 4000, 10000)}, {}));
  auto plugin = BalancedAllocation::New(std::monostate{}, handle);
  ASSERT_TRUE(plugin.ok());
  auto& ba = dynamic_cast<PreScorePlugin&>(**plugin);
  CycleState state;
  EXPECT_TRUE(ba.PreScore(state, *Pod("p", "", {fixtures::Container({})}), handle.Snapshot().List()).IsSkip());
  EXPECT_TRUE(ba.PreScore(state, *Pod("p", "", {}), handle.Snapshot().List()).IsSkip());
  EXPECT_TRUE(ba.PreScore(state, *Pod("p", "", CpuOnly()), handle.Snapshot().List()).IsSuccess());
}

TEST(BalancedAllocationTest, NewValidatesArgs) {
  FakeHandle handle;
  EXPECT_TRUE(BalancedAllocation::New(std::monostate{}, handle).ok());
  EXPECT_TRUE(BalancedAllocation::New(config::NodeResourcesBalancedAllocationArgs{}, handle).ok());
  EXPECT_FALSE(BalancedAllocation::New(
                   config::NodeResourcesBalancedAllocationArgs{.resources = {{"cpu", 2}}}, handle)
                   .ok());
  EXPECT_FALSE(BalancedAllocation::New(
                   config::NodeResourcesBalancedAllocationArgs{.resources = {{"cpu", 1}, {"cpu", 1}}}, handle)
                   .ok());
  EXPECT_FALSE(BalancedAllocation::New(config::NodeResourcesFitArgs{}, handle).ok());
}

}  // namespace
}  // namespace ksched::framework::plugins::noderesources
