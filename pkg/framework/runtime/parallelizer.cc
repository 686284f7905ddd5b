#include "pkg/framework/runtime/parallelizer.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cmath>

#include "pkg/util/thread_name.h"

namespace ksched::framework::runtime {
namespace {

void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// The futex word is the atomic's own storage (std::atomic<uint32_t> is lock-free and
// has the size and alignment of uint32_t).
uint32_t* FutexWord(std::atomic<uint32_t>& a) { return reinterpret_cast<uint32_t*>(&a); }

void FutexWait(std::atomic<uint32_t>& word, uint32_t expected) {
  syscall(SYS_futex, FutexWord(word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}

void FutexWakeAll(std::atomic<uint32_t>& word) {
  syscall(SYS_futex, FutexWord(word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

}  // namespace

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t) && std::atomic<uint32_t>::is_always_lock_free);

Parallelizer::Parallelizer(int parallelism, std::chrono::microseconds wake_after)
    : parallelism_(std::max(1, parallelism)), wake_after_(wake_after) {
  threads_.reserve(parallelism_ - 1);
  for (int i = 1; i < parallelism_; ++i) threads_.emplace_back([this] {
    SetThreadName("sched-worker");
    WorkerLoop();
  });
}

Parallelizer::~Parallelizer() {
  shutdown_.store(true);
  generation_.fetch_add(1);
  FutexWakeAll(generation_);
  for (std::thread& t : threads_) t.join();
}

int Parallelizer::ChunkSize(int n, int parallelism) {
  int s = static_cast<int>(std::sqrt(static_cast<double>(n)));
  int r = n / std::max(1, parallelism) + 1;
  return std::max(1, std::min(s, r));
}

void Parallelizer::RunChunks(Job& job, bool caller) {
  // Only the caller wakes sleeping workers, once it has run the job alone for
  // wake_after_ (at once when that is zero).
  bool wake_pending = caller && sleepers_.load() > 0;
  const auto wake_at = wake_pending ? std::chrono::steady_clock::now() + wake_after_
                                    : std::chrono::steady_clock::time_point();
  auto maybe_wake = [&] {
    if (!wake_pending || std::chrono::steady_clock::now() < wake_at) return;
    FutexWakeAll(generation_);
    wake_pending = false;
  };
  maybe_wake();
  // Stop is read before the claim, so every claimed chunk runs: the chunks that ran
  // are the claimed ones, a prefix.
  while (job.stop == nullptr || !job.stop->load(std::memory_order_relaxed)) {
    int c = job.next_chunk.fetch_add(1, std::memory_order_relaxed);
    if (c >= job.num_chunks) return;
    job.fn.call(job.fn.obj, c * job.chunk, std::min(job.n, (c + 1) * job.chunk));
    maybe_wake();
  }
}

void Parallelizer::Run(int n, ChunkFn fn, const std::atomic<bool>* stop) {
  if (n <= 0) return;
  Job job;
  job.fn = fn;
  job.n = n;
  job.chunk = ChunkSize(n, parallelism_);
  job.num_chunks = (n + job.chunk - 1) / job.chunk;
  job.stop = stop;
  if (threads_.empty() || job.num_chunks == 1) {
    RunChunks(job, /*caller=*/false);
    return;
  }
  MutexLock call(call_mu_);
  parked_.store(false, std::memory_order_relaxed);
  job_.store(&job);
  // Workers still spinning see this and join; a worker about to sleep finds the futex
  // word moved and joins too. Those asleep stay so unless the job outlasts kWakeAfter.
  generation_.fetch_add(1);
  RunChunks(job, /*caller=*/true);
  // Every chunk is claimed now. Workers still inside one finish it (at most a chunk of
  // pieces); a worker that counts itself in after this store finds no job.
  job_.store(nullptr);
  for (int spins = 0; active_.load() != 0; ++spins) {
    if (spins < 4096) {
      CpuRelax();
    } else {
      std::this_thread::yield();  // the worker may have been descheduled mid-chunk
    }
  }
}

void Parallelizer::AwaitGeneration(uint32_t seen) {
  const auto spin_until = std::chrono::steady_clock::now() + kSpin;
  for (int spins = 0; generation_.load(std::memory_order_acquire) == seen; ++spins) {
    if ((spins & 63) == 63 && (parked_.load(std::memory_order_relaxed) || std::chrono::steady_clock::now() >= spin_until))
      break;
    CpuRelax();
  }
  // Announce the sleep before checking the word: Run bumps generation_ before it reads
  // sleepers_, and FUTEX_WAIT returns at once if the word moved, so no wake-up is lost.
  while (generation_.load() == seen) {
    sleepers_.fetch_add(1);
    sleeps_.fetch_add(1, std::memory_order_relaxed);
    FutexWait(generation_, seen);
    sleepers_.fetch_sub(1);
  }
}

void Parallelizer::WorkerLoop() {
  uint32_t seen = 0;
  while (true) {
    AwaitGeneration(seen);
    seen = generation_.load();
    if (shutdown_.load()) return;
    active_.fetch_add(1);
    if (Job* job = job_.load(); job != nullptr) RunChunks(*job, /*caller=*/false);
    active_.fetch_sub(1);
  }
}

}  // namespace ksched::framework::runtime
