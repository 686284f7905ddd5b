// The Score pass scores a chunk of nodes per plugin call (ScorePlugin::ScoreNodes), and
// per node (Score) in cycles whose plugin durations are sampled. Both must give every
// node the same score for every plugin of the default profile and of the other scoring
// strategies: random clusters, scored both ways through the real framework.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "config/defaults.h"
#include "pkg/framework/registry.h"
#include "pkg/framework/runtime/framework.h"
#include "pkg/framework/runtime/metrics_recorder.h"
#include "tests/fakes/builders.h"
#include "tests/fakes/fake_cluster_lister.h"

namespace ksched::framework {
namespace {

using testing::NodeBuilder;
using testing::PodBuilder;

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

struct Cluster {
  std::vector<api::NodePtr> nodes;
  std::vector<api::PodPtr> pods;  // bound
};

Cluster RandomCluster(std::mt19937& rng, int num_nodes) {
  Cluster c;
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  for (int i = 0; i < num_nodes; ++i) {
    std::string name = "node-" + std::to_string(i);
    NodeBuilder b(name);
    b.Hostname().Label("topology.kubernetes.io/zone", "zone-" + std::to_string(pick(3)));
    std::vector<std::pair<std::string, std::string>> capacity = {
        {"cpu", std::to_string(2 + pick(6))}, {"memory", std::to_string(4 + pick(12)) + "Gi"}, {"pods", "110"}};
    if (pick(3) == 0) capacity.emplace_back("example.com/gpu", std::to_string(1 + pick(4)));
    b.Capacity(capacity);
    if (pick(4) == 0) b.Taint("dedicated", "batch", api::TaintEffect::kPreferNoSchedule);
    if (pick(6) == 0) b.Taint("flaky", "", api::TaintEffect::kPreferNoSchedule);
    api::Node node = *b.Obj();
    if (pick(2) == 0) node.status.images.push_back({{"registry.local/app:v1"}, 300 * 1024 * 1024});
    if (pick(3) == 0) node.status.images.push_back({{"registry.local/sidecar:latest"}, 40 * 1024 * 1024});
    c.nodes.push_back(std::make_shared<const api::Node>(std::move(node)));
    for (int k = pick(4); k > 0; --k) {
      PodBuilder p("bound-" + std::to_string(i) + "-" + std::to_string(k));
      p.Node(name).UID(name + "/" + std::to_string(k));
      if (pick(3) != 0) p.Req({{"cpu", std::to_string(100 * (1 + pick(10))) + "m"}, {"memory", std::to_string(1 + pick(3)) + "Gi"}});
      c.pods.push_back(p.Obj());
    }
  }
  return c;
}

api::PodPtr RandomPod(std::mt19937& rng, int i) {
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  PodBuilder b("pod-" + std::to_string(i));
  b.UID("uid-" + std::to_string(i));
  switch (pick(4)) {
    case 0:
      break;  // best effort
    case 1:
      b.Req({{"cpu", std::to_string(100 * (1 + pick(20))) + "m"}});
      break;
    case 2:
      b.Req({{"cpu", "500m"}, {"memory", std::to_string(1 + pick(4)) + "Gi"}, {"example.com/gpu", "1"}});
      break;
    default:
      b.Req({{"cpu", std::to_string(100 * (1 + pick(20))) + "m"}, {"memory", std::to_string(100 + pick(900)) + "Mi"}});
  }
  if (pick(3) == 0) {
    api::Toleration t;
    t.key = "dedicated";
    t.op_exists = true;
    b.Toleration(t);
  }
  if (pick(3) == 0) b.NodeAffinityIn("topology.kubernetes.io/zone", {"zone-" + std::to_string(pick(3))});
  api::Pod pod = *b.Obj();
  if (pod.spec.containers.empty()) pod.spec.containers.emplace_back();
  pod.spec.containers[0].image = pick(2) == 0 ? "registry.local/app:v1" : "registry.local/other";
  if (pick(2) == 0) {
    api::Container sidecar;
    sidecar.name = "sidecar";
    sidecar.image = "registry.local/sidecar";  // untagged: matched as :latest
    pod.spec.containers.push_back(sidecar);
  }
  return std::make_shared<const api::Pod>(std::move(pod));
}

class ScoreNodesTest : public ::testing::TestWithParam<std::string_view> {};

TEST_P(ScoreNodesTest, ChunksScoreEveryNodeAsScoreDoes) {
  for (unsigned seed = 1; seed <= 12; ++seed) {
    std::mt19937 rng(seed);
    Cluster cluster = RandomCluster(rng, 40 + static_cast<int>(seed) * 7);
    cache::Snapshot snapshot = cache::Snapshot::FromObjects(cluster.nodes, cluster.pods);
    CountingRecorder recorder;
    testing::FakeClusterLister lister;
    auto fw = runtime::NewFramework(InTreeRegistry(), WithFitStrategy(GetParam()),
                                    {.snapshot = &snapshot, .lister = &lister, .parallelism = 2,
                                     .metrics = &recorder});
    ASSERT_TRUE(fw.ok()) << fw.status().ToString();
    std::vector<cache::NodeInfoPtr> nodes(snapshot.List().begin(), snapshot.List().end());
    for (int i = 0; i < 15; ++i) {
      api::PodPtr pod = RandomPod(rng, i);
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
