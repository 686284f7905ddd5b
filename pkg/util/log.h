// Logging in klog's text format:
//   I1122 18:40:56.123456   12345 scheduler.cc:120] "Successfully bound pod" pod="ns/p"
// Severity: KLOG(INFO|WARNING|ERROR); verbosity: KLOG_V(n) is emitted when -v >= n.
#pragma once

#include <atomic>
#include <sstream>
#include <string_view>

namespace ksched::log {

enum class Severity { kInfo, kWarning, kError, kFatal };

// -v: messages at KLOG_V(n) are printed when n <= Verbosity().
void SetVerbosity(int v);
int Verbosity();

class Message {
 public:
  Message(Severity severity, const char* file, int line);
  ~Message();  // writes the line atomically to stderr; kFatal aborts
  Message(const Message&) = delete;
  Message& operator=(const Message&) = delete;
  std::ostream& stream() { return os_; }

 private:
  Severity severity_;
  std::ostringstream os_;
};

// Swallows the stream when the verbosity check fails.
struct Voidify {
  void operator&(std::ostream&) {}
};

}  // namespace ksched::log

#define KSCHED_LOG_SEV_INFO ::ksched::log::Severity::kInfo
#define KSCHED_LOG_SEV_WARNING ::ksched::log::Severity::kWarning
#define KSCHED_LOG_SEV_ERROR ::ksched::log::Severity::kError
#define KSCHED_LOG_SEV_FATAL ::ksched::log::Severity::kFatal

#define KLOG(sev) ::ksched::log::Message(KSCHED_LOG_SEV_##sev, __FILE__, __LINE__).stream()
#define KLOG_V(n)                                 \
  !(::ksched::log::Verbosity() >= (n))            \
      ? (void)0                                   \
      : ::ksched::log::Voidify() & ::ksched::log::Message(KSCHED_LOG_SEV_INFO, __FILE__, __LINE__).stream()
