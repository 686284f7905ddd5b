// The scheduler run on clusters held in memory: placements in order, capacity, drain,
// preemption with PodDisruptionBudgets, PriorityClass admission, gates, volumes (static
// binding and provisioning), and the pod fields newer than the 1.20 test API server:
// pod-level resources, in-place resize, ResourceClaims. Clusters are written as a user
// writes them, in YAML.
#include "pkg/simulate/simulator.h"

#include <gtest/gtest.h>

#include <map>

#include "config/defaults.h"
#include "config/load.h"
#include "tests/fakes/prefer_node_plugin.h"

namespace ksched::simulate {
namespace {

SimulateOptions Defaults(uint64_t seed = 1, bool explain = false) {
  SimulateOptions o;
  config::SetDefaults(o.config);
  o.seed = seed;
  o.explain = explain;
  o.settle_timeout = std::chrono::seconds(20);
  return o;
}

ClusterObjects Objects(std::string_view yaml) {
  ClusterObjects out;
  Status s = ParseClusterText(yaml, "test.yaml", out);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return out;
}

std::unique_ptr<Simulator> Start(std::string_view yaml, SimulateOptions options = Defaults()) {
  auto sim = Simulator::New(Objects(yaml), std::move(options));
  EXPECT_TRUE(sim.ok()) << sim.status().ToString();
  return sim.ok() ? std::move(*sim) : nullptr;
}

SourceObject PodOf(std::string_view yaml) {
  ClusterObjects o = Objects(yaml);
  EXPECT_EQ(o.objects.size(), 1u);
  return o.objects.front();
}

std::string Node(std::string_view name, std::string_view cpu, std::string_view zone = "z1") {
  return "apiVersion: v1\nkind: Node\nmetadata:\n  name: " + std::string(name) +
         "\n  labels: {kubernetes.io/hostname: " + std::string(name) + ", topology.kubernetes.io/zone: " +
         std::string(zone) + "}\nstatus:\n  allocatable: {cpu: \"" + std::string(cpu) +
         "\", memory: 16Gi, pods: \"110\"}\n---\n";
}

// A pod asking for `cpu`; bound to `node` when given.
std::string Pod(std::string_view name, std::string_view cpu, std::string_view node = "", std::string_view extra_spec = "",
                std::string_view extra_meta = "") {
  std::string y = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + std::string(name) + "\n" + std::string(extra_meta) +
                  "spec:\n";
  if (!node.empty()) y += "  nodeName: " + std::string(node) + "\n";
  y += std::string(extra_spec);
  y += "  containers:\n  - name: c\n    image: app\n    resources: {requests: {cpu: \"" + std::string(cpu) + "\"}}\n---\n";
  return y;
}

std::string NodeOf(const PodResult& r) { return r.node.value_or("<none>"); }

TEST(SimulatorTest, PendingPodsArePlacedInFileOrderEachSeeingTheOnesBefore) {
  auto sim = Start(Node("n1", "2") + Node("n2", "2") + Pod("p1", "1500m") + Pod("p2", "1500m") + Pod("p3", "1500m"));
  ASSERT_TRUE(sim);
  std::vector<PodResult> r = sim->SchedulePending();
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].name, "p1");
  EXPECT_NE(NodeOf(r[0]), "<none>");
  EXPECT_NE(NodeOf(r[1]), "<none>");
  EXPECT_NE(NodeOf(r[0]), NodeOf(r[1]));
  EXPECT_FALSE(r[2].node);
  EXPECT_EQ(r[2].reason,
            "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 No preemption "
            "victims found for incoming pod..");
}

TEST(SimulatorTest, CapacityCountsCopiesUntilOneDoesNotFit) {
  const std::string cluster = Node("n1", "4") + Node("n2", "4") + Node("n3", "4") + Pod("busy", "1", "n1");
  const SourceObject one_cpu = PodOf(Pod("web", "1"));
  auto sim = Start(cluster);
  ASSERT_TRUE(sim);
  auto c = sim->CapacityOf(one_cpu, 10000);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->fits, 11);
  EXPECT_FALSE(c->reached_max);
  ASSERT_TRUE(c->next);
  EXPECT_EQ(c->next->name, "web-capacity-12");
  EXPECT_NE(c->next->reason.find("0/3 nodes are available: 3 Insufficient cpu."), std::string::npos) << c->next->reason;

  auto capped = Start(cluster);
  ASSERT_TRUE(capped);
  auto m = capped->CapacityOf(one_cpu, 5);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->fits, 5);
  EXPECT_TRUE(m->reached_max);
  EXPECT_FALSE(m->next);
}

TEST(SimulatorTest, DrainMovesPodsOffTheNodeAndSaysWhichFitNowhere) {
  const std::string daemon_owner =
      "  ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: ds, uid: d1, controller: true}]\n";
  auto sim = Start(Node("n1", "4") + Node("n2", "4") + Pod("a", "1", "n1") + Pod("b", "3", "n1") +
                   Pod("ds-n1", "100m", "n1", "", daemon_owner) + Pod("c", "2", "n2"));
  ASSERT_TRUE(sim);
  auto r = sim->Drain("n1");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ((*r)[0].name, "ds-n1");
  EXPECT_EQ(NodeOf((*r)[0]), "n1");
  EXPECT_EQ((*r)[0].reason, "DaemonSet pod: not evicted");
  EXPECT_EQ((*r)[1].name, "a");
  EXPECT_EQ(NodeOf((*r)[1]), "n2");
  EXPECT_EQ((*r)[2].name, "b");
  EXPECT_FALSE((*r)[2].node);
  EXPECT_NE((*r)[2].reason.find("1 Insufficient cpu"), std::string::npos) << (*r)[2].reason;
  EXPECT_NE((*r)[2].reason.find("1 node(s) were unschedulable"), std::string::npos) << (*r)[2].reason;
  EXPECT_EQ(sim->Drain("nope").status().code(), StatusCode::kInvalidArgument);
}

TEST(SimulatorTest, PreemptionEvictsTheVictimsThatNoBudgetProtectsAndPlacesThePreemptor) {
  const std::string high = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n---\n";
  const std::string budget =
      "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: keep, namespace: default}\n"
      "spec: {selector: {matchLabels: {app: kept}}}\nstatus: {disruptionsAllowed: 0}\n---\n";
  auto sim = Start(high + budget + Node("n1", "2") + Node("n2", "2") +
                   Pod("kept", "2", "n1", "", "  labels: {app: kept}\n") + Pod("spare", "2", "n2"));
  ASSERT_TRUE(sim);
  auto r = sim->Schedule(PodOf(Pod("urgent", "2", "", "  priorityClassName: high\n")));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(NodeOf(*r), "n2");
  EXPECT_EQ(r->victims, (std::vector<std::string>{"default/spare"}));
  EXPECT_TRUE(r->reason.empty()) << r->reason;

  // A pod of lower priority than every other cannot preempt: the reason says so.
  auto low = sim->Schedule(PodOf(Pod("low", "1")));
  ASSERT_TRUE(low.ok());
  EXPECT_FALSE(low->node);
  EXPECT_NE(low->reason.find("Insufficient cpu"), std::string::npos) << low->reason;
}

TEST(SimulatorTest, PriorityComesFromThePriorityClassAsAdmissionGivesIt) {
  const std::string classes =
      "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: everyone}\nvalue: 500\n"
      "globalDefault: true\n---\n";
  auto sim = Start(classes + Node("n1", "1") + Pod("old", "1", "n1", "  priority: 0\n"));
  ASSERT_TRUE(sim);
  // The global default gives the new pod 500 > 0: it preempts "old".
  auto r = sim->Schedule(PodOf(Pod("new", "1")));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(NodeOf(*r), "n1");
  EXPECT_EQ(r->victims, (std::vector<std::string>{"default/old"}));
  auto unknown = sim->Schedule(PodOf(Pod("x", "1", "", "  priorityClassName: nope\n")));
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(unknown.status().message(),
            "test.yaml: document 1: pod \"default/x\": no PriorityClass with name nope was found");
}

TEST(SimulatorTest, GatedPodsAndPodsOfNoProfileAreReportedNotScheduled) {
  auto sim = Start(Node("n1", "4"));
  ASSERT_TRUE(sim);
  auto gated = sim->Schedule(PodOf(Pod("g", "1", "", "  schedulingGates: [{name: example.com/wait}]\n")));
  ASSERT_TRUE(gated.ok());
  EXPECT_FALSE(gated->node);
  EXPECT_EQ(gated->reason, "waiting for scheduling gates: [example.com/wait]");
  auto other = sim->Schedule(PodOf(Pod("o", "1", "", "  schedulerName: someone-else\n")));
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->reason, "no profile of the configuration has schedulerName \"someone-else\"");
  // Neither took room: a 4-CPU pod still fits.
  auto big = sim->Schedule(PodOf(Pod("big", "4")));
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(NodeOf(*big), "n1");
}

TEST(SimulatorTest, TheSameSeedGivesTheSamePlacements) {
  std::string cluster;
  for (int i = 0; i < 8; ++i) cluster += Node("n" + std::to_string(i), "8", i % 2 ? "z1" : "z2");
  for (int i = 0; i < 30; ++i) cluster += Pod("p" + std::to_string(i), "500m");
  auto run = [&] {
    auto sim = Start(cluster, Defaults(7));
    std::vector<std::string> nodes;
    for (const PodResult& r : sim->SchedulePending()) nodes.push_back(NodeOf(r));
    return nodes;
  };
  const std::vector<std::string> first = run();
  EXPECT_EQ(first.size(), 30u);
  EXPECT_EQ(std::count(first.begin(), first.end(), "<none>"), 0);
  EXPECT_EQ(run(), first);
}

TEST(SimulatorTest, VolumesAreBoundAndProvisionedInMemory) {
  const std::string storage = R"(apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: fast}
provisioner: example.com/csi
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: local-n2}
spec:
  capacity: {storage: 10Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: local
  local: {path: /mnt/disk}
  nodeAffinity:
    required:
      nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [n2]}]}]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: default}
spec: {accessModes: [ReadWriteOnce], storageClassName: local, resources: {requests: {storage: 5Gi}}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: scratch, namespace: default}
spec: {accessModes: [ReadWriteOnce], storageClassName: fast, resources: {requests: {storage: 5Gi}}}
---
)";
  auto sim = Start(Node("n1", "4") + Node("n2", "4") + Node("n3", "4") + storage);
  ASSERT_TRUE(sim);
  const std::string uses_data = "  volumes: [{name: v, persistentVolumeClaim: {claimName: data}}]\n";
  auto r = sim->Schedule(PodOf(Pod("db", "100m", "", uses_data)));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(NodeOf(*r), "n2") << r->reason;
  const std::string uses_scratch = "  volumes: [{name: v, persistentVolumeClaim: {claimName: scratch}}]\n";
  auto first = sim->Schedule(PodOf(Pod("w1", "100m", "", uses_scratch)));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_TRUE(first->node) << first->reason;
  // The provisioned volume is pinned to the node the first consumer went to.
  auto second = sim->Schedule(PodOf(Pod("w2", "3", "", uses_scratch)));
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(NodeOf(*second), *first->node) << second->reason;
}

// Fields the 1.20 test API server drops, so shown here and in `ksched simulate` only.
TEST(SimulatorTest, PodLevelResourcesAndResizesAreCounted) {
  const std::string resized = R"(apiVersion: v1
kind: Pod
metadata: {name: resizing}
spec:
  nodeName: n1
  containers:
  - name: c
    image: app
    resources: {requests: {cpu: "1"}}
status:
  phase: Running
  containerStatuses:
  - name: c
    allocatedResources: {cpu: "3"}
---
)";
  auto sim = Start(Node("n1", "4") + Node("n2", "4") + resized);
  ASSERT_TRUE(sim);
  // The resize down to 1 CPU has not happened: 3 CPUs stay counted on n1.
  auto fits = sim->Schedule(PodOf(Pod("two", "2")));
  ASSERT_TRUE(fits.ok());
  EXPECT_EQ(NodeOf(*fits), "n2");
  // Pod-level requests (4 CPUs) count, not the containers' 100m: nowhere has 4 left.
  auto pod_level = sim->Schedule(PodOf(Pod("whole", "100m", "", "  resources: {requests: {cpu: \"4\"}}\n")));
  ASSERT_TRUE(pod_level.ok());
  EXPECT_FALSE(pod_level->node);
  EXPECT_NE(pod_level->reason.find("2 Insufficient cpu"), std::string::npos) << pod_level->reason;
}

// Dynamic resources end to end in memory (the 1.20 test API server serves no
// resource.k8s.io): the example cluster's pods, scheduled in file order, each seeing the
// claims the ones before it had written (allocation and reservedFor, through the
// scheduler's own PreBind and informers).
TEST(SimulatorTest, DeviceClaimsAreAllocatedReservedAndCounted) {
  auto cluster = LoadClusterFiles({std::string(KSCHED_EXAMPLES_DIR) + "/simulate/dra-cluster.yaml"});
  ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
  auto sim = Simulator::New(*cluster, Defaults(1, /*explain=*/true));
  ASSERT_TRUE(sim.ok()) << sim.status().ToString();
  std::map<std::string, PodResult> by_name;
  for (PodResult& r : (*sim)->SchedulePending()) by_name[r.name] = std::move(r);
  ASSERT_EQ(by_name.size(), 6u);
  // One A100 each from the template: both on gpu-a, the only node with A100s.
  EXPECT_EQ(NodeOf(by_name["trainer-1"]), "gpu-a");
  EXPECT_EQ(NodeOf(by_name["trainer-2"]), "gpu-a");
  // Two T4s on one NUMA node (matchAttribute), with a semver selector.
  EXPECT_EQ(NodeOf(by_name["pair"]), "gpu-b");
  // A shared claim: allocated for the first pod, reserved for both, the second pod
  // following its allocation's node selector.
  EXPECT_EQ(NodeOf(by_name["infer-1"]), "gpu-b");
  EXPECT_EQ(NodeOf(by_name["infer-2"]), "gpu-b");
  // The third A100 claim: both A100s are taken by the claims written before it.
  EXPECT_FALSE(by_name["trainer-3"].node);
  // DynamicResources' PostFilter has nothing to deallocate, and preemption cannot help
  // (the nodes failed as UnschedulableAndUnresolvable).
  EXPECT_EQ(by_name["trainer-3"].reason,
            "0/3 nodes are available: 3 cannot allocate all claims. still not schedulable, preemption: 0/3 nodes are "
            "available: 3 Preemption is not helpful for scheduling..")
      << by_name["trainer-3"].reason;
  // explain says why, node by node: on gpu-a both A100s are taken.
  EXPECT_NE(by_name["trainer-3"].explain.find(
                "claim default/trainer-3-gpu, request gpu: 2 devices on the node match its selectors, 0 available, 1 "
                "needed"),
            std::string::npos)
      << by_name["trainer-3"].explain;

  // What a drain of gpu-b does: the pods there are deleted, their claims released (the
  // claim controller's part), and nothing else offers T4s.
  auto drained = (*sim)->Drain("gpu-b");
  ASSERT_TRUE(drained.ok()) << drained.status().ToString();
  for (const PodResult& r : *drained) {
    EXPECT_FALSE(r.node) << r.name;
    EXPECT_EQ(r.reason,
              "0/3 nodes are available: 1 node(s) were unschedulable, 2 cannot allocate all claims. still not "
              "schedulable, preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling..")
        << r.name;
  }
}

// A pod whose claim names a device class that does not exist is unschedulable with
// upstream's reason.
TEST(SimulatorTest, MissingDeviceClassIsReportedAsUpstreamDoes) {
  const std::string claim = R"(apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c, namespace: default}
spec:
  devices:
    requests:
    - name: req-1
      exactly: {deviceClassName: no-such-class}
---
)";
  auto sim = Start(Node("n1", "4") + claim);
  ASSERT_TRUE(sim);
  auto r = sim->Schedule(PodOf(Pod("p", "100m", "", "  resourceClaims: [{name: gpu, resourceClaimName: c}]\n")));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->node);
  // A PreFilter rejection is stated once, as upstream's Diagnosis.PreFilterMsg.
  EXPECT_EQ(r->reason,
            "0/1 nodes are available: request req-1: device class no-such-class does not exist. no new claims to "
            "deallocate, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling..")
      << r->reason;
}

TEST(SimulatorTest, ExplainKeepsTheVerdictOfEachPod) {
  auto sim = Start(Node("n1", "1") + Pod("small", "500m") + Pod("huge", "8"), Defaults(1, /*explain=*/true));
  ASSERT_TRUE(sim);
  std::vector<PodResult> r = sim->SchedulePending();
  ASSERT_EQ(r.size(), 2u);
  EXPECT_NE(r[0].explain.find("\"node\":\"n1\""), std::string::npos) << r[0].explain;
  EXPECT_NE(r[1].explain.find("NodeResourcesFit"), std::string::npos) << r[1].explain;
  EXPECT_NE(r[1].explain.find("Insufficient cpu"), std::string::npos) << r[1].explain;
}

TEST(SimulatorTest, PluginsOfTheCallersRegistryRunWithTheirArgs) {
  const std::string cluster = Node("roomy", "16") + Node("small", "2");
  auto stock = Start(cluster);
  ASSERT_TRUE(stock);
  auto r = stock->Schedule(PodOf(Pod("p", "1")));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(NodeOf(*r), "roomy");  // the default plugins: the most room

  SimulateOptions o = Defaults();
  o.registry.emplace("PreferNode", ksched::testing::NewPreferNode);
  o.config.profiles[0].plugins.score.enabled.push_back({"PreferNode", 10});
  o.config.profiles[0].plugin_config.push_back({"PreferNode", config::RawArgs{"node: small\n"}});
  auto custom = Start(cluster, o);
  ASSERT_TRUE(custom);
  r = custom->Schedule(PodOf(Pod("p", "1")));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(NodeOf(*r), "small");

  o.config.profiles[0].plugin_config.back().args = config::RawArgs{"nod: small\n"};
  auto bad = Simulator::New(Objects(cluster), o);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "profile \"default-scheduler\": initializing plugin \"PreferNode\": decoding args for plugin PreferNode: "
            "strict decoding error: unknown field \"nod\"");
}

// Gangs (Coscheduling, scheduler-plugins' PodGroups, which the 1.20.2 test server cannot
// serve without their CRD): a gang's pending pods are created together; one that fits
// is bound whole, one that does not is bound not at all, each member saying why.
TEST(SimulatorTest, GangsAreBoundWholeOrNotAtAll) {
  auto cfg = config::LoadConfigFromString(
      "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
      "profiles:\n- schedulerName: ksched\n  plugins:\n    multiPoint:\n"
      "      enabled: [{name: Coscheduling}]\n      disabled: [{name: PrioritySort}]\n"
      "  pluginConfig:\n  - {name: Coscheduling, args: {permitWaitingTimeSeconds: 5}}\n");
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  SimulateOptions o = Defaults();
  o.config = *cfg;
  auto group = [](std::string_view name, int min) {
    return "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: " + std::string(name) +
           "}\nspec: {minMember: " + std::to_string(min) + "}\n---\n";
  };
  auto member = [](std::string_view group, int i) {
    const std::string label = "  labels: {scheduling.x-k8s.io/pod-group: " + std::string(group) + "}\n";
    return Pod(std::string(group) + "-" + std::to_string(i), "1", "", "", label);
  };
  std::string cluster = Node("n1", "4") + Node("n2", "4") + group("small", 4) + group("big", 6);
  // Interleaved in the file: each gang is still created whole, at its first member.
  for (int i = 0; i < 6; ++i) {
    if (i < 4) cluster += member("small", i);
    cluster += member("big", i);
  }
  cluster += Pod("loner", "1");
  auto sim = Start(cluster, o);
  ASSERT_TRUE(sim);
  std::vector<PodResult> r = sim->SchedulePending();
  ASSERT_EQ(r.size(), 11u);
  int small_bound = 0, big_bound = 0;
  for (const PodResult& p : r) {
    if (p.name.starts_with("small-")) small_bound += p.node ? 1 : 0;
    if (p.name.starts_with("big-")) {
      big_bound += p.node ? 1 : 0;
      EXPECT_FALSE(p.reason.empty()) << p.name;
    }
  }
  EXPECT_EQ(small_bound, 4);
  EXPECT_EQ(big_bound, 0);  // 6 CPUs wanted, 4 left after the first gang
  EXPECT_EQ(r.back().name, "loner");
  EXPECT_TRUE(r.back().node);  // the room the big gang did not take
}

}  // namespace
}  // namespace ksched::simulate
