// NominatorView: a SchedulingQueue's nominations as the framework reads them
// (framework::PodNominator; upstream's PriorityQueue is its own PodNominator). The
// frameworks are built before the queue, from whose plugins the queue is built, so the
// queue is set once it exists; until then nothing is nominated.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "pkg/api/types.h"
#include "pkg/framework/interface.h"
#include "pkg/queue/scheduling_queue.h"

namespace ksched::queue {

class NominatorView final : public framework::PodNominator {
 public:
  std::vector<api::PodPtr> NominatedPodsForNode(std::string_view node_name) const override {
    return queue ? queue->nominator().NominatedPodsForNode(node_name) : std::vector<api::PodPtr>{};
  }
  bool HasNominatedPods() const override { return queue && !queue->nominator().empty(); }
  std::string NominatedNodeName(const api::Pod& pod) const override {
    // Asked once per cycle: with nothing nominated anywhere (the common case) no lock
    // and no lookup.
    if (!queue || queue->nominator().empty()) return pod.status.nominated_node_name;
    std::string node = queue->nominator().NominatedNodeFor(pod);
    return node.empty() ? pod.status.nominated_node_name : node;
  }
  SchedulingQueue* queue = nullptr;
};

}  // namespace ksched::queue
