#include "pkg/framework/plugins/noderesources/fit.h"

#include <gtest/gtest.h>

#include "tests/fakes/registrations.h"

#include "pkg/framework/plugins/noderesources/test_util.h"

namespace ksched::framework::plugins::noderesources {
namespace {

using ksched::testing::FindRegistration;

using fixtures::FakeHandle;
using fixtures::Milli;
using fixtures::Val;

constexpr const char* kExtA = "example.com/aaa";
constexpr const char* kExtB = "example.com/bbb";
constexpr const char* kK8sA = "kubernetes.io/something";
constexpr const char* kK8sB = "subdomain.kubernetes.io/something";
constexpr const char* kHugeA = "hugepages-2Mi";

// upstream framework.Resource as a container's requests (cpu, memory, pods and
// ephemeral-storage always listed, as Resource.ResourceList() does).
struct R {
  int64_t cpu = 0, mem = 0, eph = 0;
  std::vector<std::pair<std::string, int64_t>> scalar = {};
};

api::Container C(const R& r) {
  api::ResourceList l = {{"cpu", Milli(r.cpu)}, {"memory", Val(r.mem)}, {"pods", Val(0)}, {"ephemeral-storage", Val(r.eph)}};
  for (const auto& [n, v] : r.scalar) l.emplace_back(n, Val(v));
  return fixtures::Container(std::move(l));
}

api::PodPtr P(std::vector<R> containers, std::vector<R> init = {}, api::ResourceList overhead = {}) {
  auto p = std::make_shared<api::Pod>();
  p->metadata.name = "p";
  p->metadata.namespace_ = "default";
  for (const R& r : containers) p->spec.containers.push_back(C(r));
  for (const R& r : init) p->spec.init_containers.push_back(C(r));
  p->spec.overhead = std::move(overhead);
  return p;
}

// upstream makeAllocatableResources(milliCPU, memory, pods, extendedA, storage, hugePageA).
api::NodePtr FilterNode(int64_t cpu, int64_t mem, int64_t pods, int64_t ext_a, int64_t storage, int64_t huge_a) {
  auto n = std::make_shared<api::Node>();
  n->metadata.name = "node";
  n->status.allocatable = {{"cpu", Milli(cpu)}, {"memory", Val(mem)}, {"pods", Val(pods)}, {kExtA, Val(ext_a)},
                           {"ephemeral-storage", Val(storage)}, {kHugeA, Val(huge_a)}};
  return n;
}

cache::NodeInfo NodeWith(api::NodePtr node, const R& used) {
  cache::NodeInfo ni(std::move(node));
  auto existing = P({used});
  auto copy = std::make_shared<api::Pod>(*existing);
  copy->metadata.name = "existing";
  copy->metadata.uid = "existing-uid";
  ni.AddPod(copy);
  return ni;
}

std::unique_ptr<Fit> MakeFit(const config::NodeResourcesFitArgs& args) {
  FakeHandle h;
  auto p = Fit::New(args, h);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return std::unique_ptr<Fit>(dynamic_cast<Fit*>(p->release()));
}

Status RunFilter(Fit& fit, const api::Pod& pod, const cache::NodeInfo& node) {
  CycleState state;
  PreFilterResult result;
  Status pre = fit.PreFilter(state, pod, result);
  EXPECT_TRUE(pre.IsSuccess()) << pre.ToString();
  return fit.Filter(state, pod, node);
}

std::string Insufficient(std::string_view name) { return "Insufficient " + std::string(name); }

// Upstream TestEnoughRequests, on a node with cpu 10m, memory 20, pods 32,
// example.com/aaa 5, ephemeral-storage 20, hugepages-2Mi 5.
TEST(FitTest, EnoughRequests) {
  struct Case {
    std::string name;
    api::PodPtr pod;
    R used;
    config::NodeResourcesFitArgs args;
    std::vector<InsufficientResource> want;
  };
  const std::vector<Case> cases = {
      {"no resources requested always fits", P({}), {10, 20}, {}, {}},
      {"too many resources fails", P({{1, 1}}), {10, 20}, {},
       {{"cpu", Insufficient("cpu"), 1, 10, 10}, {"memory", Insufficient("memory"), 1, 20, 20}}},
      {"too many resources fails due to init container cpu", P({{1, 1}}, {{3, 1}}), {8, 19}, {},
       {{"cpu", Insufficient("cpu"), 3, 8, 10}}},
      {"too many resources fails due to highest init container cpu", P({{1, 1}}, {{3, 1}, {2, 1}}), {8, 19}, {},
       {{"cpu", Insufficient("cpu"), 3, 8, 10}}},
      {"too many resources fails due to init container memory", P({{1, 1}}, {{1, 3}}), {9, 19}, {},
       {{"memory", Insufficient("memory"), 3, 19, 20}}},
      {"too many resources fails due to highest init container memory", P({{1, 1}}, {{1, 3}, {1, 2}}), {9, 19}, {},
       {{"memory", Insufficient("memory"), 3, 19, 20}}},
      {"init container fits because it's the max, not sum, of containers and init containers", P({{1, 1}}, {{1, 1}}),
       {9, 19}, {}, {}},
      {"multiple init containers fit because it's the max, not sum, of containers and init containers",
       P({{1, 1}}, {{1, 1}, {1, 1}}), {9, 19}, {}, {}},
      {"both resources fit", P({{1, 1}}), {5, 5}, {}, {}},
      {"one resource memory fits", P({{2, 1}}), {9, 5}, {}, {{"cpu", Insufficient("cpu"), 2, 9, 10}}},
      {"one resource cpu fits", P({{1, 2}}), {5, 19}, {}, {{"memory", Insufficient("memory"), 2, 19, 20}}},
      {"equal edge case", P({{5, 1}}), {5, 19}, {}, {}},
      {"equal edge case for init container", P({{4, 1}}, {{5, 1}}), {5, 19}, {}, {}},
      {"extended resource fits", P({{0, 0, 0, {{kExtA, 1}}}}), {}, {}, {}},
      {"extended resource fits for init container", P({{}}, {{0, 0, 0, {{kExtA, 1}}}}), {}, {}, {}},
      {"extended resource capacity enforced", P({{1, 1, 0, {{kExtA, 10}}}}), {0, 0, 0, {{kExtA, 0}}}, {},
       {{kExtA, Insufficient(kExtA), 10, 0, 5}}},
      {"extended resource capacity enforced for init container", P({{}}, {{1, 1, 0, {{kExtA, 10}}}}),
       {0, 0, 0, {{kExtA, 0}}}, {}, {{kExtA, Insufficient(kExtA), 10, 0, 5}}},
      {"extended resource allocatable enforced", P({{1, 1, 0, {{kExtA, 1}}}}), {0, 0, 0, {{kExtA, 5}}}, {},
       {{kExtA, Insufficient(kExtA), 1, 5, 5}}},
      {"extended resource allocatable enforced for init container", P({{}}, {{1, 1, 0, {{kExtA, 1}}}}),
       {0, 0, 0, {{kExtA, 5}}}, {}, {{kExtA, Insufficient(kExtA), 1, 5, 5}}},
      {"extended resource allocatable enforced for multiple containers",
       P({{1, 1, 0, {{kExtA, 3}}}, {1, 1, 0, {{kExtA, 3}}}}), {0, 0, 0, {{kExtA, 2}}}, {},
       {{kExtA, Insufficient(kExtA), 6, 2, 5}}},
      {"extended resource allocatable admits multiple init containers",
       P({{}}, {{1, 1, 0, {{kExtA, 3}}}, {1, 1, 0, {{kExtA, 3}}}}), {0, 0, 0, {{kExtA, 2}}}, {}, {}},
      {"extended resource allocatable enforced for multiple init containers",
       P({{}}, {{1, 1, 0, {{kExtA, 6}}}, {1, 1, 0, {{kExtA, 3}}}}), {0, 0, 0, {{kExtA, 2}}}, {},
       {{kExtA, Insufficient(kExtA), 6, 2, 5}}},
      {"extended resource allocatable enforced for unknown resource", P({{1, 1, 0, {{kExtB, 1}}}}), {}, {},
       {{kExtB, Insufficient(kExtB), 1, 0, 0}}},
      {"extended resource allocatable enforced for unknown resource for init container",
       P({{}}, {{1, 1, 0, {{kExtB, 1}}}}), {}, {}, {{kExtB, Insufficient(kExtB), 1, 0, 0}}},
      {"kubernetes.io resource capacity enforced", P({{1, 1, 0, {{kK8sA, 10}}}}), {}, {},
       {{kK8sA, Insufficient(kK8sA), 10, 0, 0}}},
      {"kubernetes.io resource capacity enforced for init container", P({{}}, {{1, 1, 0, {{kK8sB, 10}}}}), {}, {},
       {{kK8sB, Insufficient(kK8sB), 10, 0, 0}}},
      {"hugepages resource capacity enforced", P({{1, 1, 0, {{kHugeA, 10}}}}), {0, 0, 0, {{kHugeA, 0}}}, {},
       {{kHugeA, Insufficient(kHugeA), 10, 0, 5}}},
      {"hugepages resource capacity enforced for init container", P({{}}, {{1, 1, 0, {{kHugeA, 10}}}}),
       {0, 0, 0, {{kHugeA, 0}}}, {}, {{kHugeA, Insufficient(kHugeA), 10, 0, 5}}},
      {"hugepages resource allocatable enforced for multiple containers",
       P({{1, 1, 0, {{kHugeA, 3}}}, {1, 1, 0, {{kHugeA, 3}}}}), {0, 0, 0, {{kHugeA, 2}}}, {},
       {{kHugeA, Insufficient(kHugeA), 6, 2, 5}}},
      {"skip checking ignored extended resource", P({{1, 1, 0, {{kExtB, 1}}}}), {},
       config::NodeResourcesFitArgs{.ignored_resources = {"example.com/bbb"}}, {}},
      {"resources + pod overhead fits", P({{1, 1}}, {}, {{"cpu", Milli(3)}, {"memory", Val(13)}}), {5, 5}, {}, {}},
      {"requests + overhead does not fit for memory", P({{1, 1}}, {}, {{"cpu", Milli(1)}, {"memory", Val(15)}}),
       {5, 5}, {}, {{"memory", Insufficient("memory"), 16, 5, 20}}},
      {"skip checking ignored extended resource via resource groups",
       P({{1, 1, 0, {{kExtB, 1}, {kK8sA, 1}}}}), {},
       config::NodeResourcesFitArgs{.ignored_resource_groups = {"example.com"}},
       {{kK8sA, Insufficient(kK8sA), 1, 0, 0}}},
      {"hugepages cannot be ignored", P({{0, 0, 0, {{kHugeA, 6}}}}), {},
       config::NodeResourcesFitArgs{.ignored_resources = {kHugeA}}, {{kHugeA, Insufficient(kHugeA), 6, 0, 5}}},
      {"every failing resource is reported", P({{11, 21, 21, {{kExtA, 6}, {kHugeA, 6}}}}), {}, {},
       {{"cpu", Insufficient("cpu"), 11, 0, 10},
        {"memory", Insufficient("memory"), 21, 0, 20},
        {"ephemeral-storage", Insufficient("ephemeral-storage"), 21, 0, 20},
        {kExtA, Insufficient(kExtA), 6, 0, 5},
        {kHugeA, Insufficient(kHugeA), 6, 0, 5}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    cache::NodeInfo node = NodeWith(FilterNode(10, 20, 32, 5, 20, 5), c.used);
    auto fit = MakeFit(c.args);
    ASSERT_NE(fit, nullptr);
    Status got = RunFilter(*fit, *c.pod, node);
    if (c.want.empty()) {
      EXPECT_TRUE(got.IsSuccess()) << got.ToString();
    } else {
      std::vector<std::string> reasons;
      for (const auto& r : c.want) reasons.push_back(r.reason);
      EXPECT_EQ(got, Status(Code::kUnschedulable, reasons)) << got.ToString();
    }
    IgnoredResources ignored;
    ignored.names.insert(c.args.ignored_resources.begin(), c.args.ignored_resources.end());
    ignored.groups.insert(c.args.ignored_resource_groups.begin(), c.args.ignored_resource_groups.end());
    EXPECT_EQ(FitsRequest(cache::ComputePodRequest(*c.pod), node, ignored), c.want);
  }
}

TEST(FitTest, FilterWithoutPreFilterIsAnError) {
  auto fit = MakeFit({});
  CycleState state;
  cache::NodeInfo node(FilterNode(10, 20, 32, 5, 20, 5));
  EXPECT_EQ(fit->Filter(state, *P({}), node),
            Status(Code::kError, "error reading \"PreFilterNodeResourcesFit\" from cycleState: not found"));
}

// Upstream TestNotEnoughRequests: a node allowing one pod that already has one.
TEST(FitTest, TooManyPods) {
  struct Case {
    std::string name;
    api::PodPtr pod;
    R used;
  };
  const std::vector<Case> cases = {
      {"even without specified resources predicate fails when there's no space for additional pod", P({}), {10, 20}},
      {"even if both resources fit predicate fails when there's no space for additional pod", P({{1, 1}}), {5, 5}},
      {"even for equal edge case predicate fails when there's no space for additional pod", P({{5, 1}}), {5, 19}},
      {"even for equal edge case predicate fails when there's no space for additional pod due to init container",
       P({{5, 1}}, {{5, 1}}), {5, 19}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    cache::NodeInfo node = NodeWith(FilterNode(10, 20, 1, 0, 0, 0), c.used);
    auto fit = MakeFit({});
    EXPECT_EQ(RunFilter(*fit, *c.pod, node), Status(Code::kUnschedulable, "Too many pods"));
  }
  // Too many pods is reported together with the resources that do not fit.
  cache::NodeInfo node = NodeWith(FilterNode(10, 20, 1, 0, 0, 0), {10, 20});
  auto fit = MakeFit({});
  EXPECT_EQ(RunFilter(*fit, *P({{1, 1}}), node),
            Status(Code::kUnschedulable, std::vector<std::string>{"Too many pods", "Insufficient cpu",
                                                                  "Insufficient memory"}));
}

// Memory and ephemeral storage compare by their exact byte counts up to int64's range,
// as upstream's int64 Value(): a pod asking 1E of memory does not fit a node with 10P
// (kube-scheduler: Insufficient memory), nor 1E of storage a node with 9E minus a bit.
TEST(FitTest, HugeMemoryAndStorageCompareExactly) {
  auto q = [](std::string_view s) { return *api::Quantity::Parse(s); };
  auto node = std::make_shared<api::Node>();
  node->metadata.name = "huge";
  node->status.allocatable = {
      {"cpu", q("64")}, {"memory", q("10P")}, {"pods", q("110")}, {"ephemeral-storage", q("8999999999999999999")}};
  cache::NodeInfo ni(node);
  auto pod = [&](std::string_view mem, std::string_view eph) {
    auto p = std::make_shared<api::Pod>();
    p->metadata.name = "p";
    p->metadata.namespace_ = "default";
    p->spec.containers.push_back(fixtures::Container({{"memory", q(mem)}, {"ephemeral-storage", q(eph)}}));
    return p;
  };
  auto fit = MakeFit({});
  EXPECT_EQ(RunFilter(*fit, *pod("1E", "1"), ni), Status(Code::kUnschedulable, Insufficient("memory")));
  EXPECT_EQ(RunFilter(*fit, *pod("10000000000000001", "1"), ni), Status(Code::kUnschedulable, Insufficient("memory")));
  EXPECT_TRUE(RunFilter(*fit, *pod("10P", "1"), ni).IsSuccess());
  EXPECT_EQ(RunFilter(*fit, *pod("1", "9E"), ni), Status(Code::kUnschedulable, Insufficient("ephemeral-storage")));
  EXPECT_TRUE(RunFilter(*fit, *pod("1", "8999999999999999999"), ni).IsSuccess());
}

// Upstream TestStorageRequests.
TEST(FitTest, StorageRequests) {
  struct Case {
    std::string name;
    api::PodPtr pod;
    R used;
    std::vector<std::string> want;
  };
  const std::vector<Case> cases = {
      {"due to container scratch disk", P({{1, 1}}), {10, 10}, {"Insufficient cpu"}},
      {"pod fit", P({{1, 1}}), {2, 10}, {}},
      {"storage ephemeral local storage request exceeds allocatable", P({{0, 0, 25}}), {2, 2},
       {"Insufficient ephemeral-storage"}},
      {"ephemeral storage of init and regular containers is the max, not the sum", P({{0, 0, 10}}, {{0, 0, 20}}),
       {2, 2}, {}},
      {"pod fits", P({{0, 0, 10}}), {2, 2}, {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    cache::NodeInfo node = NodeWith(FilterNode(10, 20, 32, 5, 20, 5), c.used);
    auto fit = MakeFit({});
    Status got = RunFilter(*fit, *c.pod, node);
    if (c.want.empty()) {
      EXPECT_TRUE(got.IsSuccess()) << got.ToString();
    } else {
      EXPECT_EQ(got, Status(Code::kUnschedulable, c.want));
    }
  }
}

TEST(FitTest, NewValidatesArgs) {
  FakeHandle h;
  struct Case {
    std::string name;
    config::PluginArgs args;
    bool ok;
  };
  config::NodeResourcesFitArgs bad_group{.ignored_resource_groups = {"example.com/aa"}};
  config::NodeResourcesFitArgs bad_weight{
      .scoring_strategy = config::ScoringStrategy{"LeastAllocated", {{"memory", 120}}, std::nullopt}};
  config::NodeResourcesFitArgs bad_type{.scoring_strategy = config::ScoringStrategy{"Random", {}, std::nullopt}};
  config::NodeResourcesFitArgs rtcr_no_shape{
      .scoring_strategy = config::ScoringStrategy{"RequestedToCapacityRatio", {}, std::nullopt}};
  const std::vector<Case> cases = {
      {"defaults", std::monostate{}, true},
      {"empty typed args", config::NodeResourcesFitArgs{}, true},
      {"group with slash", bad_group, false},
      {"weight above 100", bad_weight, false},
      {"unknown strategy", bad_type, false},
      {"requested to capacity ratio without shape", rtcr_no_shape, false},
      {"args of another plugin", config::NodeAffinityArgs{}, false},
  };
  for (const Case& c : cases) {
    auto p = Fit::New(c.args, h);
    EXPECT_EQ(p.ok(), c.ok) << c.name << ": " << p.status().ToString();
  }
  auto p = Fit::New(std::monostate{}, h);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ((*p)->Name(), "NodeResourcesFit");
  EXPECT_EQ(dynamic_cast<Fit&>(**p).scoring_strategy(), "LeastAllocated");
}

TEST(FitTest, EventsAndPodDeleteHint) {
  auto fit = MakeFit({});
  auto events = fit->EventsToRegister();
  ASSERT_EQ(events.size(), 2u);
  const auto* pod_event = FindRegistration(events, EventResource::kPod);
  const auto* node_event = FindRegistration(events, EventResource::kNode);
  ASSERT_NE(pod_event, nullptr);
  ASSERT_NE(node_event, nullptr);
  EXPECT_TRUE(pod_event->event.Match(kAssignedPodDelete));
  EXPECT_FALSE(pod_event->event.Match(kAssignedPodAdd));
  EXPECT_TRUE(node_event->event.Match(kNodeAdd));
  EXPECT_TRUE(node_event->event.Match(kNodeAllocatableChange));
  EXPECT_FALSE(node_event->event.Match(kNodeLabelChange));

  auto pending = P({{1, 1}});
  auto assigned = fixtures::Pod("a", "node1", {});
  auto unassigned = fixtures::Pod("u", "", {});
  auto r = pod_event->hint_fn(*pending, assigned.get(), nullptr);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, QueueingHint::kQueue);
  r = pod_event->hint_fn(*pending, unassigned.get(), nullptr);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, QueueingHint::kSkip);
}

TEST(FitTest, NodeChangeHint) {
  auto fit = MakeFit({});
  auto events = fit->EventsToRegister();
  const auto* node_event = FindRegistration(events, EventResource::kNode);
  ASSERT_NE(node_event, nullptr);
  auto with_pods = [](api::NodePtr n, int64_t pods) {
    auto copy = std::make_shared<api::Node>(*n);
    copy->status.allocatable.emplace_back("pods", Val(pods));
    return copy;
  };
  auto pod = fixtures::Pod("p", "", {fixtures::Container({{"cpu", Milli(2000)}, {"memory", Val(1000)}})});
  auto small = with_pods(fixtures::Node("n", 1000, 4000), 10);
  auto big = with_pods(fixtures::Node("n", 4000, 4000), 10);
  auto big_more_pods = with_pods(fixtures::Node("n", 4000, 4000), 20);
  auto big_more_mem = with_pods(fixtures::Node("n", 4000, 8000), 10);
  auto no_pods = fixtures::Node("n", 4000, 4000);  // allows 0 pods
  struct Case {
    std::string name;
    api::NodePtr old_node, new_node;
    QueueingHint want;
  };
  const std::vector<Case> cases = {
      {"added node fits", nullptr, big, QueueingHint::kQueue},
      {"added node too small", nullptr, small, QueueingHint::kSkip},
      {"added node allows no pods", nullptr, no_pods, QueueingHint::kSkip},
      {"cpu grew so the pod fits", small, big, QueueingHint::kQueue},
      {"cpu shrank", big, small, QueueingHint::kSkip},
      {"pod count grew", big, big_more_pods, QueueingHint::kQueue},
      {"memory grew and the pod requests memory", big, big_more_mem, QueueingHint::kQueue},
      {"nothing the pod requests grew", big, big, QueueingHint::kSkip},
  };
  for (const Case& c : cases) {
    auto r = node_event->hint_fn(*pod, c.old_node.get(), c.new_node.get());
    ASSERT_TRUE(r.ok()) << c.name;
    EXPECT_EQ(*r, c.want) << c.name;
  }
  // An ignored extended resource does not keep the pod waiting for a node that has it.
  auto ext_pod = fixtures::Pod("e", "", {fixtures::Container({{"example.com/gpu", Val(1)}})});
  auto ignoring = MakeFit(config::NodeResourcesFitArgs{.ignored_resource_groups = {"example.com"}});
  auto ignoring_events = ignoring->EventsToRegister();
  auto r = FindRegistration(ignoring_events, EventResource::kNode)->hint_fn(*ext_pod, nullptr, big.get());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, QueueingHint::kQueue);
  r = node_event->hint_fn(*ext_pod, nullptr, big.get());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, QueueingHint::kSkip);
}

}  // namespace
}  // namespace ksched::framework::plugins::noderesources
