#include "bench/e2e/workloads.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <ctime>
#include <map>

#include "pkg/api/quantity.h"
#include "tests/fakes/objects.h"

namespace ksched::bench {
namespace {

using testing::kHostnameLabel;
using testing::kZoneLabel;

// Every measured pod's memory request.
constexpr std::string_view kPodMemory = "500Mi";

__attribute__((format(printf, 1, 2))) std::string Format(const char* fmt, ...) {
  char buf[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  return buf;
}

// Bound pods per value of a node label, over every node carrying it (so a domain no pod
// landed in counts 0, as it does for the spreading plugins: all nodes here are eligible,
// having both labels and no taints or selectors against them).
std::map<std::string, int> PodsPerDomain(const Placement& p, std::string_view key) {
  std::map<std::string, int> counts;
  std::unordered_map<std::string, std::string> domain_of_node;
  for (const api::Node& n : p.nodes) {
    if (const std::string* v = n.metadata.labels.Get(key)) {
      counts.emplace(*v, 0);
      domain_of_node.emplace(n.metadata.name, *v);
    }
  }
  for (const auto& [pod, node] : p.node_of_pod) {
    if (auto it = domain_of_node.find(node); it != domain_of_node.end()) ++counts[it->second];
  }
  return counts;
}

struct Spread {
  int min = 0, max = 0;
  size_t domains = 0;
  int skew() const { return max - min; }
};
Spread SpreadOf(const std::map<std::string, int>& counts) {
  Spread s;
  s.domains = counts.size();
  if (counts.empty()) return s;
  auto [lo, hi] = std::minmax_element(counts.begin(), counts.end(),
                                      [](const auto& a, const auto& b) { return a.second < b.second; });
  s.min = lo->second;
  s.max = hi->second;
  return s;
}

Verification VerifyNothing(const Workload&, const Placement&) {
  return {0, {"placement: no hard constraints to check"}};
}

Verification VerifyAntiAffinity(const Workload&, const Placement& p) {
  auto per_node = PodsPerDomain(p, kHostnameLabel);
  Verification v;
  size_t used = 0;
  for (const auto& [node, n] : per_node) {
    used += n > 0;
    v.violations += n > 1;
  }
  Spread s = SpreadOf(per_node);
  v.lines.push_back(Format("anti-affinity: %zu pods on %zu nodes; %lld node(s) hold more than one (most: %d)",
                           p.node_of_pod.size(), used, static_cast<long long>(v.violations), s.max));
  return v;
}

// Both constraints have maxSkew 1: a violation is a domain more than 1 above the emptiest.
Verification VerifySpread(const Workload&, const Placement& p) {
  Verification v;
  for (std::string_view key : {kZoneLabel, kHostnameLabel}) {
    auto counts = PodsPerDomain(p, key);
    Spread s = SpreadOf(counts);
    int64_t over = 0;
    for (const auto& [domain, n] : counts) over += n > s.min + 1;
    v.violations += over;
    v.lines.push_back(Format("spread on %s: skew %d (min %d, max %d over %zu domains), %lld domain(s) over maxSkew 1",
                             std::string(key).c_str(), s.skew(), s.min, s.max, s.domains,
                             static_cast<long long>(over)));
  }
  return v;
}

// Preferred affinity is no hard constraint: report how far the pods gathered.
Verification VerifyGathering(const Workload&, const Placement& p) {
  auto per_zone = PodsPerDomain(p, kZoneLabel);
  size_t zones_used = 0;
  for (const auto& [zone, n] : per_zone) zones_used += n > 0;
  Spread s = SpreadOf(per_zone);
  double share = p.node_of_pod.empty() ? 0 : 100.0 * s.max / static_cast<double>(p.node_of_pod.size());
  return {0, {Format("preferred-affinity: pods in %zu of %zu zones; the most populated zone holds %d (%.1f%%)",
                     zones_used, per_zone.size(), s.max, share)}};
}

// System-default spreading is soft (ScheduleAnyway): report the skews.
Verification VerifyDefaultSpreading(const Workload&, const Placement& p) {
  auto per_zone = PodsPerDomain(p, kZoneLabel);
  std::string counts;
  for (const auto& [zone, n] : per_zone) counts += (counts.empty() ? "" : " ") + zone + "=" + std::to_string(n);
  Spread z = SpreadOf(per_zone), h = SpreadOf(PodsPerDomain(p, kHostnameLabel));
  return {0,
          {"replicaset: pods per zone: " + counts,
           Format("replicaset: zone skew (max-min) %d; node skew %d (min %d, max %d)", z.skew(), h.skew(), h.min,
                  h.max)}};
}

int64_t Bytes(std::string_view quantity) { return api::Quantity::Parse(quantity)->Value(); }

// What a pod's containers request (the bench's pods have no init containers or overhead).
struct Usage {
  int64_t cpu_milli = 0, memory = 0, pods = 0;
};
Usage Requests(const api::Pod& p) {
  Usage u{.pods = 1};
  for (const api::Container& c : p.spec.containers) {
    if (const api::Quantity* q = api::FindResource(c.requests, "cpu")) u.cpu_milli += q->MilliValue();
    if (const api::Quantity* q = api::FindResource(c.requests, "memory")) u.memory += q->Value();
  }
  return u;
}

// The fewest fill pods a measured pod must evict from a full node to fit: upstream's
// SelectVictimsOnNode removes every lower-priority pod, then reprieves as many as still
// fit, so an optimal scheduler evicts exactly this many per preemptor.
int VictimsPerNode(const Workload& w, const api::Node& node) {
  const Fill& f = *w.fill;
  const api::Quantity* cpu = api::FindResource(node.status.allocatable, "cpu");
  const api::Quantity* mem = api::FindResource(node.status.allocatable, "memory");
  for (int k = 0; k <= f.per_node; ++k) {
    int64_t kept = f.per_node - k;
    if (kept * f.cpu_milli + w.pod_cpu_milli <= cpu->MilliValue() &&
        kept * Bytes(f.memory) + Bytes(kPodMemory) <= mem->Value())
      return k;
  }
  return f.per_node;
}

// HH:MM:SS.mmm in local time, as the schedulers' log lines (klog) print the time of day.
std::string FormatTimeOfDay(std::chrono::system_clock::time_point t) {
  const std::time_t secs = std::chrono::system_clock::to_time_t(t);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count() % 1000;
  std::tm tm{};
  localtime_r(&secs, &tm);
  return Format("%02d:%02d:%02d.%03lld", tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<long long>(ms));
}

// Every measured pod bound, as few victims as an optimal scheduler needs, how soon each
// preemptor was bound once its node's last victim had gone, and no node holding more
// than its allocatable (pods being deleted aside) once the run is over.
Verification VerifyPreemption(const Workload& w, const Placement& p) {
  Verification v;
  const std::string fill_prefix = "default/" + std::string(kFillPodPrefix);
  size_t victims = 0, others = 0, inexact = 0;
  std::unordered_map<std::string, std::vector<Clock::time_point>> removed_on_node;
  for (const testing::KubeletStandin::Removal& r : p.removals) {
    if (r.key.starts_with(fill_prefix)) {
      ++victims;
    } else {
      ++others;
    }
    inexact += r.final_state_unknown;
    removed_on_node[r.node].push_back(r.removed_at);
  }
  const int per_node = p.nodes.empty() ? 0 : VictimsPerNode(w, p.nodes.front());
  const size_t expected = static_cast<size_t>(p.pods) * static_cast<size_t>(per_node);
  v.lines.push_back(Format("victims: %zu low-priority pods removed (expected %zu: %d preemptors x %d per node)",
                           victims, expected, p.pods, per_node));
  if (victims != expected)
    v.lines.push_back(Format("victims off by %+lld from the expected %zu",
                             static_cast<long long>(victims) - static_cast<long long>(expected), expected));
  if (others > 0) v.lines.push_back(Format("other bound pods removed: %zu (not low-priority)", others));
  if (inexact > 0) v.lines.push_back(Format("(%zu removals seen only on a relist: their times are late)", inexact));

  // Bind minus the last removal on the pod's node before it.
  std::vector<double> delays_ms;
  struct Slow {
    double delay_ms;
    const std::string* pod;
    const std::string* node;
    Clock::time_point removed, bound;
  };
  std::vector<Slow> slow;
  size_t without_removal = 0;
  for (auto& [node, times] : removed_on_node) std::sort(times.begin(), times.end());
  for (const auto& [pod, at] : p.bound_at) {
    auto node = p.node_of_pod.find(pod);
    auto removed = node == p.node_of_pod.end() ? removed_on_node.end() : removed_on_node.find(node->second);
    if (removed == removed_on_node.end() || removed->second.front() > at) {
      ++without_removal;
      continue;
    }
    auto last = std::upper_bound(removed->second.begin(), removed->second.end(), at) - 1;
    delays_ms.push_back(std::chrono::duration<double, std::milli>(at - *last).count());
    slow.push_back({delays_ms.back(), &pod, &node->second, *last, at});
  }
  double max_delay = delays_ms.empty() ? 0 : *std::max_element(delays_ms.begin(), delays_ms.end());
  v.lines.push_back(Format("preemptor bound after its node's last victim removal: median %.0f ms, p90 %.0f ms, "
                           "max %.0f ms (%zu pods)",
                           Percentile(delays_ms, 0.5), Percentile(delays_ms, 0.9), max_delay, delays_ms.size()));
  // The slowest ones, in wall-clock time to compare with the schedulers' logs.
  const size_t shown = std::min<size_t>(slow.size(), 3);
  std::partial_sort(slow.begin(), slow.begin() + static_cast<std::ptrdiff_t>(shown), slow.end(),
                    [](const Slow& a, const Slow& b) { return a.delay_ms > b.delay_ms; });
  const auto to_wall = [steady = std::chrono::steady_clock::now(), wall = std::chrono::system_clock::now()](
                           Clock::time_point t) {
    return FormatTimeOfDay(wall - std::chrono::duration_cast<std::chrono::system_clock::duration>(steady - t));
  };
  for (size_t i = 0; i < shown; ++i)
    v.lines.push_back(Format("  slow: %s on %s, last victim removed %s, bound %s (%.0f ms)", slow[i].pod->c_str(),
                             slow[i].node->c_str(), to_wall(slow[i].removed).c_str(), to_wall(slow[i].bound).c_str(),
                             slow[i].delay_ms));
  if (without_removal > 0)
    v.lines.push_back(Format("preemptors bound with no removal on their node before the bind: %zu", without_removal));

  // Capacity at the end, over the pods that still hold their node.
  std::unordered_map<std::string, Usage> used;
  size_t measured_bound = 0, terminating = 0;
  for (const api::PodPtr& pod : p.pods_at_end) {
    if (!pod->IsAssigned() || pod->IsTerminal()) continue;
    if (pod->IsBeingDeleted()) {
      ++terminating;
      continue;
    }
    measured_bound += !pod->metadata.name.starts_with(kFillPodPrefix);
    Usage r = Requests(*pod);
    Usage& u = used[pod->spec.node_name];
    u.cpu_milli += r.cpu_milli;
    u.memory += r.memory;
    u.pods += r.pods;
  }
  for (const api::Node& n : p.nodes) {
    auto it = used.find(n.metadata.name);
    if (it == used.end()) continue;
    const auto& alloc = n.status.allocatable;
    v.violations += it->second.cpu_milli > api::FindResource(alloc, "cpu")->MilliValue() ||
                    it->second.memory > api::FindResource(alloc, "memory")->Value() ||
                    it->second.pods > api::FindResource(alloc, "pods")->Value();
  }
  v.lines.push_back(Format("high-priority pods bound at the end: %zu of %d; pods still terminating: %zu",
                           measured_bound, p.pods, terminating));
  v.lines.push_back(Format("capacity: %lld of %zu nodes over their allocatable cpu, memory or pods at the end",
                           static_cast<long long>(v.violations), p.nodes.size()));
  return v;
}

// Upstream scheduler_perf's "Preemption" test (performance-config.yaml, 500Nodes):
// node-default.yaml's 4 CPU / 32Gi nodes, each holding 4 pod-low-priority.yaml pods of
// 900m / 500Mi, then pod-high-priority.yaml's 3000m / 500Mi pods at priority 10: each
// fits on a node only once 3 of its 4 low pods are gone. Upstream's templates set the
// priority in the spec and terminationGracePeriodSeconds 0 on the low pods, as
// scheduler_perf runs no admission and no kubelet; here the Priority admission plugin
// resolves the classes, and victims are deleted gracefully and finished by the kubelet
// stand-in, as on a real cluster.
// Gangs: every group must end bound whole. Also how far apart a group's binds were seen
// (its members are allowed together at Permit, so its binds go out together).
Verification VerifyGangs(const Workload& w, const Placement& p) {
  std::map<std::string, std::vector<Clock::time_point>> binds;  // group -> bind times
  std::map<std::string, int> members;
  for (int i = 0; i < p.pods; ++i) {
    const std::string group = GangName(i / w.gang_size);
    ++members[group];
    auto it = p.bound_at.find("bench-pod-" + std::to_string(i));
    if (it != p.bound_at.end()) binds[group].push_back(it->second);
  }
  Verification v;
  int whole = 0;
  std::vector<double> spreads_ms;
  for (const auto& [group, n] : members) {
    const auto& times = binds[group];
    if (times.empty()) continue;
    if (static_cast<int>(times.size()) == n) {
      ++whole;
    } else {
      ++v.violations;
    }
    auto [lo, hi] = std::minmax_element(times.begin(), times.end());
    spreads_ms.push_back(std::chrono::duration<double, std::milli>(*hi - *lo).count());
  }
  v.lines.push_back(Format("gangs: %d of %zu groups of %d bound whole, %lld bound in part", whole, members.size(),
                           w.gang_size, static_cast<long long>(v.violations)));
  v.lines.push_back(Format("gangs: first to last bind of a group: median %.0f ms, max %.0f ms",
                           Percentile(spreads_ms, 0.5), Percentile(spreads_ms, 1.0)));
  return v;
}

constexpr Fill kPreemptionFill{.per_node = 4,
                               .cpu_milli = 900,
                               .memory = "500Mi",
                               .low = {"low-priority", 0},
                               .high = {"high-priority", 10}};

constexpr Workload kWorkloads[] = {
    {.name = "basic", .nodes = 1000, .pods = 3000, .zones = 3, .verify = VerifyNothing},
    {.name = "anti-affinity",
     .nodes = 1000,
     .pods = 1000,
     .shape = testing::WithRequiredAntiAffinity,
     .one_pod_per_node = true,
     .verify = VerifyAntiAffinity},
    {.name = "spread", .nodes = 1000, .pods = 2000, .zones = 10, .shape = testing::WithTopologySpread,
     .verify = VerifySpread},
    {.name = "preferred-affinity", .nodes = 1000, .pods = 2000, .zones = 10,
     .shape = testing::WithPreferredAffinity, .verify = VerifyGathering},
    {.name = "replicaset", .nodes = 1000, .pods = 3000, .zones = 10, .replica_set = true,
     .verify = VerifyDefaultSpreading},
    // Two 3000m preemptors never fit on one 4-CPU node.
    {.name = "preemption",
     .nodes = 500,
     .pods = 500,
     .one_pod_per_node = true,
     .node_cpu = 4,
     .node_memory = "32Gi",
     .pod_cpu_milli = 3000,
     .fill = &kPreemptionFill,
     .verify = VerifyPreemption},
    // The basic workload's pods in 100 gangs of 30 (scheduler-plugins' Coscheduling).
    {.name = "gang", .nodes = 1000, .pods = 3000, .zones = 3, .gang_size = 30, .verify = VerifyGangs},
};

}  // namespace

std::span<const Workload> Workloads() { return kWorkloads; }

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

const Workload* FindWorkload(std::string_view name) {
  for (const Workload& w : kWorkloads)
    if (w.name == name) return &w;
  return nullptr;
}

std::vector<api::Node> MakeNodes(const Workload& w, int count) {
  std::vector<api::Node> nodes;
  nodes.reserve(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    api::Node n = testing::TestNode("bench-node-" + std::to_string(i), api::Quantity::FromValue(w.node_cpu),
                                    *api::Quantity::Parse(w.node_memory));
    n.metadata.labels.Set(std::string(kHostnameLabel), n.metadata.name);
    if (w.zones > 0) n.metadata.labels.Set(std::string(kZoneLabel), "zone-" + std::to_string(i % w.zones));
    nodes.push_back(std::move(n));
  }
  return nodes;
}

api::Pod MakePod(const Workload& w, int i, const std::string& scheduler_name, const std::string& owner_uid) {
  api::Pod p = testing::TestPod(
      "default", "bench-pod-" + std::to_string(i), scheduler_name,
      {{"cpu", api::Quantity::FromMilli(w.pod_cpu_milli)}, {"memory", *api::Quantity::Parse(kPodMemory)}});
  if (w.shape != nullptr) p = w.shape(std::move(p));
  if (w.fill != nullptr) p.spec.priority_class_name = std::string(w.fill->high.name);
  if (w.gang_size > 0) p.metadata.labels.Set("scheduling.x-k8s.io/pod-group", GangName(i / w.gang_size));
  if (w.replica_set) {
    p.metadata.labels.Set("app", "rs");
    p.metadata.owner_references.push_back(
        {.api_version = "apps/v1", .kind = "ReplicaSet", .name = std::string(kReplicaSetName), .uid = owner_uid,
         .controller = true});
  }
  return p;
}

api::Pod MakeFillPod(const Workload& w, int node, int j, const std::string& scheduler_name) {
  api::Pod p = testing::TestPod(
      "default", std::string(kFillPodPrefix) + std::to_string(node) + "-" + std::to_string(j), scheduler_name,
      {{"cpu", api::Quantity::FromMilli(w.fill->cpu_milli)}, {"memory", *api::Quantity::Parse(w.fill->memory)}});
  p.spec.node_name = "bench-node-" + std::to_string(node);
  p.spec.priority_class_name = std::string(w.fill->low.name);
  return p;
}

std::string PriorityClassJson(const PriorityClass& pc) {
  return R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":")" + std::string(pc.name) +
         R"("},"value":)" + std::to_string(pc.value) + R"(,"globalDefault":false,"description":"make bench-e2e"})";
}

std::string ReplicaSetJson() {
  return R"({"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":")" + std::string(kReplicaSetName) +
         R"("},"spec":{"replicas":0,"selector":{"matchLabels":{"app":"rs"}},)"
         R"("template":{"metadata":{"labels":{"app":"rs"}},)"
         R"("spec":{"containers":[{"name":"app","image":"registry.k8s.io/pause:3.9"}]}}}})";
}

std::string GangName(int gang) { return "bench-gang-" + std::to_string(gang); }

std::string PodGroupCrdJson() {
  return R"({"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",)"
         R"("metadata":{"name":"podgroups.scheduling.x-k8s.io"},)"
         R"("spec":{"group":"scheduling.x-k8s.io","scope":"Namespaced",)"
         R"("names":{"kind":"PodGroup","listKind":"PodGroupList","plural":"podgroups","singular":"podgroup"},)"
         R"("versions":[{"name":"v1alpha1","served":true,"storage":true,"subresources":{"status":{}},)"
         R"("schema":{"openAPIV3Schema":{"type":"object","properties":{)"
         R"("spec":{"type":"object","x-kubernetes-preserve-unknown-fields":true},)"
         R"("status":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}}}]}})";
}

std::string PodGroupJson(int gang, int min_member) {
  return R"({"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"PodGroup","metadata":{"name":")" + GangName(gang) +
         R"("},"spec":{"minMember":)" + std::to_string(min_member) + "}}";
}

}  // namespace ksched::bench
