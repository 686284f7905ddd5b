// PreFilter and PreScore read the snapshot's pod groups (cache/pod_groups.h) instead of
// walking every node and pod as upstream does. These tests generate random clusters and
// pods and check the plugin against that walk, written out here as upstream's
// filtering.go / scoring.go do it.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "pkg/framework/plugins/interpodaffinity/common.h"
#include "pkg/framework/plugins/interpodaffinity/test_util.h"
#include "tests/fakes/random_cluster.h"

namespace ksched::framework::plugins::interpodaffinity {
namespace {

using namespace testutil;  // NOLINT: the fixtures' shorthands

const std::vector<std::string> kKeys = {testing::kRandomHostname, testing::kRandomZone, testing::kRandomRegion};

// Pods in namespaces ns0 (team=a), ns1 (team=b) and ns2 (unknown) with random labels and,
// usually, one of a few affinities shared between pods.
const testing::RandomCluster::PodOptions kPods{.prefix = "p",
                                               .namespaces = {"ns0", "ns1", "ns2"},
                                               .requests = false,
                                               .tolerations = false,
                                               .node_affinity = false,
                                               .images = false,
                                               .labels = true,
                                               .pod_affinity = true};

// 12 nodes with sparse topology labels and 60 pods on them.
std::unique_ptr<testutil::Env> MakeEnv(testing::RandomCluster& r, const config::InterPodAffinityArgs& args) {
  std::vector<api::NodePtr> nodes = r.Nodes(12, {.prefix = "node",
                                                 .resources = false,
                                                 .taints = false,
                                                 .images = false,
                                                 .sparse_topology = true});
  std::vector<api::PodPtr> pods;
  for (int i = 0; i < 60; ++i) pods.push_back(r.Pod(i, kPods, "node" + std::to_string(r.Pick(12))));
  auto env = std::make_unique<testutil::Env>(nodes, pods, args);
  env->lister.namespaces["ns0"] = {{"team", "a"}};
  env->lister.namespaces["ns1"] = {{"team", "b"}};
  return env;
}

api::PodPtr Incoming(testing::RandomCluster& r, int i) {
  testing::RandomCluster::PodOptions o = kPods;
  o.prefix = "incoming";
  return r.Pod(i, o);
}

const api::PodAffinityTerms* TermsOf(const cache::PodEntry& e, std::shared_ptr<const api::PodAffinityTerms>& holder) {
  if (e.affinity_terms != nullptr) return e.affinity_terms.get();
  holder = api::ParsePodAffinityTerms(*e.pod);
  return holder.get();
}

void Count(TopologyCounts& counts, const api::AffinityTerm& t, const api::StringMap& node_labels) {
  if (const std::string* v = node_labels.Get(t.topology_key)) counts.Add(t.topology_key, *v, 1);
}

// upstream getExistingAntiAffinityCounts and getIncomingAffinityAntiAffinityCounts, pod
// by pod over every node, with the terms and namespace labels PreFilter resolved.
PreFilterState WalkedPreFilterState(const cache::Snapshot& snapshot, const api::Pod& pod, const PreFilterState& got) {
  PreFilterState want;
  for (const cache::NodeInfoPtr& info : snapshot.List()) {
    const api::StringMap& labels = info->node()->metadata.labels;
    for (const cache::PodEntry& e : info->pods()) {
      std::shared_ptr<const api::PodAffinityTerms> holder;
      if (const api::PodAffinityTerms* existing = TermsOf(e, holder)) {
        for (const api::AffinityTerm& t : existing->required_anti_affinity) {
          if (t.Matches(pod, &got.namespace_labels)) Count(want.existing_anti_affinity, t, labels);
        }
      }
      if (PodMatchesAllTerms(got.terms->required_affinity, *e.pod)) {
        for (const api::AffinityTerm& t : got.terms->required_affinity) Count(want.affinity, t, labels);
      }
      for (const api::AffinityTerm& t : got.terms->required_anti_affinity) {
        if (t.Matches(*e.pod, nullptr)) Count(want.anti_affinity, t, labels);
      }
    }
  }
  return want;
}

// upstream PreScore's processExistingPod over every node, then Score for `node`.
int64_t WalkedScore(const cache::Snapshot& snapshot, const api::Pod& pod, const api::ClusterLister& lister,
                    const config::InterPodAffinityArgs& args, const cache::NodeInfo& node) {
  const auto [preferred, preferred_anti] = ResolvePreferredTerms(api::ParsePodAffinityTerms(pod).get(), lister);
  const api::StringMap ns_labels = NamespaceLabels(lister, pod.metadata.namespace_);
  TopologyCounts scores;
  const auto process = [&](const api::AffinityTerm& t, int64_t weight, bool matches, const api::StringMap& labels) {
    const std::string* v = labels.Get(t.topology_key);
    if (matches && v != nullptr) scores.Add(t.topology_key, *v, weight, /*erase_zero=*/false);
  };
  for (const cache::NodeInfoPtr& info : snapshot.List()) {
    const api::StringMap& labels = info->node()->metadata.labels;
    for (const cache::PodEntry& e : info->pods()) {
      for (const auto& t : preferred) process(t.term, t.weight, t.term.Matches(*e.pod, nullptr), labels);
      for (const auto& t : preferred_anti) process(t.term, -t.weight, t.term.Matches(*e.pod, nullptr), labels);
      std::shared_ptr<const api::PodAffinityTerms> holder;
      const api::PodAffinityTerms* existing = TermsOf(e, holder);
      if (existing == nullptr) continue;
      if (args.hard_pod_affinity_weight > 0) {
        for (const auto& t : existing->required_affinity) {
          process(t, args.hard_pod_affinity_weight, t.Matches(pod, &ns_labels), labels);
        }
      }
      for (const auto& t : existing->preferred_affinity) process(t.term, t.weight, t.term.Matches(pod, &ns_labels), labels);
      for (const auto& t : existing->preferred_anti_affinity) {
        process(t.term, -t.weight, t.term.Matches(pod, &ns_labels), labels);
      }
    }
  }
  return scores.Sum(node.node()->metadata.labels);
}

TEST(InterPodAffinityPodGroups, PreFilterCountsWhatTheWalkCounts) {
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    testing::RandomCluster r(seed);
    std::unique_ptr<Env> env_holder = MakeEnv(r, {});
    Env& env = *env_holder;
    for (int i = 0; i < 20; ++i) {
      api::PodPtr pod = Incoming(r, i);
      CycleState state;
      PreFilterResult result;
      Status s = env.plugin.PreFilter(state, *pod, result);
      ASSERT_TRUE(s.IsSuccess() || s.IsSkip()) << s.ToString();
      if (s.IsSkip()) {
        // Nothing to count: no required terms, and no existing anti-affinity matches.
        ASSERT_FALSE(api::HasRequiredPodAntiAffinity(*pod));
        continue;
      }
      const auto* got = state.Read<PreFilterState>(kPreFilterStateKey);
      ASSERT_NE(got, nullptr);
      PreFilterState want = WalkedPreFilterState(env.handle.Snapshot(), *pod, *got);
      EXPECT_EQ(got->existing_anti_affinity, want.existing_anti_affinity) << "pod " << i;
      EXPECT_EQ(got->affinity, want.affinity) << "pod " << i;
      EXPECT_EQ(got->anti_affinity, want.anti_affinity) << "pod " << i;
      // And Filter, which reads the shared counts, agrees with the walked ones.
      for (const cache::NodeInfoPtr& info : env.handle.Snapshot().List()) {
        const api::StringMap& labels = info->node()->metadata.labels;
        EXPECT_EQ(got->existing_anti_affinity.AnyPositive(labels), want.existing_anti_affinity.AnyPositive(labels));
        for (const std::string& key : kKeys) {
          const std::string* v = labels.Get(key);
          if (v == nullptr) continue;
          EXPECT_EQ(got->affinity.Get(key, *v), want.affinity.Get(key, *v));
          EXPECT_EQ(got->anti_affinity.Get(key, *v), want.anti_affinity.Get(key, *v));
        }
      }
    }
  }
}

TEST(InterPodAffinityPodGroups, PreScoreScoresWhatTheWalkScores) {
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    testing::RandomCluster r(seed);
    config::InterPodAffinityArgs args;
    args.hard_pod_affinity_weight = r.Pick(3) * 3;  // 0, 3 or 6
    std::unique_ptr<Env> env_holder = MakeEnv(r, args);
    Env& env = *env_holder;
    const cache::Snapshot& snapshot = env.handle.Snapshot();
    for (int i = 0; i < 20; ++i) {
      api::PodPtr pod = Incoming(r, i);
      CycleState state;
      Status s = env.plugin.PreScore(state, *pod, snapshot.List());
      ASSERT_TRUE(s.IsSuccess() || s.IsSkip()) << s.ToString();
      for (const cache::NodeInfoPtr& info : snapshot.List()) {
        const int64_t want = WalkedScore(snapshot, *pod, env.lister, args, *info);
        int64_t got = 0;
        if (s.IsSuccess()) {
          ASSERT_TRUE(env.plugin.Score(state, *pod, *info, got).IsSuccess());
        }
        EXPECT_EQ(got, want) << "pod " << i << " on " << info->name();
      }
    }
  }
}

}  // namespace
}  // namespace ksched::framework::plugins::interpodaffinity
