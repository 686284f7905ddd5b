// Simulator: the scheduler itself, run on a cluster held in memory (memory_server.h).
//
// The same informers, listers, scheduling queue, cache, framework and plugins as
// `ksched` run unchanged; only the API server is replaced. Pods are scheduled one at a
// time, in the order given: each is created, followed through its attempts until it is
// bound or settles as unschedulable, and the system is let come to rest (every answer
// and watch event delivered and handled) before the next one, so each pod sees exactly
// the ones before it and a run repeats exactly for the same seed. A pod that does not
// fit is withdrawn, so it never takes a node later, out of turn. Preemption runs as in
// the scheduler: victims are deleted from the simulated cluster and the preemptor is
// retried; nothing is written anywhere else.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/types.h"
#include "pkg/framework/registry.h"
#include "pkg/simulate/cluster_files.h"
#include "pkg/util/status.h"

namespace ksched::simulate {

struct SimulateOptions {
  config::KubeSchedulerConfiguration config;  // defaulted and validated
  // The plugins the profiles may name: the in-tree ones, and those of a binary built
  // with plugins of its own (cmd/ksched/app.h).
  framework::Registry registry = framework::InTreeRegistry();
  uint64_t seed = 1;  // the tie-break between equally scored nodes
  bool explain = false;  // keep each pod's /debug/pods record (PodResult::explain)
  // How long one pod may take to settle (a pod never bound nor rejected in this time is
  // reported as such).
  std::chrono::milliseconds settle_timeout{30000};
};

struct PodResult {
  std::string namespace_;
  std::string name;
  std::optional<std::string> node;  // where it was bound; nullopt: nowhere
  // Why not (the FailedScheduling message), or empty when bound.
  std::string reason;
  // "namespace/name" of the pods its preemption evicted.
  std::vector<std::string> victims;
  // ksched's /debug/pods/{namespace}/{name} answer for the pod (SimulateOptions::explain).
  std::string explain;
};

struct CapacityResult {
  int fits = 0;             // copies bound before the first that was not
  bool reached_max = false; // stopped at the cap rather than at a copy that did not fit
  std::optional<PodResult> next;  // the first copy that did not fit
};

class Simulator {
 public:
  // Loads `cluster` (pods bound to a node occupy it; pending pods are kept for
  // SchedulePending) and starts the scheduler. kInvalidArgument for objects the API
  // server would refuse (two objects of one name, a pod naming an unknown PriorityClass).
  static StatusOr<std::unique_ptr<Simulator>> New(const ClusterObjects& cluster, SimulateOptions options);
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  // The cluster's pending pods, in file order (a gang's together, at its first).
  std::vector<PodResult> SchedulePending();
  // Creates `pod` and schedules it. kInvalidArgument for a pod the API server would
  // refuse (its name taken, an unknown PriorityClass), naming its source.
  StatusOr<PodResult> Schedule(const SourceObject& pod);
  // Schedule() for each pod in order, except that with a Coscheduling profile the pods
  // of one gang (label scheduling.x-k8s.io/pod-group) are created and scheduled together,
  // at the place of the first, as SchedulePending does: a gang member alone never fits.
  StatusOr<std::vector<PodResult>> ScheduleAll(const std::vector<SourceObject>& pods);
  // How many copies of `pod` (named NAME-capacity-1, -2, ...) fit, one after another, up to
  // `max`. A copy that could only be placed by preempting others does not fit.
  StatusOr<CapacityResult> CapacityOf(const SourceObject& pod, int max);
  // Cordons `node` and evicts its pods (not DaemonSet or mirror pods, as kubectl drain
  // --ignore-daemonsets), then schedules each again, in name order: where each goes, or
  // why it fits nowhere. kInvalidArgument if there is no such node.
  StatusOr<std::vector<PodResult>> Drain(std::string_view node);

 private:
  struct Impl;
  explicit Simulator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ksched::simulate
