// Pod predicates the queue needs to decide moves, kept apart from the queue mechanics.
#pragma once

#include "pkg/api/types.h"
#include "pkg/framework/pod_info.h"

namespace ksched::queue {

// True if the update may change the scheduling outcome: anything but status (except
// status.resourceClaimStatuses), resourceVersion and generation changed (upstream
// isPodUpdated).
bool PodSchedulingPropertiesChanged(const api::Pod& old_pod, const api::Pod& new_pod);

// True if `assigned` satisfies one of `pending`'s required pod affinity terms
// (namespace and label selector), i.e. binding it may let `pending` schedule. A term
// with a non-empty namespaceSelector counts as matching, since namespace labels are not
// known here; the cost is one extra retry.
bool AffinityTermMatches(const api::Pod& pending, const api::Pod& assigned);

// Whether an assigned pod's add or update may help `pending` (upstream
// getUnschedulablePodsWithCrossTopologyTerm in scheduling_queue.go): `pending` has a
// required affinity term `assigned` matches, or was rejected by PodTopologySpread and is
// in `assigned`'s namespace. ksched also lets through pods rejected by InterPodAffinity,
// so the plugin's queueing hint can requeue a pod whose blocker was relabelled (upstream
// leaves that to the periodic flush); the hint, not this filter, keeps such a pod from
// being requeued on every pod event.
bool CrossTopologyCandidate(const framework::QueuedPodInfo& pending, const api::Pod& assigned);

// Label selector semantics: an empty selector matches everything.
bool SelectorMatches(const api::LabelSelector& selector, const api::StringMap& labels);

}  // namespace ksched::queue
