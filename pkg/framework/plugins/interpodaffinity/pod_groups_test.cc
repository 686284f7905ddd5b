// PreFilter and PreScore read the snapshot's pod groups (cache/pod_groups.h) instead of
// walking every node and pod as upstream does. These tests generate random clusters and
// pods and check the plugin against that walk, written out here as upstream's
// filtering.go / scoring.go do it.
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "pkg/framework/plugins/interpodaffinity/common.h"
#include "pkg/framework/plugins/interpodaffinity/test_util.h"

namespace ksched::framework::plugins::interpodaffinity {
namespace {

using namespace testutil;  // NOLINT: the fixtures' shorthands

const std::vector<std::string> kKeys = {"kubernetes.io/hostname", "topology.kubernetes.io/zone", "region"};

class RandomCluster {
 public:
  explicit RandomCluster(uint32_t seed) : rng_(seed) {
    for (int i = 0; i < 8; ++i) affinities_.push_back(RandomAffinity());
  }

  int Pick(int n) { return static_cast<int>(rng_() % static_cast<uint32_t>(n)); }

  // 12 nodes and 60 pods, in namespaces ns0 (team=a), ns1 (team=b) and ns2 (unknown).
  std::unique_ptr<testutil::Env> MakeEnv(const config::InterPodAffinityArgs& args) {
    std::vector<api::NodePtr> nodes = Nodes(12);
    std::vector<api::PodPtr> pods;
    for (int i = 0; i < 60; ++i) pods.push_back(Pod("p" + std::to_string(i), "node" + std::to_string(Pick(12))));
    auto env = std::make_unique<testutil::Env>(nodes, pods, args);
    env->lister.namespaces["ns0"] = {{"team", "a"}};
    env->lister.namespaces["ns1"] = {{"team", "b"}};
    return env;
  }

  std::vector<api::NodePtr> Nodes(int n) {
    std::vector<api::NodePtr> nodes;
    for (int i = 0; i < n; ++i) {
      api::StringMap labels;
      if (Pick(8) != 0) labels.Set(kKeys[0], Pick(6) == 0 ? "shared" : "node" + std::to_string(i));
      if (Pick(5) != 0) labels.Set(kKeys[1], "z" + std::to_string(Pick(3)));
      if (Pick(2) != 0) labels.Set(kKeys[2], "r" + std::to_string(Pick(2)));
      nodes.push_back(NodeWith("node" + std::to_string(i), std::move(labels)));
    }
    return nodes;
  }

  // A pod in one of three namespaces with random labels and, usually, one of a few
  // affinities shared between pods as the decoder shares a workload's.
  api::PodPtr Pod(const std::string& name, const std::string& node) {
    api::Pod p;
    p.metadata.name = name;
    p.metadata.uid = "uid-" + name;
    p.metadata.namespace_ = "ns" + std::to_string(Pick(3));
    p.spec.node_name = node;
    if (Pick(5) != 0) p.metadata.labels.Set("app", "a" + std::to_string(Pick(3)));
    if (Pick(3) == 0) p.metadata.labels.Set("tier", "t" + std::to_string(Pick(2)));
    if (const int a = Pick(10); a < 8) p.spec.affinity = affinities_[static_cast<size_t>(a)];
    else if (a == 8) p.spec.affinity = RandomAffinity();
    return std::make_shared<const api::Pod>(std::move(p));
  }

 private:
  api::PodAffinityTerm RandomTerm() {
    std::vector<Req> reqs;
    switch (Pick(5)) {
      case 0: reqs.push_back(In("app", {"a0"})); break;
      case 1: reqs.push_back(In("app", {"a0", "a1"})); break;
      case 2: reqs.push_back(Exists("app")); break;
      case 3: reqs.push_back(NotIn("tier", {"t0"})); break;
      default: break;  // an empty selector: every pod
    }
    std::vector<std::string> namespaces;
    if (Pick(3) == 0) namespaces = {"ns" + std::to_string(Pick(3))};
    api::PodAffinityTerm t = Term(std::move(reqs), kKeys[static_cast<size_t>(Pick(3))], std::move(namespaces));
    if (const int s = Pick(6); s == 0) t = WithNsSelector(std::move(t), {In("team", {"a"})});
    else if (s == 1) t = WithNsSelector(std::move(t), {});
    if (Pick(8) == 0) t.match_label_keys = {"tier"};
    return t;
  }
  Terms RandomTerms() {
    Terms terms;
    for (int n = Pick(3) == 0 ? 1 + Pick(2) : 0; n > 0; --n) terms.push_back(RandomTerm());
    return terms;
  }
  Weighted RandomWeighted() {
    Weighted terms;
    for (int n = Pick(3) == 0 ? 1 + Pick(2) : 0; n > 0; --n) terms.push_back({1 + Pick(100), RandomTerm()});
    return terms;
  }
  api::Affinity RandomAffinity() {
    api::Affinity a;
    api::PodAffinity& pa = a.pod_affinity.emplace();
    pa.required = RandomTerms();
    pa.preferred = RandomWeighted();
    api::PodAffinity& anti = a.pod_anti_affinity.emplace();
    anti.required = RandomTerms();
    anti.preferred = RandomWeighted();
    return a;
  }

  std::mt19937 rng_;
  std::vector<api::SharedOptional<api::Affinity>> affinities_;
};

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
    RandomCluster r(seed);
    std::unique_ptr<Env> env_holder = r.MakeEnv({});
    Env& env = *env_holder;
    for (int i = 0; i < 20; ++i) {
      api::PodPtr pod = r.Pod("incoming" + std::to_string(i), "");
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
    RandomCluster r(seed);
    config::InterPodAffinityArgs args;
    args.hard_pod_affinity_weight = r.Pick(3) * 3;  // 0, 3 or 6
    std::unique_ptr<Env> env_holder = r.MakeEnv(args);
    Env& env = *env_holder;
    const cache::Snapshot& snapshot = env.handle.Snapshot();
    for (int i = 0; i < 20; ++i) {
      api::PodPtr pod = r.Pod("incoming" + std::to_string(i), "");
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
