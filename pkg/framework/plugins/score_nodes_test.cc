// The Score pass scores a chunk of nodes per plugin call (ScorePlugin::ScoreNodes), and
// per node (Score) in cycles whose plugin durations are sampled. Both must give every
// node the same score for every plugin of the default profile and of the other scoring
// strategies: random clusters, scored both ways through the real framework.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/defaults.h"
#include "pkg/framework/registry.h"
#include "pkg/framework/runtime/framework.h"
#include "pkg/framework/runtime/metrics_recorder.h"
#include "tests/fakes/builders.h"
#include "tests/fakes/fake_cluster_lister.h"
#include "tests/fakes/random_cluster.h"

namespace ksched::framework {
namespace {


// Counts plugin observations, which only the per-node path makes.
class CountingRecorder final : public runtime::MetricsRecorder {
 public:
  void ObserveExtensionPoint(std::string_view, Code, std::string_view, double) override {}
  void ObservePlugin(std::string_view point, std::string_view, Code, double) override {
    if (point == "Score") plugin_calls.fetch_add(1);
  }
  std::atomic<int> plugin_calls{0};
};

config::KubeSchedulerProfile DefaultProfile() {
  config::KubeSchedulerConfiguration cfg;
  config::SetDefaults(cfg);
  return cfg.profiles.front();
}

// The default profile with NodeResourcesFit scoring by `strategy`.
config::KubeSchedulerProfile WithFitStrategy(std::string_view strategy) {
  config::KubeSchedulerProfile profile = DefaultProfile();
  for (auto& pc : profile.plugin_config) {
    auto* args = std::get_if<config::NodeResourcesFitArgs>(&pc.args);
    if (args == nullptr) continue;
    config::ScoringStrategy& ss = args->scoring_strategy.emplace();
    ss.type = std::string(strategy);
    ss.resources = {{"cpu", 3}, {"memory", 1}, {"example.com/gpu", 2}};
    if (strategy == config::kRequestedToCapacityRatio) {
      ss.requested_to_capacity_ratio_shape =
          std::vector<config::UtilizationShapePoint>{{0, 10}, {50, 2}, {100, 7}};
    }
  }
  return profile;
}

class ScoreNodesTest : public ::testing::TestWithParam<std::string_view> {};

TEST_P(ScoreNodesTest, ChunksScoreEveryNodeAsScoreDoes) {
  for (unsigned seed = 1; seed <= 12; ++seed) {
    testing::RandomCluster r(seed);
    std::vector<api::NodePtr> node_objects = r.Nodes(40 + static_cast<int>(seed) * 7);
    std::vector<api::PodPtr> bound;
    for (const api::NodePtr& n : node_objects) {
      for (api::PodPtr& p : r.BoundPods(*n, {.prefix = "bound-"})) bound.push_back(std::move(p));
    }
    cache::Snapshot snapshot = cache::Snapshot::FromObjects(node_objects, bound);
    CountingRecorder recorder;
    testing::FakeClusterLister lister;
    auto fw = runtime::NewFramework(InTreeRegistry(), WithFitStrategy(GetParam()),
                                    {.snapshot = &snapshot, .lister = &lister, .parallelism = 2,
                                     .metrics = &recorder});
    ASSERT_TRUE(fw.ok()) << fw.status().ToString();
    std::vector<cache::NodeInfoPtr> nodes(snapshot.List().begin(), snapshot.List().end());
    for (int i = 0; i < 15; ++i) {
      api::PodPtr pod = r.Pod(i);
      CycleState state;
      ASSERT_TRUE((*fw)->RunPreFilterPlugins(state, *pod).second.IsSuccess());
      ASSERT_TRUE((*fw)->RunPreScorePlugins(state, *pod, nodes).IsSuccess());

      runtime::ScoreBreakdown chunked, per_node;
      state.record_plugin_metrics = false;
      auto [chunk_totals, s1] = (*fw)->RunScorePlugins(state, *pod, nodes, &chunked);
      ASSERT_TRUE(s1.IsSuccess()) << s1.Message();
      std::vector<std::vector<NodeScore>> chunk_scores(chunked.scores.begin(), chunked.scores.end());
      const int calls_before = recorder.plugin_calls.load();
      state.record_plugin_metrics = true;
      auto [node_totals, s2] = (*fw)->RunScorePlugins(state, *pod, nodes, &per_node);
      ASSERT_TRUE(s2.IsSuccess()) << s2.Message();
      ASSERT_GT(recorder.plugin_calls.load(), calls_before) << "the sampled cycle did not score per node";

      EXPECT_EQ(chunk_totals, node_totals) << "seed " << seed << " pod " << i;
      ASSERT_EQ(chunked.plugins, per_node.plugins);
      ASSERT_EQ(chunk_scores.size(), per_node.scores.size());
      for (size_t k = 0; k < chunk_scores.size(); ++k) {
        ASSERT_EQ(chunk_scores[k].size(), nodes.size());
        for (size_t n = 0; n < nodes.size(); ++n) {
          EXPECT_EQ(chunk_scores[k][n].name, nodes[n]->name());
          EXPECT_EQ(chunk_scores[k][n].score, per_node.scores[k][n].score)
              << chunked.plugins[k] << " on " << nodes[n]->name() << ", seed " << seed << " pod " << i;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Strategies, ScoreNodesTest,
                         ::testing::Values(config::kLeastAllocated, config::kMostAllocated,
                                           config::kRequestedToCapacityRatio));

}  // namespace
}  // namespace ksched::framework
