// Per-pod exponential backoff: initial * 2^(attempts-1), capped at max.
#pragma once

#include "pkg/util/clock.h"

namespace ksched::queue {

// Doubling stops at `max` before it can overflow; attempts <= 1 gives `initial`.
inline Clock::duration BackoffDuration(int attempts, Clock::duration initial, Clock::duration max) {
  if (initial >= max) return max;
  Clock::duration d = initial;
  for (int i = 1; i < attempts; ++i) {
    if (d > max - d) return max;  // d + d would pass max (or overflow)
    d += d;
  }
  return d;
}

}  // namespace ksched::queue
