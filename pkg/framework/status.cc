#include "pkg/framework/status.h"

namespace ksched::framework {
namespace {

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

Status Status::FromError(const ksched::Status& error) {
  return Status(Code::kError, error.ok() ? std::string("unknown error") : error.ToString());
}

std::string Status::Message() const {
  std::string out;
  for (size_t i = 0; i < reasons_.size(); ++i) {
    if (i > 0) out += ", ";
    out += reasons_[i];
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
  if (!reasons_.empty()) {
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
