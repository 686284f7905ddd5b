// Shorthands for the InterPodAffinity tests, shaped after upstream's test fixtures so the
// ported table cases stay recognisable.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "config/types.h"
#include "pkg/api/types.h"
#include "pkg/cache/snapshot.h"
#include "pkg/framework/plugins/interpodaffinity/inter_pod_affinity.h"
#include "tests/fakes/fake_cluster_lister.h"
#include "tests/fakes/fake_handle.h"

namespace ksched::framework::plugins::interpodaffinity::testutil {

using Req = api::LabelSelectorRequirement;
inline Req In(std::string k, std::vector<std::string> v) { return {std::move(k), api::SelectorOperator::kIn, std::move(v)}; }
inline Req NotIn(std::string k, std::vector<std::string> v) {
  return {std::move(k), api::SelectorOperator::kNotIn, std::move(v)};
}
inline Req Exists(std::string k) { return {std::move(k), api::SelectorOperator::kExists, {}}; }
inline Req DoesNotExist(std::string k) { return {std::move(k), api::SelectorOperator::kDoesNotExist, {}}; }

// A term with matchExpressions `reqs` (ANDed).
inline api::PodAffinityTerm Term(std::vector<Req> reqs, std::string topology_key,
                                 std::vector<std::string> namespaces = {}) {
  api::PodAffinityTerm t;
  t.label_selector.emplace().match_expressions = std::move(reqs);
  t.topology_key = std::move(topology_key);
  t.namespaces = std::move(namespaces);
  return t;
}
inline api::PodAffinityTerm WithNsSelector(api::PodAffinityTerm t, std::vector<Req> reqs) {
  t.namespace_selector.emplace().match_expressions = std::move(reqs);
  return t;
}
using Terms = std::vector<api::PodAffinityTerm>;
using Weighted = std::vector<api::WeightedPodAffinityTerm>;

// upstream createPodWithAffinityTerms: namespace, node, labels, required affinity and
// anti-affinity. Upstream's defaultNamespace is "".
inline api::PodPtr PodWith(std::string ns, std::string node, api::StringMap labels, Terms affinity, Terms anti,
                           std::string name = "") {
  api::Pod p;
  p.metadata.name = std::move(name);
  p.metadata.namespace_ = std::move(ns);
  p.metadata.labels = std::move(labels);
  p.spec.node_name = std::move(node);
  if (!affinity.empty() || !anti.empty()) {
    api::Affinity a;
    if (!affinity.empty()) a.pod_affinity.emplace().required = std::move(affinity);
    if (!anti.empty()) a.pod_anti_affinity.emplace().required = std::move(anti);
    p.spec.affinity = std::move(a);
  }
  return std::make_shared<const api::Pod>(std::move(p));
}
// A pod with preferred terms (and optionally required affinity).
inline api::PodPtr PodPreferred(std::string ns, std::string node, api::StringMap labels, Weighted affinity,
                                Weighted anti, Terms required_affinity = {}) {
  api::Pod p;
  p.metadata.namespace_ = std::move(ns);
  p.metadata.labels = std::move(labels);
  p.spec.node_name = std::move(node);
  if (!affinity.empty() || !anti.empty() || !required_affinity.empty()) {
    api::Affinity a;
    if (!affinity.empty() || !required_affinity.empty()) {
      a.pod_affinity.emplace().preferred = std::move(affinity);
      a.pod_affinity->required = std::move(required_affinity);
    }
    if (!anti.empty()) a.pod_anti_affinity.emplace().preferred = std::move(anti);
    p.spec.affinity = std::move(a);
  }
  return std::make_shared<const api::Pod>(std::move(p));
}
inline api::PodPtr Plain(std::string node, api::StringMap labels, std::string ns = "") {
  return PodWith(std::move(ns), std::move(node), std::move(labels), {}, {});
}
inline api::NodePtr NodeWith(std::string name, api::StringMap labels) {
  api::Node n;
  n.metadata.name = std::move(name);
  n.metadata.labels = std::move(labels);
  return std::make_shared<const api::Node>(std::move(n));
}

// The namespaces of upstream's scoring tests.
inline void AddTeamNamespaces(ksched::testing::FakeClusterLister& lister) {
  lister.namespaces["subteam1.team1"] = {{"team", "team1"}};
  lister.namespaces["subteam2.team1"] = {{"team", "team1"}};
  lister.namespaces["subteam1.team2"] = {{"team", "team2"}};
  lister.namespaces["subteam2.team2"] = {{"team", "team2"}};
}

// A plugin over a snapshot of `nodes` and `pods`.
struct Env {
  Env(const std::vector<api::NodePtr>& nodes, const std::vector<api::PodPtr>& pods,
      config::InterPodAffinityArgs args = {})
      : handle(cache::Snapshot::FromObjects(nodes, pods)), plugin(handle, args) {
    handle.SetLister(&lister);
  }
  ksched::testing::FakeClusterLister lister;
  ksched::testing::FakeHandle handle;
  InterPodAffinity plugin;
};

}  // namespace ksched::framework::plugins::interpodaffinity::testutil
