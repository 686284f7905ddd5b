#include "bench/e2e/workloads.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <map>

#include "pkg/api/quantity.h"
#include "tests/fakes/objects.h"

namespace ksched::bench {
namespace {

using testing::kHostnameLabel;
using testing::kZoneLabel;

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

Verification VerifyNothing(const Placement&) { return {0, {"placement: no hard constraints to check"}}; }

Verification VerifyAntiAffinity(const Placement& p) {
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
Verification VerifySpread(const Placement& p) {
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
Verification VerifyGathering(const Placement& p) {
  auto per_zone = PodsPerDomain(p, kZoneLabel);
  size_t zones_used = 0;
  for (const auto& [zone, n] : per_zone) zones_used += n > 0;
  Spread s = SpreadOf(per_zone);
  double share = p.node_of_pod.empty() ? 0 : 100.0 * s.max / static_cast<double>(p.node_of_pod.size());
  return {0, {Format("preferred-affinity: pods in %zu of %zu zones; the most populated zone holds %d (%.1f%%)",
                     zones_used, per_zone.size(), s.max, share)}};
}

// System-default spreading is soft (ScheduleAnyway): report the skews.
Verification VerifyDefaultSpreading(const Placement& p) {
  auto per_zone = PodsPerDomain(p, kZoneLabel);
  std::string counts;
  for (const auto& [zone, n] : per_zone) counts += (counts.empty() ? "" : " ") + zone + "=" + std::to_string(n);
  Spread z = SpreadOf(per_zone), h = SpreadOf(PodsPerDomain(p, kHostnameLabel));
  return {0,
          {"replicaset: pods per zone: " + counts,
           Format("replicaset: zone skew (max-min) %d; node skew %d (min %d, max %d)", z.skew(), h.skew(), h.min,
                  h.max)}};
}

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
};

}  // namespace

std::span<const Workload> Workloads() { return kWorkloads; }

const Workload* FindWorkload(std::string_view name) {
  for (const Workload& w : kWorkloads)
    if (w.name == name) return &w;
  return nullptr;
}

std::vector<api::Node> MakeNodes(const Workload& w, int count) {
  std::vector<api::Node> nodes;
  nodes.reserve(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    api::Node n = testing::TestNode("bench-node-" + std::to_string(i), api::Quantity::FromValue(32),
                                    *api::Quantity::Parse("128Gi"));
    n.metadata.labels.Set(std::string(kHostnameLabel), n.metadata.name);
    if (w.zones > 0) n.metadata.labels.Set(std::string(kZoneLabel), "zone-" + std::to_string(i % w.zones));
    nodes.push_back(std::move(n));
  }
  return nodes;
}

api::Pod MakePod(const Workload& w, int i, const std::string& scheduler_name, const std::string& owner_uid) {
  api::Pod p = testing::TestPod("default", "bench-pod-" + std::to_string(i), scheduler_name,
                                {{"cpu", api::Quantity::FromMilli(100)}, {"memory", *api::Quantity::Parse("500Mi")}});
  if (w.shape != nullptr) p = w.shape(std::move(p));
  if (w.replica_set) {
    p.metadata.labels.Set("app", "rs");
    p.metadata.owner_references.push_back(
        {.api_version = "apps/v1", .kind = "ReplicaSet", .name = std::string(kReplicaSetName), .uid = owner_uid,
         .controller = true});
  }
  return p;
}

std::string ReplicaSetJson() {
  return R"({"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":")" + std::string(kReplicaSetName) +
         R"("},"spec":{"replicas":0,"selector":{"matchLabels":{"app":"rs"}},)"
         R"("template":{"metadata":{"labels":{"app":"rs"}},)"
         R"("spec":{"containers":[{"name":"app","image":"registry.k8s.io/pause:3.9"}]}}}})";
}

}  // namespace ksched::bench
