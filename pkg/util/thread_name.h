// Names the calling thread (Linux: at most 15 characters are kept), so `top -H`, perf
// and debuggers show which of ksched's threads is which.
#pragma once

#include <pthread.h>

#include <string>
#include <string_view>

namespace ksched {

inline void SetThreadName(std::string_view name) {
  std::string n(name.substr(0, 15));
  pthread_setname_np(pthread_self(), n.c_str());
}

}  // namespace ksched
