// Helpers shared by the filtering, scoring and queueing-hint halves of InterPodAffinity.
#pragma once

#include <cstddef>
#include <string_view>
#include <utility>
#include <vector>

#include "pkg/api/cluster_lister.h"
#include "pkg/api/pod_affinity.h"
#include "pkg/api/types.h"
#include "pkg/cache/snapshot.h"

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

// The incoming pod's preferred affinity and anti-affinity terms (of `parsed`, which may
// be null) with their namespaceSelectors merged as above: what PreScore matches.
struct PreferredTerms {
  std::vector<api::WeightedAffinityTerm> affinity, anti_affinity;
};
PreferredTerms ResolvePreferredTerms(const api::PodAffinityTerms* parsed, const api::ClusterLister& lister);

// upstream GetNamespaceLabelsSnapshot: empty when the namespace is unknown.
api::StringMap NamespaceLabels(const api::ClusterLister& lister, std::string_view ns);

// The slots of topology keys in a snapshot's pod groups (Snapshot::TrackTopologyKey),
// looked up once per key in a cycle.
class TopologySlots {
 public:
  explicit TopologySlots(const cache::Snapshot& snapshot) : snapshot_(snapshot) {}
  size_t Of(std::string_view key) {
    for (const auto& [k, slot] : slots_) {
      if (k == key) return slot;
    }
    return slots_.emplace_back(key, snapshot_.TrackTopologyKey(key)).second;
  }

 private:
  const cache::Snapshot& snapshot_;
  std::vector<std::pair<std::string_view, size_t>> slots_;
};

// "a, b" of parse errors.
std::string JoinErrors(const std::vector<std::string>& errors);

}  // namespace ksched::framework::plugins::interpodaffinity
