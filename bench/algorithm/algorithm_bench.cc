// The scheduling cycle in process, without an API server: 5,000 nodes in a cache, the
// default profile's framework (config/defaults + framework::InTreeRegistry(), built as
// pkg/scheduler does it) and the queue. Per pod: Pop, UpdateSnapshot, SchedulePod,
// Assume (+ Reserve, Permit), Done, then the next. Reports pods/s, the median of several
// runs (each on a fresh cache and queue), for three pod shapes:
//   basic          100m / 500Mi                                   target >= 20,000 pods/s
//   anti-affinity  + required podAntiAffinity on hostname          target >=  5,000 pods/s
//   spread         + topologySpreadConstraints on zone and hostname, maxSkew 1
//   replicaset     + the labels and owner of a ReplicaSet's replicas: no constraints
//                  of their own, so PodTopologySpread spreads them with the system
//                  defaults (zone maxSkew 5, hostname maxSkew 3, ScheduleAnyway) over
//                  the ReplicaSet's selector (the e2e bench's replicaset workload)
// and checks the placement of the last run (violations), so a figure that came from a
// profile without InterPodAffinity / PodTopologySpread shows for what it is.
//
// dra: --dra-nodes nodes (1,000), each publishing a ResourceSlice of 8 GPUs, and
// --dra-pods pods (5,000) each with a ResourceClaim of one device picked by a CEL
// selector (class "gpu": device.driver == ..., request: attributes model == "A100");
// target >= 5,000 pods/s. The check: every pod placed, every allocated device distinct
// (the DynamicResources plugin's in-flight allocations after the run).
//
// A fourth figure, preemption, is the first pass of the e2e bench's preemption workload
// (upstream scheduler_perf's PreemptionBasic): --preemption-nodes nodes (500) each full
// with four 900m low-priority pods, then as many 3000m pods at priority 10. Each attempt
// fails Filter everywhere, and DefaultPreemption's dry run picks victims and nominates a
// node (the victims' evictions are answered at once and the victims stay on their
// nodes, as before their deletes reach the scheduler's cache), so every later attempt
// also counts the earlier preemptors' nominations. Attempts per second, with the
// decision log on as in ksched. The check (every preemptor nominated to a node of its
// own, with 3 victims) shows that nominations are honoured; the dry run's details are
// the unit tests' (defaultpreemption, framework_run).
//
//   bench_algorithm [--nodes N] [--pods N] [--runs N] [--parallelism N] [--wake-after-us N]
//                   [--preemption-nodes N] [--dra-nodes N] [--dra-pods N]
//                   [--only basic|anti-affinity|spread|replicaset|preemption|dra]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include "config/effective_plugins.h"
#include "config/defaults.h"
#include "config/types.h"
#include "pkg/cache/cache.h"
#include "pkg/framework/plugins/dynamicresources/dynamic_resources.h"
#include "pkg/framework/registry.h"
#include "pkg/framework/runtime/framework.h"
#include "pkg/framework/runtime/parallelizer.h"
#include "pkg/framework/runtime/scheduling_algorithm.h"
#include "pkg/queue/events.h"
#include "pkg/queue/nominator_view.h"
#include "pkg/queue/scheduling_queue.h"
#include "tests/fakes/fake_cluster_lister.h"
#include "tests/fakes/objects.h"

namespace ksched {
namespace {

using framework::runtime::Framework;
using framework::runtime::ScheduleResult;
using testing::kHostnameLabel;
using testing::kZoneLabel;

constexpr int kZones = 10;

struct Options {
  int nodes = 5000;
  int pods = 2000;
  int runs = 7;
};

struct Shape {
  std::string_view name;
  api::Pod (*shape)(api::Pod);  // null: the basic pod
  double target;                // pods/s; 0: none set
  std::string_view plugin;      // the plugin that keeps the shape's constraint; empty: none
};

// A replica of ReplicaSet "web" (whose selector ReplicaSetLister() knows).
api::Pod AsReplica(api::Pod p) {
  p.metadata.labels.Set("app", "web");
  p.metadata.labels.Set("pod-template-hash", "5d8f7c9b4");
  p.metadata.owner_references.push_back({"apps/v1", "ReplicaSet", "web-5d8f7c9b4", "rs-uid", true});
  return p;
}

// The cluster objects the plugins look up: ReplicaSet "web" selecting its replicas by
// their two labels, as a Deployment's ReplicaSet does.
const api::ClusterLister& ReplicaSetLister() {
  static const testing::FakeClusterLister lister = [] {
    testing::FakeClusterLister l;
    api::LabelSelector selector;
    selector.match_labels.Set("app", "web");
    selector.match_labels.Set("pod-template-hash", "5d8f7c9b4");
    l.replica_sets.push_back({"default", std::move(selector)});
    return l;
  }();
  return lister;
}

constexpr Shape kShapes[] = {
    {"basic", nullptr, 20000, ""},
    {"anti-affinity", testing::WithRequiredAntiAffinity, 5000, "InterPodAffinity"},
    {"spread", testing::WithTopologySpread, 0, "PodTopologySpread"},
    {"replicaset", AsReplica, 0, "PodTopologySpread"},
};

// As upstream's node-default.yaml: 4 CPU, 32Gi, 110 pods; hostname and zone labels.
std::vector<api::NodePtr> MakeNodes(int count) {
  std::vector<api::NodePtr> nodes;
  for (int i = 0; i < count; ++i) {
    api::Node n = testing::TestNode("node-" + std::to_string(i), api::Quantity::FromValue(4),
                                    *api::Quantity::Parse("32Gi"));
    n.metadata.labels.Set(std::string(kHostnameLabel), n.metadata.name);
    n.metadata.labels.Set(std::string(kZoneLabel), "zone-" + std::to_string(i % kZones));
    nodes.push_back(std::make_shared<const api::Node>(std::move(n)));
  }
  return nodes;
}

// Replicas of one template, as the informer hands them to the scheduler: the decoder
// gives every replica the same instance of the template's containers, affinity and
// spread constraints (pkg/api/shared.h), so the pods here share them too.
std::vector<api::PodPtr> MakePods(const Shape& shape, int count) {
  api::Pod replica = testing::TestPod("default", "", "default-scheduler",
                                      {{"cpu", api::Quantity::FromMilli(100)}, {"memory", *api::Quantity::Parse("500Mi")}});
  if (shape.shape != nullptr) replica = shape.shape(std::move(replica));
  std::vector<api::PodPtr> pods;
  for (int i = 0; i < count; ++i) {
    api::Pod p = replica;
    p.metadata.name = "pod-" + std::to_string(i);
    p.metadata.uid = "uid-" + std::to_string(i);
    pods.push_back(std::make_shared<const api::Pod>(std::move(p)));
  }
  return pods;
}

// The default profile as the scheduler builds it: upstream in-tree plugins that the
// registry does not have yet are dropped (pkg/scheduler/scheduler.cc does the same,
// with a log line); their names are returned.
config::KubeSchedulerProfile DefaultProfile(const framework::Registry& registry, std::vector<std::string>& dropped) {
  config::KubeSchedulerConfiguration cfg;
  config::SetDefaults(cfg);
  config::KubeSchedulerProfile profile = cfg.profiles.front();
  for (const auto& field : config::kPluginSetFields) {
    std::erase_if((profile.plugins.*field.member).enabled, [&](const config::Plugin& p) {
      bool drop = !registry.count(p.name) && config::InTreePluginLookup(p.name).has_value();
      if (drop && std::find(dropped.begin(), dropped.end(), p.name) == dropped.end()) dropped.push_back(p.name);
      return drop;
    });
  }
  return profile;
}

struct RunResult {
  double pods_per_second = 0;
  int unschedulable = 0;
  std::map<std::string, std::string> host_of_pod;  // pod name -> node
  // DynamicResources' view after the run: claims in flight and distinct devices taken.
  size_t dra_pending = 0, dra_devices = 0;
};

// One run: a fresh cache with every node, a fresh framework and queue holding every pod;
// only the scheduling loop is timed.
StatusOr<RunResult> RunOnce(const framework::Registry& registry, const config::KubeSchedulerProfile& profile,
                            framework::runtime::Parallelizer& parallelizer, int parallelism,
                            const std::vector<api::NodePtr>& nodes, const std::vector<api::PodPtr>& pods,
                            const api::ClusterLister& lister = ReplicaSetLister()) {
  std::unique_ptr<cache::Cache> cache = cache::NewCache();
  for (const api::NodePtr& n : nodes)
    if (auto s = cache->AddNode(n); !s.ok()) return s;
  cache::Snapshot snapshot;
  framework::runtime::FrameworkOptions fopts;
  fopts.snapshot = &snapshot;
  fopts.parallelizer = &parallelizer;
  fopts.parallelism = parallelism;
  fopts.lister = &lister;
  auto fwk_or = framework::runtime::NewFramework(registry, profile, fopts);
  if (!fwk_or.ok()) return fwk_or.status();
  Framework& fwk = **fwk_or;
  queue::QueueOptions qopts;
  qopts.pre_enqueue_plugins = fwk.PreEnqueuePlugins();
  std::vector<framework::Plugin*> rejecting = fwk.RejectingPlugins();
  qopts.cluster_event_map = queue::ClusterEventMap::FromPlugins(rejecting);
  std::unique_ptr<queue::SchedulingQueue> q = queue::NewSchedulingQueue(std::move(qopts));
  for (const api::PodPtr& p : pods)
    if (auto s = q->Add(p); !s.ok()) return s;
  framework::runtime::SchedulingAlgorithm algorithm({.seed = 1});

  RunResult result;
  std::vector<std::pair<const api::Pod*, std::string>> placed;
  placed.reserve(pods.size());
  const auto start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < pods.size(); ++i) {
    queue::QueuedPodInfoPtr info = q->Pop();
    const api::Pod& pod = info->pod();
    framework::CycleState state;
    if (auto s = cache->UpdateSnapshot(snapshot); !s.ok()) return s;
    auto outcome = algorithm.SchedulePod(fwk, state, pod, snapshot);
    if (auto* err = std::get_if<framework::Status>(&outcome)) return Internal("SchedulePod: " + err->Message());
    if (std::holds_alternative<framework::runtime::FitError>(outcome)) {
      ++result.unschedulable;
      q->Done(pod);
      continue;
    }
    const std::string& host = std::get<ScheduleResult>(outcome).suggested_host;
    auto assumed = std::make_shared<api::Pod>(pod);
    assumed->spec.node_name = host;
    if (auto s = cache->AssumePod(std::move(assumed)); !s.ok()) return s;
    if (auto s = fwk.RunReservePluginsReserve(state, pod, host); !s.IsSuccess())
      return Internal("Reserve: " + s.Message());
    if (auto s = fwk.RunPermitPlugins(state, pod, host); !s.IsSuccess()) return Internal("Permit: " + s.Message());
    placed.emplace_back(&pod, host);
    q->Done(pod);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  q->Close();
  result.pods_per_second = static_cast<double>(pods.size()) / seconds;
  for (const auto& [pod, host] : placed) result.host_of_pod.emplace(pod->metadata.name, host);
  for (framework::PreEnqueuePlugin* p : fwk.PreEnqueuePlugins()) {
    if (auto* dra = dynamic_cast<framework::plugins::dynamicresources::DynamicResources*>(p)) {
      result.dra_pending = dra->tracker().NumPending();
      result.dra_devices = dra->tracker().NumDevicesInUse();
    }
  }
  return result;
}

// ---- dynamic resources ----

constexpr std::string_view kGpuDriver = "gpu.example.com";

// Nodes as MakeNodes, each with a slice of 8 GPUs; the class and a claim per pod.
struct DraCluster {
  testing::FakeClusterLister lister;
  std::vector<api::NodePtr> nodes;
  std::vector<api::PodPtr> pods;
};

std::unique_ptr<DraCluster> MakeDraCluster(int num_nodes, int num_pods) {
  auto c = std::make_unique<DraCluster>();
  c->nodes = MakeNodes(num_nodes);
  api::DeviceClass gpu;
  gpu.metadata.name = "gpu";
  gpu.metadata.resource_version = "1";
  gpu.selectors.push_back({"device.driver == \"" + std::string(kGpuDriver) + "\""});
  c->lister.Add(std::move(gpu));
  for (const api::NodePtr& n : c->nodes) {
    api::ResourceSlice s;
    s.metadata.name = n->Name() + "-gpus";
    s.driver = std::string(kGpuDriver);
    s.pool = {n->Name(), 1, 1};
    s.nodes.node_name = n->Name();
    for (int d = 0; d < 8; ++d) {
      api::Device dev;
      dev.name = "gpu-" + std::to_string(d);
      dev.attributes["model"] = api::DeviceAttribute{std::string("A100")};
      dev.attributes["index"] = api::DeviceAttribute{int64_t{d}};
      dev.capacity["memory"] = api::DeviceCapacity{*api::Quantity::Parse("80Gi")};
      s.devices.push_back(std::move(dev));
    }
    c->lister.Add(std::move(s));
  }
  api::Pod replica = testing::TestPod("default", "", "default-scheduler",
                                      {{"cpu", api::Quantity::FromMilli(100)}, {"memory", *api::Quantity::Parse("500Mi")}});
  for (int i = 0; i < num_pods; ++i) {
    api::ResourceClaim claim;
    claim.metadata.name = "claim-" + std::to_string(i);
    claim.metadata.namespace_ = "default";
    claim.metadata.uid = "claim-uid-" + std::to_string(i);
    claim.metadata.resource_version = "1";
    api::DeviceRequest req;
    req.name = "gpu";
    req.exactly = api::DeviceSubRequest{};
    req.exactly->device_class_name = "gpu";
    req.exactly->selectors.push_back({"device.attributes[\"" + std::string(kGpuDriver) + "\"].model == \"A100\""});
    claim.spec.requests.push_back(std::move(req));
    c->lister.Add(std::move(claim));
    api::Pod p = replica;
    p.metadata.name = "pod-" + std::to_string(i);
    p.metadata.uid = "uid-" + std::to_string(i);
    p.spec.resource_claims.push_back({.name = "gpu", .resource_claim_name = "claim-" + std::to_string(i)});
    c->pods.push_back(std::make_shared<const api::Pod>(std::move(p)));
  }
  return c;
}

// ---- preemption ----

// Evictions answered at once; the victims stay on their nodes.
class CountingPreemptor final : public framework::PodPreemptor {
 public:
  void PreemptVictim(const api::PodPtr&, const api::PodPtr&, std::string_view,
                     std::function<void(ksched::Status)> done) override {
    ++victims;
    done(ksched::Status::OK());
  }
  void ClearNomination(const api::PodPtr&) override {}
  void PreemptionFailed(const api::PodPtr&) override {}
  int victims = 0;
};

struct PreemptionResult {
  double attempts_per_second = 0;
  int nominated = 0;         // attempts that ended with a nominated node
  int distinct_nodes = 0;    // nodes nominated
  int victims = 0;
  int other = 0;             // attempts that neither fit nor nominated
};

StatusOr<PreemptionResult> RunPreemptionOnce(const framework::Registry& registry,
                                             const config::KubeSchedulerProfile& profile,
                                             framework::runtime::Parallelizer& parallelizer, int parallelism,
                                             const std::vector<api::NodePtr>& nodes) {
  std::unique_ptr<cache::Cache> cache = cache::NewCache();
  for (const api::NodePtr& n : nodes) {
    if (auto s = cache->AddNode(n); !s.ok()) return s;
    for (int k = 0; k < 4; ++k) {
      api::Pod low = testing::TestPod("default", "low-" + n->Name() + "-" + std::to_string(k), "default-scheduler",
                                      {{"cpu", api::Quantity::FromMilli(900)}, {"memory", *api::Quantity::Parse("500Mi")}});
      low.metadata.uid = "uid-" + low.metadata.name;
      low.spec.node_name = n->Name();
      low.spec.priority = 0;
      if (auto s = cache->AddPod(std::make_shared<const api::Pod>(std::move(low))); !s.ok()) return s;
    }
  }
  queue::NominatorView nominator;
  CountingPreemptor preemptor;
  cache::Snapshot snapshot;
  framework::runtime::FrameworkOptions fopts;
  fopts.snapshot = &snapshot;
  fopts.parallelizer = &parallelizer;
  fopts.parallelism = parallelism;
  fopts.preemptor = &preemptor;
  fopts.nominator = &nominator;
  auto fwk_or = framework::runtime::NewFramework(registry, profile, fopts);
  if (!fwk_or.ok()) return fwk_or.status();
  Framework& fwk = **fwk_or;
  queue::QueueOptions qopts;
  qopts.pre_enqueue_plugins = fwk.PreEnqueuePlugins();
  qopts.cluster_event_map = queue::ClusterEventMap::FromPlugins(fwk.RejectingPlugins());
  std::unique_ptr<queue::SchedulingQueue> q = queue::NewSchedulingQueue(std::move(qopts));
  nominator.queue = q.get();

  const int count = static_cast<int>(nodes.size());
  for (int i = 0; i < count; ++i) {
    api::Pod high = testing::TestPod("default", "high-" + std::to_string(i), "default-scheduler",
                                     {{"cpu", api::Quantity::FromMilli(3000)}, {"memory", *api::Quantity::Parse("500Mi")}});
    high.metadata.uid = "uid-" + high.metadata.name;
    high.spec.priority = 10;
    if (auto s = q->Add(std::make_shared<const api::Pod>(std::move(high))); !s.ok()) return s;
  }
  // As ksched runs it: the decision log on (a failed attempt also explains itself).
  framework::runtime::SchedulingAlgorithm algorithm({.seed = 1, .explain = true});

  PreemptionResult result;
  std::map<std::string, int> per_node;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < count; ++i) {
    queue::QueuedPodInfoPtr info = q->Pop();
    const api::PodPtr pod = info->pod_ptr();
    framework::CycleState state;
    if (auto s = cache->UpdateSnapshot(snapshot); !s.ok()) return s;
    auto outcome = algorithm.SchedulePod(fwk, state, *pod, snapshot);
    fwk.parallelizer().Park();
    auto* fit = std::get_if<framework::runtime::FitError>(&outcome);
    if (fit == nullptr) {
      ++result.other;
      q->Done(*pod);
      continue;
    }
    auto [post, status] = fwk.RunPostFilterPlugins(state, *pod, fit->diagnosis);
    fwk.parallelizer().Park();  // as the scheduler does after PostFilter
    if (!post.nominated_node_name.has_value() || post.nominated_node_name->empty()) {
      ++result.other;
      q->Done(*pod);
      continue;
    }
    ++result.nominated;
    ++per_node[*post.nominated_node_name];
    info->awaiting_preemption = post.awaiting_victims;
    if (auto s = q->AddUnschedulableIfNotPresent(std::move(info)); !s.ok()) return s;
    q->nominator().AddNominatedPod(pod, {.mode = queue::NominatingInfo::Mode::kOverride,
                                         .node_name = *post.nominated_node_name});
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  q->Close();
  result.attempts_per_second = count / seconds;
  result.distinct_nodes = static_cast<int>(per_node.size());
  result.victims = preemptor.victims;
  return result;
}

// Pods per node and per zone of a run; the node index is in the name ("node-<i>").
struct Counts {
  std::vector<int> per_node;
  std::vector<int> per_zone;
};
Counts CountPlacement(const RunResult& r, int num_nodes) {
  Counts c{std::vector<int>(static_cast<size_t>(num_nodes)), std::vector<int>(kZones)};
  for (const auto& [pod, host] : r.host_of_pod) {
    int i = std::atoi(host.c_str() + 5);
    ++c.per_node[static_cast<size_t>(i)];
    ++c.per_zone[static_cast<size_t>(i % kZones)];
  }
  return c;
}

// The constraint each shape must keep, checked on the last run's placement: the
// violations and a description.
std::pair<long, std::string> Check(const Shape& shape, const RunResult& r, int num_nodes) {
  Counts c = CountPlacement(r, num_nodes);
  auto [node_min, node_max] = std::minmax_element(c.per_node.begin(), c.per_node.end());
  auto [zone_min, zone_max] = std::minmax_element(c.per_zone.begin(), c.per_zone.end());
  char buf[256];
  long over = 0;
  if (shape.name == "anti-affinity") {
    over = std::count_if(c.per_node.begin(), c.per_node.end(), [](int n) { return n > 1; });
    std::snprintf(buf, sizeof buf, "violations: %ld (nodes holding more than one pod; most: %d)", over, *node_max);
  } else if (shape.name == "spread") {
    over = std::count_if(c.per_node.begin(), c.per_node.end(), [&](int n) { return n > *node_min + 1; }) +
           std::count_if(c.per_zone.begin(), c.per_zone.end(), [&](int n) { return n > *zone_min + 1; });
    std::snprintf(buf, sizeof buf, "violations: %ld (zone skew %d, hostname skew %d; maxSkew 1)", over,
                  *zone_max - *zone_min, *node_max - *node_min);
  } else {
    std::snprintf(buf, sizeof buf, "violations: 0 (no constraints; zone skew %d, pods per node %d-%d)",
                  *zone_max - *zone_min, *node_min, *node_max);
  }
  return {over, buf};
}

bool InProfile(const std::map<std::string, std::vector<std::string>>& lists, std::string_view plugin) {
  for (const auto& [point, names] : lists)
    if (std::find(names.begin(), names.end(), plugin) != names.end()) return true;
  return false;
}

int ParseFlag(int argc, char** argv, std::string_view flag, int fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (argv[i] == flag) return std::max(1, std::atoi(argv[i + 1]));
  return fallback;
}

int Main(int argc, char** argv) {
  Options o;
  std::map<std::string, std::vector<std::string>> lists;  // extension point -> plugins
  o.nodes = ParseFlag(argc, argv, "--nodes", o.nodes);
  o.pods = ParseFlag(argc, argv, "--pods", o.pods);
  o.runs = ParseFlag(argc, argv, "--runs", o.runs);
  const int preemption_nodes = ParseFlag(argc, argv, "--preemption-nodes", 500);
  std::string_view only;  // --only NAME: one workload (e.g. for perf)
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string_view(argv[i]) == "--only") only = argv[i + 1];

  const framework::Registry registry = framework::InTreeRegistry();
  std::vector<std::string> dropped;
  const config::KubeSchedulerProfile profile = DefaultProfile(registry, dropped);
  // As the scheduler: `parallelism` (16) workers, but no more than there are cores.
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int parallelism =
      ParseFlag(argc, argv, "--parallelism", std::min(config::KubeSchedulerConfiguration{}.parallelism, cores));
  // How long a Filter/Score job runs on the caller alone before sleeping workers are
  // woken (0: wake them with every job).
  const int wake_after_us = ParseFlag(argc, argv, "--wake-after-us",
                                      static_cast<int>(framework::runtime::Parallelizer::kWakeAfter.count()));
  framework::runtime::Parallelizer parallelizer(parallelism, std::chrono::microseconds(wake_after_us));

  std::printf("bench_algorithm: %d nodes in %d zones (4 CPU / 32Gi / 110 pods), %d pods per run, %d runs, "
              "parallelism %d\n",
              o.nodes, kZones, o.pods, o.runs, parallelism);
  {
    framework::runtime::FrameworkOptions fopts;
    fopts.parallelizer = &parallelizer;
    auto fwk = framework::runtime::NewFramework(registry, profile, fopts);
    if (!fwk.ok()) {
      std::fprintf(stderr, "default profile: %s\n", fwk.status().ToString().c_str());
      return 1;
    }
    std::printf("profile \"%s\" (config::SetDefaults + framework::InTreeRegistry()):\n",
                profile.scheduler_name.c_str());
    lists = (*fwk)->ListPlugins();
    for (const auto& [point, names] : lists) {
      if (names.empty()) continue;
      std::string joined;
      for (const auto& n : names) joined += (joined.empty() ? "" : ", ") + n;
      std::printf("  %-10s %s\n", point.c_str(), joined.c_str());
    }
    for (std::string_view plugin : {"InterPodAffinity", "PodTopologySpread"})
      std::printf("  %s: %s\n", std::string(plugin).c_str(),
                  InProfile(lists, plugin) ? "in the profile"
                                           : "NOT in the profile (not registered yet): its pods measure as basic ones");
    if (!dropped.empty()) {
      std::string joined;
      for (const auto& n : dropped) joined += (joined.empty() ? "" : ", ") + n;
      std::printf("  dropped (in upstream's default profile, not registered in ksched): %s\n", joined.c_str());
    }
  }

  const std::vector<api::NodePtr> nodes = MakeNodes(o.nodes);
  std::printf("\n%-14s %12s %10s %10s   %-22s %s\n", "pods", "median pods/s", "min", "max", "target", "placement");
  int failed = 0;
  for (const Shape& shape : kShapes) {
    if (!only.empty() && shape.name != only) continue;
    const std::vector<api::PodPtr> pods = MakePods(shape, o.pods);
    std::vector<double> rates;
    RunResult last;
    for (int r = 0; r < o.runs; ++r) {
      auto result = RunOnce(registry, profile, parallelizer, parallelism, nodes, pods);
      if (!result.ok()) {
        std::fprintf(stderr, "%s: %s\n", std::string(shape.name).c_str(), result.status().ToString().c_str());
        return 1;
      }
      rates.push_back(result->pods_per_second);
      last = std::move(*result);
    }
    std::sort(rates.begin(), rates.end());
    const double median = rates[rates.size() / 2];
    char target[64] = "-";
    if (shape.target > 0)
      std::snprintf(target, sizeof target, ">= %.0f (%s)", shape.target, median >= shape.target ? "met" : "NOT met");
    auto [violations, check] = Check(shape, last, o.nodes);
    if (last.unschedulable > 0) check += ", " + std::to_string(last.unschedulable) + " unschedulable";
    // Violations count as a failure once the plugin that should prevent them runs.
    const bool enforced = shape.plugin.empty() || InProfile(lists, shape.plugin);
    if (!enforced) check += " [" + std::string(shape.plugin) + " not in the profile]";
    std::printf("%-14s %12.0f %10.0f %10.0f   %-22s %s\n", std::string(shape.name).c_str(), median, rates.front(),
                rates.back(), target, check.c_str());
    std::fflush(stdout);
    failed += enforced && violations > 0;
  }
  if (only.empty() || only == "dra") {
    const int dra_nodes = ParseFlag(argc, argv, "--dra-nodes", 1000);
    const int dra_pods = ParseFlag(argc, argv, "--dra-pods", 5000);
    std::unique_ptr<DraCluster> cluster = MakeDraCluster(dra_nodes, dra_pods);
    std::vector<double> rates;
    RunResult last;
    for (int r = 0; r < o.runs; ++r) {
      auto result = RunOnce(registry, profile, parallelizer, parallelism, cluster->nodes, cluster->pods, cluster->lister);
      if (!result.ok()) {
        std::fprintf(stderr, "dra: %s\n", result.status().ToString().c_str());
        return 1;
      }
      rates.push_back(result->pods_per_second);
      last = std::move(*result);
    }
    std::sort(rates.begin(), rates.end());
    const double median = rates[rates.size() / 2];
    const size_t placed = last.host_of_pod.size();
    const bool ok = last.unschedulable == 0 && placed == static_cast<size_t>(dra_pods) && last.dra_pending == placed &&
                    last.dra_devices == placed;
    char target[64];
    std::snprintf(target, sizeof target, ">= 5000 (%s)", median >= 5000 ? "met" : "NOT met");
    std::printf("%-14s %12.0f %10.0f %10.0f   %-22s %zu of %d pods placed on %d nodes x 8 GPUs, %zu claims "
                "allocated, %zu distinct devices%s\n",
                "dra", median, rates.front(), rates.back(), target, placed, dra_pods, dra_nodes, last.dra_pending,
                last.dra_devices, ok ? "" : " UNEXPECTED");
    std::fflush(stdout);
    failed += !ok;
  }
  if (only.empty() || only == "preemption") {
    const std::vector<api::NodePtr> small = MakeNodes(preemption_nodes);
    std::vector<double> rates;
    PreemptionResult last;
    for (int r = 0; r < o.runs; ++r) {
      auto result = RunPreemptionOnce(registry, profile, parallelizer, parallelism, small);
      if (!result.ok()) {
        std::fprintf(stderr, "preemption: %s\n", result.status().ToString().c_str());
        return 1;
      }
      rates.push_back(result->attempts_per_second);
      last = *result;
    }
    std::sort(rates.begin(), rates.end());
    // Every preemptor must end nominated to a node of its own, with 3 victims there.
    const bool ok = last.nominated == preemption_nodes && last.distinct_nodes == preemption_nodes &&
                    last.victims == 3 * preemption_nodes && last.other == 0;
    std::printf("%-14s %12.0f %10.0f %10.0f   %-22s %d of %d preemptors nominated to %d nodes, %d victims "
                "(expected %d each, %d)%s\n",
                "preemption", rates[rates.size() / 2], rates.front(), rates.back(), "- (attempts/s)", last.nominated,
                preemption_nodes, last.distinct_nodes, last.victims, preemption_nodes, 3 * preemption_nodes,
                ok ? "" : " UNEXPECTED");
    failed += !ok;
  }
  return failed == 0 ? 0 : 1;
}

}  // namespace
}  // namespace ksched

int main(int argc, char** argv) { return ksched::Main(argc, argv); }
