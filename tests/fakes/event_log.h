// Test helpers for asynchronous code: a thread-safe log of strings that handlers append
// to and tests wait on, and Eventually() for polling a condition on real time (only for
// effects that happen in another process, e.g. the API server).
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace ksched::testing {

class EventLog {
 public:
  void Push(std::string e) {
    std::lock_guard l(mu_);
    events_.push_back(std::move(e));
    cv_.notify_all();
  }
  std::vector<std::string> events() const {
    std::lock_guard l(mu_);
    return events_;
  }
  // Waits until `pred(events)` holds.
  bool WaitUntil(const std::function<bool(const std::vector<std::string>&)>& pred,
                 std::chrono::milliseconds timeout = std::chrono::seconds(60)) const {
    std::unique_lock l(mu_);
    return cv_.wait_for(l, timeout, [&] { return pred(events_); });
  }
  bool WaitFor(size_t n, std::chrono::milliseconds timeout = std::chrono::seconds(10)) const {
    return WaitUntil([n](const auto& ev) { return ev.size() >= n; }, timeout);
  }
  bool Saw(const std::string& e, std::chrono::milliseconds timeout = std::chrono::seconds(60)) const {
    return WaitUntil([&](const auto& ev) { return std::find(ev.begin(), ev.end(), e) != ev.end(); }, timeout);
  }

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::vector<std::string> events_;
};

template <typename Pred>
bool Eventually(Pred pred, std::chrono::milliseconds timeout,
                std::chrono::milliseconds poll = std::chrono::milliseconds(20)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(poll);
  }
  return pred();
}

}  // namespace ksched::testing
