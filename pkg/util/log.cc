#include "pkg/util/log.h"

#include "pkg/util/json_string.h"

#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <utility>
#include <vector>

namespace ksched::log {
namespace {
std::atomic<int> g_verbosity{0};
std::atomic<bool> g_json{false};


bool IsKeyChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'; }

// klog's structured tail: ` key="value" key=value ...` (quoted values with \" escapes).
// Parses the pairs from `at` to the end; false if the tail is not entirely such pairs.
bool ParsePairs(std::string_view text, size_t at, std::vector<std::pair<std::string, std::string>>& out) {
  while (at < text.size()) {
    if (text[at] != ' ') return false;
    ++at;
    size_t key_start = at;
    while (at < text.size() && IsKeyChar(text[at])) ++at;
    if (at == key_start || at >= text.size() || text[at] != '=') return false;
    std::string key(text.substr(key_start, at - key_start));
    ++at;
    std::string value;
    if (at < text.size() && text[at] == '"') {
      ++at;
      bool closed = false;
      while (at < text.size()) {
        char c = text[at++];
        if (c == '\\' && at < text.size()) {
          value += text[at++];
        } else if (c == '"') {
          closed = true;
          break;
        } else {
          value += c;
        }
      }
      if (!closed) return false;
    } else {
      size_t v_start = at;
      while (at < text.size() && text[at] != ' ') ++at;
      value = std::string(text.substr(v_start, at - v_start));
    }
    out.emplace_back(std::move(key), std::move(value));
  }
  return true;
}

// Set once at start-up, before any other thread logs.
std::vector<std::pair<std::string, int>>* g_vmodule = nullptr;
std::atomic<bool> g_has_vmodule{false};

bool GlobMatch(std::string_view pattern, std::string_view name) {
  if (pattern.empty()) return name.empty();
  if (pattern[0] == '*') {
    for (size_t skip = 0; skip <= name.size(); ++skip)
      if (GlobMatch(pattern.substr(1), name.substr(skip))) return true;
    return false;
  }
  if (name.empty()) return false;
  if (pattern[0] != '?' && pattern[0] != name[0]) return false;
  return GlobMatch(pattern.substr(1), name.substr(1));
}

}  // namespace

void SetVmodule(std::vector<std::pair<std::string, int>> patterns) {
  // Owned here, so a second call (tests) frees the first list rather than leaking it.
  static std::unique_ptr<std::vector<std::pair<std::string, int>>> owner;
  owner = std::make_unique<std::vector<std::pair<std::string, int>>>(std::move(patterns));
  g_vmodule = owner.get();
  g_has_vmodule.store(!g_vmodule->empty(), std::memory_order_release);
}

bool VEnabled(int v, const char* file) {
  if (!g_has_vmodule.load(std::memory_order_acquire)) return Verbosity() >= v;
  std::string_view name(file);
  if (size_t slash = name.rfind('/'); slash != std::string_view::npos) name.remove_prefix(slash + 1);
  if (size_t dot = name.find('.'); dot != std::string_view::npos) name = name.substr(0, dot);
  for (const auto& [pattern, level] : *g_vmodule) {
    if (GlobMatch(pattern, name)) return level >= v;
  }
  return Verbosity() >= v;
}

void SetVerbosity(int v) { g_verbosity.store(v, std::memory_order_relaxed); }
int Verbosity() { return g_verbosity.load(std::memory_order_relaxed); }
void SetFormat(Format format) { g_json.store(format == Format::kJson, std::memory_order_relaxed); }

std::string FormatJsonLine(double ts_ms, std::string_view caller, int v, std::string_view text) {
  // The message proper, and the key/value pairs of its tail when it has one.
  std::string_view msg = text;
  std::vector<std::pair<std::string, std::string>> pairs;
  for (size_t at = text.find(' '); at != std::string_view::npos; at = text.find(' ', at + 1)) {
    std::vector<std::pair<std::string, std::string>> tail;
    if (ParsePairs(text, at, tail) && !tail.empty()) {
      msg = text.substr(0, at);
      pairs = std::move(tail);
      break;
    }
  }
  while (!msg.empty() && (msg.back() == ',' || msg.back() == ' ' || msg.back() == ':')) msg.remove_suffix(1);
  if (msg.size() >= 2 && msg.front() == '"' && msg.back() == '"') msg = msg.substr(1, msg.size() - 2);
  std::string out = "{\"ts\":";
  char ts[48];
  std::snprintf(ts, sizeof(ts), "%.3f", ts_ms);
  out += ts;
  out += ",\"caller\":";
  AppendJsonQuoted(out, caller);
  out += ",\"msg\":";
  AppendJsonQuoted(out, msg);
  if (v >= 0) out += ",\"v\":" + std::to_string(v);
  for (const auto& [k, val] : pairs) {
    if (k == "ts" || k == "caller" || k == "msg" || k == "v") continue;
    out += ',';
    AppendJsonQuoted(out, k);
    out += ':';
    AppendJsonQuoted(out, val);
  }
  out += '}';
  return out;
}

Message::Message(Severity severity, const char* file, int line, int v)
    : severity_(severity), v_(v), json_(g_json.load(std::memory_order_relaxed)) {
  static constexpr char kLetters[] = {'I', 'W', 'E', 'F'};
  auto now = std::chrono::system_clock::now();
  if (json_) {
    const char* base = std::strrchr(file, '/');
    caller_ = std::string(base ? base + 1 : file) + ":" + std::to_string(line);
    ts_ms_ = std::chrono::duration<double, std::milli>(now.time_since_epoch()).count();
    return;
  }
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
  std::string s;
  if (json_) {
    s = FormatJsonLine(ts_ms_, caller_, severity_ == Severity::kInfo ? v_ : -1, os_.str());
    s += '\n';
  } else {
    os_ << '\n';
    s = os_.str();
  }
  // One write per line keeps lines from different threads whole.
  [[maybe_unused]] auto n = ::write(STDERR_FILENO, s.data(), s.size());
  if (severity_ == Severity::kFatal) std::abort();
}

}  // namespace ksched::log
