// Pods held at Permit (upstream waiting_pods_map.go): a pod waits until every plugin that
// returned Wait allows it, any plugin rejects it, or one plugin's timeout passes.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/api/types.h"
#include "pkg/framework/status.h"
#include "pkg/util/clock.h"
#include "pkg/util/mutex.h"
#include "pkg/util/thread_annotations.h"

namespace ksched::framework::runtime {

// Upstream caps a Permit plugin's wait at 15 minutes.
inline constexpr std::chrono::milliseconds kMaxPermitTimeout = std::chrono::minutes(15);

class WaitingPod {
 public:
  // `timeouts`: plugin -> how long it may keep the pod waiting.
  WaitingPod(api::PodPtr pod, const std::map<std::string, std::chrono::milliseconds, std::less<>>& timeouts,
             Clock& clock);

  const api::Pod& pod() const { return *pod_; }
  // Plugins that have not allowed the pod yet.
  std::vector<std::string> GetPendingPlugins() const;
  // Not allowed, rejected or timed out yet.
  bool Undecided() const;
  // Whether a plugin's timeout ended the wait (not an Allow or a Reject).
  bool TimedOut() const;
  // `plugin` allows the pod; the last pending plugin's Allow releases it.
  void Allow(std::string_view plugin);
  // Rejects the pod (Unschedulable, attributed to `plugin`). The first decision wins.
  void Reject(std::string_view plugin, std::string message);
  // Blocks until the pod is allowed (Success), rejected or timed out (Unschedulable
  // "rejected due to timeout after waiting 10s at plugin X").
  Status Wait();

 private:
  struct Pending {
    Clock::time_point deadline;
    std::chrono::milliseconds timeout;
  };

  // Resolves the pod; wakes Wait().
  void FinishLocked(Status status) REQUIRES(mu_);

  const api::PodPtr pod_;
  Clock& clock_;
  mutable Mutex mu_;
  std::map<std::string, Pending, std::less<>> pending_ GUARDED_BY(mu_);
  std::optional<Status> result_ GUARDED_BY(mu_);
  bool timed_out_ GUARDED_BY(mu_) = false;
  std::stop_source wake_;
};

// uid -> waiting pod. Thread-safe.
class WaitingPodsMap {
 public:
  void Add(std::string key, std::shared_ptr<WaitingPod> pod);
  void Remove(std::string_view key);
  std::shared_ptr<WaitingPod> Get(std::string_view key) const;
  void Iterate(const std::function<void(WaitingPod&)>& fn) const;

 private:
  mutable Mutex mu_;
  std::map<std::string, std::shared_ptr<WaitingPod>, std::less<>> pods_ GUARDED_BY(mu_);
};

// The key a pod waits under: its cache key (cache::PodCacheKey: its uid, or
// namespace/name for pods without one), which cache::SamePodKey compares.
std::string WaitingPodKey(const api::Pod& pod);

}  // namespace ksched::framework::runtime
