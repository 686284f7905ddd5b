#include "pkg/cache/node_info.h"

#include <gtest/gtest.h>

#include <limits>

#include "pkg/cache/cache_test_util.h"

namespace ksched::cache {
namespace {

using testing::MakeContainer;
using testing::MakeNode;
using testing::MakePod;
using testing::Res;

constexpr int64_t kMi = 1024 * 1024;

TEST(NodeInfoTest, KeepsTheHostnameAndZoneLabelsOfItsNode) {
  auto node = MakeNode("n1", "4", "8Gi", [](api::Node& n) {
    n.metadata.labels.Set(std::string(kLabelHostname), "host-1");
    n.metadata.labels.Set(std::string(kLabelTopologyZone), "zone-a");
  });
  NodeInfo info(node);
  ASSERT_NE(info.hostname_label(), nullptr);
  EXPECT_EQ(*info.hostname_label(), "host-1");
  ASSERT_NE(info.zone_label(), nullptr);
  EXPECT_EQ(*info.zone_label(), "zone-a");
  EXPECT_EQ(info.zone_id(), ZoneId("zone-a"));
  NodeInfo copy = info;  // a snapshot's copy reads the same Node object
  EXPECT_EQ(copy.zone_label(), info.zone_label());
  EXPECT_EQ(copy.zone_id(), info.zone_id());

  // Same zone, same id; another zone, another id.
  NodeInfo same(MakeNode("n2", "4", "8Gi", [](api::Node& n) {
    n.metadata.labels.Set(std::string(kLabelTopologyZone), "zone-a");
  }));
  EXPECT_EQ(same.zone_id(), info.zone_id());
  EXPECT_EQ(same.hostname_label(), nullptr);
  EXPECT_NE(ZoneId("zone-b"), info.zone_id());
  EXPECT_EQ(ZoneId("zone-b"), ZoneId("zone-b"));

  // A relabelled node object replaces them; a ghost has none.
  info.SetNode(MakeNode("n1", "4", "8Gi"));
  EXPECT_EQ(info.hostname_label(), nullptr);
  EXPECT_EQ(info.zone_label(), nullptr);
  EXPECT_EQ(info.zone_id(), -1);
  copy.RemoveNode();
  EXPECT_EQ(copy.zone_label(), nullptr);
  EXPECT_EQ(copy.zone_id(), -1);
}

TEST(IsScalarResourceNameTest, Table) {
  struct Case {
    const char* name;
    bool want;
  };
  const Case cases[] = {
      {"cpu", false},
      {"memory", false},
      {"pods", false},
      {"ephemeral-storage", false},
      {"example.com/gpu", true},
      {"nvidia.com/gpu", true},
      {"hugepages-2Mi", true},
      {"attachable-volumes-aws-ebs", true},
      {"kubernetes.io/something", true},  // prefixed native resources count as scalar
      {"requests.example.com/foo", false},
      {"example.com/", false},
      {"Example.com/gpu", false},  // prefix must be a lowercase DNS subdomain
      {"example.com/-gpu", false},
  };
  for (const auto& c : cases) EXPECT_EQ(IsScalarResourceName(c.name), c.want) << c.name;
}

TEST(ResourceTest, FromListMapsEveryKind) {
  Resource r = Resource::FromList(Res({{"cpu", "1500m"},
                                       {"memory", "2Gi"},
                                       {"ephemeral-storage", "10Gi"},
                                       {"pods", "110"},
                                       {"example.com/gpu", "2"},
                                       {"hugepages-2Mi", "4Mi"},
                                       {"unknown", "5"}}));
  EXPECT_EQ(r.milli_cpu, 1500);
  EXPECT_EQ(r.memory, 2048 * kMi);
  EXPECT_EQ(r.ephemeral_storage, 10240 * kMi);
  EXPECT_EQ(r.allowed_pod_number, 110);
  EXPECT_EQ(r.Scalar("example.com/gpu"), 2);
  EXPECT_EQ(r.Scalar("hugepages-2Mi"), 4 * kMi);
  EXPECT_EQ(r.Scalar("unknown"), 0);
  EXPECT_EQ(r.scalar.size(), 2u);
}

TEST(ResourceTest, AddSubSetMaxKeepScalarsCanonical) {
  Resource a = Resource::FromList(Res({{"cpu", "1"}, {"example.com/gpu", "1"}}));
  Resource b = Resource::FromList(Res({{"cpu", "2"}, {"example.com/fpga", "3"}, {"example.com/gpu", "4"}}));
  Resource sum = a;
  sum.Add(b);
  EXPECT_EQ(sum.milli_cpu, 3000);
  EXPECT_EQ(sum.Scalar("example.com/gpu"), 5);
  EXPECT_EQ(sum.Scalar("example.com/fpga"), 3);
  sum.Sub(b);
  EXPECT_EQ(sum, a);  // zero entries are dropped, so this compares equal
  Resource m = a;
  m.SetMax(b);
  EXPECT_EQ(m, b);
}

TEST(ComputePodRequestTest, Table) {
  struct Case {
    const char* name;
    std::function<void(api::Pod&)> spec;
    int64_t cpu, memory;
    int64_t non_zero_cpu, non_zero_memory;
    std::vector<std::pair<std::string, int64_t>> scalar = {};
  };
  auto containers = [](std::vector<api::ResourceList> reqs) {
    return [reqs](api::Pod& p) {
      p.spec.containers.clear();
      for (const auto& r : reqs) p.spec.containers.push_back(MakeContainer(r));
    };
  };
  const Case cases[] = {
      {"one container", containers({Res({{"cpu", "100m"}, {"memory", "500Mi"}})}), 100, 500 * kMi, 100, 500 * kMi},
      {"no requests count as defaults only for non-zero", containers({{}}), 0, 0, 100, 200 * kMi},
      {"explicit zero is kept in non-zero (upstream: only missing values default)",
       containers({Res({{"cpu", "0"}})}), 0, 0, 0, 200 * kMi},
      {"containers are summed", containers({Res({{"cpu", "100m"}}), Res({{"cpu", "200m"}, {"memory", "1Gi"}})}), 300,
       1024 * kMi, 300, 1224 * kMi},
      {"a bigger init container wins",
       [](api::Pod& p) {
         p.spec.containers = {MakeContainer(Res({{"cpu", "100m"}})), MakeContainer(Res({{"cpu", "200m"}}))};
         p.spec.init_containers = {MakeContainer(Res({{"cpu", "500m"}, {"memory", "100Mi"}}))};
       },
       500, 100 * kMi, 500, 400 * kMi},
      {"a smaller init container does not matter",
       [](api::Pod& p) {
         p.spec.containers = {MakeContainer(Res({{"cpu", "1"}, {"memory", "1Gi"}}))};
         p.spec.init_containers = {MakeContainer(Res({{"cpu", "500m"}, {"memory", "1Mi"}}))};
       },
       1000, 1024 * kMi, 1000, 1024 * kMi},
      {"init container runs beside the sidecars started before it",
       [](api::Pod& p) {
         p.spec.containers = {MakeContainer(Res({{"cpu", "100m"}, {"memory", "1Gi"}}))};
         p.spec.init_containers = {MakeContainer(Res({{"cpu", "200m"}, {"memory", "1Gi"}}), /*sidecar=*/true),
                                   MakeContainer(Res({{"cpu", "300m"}, {"memory", "1Gi"}}))};
       },
       // sum: 100+200=300m; init peak: 300+200=500m
       500, 2048 * kMi, 500, 2048 * kMi},
      {"sidecars after an init container do not add to it",
       [](api::Pod& p) {
         p.spec.containers = {MakeContainer(Res({{"cpu", "100m"}, {"memory", "1Gi"}}))};
         p.spec.init_containers = {MakeContainer(Res({{"cpu", "350m"}, {"memory", "1Gi"}})),
                                   MakeContainer(Res({{"cpu", "200m"}, {"memory", "1Gi"}}), /*sidecar=*/true)};
       },
       // sum: 100+200=300m; init peak: 350m alone
       350, 2048 * kMi, 350, 2048 * kMi},
      {"overhead is added",
       [](api::Pod& p) {
         p.spec.containers = {MakeContainer(Res({{"cpu", "100m"}}))};
         p.spec.overhead = Res({{"cpu", "50m"}, {"memory", "10Mi"}});
       },
       150, 10 * kMi, 150, 210 * kMi},
      {"extended resources sum and max like cpu",
       [](api::Pod& p) {
         p.spec.containers = {MakeContainer(Res({{"example.com/gpu", "1"}, {"hugepages-2Mi", "4Mi"}})),
                              MakeContainer(Res({{"example.com/gpu", "1"}}))};
         p.spec.init_containers = {MakeContainer(Res({{"example.com/gpu", "3"}}))};
       },
       0, 0, 100 * 2, 400 * kMi, {{"example.com/gpu", 3}, {"hugepages-2Mi", 4 * kMi}}},
      {"fractions round once per pod, not per container",
       containers({Res({{"memory", "0.5"}}), Res({{"memory", "0.5"}})}), 0, 1, 200, 1},
  };
  for (const auto& c : cases) {
    auto pod = MakePod("p", "n", {}, c.spec);
    PodRequest got = ComputePodRequest(*pod);
    EXPECT_EQ(got.request.milli_cpu, c.cpu) << c.name;
    EXPECT_EQ(got.request.memory, c.memory) << c.name;
    EXPECT_EQ(got.non_zero_milli_cpu, c.non_zero_cpu) << c.name;
    EXPECT_EQ(got.non_zero_memory, c.non_zero_memory) << c.name;
    EXPECT_EQ(got.request.scalar, c.scalar) << c.name;
  }
}

// Pod-level resources (spec.resources.requests) and in-place resize (what the kubelet
// allocated and actuated) as kube-scheduler 1.36 counts them; the 1.20 test API server
// drops these fields, so they are checked here from the decoded model.
TEST(ComputePodRequestTest, PodLevelResourcesAndInPlaceResize) {
  struct Case {
    const char* name;
    std::function<void(api::Pod&)> spec;
    int64_t cpu, memory;
    int64_t non_zero_cpu, non_zero_memory;
  };
  auto two_containers = [](api::Pod& p) {
    p.spec.containers = {MakeContainer(Res({{"cpu", "100m"}, {"memory", "100Mi"}})), MakeContainer({})};
    p.spec.containers[0].name = "a";
    p.spec.containers[1].name = "b";
  };
  auto status = [](std::string name, std::optional<api::ResourceList> allocated,
                   std::optional<api::ResourceList> actual) {
    return api::ContainerResourceStatus{std::move(name), std::move(allocated), std::move(actual)};
  };
  const Case cases[] = {
      {"pod-level cpu replaces the containers' sum; memory still from containers",
       [&](api::Pod& p) {
         two_containers(p);
         p.spec.pod_requests = Res({{"cpu", "2"}});
       },
       2000, 100 * kMi, 2000, 300 * kMi},
      {"pod-level cpu and memory replace both, the non-zero defaults too",
       [&](api::Pod& p) {
         two_containers(p);
         p.spec.pod_requests = Res({{"cpu", "500m"}, {"memory", "1Gi"}});
       },
       500, 1024 * kMi, 500, 1024 * kMi},
      {"pod-level requests of other resources are not pod-level resources",
       [&](api::Pod& p) {
         two_containers(p);
         p.spec.pod_requests = Res({{"ephemeral-storage", "1Gi"}});
       },
       100, 100 * kMi, 200, 300 * kMi},
      {"overhead still adds to pod-level requests",
       [&](api::Pod& p) {
         two_containers(p);
         p.spec.pod_requests = Res({{"cpu", "1"}});
         p.spec.overhead = Res({{"cpu", "250m"}});
       },
       1250, 100 * kMi, 1250, 300 * kMi},
      {"a resize up not yet allocated: the spec counts",
       [&](api::Pod& p) {
         two_containers(p);
         p.spec.containers[0].requests = Res({{"cpu", "1"}, {"memory", "100Mi"}});
         p.status.container_resources = {status("a", Res({{"cpu", "100m"}, {"memory", "100Mi"}}),
                                                Res({{"cpu", "100m"}, {"memory", "100Mi"}}))};
       },
       1000, 100 * kMi, 1100, 300 * kMi},
      {"a resize down not yet actuated: the kubelet still holds the old amount",
       [&](api::Pod& p) {
         two_containers(p);
         p.status.container_resources = {status("a", Res({{"cpu", "100m"}, {"memory", "100Mi"}}),
                                                Res({{"cpu", "3"}, {"memory", "100Mi"}}))};
       },
       3000, 100 * kMi, 3100, 300 * kMi},
      {"allocated beyond spec and actual",
       [&](api::Pod& p) {
         two_containers(p);
         p.status.container_resources = {status("a", Res({{"cpu", "2"}}), std::nullopt)};
       },
       // non-zero: the allocated list lacks memory, so it gets the 200Mi default too
       2000, 100 * kMi, 2100, 400 * kMi},
      {"an infeasible resize: the spec does not count, what the kubelet holds does",
       [&](api::Pod& p) {
         two_containers(p);
         p.spec.containers[0].requests = Res({{"cpu", "8"}, {"memory", "100Mi"}});
         p.status.container_resources = {status("a", Res({{"cpu", "100m"}, {"memory", "100Mi"}}),
                                                Res({{"cpu", "100m"}, {"memory", "100Mi"}})),
                                         status("b", api::ResourceList{}, api::ResourceList{})};
         p.status.resize_infeasible = true;
       },
       100, 100 * kMi, 200, 300 * kMi},
      {"pod-level status lists replace the containers' statuses",
       [&](api::Pod& p) {
         two_containers(p);
         p.status.pod_allocated = Res({{"cpu", "4"}, {"memory", "100Mi"}});
         p.status.pod_actual = Res({{"cpu", "1"}, {"memory", "100Mi"}});
       },
       4000, 100 * kMi, 4000, 300 * kMi},
      {"pod-level resize: the larger of spec and status, less overhead",
       [&](api::Pod& p) {
         two_containers(p);
         p.spec.pod_requests = Res({{"cpu", "1"}});
         p.spec.overhead = Res({{"cpu", "100m"}});
         p.status.pod_allocated = Res({{"cpu", "2100m"}});
         p.status.pod_actual = Res({{"cpu", "1100m"}});
       },
       2100, 100 * kMi, 2100, 300 * kMi},
  };
  for (const auto& c : cases) {
    auto pod = MakePod("p", "n", {}, c.spec);
    PodRequest got = ComputePodRequest(*pod);
    EXPECT_EQ(got.request.milli_cpu, c.cpu) << c.name;
    EXPECT_EQ(got.request.memory, c.memory) << c.name;
    EXPECT_EQ(got.non_zero_milli_cpu, c.non_zero_cpu) << c.name;
    EXPECT_EQ(got.non_zero_memory, c.non_zero_memory) << c.name;
  }
}

TEST(HostPortInfoTest, CheckConflict) {
  struct Case {
    const char* name;
    std::vector<HostPort> used;
    HostPort check;
    bool want;
  };
  const Case cases[] = {
      {"same ip, protocol, port", {{"127.0.0.1", "TCP", 80}}, {"127.0.0.1", "TCP", 80}, true},
      {"different port", {{"127.0.0.1", "TCP", 80}}, {"127.0.0.1", "TCP", 81}, false},
      {"different ip", {{"127.0.0.1", "TCP", 80}}, {"127.0.0.2", "TCP", 80}, false},
      {"different protocol", {{"127.0.0.1", "TCP", 80}}, {"127.0.0.1", "UDP", 80}, false},
      {"wildcard check hits any ip", {{"127.0.0.1", "TCP", 80}}, {"0.0.0.0", "TCP", 80}, true},
      {"wildcard in use hits any ip", {{"0.0.0.0", "TCP", 80}}, {"127.0.0.1", "TCP", 80}, true},
      {"wildcard protocol must match", {{"0.0.0.0", "UDP", 80}}, {"127.0.0.1", "TCP", 80}, false},
      {"empty ip and protocol mean 0.0.0.0/TCP", {{"", "", 80}}, {"127.0.0.1", "TCP", 80}, true},
      {"empty check ip is the wildcard", {{"127.0.0.1", "TCP", 80}}, {"", "", 80}, true},
      {"port 0 never conflicts", {{"", "", 0}}, {"", "", 0}, false},
      {"nothing used", {}, {"", "TCP", 80}, false},
  };
  for (const auto& c : cases) {
    HostPortInfo info;
    for (const auto& p : c.used) info.Add(p);
    EXPECT_EQ(info.CheckConflict(c.check), c.want) << c.name;
  }
}

TEST(HostPortInfoTest, RemoveTakesOneHolderAtATime) {
  HostPortInfo info;
  info.Add({"", "TCP", 8080});
  info.Add({"0.0.0.0", "", 8080});  // the same port, held by a second pod
  EXPECT_EQ(info.size(), 2u);
  info.Remove({"", "", 8080});
  EXPECT_TRUE(info.CheckConflict({"10.0.0.1", "TCP", 8080}));
  info.Remove({"0.0.0.0", "TCP", 8080});
  EXPECT_FALSE(info.CheckConflict({"10.0.0.1", "TCP", 8080}));
  EXPECT_EQ(info.size(), 0u);
}

TEST(PodHostPortsTest, ContainersAndSidecarsOnly) {
  auto pod = MakePod("p", "n", {}, [](api::Pod& p) {
    p.spec.containers[0].ports = {{.container_port = 80, .host_port = 8080, .protocol = "TCP"},
                                  {.container_port = 81, .host_port = 0}};
    api::Container sidecar = MakeContainer({}, /*sidecar=*/true);
    sidecar.ports = {{.container_port = 53, .host_port = 53, .protocol = "UDP", .host_ip = "10.0.0.1"}};
    api::Container init = MakeContainer({});
    init.ports = {{.container_port = 90, .host_port = 9090}};
    p.spec.init_containers = {init, sidecar};
  });
  std::vector<HostPort> want = {{"10.0.0.1", "UDP", 53}, {"0.0.0.0", "TCP", 8080}};
  EXPECT_EQ(PodHostPorts(*pod), want);
}

// TruncatePods undoes AddPodEntry calls (what-if runs add nominated pods to a copy of
// a node and take them off again): the pods and every aggregate are as before.
TEST(NodeInfoTest, TruncatePodsUndoesTheLastAdds) {
  NodeInfo info(MakeNode("n", "4", "8Gi"));
  info.AddPod(MakePod("a", "n", Res({{"cpu", "100m"}, {"memory", "1Gi"}})));
  const Resource requested = info.requested();
  const Resource non_zero = info.non_zero_requested();
  const api::PodPtr first = info.pods()[0].pod;
  info.AddPodEntry(MakePodEntry(testing::WithHostPort(MakePod("b", "n", Res({{"cpu", "200m"}})), 8080)));
  info.AddPodEntry(MakePodEntry(MakePod("c", "n", {})));
  ASSERT_EQ(info.pods().size(), 3u);
  EXPECT_EQ(info.used_ports().size(), 1u);
  info.TruncatePods(1);
  ASSERT_EQ(info.pods().size(), 1u);
  EXPECT_EQ(info.pods()[0].pod, first);
  EXPECT_EQ(info.requested(), requested);
  EXPECT_EQ(info.non_zero_requested(), non_zero);
  EXPECT_EQ(info.used_ports().size(), 0u);
  info.TruncatePods(5);  // nothing past the end
  EXPECT_EQ(info.pods().size(), 1u);
}

TEST(NodeInfoTest, AddAndRemovePodKeepAggregatesConsistent) {
  NodeInfo info(MakeNode("n1", "4", "8Gi"));
  EXPECT_EQ(info.name(), "n1");
  EXPECT_EQ(info.allocatable().milli_cpu, 4000);
  EXPECT_EQ(info.allocatable().allowed_pod_number, 110);

  auto p1 = testing::WithHostPort(MakePod("p1", "n1", Res({{"cpu", "1"}, {"memory", "1Gi"}})), 8080);
  auto p2 = MakePod("p2", "n1", {}, [](api::Pod& p) { p.spec.affinity = testing::AntiAffinityRequired(); });
  auto p3 = MakePod("p3", "n1", Res({{"cpu", "500m"}}), [](api::Pod& p) {
    p.spec.affinity = testing::PodAffinityPreferred();
  });

  int64_t g0 = info.generation();
  info.AddPod(p1);
  EXPECT_GT(info.generation(), g0);
  info.AddPod(p2);
  info.AddPod(p3);
  EXPECT_EQ(info.pods().size(), 3u);
  EXPECT_EQ(info.requested().milli_cpu, 1500);
  EXPECT_EQ(info.requested().memory, 1024 * kMi);
  EXPECT_EQ(info.non_zero_requested().milli_cpu, 1000 + 100 + 500);
  EXPECT_EQ(info.non_zero_requested().memory, 1024 * kMi + 200 * kMi + 200 * kMi);
  EXPECT_EQ(info.pods_with_affinity(), 2u);
  EXPECT_EQ(info.pods_with_required_anti_affinity(), 1u);
  EXPECT_TRUE(info.used_ports().CheckConflict({"", "TCP", 8080}));

  int64_t g1 = info.generation();
  EXPECT_TRUE(info.RemovePod(*p2));
  EXPECT_GT(info.generation(), g1);
  EXPECT_EQ(info.pods_with_required_anti_affinity(), 0u);
  EXPECT_EQ(info.pods_with_affinity(), 1u);
  EXPECT_EQ(info.pods()[0].pod, p1);  // order kept
  EXPECT_EQ(info.pods()[1].pod, p3);

  EXPECT_TRUE(info.RemovePod(*p1));
  EXPECT_FALSE(info.used_ports().CheckConflict({"", "TCP", 8080}));
  EXPECT_TRUE(info.RemovePod(*p3));
  EXPECT_FALSE(info.RemovePod(*p3));
  EXPECT_EQ(info.requested(), Resource{});
  EXPECT_EQ(info.non_zero_requested(), Resource{});
  EXPECT_EQ(info.pods_with_affinity(), 0u);
}

TEST(NodeInfoTest, RemoveSubtractsWhatWasAddedAndMatchesByUid) {
  NodeInfo info(MakeNode("n1"));
  info.AddPod(MakePod("p", "n1", Res({{"cpu", "1"}})));
  // The caller's copy asks for something else (e.g. a newer version): the stored request
  // is what comes off.
  auto other_version = MakePod("p", "n1", Res({{"cpu", "3"}}));
  EXPECT_TRUE(info.RemovePod(*other_version));
  EXPECT_EQ(info.requested().milli_cpu, 0);

  // Without uids, namespace/name identifies the pod.
  auto no_uid = MakePod("q", "n1", {}, [](api::Pod& p) { p.metadata.uid.clear(); });
  info.AddPod(no_uid);
  auto same_name_other_uid = MakePod("q", "n1");
  EXPECT_FALSE(info.RemovePod(*same_name_other_uid));
  EXPECT_TRUE(info.RemovePod(*no_uid));
}

// Sums saturate at the int64 bounds on add; removing a pod from a saturated sum must not
// subtract from the bound (that would undercount what the other pods hold).
TEST(NodeInfoTest, RemoveFromSaturatedSumsRecomputesThem) {
  // Per pod, requests are summed in milli-units, so one pod holds at most ~9.2P; 1,100
  // pods of 9P overflow the node's byte total.
  NodeInfo info(MakeNode("n1"));
  std::vector<api::PodPtr> pods;
  for (int i = 0; i < 1100; ++i) {
    pods.push_back(MakePod("p" + std::to_string(i), "n1", Res({{"memory", "9P"}, {"example.com/gpu", "9P"}})));
    info.AddPod(pods.back());
  }
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(info.requested().memory, kMax);
  EXPECT_EQ(info.requested().Scalar("example.com/gpu"), kMax);
  EXPECT_EQ(info.non_zero_requested().memory, kMax);

  // Down to 1,000 pods: the true sum fits again and must be exact, not kMax - 100 * 9P.
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(info.RemovePod(*pods[i]));
  constexpr int64_t k9P = 9'000'000'000'000'000;
  EXPECT_EQ(info.requested().memory, 1000 * k9P);
  EXPECT_EQ(info.requested().Scalar("example.com/gpu"), 1000 * k9P);
  EXPECT_EQ(info.non_zero_requested().memory, 1000 * k9P);
  for (int i = 100; i < 1100; ++i) ASSERT_TRUE(info.RemovePod(*pods[i]));
  EXPECT_EQ(info.requested(), Resource{});
  EXPECT_EQ(info.non_zero_requested(), Resource{});
}

TEST(ResourceTest, SubSaturatesInsteadOfOverflowing) {
  Resource a;
  a.milli_cpu = std::numeric_limits<int64_t>::min() + 1;
  Resource b;
  b.milli_cpu = 5;
  a.Sub(b);
  EXPECT_EQ(a.milli_cpu, std::numeric_limits<int64_t>::min());
}

TEST(NodeInfoTest, GenerationsAreProcessWideAndMonotonic) {
  NodeInfo a(MakeNode("a"));
  NodeInfo b(MakeNode("b"));
  EXPECT_LT(a.generation(), b.generation());
  int64_t gb = b.generation();
  a.RemoveNode();
  EXPECT_EQ(a.node(), nullptr);
  EXPECT_EQ(a.name(), "");
  EXPECT_GT(a.generation(), gb);
}

// What the Filter and Score passes read of a node without touching its Node object
// follows every SetNode: a node that gains a taint, or is cordoned, is seen so at once.
TEST(NodeInfoTest, KeepsTheNodesSchedulingFieldsInStep) {
  NodeInfo info(ksched::testing::NodeBuilder("n1").Obj());
  EXPECT_FALSE(info.unschedulable());
  EXPECT_FALSE(info.has_taints());
  EXPECT_EQ(info.name_view(), "n1");

  info.SetNode(ksched::testing::NodeBuilder("n1").Unschedulable().Taint("k", "v", api::TaintEffect::kPreferNoSchedule).Obj());
  EXPECT_TRUE(info.unschedulable());
  EXPECT_TRUE(info.has_taints());
  NodeInfo copy = info;  // a snapshot's copy shares the Node, and so the name
  EXPECT_EQ(copy.name_view(), "n1");
  EXPECT_EQ(copy.name_view().data(), info.name().data());

  info.SetNode(ksched::testing::NodeBuilder("n1").Obj());
  EXPECT_FALSE(info.unschedulable());
  EXPECT_FALSE(info.has_taints());
  info.RemoveNode();
  EXPECT_FALSE(info.has_taints());
  EXPECT_EQ(info.name_view(), "");
}

}  // namespace
}  // namespace ksched::cache
