#include "pkg/cache/cache.h"

#include <gtest/gtest.h>

#include "pkg/cache/cache_test_util.h"

namespace ksched::cache {
namespace {

using testing::MakeNode;
using testing::MakePod;
using testing::Res;
using testing::WithChange;

constexpr int64_t kMi = 1024 * 1024;

// Records corruption reports instead of exiting, so tests can see them.
struct CorruptionLog {
  std::vector<std::string> messages;
  CacheOptions Options() {
    return CacheOptions{.on_corruption = [this](const std::string& m) { messages.push_back(m); }};
  }
};

// What a test expects of one node in the cache.
struct NodeWant {
  int64_t milli_cpu = 0;
  int64_t memory = 0;
  std::vector<std::string> pods;  // names, in arrival order
  bool has_node = true;
};

void ExpectNode(const CacheDump& dump, const std::string& name, const NodeWant& want, const std::string& ctx) {
  auto it = dump.nodes.find(name);
  ASSERT_NE(it, dump.nodes.end()) << ctx << ": node " << name << " missing";
  const NodeInfo& info = it->second;
  EXPECT_EQ(info.requested().milli_cpu, want.milli_cpu) << ctx;
  EXPECT_EQ(info.requested().memory, want.memory) << ctx;
  std::vector<std::string> pods;
  for (const auto& e : info.pods()) pods.push_back(e.pod->metadata.name);
  EXPECT_EQ(pods, want.pods) << ctx;
  EXPECT_EQ(info.node() != nullptr, want.has_node) << ctx;
}

auto Req(const char* cpu, const char* mem) { return Res({{"cpu", cpu}, {"memory", mem}}); }

TEST(CacheTest, AssumePodScheduled) {
  struct Case {
    const char* name;
    std::vector<api::PodPtr> pods;
    NodeWant want;
    size_t used_ports = 0;
    int64_t gpus = 0;
  };
  const Case cases[] = {
      {"one pod", {MakePod("a", "n1", Req("100m", "500"))}, {100, 500, {"a"}, false}},
      {"two pods add up",
       {MakePod("a", "n1", Req("100m", "500")), MakePod("b", "n1", Req("200m", "1Ki"))},
       {300, 1524, {"a", "b"}, false}},
      {"host ports are taken",
       {testing::WithHostPort(MakePod("a", "n1", Req("100m", "500")), 80),
        testing::WithHostPort(MakePod("b", "n1", Req("100m", "500")), 8080, "UDP", "127.0.0.1")},
       {200, 1000, {"a", "b"}, false},
       2},
      {"extended resources are counted",
       {MakePod("a", "n1", Res({{"cpu", "100m"}, {"example.com/gpu", "2"}}))},
       {100, 0, {"a"}, false},
       0,
       2},
  };
  for (const auto& c : cases) {
    auto cache = NewCache();
    for (const auto& p : c.pods) ASSERT_TRUE(cache->AssumePod(p).ok()) << c.name;
    CacheDump dump = cache->Dump();
    ExpectNode(dump, "n1", c.want, c.name);
    EXPECT_EQ(dump.nodes.at("n1").used_ports().size(), c.used_ports) << c.name;
    EXPECT_EQ(dump.nodes.at("n1").requested().Scalar("example.com/gpu"), c.gpus) << c.name;
    EXPECT_EQ(cache->AssumedPodCount(), c.pods.size()) << c.name;
    for (const auto& p : c.pods) EXPECT_TRUE(cache->IsAssumedPod(*p)) << c.name;

    // Assuming again fails; forgetting undoes everything, and the node (never seen as
    // an object) leaves with its last pod.
    EXPECT_EQ(cache->AssumePod(c.pods[0]).code(), StatusCode::kAlreadyExists) << c.name;
    for (const auto& p : c.pods) ASSERT_TRUE(cache->ForgetPod(*p).ok()) << c.name;
    EXPECT_EQ(cache->NodeCount(), 0u) << c.name;
    EXPECT_EQ(cache->PodCount(), 0u) << c.name;
  }
}

TEST(CacheTest, AssumePodNeedsANode) {
  auto cache = NewCache();
  EXPECT_EQ(cache->AssumePod(MakePod("a", "")).code(), StatusCode::kInvalidArgument);
}

TEST(CacheTest, AddPodWillConfirm) {
  auto cache = NewCache();
  auto a = MakePod("a", "n1", Req("100m", "500"));
  auto b = MakePod("b", "n1", Req("200m", "1Ki"));
  ASSERT_TRUE(cache->AssumePod(a).ok());
  ASSERT_TRUE(cache->AssumePod(b).ok());
  ASSERT_TRUE(cache->FinishBinding(*a).ok());
  ASSERT_TRUE(cache->AddPod(a).ok());

  EXPECT_FALSE(cache->IsAssumedPod(*a));
  EXPECT_TRUE(cache->IsAssumedPod(*b));
  EXPECT_EQ(cache->AssumedPodCount(), 1u);
  EXPECT_EQ(cache->PodCount(), 2u);
  CacheDump dump = cache->Dump();
  ExpectNode(dump, "n1", {300, 1524, {"b", "a"}, false}, "confirm");
  EXPECT_EQ(dump.assumed_pods, std::vector<std::string>{"default/b"});

  // A second Add for a confirmed pod is an error; the counts stay.
  EXPECT_EQ(cache->AddPod(a).code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(cache->PodCount(), 2u);
}

TEST(CacheTest, AddPodWillReplaceAssumed) {
  auto cache = NewCache();
  ASSERT_TRUE(cache->AddNode(MakeNode("n1")).ok());
  ASSERT_TRUE(cache->AddNode(MakeNode("n2")).ok());
  auto assumed = MakePod("p", "n1", Req("100m", "500"));
  ASSERT_TRUE(cache->AssumePod(assumed).ok());

  // The apiserver says the pod landed on n2 with a different request: the watch wins.
  auto added = MakePod("p", "n2", Req("200m", "500"));
  ASSERT_TRUE(cache->AddPod(added).ok());
  EXPECT_FALSE(cache->IsAssumedPod(*added));
  CacheDump dump = cache->Dump();
  ExpectNode(dump, "n1", {0, 0, {}}, "old node");
  ExpectNode(dump, "n2", {200, 500, {"p"}}, "new node");
  auto got = cache->GetPod(*assumed);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, added);

  // Now an added pod: updates work on it.
  auto updated = MakePod("p", "n2", Req("300m", "500"));
  ASSERT_TRUE(cache->UpdatePod(*added, updated).ok());
  ExpectNode(cache->Dump(), "n2", {300, 500, {"p"}}, "after update");
}

TEST(CacheTest, ForgetPod) {
  struct Case {
    const char* name;
    std::function<void(Cache&)> setup;
    api::PodPtr forget;
    StatusCode want;
    size_t pods_left;
  };
  auto a = MakePod("a", "n1", Req("100m", "500"));
  const Case cases[] = {
      {"assumed pod is forgotten", [&](Cache& c) { ASSERT_TRUE(c.AssumePod(a).ok()); }, a, StatusCode::kOk, 0},
      {"absent pod is a no-op", [](Cache&) {}, a, StatusCode::kOk, 0},
      {"assumed on another node", [&](Cache& c) { ASSERT_TRUE(c.AssumePod(a).ok()); },
       MakePod("a", "n2"), StatusCode::kFailedPrecondition, 1},
      {"added pods cannot be forgotten", [&](Cache& c) { ASSERT_TRUE(c.AddPod(a).ok()); }, a,
       StatusCode::kFailedPrecondition, 1},
  };
  for (const auto& c : cases) {
    auto cache = NewCache();
    c.setup(*cache);
    EXPECT_EQ(cache->ForgetPod(*c.forget).code(), c.want) << c.name;
    EXPECT_EQ(cache->PodCount(), c.pods_left) << c.name;
    if (c.pods_left == 0) {
      EXPECT_FALSE(cache->IsAssumedPod(*a)) << c.name;
      EXPECT_EQ(cache->GetPod(*a).status().code(), StatusCode::kNotFound) << c.name;
    }
  }
}

TEST(CacheTest, UpdatePod) {
  auto a = MakePod("a", "n1", Req("100m", "500"));
  struct Case {
    const char* name;
    std::function<void(Cache&)> setup;
    api::PodPtr new_pod;
    StatusCode want;
    NodeWant node;
    size_t corruptions = 0;
  };
  const Case cases[] = {
      {"added pod is replaced", [&](Cache& c) { ASSERT_TRUE(c.AddPod(a).ok()); },
       MakePod("a", "n1", Req("1", "1Ki")), StatusCode::kOk, {1000, 1024, {"a"}, false}},
      {"assumed pod cannot be updated", [&](Cache& c) { ASSERT_TRUE(c.AssumePod(a).ok()); },
       MakePod("a", "n1", Req("1", "1Ki")), StatusCode::kFailedPrecondition, {100, 500, {"a"}, false}},
      {"unknown pod", [](Cache& c) { ASSERT_TRUE(c.AddPod(MakePod("x", "n1")).ok()); },
       MakePod("a", "n1", Req("1", "1Ki")), StatusCode::kNotFound, {0, 0, {"x"}, false}},
      {"node change means the cache is corrupted", [&](Cache& c) { ASSERT_TRUE(c.AddPod(a).ok()); },
       MakePod("a", "n2", Req("1", "1Ki")), StatusCode::kInternal, {100, 500, {"a"}, false}, 1},
  };
  for (const auto& c : cases) {
    CorruptionLog log;
    auto cache = NewCache(log.Options());
    c.setup(*cache);
    EXPECT_EQ(cache->UpdatePod(*a, c.new_pod).code(), c.want) << c.name;
    ExpectNode(cache->Dump(), "n1", c.node, c.name);
    EXPECT_EQ(log.messages.size(), c.corruptions) << c.name;
  }
}

TEST(CacheTest, UpdatePodAndGet) {
  auto cache = NewCache();
  auto v1 = MakePod("a", "n1", Req("100m", "500"));
  auto v2 = WithChange(v1, [](api::Pod& p) { p.metadata.labels.Set("k", "v"); });
  ASSERT_TRUE(cache->AddPod(v1).ok());
  ASSERT_TRUE(cache->UpdatePod(*v1, v2).ok());
  auto got = cache->GetPod(*v1);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, v2);
}

TEST(CacheTest, RemovePod) {
  auto a = MakePod("a", "n1", Req("100m", "500"));
  struct Case {
    const char* name;
    std::function<void(Cache&)> setup;
    api::PodPtr remove;
    StatusCode want;
    NodeWant node;
    size_t corruptions = 0;
  };
  const Case cases[] = {
      {"added pod", [&](Cache& c) { ASSERT_TRUE(c.AddPod(a).ok()); }, a, StatusCode::kOk, {0, 0, {}}},
      {"assumed pod", [&](Cache& c) { ASSERT_TRUE(c.AssumePod(a).ok()); }, a, StatusCode::kOk, {0, 0, {}}},
      {"tombstone without a node name", [&](Cache& c) { ASSERT_TRUE(c.AddPod(a).ok()); }, MakePod("a", ""),
       StatusCode::kOk, {0, 0, {}}},
      {"absent pod", [](Cache&) {}, a, StatusCode::kNotFound, {0, 0, {}}},
      {"another node means the cache is corrupted", [&](Cache& c) { ASSERT_TRUE(c.AddPod(a).ok()); },
       MakePod("a", "n2"), StatusCode::kInternal, {100, 500, {"a"}}, 1},
  };
  for (const auto& c : cases) {
    CorruptionLog log;
    auto cache = NewCache(log.Options());
    ASSERT_TRUE(cache->AddNode(MakeNode("n1")).ok());
    c.setup(*cache);
    EXPECT_EQ(cache->RemovePod(*c.remove).code(), c.want) << c.name;
    ExpectNode(cache->Dump(), "n1", c.node, c.name);
    EXPECT_EQ(log.messages.size(), c.corruptions) << c.name;
    EXPECT_EQ(cache->AssumedPodCount(), 0u) << c.name;
  }
}

TEST(CacheTest, NodeOperators) {
  auto cache = NewCache();
  auto node = MakeNode("n1", "2", "4Gi");
  auto p1 = MakePod("p1", "n1", Req("500m", "1Gi"));
  auto p2 = testing::WithHostPort(MakePod("p2", "n1", Req("1", "1Gi")), 80);
  ASSERT_TRUE(cache->AddPod(p1).ok());  // pods may arrive before their node
  ASSERT_TRUE(cache->AddNode(node).ok());
  ASSERT_TRUE(cache->AddPod(p2).ok());

  CacheDump dump = cache->Dump();
  const NodeInfo& info = dump.nodes.at("n1");
  EXPECT_EQ(info.node_ptr(), node);
  EXPECT_EQ(info.allocatable().milli_cpu, 2000);
  EXPECT_EQ(info.allocatable().memory, 4096 * kMi);
  EXPECT_EQ(info.requested().milli_cpu, 1500);
  EXPECT_TRUE(info.used_ports().CheckConflict({"", "TCP", 80}));

  // Update: new allocatable, pods untouched.
  auto bigger = MakeNode("n1", "8", "16Gi");
  ASSERT_TRUE(cache->UpdateNode(*node, bigger).ok());
  dump = cache->Dump();
  EXPECT_EQ(dump.nodes.at("n1").allocatable().milli_cpu, 8000);
  EXPECT_EQ(dump.nodes.at("n1").requested().milli_cpu, 1500);

  // Remove: a ghost keeps the pods until they go; snapshots never show it.
  ASSERT_TRUE(cache->RemoveNode(*bigger).ok());
  EXPECT_EQ(cache->NodeCount(), 1u);
  ExpectNode(cache->Dump(), "n1", {1500, 2048 * kMi, {"p1", "p2"}, false}, "ghost");
  Snapshot snap;
  ASSERT_TRUE(cache->UpdateSnapshot(snap).ok());
  EXPECT_EQ(snap.NumNodes(), 0u);
  EXPECT_EQ(snap.Get("n1"), nullptr);
  EXPECT_EQ(cache->RemoveNode(*bigger).code(), StatusCode::kNotFound);

  ASSERT_TRUE(cache->RemovePod(*p1).ok());
  EXPECT_EQ(cache->NodeCount(), 1u);
  ASSERT_TRUE(cache->RemovePod(*p2).ok());
  EXPECT_EQ(cache->NodeCount(), 0u);  // the ghost went with its last pod
  EXPECT_EQ(cache->RemoveNode(*bigger).code(), StatusCode::kNotFound);
}

TEST(CacheTest, GhostNodeComesBack) {
  auto cache = NewCache();
  auto node = MakeNode("n1");
  ASSERT_TRUE(cache->AddNode(node).ok());
  ASSERT_TRUE(cache->AddPod(MakePod("p", "n1", Req("1", "1Ki"))).ok());
  ASSERT_TRUE(cache->RemoveNode(*node).ok());
  Snapshot snap;
  ASSERT_TRUE(cache->UpdateSnapshot(snap).ok());
  EXPECT_EQ(snap.NumNodes(), 0u);

  // Re-created before its pods' deletes arrived: the pods still count.
  ASSERT_TRUE(cache->AddNode(node).ok());
  ASSERT_TRUE(cache->UpdateSnapshot(snap).ok());
  ASSERT_EQ(snap.NumNodes(), 1u);
  EXPECT_EQ(snap.Get("n1")->requested().milli_cpu, 1000);
}

TEST(CacheTest, RemoveNodeWithoutPodsDropsIt) {
  auto cache = NewCache();
  auto node = MakeNode("n1");
  ASSERT_TRUE(cache->AddNode(node).ok());
  ASSERT_TRUE(cache->RemoveNode(*node).ok());
  EXPECT_EQ(cache->NodeCount(), 0u);
  EXPECT_TRUE(cache->Dump().nodes.empty());
}

TEST(CacheTest, ImageStates) {
  auto with_images = [](const std::string& name, std::vector<api::ContainerImage> images) {
    return MakeNode(name, "1", "1Gi", [&](api::Node& n) { n.status.images = images; });
  };
  const api::ContainerImage shared{{"registry/app:v1", "registry/app@sha256:abc"}, 100 * kMi};
  const api::ContainerImage only_b{{"registry/db:v2"}, 300 * kMi};

  auto cache = NewCache();
  auto a = with_images("a", {shared});
  ASSERT_TRUE(cache->AddNode(a).ok());
  ASSERT_TRUE(cache->AddNode(with_images("b", {shared, only_b})).ok());

  CacheDump dump = cache->Dump();
  const ImageStates& b_states = dump.nodes.at("b").image_states();
  ASSERT_EQ(b_states.size(), 3u);  // every name of an image is an entry
  EXPECT_EQ(b_states.at("registry/app:v1").num_nodes, 2);
  EXPECT_EQ(b_states.at("registry/app@sha256:abc").size, 100 * kMi);
  EXPECT_EQ(b_states.at("registry/db:v2").num_nodes, 1);
  // The cache's own summaries are taken when a node is set; "a" saw only itself...
  EXPECT_EQ(dump.nodes.at("a").image_states().at("registry/app:v1").num_nodes, 1);
  // ...until its next update (snapshots count afresh: ImageCountsInSnapshots).
  ASSERT_TRUE(cache->UpdateNode(*a, a).ok());
  EXPECT_EQ(cache->Dump().nodes.at("a").image_states().at("registry/app:v1").num_nodes, 2);

  // Removing "b" takes it out of the per-image node sets.
  ASSERT_TRUE(cache->RemoveNode(*with_images("b", {})).ok());
  ASSERT_TRUE(cache->AddNode(with_images("c", {shared, only_b})).ok());
  dump = cache->Dump();
  EXPECT_EQ(dump.nodes.at("c").image_states().at("registry/app:v1").num_nodes, 2);  // a and c
  EXPECT_EQ(dump.nodes.at("c").image_states().at("registry/db:v2").num_nodes, 1);

  // A node that drops an image on update leaves that image's set.
  ASSERT_TRUE(cache->UpdateNode(*a, with_images("a", {})).ok());
  ASSERT_TRUE(cache->UpdateNode(*a, with_images("c", {shared})).ok());
  EXPECT_EQ(cache->Dump().nodes.at("c").image_states().at("registry/app:v1").num_nodes, 1);
  EXPECT_TRUE(cache->Dump().nodes.at("a").image_states().empty());
}

// As today's upstream: a NodeInfo copied into a snapshot counts the nodes that have each
// image at the time of the copy, so the counts do not depend on the order in which the
// nodes were added; a node not copied again keeps its last count.
TEST(CacheTest, ImageCountsInSnapshots) {
  auto with_images = [](const std::string& name, std::vector<api::ContainerImage> images) {
    return MakeNode(name, "4", "8Gi", [&](api::Node& n) { n.status.images = images; });
  };
  const api::ContainerImage app{{"registry/app:v1"}, 100 * kMi};
  for (bool a_first : {true, false}) {
    SCOPED_TRACE(a_first ? "a added first" : "b added first");
    auto cache = NewCache();
    std::vector<std::string> order = a_first ? std::vector<std::string>{"a", "b"} : std::vector<std::string>{"b", "a"};
    for (const std::string& n : order) ASSERT_TRUE(cache->AddNode(with_images(n, {app})).ok());
    Snapshot snapshot;
    ASSERT_TRUE(cache->UpdateSnapshot(snapshot).ok());
    EXPECT_EQ(snapshot.Get("a")->image_states().at("registry/app:v1").num_nodes, 2);
    EXPECT_EQ(snapshot.Get("b")->image_states().at("registry/app:v1").num_nodes, 2);

    ASSERT_TRUE(cache->AddNode(with_images("c", {app})).ok());
    ASSERT_TRUE(cache->UpdateSnapshot(snapshot).ok());
    EXPECT_EQ(snapshot.Get("c")->image_states().at("registry/app:v1").num_nodes, 3);
    EXPECT_EQ(snapshot.Get("a")->image_states().at("registry/app:v1").num_nodes, 2);  // not copied again
    ASSERT_TRUE(cache->AddPod(MakePod("p", "a")).ok());
    ASSERT_TRUE(cache->UpdateSnapshot(snapshot).ok());
    EXPECT_EQ(snapshot.Get("a")->image_states().at("registry/app:v1").num_nodes, 3);
  }
}

TEST(CacheTest, DumpAndCounters) {
  auto cache = NewCache();
  ASSERT_TRUE(cache->AddNode(MakeNode("n1")).ok());
  ASSERT_TRUE(cache->AddNode(MakeNode("n2")).ok());
  ASSERT_TRUE(cache->AddPod(MakePod("added", "n1")).ok());
  ASSERT_TRUE(cache->AssumePod(MakePod("z-assumed", "n2")).ok());
  ASSERT_TRUE(cache->AssumePod(MakePod("a-assumed", "n3")).ok());
  EXPECT_EQ(cache->NodeCount(), 3u);  // n3 is known only through its pod
  EXPECT_EQ(cache->PodCount(), 3u);
  EXPECT_EQ(cache->AssumedPodCount(), 2u);
  CacheDump dump = cache->Dump();
  EXPECT_EQ(dump.nodes.size(), 3u);
  EXPECT_EQ(dump.assumed_pods, (std::vector<std::string>{"default/a-assumed", "default/z-assumed"}));
}

}  // namespace
}  // namespace ksched::cache
