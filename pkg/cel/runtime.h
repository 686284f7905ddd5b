// Runtime operations shared by the evaluator and the function library: the
// evaluation context (the device, the cost meter), CEL equality and ordering, and
// uniform access to lists, maps and the maps of the `device` variable.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pkg/api/resource.h"
#include "pkg/cel/value.h"

namespace ksched::cel {

// resourceapi.CELSelectorExpressionMaxCost: the runtime cost limit of a selector.
inline constexpr uint64_t kSelectorCostLimit = 1000000;
// cel-go interpreter/runtimecost.go's message when the limit is exceeded.
inline constexpr std::string_view kCostLimitExceeded = "operation cancelled: actual cost limit exceeded";

// cel-go's cost constants (common/cost.go).
inline constexpr uint64_t kListCreateCost = 10;
inline constexpr uint64_t kMapCreateCost = 30;
inline constexpr double kStringTraversalCostFactor = 0.1;
inline constexpr double kRegexStringLengthCostFactor = 0.25;
// Steps of uncharged work allowed per unit of the cost limit (EvalCtx::Work).
inline constexpr uint64_t kWorkPerCost = 4;

struct EvalCtx {
  std::string_view driver;
  const api::Device* device = nullptr;
  uint64_t cost = 0;
  uint64_t limit = kSelectorCostLimit;
  // Set once the limit is exceeded: the error then escapes && and || (cel-go panics).
  bool cancelled = false;
  Value* slots = nullptr;  // comprehension and bind variables
  // Steps the cost model does not see. cel-go charges equality, `in` and a call's
  // traversal by the size of their top-level operands, so `L == L` over a list of
  // 10^4 lists of 10^4 strings costs 10^3 and takes 10^8 steps; and a comprehension
  // copies its whole range even when `exists` stops at the first element. Such steps
  // are counted here and cancel the evaluation past kWorkPerCost per unit of the limit,
  // which no selector that stays within its cost limit otherwise comes near.
  uint64_t work = 0;

  void Charge(uint64_t c) {
    cost += c;
    if (cost > limit) cancelled = true;
  }

  // Whether a value whose traversal would cost `c` may be built; if not, cancels the
  // evaluation. Functions whose result can be much larger than their arguments
  // (replace, list concatenation, split) ask before building it. cel-go builds such a
  // value (its list concatenation is even lazy) and charges only for using it; but a
  // value the remaining budget could never traverse serves no selector, and building it
  // is how a three-line expression reaches terabytes ("x".replace("", x) squares x's
  // length, and nested binds repeat that).
  // Counts `steps`; false (and cancelled) past the work bound.
  bool Work(uint64_t steps) {
    work += steps;
    if (work / kWorkPerCost > limit) cancelled = true;
    return !cancelled;
  }

  bool Affordable(uint64_t c) {
    if (cost <= limit && c <= limit - cost) return true;
    cancelled = true;
    return false;
  }
};

// What a function returns when it cancels through EvalCtx::Affordable.
Value CostLimitExceeded();

Value NoSuchOverload();
Value NoSuchKey(const Value& key);

// CEL `==`: heterogeneous numeric equality, deep list/map equality, false across
// types. Errors only when an operand is an error.
Value Equal(EvalCtx& ctx, const Value& a, const Value& b);
bool EqualValues(EvalCtx& ctx, const Value& a, const Value& b);

// CEL ordering of comparable values (numbers across types, strings, bytes, bools):
// Int(-1), Int(0) or Int(1), or an error.
Value Compare(const Value& a, const Value& b);

// size() of strings (code points), bytes, lists and maps; -1 for other values.
int64_t SizeOf(EvalCtx& ctx, const Value& v);
// The size cel-go's cost model uses (1 for scalars).
uint64_t CostSize(EvalCtx& ctx, const Value& v);

// Map lookup. Sets `found`; device.attributes/capacity find every domain (an absent
// one is an empty map, as compile.go's mapper does).
Value MapFind(EvalCtx& ctx, const Value& map, const Value& key, bool& found);
// `container[key]` for lists and maps, with cel-go's errors.
Value IndexValue(EvalCtx& ctx, const Value& container, const Value& key);
// `key in container`.
Value InValue(EvalCtx& ctx, const Value& key, const Value& container);

// The (key, value) pairs of a map or (index, element) pairs of a list; error for
// other values.
bool Entries(EvalCtx& ctx, const Value& range, std::vector<std::pair<Value, Value>>& out);

// The attribute `domain`/`id` of the device, or null.
const api::DeviceAttribute* FindAttribute(const EvalCtx& ctx, std::string_view domain, std::string_view id);
const api::DeviceCapacity* FindCapacity(const EvalCtx& ctx, std::string_view domain, std::string_view id);
Value AttributeValue(const api::DeviceAttribute& attr);

}  // namespace ksched::cel
