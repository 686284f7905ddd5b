#include "pkg/cache/snapshot.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "pkg/cache/cache.h"
#include "pkg/cache/cache_test_util.h"

namespace ksched::cache {
namespace {

using testing::MakeNode;
using testing::MakePod;
using testing::MakeZonedNode;
using testing::Res;
using testing::WithChange;
using Names = std::vector<std::string>;

Names NamesOf(std::span<const NodeInfoPtr> infos) {
  Names out;
  for (const auto& i : infos) out.push_back(i->name());
  return out;
}

// The affinity lists are sets: the incremental update appends and swap-removes, so
// their order is not the node list's.
Names SortedNamesOf(std::span<const NodeInfoPtr> infos) {
  Names out = NamesOf(infos);
  std::sort(out.begin(), out.end());
  return out;
}

// The pod groups of a snapshot as sorted lines, one per group and topology key: namespace,
// labels, whether the members have affinity terms, how many there are, and their counts
// per value (keys not tracked yet are tracked now).
Names GroupLines(const Snapshot& snap, const Names& keys) {
  Names out;
  for (const PodGroup* g : snap.PodGroups().groups()) {
    std::string head = g->pod->metadata.namespace_ + " {";
    for (const auto& [k, v] : g->pod->metadata.labels) head += k + "=" + v + ",";
    head += g->terms != nullptr ? "} terms " : "} - ";
    head += g->pod->IsBeingDeleted() ? "deleting " : "";
    head += std::to_string(g->members);
    for (const std::string& key : keys) {
      Names values;
      g->Counts(snap.TrackTopologyKey(key)).ForEach([&](std::string_view v, int64_t n) {
        values.push_back(std::string(v) + "=" + std::to_string(n));
      });
      std::sort(values.begin(), values.end());
      std::string line = head + " " + key + ": without key " + std::to_string(g->Counts(snap.TrackTopologyKey(key)).without_key());
      for (const auto& v : values) line += " " + v;
      out.push_back(line);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

const Names kTopologyKeys = {"kubernetes.io/hostname", "topology.kubernetes.io/zone"};

// The snapshot agrees with a fresh one and with itself (every list entry is the object
// Get returns, never a stale copy).
void ExpectSound(Cache& cache, const Snapshot& snap, const std::string& ctx) {
  Snapshot fresh;
  ASSERT_TRUE(cache.UpdateSnapshot(fresh).ok()) << ctx;
  EXPECT_EQ(NamesOf(snap.List()), NamesOf(fresh.List())) << ctx;
  EXPECT_EQ(SortedNamesOf(snap.HavePodsWithAffinity()), SortedNamesOf(fresh.HavePodsWithAffinity())) << ctx;
  EXPECT_EQ(SortedNamesOf(snap.HavePodsWithRequiredAntiAffinity()),
            SortedNamesOf(fresh.HavePodsWithRequiredAntiAffinity()))
      << ctx;
  for (const auto& info : snap.List()) {
    const NodeInfo* f = fresh.Get(info->name());
    ASSERT_NE(f, nullptr) << ctx;
    EXPECT_EQ(snap.Get(info->name()), info.get()) << ctx;
    EXPECT_EQ(info->requested(), f->requested()) << ctx << " " << info->name();
    EXPECT_EQ(info->pods().size(), f->pods().size()) << ctx << " " << info->name();
    EXPECT_EQ(info->node_ptr(), f->node_ptr()) << ctx;
  }
  for (const auto& list : {snap.HavePodsWithAffinity(), snap.HavePodsWithRequiredAntiAffinity()}) {
    for (const auto& info : list) EXPECT_EQ(snap.Get(info->name()), info.get()) << ctx << " stale affinity entry";
  }
  EXPECT_EQ(GroupLines(snap, kTopologyKeys), GroupLines(fresh, kTopologyKeys)) << ctx;
  // GroupOf answers every pod of a node that has its Node object with the group it
  // belongs to (the plugins read a node's pods through it), and no other pod.
  for (const auto& info : snap.List()) {
    for (const PodEntry& e : info->pods()) {
      const PodGroup* g = snap.PodGroups().GroupOf(e.pod.get());
      if (info->node() == nullptr) {
        EXPECT_EQ(g, nullptr) << ctx << " " << e.pod->metadata.name;
        continue;
      }
      ASSERT_NE(g, nullptr) << ctx << " " << e.pod->metadata.name;
      EXPECT_EQ(g->pod->metadata.namespace_, e.pod->metadata.namespace_) << ctx;
      EXPECT_EQ(g->pod->metadata.labels, e.pod->metadata.labels) << ctx;
      EXPECT_EQ(g->pod->IsBeingDeleted(), e.pod->IsBeingDeleted()) << ctx;
      EXPECT_GT(g->members, 0) << ctx;
    }
  }
  const api::Pod elsewhere;
  EXPECT_EQ(snap.PodGroups().GroupOf(&elsewhere), nullptr) << ctx;
}

TEST(UpdateSnapshotTest, OperationSequences) {
  auto affinity_pod = [](const std::string& name, const std::string& node) {
    return MakePod(name, node, {}, [](api::Pod& p) { p.spec.affinity = testing::PodAffinityPreferred(); });
  };
  auto anti_pod = [](const std::string& name, const std::string& node) {
    return MakePod(name, node, {}, [](api::Pod& p) { p.spec.affinity = testing::AntiAffinityRequired(); });
  };
  using Op = std::function<void(Cache&)>;
  auto add_node = [](const std::string& n) -> Op { return [n](Cache& c) { ASSERT_TRUE(c.AddNode(MakeNode(n)).ok()); }; };
  auto remove_node = [](const std::string& n) -> Op {
    return [n](Cache& c) { ASSERT_TRUE(c.RemoveNode(*MakeNode(n)).ok()); };
  };
  auto add_pod = [](api::PodPtr p) -> Op { return [p](Cache& c) { ASSERT_TRUE(c.AddPod(p).ok()); }; };
  auto remove_pod = [](api::PodPtr p) -> Op { return [p](Cache& c) { ASSERT_TRUE(c.RemovePod(*p).ok()); }; };
  auto update_pod = [](api::PodPtr o, api::PodPtr n) -> Op {
    return [o, n](Cache& c) { ASSERT_TRUE(c.UpdatePod(*o, n).ok()); };
  };
  auto plain = MakePod("plain", "n1", Res({{"cpu", "1"}}));
  auto aff = affinity_pod("aff", "n2");
  auto anti = anti_pod("anti", "n3");

  struct Case {
    const char* name;
    std::vector<Op> ops;
    Names list, with_affinity, with_anti;
  };
  const Case cases[] = {
      {"empty", {}, {}, {}, {}},
      {"add nodes", {add_node("n1"), add_node("n2"), add_node("n3")}, {"n1", "n2", "n3"}, {}, {}},
      {"add and remove nodes",
       {add_node("n1"), add_node("n2"), remove_node("n1"), add_node("n3"), add_node("n1")},
       {"n2", "n3", "n1"}, {}, {}},
      {"pods with affinity",
       {add_node("n1"), add_node("n2"), add_node("n3"), add_pod(plain), add_pod(aff), add_pod(anti)},
       {"n1", "n2", "n3"}, {"n2", "n3"}, {"n3"}},
      {"affinity pod removed",
       {add_node("n1"), add_node("n2"), add_node("n3"), add_pod(aff), add_pod(anti), remove_pod(aff)},
       {"n1", "n2", "n3"}, {"n3"}, {"n3"}},
      {"affinity node keeps changing",
       {add_node("n2"), add_pod(aff), add_pod(MakePod("x", "n2", Res({{"cpu", "1"}}))),
        update_pod(aff, WithChange(aff, [](api::Pod& p) { p.metadata.labels.Set("k", "v"); }))},
       {"n2"}, {"n2"}, {}},
      {"pod before its node, node removed with pods",
       {add_pod(plain), add_node("n2"), add_node("n1"), add_pod(anti), add_node("n3"), remove_node("n3")},
       {"n2", "n1"}, {}, {}},
      {"affinity pods arrive on later nodes first, then leave from the middle",
       {add_node("n1"), add_node("n2"), add_node("n3"), add_pod(anti), add_pod(anti_pod("anti1", "n1")),
        add_pod(affinity_pod("aff1", "n1")), add_pod(aff), remove_pod(anti)},
       {"n1", "n2", "n3"}, {"n1", "n2"}, {"n1"}},
      {"ghost removed then node re-added",
       {add_node("n3"), add_pod(anti), remove_node("n3"), remove_pod(anti), add_node("n3")},
       {"n3"}, {}, {}},
  };
  for (const auto& c : cases) {
    auto cache = NewCache();
    Snapshot snap;
    // Update after every step (the incremental path) and check at the end.
    for (const auto& op : c.ops) {
      op(*cache);
      ASSERT_TRUE(cache->UpdateSnapshot(snap).ok()) << c.name;
    }
    EXPECT_EQ(NamesOf(snap.List()), c.list) << c.name;
    EXPECT_EQ(SortedNamesOf(snap.HavePodsWithAffinity()), c.with_affinity) << c.name;
    EXPECT_EQ(SortedNamesOf(snap.HavePodsWithRequiredAntiAffinity()), c.with_anti) << c.name;
    ExpectSound(*cache, snap, c.name);

    // One update after all steps ends in the same place.
    auto cache2 = NewCache();
    Snapshot snap2;
    ASSERT_TRUE(cache2->UpdateSnapshot(snap2).ok());
    for (const auto& op : c.ops) op(*cache2);
    ASSERT_TRUE(cache2->UpdateSnapshot(snap2).ok()) << c.name;
    EXPECT_EQ(NamesOf(snap2.List()), c.list) << c.name << " (batched)";
    ExpectSound(*cache2, snap2, std::string(c.name) + " (batched)");
  }
}

// Pod groups kept up to date across random changes (pods added, relabelled, moved and
// removed; nodes added, relabelled and removed; keys tracked part-way) count what a
// snapshot built afresh counts.
TEST(UpdateSnapshotTest, PodGroupsFollowRandomChanges) {
  std::mt19937 rng(7);
  const auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint32_t>(n)); };
  // Two shared affinities, as the decoder hands replicas one instance (pkg/api/shared.h).
  api::Pod anti_template, affinity_template;
  anti_template.spec.affinity = testing::AntiAffinityRequired();
  affinity_template.spec.affinity = testing::PodAffinityPreferred();

  auto cache = NewCache();
  Snapshot snap;
  std::map<std::string, api::NodePtr> nodes;
  std::map<std::string, api::PodPtr> pods;
  const auto make_node = [&](const std::string& name) {
    return MakeNode(name, "64", "256Gi", [&](api::Node& n) {
      n.metadata.labels.Set("kubernetes.io/hostname", pick(5) == 0 ? "shared-host" : name);
      if (pick(4) != 0) n.metadata.labels.Set("topology.kubernetes.io/zone", "z" + std::to_string(pick(3)));
    });
  };
  const auto make_pod = [&](const std::string& name, const std::string& node) {
    return MakePod(name, node, {}, [&](api::Pod& p) {
      p.metadata.namespace_ = pick(4) == 0 ? "other" : "default";
      p.metadata.labels.Set("app", "a" + std::to_string(pick(3)));
      if (pick(6) == 0) p.metadata.deletion_timestamp = "2026-11-26T00:00:00Z";
      if (const int kind = pick(3); kind == 1) p.spec.affinity = anti_template.spec.affinity;
      else if (kind == 2) p.spec.affinity = affinity_template.spec.affinity;
    });
  };
  for (int step = 0; step < 3000; ++step) {
    const std::string node_name = "n" + std::to_string(pick(12));
    const std::string pod_name = "p" + std::to_string(pick(60));
    const std::string ctx = "step " + std::to_string(step);
    switch (pick(7)) {
      case 0:  // a node comes, or changes its labels
        if (auto it = nodes.find(node_name); it == nodes.end()) {
          nodes[node_name] = make_node(node_name);
          ASSERT_TRUE(cache->AddNode(nodes[node_name]).ok()) << ctx;
        } else {
          auto updated = make_node(node_name);
          ASSERT_TRUE(cache->UpdateNode(*it->second, updated).ok()) << ctx;
          it->second = updated;
        }
        break;
      case 1:  // a node goes (its pods may stay a while)
        if (auto it = nodes.find(node_name); it != nodes.end() && pick(3) == 0) {
          ASSERT_TRUE(cache->RemoveNode(*it->second).ok()) << ctx;
          nodes.erase(it);
        }
        break;
      case 2:
      case 3:  // a pod comes, or is replaced by one with other labels and affinity
        if (auto it = pods.find(pod_name); it == pods.end()) {
          pods[pod_name] = make_pod(pod_name, node_name);
          ASSERT_TRUE(cache->AddPod(pods[pod_name]).ok()) << ctx;
        } else {
          auto updated = make_pod(pod_name, it->second->spec.node_name);
          ASSERT_TRUE(cache->UpdatePod(*it->second, updated).ok()) << ctx;
          it->second = updated;
        }
        break;
      case 4:  // a pod goes (and may come back elsewhere, under the same name)
        if (auto it = pods.find(pod_name); it != pods.end()) {
          ASSERT_TRUE(cache->RemovePod(*it->second).ok()) << ctx;
          pods.erase(it);
          if (pick(2) == 0) {
            pods[pod_name] = make_pod(pod_name, node_name);
            ASSERT_TRUE(cache->AddPod(pods[pod_name]).ok()) << ctx;
          }
        }
        break;
      case 5:  // a cycle asks for a key
        snap.TrackTopologyKey(kTopologyKeys[static_cast<size_t>(pick(2))]);
        break;
      default:
        break;
    }
    if (pick(3) == 0) {
      ASSERT_TRUE(cache->UpdateSnapshot(snap).ok()) << ctx;
    }
    if (step % 100 == 99) {
      ASSERT_TRUE(cache->UpdateSnapshot(snap).ok()) << ctx;
      ExpectSound(*cache, snap, ctx);
    }
  }
}

TEST(UpdateSnapshotTest, OnlyChangedNodeInfosAreCopied) {
  auto cache = NewCache();
  for (const char* n : {"n1", "n2", "n3"}) ASSERT_TRUE(cache->AddNode(MakeNode(n)).ok());
  Snapshot snap;
  ASSERT_TRUE(cache->UpdateSnapshot(snap).ok());
  std::vector<NodeInfoPtr> before(snap.List().begin(), snap.List().end());

  // Nothing changed: the same objects.
  ASSERT_TRUE(cache->UpdateSnapshot(snap).ok());
  for (size_t i = 0; i < before.size(); ++i) EXPECT_EQ(snap.List()[i], before[i]);

  ASSERT_TRUE(cache->AssumePod(MakePod("p", "n2", Res({{"cpu", "1"}}))).ok());
  const int64_t old_generation = snap.generation();
  ASSERT_TRUE(cache->UpdateSnapshot(snap).ok());
  EXPECT_GT(snap.generation(), old_generation);
  EXPECT_EQ(snap.List()[0], before[0]);
  EXPECT_NE(snap.List()[1], before[1]);
  EXPECT_EQ(snap.List()[2], before[2]);
  EXPECT_EQ(snap.Get("n2"), snap.List()[1].get());
  EXPECT_EQ(snap.Get("n2")->requested().milli_cpu, 1000);
  // What the previous cycle held is untouched (it may still be in use by a binding).
  EXPECT_EQ(before[1]->requested().milli_cpu, 0);
  EXPECT_TRUE(before[1]->pods().empty());
}

TEST(UpdateSnapshotTest, AffinityListsNeverHoldStaleCopies) {
  auto cache = NewCache();
  ASSERT_TRUE(cache->AddNode(MakeNode("n1")).ok());
  ASSERT_TRUE(cache->AddPod(MakePod("aff", "n1", {}, [](api::Pod& p) {
                      p.spec.affinity = testing::AntiAffinityRequired();
                    })).ok());
  Snapshot snap;
  ASSERT_TRUE(cache->UpdateSnapshot(snap).ok());
  // Membership does not flip, but the node changes: the lists must follow.
  ASSERT_TRUE(cache->AddPod(MakePod("x", "n1", Res({{"cpu", "1"}}))).ok());
  ASSERT_TRUE(cache->UpdateSnapshot(snap).ok());
  ASSERT_EQ(snap.HavePodsWithAffinity().size(), 1u);
  EXPECT_EQ(snap.HavePodsWithAffinity()[0], snap.List()[0]);
  EXPECT_EQ(snap.HavePodsWithRequiredAntiAffinity()[0], snap.List()[0]);
  EXPECT_EQ(snap.HavePodsWithAffinity()[0]->pods().size(), 2u);
}

TEST(UpdateSnapshotTest, ZoneInterleavedOrder) {
  auto cache = NewCache();
  for (const auto& n : {MakeZonedNode("a1", "r", "za"), MakeZonedNode("a2", "r", "za"), MakeZonedNode("a3", "r", "za"),
                        MakeZonedNode("b1", "r", "zb"), MakeZonedNode("b2", "r", "zb"), MakeZonedNode("c1", "r", "zc")}) {
    ASSERT_TRUE(cache->AddNode(n).ok());
  }
  Snapshot snap;
  ASSERT_TRUE(cache->UpdateSnapshot(snap).ok());
  EXPECT_EQ(NamesOf(snap.List()), (Names{"a1", "b1", "c1", "a2", "b2", "a3"}));

  // A node moving zone moves in the order too.
  ASSERT_TRUE(cache->UpdateNode(*MakeZonedNode("a1", "r", "za"), MakeZonedNode("a1", "r", "zc")).ok());
  ASSERT_TRUE(cache->UpdateSnapshot(snap).ok());
  EXPECT_EQ(NamesOf(snap.List()), (Names{"a2", "b1", "c1", "a3", "b2", "a1"}));
}

TEST(UpdateSnapshotTest, InconsistentSnapshotIsRebuiltAndReported) {
  // A snapshot last updated from another cache carries a generation this cache's older
  // NodeInfos do not exceed: the incremental walk skips them, the size check notices.
  auto cache = NewCache();
  ASSERT_TRUE(cache->AddNode(MakeNode("n1")).ok());
  auto other = NewCache();
  ASSERT_TRUE(other->AddNode(MakeNode("x1")).ok());
  ASSERT_TRUE(other->AddNode(MakeNode("x2")).ok());
  Snapshot snap;
  ASSERT_TRUE(other->UpdateSnapshot(snap).ok());

  Status s = cache->UpdateSnapshot(snap);
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_NE(s.message().find("snapshot state is not consistent"), std::string::npos);
  EXPECT_EQ(NamesOf(snap.List()), Names{"n1"});
  EXPECT_TRUE(cache->UpdateSnapshot(snap).ok());
}

TEST(SnapshotTest, FromObjects) {
  auto big = MakeNode("n1", "8", "16Gi", [](api::Node& n) {
    n.metadata.labels.Set("topology.kubernetes.io/zone", "a");
    n.status.images = {{{"img:1"}, 500}};
  });
  auto small = MakeNode("n2", "1", "1Gi", [](api::Node& n) {
    n.metadata.labels.Set("topology.kubernetes.io/zone", "b");
    n.status.images = {{{"img:1"}, 500}};
  });
  auto third = MakeNode("n3", "1", "1Gi", [](api::Node& n) { n.metadata.labels.Set("topology.kubernetes.io/zone", "a"); });
  Snapshot snap = Snapshot::FromObjects(
      {big, small, third},
      {MakePod("p1", "n1", Res({{"cpu", "1"}})), MakePod("p2", "n1", Res({{"cpu", "2"}})),
       MakePod("anti", "n2", {}, [](api::Pod& p) { p.spec.affinity = testing::AntiAffinityRequired(); }),
       MakePod("lost", "gone", Res({{"cpu", "1"}})), MakePod("pending", "")});
  EXPECT_EQ(NamesOf(snap.List()), (Names{"n1", "n2", "n3"}));
  EXPECT_EQ(snap.NumNodes(), 3u);
  ASSERT_NE(snap.Get("n1"), nullptr);
  EXPECT_EQ(snap.Get("n1")->requested().milli_cpu, 3000);
  EXPECT_EQ(snap.Get("n1")->allocatable().milli_cpu, 8000);
  EXPECT_EQ(snap.Get("n1")->image_states().at("img:1").num_nodes, 2);
  EXPECT_EQ(snap.Get("gone"), nullptr);
  EXPECT_EQ(NamesOf(snap.HavePodsWithAffinity()), Names{"n2"});
  EXPECT_EQ(NamesOf(snap.HavePodsWithRequiredAntiAffinity()), Names{"n2"});

  // Handed to a cache, a standalone snapshot is rebuilt from the cache's contents.
  auto cache = NewCache();
  ASSERT_TRUE(cache->AddNode(MakeNode("c1")).ok());
  ASSERT_TRUE(cache->UpdateSnapshot(snap).ok());
  EXPECT_EQ(NamesOf(snap.List()), Names{"c1"});
  EXPECT_EQ(snap.Get("n1"), nullptr);
}

}  // namespace
}  // namespace ksched::cache
