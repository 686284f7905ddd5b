// Extender: a scheduler extender as the scheduling cycle sees it (upstream
// k8s.io/kube-scheduler/framework.Extender). The HTTP implementation is pkg/extender;
// the cycle (runtime::SchedulingAlgorithm), DefaultPreemption and the binding cycle
// call it through this interface only.
//
// Filter, Prioritize and ProcessPreemption are called from the scheduling thread, Bind
// from a binding worker.
#pragma once

#include <cstdint>
#include <future>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/api/types.h"
#include "pkg/cache/node_info.h"
#include "pkg/cache/snapshot.h"
#include "pkg/util/status.h"

namespace ksched::framework {

// The name recorded among a pod's unschedulable plugins when extenders rejected nodes
// (upstream framework.ExtenderName). Extenders register no cluster events, so the queue
// moves such a pod on any event.
inline constexpr std::string_view kExtenderName = "Extender";

// An extender's scores run from 0 to this (upstream extenderv1.MaxExtenderPriority); the
// scheduler scales them to MaxNodeScore.
inline constexpr int64_t kMaxExtenderPriority = 10;

// The pods to evict on one node, most important first, and how many of them a
// PodDisruptionBudget protects (upstream extenderv1.Victims).
struct Victims {
  std::vector<api::PodPtr> pods;
  int64_t num_pdb_violations = 0;
};
// Node name -> victims there.
using NodeVictims = std::map<std::string, Victims, std::less<>>;

struct ExtenderFilterResult {
  // The nodes that pass, by name, each one of the nodes the extender was given.
  std::vector<std::string> passed;
  // Node -> why it does not fit: may fit after a preemption / never will.
  std::map<std::string, std::string, std::less<>> failed;
  std::map<std::string, std::string, std::less<>> failed_and_unresolvable;
};

// One node's score from an extender (upstream extenderv1.HostPriority).
struct HostPriority {
  std::string host;
  int64_t score = 0;
};

class Extender {
 public:
  virtual ~Extender() = default;

  // How logs, explain and the metrics name it (the URL prefix, as upstream).
  virtual const std::string& Name() const = 0;
  // Whether the pod is for this extender: every pod, unless it manages resources, then
  // only pods whose containers or init containers request or limit one of them.
  virtual bool IsInterested(const api::Pod& pod) const = 0;
  virtual bool IsFilter() const = 0;
  virtual bool IsPrioritizer() const = 0;
  virtual bool IsBinder() const = 0;
  virtual bool SupportsPreemption() const = 0;
  // A failing ignorable extender is skipped; any other fails the attempt.
  virtual bool IsIgnorable() const = 0;
  virtual int64_t Weight() const = 0;

  // Which of `nodes` the extender lets through.
  virtual StatusOr<ExtenderFilterResult> Filter(const api::Pod& pod, std::span<const cache::NodeInfoPtr> nodes) = 0;
  // Sends the scores request and returns at once, so the plugins score meanwhile; get()
  // waits for the answer.
  virtual std::future<StatusOr<std::vector<HostPriority>>> Prioritize(const api::Pod& pod,
                                                                      std::span<const cache::NodeInfoPtr> nodes) = 0;
  // Binds the pod to `node` in the extender's stead of the Bind plugins.
  virtual Status Bind(const api::Pod& pod, const std::string& node) = 0;
  // Which of the preemption candidates the extender accepts, and with which victims;
  // the victims it names are looked up among the pods `snapshot` has on the node.
  virtual StatusOr<NodeVictims> ProcessPreemption(const api::Pod& pod, const NodeVictims& candidates,
                                                  const cache::Snapshot& snapshot) = 0;
};

}  // namespace ksched::framework
