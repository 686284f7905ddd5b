// Informer event handlers. They only route: assigned pods to the cache (and queue move
// requests), unassigned pods of our profiles to the queue, nodes to the cache plus the
// cluster event that describes the change.
#include "pkg/scheduler/event_handlers.h"

#include <string>
#include <vector>


#include "pkg/util/log.h"

namespace ksched::scheduler {
namespace {

using framework::ClusterEvent;

bool SameConditions(const api::Node& a, const api::Node& b) {
  // Only type and status matter for scheduling; heartbeat times change constantly.
  if (a.status.conditions.size() != b.status.conditions.size()) return false;
  for (size_t i = 0; i < a.status.conditions.size(); ++i) {
    if (a.status.conditions[i].type != b.status.conditions[i].type ||
        a.status.conditions[i].status != b.status.conditions[i].status)
      return false;
  }
  return true;
}

// Whether an assigned pod's update can help a pending pod: its labels changed (pod
// affinity and topology spread count it), or its requests did, in its spec or in what
// the kubelet reports of a resize (an in-place resize down frees room once actuated). Anything else, above all the kubelet's status updates, is what upstream's
// PodSchedulingPropertiesChange calls AssignedPodOtherUpdate, which no plugin here
// registers: it is not sent to the queue, so it never scans the unschedulable pods.
bool AssignedPodChangeMayHelp(const api::Pod& old_pod, const api::Pod& new_pod) {
  return old_pod.metadata.labels != new_pod.metadata.labels || old_pod.spec.containers != new_pod.spec.containers ||
         old_pod.spec.init_containers != new_pod.spec.init_containers || old_pod.spec.overhead != new_pod.spec.overhead ||
         old_pod.spec.pod_requests != new_pod.spec.pod_requests ||
         old_pod.status.container_resources != new_pod.status.container_resources ||
         old_pod.status.pod_allocated != new_pod.status.pod_allocated ||
         old_pod.status.pod_actual != new_pod.status.pod_actual ||
         old_pod.status.resize_infeasible != new_pod.status.resize_infeasible;
}

}  // namespace

std::vector<ClusterEvent> NodeSchedulingPropertiesChange(const api::Node& old_node, const api::Node& new_node) {
  std::vector<ClusterEvent> events;
  if (old_node.spec.unschedulable != new_node.spec.unschedulable && !new_node.spec.unschedulable)
    events.push_back(framework::kNodeSpecUnschedulableChange);
  if (old_node.status.allocatable != new_node.status.allocatable)
    events.push_back(framework::kNodeAllocatableChange);
  if (old_node.metadata.labels != new_node.metadata.labels) events.push_back(framework::kNodeLabelChange);
  if (old_node.spec.taints != new_node.spec.taints) events.push_back(framework::kNodeTaintChange);
  if (!SameConditions(old_node, new_node)) events.push_back(framework::kNodeConditionChange);
  return events;
}

void PodEventHandler::OnAdd(const api::PodPtr& pod) {
  if (pod->IsAssigned()) {
    AddAssigned(pod);
  } else if (responsible_(*pod)) {
    if (auto s = queue_.Add(pod); !s.ok()) KLOG(ERROR) << "adding pod " << pod->Key() << " to the queue: " << s.message();
  }
}

void PodEventHandler::OnUpdate(const api::PodPtr& old_pod, const api::PodPtr& new_pod) {
  if (old_pod->IsAssigned()) {
    if (auto s = cache_.UpdatePod(*old_pod, new_pod); !s.ok())
      KLOG(ERROR) << "scheduler cache UpdatePod failed, pod=\"" << new_pod->Key() << "\": " << s.message();
    if (AssignedPodChangeMayHelp(*old_pod, *new_pod)) queue_.AssignedPodUpdated(old_pod, new_pod);
    return;
  }
  if (new_pod->IsAssigned()) {
    // Bound (by us or another scheduler): it leaves the queue and counts on its node.
    queue_.Delete(*old_pod);
    AddAssigned(new_pod);
    return;
  }
  if (responsible_(*new_pod)) {
    if (auto s = queue_.Update(old_pod, new_pod); !s.ok())
      KLOG(ERROR) << "updating pod " << new_pod->Key() << " in the queue: " << s.message();
  }
}

void PodEventHandler::OnDelete(const informers::Deleted<api::Pod>& deleted) {
  const api::PodPtr& pod = deleted.last_known;
  // After a watch gap the last known state may predate our bind, so ask the cache too:
  // an assumed or bound pod must free its node either way.
  auto cached = cache_.GetPod(*pod);
  if (pod->IsAssigned() || cached.ok()) {
    const api::Pod& victim = cached.ok() ? **cached : *pod;
    if (auto s = cache_.RemovePod(victim); !s.ok())
      KLOG(ERROR) << "scheduler cache RemovePod failed, pod=\"" << pod->Key() << "\": " << s.message();
    queue_.MoveAllToActiveOrBackoffQueue(framework::kAssignedPodDelete, cached.ok() ? *cached : pod, nullptr);
    ActivatePreemptorsOf(victim.spec.node_name);
  }
  if (!pod->IsAssigned()) {
    queue_.Delete(*pod);
    reject_waiting_(*pod);
  }
}

void PodEventHandler::ActivatePreemptorsOf(const std::string& node) {
  if (node.empty() || queue_.nominator().empty()) return;
  std::vector<api::PodPtr> ready = queue_.nominator().NominatedPodsForNode(node);
  std::erase_if(ready, [&](const api::PodPtr& p) { return cache_.HasTerminatingPodBelow(node, p->Priority()); });
  if (!ready.empty()) queue_.ActivateAwaitingPreemption(ready);
}

void PodEventHandler::AddAssigned(const api::PodPtr& pod) {
  if (auto s = cache_.AddPod(pod); !s.ok())
    KLOG(ERROR) << "scheduler cache AddPod failed, pod=\"" << pod->Key() << "\": " << s.message();
  queue_.AssignedPodAdded(pod);
}

void NodeEventHandler::OnAdd(const api::NodePtr& node) {
  if (auto s = cache_.AddNode(node); !s.ok()) KLOG(ERROR) << "scheduler cache AddNode failed: " << s.message();
  queue_.MoveAllToActiveOrBackoffQueue(framework::kNodeAdd, nullptr, node);
}

void NodeEventHandler::OnUpdate(const api::NodePtr& old_node, const api::NodePtr& new_node) {
  if (auto s = cache_.UpdateNode(*old_node, new_node); !s.ok())
    KLOG(ERROR) << "scheduler cache UpdateNode failed: " << s.message();
  for (const ClusterEvent& ev : NodeSchedulingPropertiesChange(*old_node, *new_node))
    queue_.MoveAllToActiveOrBackoffQueue(ev, old_node, new_node);
}

void NodeEventHandler::OnDelete(const informers::Deleted<api::Node>& deleted) {
  if (auto s = cache_.RemoveNode(*deleted.last_known); !s.ok())
    KLOG(ERROR) << "scheduler cache RemoveNode failed: " << s.message();
}

void GangMemberHandler::ActivateSiblings(const api::Pod& pod, bool only_at_quorum) {
  if (pod.IsAssigned()) return;
  const std::string* group_name = pod.metadata.labels.Get(api::kPodGroupLabel);
  if (group_name == nullptr || group_name->empty()) return;
  api::PodGroupPtr group = lister_.PodGroupNamed(pod.metadata.namespace_, *group_name);
  if (group == nullptr) return;
  std::vector<api::PodPtr> members = lister_.PodGroupMembers(pod.metadata.namespace_, *group_name);
  const auto count = static_cast<int64_t>(members.size());
  if (count < group->min_member || (only_at_quorum && count != group->min_member)) return;
  std::erase_if(members, [&](const api::PodPtr& m) { return m->IsAssigned() || m->metadata.uid == pod.metadata.uid; });
  if (!members.empty()) queue_.ActivateQueued(members);
}

}  // namespace ksched::scheduler
