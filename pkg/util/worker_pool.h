// A fixed pool of worker threads running queued tasks in FIFO order. Used for the
// binding cycle so the scheduling thread never waits on the API server.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "pkg/util/mutex.h"

namespace ksched {

class WorkerPool {
 public:
  explicit WorkerPool(int workers);
  // Runs every queued task, then joins the workers.
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  void Submit(std::function<void()> task);
  // Submits only while fewer than `max_pending` tasks are queued or running; false (and
  // the task dropped) otherwise, so a flood of work is shed instead of queued.
  bool TrySubmit(std::function<void()> task, size_t max_pending);
  // Blocks until no task is queued or running, or the timeout passes. Returns true if idle.
  bool WaitIdle(std::chrono::milliseconds timeout);
  // Tasks queued or running.
  size_t Pending() const;
  int size() const { return static_cast<int>(threads_.size()); }

 private:
  void Work();

  mutable Mutex mu_;
  std::condition_variable_any cv_;
  std::condition_variable_any idle_cv_;
  std::deque<std::function<void()>> tasks_ GUARDED_BY(mu_);
  size_t running_ GUARDED_BY(mu_) = 0;
  bool stopping_ GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace ksched
