// PodEntryMemo: the cache::PodEntry (requests, host ports, parsed affinity terms) of the
// pods a what-if run adds to a copy of a node, computed once per pod object instead of
// once per node per cycle. Filters add a node's nominated pods to every node they
// check (upstream addNominatedPods), and a preemption storm asks for the same few
// hundred pods on every node of every attempt.
#pragma once

#include <cstddef>
#include <memory>
#include <unordered_map>
#include <utility>

#include "pkg/api/types.h"
#include "pkg/cache/node_info.h"
#include "pkg/util/mutex.h"

namespace ksched::framework::runtime {

class PodEntryMemo {
 public:
  // Entries are dropped all at once past this many (nominated pods come and go).
  static constexpr size_t kMaxEntries = 4096;

  // The entry of `pod`, from the memo while this very object (not just its name) is the
  // one remembered. Thread-safe.
  cache::PodEntry Get(const api::PodPtr& pod) const EXCLUDES(mu_);
  size_t size() const EXCLUDES(mu_) {
    ReaderMutexLock lock(mu_);
    return entries_.size();
  }

 private:
  // Shared for lookups: every worker of a Filter pass asks at once.
  mutable SharedMutex mu_;
  // Keyed by the object's address; the weak pointer tells a live object from a new one
  // at a reused address.
  mutable std::unordered_map<const api::Pod*, std::pair<std::weak_ptr<const api::Pod>, cache::PodEntry>> entries_
      GUARDED_BY(mu_);
};

}  // namespace ksched::framework::runtime
