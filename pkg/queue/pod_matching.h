// Pod predicates the queue needs to decide moves, kept apart from the queue mechanics.
#pragma once

#include "pkg/api/types.h"

namespace ksched::queue {

// True if the update may change the scheduling outcome: anything but status,
// resourceVersion and generation changed (upstream isPodUpdated).
bool PodSchedulingPropertiesChanged(const api::Pod& old_pod, const api::Pod& new_pod);

// True if `assigned` satisfies one of `pending`'s required pod affinity terms
// (namespace and label selector), i.e. binding it may let `pending` schedule. A term
// with a non-empty namespaceSelector counts as matching, since namespace labels are not
// known here; the cost is one extra retry.
bool AffinityTermMatches(const api::Pod& pending, const api::Pod& assigned);

// Label selector semantics: an empty selector matches everything.
bool SelectorMatches(const api::LabelSelector& selector, const api::StringMap& labels);

}  // namespace ksched::queue
