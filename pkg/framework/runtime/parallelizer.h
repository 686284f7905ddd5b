// Parallelizer: a fixed pool of worker threads for the per-node work of one scheduling
// cycle (Filter, Score), like upstream's parallelize.Until
// (pkg/scheduler/framework/parallelize/parallelism.go). The pool is created once per
// scheduler, so a cycle pays for no thread creation and no allocation.
//
// A cycle hands its workers two or three jobs a few microseconds apart (Filter, then
// PreScore/Score). Waking a sleeping thread through the kernel costs about as much as
// filtering a few hundred nodes, so a worker that finished a job spins for a short
// while (kSpin) before it sleeps on a futex, unless the caller said none is coming
// (Park), and the caller makes the wake-up syscall only when a worker is asleep.
//
// Nor does every job pay for that syscall: a worker that is awake joins a job at once,
// but sleeping workers are woken only once the caller has run the job alone for
// kWakeAfter. A short job (a plain pod's Filter or Score pass over a few hundred nodes)
// then costs no wake-up, no context switch and no spin afterwards, which on a machine
// whose cores are busy with other work (the API server beside the scheduler) saved
// about 15% of the scheduler's CPU; a long one (preemption's dry runs, pod affinity over
// thousands of nodes) still spreads over every worker.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "pkg/util/mutex.h"

namespace ksched::framework::runtime {

class Parallelizer {
 public:
  // How long an idle worker waits for the next job before it sleeps.
  static constexpr std::chrono::microseconds kSpin{30};
  // How long the caller runs a job alone before it wakes sleeping workers.
  static constexpr std::chrono::microseconds kWakeAfter{50};

  // `parallelism` pieces run at once: parallelism - 1 pool threads plus the caller.
  // `wake_after` replaces kWakeAfter (zero: wake sleeping workers with every job).
  explicit Parallelizer(int parallelism = 16, std::chrono::microseconds wake_after = kWakeAfter);
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
    auto pieces = [&fn, stop](int begin, int end) {
      for (int i = begin; i < end; ++i) {
        if (stop != nullptr && stop->load(std::memory_order_relaxed)) return;
        fn(i);
      }
    };
    UntilChunks(n, pieces, stop);
  }

  // As Until, but hands out whole chunks: fn(begin, end) per chunk, and *stop is read
  // only before a chunk is claimed. The chunks that ran are always a prefix
  // [0, k * ChunkSize(n)) of the range, each run in full, so a caller can cut the result
  // in index order (what a sequential loop would have produced) and keep per-chunk
  // tallies local instead of sharing a counter per piece.
  template <typename Fn>
  void UntilChunks(int n, Fn&& fn, const std::atomic<bool>* stop = nullptr) {
    using F = std::remove_reference_t<Fn>;
    Run(n, ChunkFn{&fn, [](void* f, int begin, int end) { (*static_cast<F*>(f))(begin, end); }}, stop);
  }

  // The caller has no job coming soon (its scheduling cycle is over, and what follows
  // takes longer than kSpin): idle workers sleep at once instead of spinning it out.
  // The next Until wakes them. Call from the thread that calls Until.
  void Park() { parked_.store(true, std::memory_order_relaxed); }

  // Upstream's chunkSizeFor: max(1, min(sqrt(n), n/parallelism + 1)); chunks amortize
  // the shared counter while keeping the load balanced.
  static int ChunkSize(int n, int parallelism);

  // Times a worker went to sleep on the futex, and workers asleep now (for tests and
  // benchmarks).
  uint64_t sleeps() const { return sleeps_.load(std::memory_order_relaxed); }
  int sleeping() const { return sleepers_.load(std::memory_order_relaxed); }

 private:
  // A borrowed callable without std::function's allocation.
  struct ChunkFn {
    void* obj;
    void (*call)(void*, int, int);
  };
  struct Job {
    ChunkFn fn;
    int n = 0;
    int chunk = 1;
    int num_chunks = 0;
    const std::atomic<bool>* stop = nullptr;
    std::atomic<int> next_chunk{0};
  };

  void Run(int n, ChunkFn fn, const std::atomic<bool>* stop);
  // Runs chunks of `job` until none is left; the caller's call also wakes sleeping
  // workers once the job has outlasted wake_after_.
  void RunChunks(Job& job, bool caller);
  void WorkerLoop();
  // Returns once generation_ differs from `seen`: spins for kSpin, then sleeps.
  void AwaitGeneration(uint32_t seen);

  const int parallelism_;
  const std::chrono::microseconds wake_after_;
  Mutex call_mu_;  // one Until at a time
  // The job being run, or null. A worker counts itself in active_ before it reads
  // job_, and Run clears job_ and then waits for active_ to drain, so a worker never
  // touches a Job after its Run returned.
  std::atomic<Job*> job_{nullptr};
  std::atomic<uint32_t> generation_{0};  // bumped per job and at shutdown; the futex word
  std::atomic<int> active_{0};
  std::atomic<int> sleepers_{0};  // workers in (or about to enter) the futex wait
  std::atomic<bool> shutdown_{false};
  std::atomic<bool> parked_{false};  // see Park(); cleared by the next job
  std::atomic<uint64_t> sleeps_{0};
  std::vector<std::thread> threads_;
};

}  // namespace ksched::framework::runtime
