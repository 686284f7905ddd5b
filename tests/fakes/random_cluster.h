// RandomCluster: the one generator of random clusters for property tests. Seeded, so a
// failing seed replays; what it draws is chosen by options, so each test asks only for
// what its subject reads:
//  - nodes: capacities (cpu, memory, sometimes example.com/gpu), zones, PreferNoSchedule
//    taints, images; or, for topology edge cases, sparse labels (some nodes without a
//    hostname, zone or region label, some sharing a hostname);
//  - pods bound on a node, with random requests;
//  - pending pods: requests, tolerations, node affinity, images, labels in a few
//    namespaces, pod (anti-)affinity drawn from a small pool shared between pods (as the
//    decoder shares a workload's), and topology spread constraints.
//
//   testing::RandomCluster r(seed);
//   std::vector<api::NodePtr> nodes = r.Nodes(40);
//   api::PodPtr pod = r.Pod(0, {.requests = true, .pod_affinity = true});
#pragma once

#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "pkg/api/types.h"
#include "tests/fakes/builders.h"

namespace ksched::testing {

inline constexpr char kRandomHostname[] = "kubernetes.io/hostname";
inline constexpr char kRandomZone[] = "topology.kubernetes.io/zone";
inline constexpr char kRandomRegion[] = "region";

// What RandomCluster draws for a node.
struct RandomNodeOptions {
  std::string prefix = "node-";
  int zones = 3;
  bool resources = true;  // cpu 2-7, memory 4-15Gi, pods 110; a third with 1-4 GPUs
  bool gpus = true;
  bool taints = true;     // PreferNoSchedule dedicated=batch (1 in 4), flaky (1 in 6)
  bool images = true;     // registry.local/app:v1 (1 in 2), registry.local/sidecar:latest (1 in 3)
  // Labels drawn as for topology edge cases: hostname (missing 1 in 8, "shared" 1 in 6),
  // zone (missing 1 in 5), region (half the nodes); instead of hostname + zone on all.
  bool sparse_topology = false;
  api::StringMap labels;  // on every node
};
// What RandomCluster draws for a pod.
struct RandomPodOptions {
  std::string prefix = "pod-";
  // Namespaces drawn from; the first when there is one.
  std::vector<std::string> namespaces = {"default"};
  std::string scheduler_name;  // empty: unset
  api::StringMap node_selector;
  bool requests = true;       // best effort, cpu, cpu + memory, or with a GPU when gpus
  bool gpus = true;
  bool tolerations = true;    // tolerates dedicated (1 in 3)
  bool node_affinity = true;  // required zone In (1 in 3)
  bool images = true;         // app:v1 or another image, and sometimes a sidecar
  bool labels = false;        // app=a0..a2 (4 in 5), tier=t0..t1 (1 in 3)
  bool pod_affinity = false;  // required/preferred (anti-)affinity among the labels above
  bool spread = false;        // a spread constraint over zone or hostname (1 in 3)
  // Affinity terms may carry namespaceSelector and matchLabelKeys, which API servers
  // before 1.22 and 1.29 drop.
  bool newer_api_fields = true;
};

class RandomCluster {
 public:
  using NodeOptions = RandomNodeOptions;
  using PodOptions = RandomPodOptions;

  explicit RandomCluster(uint32_t seed) : rng_(seed) {}

  int Pick(int n) { return static_cast<int>(rng_() % static_cast<uint32_t>(n)); }
  std::mt19937& rng() { return rng_; }

  api::NodePtr Node(int i, const NodeOptions& o = {}) {
    const std::string name = o.prefix + std::to_string(i);
    NodeBuilder b(name);
    b.Labels(o.labels);
    if (o.sparse_topology) {
      if (Pick(8) != 0) b.Label(kRandomHostname, Pick(6) == 0 ? "shared" : name);
      if (Pick(5) != 0) b.Label(kRandomZone, "z" + std::to_string(Pick(3)));
      if (Pick(2) != 0) b.Label(kRandomRegion, "r" + std::to_string(Pick(2)));
    } else {
      b.Hostname().Label(kRandomZone, "zone-" + std::to_string(Pick(std::max(o.zones, 1))));
    }
    if (o.resources) {
      std::vector<std::pair<std::string, std::string>> capacity = {
          {"cpu", std::to_string(2 + Pick(6))}, {"memory", std::to_string(4 + Pick(12)) + "Gi"}, {"pods", "110"}};
      if (o.gpus && Pick(3) == 0) capacity.emplace_back("example.com/gpu", std::to_string(1 + Pick(4)));
      b.Capacity(capacity);
    }
    if (o.taints) {
      if (Pick(4) == 0) b.Taint("dedicated", "batch", api::TaintEffect::kPreferNoSchedule);
      if (Pick(6) == 0) b.Taint("flaky", "", api::TaintEffect::kPreferNoSchedule);
    }
    api::Node node = *b.Obj();
    if (o.images) {
      if (Pick(2) == 0) node.status.images.push_back({{"registry.local/app:v1"}, 300 * 1024 * 1024});
      if (Pick(3) == 0) node.status.images.push_back({{"registry.local/sidecar:latest"}, 40 * 1024 * 1024});
    }
    return std::make_shared<const api::Node>(std::move(node));
  }

  std::vector<api::NodePtr> Nodes(int n, const NodeOptions& o = {}) {
    std::vector<api::NodePtr> nodes;
    for (int i = 0; i < n; ++i) nodes.push_back(Node(i, o));
    return nodes;
  }

  // 0-3 pods bound to `node`, two in three with cpu and memory requests.
  std::vector<api::PodPtr> BoundPods(const api::Node& node, const PodOptions& o = {}) {
    std::vector<api::PodPtr> pods;
    for (int k = Pick(4); k > 0; --k) {
      PodBuilder p(o.prefix + node.Name() + "-" + std::to_string(k));
      p.Namespace(o.namespaces.front()).Node(node.Name()).UID(node.Name() + "/" + std::to_string(k));
      if (!o.scheduler_name.empty()) p.SchedulerName(o.scheduler_name);
      if (Pick(3) != 0) {
        p.Req({{"cpu", std::to_string(100 * (1 + Pick(10))) + "m"}, {"memory", std::to_string(1 + Pick(3)) + "Gi"}});
      }
      if (o.labels) p.Label("app", "a" + std::to_string(Pick(3)));
      pods.push_back(WithContainer(*p.Obj()));
    }
    return pods;
  }

  // A pending pod (or, with `node`, a bound one) drawn as the options say.
  api::PodPtr Pod(int i, const PodOptions& o = {}, const std::string& node = "") {
    PodBuilder b(o.prefix + std::to_string(i));
    b.UID("uid-" + o.prefix + std::to_string(i));
    b.Namespace(o.namespaces.size() == 1 ? o.namespaces.front()
                                         : o.namespaces[static_cast<size_t>(Pick(static_cast<int>(o.namespaces.size())))]);
    if (!node.empty()) b.Node(node);
    if (!o.scheduler_name.empty()) b.SchedulerName(o.scheduler_name);
    for (const auto& [k, v] : o.node_selector) b.NodeSelector(k, v);
    if (o.labels) {
      if (Pick(5) != 0) b.Label("app", "a" + std::to_string(Pick(3)));
      if (Pick(3) == 0) b.Label("tier", "t" + std::to_string(Pick(2)));
    }
    if (o.requests) {
      switch (Pick(4)) {
        case 0:
          break;  // best effort
        case 1:
          b.Req({{"cpu", std::to_string(100 * (1 + Pick(20))) + "m"}});
          break;
        case 2:
          if (o.gpus) {
            b.Req({{"cpu", "500m"}, {"memory", std::to_string(1 + Pick(4)) + "Gi"}, {"example.com/gpu", "1"}});
            break;
          }
          [[fallthrough]];
        default:
          b.Req({{"cpu", std::to_string(100 * (1 + Pick(20))) + "m"}, {"memory", std::to_string(100 + Pick(900)) + "Mi"}});
      }
    }
    if (o.tolerations && Pick(3) == 0) {
      api::Toleration t;
      t.key = "dedicated";
      t.op_exists = true;
      b.Toleration(t);
    }
    if (o.node_affinity && Pick(3) == 0) b.NodeAffinityIn(kRandomZone, {"zone-" + std::to_string(Pick(3))});
    if (o.spread && Pick(3) == 0) {
      api::LabelSelector sel;
      sel.match_labels.Set("app", "a" + std::to_string(Pick(3)));
      b.SpreadConstraint(1 + Pick(2), Pick(2) == 0 ? kRandomZone : kRandomHostname,
                         Pick(2) == 0 ? api::WhenUnsatisfiable::kDoNotSchedule : api::WhenUnsatisfiable::kScheduleAnyway,
                         sel);
    }
    api::Pod pod = *b.Obj();
    if (o.pod_affinity) {
      if (affinities_.empty()) {
        for (int k = 0; k < 8; ++k) affinities_.push_back(RandomAffinity(o.newer_api_fields));
      }
      if (const int a = Pick(10); a < 8) {
        pod.spec.affinity = affinities_[static_cast<size_t>(a)];
      } else if (a == 8) {
        pod.spec.affinity = RandomAffinity(o.newer_api_fields);
      }
    }
    pod = *WithContainer(pod);
    if (o.images) {
      pod.spec.containers[0].image = Pick(2) == 0 ? "registry.local/app:v1" : "registry.local/other";
      if (Pick(2) == 0) {
        api::Container sidecar;
        sidecar.name = "sidecar";
        sidecar.image = "registry.local/sidecar";  // untagged: matched as :latest
        pod.spec.containers.push_back(sidecar);
      }
    }
    return std::make_shared<const api::Pod>(std::move(pod));
  }

  // A term over the labels Pod() draws: a selector on app or tier (or empty: every pod),
  // a topology key, sometimes namespaces, a namespace selector on team, matchLabelKeys.
  api::PodAffinityTerm RandomTerm(bool newer_api_fields = true) {
    using Req = api::LabelSelectorRequirement;
    std::vector<Req> reqs;
    switch (Pick(5)) {
      case 0: reqs.push_back({"app", api::SelectorOperator::kIn, {"a0"}}); break;
      case 1: reqs.push_back({"app", api::SelectorOperator::kIn, {"a0", "a1"}}); break;
      case 2: reqs.push_back({"app", api::SelectorOperator::kExists, {}}); break;
      case 3: reqs.push_back({"tier", api::SelectorOperator::kNotIn, {"t0"}}); break;
      default: break;  // an empty selector: every pod
    }
    static const char* const kKeys[] = {kRandomHostname, kRandomZone, kRandomRegion};
    api::PodAffinityTerm t;
    t.label_selector.emplace().match_expressions = std::move(reqs);
    t.topology_key = kKeys[Pick(3)];
    if (Pick(3) == 0) t.namespaces = {"ns" + std::to_string(Pick(3))};
    const int s = Pick(6);
    const bool match_label_keys = Pick(8) == 0;
    if (!newer_api_fields) return t;
    if (s == 0) {
      t.namespace_selector.emplace().match_expressions = {{"team", api::SelectorOperator::kIn, {"a"}}};
    } else if (s == 1) {
      t.namespace_selector.emplace();
    }
    if (match_label_keys) t.match_label_keys = {"tier"};
    return t;
  }

 private:
  // A best-effort pod still has a container, as the API server requires.
  static api::PodPtr WithContainer(api::Pod pod) {
    if (pod.spec.containers.empty()) {
      api::Container c;
      c.name = "c0";
      c.image = "pause";
      pod.spec.containers.push_back(std::move(c));
    }
    return std::make_shared<const api::Pod>(std::move(pod));
  }

  std::vector<api::PodAffinityTerm> RandomTerms(bool newer) {
    std::vector<api::PodAffinityTerm> terms;
    for (int n = Pick(3) == 0 ? 1 + Pick(2) : 0; n > 0; --n) terms.push_back(RandomTerm(newer));
    return terms;
  }
  std::vector<api::WeightedPodAffinityTerm> RandomWeighted(bool newer) {
    std::vector<api::WeightedPodAffinityTerm> terms;
    for (int n = Pick(3) == 0 ? 1 + Pick(2) : 0; n > 0; --n) terms.push_back({1 + Pick(100), RandomTerm(newer)});
    return terms;
  }
  api::Affinity RandomAffinity(bool newer) {
    api::Affinity a;
    api::PodAffinity& pa = a.pod_affinity.emplace();
    pa.required = RandomTerms(newer);
    pa.preferred = RandomWeighted(newer);
    api::PodAffinity& anti = a.pod_anti_affinity.emplace();
    anti.required = RandomTerms(newer);
    anti.preferred = RandomWeighted(newer);
    return a;
  }

  std::mt19937 rng_;
  std::vector<api::SharedOptional<api::Affinity>> affinities_;
};

}  // namespace ksched::testing
