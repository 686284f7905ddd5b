#include "pkg/util/log.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace ksched::log {
namespace {
std::atomic<int> g_verbosity{0};
}

void SetVerbosity(int v) { g_verbosity.store(v, std::memory_order_relaxed); }
int Verbosity() { return g_verbosity.load(std::memory_order_relaxed); }

Message::Message(Severity severity, const char* file, int line) : severity_(severity) {
  static constexpr char kLetters[] = {'I', 'W', 'E', 'F'};
  auto now = std::chrono::system_clock::now();
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  auto usec = std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count() % 1000000;
  std::tm tm{};
  localtime_r(&t, &tm);
  const char* base = std::strrchr(file, '/');
  base = base ? base + 1 : file;
  char head[96];
  std::snprintf(head, sizeof(head), "%c%02d%02d %02d:%02d:%02d.%06lld %7d %s:%d] ",
                kLetters[static_cast<int>(severity)], tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                tm.tm_sec, static_cast<long long>(usec), static_cast<int>(::getpid()), base, line);
  os_ << head;
}

Message::~Message() {
  os_ << '\n';
  std::string s = os_.str();
  // One write per line keeps lines from different threads whole.
  [[maybe_unused]] auto n = ::write(STDERR_FILENO, s.data(), s.size());
  if (severity_ == Severity::kFatal) std::abort();
}

}  // namespace ksched::log
