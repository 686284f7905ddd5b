// framework::Status: the result of running one plugin (upstream framework.Status).
// Distinct from ksched::Status, which reports errors between modules: a plugin's
// "Unschedulable" is a normal scheduling outcome, not an error.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pkg/util/status.h"

namespace ksched::framework {

enum class Code : uint8_t {
  kSuccess,
  kError,          // internal error: the pod is retried after backoff, not on an event
  kUnschedulable,  // may become schedulable (e.g. after preemption or a cluster event)
  kUnschedulableAndUnresolvable,  // preemption cannot help
  kWait,     // Permit: wait for approval
  kSkip,     // the plugin does not apply to this pod (PreFilter/PreScore)
  kPending,  // waiting for something outside the scheduler; retried as soon as it changes
};

// "Success", "Error", "Unschedulable", ... (the `status` label of framework metrics).
std::string_view CodeName(Code code);

class Status {
 public:
  Status() = default;  // Success
  explicit Status(Code code, std::vector<std::string> reasons = {})
      : code_(code), reasons_(std::move(reasons)) {}
  Status(Code code, std::string reason) : code_(code), reasons_{std::move(reason)} {}

  // A rejection whose reason is a constant (a plugin's kErrReason...): the Status refers
  // to one copy of the text kept for the life of the process instead of allocating its
  // own, as a Filter pass rejects thousands of nodes per cycle.
  static Status Constant(Code code, std::string_view reason) {
    Status s(code);
    s.shared_reasons_ = &SharedReasons(reason);
    return s;
  }

  static Status Success() { return Status(); }
  static Status Error(std::string message) { return Status(Code::kError, std::move(message)); }
  // An Error carrying a module error's text, e.g. a failed API call inside a plugin.
  static Status FromError(const ksched::Status& error);

  Code code() const { return code_; }
  const std::vector<std::string>& reasons() const { return shared_reasons_ != nullptr ? *shared_reasons_ : reasons_; }
  // The reasons joined with ", " (upstream Status.Message()).
  std::string Message() const;
  void AppendReason(std::string reason) {
    if (shared_reasons_ != nullptr) reasons_ = *std::exchange(shared_reasons_, nullptr);
    reasons_.push_back(std::move(reason));
  }

  // The plugin that produced a non-success status; set by the framework runtime.
  const std::string& plugin() const { return shared_plugin_ != nullptr ? *shared_plugin_ : plugin_; }
  Status& WithPlugin(std::string plugin) & {
    plugin_ = std::move(plugin);
    shared_plugin_ = nullptr;
    return *this;
  }
  Status&& WithPlugin(std::string plugin) && { return std::move(WithPlugin(std::move(plugin))); }
  // The same for a plugin's name (Plugin::Name()), kept once for the life of the process
  // as Constant's reasons are: no allocation per rejected node.
  Status&& WithPluginName(std::string_view name) && {
    plugin_.clear();
    shared_plugin_ = &SharedName(name);
    return std::move(*this);
  }

  bool IsSuccess() const { return code_ == Code::kSuccess; }
  bool IsWait() const { return code_ == Code::kWait; }
  bool IsSkip() const { return code_ == Code::kSkip; }
  // The pod was rejected: Unschedulable, UnschedulableAndUnresolvable or Pending. The
  // failure handler then records `plugin()` so that only relevant events requeue the pod.
  bool IsRejected() const {
    return code_ == Code::kUnschedulable || code_ == Code::kUnschedulableAndUnresolvable ||
           code_ == Code::kPending;
  }

  // For module boundaries: OK on Success/Skip, kInternal for Error, kFailedPrecondition
  // for the other codes; the message is ToString().
  ksched::Status AsStatus() const;
  // "Unschedulable: reason1, reason2" ("Success" when successful).
  std::string ToString() const;

  bool operator==(const Status& other) const { return code_ == other.code_ && reasons() == other.reasons(); }

 private:
  // The process-wide copies behind Constant and WithPluginName, found by the text.
  static const std::vector<std::string>& SharedReasons(std::string_view reason);
  static const std::string& SharedName(std::string_view name);

  Code code_ = Code::kSuccess;
  std::vector<std::string> reasons_;
  const std::vector<std::string>* shared_reasons_ = nullptr;  // instead of reasons_
  std::string plugin_;
  const std::string* shared_plugin_ = nullptr;  // instead of plugin_
};

// Merges per-plugin statuses (given in plugin order) into one. The code is the most
// severe one present (Error > UnschedulableAndUnresolvable > Pending > Unschedulable >
// the rest); plugin() is the first plugin with that code, so among equally severe
// rejections the first rejecting plugin wins; reasons are concatenated in order.
// An empty input merges to Success.
Status MergeStatuses(std::span<const Status> statuses);

}  // namespace ksched::framework
