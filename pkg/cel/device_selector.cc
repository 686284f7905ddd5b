#include "pkg/cel/device_selector.h"

#include <array>
#include <vector>

#include "pkg/cel/compiler.h"

namespace ksched::cel {

DeviceSelector::DeviceSelector(std::string expression, std::unique_ptr<const Program> program)
    : expression_(std::move(expression)), program_(std::move(program)) {}

DeviceSelector::~DeviceSelector() = default;

StatusOr<std::shared_ptr<const DeviceSelector>> DeviceSelector::Compile(std::string_view expression) {
  auto program = CompileProgram(expression);
  if (!program.ok()) return program.status();
  return std::shared_ptr<const DeviceSelector>(new DeviceSelector(std::string(expression), std::move(*program)));
}

StatusOr<bool> DeviceSelector::Matches(std::string_view driver, const api::Device& device) const {
  return Matches(driver, device, kSelectorCostLimit, nullptr);
}

StatusOr<bool> DeviceSelector::Matches(std::string_view driver, const api::Device& device, uint64_t cost_limit,
                                       uint64_t* actual_cost) const {
  EvalCtx ctx;
  ctx.driver = driver;
  ctx.device = &device;
  ctx.limit = cost_limit;
  Value result;
  if (program_->slots == 0) {
    result = program_->root->Eval(ctx);
  } else {
    std::vector<Value> slots(static_cast<size_t>(program_->slots));
    ctx.slots = slots.data();
    result = program_->root->Eval(ctx);
  }
  if (actual_cost != nullptr) *actual_cost = ctx.cost;
  if (ctx.cancelled) return Status(StatusCode::kOutOfRange, std::string(kCostLimitExceeded));
  if (result.IsError()) return InvalidArgument(result.ErrorMessage());
  if (result.kind() != ValueKind::kBool) {
    // compile.go DeviceMatches: the result of an attribute-typed expression.
    std::string type(TypeName(result));
    return InvalidArgument("CEL result of type " + type + " could not be converted to bool: unsupported type conversion from '" +
                           type + "' to bool");
  }
  return result.AsBool();
}

StatusOr<std::shared_ptr<const DeviceSelector>> SelectorCache::Get(std::string_view expression) {
  {
    MutexLock lock(mu_);
    auto it = index_.find(expression);
    if (it != index_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      return it->second->result;
    }
  }
  // Compiled outside the lock: two threads may compile the same text, which is
  // harmless and cheaper than serializing every compilation.
  Result result = DeviceSelector::Compile(expression);
  MutexLock lock(mu_);
  if (index_.find(expression) == index_.end() && max_entries_ > 0) {
    lru_.push_front(Entry{std::string(expression), result});
    index_.emplace(lru_.front().expression, lru_.begin());
    while (lru_.size() > max_entries_) {
      index_.erase(lru_.back().expression);
      lru_.pop_back();
    }
  }
  return result;
}

}  // namespace ksched::cel
