// Clock: the one seam for time. The queue, cache, backoff, leader election and
// reflectors take a Clock& and never read system time themselves, so tests step a
// FakeClock instead of sleeping.
#pragma once

#include <chrono>
#include <condition_variable>
#include <stop_token>

#include "pkg/util/mutex.h"
#include "pkg/util/thread_annotations.h"

namespace ksched {

class Clock {
 public:
  using duration = std::chrono::steady_clock::duration;
  using time_point = std::chrono::steady_clock::time_point;
  using wall_time = std::chrono::system_clock::time_point;

  virtual ~Clock() = default;

  // Monotonic time, for deadlines, backoff and durations.
  virtual time_point Now() const = 0;
  // Wall time, for timestamps written to the API (events, conditions, leases).
  virtual wall_time WallNow() const = 0;
  // Blocks until Now() >= deadline or a stop is requested on `stop`.
  // Returns false if it returned because of the stop request.
  virtual bool SleepUntil(time_point deadline, std::stop_token stop) = 0;

  bool SleepFor(duration d, std::stop_token stop) { return SleepUntil(Now() + d, std::move(stop)); }
};

// Ends a Clock::SleepUntil early from another thread, as notify does for a condition
// variable's wait: for a thread that waits for an event or a deadline on the injected
// clock, so a FakeClock's Advance() ends the wait and tests never wait on real time.
// The sleeper Arm()s before it checks what it waits for and then sleeps on the token it
// got, so a Notify() that comes after the check is never lost:
//
//   for (;;) {
//     std::stop_token woken = wakeup.Arm();
//     if (/* the event happened */) break;
//     clock.SleepUntil(deadline, woken);
//   }
//
// Thread-safe. (The stop_source counterpart of the condition variable that
// FakeClock::SleepUntil waits on; waiting_pods.cc uses one stop_source per wait alike.)
class ClockWakeup {
 public:
  // Begins a wait: from now on, Notify() ends the SleepUntil given the returned token.
  std::stop_token Arm() EXCLUDES(mu_);
  // Ends the armed wait, or makes the next SleepUntil on the armed token return at once.
  void Notify() EXCLUDES(mu_);

 private:
  Mutex mu_;
  std::stop_source source_ GUARDED_BY(mu_);  // one per wait: a stop cannot be undone
};

// The process-wide real clock.
Clock& RealClock();

// A clock that moves only when told. Advance() wakes every SleepUntil whose deadline
// has passed.
class FakeClock : public Clock {
 public:
  FakeClock();

  time_point Now() const override;
  wall_time WallNow() const override;
  bool SleepUntil(time_point deadline, std::stop_token stop) override;

  void Advance(duration d);
  void SetTime(time_point t);
  // Number of threads currently blocked in SleepUntil; lets a test wait until a
  // background loop is parked before it advances time.
  int Sleepers() const;
  // Blocks (on real time, bounded by `timeout`) until at least n threads are sleeping.
  bool WaitForSleepers(int n, std::chrono::milliseconds timeout = std::chrono::seconds(5)) const;

 private:
  mutable Mutex mu_;
  mutable std::condition_variable_any cv_;
  time_point now_ GUARDED_BY(mu_);
  wall_time wall_origin_;   // wall time at now_ == epoch of the fake
  time_point origin_;
  int sleepers_ GUARDED_BY(mu_) = 0;
};

}  // namespace ksched
