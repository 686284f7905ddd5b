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

namespace ksched::bench {

// What a placement shows: `violations` counts breaches of the pods' hard constraints
// (0 for workloads without any); `lines` describe the placement for a reader.
struct Verification {
  int64_t violations = 0;
  std::vector<std::string> lines;
};

// The nodes as created, and where each bound pod went.
struct Placement {
  std::vector<api::Node> nodes;
  // Pod name -> node name, for the bound pods.
  std::unordered_map<std::string, std::string> node_of_pod;
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
  Verification (*verify)(const Placement&) = nullptr;
};

std::span<const Workload> Workloads();
// Null when there is no workload of that name.
const Workload* FindWorkload(std::string_view name);

// bench-node-<i>: 32 CPU, 128Gi, 110 pods, kubernetes.io/hostname=<name>, and the zone.
std::vector<api::Node> MakeNodes(const Workload& w, int count);
// bench-pod-<i> in "default": 100m CPU / 500Mi, shaped by the workload. `owner_uid`: the
// ReplicaSet's uid when w.replica_set.
api::Pod MakePod(const Workload& w, int i, const std::string& scheduler_name, const std::string& owner_uid);

// The ReplicaSet of a replica_set workload, as JSON for POST
// /apis/apps/v1/namespaces/default/replicasets.
inline constexpr std::string_view kReplicaSetName = "bench-rs";
std::string ReplicaSetJson();

}  // namespace ksched::bench
