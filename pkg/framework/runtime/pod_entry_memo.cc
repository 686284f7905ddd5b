#include "pkg/framework/runtime/pod_entry_memo.h"

namespace ksched::framework::runtime {

cache::PodEntry PodEntryMemo::Get(const api::PodPtr& pod) const {
  // A pointer that owns nothing (aliasing an empty owner) has no identity to remember.
  if (pod.use_count() == 0) return cache::MakePodEntry(pod);
  {
    ReaderMutexLock lock(mu_);
    auto it = entries_.find(pod.get());
    // The same control block as `pod` (alive, so never a freed one reused): the same
    // object. Compared without lock()'s atomic increment.
    if (it != entries_.end() && !it->second.first.owner_before(pod) && !pod.owner_before(it->second.first))
      return it->second.second;
  }
  cache::PodEntry entry = cache::MakePodEntry(pod);
  WriterMutexLock lock(mu_);
  if (entries_.size() >= kMaxEntries) entries_.clear();
  entries_.insert_or_assign(pod.get(), std::make_pair(std::weak_ptr<const api::Pod>(pod), entry));
  return entry;
}

}  // namespace ksched::framework::runtime
