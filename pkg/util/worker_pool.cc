#include "pkg/util/worker_pool.h"

namespace ksched {

WorkerPool::WorkerPool(int workers) {
  for (int i = 0; i < std::max(1, workers); ++i) threads_.emplace_back([this] { Work(); });
}

WorkerPool::~WorkerPool() {
  {
    MutexLock l(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void WorkerPool::Submit(std::function<void()> task) {
  {
    MutexLock l(mu_);
    tasks_.push_back(std::move(task));
  }
  cv_.notify_one();
}

bool WorkerPool::TrySubmit(std::function<void()> task, size_t max_pending) {
  {
    MutexLock l(mu_);
    if (tasks_.size() + running_ >= max_pending) return false;
    tasks_.push_back(std::move(task));
  }
  cv_.notify_one();
  return true;
}

bool WorkerPool::WaitIdle(std::chrono::milliseconds timeout) {
  MutexLock l(mu_);
  return idle_cv_.wait_for(l, timeout, [&]() REQUIRES(mu_) { return tasks_.empty() && running_ == 0; });
}

size_t WorkerPool::Pending() const {
  MutexLock l(mu_);
  return tasks_.size() + running_;
}

void WorkerPool::Work() {
  for (;;) {
    std::function<void()> task;
    {
      MutexLock l(mu_);
      cv_.wait(l, [&]() REQUIRES(mu_) { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty()) return;  // stopping and drained
      task = std::move(tasks_.front());
      tasks_.pop_front();
      ++running_;
    }
    task();
    {
      MutexLock l(mu_);
      --running_;
      if (tasks_.empty() && running_ == 0) idle_cv_.notify_all();
    }
  }
}

}  // namespace ksched
