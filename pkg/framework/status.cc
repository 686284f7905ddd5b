#include "pkg/framework/status.h"

#include <memory>
#include <unordered_map>

#include "pkg/util/mutex.h"
#include "pkg/util/strings.h"

namespace ksched::framework {
namespace {

// Texts kept for the life of the process, one copy each (never freed: a handful of
// reasons and plugin names). Each thread remembers the last few it was asked for by the
// text's address, and checks the text itself before using one, so the common case (a
// constant asked for again) takes no lock and a reused buffer never gets a stale copy.
template <typename T, T (*Make)(std::string_view), std::string_view (*TextOf)(const T&)>
const T& Shared(std::string_view text) {
  struct Recent {
    const char* data = nullptr;
    const T* value = nullptr;
  };
  constexpr size_t kRecent = 16;
  thread_local Recent recent[kRecent];
  thread_local size_t next = 0;
  for (const Recent& r : recent) {
    if (r.data == text.data() && r.value != nullptr && TextOf(*r.value) == text) return *r.value;
  }
  static Mutex mu;
  static auto* table = new std::unordered_map<std::string, std::unique_ptr<const T>, StringViewHash, std::equal_to<>>;
  const T* value;
  {
    MutexLock lock(mu);
    auto it = table->find(text);
    if (it == table->end()) it = table->emplace(std::string(text), std::make_unique<const T>(Make(text))).first;
    value = it->second.get();
  }
  recent[next++ % kRecent] = {text.data(), value};
  return *value;
}

std::vector<std::string> MakeReasons(std::string_view text) { return {std::string(text)}; }
std::string_view ReasonsText(const std::vector<std::string>& reasons) { return reasons.front(); }
std::string MakeName(std::string_view text) { return std::string(text); }
std::string_view NameText(const std::string& name) { return name; }

// Severity used by MergeStatuses; higher wins.
int Precedence(Code code) {
  switch (code) {
    case Code::kError:
      return 4;
    case Code::kUnschedulableAndUnresolvable:
      return 3;
    case Code::kPending:
      return 2;
    case Code::kUnschedulable:
      return 1;
    default:
      return 0;
  }
}

}  // namespace

std::string_view CodeName(Code code) {
  switch (code) {
    case Code::kSuccess:
      return "Success";
    case Code::kError:
      return "Error";
    case Code::kUnschedulable:
      return "Unschedulable";
    case Code::kUnschedulableAndUnresolvable:
      return "UnschedulableAndUnresolvable";
    case Code::kWait:
      return "Wait";
    case Code::kSkip:
      return "Skip";
    case Code::kPending:
      return "Pending";
  }
  return "Unknown";
}

const std::vector<std::string>& Status::SharedReasons(std::string_view reason) {
  return Shared<std::vector<std::string>, MakeReasons, ReasonsText>(reason);
}

const std::string& Status::SharedName(std::string_view name) { return Shared<std::string, MakeName, NameText>(name); }

const std::vector<std::string>& Status::NoReasons() {
  static const std::vector<std::string> kNone;
  return kNone;
}

const std::string& Status::NoPlugin() {
  static const std::string kNone;
  return kNone;
}

Status Status::FromError(const ksched::Status& error) {
  return Status(Code::kError, error.ok() ? std::string("unknown error") : error.ToString());
}

std::string Status::Message() const {
  std::string out;
  const std::vector<std::string>& reasons = this->reasons();
  for (size_t i = 0; i < reasons.size(); ++i) {
    if (i > 0) out += ", ";
    out += reasons[i];
  }
  return out;
}

ksched::Status Status::AsStatus() const {
  switch (code_) {
    case Code::kSuccess:
    case Code::kSkip:
      return ksched::Status::OK();
    case Code::kError:
      return ksched::Status(StatusCode::kInternal, ToString());
    default:
      return ksched::Status(StatusCode::kFailedPrecondition, ToString());
  }
}

std::string Status::ToString() const {
  std::string out(CodeName(code_));
  if (!reasons().empty()) {
    out += ": ";
    out += Message();
  }
  return out;
}

Status MergeStatuses(std::span<const Status> statuses) {
  Status merged;
  int best = -1;
  for (const Status& s : statuses) {
    int p = Precedence(s.code());
    if (p > best && !s.IsSuccess()) {
      best = p;
      merged = Status(s.code(), merged.reasons()).WithPlugin(s.plugin());
    }
    for (const std::string& r : s.reasons()) merged.AppendReason(r);
  }
  return merged;
}

}  // namespace ksched::framework
