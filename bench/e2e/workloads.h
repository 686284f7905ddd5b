// The workloads of bench_e2e (WORKLOAD=... in make bench-e2e): what nodes and pods each
// creates, and how the placement is checked once every pod is bound.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pkg/api/types.h"
#include "pkg/util/clock.h"
#include "tests/harness/kubelet_standin.h"

namespace ksched::bench {

// What a placement shows: `violations` counts breaches of the pods' hard constraints
// (0 for workloads without any); `lines` describe the placement for a reader.
struct Verification {
  int64_t violations = 0;
  std::vector<std::string> lines;
};

// The nodes as created, where each bound pod went, and what the run removed.
struct Placement {
  std::vector<api::Node> nodes;
  // The measured pods created; node_of_pod holds those bound.
  int pods = 0;
  // Pod name -> node name, for the bound measured pods.
  std::unordered_map<std::string, std::string> node_of_pod;
  // Pod name -> when its bind was seen, on the watch that also saw the removals.
  std::unordered_map<std::string, Clock::time_point> bound_at;
  // Bound pods removed while the scheduler ran (the kubelet stand-in's records).
  std::vector<testing::KubeletStandin::Removal> removals;
  // Every pod of the namespace once the scheduler was done, as listed then.
  std::vector<api::PodPtr> pods_at_end;
};

struct PriorityClass {
  std::string_view name;
  int32_t value = 0;
};

// Pods created already bound (spec.nodeName set, so no scheduler places them and the
// fill costs every scheduler the same), `per_node` on each node, in the low priority
// class; the measured pods get the high one and must preempt them.
struct Fill {
  int per_node = 0;
  int64_t cpu_milli = 0;
  std::string_view memory;
  PriorityClass low, high;
};

struct Workload {
  std::string_view name;
  // Defaults; NODES / PODS override them.
  int nodes = 0;
  int pods = 0;
  // Nodes get topology.kubernetes.io/zone=zone-<i % zones>; 0: no zone label.
  int zones = 0;
  // The pod template's scheduling constraints (tests/fakes/objects.h); null: none.
  api::Pod (*shape)(api::Pod) = nullptr;
  // A ReplicaSet (replicas 0, selector app=rs) is created first and owns every pod, so
  // the schedulers' system-default topology spreading applies.
  bool replica_set = false;
  // No two pods may share a node, so there can be no more pods than nodes.
  bool one_pod_per_node = false;
  // Node allocatable (and capacity) in cores and bytes, and the measured pods' CPU.
  int64_t node_cpu = 32;
  std::string_view node_memory = "128Gi";
  int64_t pod_cpu_milli = 100;
  // Non-null: the nodes are filled first (see Fill).
  const Fill* fill = nullptr;
  // > 0: the pods form gangs of this many, one scheduler-plugins PodGroup each
  // (bench-gang-<i / gang_size>, minMember gang_size), scheduled by a Coscheduling profile.
  int gang_size = 0;
  Verification (*verify)(const Workload&, const Placement&) = nullptr;
};

std::span<const Workload> Workloads();
// Null when there is no workload of that name.
const Workload* FindWorkload(std::string_view name);

// bench-node-<i>: the workload's CPU and memory (32 / 128Gi unless it says), 110 pods,
// kubernetes.io/hostname=<name>, and the zone.
std::vector<api::Node> MakeNodes(const Workload& w, int count);
// bench-pod-<i> in "default": the workload's CPU (100m unless it says) / 500Mi, shaped by
// the workload, in w.fill's high priority class if any. `owner_uid`: the ReplicaSet's uid
// when w.replica_set.
api::Pod MakePod(const Workload& w, int i, const std::string& scheduler_name, const std::string& owner_uid);
// bench-low-<node>-<j> in "default", bound to bench-node-<node>: one of w.fill's pods.
api::Pod MakeFillPod(const Workload& w, int node, int j, const std::string& scheduler_name);
inline constexpr std::string_view kFillPodPrefix = "bench-low-";

// A PriorityClass (scheduling.k8s.io/v1, not the global default) as JSON for POST
// /apis/scheduling.k8s.io/v1/priorityclasses.
std::string PriorityClassJson(const PriorityClass& pc);

// The ReplicaSet of a replica_set workload, as JSON for POST
// /apis/apps/v1/namespaces/default/replicasets.
inline constexpr std::string_view kReplicaSetName = "bench-rs";
std::string ReplicaSetJson();

// The PodGroup CRD (scheduling.x-k8s.io/v1alpha1, spec kept as given) for POST
// /apis/apiextensions.k8s.io/v1/customresourcedefinitions, and one gang's PodGroup for
// POST /apis/scheduling.x-k8s.io/v1alpha1/namespaces/default/podgroups.
std::string PodGroupCrdJson();
std::string PodGroupJson(int gang, int min_member);
std::string GangName(int gang);

// The p-quantile (0..1) of v, nearest rank; 0 for none.
double Percentile(std::vector<double> v, double p);

}  // namespace ksched::bench
