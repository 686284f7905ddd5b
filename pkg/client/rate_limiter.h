// A token bucket (client-go's flowcontrol.NewTokenBucketRateLimiter): `qps` tokens a
// second, at most `burst` saved up. Not thread-safe; the client's I/O thread owns it.
#pragma once

#include <algorithm>
#include <chrono>

#include "pkg/util/clock.h"

namespace ksched::client {

class TokenBucket {
 public:
  TokenBucket(double qps, int burst, Clock::time_point now)
      : qps_(qps), burst_(std::max(1, burst)), tokens_(burst_), last_(now) {}

  // Takes a token if one is available now; otherwise returns how long until one is.
  // A non-positive qps disables limiting.
  Clock::duration TryTake(Clock::time_point now) {
    if (qps_ <= 0) return Clock::duration::zero();
    Refill(now);
    if (tokens_ >= 1) {
      tokens_ -= 1;
      return Clock::duration::zero();
    }
    auto wait = std::chrono::duration<double>((1 - tokens_) / qps_);
    return std::max(std::chrono::duration_cast<Clock::duration>(wait), Clock::duration(1));
  }

 private:
  void Refill(Clock::time_point now) {
    if (now <= last_) return;
    tokens_ = std::min<double>(burst_, tokens_ + std::chrono::duration<double>(now - last_).count() * qps_);
    last_ = now;
  }

  double qps_;
  int burst_;
  double tokens_;
  Clock::time_point last_;
};

}  // namespace ksched::client
