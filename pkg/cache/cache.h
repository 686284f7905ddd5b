// Cache: the scheduler's view of which pods run (or are assumed to run) on which nodes
// (upstream internal/cache.Cache). Fed by the informers' event handlers and by the
// scheduling loop's assume/forget; read once per cycle through UpdateSnapshot.
//
// A pod's life in the cache:
//
//            AssumePod             AddPod (the watch confirms the binding)
//   absent ------------> assumed -----------------------------------------> added
//      ^                    |                                              |    ^
//      +---- ForgetPod -----+                                  RemovePod   |    | UpdatePod
//      +-----------------------------------------------------------------+ +----+
//
// An assumed pod never expires: upstream dropped the TTL after slow binds under load let
// an assumed pod expire and its node be double-booked (kubernetes #106361, #110925).
// A pod can also be added without being assumed (bound by someone else).
//
// Thread-safe: every method takes the cache's single mutex.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "pkg/api/types.h"
#include "pkg/cache/node_info.h"
#include "pkg/cache/snapshot.h"
#include "pkg/util/status.h"

namespace ksched::cache {

struct CacheOptions {
  // Called (under the cache lock) when events contradict the cache in a way that means
  // it can no longer be trusted: an added pod updated onto another node, or removed from
  // a node it was not on. Upstream logs and exits so the process restarts with a fresh
  // list; the default does the same (KLOG(FATAL)). If the hook returns, the operation
  // fails with an Internal status and the cache is left unchanged.
  std::function<void(const std::string& message)> on_corruption;
};

// A copy of the whole cache for debugging (upstream Dump); expensive.
struct CacheDump {
  // Every NodeInfo by node name, including ghosts (node deleted, pods not yet) and
  // NodeInfos for nodes not yet seen whose pods arrived first.
  std::map<std::string, NodeInfo> nodes;
  // "namespace/name" of each assumed pod, sorted.
  std::vector<std::string> assumed_pods;
};

class Cache {
 public:
  virtual ~Cache() = default;

  // ---- pods (the key is the pod's uid; "namespace/name" when it has none) ----------

  // Counts the pod on pod->spec.node_name before the binding is confirmed. Fails if
  // the pod is already in the cache or has no node name.
  virtual Status AssumePod(api::PodPtr pod) = 0;
  // The binding call for an assumed pod returned. Assumed pods do not expire, so this
  // only records the fact (kept for upstream's interface and for Dump/logs).
  virtual Status FinishBinding(const api::Pod& pod) = 0;
  // Undoes AssumePod (binding failed). A pod no longer in the cache is a no-op; a pod
  // that is not assumed, or assumed on a different node, is an error.
  virtual Status ForgetPod(const api::Pod& pod) = 0;
  // An assigned pod from the watch. Confirms an assumed pod by replacing the assumed
  // copy with this one, even on a different node (the mismatch is logged); otherwise
  // adds it. Fails if the pod was already added.
  virtual Status AddPod(api::PodPtr pod) = 0;
  // Replaces an added pod. Fails for pods not in the cache and for assumed pods (they
  // must be confirmed by AddPod first).
  virtual Status UpdatePod(const api::Pod& old_pod, api::PodPtr new_pod) = 0;
  // Removes a pod (added or assumed). Fails if the pod is not in the cache. A pod with
  // an empty node name (a stale tombstone) removes the cached copy wherever it is.
  virtual Status RemovePod(const api::Pod& pod) = 0;
  virtual bool IsAssumedPod(const api::Pod& pod) const = 0;
  // The cached copy (which may sit on a deleted node); NotFound if absent.
  virtual StatusOr<api::PodPtr> GetPod(const api::Pod& pod) const = 0;

  // ---- nodes ------------------------------------------------------------------------

  // Adds the node, or replaces it if present (same as UpdateNode).
  virtual Status AddNode(api::NodePtr node) = 0;
  // Replaces the node; adds it if the cache lacks it. The cache's own copy of the old
  // node decides zone moves; old_node is accepted for the handlers' convenience.
  virtual Status UpdateNode(const api::Node& old_node, api::NodePtr new_node) = 0;
  // Removes the node from snapshots. If pods are still counted on it (their delete
  // events come on another watch and may arrive later) a ghost NodeInfo keeps them
  // until the last one is removed. NotFound if the node is not in the cache.
  virtual Status RemoveNode(const api::Node& node) = 0;

  // ---- snapshots --------------------------------------------------------------------

  // Brings `snapshot` up to date, copying only NodeInfos changed since its last update
  // (unchanged ones stay the same shared object). Ghosts are left out. If the result
  // disagrees with the cache's node count, the snapshot is rebuilt from scratch and an
  // Internal error is returned (the current cycle should fail; the next one is sound).
  virtual Status UpdateSnapshot(Snapshot& snapshot) = 0;

  // NodeInfo::HasTerminatingPodBelow of `node`, on the live cache (false for an unknown
  // node).
  virtual bool HasTerminatingPodBelow(std::string_view node, int32_t priority) const = 0;

  // ---- introspection (metrics scheduler_cache_size{type=...}, debugging) ------------

  // NodeInfos held, including ghosts (type="nodes").
  virtual size_t NodeCount() const = 0;
  // Pods held, assumed ones included (type="pods").
  virtual size_t PodCount() const = 0;
  // type="assumed_pods".
  virtual size_t AssumedPodCount() const = 0;
  virtual CacheDump Dump() const = 0;
};

std::unique_ptr<Cache> NewCache(CacheOptions options = {});

}  // namespace ksched::cache
