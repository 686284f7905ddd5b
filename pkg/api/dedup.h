// Internal to pkg/api: a process-wide table that lets the decoder hand identical
// template-derived values (containers, affinity, tolerations, ...) of different pods the
// same immutable instance. Lookups are keyed by a hash of the value's JSON text and
// confirmed with operator== on the decoded value, so a collision or a differently
// formatted equal value costs a copy, never a wrong answer.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <unordered_map>

#include "pkg/util/mutex.h"
#include "pkg/util/thread_annotations.h"

namespace ksched::api::json_internal {

template <typename T>
class DedupTable {
 public:
  // Returns the table's instance equal to *fresh, or adopts fresh (which must not be
  // referenced elsewhere) as the instance for `hash`.
  std::shared_ptr<T> Intern(uint64_t hash, std::shared_ptr<T> fresh) {
    MutexLock lock(mu_);
    auto [it, inserted] = table_.try_emplace(hash, fresh);
    if (!inserted) {
      if (*it->second == *fresh) return it->second;
      // Same hash, different value: the newer value is the likelier one to repeat.
      it->second = fresh;
      return fresh;
    }
    if (table_.size() >= prune_at_) PruneLocked();
    return fresh;
  }

  size_t SizeForTest() {
    MutexLock lock(mu_);
    return table_.size();
  }

 private:
  // The table holds a reference to every instance, so holders can tell "shared" from
  // use_count() (see shared.h). An instance only the table still references belongs to
  // no pod any more; dropping those whenever the table doubles keeps it within twice
  // its high-water mark of live values at amortised O(1) per insertion.
  void PruneLocked() REQUIRES(mu_) {
    for (auto it = table_.begin(); it != table_.end();) {
      if (it->second.use_count() == 1) it = table_.erase(it);
      else ++it;
    }
    prune_at_ = std::max(kMinPruneSize, 2 * table_.size());
  }

  static constexpr size_t kMinPruneSize = 1024;

  Mutex mu_;
  std::unordered_map<uint64_t, std::shared_ptr<T>> table_ GUARDED_BY(mu_);
  size_t prune_at_ GUARDED_BY(mu_) = kMinPruneSize;
};

// A process-lifetime instance that is never destroyed, so informer threads still
// decoding while the process exits never see a destroyed table.
template <typename T>
T& Immortal() {
  alignas(T) static unsigned char storage[sizeof(T)];
  static T* instance = ::new (storage) T();
  return *instance;
}

}  // namespace ksched::api::json_internal
