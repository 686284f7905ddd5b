// framework::Status: the result of running one plugin (upstream framework.Status).
// Distinct from ksched::Status, which reports errors between modules: a plugin's
// "Unschedulable" is a normal scheduling outcome, not an error.
#pragma once

#include <cstdint>
#include <memory>
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
  explicit Status(Code code, std::vector<std::string> reasons = {}) : code_(code) {
    if (!reasons.empty()) Own().reasons = std::move(reasons);
  }
  Status(Code code, std::string reason) : code_(code) { Own().reasons.push_back(std::move(reason)); }
  Status(const Status& other)
      : code_(other.code_),
        shared_reasons_(other.shared_reasons_),
        shared_plugin_(other.shared_plugin_),
        owned_(other.owned_ != nullptr ? std::make_unique<Owned>(*other.owned_) : nullptr) {}
  Status& operator=(const Status& other) {
    if (this != &other) *this = Status(other);
    return *this;
  }
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;

  // A rejection whose reason is a constant (a plugin's kErrReason...): the Status refers
  // to one copy of the text kept for the life of the process instead of allocating its
  // own, as a Filter pass rejects thousands of nodes per cycle.
  static Status Constant(Code code, std::string_view reason) {
    Status s(code);
    s.shared_reasons_ = &SharedReasons(reason);
    return s;
  }

  // The same for a reason that is a constant of namespace scope (the plugins'
  // kErrReason...): its shared copy is found once per call site instead of per call.
  template <const std::string_view& kReason>
  static Status Constant(Code code) {
    static const std::vector<std::string>* const reasons = &SharedReasons(kReason);
    Status s(code);
    s.shared_reasons_ = reasons;
    return s;
  }

  static Status Success() { return Status(); }
  static Status Error(std::string message) { return Status(Code::kError, std::move(message)); }
  // An Error carrying a module error's text, e.g. a failed API call inside a plugin.
  static Status FromError(const ksched::Status& error);

  Code code() const { return code_; }
  const std::vector<std::string>& reasons() const {
    if (shared_reasons_ != nullptr) return *shared_reasons_;
    return owned_ != nullptr ? owned_->reasons : NoReasons();
  }
  // The reasons joined with ", " (upstream Status.Message()).
  std::string Message() const;
  void AppendReason(std::string reason) {
    Owned& own = Own();
    if (shared_reasons_ != nullptr) own.reasons = *std::exchange(shared_reasons_, nullptr);
    own.reasons.push_back(std::move(reason));
  }

  // Why, in more words than the reason, for `ksched explain` only: not part of
  // Message() (so not of the FailedScheduling message, which counts reasons over nodes),
  // e.g. which request of a claim found too few devices on the node.
  const std::string& detail() const { return owned_ != nullptr ? owned_->detail : NoPlugin(); }
  Status&& WithDetail(std::string detail) && {
    if (shared_reasons_ != nullptr) Own().reasons = *std::exchange(shared_reasons_, nullptr);
    Own().detail = std::move(detail);
    return std::move(*this);
  }

  // The plugin that produced a non-success status; set by the framework runtime.
  const std::string& plugin() const {
    if (shared_plugin_ != nullptr) return *shared_plugin_;
    return owned_ != nullptr ? owned_->plugin : NoPlugin();
  }
  Status& WithPlugin(std::string plugin) & {
    Own().plugin = std::move(plugin);
    shared_plugin_ = nullptr;
    return *this;
  }
  Status&& WithPlugin(std::string plugin) && { return std::move(WithPlugin(std::move(plugin))); }
  // The same for a plugin's name (Plugin::Name()), kept once for the life of the process
  // as Constant's reasons are: no allocation per rejected node.
  Status&& WithPluginName(std::string_view name) && { return std::move(*this).WithPluginName(&SharedName(name)); }
  // ... with the name's process-wide copy found beforehand (InternedName).
  Status&& WithPluginName(const std::string* interned) && {
    if (owned_ != nullptr) owned_->plugin.clear();
    shared_plugin_ = interned;
    return std::move(*this);
  }
  // The process-wide copy of a plugin name that WithPluginName keeps.
  static const std::string* InternedName(std::string_view name) { return &SharedName(name); }

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

  static const std::vector<std::string>& NoReasons();
  static const std::string& NoPlugin();

  // Reasons and a plugin name of the status's own: a heap block only statuses that carry
  // such text pay for, so that the common ones (Success; a constant rejection with a
  // shared plugin name) are four words, moved and copied without touching the heap.
  struct Owned {
    std::vector<std::string> reasons;
    std::string plugin;
    std::string detail;
  };
  Owned& Own() {
    if (owned_ == nullptr) owned_ = std::make_unique<Owned>();
    return *owned_;
  }

  Code code_ = Code::kSuccess;
  const std::vector<std::string>* shared_reasons_ = nullptr;  // instead of owned reasons
  const std::string* shared_plugin_ = nullptr;                // instead of an owned plugin
  std::unique_ptr<Owned> owned_;
};

// Merges per-plugin statuses (given in plugin order) into one. The code is the most
// severe one present (Error > UnschedulableAndUnresolvable > Pending > Unschedulable >
// the rest); plugin() is the first plugin with that code, so among equally severe
// rejections the first rejecting plugin wins; reasons are concatenated in order.
// An empty input merges to Success.
Status MergeStatuses(std::span<const Status> statuses);

}  // namespace ksched::framework
