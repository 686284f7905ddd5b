// Parallelizer: a fixed pool of worker threads for the per-node work of one scheduling
// cycle (Filter, Score), like upstream's parallelize.Until. The pool is created once per
// scheduler, so a cycle pays for no thread creation and no allocation.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "pkg/util/mutex.h"
#include "pkg/util/thread_annotations.h"

namespace ksched::framework::runtime {

class Parallelizer {
 public:
  // `parallelism` pieces run at once: parallelism - 1 pool threads plus the caller.
  explicit Parallelizer(int parallelism = 16);
  ~Parallelizer();
  Parallelizer(const Parallelizer&) = delete;
  Parallelizer& operator=(const Parallelizer&) = delete;

  int parallelism() const { return parallelism_; }

  // Calls fn(i) for every i in [0, n), spread over the pool in chunks of
  // ChunkSize(n), and returns when all calls have returned. Once *stop is true no
  // further piece starts (pieces already running finish). fn must not call Until on the
  // same Parallelizer. Calls from several threads are serialized.
  template <typename Fn>
  void Until(int n, Fn&& fn, const std::atomic<bool>* stop = nullptr) {
    using F = std::remove_reference_t<Fn>;
    Run(n, PieceFn{&fn, [](void* f, int i) { (*static_cast<F*>(f))(i); }}, stop);
  }

  // Upstream's chunkSizeFor: max(1, min(sqrt(n), n/parallelism + 1)); chunks amortize
  // the shared counter while keeping the load balanced.
  static int ChunkSize(int n, int parallelism);

 private:
  // A borrowed callable without std::function's allocation.
  struct PieceFn {
    void* obj;
    void (*call)(void*, int);
  };
  struct Job {
    PieceFn fn;
    int n = 0;
    int chunk = 1;
    int num_chunks = 0;
    const std::atomic<bool>* stop = nullptr;
    std::atomic<int> next_chunk{0};
  };

  void Run(int n, PieceFn fn, const std::atomic<bool>* stop);
  static void RunChunks(Job& job);
  void WorkerLoop();

  const int parallelism_;
  Mutex call_mu_;  // one Until at a time
  Mutex mu_;
  std::condition_variable_any work_cv_;  // workers wait for a job
  std::condition_variable_any done_cv_;  // the caller waits for workers to leave
  Job* job_ GUARDED_BY(mu_) = nullptr;
  uint64_t generation_ GUARDED_BY(mu_) = 0;
  int active_ GUARDED_BY(mu_) = 0;  // workers inside job_
  bool shutdown_ GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace ksched::framework::runtime
