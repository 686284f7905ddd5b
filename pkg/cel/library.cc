// CEL's standard operators, conversions and size (cel-spec doc/langdef.md "Standard
// Definitions"; cel-go common/types for the runtime errors) and the overload table.
#include "pkg/cel/library.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <string>

namespace ksched::cel {
namespace {

Value IntOverflow() { return Value::Error("integer overflow"); }
Value UintOverflow() { return Value::Error("unsigned integer overflow"); }

Value AddInt(EvalCtx&, const Value* a) {
  int64_t r;
  if (__builtin_add_overflow(a[0].AsInt(), a[1].AsInt(), &r)) return IntOverflow();
  return Value::Int(r);
}
Value SubInt(EvalCtx&, const Value* a) {
  int64_t r;
  if (__builtin_sub_overflow(a[0].AsInt(), a[1].AsInt(), &r)) return IntOverflow();
  return Value::Int(r);
}
Value MulInt(EvalCtx&, const Value* a) {
  int64_t r;
  if (__builtin_mul_overflow(a[0].AsInt(), a[1].AsInt(), &r)) return IntOverflow();
  return Value::Int(r);
}
Value DivInt(EvalCtx&, const Value* a) {
  int64_t x = a[0].AsInt(), y = a[1].AsInt();
  if (y == 0) return Value::Error("division by zero");
  if (x == std::numeric_limits<int64_t>::min() && y == -1) return IntOverflow();
  return Value::Int(x / y);
}
Value ModInt(EvalCtx&, const Value* a) {
  int64_t x = a[0].AsInt(), y = a[1].AsInt();
  if (y == 0) return Value::Error("modulus by zero");
  if (x == std::numeric_limits<int64_t>::min() && y == -1) return IntOverflow();
  return Value::Int(x % y);
}
Value NegInt(EvalCtx&, const Value* a) {
  if (a[0].AsInt() == std::numeric_limits<int64_t>::min()) return IntOverflow();
  return Value::Int(-a[0].AsInt());
}
Value AddUint(EvalCtx&, const Value* a) {
  uint64_t r;
  if (__builtin_add_overflow(a[0].AsUint(), a[1].AsUint(), &r)) return UintOverflow();
  return Value::Uint(r);
}
Value SubUint(EvalCtx&, const Value* a) {
  uint64_t r;
  if (__builtin_sub_overflow(a[0].AsUint(), a[1].AsUint(), &r)) return UintOverflow();
  return Value::Uint(r);
}
Value MulUint(EvalCtx&, const Value* a) {
  uint64_t r;
  if (__builtin_mul_overflow(a[0].AsUint(), a[1].AsUint(), &r)) return UintOverflow();
  return Value::Uint(r);
}
Value DivUint(EvalCtx&, const Value* a) {
  if (a[1].AsUint() == 0) return Value::Error("division by zero");
  return Value::Uint(a[0].AsUint() / a[1].AsUint());
}
Value ModUint(EvalCtx&, const Value* a) {
  if (a[1].AsUint() == 0) return Value::Error("modulus by zero");
  return Value::Uint(a[0].AsUint() % a[1].AsUint());
}
Value AddDouble(EvalCtx&, const Value* a) { return Value::Double(a[0].AsDouble() + a[1].AsDouble()); }
Value SubDouble(EvalCtx&, const Value* a) { return Value::Double(a[0].AsDouble() - a[1].AsDouble()); }
Value MulDouble(EvalCtx&, const Value* a) { return Value::Double(a[0].AsDouble() * a[1].AsDouble()); }
Value DivDouble(EvalCtx&, const Value* a) { return Value::Double(a[0].AsDouble() / a[1].AsDouble()); }
Value NegDouble(EvalCtx&, const Value* a) { return Value::Double(-a[0].AsDouble()); }
Value AddString(EvalCtx&, const Value* a) { return Value::String(std::string(a[0].AsString()) + std::string(a[1].AsString())); }
Value AddBytes(EvalCtx&, const Value* a) { return Value::Bytes(std::string(a[0].AsString()) + std::string(a[1].AsString())); }
Value AddList(EvalCtx& ctx, const Value* a) {
  if (a[0].AsList().empty()) return a[1];
  if (a[1].AsList().empty()) return a[0];
  // cel-go's concatenation is lazy and costs 1; ours copies, and `l + l` in nested
  // binds doubles l each time: refuse a list the budget could not traverse.
  if (!ctx.Affordable(a[0].AsList().size() + a[1].AsList().size())) return CostLimitExceeded();
  std::vector<Value> out = a[0].AsList();
  out.insert(out.end(), a[1].AsList().begin(), a[1].AsList().end());
  return Value::List(std::move(out));
}
Value Not(EvalCtx&, const Value* a) { return Value::Bool(!a[0].AsBool()); }

Value Eq(EvalCtx& ctx, const Value* a) { return Value::Bool(EqualValues(ctx, a[0], a[1])); }
Value Ne(EvalCtx& ctx, const Value* a) { return Value::Bool(!EqualValues(ctx, a[0], a[1])); }
template <bool (*Pred)(int64_t)>
Value Cmp(EvalCtx&, const Value* a) {
  Value c = Compare(a[0], a[1]);
  if (c.IsError()) return c;
  return Value::Bool(Pred(c.AsInt()));
}
bool IsLt(int64_t c) { return c < 0; }
bool IsLe(int64_t c) { return c <= 0; }
bool IsGt(int64_t c) { return c > 0; }
bool IsGe(int64_t c) { return c >= 0; }

Value In(EvalCtx& ctx, const Value* a) { return InValue(ctx, a[0], a[1]); }
Value Index(EvalCtx& ctx, const Value* a) { return IndexValue(ctx, a[0], a[1]); }
Value Size(EvalCtx& ctx, const Value* a) { return Value::Int(SizeOf(ctx, a[0])); }

// Conversions (cel-go common/types/*.go ConvertToType).
Value ConvError(const Value& from, std::string_view to) {
  return Value::Error("type conversion error from '" + std::string(TypeName(from)) + "' to '" + std::string(to) + "'");
}
Value Identity(EvalCtx&, const Value* a) { return a[0]; }
Value IntFromUint(EvalCtx&, const Value* a) {
  if (a[0].AsUint() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return IntOverflow();
  return Value::Int(static_cast<int64_t>(a[0].AsUint()));
}
Value IntFromDouble(EvalCtx&, const Value* a) {
  double d = a[0].AsDouble();
  if (!(d > -9.2233720368547758e18 && d < 9.2233720368547758e18)) return IntOverflow();
  return Value::Int(static_cast<int64_t>(d));
}
Value IntFromString(EvalCtx&, const Value* a) {
  std::string_view s = a[0].AsString();
  int64_t v;
  auto [p, ec] = std::from_chars(s.data() + (s.starts_with('+') ? 1 : 0), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size()) return ConvError(a[0], "int");
  return Value::Int(v);
}
Value UintFromInt(EvalCtx&, const Value* a) {
  if (a[0].AsInt() < 0) return UintOverflow();
  return Value::Uint(static_cast<uint64_t>(a[0].AsInt()));
}
Value UintFromDouble(EvalCtx&, const Value* a) {
  double d = a[0].AsDouble();
  if (!(d >= 0 && d < 1.8446744073709552e19)) return UintOverflow();
  return Value::Uint(static_cast<uint64_t>(d));
}
Value UintFromString(EvalCtx&, const Value* a) {
  std::string_view s = a[0].AsString();
  uint64_t v;
  auto [p, ec] = std::from_chars(s.data() + (s.starts_with('+') ? 1 : 0), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size()) return ConvError(a[0], "uint");
  return Value::Uint(v);
}
Value DoubleFromInt(EvalCtx&, const Value* a) { return Value::Double(static_cast<double>(a[0].AsInt())); }
Value DoubleFromUint(EvalCtx&, const Value* a) { return Value::Double(static_cast<double>(a[0].AsUint())); }
Value DoubleFromString(EvalCtx&, const Value* a) {
  std::string s(a[0].AsString());
  char* end = nullptr;
  double d = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || std::isspace(static_cast<unsigned char>(s[0]))) {
    return ConvError(a[0], "double");
  }
  return Value::Double(d);
}
Value StringFromInt(EvalCtx&, const Value* a) { return Value::String(std::to_string(a[0].AsInt())); }
Value StringFromUint(EvalCtx&, const Value* a) { return Value::String(std::to_string(a[0].AsUint())); }
Value StringFromBool(EvalCtx&, const Value* a) { return Value::StringView(a[0].AsBool() ? "true" : "false"); }
Value StringFromBytes(EvalCtx&, const Value* a) {
  std::string_view s = a[0].AsString();
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (len == 0 || i + len > s.size()) return Value::Error("invalid UTF-8 in bytes, cannot convert to string");
    for (size_t k = 1; k < len; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) {
        return Value::Error("invalid UTF-8 in bytes, cannot convert to string");
      }
    }
    i += len;
  }
  return Value::String(std::string(s));
}
Value BytesFromString(EvalCtx&, const Value* a) { return Value::Bytes(std::string(a[0].AsString())); }

// Go's %g: the shortest representation, in exponent form when the exponent is below
// -4 or at least the (shortest) precision, with a minimum of 6 (fmt's shortest %g).
Value StringFromDouble(EvalCtx&, const Value* a) {
  double d = a[0].AsDouble();
  if (std::isnan(d)) return Value::StringView("NaN");
  if (std::isinf(d)) return Value::StringView(d > 0 ? "+Inf" : "-Inf");
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), d, std::chars_format::scientific);
  std::string sci(buf, res.ptr);  // "-1.2345e+06"
  bool neg = sci[0] == '-';
  std::string mant = sci.substr(neg ? 1 : 0, sci.find('e') - (neg ? 1 : 0));
  int exp = std::stoi(sci.substr(sci.find('e') + 1));
  std::string digits;
  for (char c : mant) {
    if (c != '.') digits += c;
  }
  int eprec = 6;
  if (eprec > static_cast<int>(digits.size()) && static_cast<int>(digits.size()) >= exp + 1) eprec = static_cast<int>(digits.size());
  std::string out = neg ? "-" : "";
  if (exp < -4 || exp >= eprec) {
    out += digits.substr(0, 1);
    if (digits.size() > 1) {
      out += '.';
      out.append(digits, 1);
    }
    char e[16];
    std::snprintf(e, sizeof(e), "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    out += e;
  } else if (exp < 0) {
    out += "0.";
    out.append(static_cast<size_t>(-exp - 1), '0');
    out += digits;
  } else {
    size_t ip = static_cast<size_t>(exp + 1);
    if (digits.size() <= ip) {
      out += digits + std::string(ip - digits.size(), '0');
    } else {
      out += digits.substr(0, ip) + "." + digits.substr(ip);
    }
  }
  return Value::String(std::move(out));
}
Value BoolFromString(EvalCtx&, const Value* a) {
  std::string_view s = a[0].AsString();
  if (s == "1" || s == "t" || s == "T" || s == "TRUE" || s == "true" || s == "True") return Value::Bool(true);
  if (s == "0" || s == "f" || s == "F" || s == "FALSE" || s == "false" || s == "False") return Value::Bool(false);
  return ConvError(a[0], "bool");
}
Value TypeOf(EvalCtx&, const Value* a) { return Value::Type(TypeName(a[0])); }

// Costs (cel-go interpreter/runtimecost.go costCall).
uint64_t MinSizeCost(EvalCtx& ctx, const Value* a) {
  return CeilCost(static_cast<double>(std::min(CostSize(ctx, a[0]), CostSize(ctx, a[1]))) * kStringTraversalCostFactor);
}
uint64_t ConcatCost(EvalCtx& ctx, const Value* a) {
  return CeilCost(static_cast<double>(CostSize(ctx, a[0]) + CostSize(ctx, a[1])) * kStringTraversalCostFactor);
}
uint64_t InCost(EvalCtx& ctx, const Value* a) {
  return a[1].kind() == ValueKind::kList ? CostSize(ctx, a[1]) : 1;
}

}  // namespace

uint64_t CeilCost(double x) { return static_cast<uint64_t>(std::ceil(x)); }

uint64_t TraversalCost(EvalCtx& ctx, const Value& v) {
  switch (v.kind()) {
    case ValueKind::kString:
    case ValueKind::kBytes:
      return CeilCost(static_cast<double>(CostSize(ctx, v)) * kStringTraversalCostFactor);
    case ValueKind::kList: {
      uint64_t c = 0;
      for (const Value& e : v.AsList()) {
        if (!ctx.Work(1)) break;  // cancelled: the cost no longer matters
        c += TraversalCost(ctx, e);
      }
      return c;
    }
    default:
      if (v.IsMapLike()) {
        std::vector<std::pair<Value, Value>> entries;
        Entries(ctx, v, entries);
        uint64_t c = 0;
        for (const auto& [k, e] : entries) {
          if (!ctx.Work(1)) break;
          c += TraversalCost(ctx, k) + TraversalCost(ctx, e);
        }
        return c;
      }
      return 1;
  }
}

Overload Sig(std::string_view function, bool member, std::initializer_list<std::string_view> params,
             std::string_view result, Fn fn, CostFn cost) {
  Overload o;
  o.function = function;
  o.member = member;
  for (std::string_view p : params) o.params.push_back(ParseType(p));
  o.result = ParseType(result);
  o.fn = fn;
  o.cost = cost;
  return o;
}

void AddCoreFunctions(std::vector<Overload>& out) {
  constexpr bool G = false, M = true;
  out.push_back(Sig("!_", G, {"bool"}, "bool", Not));
  out.push_back(Sig("-_", G, {"int"}, "int", NegInt));
  out.push_back(Sig("-_", G, {"double"}, "double", NegDouble));
  out.push_back(Sig("_+_", G, {"int", "int"}, "int", AddInt));
  out.push_back(Sig("_+_", G, {"uint", "uint"}, "uint", AddUint));
  out.push_back(Sig("_+_", G, {"double", "double"}, "double", AddDouble));
  out.push_back(Sig("_+_", G, {"string", "string"}, "string", AddString, ConcatCost));
  out.push_back(Sig("_+_", G, {"bytes", "bytes"}, "bytes", AddBytes, ConcatCost));
  out.push_back(Sig("_+_", G, {"list(A)", "list(A)"}, "list(A)", AddList));
  out.push_back(Sig("_-_", G, {"int", "int"}, "int", SubInt));
  out.push_back(Sig("_-_", G, {"uint", "uint"}, "uint", SubUint));
  out.push_back(Sig("_-_", G, {"double", "double"}, "double", SubDouble));
  out.push_back(Sig("_*_", G, {"int", "int"}, "int", MulInt));
  out.push_back(Sig("_*_", G, {"uint", "uint"}, "uint", MulUint));
  out.push_back(Sig("_*_", G, {"double", "double"}, "double", MulDouble));
  out.push_back(Sig("_/_", G, {"int", "int"}, "int", DivInt));
  out.push_back(Sig("_/_", G, {"uint", "uint"}, "uint", DivUint));
  out.push_back(Sig("_/_", G, {"double", "double"}, "double", DivDouble));
  out.push_back(Sig("_%_", G, {"int", "int"}, "int", ModInt));
  out.push_back(Sig("_%_", G, {"uint", "uint"}, "uint", ModUint));
  out.push_back(Sig("_==_", G, {"A", "A"}, "bool", Eq, MinSizeCost));
  out.push_back(Sig("_!=_", G, {"A", "A"}, "bool", Ne, MinSizeCost));
  // Ordering, with cel.CrossTypeNumericComparisons (base.go enables it since 1.28).
  static constexpr std::string_view kOrdered[] = {"int", "uint", "double"};
  struct Rel {
    std::string_view name;
    Fn fn;
  };
  const Rel rels[] = {{"_<_", Cmp<IsLt>}, {"_<=_", Cmp<IsLe>}, {"_>_", Cmp<IsGt>}, {"_>=_", Cmp<IsGe>}};
  for (const Rel& r : rels) {
    for (std::string_view x : kOrdered) {
      for (std::string_view y : kOrdered) out.push_back(Sig(r.name, G, {x, y}, "bool", r.fn));
    }
    out.push_back(Sig(r.name, G, {"string", "string"}, "bool", r.fn, MinSizeCost));
    out.push_back(Sig(r.name, G, {"bytes", "bytes"}, "bool", r.fn, MinSizeCost));
    out.push_back(Sig(r.name, G, {"bool", "bool"}, "bool", r.fn));
  }
  out.push_back(Sig("@in", G, {"A", "list(A)"}, "bool", In, InCost));
  out.push_back(Sig("@in", G, {"A", "map(A, B)"}, "bool", In));
  out.push_back(Sig("_[_]", G, {"list(A)", "int"}, "A", Index));
  out.push_back(Sig("_[_]", G, {"map(A, B)", "A"}, "B", Index));
  for (bool member : {G, M}) {
    out.push_back(Sig("size", member, {"string"}, "int", Size));
    out.push_back(Sig("size", member, {"bytes"}, "int", Size));
    out.push_back(Sig("size", member, {"list(A)"}, "int", Size));
    out.push_back(Sig("size", member, {"map(A, B)"}, "int", Size));
  }
  out.push_back(Sig("int", G, {"int"}, "int", Identity));
  out.push_back(Sig("int", G, {"uint"}, "int", IntFromUint));
  out.push_back(Sig("int", G, {"double"}, "int", IntFromDouble));
  out.push_back(Sig("int", G, {"string"}, "int", IntFromString));
  out.push_back(Sig("uint", G, {"uint"}, "uint", Identity));
  out.push_back(Sig("uint", G, {"int"}, "uint", UintFromInt));
  out.push_back(Sig("uint", G, {"double"}, "uint", UintFromDouble));
  out.push_back(Sig("uint", G, {"string"}, "uint", UintFromString));
  out.push_back(Sig("double", G, {"double"}, "double", Identity));
  out.push_back(Sig("double", G, {"int"}, "double", DoubleFromInt));
  out.push_back(Sig("double", G, {"uint"}, "double", DoubleFromUint));
  out.push_back(Sig("double", G, {"string"}, "double", DoubleFromString));
  out.push_back(Sig("string", G, {"string"}, "string", Identity));
  out.push_back(Sig("string", G, {"int"}, "string", StringFromInt));
  out.push_back(Sig("string", G, {"uint"}, "string", StringFromUint));
  out.push_back(Sig("string", G, {"double"}, "string", StringFromDouble));
  out.push_back(Sig("string", G, {"bool"}, "string", StringFromBool));
  out.push_back(Sig("string", G, {"bytes"}, "string", StringFromBytes));
  out.push_back(Sig("bool", G, {"bool"}, "bool", Identity));
  out.push_back(Sig("bool", G, {"string"}, "bool", BoolFromString));
  out.push_back(Sig("bytes", G, {"bytes"}, "bytes", Identity));
  out.push_back(Sig("bytes", G, {"string"}, "bytes", BytesFromString));
  out.push_back(Sig("dyn", G, {"A"}, "dyn", Identity));
  out.push_back(Sig("type", G, {"A"}, "type", TypeOf));
}

const std::vector<Overload>& Library() {
  static const std::vector<Overload> lib = [] {
    std::vector<Overload> v;
    AddCoreFunctions(v);
    AddStringFunctions(v);
    AddKubernetesFunctions(v);
    return v;
  }();
  return lib;
}

std::vector<const Overload*> FindOverloads(std::string_view function) {
  static const auto index = [] {
    std::map<std::string_view, std::vector<const Overload*>, std::less<>> m;
    for (const Overload& o : Library()) m[o.function].push_back(&o);
    return m;
  }();
  auto it = index.find(function);
  return it == index.end() ? std::vector<const Overload*>{} : it->second;
}

}  // namespace ksched::cel
