#include "pkg/framework/runtime/parallelizer.h"

#include <algorithm>
#include <cmath>

#include "pkg/util/thread_name.h"

namespace ksched::framework::runtime {

Parallelizer::Parallelizer(int parallelism) : parallelism_(std::max(1, parallelism)) {
  threads_.reserve(parallelism_ - 1);
  for (int i = 1; i < parallelism_; ++i) threads_.emplace_back([this] {
    SetThreadName("sched-worker");
    WorkerLoop();
  });
}

Parallelizer::~Parallelizer() {
  {
    MutexLock l(mu_);
    shutdown_ = true;
  }
  work_cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

int Parallelizer::ChunkSize(int n, int parallelism) {
  int s = static_cast<int>(std::sqrt(static_cast<double>(n)));
  int r = n / std::max(1, parallelism) + 1;
  return std::max(1, std::min(s, r));
}

void Parallelizer::RunChunks(Job& job) {
  while (true) {
    int c = job.next_chunk.fetch_add(1, std::memory_order_relaxed);
    if (c >= job.num_chunks) return;
    int end = std::min(job.n, (c + 1) * job.chunk);
    for (int i = c * job.chunk; i < end; ++i) {
      if (job.stop != nullptr && job.stop->load(std::memory_order_relaxed)) return;
      job.fn.call(job.fn.obj, i);
    }
  }
}

void Parallelizer::Run(int n, PieceFn fn, const std::atomic<bool>* stop) {
  if (n <= 0) return;
  Job job;
  job.fn = fn;
  job.n = n;
  job.chunk = ChunkSize(n, parallelism_);
  job.num_chunks = (n + job.chunk - 1) / job.chunk;
  job.stop = stop;
  if (threads_.empty() || job.num_chunks == 1) {
    RunChunks(job);
    return;
  }
  MutexLock call(call_mu_);
  {
    MutexLock l(mu_);
    job_ = &job;
    ++generation_;
  }
  work_cv_.notify_all();
  RunChunks(job);
  // Every chunk is claimed now; wait for the workers still running one. A worker that
  // wakes after job_ is cleared finds nothing and sleeps again, so `job` may die here.
  MutexLock l(mu_);
  job_ = nullptr;
  while (active_ != 0) done_cv_.wait(l);
}

void Parallelizer::WorkerLoop() {
  uint64_t seen = 0;
  MutexLock l(mu_);
  while (true) {
    while (!shutdown_ && (job_ == nullptr || generation_ == seen)) work_cv_.wait(l);
    if (shutdown_) return;
    seen = generation_;
    Job* job = job_;
    ++active_;
    l.unlock();
    RunChunks(*job);
    l.lock();
    if (--active_ == 0) done_cv_.notify_all();
  }
}

}  // namespace ksched::framework::runtime
