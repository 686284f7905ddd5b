// Helpers shared by the filtering, scoring and queueing-hint halves of InterPodAffinity.
#pragma once

#include <string_view>
#include <vector>

#include "pkg/api/cluster_lister.h"
#include "pkg/api/pod_affinity.h"
#include "pkg/api/types.h"

namespace ksched::framework::plugins::interpodaffinity {

// upstream podMatchesAllAffinityTerms: false for no terms. Matches without namespace
// labels (the incoming pod's selectors are already resolved into namespaces).
bool PodMatchesAllTerms(const std::vector<api::AffinityTerm>& terms, const api::Pod& pod);
// upstream podMatchesAnyAffinityTerm.
bool PodMatchesAnyTerm(const std::vector<api::AffinityTerm>& terms, const api::Pod& pod);

// upstream mergeAffinityTermNamespacesIfNotEmpty: a non-empty namespaceSelector becomes
// the namespaces it selects now, and then matches nothing by itself; an empty one ({})
// keeps matching every namespace.
void MergeNamespaces(api::AffinityTerm& term, const api::ClusterLister& lister);

// upstream GetNamespaceLabelsSnapshot: empty when the namespace is unknown.
api::StringMap NamespaceLabels(const api::ClusterLister& lister, std::string_view ns);

// "a, b" of parse errors.
std::string JoinErrors(const std::vector<std::string>& errors);

}  // namespace ksched::framework::plugins::interpodaffinity
