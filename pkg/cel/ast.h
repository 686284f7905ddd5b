// The parsed form of a CEL expression. Operators are calls with cel-go's operator
// function names ("_+_", "_==_", "@in", ...), so type errors name them as cel-go does.
// Macros (has, all, exists, exists_one, map, filter, cel.bind) are kept as their own
// node kind rather than expanded into cel-go's fold form: the evaluator runs them
// directly and charges the cost the expanded form would have (eval.cc).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ksched::cel {

enum class ExprKind : uint8_t { kConst, kIdent, kSelect, kCall, kList, kMap, kMacro };

enum class ConstKind : uint8_t { kNull, kBool, kInt, kUint, kDouble, kString, kBytes };

struct Constant {
  ConstKind kind = ConstKind::kNull;
  bool b = false;
  int64_t i = 0;
  uint64_t u = 0;
  double d = 0;
  std::string s;  // string and bytes
};

enum class MacroKind : uint8_t {
  kHas,        // has(target.name)
  kAll,        // target.all(var, args[0]) or target.all(var, var2, args[0])
  kExists,
  kExistsOne,
  kMap,        // target.map(var, args[0]) or target.map(var, args[0] filter, args[1] transform)
  kFilter,     // target.filter(var, args[0])
  kBind,       // cel.bind(var, target init, args[0] body)
};

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  ExprKind kind = ExprKind::kConst;
  int32_t offset = 0;  // byte offset in the source, for error locations
  Constant constant;
  // kIdent: the name; kSelect: the field; kCall: the function; kMacro: iteration
  // (or bind) variable.
  std::string name;
  std::string name2;  // kMacro: second variable of a two-variable comprehension
  MacroKind macro = MacroKind::kHas;
  // kSelect: the operand; kCall: the receiver (member call) or null; kMacro: the range
  // (has: the select's operand; bind: the bound value).
  ExprPtr target;
  // kCall: arguments; kList: elements; kMap: key, value, key, value...; kMacro: see
  // MacroKind.
  std::vector<ExprPtr> args;
};

}  // namespace ksched::cel
