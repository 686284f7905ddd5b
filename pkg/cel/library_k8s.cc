// The Kubernetes quantity and semver libraries (k8s.io/apiserver/pkg/cel/library/
// quantity.go and semverlib.go), over api::Quantity and api::SemVersion.
#include <cmath>
#include <string>

#include "pkg/api/quantity.h"
#include "pkg/api/resource.h"
#include "pkg/cel/library.h"
#include "pkg/cel/semver.h"

namespace ksched::cel {
namespace {

using Milli = api::Quantity::Milli;

Value ParseQuantity(EvalCtx&, const Value* a) {
  auto q = api::Quantity::Parse(a[0].AsString());
  if (!q.ok()) {
    // resource.ParseQuantity's error is the bare message; ours also quotes the input.
    std::string m = q.status().message();
    size_t got = m.find(" (got \"");
    return Value::Error(got == std::string::npos ? m : m.substr(0, got));
  }
  return Value::Quantity(q->ExactMilli());
}
Value IsQuantity(EvalCtx&, const Value* a) { return Value::Bool(api::Quantity::Parse(a[0].AsString()).ok()); }

int Cmp(Milli x, Milli y) { return x < y ? -1 : x > y ? 1 : 0; }
Value QSign(EvalCtx&, const Value* a) { return Value::Int(Cmp(a[0].AsQuantity(), 0)); }
Value QGreater(EvalCtx&, const Value* a) { return Value::Bool(a[0].AsQuantity() > a[1].AsQuantity()); }
Value QLess(EvalCtx&, const Value* a) { return Value::Bool(a[0].AsQuantity() < a[1].AsQuantity()); }
Value QCompare(EvalCtx&, const Value* a) { return Value::Int(Cmp(a[0].AsQuantity(), a[1].AsQuantity())); }

// Quantity.AsInt64: whole units that fit int64.
bool AsInt64(Milli m, int64_t& out) {
  if (m % 1000 != 0) return false;
  Milli v = m / 1000;
  if (v > INT64_MAX || v < INT64_MIN) return false;
  out = static_cast<int64_t>(v);
  return true;
}
Value QIsInteger(EvalCtx&, const Value* a) {
  int64_t v;
  return Value::Bool(AsInt64(a[0].AsQuantity(), v));
}
Value QAsInteger(EvalCtx&, const Value* a) {
  int64_t v;
  if (!AsInt64(a[0].AsQuantity(), v)) return Value::Error("cannot convert value to integer");
  return Value::Int(v);
}
Value QAsFloat(EvalCtx&, const Value* a) {
  return Value::Double(static_cast<double>(static_cast<long double>(a[0].AsQuantity()) / 1000.0L));
}
// Amounts beyond ~1.7e35 saturate in api::Quantity; upstream's inf.Dec does not.
Value QuantityOf(Milli m, bool overflow) {
  if (overflow) return Value::Error("quantity overflow");
  return Value::Quantity(m);
}
Value QAdd(EvalCtx&, const Value* a) {
  Milli r;
  bool o = __builtin_add_overflow(a[0].AsQuantity(), a[1].AsQuantity(), &r);
  return QuantityOf(r, o);
}
Value QSub(EvalCtx&, const Value* a) {
  Milli r;
  bool o = __builtin_sub_overflow(a[0].AsQuantity(), a[1].AsQuantity(), &r);
  return QuantityOf(r, o);
}
Value QAddInt(EvalCtx&, const Value* a) {
  Milli r;
  bool o = __builtin_add_overflow(a[0].AsQuantity(), static_cast<Milli>(a[1].AsInt()) * 1000, &r);
  return QuantityOf(r, o);
}
Value QSubInt(EvalCtx&, const Value* a) {
  Milli r;
  bool o = __builtin_sub_overflow(a[0].AsQuantity(), static_cast<Milli>(a[1].AsInt()) * 1000, &r);
  return QuantityOf(r, o);
}
Value QMulInt(EvalCtx&, const Value* a) {
  Milli r;
  bool o = __builtin_mul_overflow(a[0].AsQuantity(), static_cast<Milli>(a[1].AsInt()), &r);
  return QuantityOf(r, o);
}

Value SemverFrom(const Value& text, bool normalize) {
  std::string error;
  auto v = ParseSemver(text.AsString(), normalize, &error);
  if (!v) return Value::Error(error);
  return Value::Semver(std::move(*v));
}
Value ToSemver(EvalCtx&, const Value* a) { return SemverFrom(a[0], false); }
Value ToSemverNormalize(EvalCtx&, const Value* a) { return SemverFrom(a[0], a[1].AsBool()); }
Value IsSemver(EvalCtx&, const Value* a) { return Value::Bool(ParseSemver(a[0].AsString(), false, nullptr).has_value()); }
Value IsSemverNormalize(EvalCtx&, const Value* a) {
  return Value::Bool(ParseSemver(a[0].AsString(), a[1].AsBool(), nullptr).has_value());
}
Value SMajor(EvalCtx&, const Value* a) { return Value::Int(static_cast<int64_t>(a[0].AsSemver().major)); }
Value SMinor(EvalCtx&, const Value* a) { return Value::Int(static_cast<int64_t>(a[0].AsSemver().minor)); }
Value SPatch(EvalCtx&, const Value* a) { return Value::Int(static_cast<int64_t>(a[0].AsSemver().patch)); }
int SCmp(const Value* a) {
  int c = a[0].AsSemver().Compare(a[1].AsSemver());
  return c < 0 ? -1 : c > 0 ? 1 : 0;
}
Value SGreater(EvalCtx&, const Value* a) { return Value::Bool(SCmp(a) == 1); }
Value SLess(EvalCtx&, const Value* a) { return Value::Bool(SCmp(a) == -1); }
Value SCompare(EvalCtx&, const Value* a) { return Value::Int(SCmp(a)); }

uint64_t ParseCost(EvalCtx& ctx, const Value* a) {
  return CeilCost(static_cast<double>(CostSize(ctx, a[0])) * kStringTraversalCostFactor);
}

}  // namespace

void AddKubernetesFunctions(std::vector<Overload>& out) {
  constexpr bool G = false, M = true;
  out.push_back(Sig("quantity", G, {"string"}, "quantity", ParseQuantity, ParseCost));
  out.push_back(Sig("isQuantity", G, {"string"}, "bool", IsQuantity, ParseCost));
  // Upstream declares sign() as a global overload although its documentation calls
  // it as a method; we accept both spellings.
  out.push_back(Sig("sign", G, {"quantity"}, "int", QSign));
  out.push_back(Sig("sign", M, {"quantity"}, "int", QSign));
  out.push_back(Sig("isGreaterThan", M, {"quantity", "quantity"}, "bool", QGreater));
  out.push_back(Sig("isLessThan", M, {"quantity", "quantity"}, "bool", QLess));
  out.push_back(Sig("compareTo", M, {"quantity", "quantity"}, "int", QCompare));
  out.push_back(Sig("asApproximateFloat", M, {"quantity"}, "double", QAsFloat));
  out.push_back(Sig("asInteger", M, {"quantity"}, "int", QAsInteger));
  out.push_back(Sig("isInteger", M, {"quantity"}, "bool", QIsInteger));
  out.push_back(Sig("add", M, {"quantity", "quantity"}, "quantity", QAdd));
  out.push_back(Sig("add", M, {"quantity", "int"}, "quantity", QAddInt));
  out.push_back(Sig("sub", M, {"quantity", "quantity"}, "quantity", QSub));
  out.push_back(Sig("sub", M, {"quantity", "int"}, "quantity", QSubInt));
  out.push_back(Sig("mul", M, {"quantity", "int"}, "quantity", QMulInt));

  out.push_back(Sig("semver", G, {"string"}, "semver", ToSemver, ParseCost));
  out.push_back(Sig("semver", G, {"string", "bool"}, "semver", ToSemverNormalize, ParseCost));
  out.push_back(Sig("isSemver", G, {"string"}, "bool", IsSemver, ParseCost));
  out.push_back(Sig("isSemver", G, {"string", "bool"}, "bool", IsSemverNormalize, ParseCost));
  out.push_back(Sig("major", M, {"semver"}, "int", SMajor));
  out.push_back(Sig("minor", M, {"semver"}, "int", SMinor));
  out.push_back(Sig("patch", M, {"semver"}, "int", SPatch));
  out.push_back(Sig("isGreaterThan", M, {"semver", "semver"}, "bool", SGreater));
  out.push_back(Sig("isLessThan", M, {"semver", "semver"}, "bool", SLess));
  out.push_back(Sig("compareTo", M, {"semver", "semver"}, "int", SCompare));
}

}  // namespace ksched::cel
