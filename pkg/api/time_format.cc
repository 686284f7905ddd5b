#include "pkg/api/time_format.h"

#include <cstdio>
#include <ctime>

namespace ksched::api {
namespace {

std::string Format(std::chrono::system_clock::time_point t, bool micros) {
  using namespace std::chrono;
  auto secs = floor<seconds>(t);
  std::time_t tt = system_clock::to_time_t(secs);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[64];
  size_t n = std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
  if (micros) {
    auto us = duration_cast<microseconds>(t - secs).count();
    std::snprintf(buf + n, sizeof(buf) - n, ".%06lldZ", static_cast<long long>(us));
  } else {
    std::snprintf(buf + n, sizeof(buf) - n, "Z");
  }
  return buf;
}

}  // namespace

std::string FormatMicroTime(std::chrono::system_clock::time_point t) { return Format(t, true); }
std::string FormatTime(std::chrono::system_clock::time_point t) { return Format(t, false); }

}  // namespace ksched::api
