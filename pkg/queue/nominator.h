// Nominator: pods nominated to run on a node (by preemption, or carried in
// .status.nominatedNodeName) but not bound yet. Filters consult it so that a lower
// priority pod does not take the room preemption freed for a higher priority one.
// Thread-safe; filters read it from many threads while the queue writes it.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pkg/api/types.h"
#include "pkg/util/mutex.h"
#include "pkg/util/strings.h"

namespace ksched::queue {

// How AddNominatedPod picks the node (upstream NominatingInfo).
struct NominatingInfo {
  enum class Mode { kNoop, kOverride };
  Mode mode = Mode::kNoop;  // kNoop: use the pod's .status.nominatedNodeName
  std::string node_name;    // kOverride: this node; empty clears the nomination
};

class Nominator {
 public:
  // (Re)nominates `pod`, replacing any earlier nomination of the same pod.
  void AddNominatedPod(const api::PodPtr& pod, const NominatingInfo& info = {}) EXCLUDES(mu_);
  // Called on delete and when the pod is assumed/bound.
  void DeleteNominatedPodIfExists(const api::Pod& pod) EXCLUDES(mu_);
  // Replaces the stored pod object; keeps an in-memory nomination when the update
  // carries none (the API write of nominatedNodeName may not have landed yet).
  void UpdateNominatedPod(const api::Pod& old_pod, const api::PodPtr& new_pod) EXCLUDES(mu_);

  std::vector<api::PodPtr> NominatedPodsForNode(std::string_view node) const EXCLUDES(mu_);
  // "" if not nominated.
  std::string NominatedNodeFor(const api::Pod& pod) const EXCLUDES(mu_);
  size_t size() const EXCLUDES(mu_);
  // Lock-free: filters ask it for every node of every cycle.
  bool empty() const { return count_.load(std::memory_order_acquire) == 0; }

 private:
  // Pods without a UID (tests) are tracked by namespace/name.
  static std::string IdOf(const api::Pod& pod);
  void AddLocked(const api::PodPtr& pod, const NominatingInfo& info) REQUIRES(mu_);
  void DeleteLocked(const std::string& id) REQUIRES(mu_);

  // Readers share it: the filters of every worker ask for every node of every cycle.
  mutable SharedMutex mu_;
  std::unordered_map<std::string, std::vector<api::PodPtr>, StringViewHash, std::equal_to<>> by_node_
      GUARDED_BY(mu_);
  std::unordered_map<std::string, std::string> node_of_ GUARDED_BY(mu_);  // id -> node
  std::atomic<size_t> count_{0};  // node_of_.size(), for empty()
};

}  // namespace ksched::queue
