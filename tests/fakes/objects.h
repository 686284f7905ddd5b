// The Pods and Nodes that integration tests and benchmarks create on a real API server.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pkg/api/quantity.h"
#include "pkg/api/types.h"

namespace ksched::testing {

// One pause container asking for `requests`, for `scheduler_name`.
inline api::Pod TestPod(std::string ns, std::string name, std::string scheduler_name, api::ResourceList requests) {
  api::Pod p;
  p.metadata.namespace_ = std::move(ns);
  p.metadata.name = std::move(name);
  p.spec.scheduler_name = std::move(scheduler_name);
  api::Container c;
  c.name = "app";
  c.image = "registry.k8s.io/pause:3.9";
  c.requests = std::move(requests);
  p.spec.containers.push_back(std::move(c));
  return p;
}

// A node with `cpu` and `memory` allocatable (and capacity), room for 110 pods.
inline api::Node TestNode(std::string name, api::Quantity cpu, api::Quantity memory) {
  api::Node n;
  n.metadata.name = std::move(name);
  n.status.allocatable = {{"cpu", cpu}, {"memory", memory}, {"pods", api::Quantity::FromValue(110)}};
  n.status.capacity = n.status.allocatable;
  return n;
}

// ---- the pod shapes of upstream's scheduler_perf workloads ----------------------------
// (test/integration/scheduler_perf/config/pod-with-*.yaml), applied to a TestPod; shared
// by bench_e2e and bench_algorithm. Every term selects the pod's own label, in its own
// namespace.

inline constexpr std::string_view kHostnameLabel = "kubernetes.io/hostname";
inline constexpr std::string_view kZoneLabel = "topology.kubernetes.io/zone";

// Labelled color=green, and never on a node with another such pod: required
// podAntiAffinity to color=green on kubernetes.io/hostname (pod-with-pod-anti-affinity.yaml).
inline api::Pod WithRequiredAntiAffinity(api::Pod p) {
  p.metadata.labels.Set("color", "green");
  api::PodAffinityTerm term;
  term.label_selector.emplace().match_labels.Set("color", "green");
  term.topology_key = std::string(kHostnameLabel);
  api::Affinity a;
  a.pod_anti_affinity.emplace().required.push_back(std::move(term));
  p.spec.affinity = std::move(a);
  return p;
}

// Labelled app=spread, at most one more such pod in any zone and on any node than in the
// emptiest: two topologySpreadConstraints, maxSkew 1, DoNotSchedule
// (pod-with-topology-spreading.yaml has one, on zone, maxSkew 5).
inline api::Pod WithTopologySpread(api::Pod p) {
  p.metadata.labels.Set("app", "spread");
  std::vector<api::TopologySpreadConstraint> constraints;
  for (std::string_view key : {kZoneLabel, kHostnameLabel}) {
    api::TopologySpreadConstraint c;
    c.max_skew = 1;
    c.topology_key = std::string(key);
    c.when_unsatisfiable = api::WhenUnsatisfiable::kDoNotSchedule;
    c.label_selector.emplace().match_labels.Set("app", "spread");
    constraints.push_back(std::move(c));
  }
  p.spec.topology_spread_constraints = std::move(constraints);
  return p;
}

// Labelled color=red, preferring (weight 100) the zones that hold such pods: the term of
// pod-with-preferred-pod-affinity.yaml (matchLabels color=red), which upstream weighs 1
// on kubernetes.io/hostname.
inline api::Pod WithPreferredAffinity(api::Pod p) {
  p.metadata.labels.Set("color", "red");
  api::WeightedPodAffinityTerm w;
  w.weight = 100;
  w.term.label_selector.emplace().match_labels.Set("color", "red");
  w.term.topology_key = std::string(kZoneLabel);
  api::Affinity a;
  a.pod_affinity.emplace().preferred.push_back(std::move(w));
  p.spec.affinity = std::move(a);
  return p;
}

}  // namespace ksched::testing
