// The functions a DRA selector may call: CEL's standard functions and operators, the
// cel-go extensions the Kubernetes base environment enables (strings v2, sets) and
// the Kubernetes libraries (lists, regex, quantity, semver). See
// k8s.io/apiserver/pkg/cel/environment/base.go for what the environment holds.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "pkg/cel/runtime.h"
#include "pkg/cel/types.h"

namespace ksched::cel {

// An implementation receives arguments of the kinds its signature names (the
// receiver first for member functions), none of them errors.
using Fn = Value (*)(EvalCtx& ctx, const Value* args);
// The runtime cost of one call (cel-go interpreter/runtimecost.go, Kubernetes
// library/cost.go), from its arguments. Null: 1. It is charged before the call, and a
// call the remaining budget cannot pay for is not made: cel-go charges after the call,
// with the same outcome (cancellation), but here sets.intersects of two long lists or a
// regex over a long string must not run for minutes first.
using CostFn = uint64_t (*)(EvalCtx& ctx, const Value* args);

struct Overload {
  std::string_view function;
  bool member = false;
  std::vector<Type> params;
  Type result;
  Fn fn = nullptr;
  CostFn cost = nullptr;
};

// Every overload, grouped by function name.
const std::vector<Overload>& Library();
// The overloads of `function` (member or global), in declaration order.
std::vector<const Overload*> FindOverloads(std::string_view function);

// Cost helpers shared by the library parts.
uint64_t CeilCost(double x);
uint64_t TraversalCost(EvalCtx& ctx, const Value& v);

// Registration of the library parts (library.cc, library_strings.cc, library_k8s.cc).
void AddCoreFunctions(std::vector<Overload>& out);
void AddStringFunctions(std::vector<Overload>& out);
void AddKubernetesFunctions(std::vector<Overload>& out);

// Builds an overload from signature text, e.g. Sig("size", true, {"string"}, "int", fn).
Overload Sig(std::string_view function, bool member, std::initializer_list<std::string_view> params,
             std::string_view result, Fn fn, CostFn cost = nullptr);

}  // namespace ksched::cel
