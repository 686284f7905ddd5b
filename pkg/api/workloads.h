// Namespaces and the objects that select pods (Services, ReplicationControllers,
// ReplicaSets, StatefulSets, PodDisruptionBudgets), reduced to what api::ClusterLister's
// lookups read: a namespace's labels, each workload's pod selector, a budget's status. A
// cluster can hold thousands of these, and a ReplicaSet's pod template alone is often
// kilobytes, so the decoders keep nothing else.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pkg/api/types.h"

namespace ksched::api {

// The part of ObjectMeta these objects keep: enough for an informer store (key and
// resourceVersion) and for telling a re-created object from its predecessor (uid).
struct LeanObjectMeta {
  std::string name;
  std::string namespace_;  // empty for namespaces (cluster-scoped)
  std::string uid;         // not kept for namespaces
  std::string resource_version;
  StringMap labels;  // kept for namespaces only (namespace selectors read them)
  bool operator==(const LeanObjectMeta&) const = default;
};

struct Namespace {
  LeanObjectMeta metadata;
  const std::string& Name() const { return metadata.name; }
  bool operator==(const Namespace&) const = default;
};

// spec.selector of a v1 Service: nullopt when absent or null, distinct from an empty
// map. Both select no pods (upstream GetPodServices skips nil selectors, and the API
// server omits empty ones).
struct Service {
  LeanObjectMeta metadata;
  std::optional<StringMap> selector;
  bool operator==(const Service&) const = default;
};

// spec.selector of a v1 ReplicationController; empty selects no pods.
struct ReplicationController {
  LeanObjectMeta metadata;
  StringMap selector;
  bool operator==(const ReplicationController&) const = default;
};

// spec.selector of an apps/v1 ReplicaSet or StatefulSet; nullopt when absent. A null,
// empty or invalid selector selects no pods.
struct ReplicaSet {
  LeanObjectMeta metadata;
  std::optional<LabelSelector> selector;
  bool operator==(const ReplicaSet&) const = default;
};

struct StatefulSet {
  LeanObjectMeta metadata;
  std::optional<LabelSelector> selector;
  bool operator==(const StatefulSet&) const = default;
};

// A policy/v1 or policy/v1beta1 PodDisruptionBudget as preemption reads it (upstream
// defaultpreemption filterPodsWithPDBViolation): spec.selector, status.disruptionsAllowed
// and the pod names of status.disruptedPods (its timestamps are not kept).
struct PodDisruptionBudget {
  LeanObjectMeta metadata;
  std::optional<LabelSelector> selector;
  int32_t disruptions_allowed = 0;
  std::vector<std::string> disrupted_pods;
  bool operator==(const PodDisruptionBudget&) const = default;
};

// A scheduling.x-k8s.io/v1alpha1 PodGroup (kubernetes-sigs/scheduler-plugins
// apis/scheduling/v1alpha1 PodGroupSpec): a gang of pods, the pods in its namespace that
// carry the label scheduling.x-k8s.io/pod-group=<name>. Its status is the PodGroup
// controller's and is not read.
struct PodGroup {
  LeanObjectMeta metadata;
  // metadata.creationTimestamp; nullopt when absent or not RFC 3339.
  std::optional<std::chrono::system_clock::time_point> creation_time;
  int32_t min_member = 0;          // spec.minMember
  ResourceList min_resources;      // spec.minResources
  std::optional<int32_t> schedule_timeout_seconds;  // spec.scheduleTimeoutSeconds
  bool operator==(const PodGroup&) const = default;
};

inline constexpr char kPodGroupLabel[] = "scheduling.x-k8s.io/pod-group";

using NamespacePtr = std::shared_ptr<const Namespace>;
using ServicePtr = std::shared_ptr<const Service>;
using ReplicationControllerPtr = std::shared_ptr<const ReplicationController>;
using ReplicaSetPtr = std::shared_ptr<const ReplicaSet>;
using StatefulSetPtr = std::shared_ptr<const StatefulSet>;
using PodDisruptionBudgetPtr = std::shared_ptr<const PodDisruptionBudget>;
using PodGroupPtr = std::shared_ptr<const PodGroup>;

}  // namespace ksched::api
