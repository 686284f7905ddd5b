// Fluent builders for test Pods and Nodes, shaped after upstream's scheduler testing
// wrappers (pkg/scheduler/testing/wrappers.go: MakePod(), MakeNode()), so table tests
// taken from upstream read the same:
//
//   PodBuilder("p1").Namespace("ns").Label("app", "web").Node("n1").Obj()
//   NodeBuilder("n1").Label("zone", "z1").Capacity({{"cpu", "4"}}).Obj()
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pkg/api/quantity.h"
#include "pkg/api/types.h"

namespace ksched::testing {

enum class AffinityKind { kRequired, kPreferred };

class PodBuilder {
 public:
  explicit PodBuilder(std::string name = "pod") {
    pod_.metadata.name = std::move(name);
    pod_.metadata.namespace_ = "default";
  }

  PodBuilder& Name(std::string v) { pod_.metadata.name = std::move(v); return *this; }
  PodBuilder& Namespace(std::string v) { pod_.metadata.namespace_ = std::move(v); return *this; }
  PodBuilder& UID(std::string v) { pod_.metadata.uid = std::move(v); return *this; }
  PodBuilder& Label(std::string k, std::string v) { pod_.metadata.labels.Set(std::move(k), std::move(v)); return *this; }
  PodBuilder& Labels(const api::StringMap& labels) {
    for (const auto& [k, v] : labels) pod_.metadata.labels.Set(k, v);
    return *this;
  }
  PodBuilder& Node(std::string v) { pod_.spec.node_name = std::move(v); return *this; }
  PodBuilder& SchedulerName(std::string v) { pod_.spec.scheduler_name = std::move(v); return *this; }
  PodBuilder& Priority(int32_t v) { pod_.spec.priority = v; return *this; }
  PodBuilder& CreationTimestamp(std::string v) { pod_.metadata.creation_timestamp = std::move(v); return *this; }
  PodBuilder& StartTime(std::string v) { pod_.status.start_time = std::move(v); return *this; }
  PodBuilder& PriorityClassName(std::string v) { pod_.spec.priority_class_name = std::move(v); return *this; }
  PodBuilder& PreemptionPolicy(std::string v) { pod_.spec.preemption_policy = std::move(v); return *this; }
  PodBuilder& NominatedNodeName(std::string v) { pod_.status.nominated_node_name = std::move(v); return *this; }
  PodBuilder& Terminating() { pod_.metadata.deletion_timestamp = "2026-01-01T00:00:00Z"; return *this; }
  PodBuilder& NodeSelector(std::string k, std::string v) { pod_.spec.node_selector.Set(std::move(k), std::move(v)); return *this; }
  PodBuilder& OwnerReference(std::string kind, std::string name, std::string uid = "") {
    pod_.metadata.owner_references.push_back({"apps/v1", std::move(kind), std::move(name), std::move(uid), true});
    return *this;
  }
  // One container asking for `requests`, e.g. {{"cpu", "100m"}, {"memory", "1Gi"}}.
  PodBuilder& Req(const std::vector<std::pair<std::string, std::string>>& requests) {
    api::Container c;
    c.name = "c" + std::to_string(pod_.spec.containers.size());
    c.image = "pause";
    for (const auto& [name, value] : requests) c.requests.emplace_back(name, *api::Quantity::Parse(value));
    pod_.spec.containers.push_back(std::move(c));
    return *this;
  }
  // A volume backed by claim `claim` (persistentVolumeClaim.claimName).
  PodBuilder& PVC(std::string claim, std::string volume_name = "") {
    if (volume_name.empty()) volume_name = "vol-" + claim;
    pod_.spec.volumes.push_back({.name = std::move(volume_name), .pvc_claim_name = std::move(claim)});
    return *this;
  }
  // A generic ephemeral volume: its claim is "<pod name>-<volume name>".
  PodBuilder& EphemeralVolume(std::string volume_name) {
    pod_.spec.volumes.push_back({.name = std::move(volume_name), .ephemeral = true});
    return *this;
  }
  // An inline volume of any other source (in-tree disks, inline CSI).
  PodBuilder& Volume(std::string volume_name, api::VolumeSource source) {
    pod_.spec.volumes.push_back({.name = std::move(volume_name), .source = std::move(source)});
    return *this;
  }
  PodBuilder& Toleration(api::Toleration t) { pod_.spec.tolerations.push_back(std::move(t)); return *this; }

  // Node affinity: a required term `key In values` (added to the first term).
  PodBuilder& NodeAffinityIn(std::string key, std::vector<std::string> values) {
    api::Affinity a = affinity();
    if (!a.node_affinity) a.node_affinity.emplace();
    auto& na = *a.node_affinity;
    if (!na.required) na.required.emplace();
    if (na.required->empty()) na.required->emplace_back();
    na.required->front().match_expressions.push_back({std::move(key), api::SelectorOperator::kIn, std::move(values)});
    pod_.spec.affinity = std::move(a);
    return *this;
  }

  // Pod affinity / anti-affinity terms with a selector `label_key Exists` (upstream
  // PodAffinityExists), `label_key In values` (PodAffinityIn / PodAffinityNotIn).
  PodBuilder& PodAffinityExists(std::string label_key, std::string topology_key, AffinityKind kind, int32_t weight = 1) {
    return PodAffinityTerm(false, Term(Expr(std::move(label_key), api::SelectorOperator::kExists, {}), std::move(topology_key)), kind, weight);
  }
  PodBuilder& PodAntiAffinityExists(std::string label_key, std::string topology_key, AffinityKind kind, int32_t weight = 1) {
    return PodAffinityTerm(true, Term(Expr(std::move(label_key), api::SelectorOperator::kExists, {}), std::move(topology_key)), kind, weight);
  }
  PodBuilder& PodAffinityIn(std::string label_key, std::string topology_key, std::vector<std::string> values, AffinityKind kind, int32_t weight = 1) {
    return PodAffinityTerm(false, Term(Expr(std::move(label_key), api::SelectorOperator::kIn, std::move(values)), std::move(topology_key)), kind, weight);
  }
  PodBuilder& PodAntiAffinityIn(std::string label_key, std::string topology_key, std::vector<std::string> values, AffinityKind kind, int32_t weight = 1) {
    return PodAffinityTerm(true, Term(Expr(std::move(label_key), api::SelectorOperator::kIn, std::move(values)), std::move(topology_key)), kind, weight);
  }
  // Any term, as written.
  PodBuilder& PodAffinityTerm(bool anti, api::PodAffinityTerm term, AffinityKind kind, int32_t weight = 1) {
    api::Affinity a = affinity();
    auto& slot = anti ? a.pod_anti_affinity : a.pod_affinity;
    if (!slot) slot.emplace();
    if (kind == AffinityKind::kRequired) {
      slot->required.push_back(std::move(term));
    } else {
      slot->preferred.push_back({weight, std::move(term)});
    }
    pod_.spec.affinity = std::move(a);
    return *this;
  }

  // A topology spread constraint (upstream SpreadConstraint).
  PodBuilder& SpreadConstraint(int32_t max_skew, std::string topology_key, api::WhenUnsatisfiable mode,
                               std::optional<api::LabelSelector> selector,
                               std::optional<int32_t> min_domains = std::nullopt,
                               std::optional<api::InclusionPolicy> node_affinity_policy = std::nullopt,
                               std::optional<api::InclusionPolicy> node_taints_policy = std::nullopt,
                               std::vector<std::string> match_label_keys = {}) {
    api::TopologySpreadConstraint c;
    c.max_skew = max_skew;
    c.topology_key = std::move(topology_key);
    c.when_unsatisfiable = mode;
    c.label_selector = std::move(selector);
    c.min_domains = min_domains;
    c.node_affinity_policy = node_affinity_policy;
    c.node_taints_policy = node_taints_policy;
    c.match_label_keys = std::move(match_label_keys);
    pod_.spec.topology_spread_constraints.push_back(std::move(c));
    return *this;
  }

  api::Pod Build() const { return pod_; }
  api::PodPtr Obj() const { return std::make_shared<const api::Pod>(pod_); }

  // Selector helpers.
  static api::LabelSelectorRequirement Expr(std::string key, api::SelectorOperator op, std::vector<std::string> values) {
    return {std::move(key), op, std::move(values)};
  }
  static api::PodAffinityTerm Term(api::LabelSelectorRequirement expr, std::string topology_key) {
    api::PodAffinityTerm t;
    t.label_selector.emplace().match_expressions.push_back(std::move(expr));
    t.topology_key = std::move(topology_key);
    return t;
  }

 private:
  api::Affinity affinity() const { return pod_.spec.affinity.has_value() ? *pod_.spec.affinity : api::Affinity{}; }
  api::Pod pod_;
};

// A selector `key Exists` (upstream st.MakeLabelSelector().Exists(key)).
inline api::LabelSelector ExistsSelector(std::string key) {
  api::LabelSelector s;
  s.match_expressions.push_back({std::move(key), api::SelectorOperator::kExists, {}});
  return s;
}
// A selector of matchLabels.
inline api::LabelSelector LabelsSelector(api::StringMap labels) {
  api::LabelSelector s;
  s.match_labels = std::move(labels);
  return s;
}

class NodeBuilder {
 public:
  // No labels, as upstream's MakeNode(); Hostname() adds kubernetes.io/hostname=<name>.
  explicit NodeBuilder(std::string name = "node") { node_.metadata.name = std::move(name); }
  NodeBuilder& Name(std::string v) { node_.metadata.name = std::move(v); return *this; }
  NodeBuilder& UID(std::string v) { node_.metadata.uid = std::move(v); return *this; }
  NodeBuilder& Label(std::string k, std::string v) { node_.metadata.labels.Set(std::move(k), std::move(v)); return *this; }
  NodeBuilder& Labels(const api::StringMap& labels) {
    for (const auto& [k, v] : labels) node_.metadata.labels.Set(k, v);
    return *this;
  }
  NodeBuilder& Hostname() { return Label("kubernetes.io/hostname", node_.metadata.name); }
  NodeBuilder& Capacity(const std::vector<std::pair<std::string, std::string>>& resources) {
    node_.status.allocatable.clear();
    for (const auto& [name, value] : resources) node_.status.allocatable.emplace_back(name, *api::Quantity::Parse(value));
    node_.status.capacity = node_.status.allocatable;
    return *this;
  }
  NodeBuilder& Taint(std::string key, std::string value, api::TaintEffect effect) {
    node_.spec.taints.push_back({std::move(key), std::move(value), effect});
    return *this;
  }
  NodeBuilder& Unschedulable() { node_.spec.unschedulable = true; return *this; }

  api::Node Build() const { return node_; }
  api::NodePtr Obj() const { return std::make_shared<const api::Node>(node_); }

 private:
  api::Node node_;
};

}  // namespace ksched::testing
