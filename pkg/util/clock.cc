#include "pkg/util/clock.h"

namespace ksched {
namespace {

class SystemClock final : public Clock {
 public:
  time_point Now() const override { return std::chrono::steady_clock::now(); }
  wall_time WallNow() const override { return std::chrono::system_clock::now(); }
  bool SleepUntil(time_point deadline, std::stop_token stop) override {
    Mutex mu;  // guards nothing: the wait is only for the deadline or the stop
    std::condition_variable_any cv;
    MutexLock lock(mu);
    cv.wait_until(lock, stop, deadline, [] { return false; });
    return !stop.stop_requested();
  }
};

}  // namespace

std::stop_token ClockWakeup::Arm() {
  MutexLock lock(mu_);
  if (source_.stop_requested()) source_ = std::stop_source();
  return source_.get_token();
}

void ClockWakeup::Notify() {
  std::stop_source armed;
  {
    MutexLock lock(mu_);
    armed = source_;
  }
  // Outside the lock: request_stop runs the sleeper's stop callback (a notify of the
  // clock's condition variable) on this thread.
  armed.request_stop();
}

Clock& RealClock() {
  static SystemClock clock;
  return clock;
}

FakeClock::FakeClock()
    : now_(std::chrono::steady_clock::time_point() + std::chrono::hours(24)),
      wall_origin_(std::chrono::sys_days(std::chrono::year(2026) / 1 / 1)),
      origin_(now_) {}

Clock::time_point FakeClock::Now() const {
  MutexLock lock(mu_);
  return now_;
}

Clock::wall_time FakeClock::WallNow() const {
  MutexLock lock(mu_);
  return wall_origin_ + std::chrono::duration_cast<std::chrono::system_clock::duration>(now_ - origin_);
}

bool FakeClock::SleepUntil(time_point deadline, std::stop_token stop) {
  MutexLock lock(mu_);
  ++sleepers_;
  cv_.notify_all();
  bool reached = cv_.wait(lock, stop, [&]() REQUIRES(mu_) { return now_ >= deadline; });
  --sleepers_;
  return reached;
}

void FakeClock::Advance(duration d) {
  MutexLock lock(mu_);
  now_ += d;
  cv_.notify_all();
}

void FakeClock::SetTime(time_point t) {
  MutexLock lock(mu_);
  now_ = t;
  cv_.notify_all();
}

int FakeClock::Sleepers() const {
  MutexLock lock(mu_);
  return sleepers_;
}

bool FakeClock::WaitForSleepers(int n, std::chrono::milliseconds timeout) const {
  MutexLock lock(mu_);
  return cv_.wait_for(lock, timeout, [&]() REQUIRES(mu_) { return sleepers_ >= n; });
}

}  // namespace ksched
