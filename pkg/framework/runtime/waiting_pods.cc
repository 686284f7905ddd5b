#include "pkg/framework/runtime/waiting_pods.h"

#include <algorithm>

#include "config/duration.h"
#include "pkg/cache/node_info.h"

namespace ksched::framework::runtime {

WaitingPod::WaitingPod(api::PodPtr pod,
                       const std::map<std::string, std::chrono::milliseconds, std::less<>>& timeouts, Clock& clock)
    : pod_(std::move(pod)), clock_(clock) {
  Clock::time_point now = clock_.Now();
  MutexLock l(mu_);
  for (const auto& [plugin, timeout] : timeouts) {
    std::chrono::milliseconds t = std::min(timeout, kMaxPermitTimeout);
    pending_.emplace(plugin, Pending{now + t, t});
  }
  if (pending_.empty()) FinishLocked(Status());
}

std::vector<std::string> WaitingPod::GetPendingPlugins() const {
  MutexLock l(mu_);
  std::vector<std::string> out;
  out.reserve(pending_.size());
  for (const auto& [plugin, p] : pending_) out.push_back(plugin);
  return out;
}

bool WaitingPod::Undecided() const {
  MutexLock l(mu_);
  return !result_.has_value();
}

bool WaitingPod::TimedOut() const {
  MutexLock l(mu_);
  return timed_out_;
}

void WaitingPod::Allow(std::string_view plugin) {
  MutexLock l(mu_);
  if (auto it = pending_.find(plugin); it != pending_.end()) pending_.erase(it);
  if (pending_.empty()) FinishLocked(Status());
}

void WaitingPod::Reject(std::string_view plugin, std::string message) {
  MutexLock l(mu_);
  FinishLocked(Status(Code::kUnschedulable, std::move(message)).WithPlugin(std::string(plugin)));
}

void WaitingPod::FinishLocked(Status status) {
  if (result_.has_value()) return;
  result_ = std::move(status);
  wake_.request_stop();
}

Status WaitingPod::Wait() {
  while (true) {
    Clock::time_point deadline;
    {
      MutexLock l(mu_);
      if (result_.has_value()) return *result_;
      // The earliest deadline decides; an Allow of that plugin just means we wake early
      // and look again.
      auto first = std::min_element(pending_.begin(), pending_.end(), [](const auto& a, const auto& b) {
        return a.second.deadline < b.second.deadline;
      });
      if (clock_.Now() >= first->second.deadline) {
        timed_out_ = true;
        FinishLocked(Status(Code::kUnschedulable, "rejected due to timeout after waiting " +
                                                      config::FormatGoDuration(first->second.timeout) +
                                                      " at plugin " + first->first)
                         .WithPlugin(first->first));
        return *result_;
      }
      deadline = first->second.deadline;
    }
    clock_.SleepUntil(deadline, wake_.get_token());
  }
}

void WaitingPodsMap::Add(std::string key, std::shared_ptr<WaitingPod> pod) {
  MutexLock l(mu_);
  pods_[std::move(key)] = std::move(pod);
}

void WaitingPodsMap::Remove(std::string_view key) {
  MutexLock l(mu_);
  if (auto it = pods_.find(key); it != pods_.end()) pods_.erase(it);
}

std::shared_ptr<WaitingPod> WaitingPodsMap::Get(std::string_view key) const {
  MutexLock l(mu_);
  auto it = pods_.find(key);
  return it == pods_.end() ? nullptr : it->second;
}

void WaitingPodsMap::Iterate(const std::function<void(WaitingPod&)>& fn) const {
  std::vector<std::shared_ptr<WaitingPod>> pods;
  {
    MutexLock l(mu_);
    for (const auto& [key, pod] : pods_) pods.push_back(pod);
  }
  // Outside the lock, so fn may Allow/Reject (which never touch this map) freely.
  for (const auto& pod : pods) fn(*pod);
}

std::string WaitingPodKey(const api::Pod& pod) { return cache::PodCacheKey(pod); }

}  // namespace ksched::framework::runtime
