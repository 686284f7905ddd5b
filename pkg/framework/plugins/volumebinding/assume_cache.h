// AssumeCache: the scheduler's in-memory view of PersistentVolumes and claims it has
// decided to bind but the API server does not show bound yet (upstream
// scheduler/util/assumecache.AssumeCache with the PV and PVC wrappers of
// volumebinding/assume_cache.go). Upstream keeps a second copy of every object next to
// the informer's; here the informer-backed lister stays the only copy and this class
// holds just the assumed objects, laid over it on every read.
//
// An assumed object hides the lister's until the lister holds a newer resourceVersion
// than the one it was assumed from (upstream's add() keeps an assumed object until the
// informer delivers a newer version), or until it is restored. A lister that no longer
// has the object drops it too (upstream's delete() removes both copies).
//
// Thread-safe: PreFilter and Reserve run on the scheduling thread, PreBind and
// Unreserve on binding workers.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/api/cluster_lister.h"
#include "pkg/api/storage.h"
#include "pkg/util/mutex.h"
#include "pkg/util/status.h"
#include "pkg/util/thread_annotations.h"

namespace ksched::framework::plugins::volumebinding {

// Whether resourceVersion `a` is newer than `b`. Both are decimal on every API server;
// anything else compares as "newer" when the strings differ, so the lister wins.
bool ResourceVersionNewer(std::string_view a, std::string_view b);

class AssumeCache {
 public:
  // The latest version of an object: the assumed one while it stands, else the lister's.
  api::PersistentVolumePtr Volume(const api::ClusterLister& lister, std::string_view name) EXCLUDES(mu_);
  api::PersistentVolumeClaimPtr Claim(const api::ClusterLister& lister, std::string_view ns, std::string_view name)
      EXCLUDES(mu_);
  // The lister's volumes of a storage class (sorted by name) with assumed versions
  // substituted (upstream PVAssumeCache.ListPVs).
  std::vector<api::PersistentVolumePtr> VolumesOfClass(const api::ClusterLister& lister, std::string_view class_name)
      EXCLUDES(mu_);

  // upstream AssumeCache.Assume: `obj` becomes the latest version. Fails when the object
  // is unknown or `obj` is older than the latest version ("out of sync").
  ksched::Status AssumeVolume(const api::ClusterLister& lister, api::PersistentVolumePtr pv) EXCLUDES(mu_);
  ksched::Status AssumeClaim(const api::ClusterLister& lister, api::PersistentVolumeClaimPtr claim) EXCLUDES(mu_);

  // upstream AssumeCache.Restore: back to the lister's version. Idempotent.
  void RestoreVolume(std::string_view name) EXCLUDES(mu_);
  void RestoreClaim(std::string_view ns, std::string_view name) EXCLUDES(mu_);

  // Drops every assumption the lister has overtaken (or whose object is gone), so
  // objects nobody reads again do not stay here. Called once per Reserve.
  void Prune(const api::ClusterLister& lister) EXCLUDES(mu_);

  // For tests: how many objects are assumed.
  size_t NumAssumed() const EXCLUDES(mu_);

 private:
  mutable Mutex mu_;
  std::map<std::string, api::PersistentVolumePtr, std::less<>> volumes_ GUARDED_BY(mu_);      // by name
  std::map<std::string, api::PersistentVolumeClaimPtr, std::less<>> claims_ GUARDED_BY(mu_);  // "ns/name"
};

}  // namespace ksched::framework::plugins::volumebinding
