// Logging in klog's text format:
//   I1122 18:40:56.123456   12345 scheduler.cc:120] "Successfully bound pod" pod="ns/p"
// Severity: KLOG(INFO|WARNING|ERROR); verbosity: KLOG_V(n) is emitted when -v >= n.
#pragma once

#include <atomic>
#include <sstream>
#include <string>
#include <utility>
#include <vector>
#include <string_view>

namespace ksched::log {

enum class Severity { kInfo, kWarning, kError, kFatal };

// -v: messages at KLOG_V(n) are printed when n <= Verbosity().
void SetVerbosity(int v);
int Verbosity();

// --vmodule: per-file verbosity, pattern=N by a file's base name without extension, with
// * and ? as wildcards; the first matching pattern decides, else -v.
void SetVmodule(std::vector<std::pair<std::string, int>> patterns);
// Whether KLOG_V(v) in `file` is printed.
bool VEnabled(int v, const char* file);

// --logging-format: klog's text lines (the default), or component-base's JSON logger:
// one object per line, {"ts":<ms since the epoch>,"caller":"file.cc:12","msg":"...",
// "v":0,<key>:<value>...}, "v" on info lines only. A message whose text ends in
// key="value" pairs (klog's structured style) has them as fields of their own.
enum class Format { kText, kJson };
void SetFormat(Format format);

// The JSON object for one line (without the newline); `v` < 0 for warnings and errors.
std::string FormatJsonLine(double ts_ms, std::string_view caller, int v, std::string_view text);

class Message {
 public:
  Message(Severity severity, const char* file, int line, int v = 0);
  ~Message();  // writes the line atomically to stderr; kFatal aborts
  Message(const Message&) = delete;
  Message& operator=(const Message&) = delete;
  std::ostream& stream() { return os_; }

 private:
  Severity severity_;
  int v_;
  bool json_;
  double ts_ms_ = 0;
  std::string caller_;
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
  !(::ksched::log::VEnabled((n), __FILE__))       \
      ? (void)0                                   \
      : ::ksched::log::Voidify() & ::ksched::log::Message(KSCHED_LOG_SEV_INFO, __FILE__, __LINE__, (n)).stream()
