// Informer handlers that route pod and node events to the cache and the queue, and
// storage objects' changes to the queue.
#pragma once

#include <functional>
#include <vector>

#include "informers/informer.h"
#include "pkg/api/cluster_lister.h"
#include "pkg/cache/cache.h"
#include "pkg/framework/cluster_event.h"
#include "pkg/queue/scheduling_queue.h"

namespace ksched::scheduler {

class PodEventHandler final : public informers::EventHandler<api::Pod> {
 public:
  // `responsible`: the pod's schedulerName is one of our profiles.
  // `reject_waiting`: called for a deleted unassigned pod: its attempt waiting at Permit
  // is rejected and a bind held for it is cancelled.
  PodEventHandler(cache::Cache& cache, queue::SchedulingQueue& queue, std::function<bool(const api::Pod&)> responsible,
                  std::function<void(const api::Pod&)> reject_waiting)
      : cache_(cache), queue_(queue), responsible_(std::move(responsible)), reject_waiting_(std::move(reject_waiting)) {}

  void OnAdd(const api::PodPtr& pod) override;
  void OnUpdate(const api::PodPtr& old_pod, const api::PodPtr& new_pod) override;
  void OnDelete(const informers::Deleted<api::Pod>& deleted) override;

 private:
  void AddAssigned(const api::PodPtr& pod);
  // A pod left `node`: pods nominated there whose preemption victims have now all gone
  // are retried at once (not after their backoff).
  void ActivatePreemptorsOf(const std::string& node);

  cache::Cache& cache_;
  queue::SchedulingQueue& queue_;
  std::function<bool(const api::Pod&)> responsible_;
  std::function<void(const api::Pod&)> reject_waiting_;
};

class NodeEventHandler final : public informers::EventHandler<api::Node> {
 public:
  NodeEventHandler(cache::Cache& cache, queue::SchedulingQueue& queue) : cache_(cache), queue_(queue) {}

  void OnAdd(const api::NodePtr& node) override;
  void OnUpdate(const api::NodePtr& old_node, const api::NodePtr& new_node) override;
  void OnDelete(const informers::Deleted<api::Node>& deleted) override;

 private:
  cache::Cache& cache_;
  queue::SchedulingQueue& queue_;
};

// Adds and updates of a storage object (PersistentVolume, claim, StorageClass, CSINode,
// CSIDriver) as cluster events, so pods the volume plugins rejected are retried when one
// may help them (upstream addAllEventHandlers registers adds and updates of these; no
// plugin asks for their deletes).
template <typename T>
class StorageEventHandler final : public informers::EventHandler<T> {
 public:
  StorageEventHandler(queue::SchedulingQueue& queue, const framework::ClusterEvent& add,
                      const framework::ClusterEvent& update)
      : queue_(queue), add_(add), update_(update) {}

  void OnAdd(const std::shared_ptr<const T>& obj) override { queue_.MoveAllToActiveOrBackoffQueue(add_, nullptr, obj); }
  void OnUpdate(const std::shared_ptr<const T>& old_obj, const std::shared_ptr<const T>& new_obj) override {
    queue_.MoveAllToActiveOrBackoffQueue(update_, old_obj, new_obj);
  }
  void OnDelete(const informers::Deleted<T>& /*deleted*/) override {}

 private:
  queue::SchedulingQueue& queue_;
  const framework::ClusterEvent add_, update_;
};

// Members of gangs (Coscheduling's PodGroups) that PreFilter turned away while their group
// had fewer than minMember pods wait for no cluster event a sibling's creation would send
// (the queue hears of pods being bound, not created). Once a pod joins a group that now has
// enough pods, the group's other unassigned members are moved to activeQ. Add it to the Pod
// informer after the member index it reads.
class GangMemberHandler final : public informers::EventHandler<api::Pod> {
 public:
  GangMemberHandler(queue::SchedulingQueue& queue, const api::ClusterLister& lister) : queue_(queue), lister_(lister) {}
  void OnAdd(const api::PodPtr& pod) override { ActivateSiblings(*pod, /*only_at_quorum=*/true); }
  // A member whose scheduling gates are removed counts as one more ungated member.
  void OnUpdate(const api::PodPtr& old_pod, const api::PodPtr& new_pod) override {
    if (!old_pod->spec.scheduling_gates.empty() && new_pod->spec.scheduling_gates.empty())
      ActivateSiblings(*new_pod, /*only_at_quorum=*/false);
  }
  void OnDelete(const informers::Deleted<api::Pod>& /*deleted*/) override {}

 private:
  // `only_at_quorum`: only when the group has just reached minMember pods (members added
  // after that pass PreFilter themselves).
  void ActivateSiblings(const api::Pod& pod, bool only_at_quorum);
  queue::SchedulingQueue& queue_;
  const api::ClusterLister& lister_;
};

// The cluster events a node update amounts to (upstream nodeSchedulingPropertiesChange).
std::vector<framework::ClusterEvent> NodeSchedulingPropertiesChange(const api::Node& old_node,
                                                                   const api::Node& new_node);

}  // namespace ksched::scheduler
