#include "pkg/framework/runtime/pod_entry_memo.h"

namespace ksched::framework::runtime {

cache::PodEntry PodEntryMemo::Get(const api::PodPtr& pod) const {
  {
    MutexLock lock(mu_);
    auto it = entries_.find(pod.get());
    if (it != entries_.end() && it->second.first.lock() == pod) return it->second.second;
  }
  cache::PodEntry entry = cache::MakePodEntry(pod);
  MutexLock lock(mu_);
  if (entries_.size() >= kMaxEntries) entries_.clear();
  entries_.insert_or_assign(pod.get(), std::make_pair(std::weak_ptr<const api::Pod>(pod), entry));
  return entry;
}

}  // namespace ksched::framework::runtime
