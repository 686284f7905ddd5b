#include "pkg/cel/types.h"

#include <cassert>

namespace ksched::cel {

std::string Type::String() const {
  switch (kind) {
    case TypeKind::kDyn: return "dyn";
    case TypeKind::kAny: return "google.protobuf.Any";
    case TypeKind::kError: return "*error*";
    case TypeKind::kNull: return "null_type";
    case TypeKind::kBool: return "bool";
    case TypeKind::kInt: return "int";
    case TypeKind::kUint: return "uint";
    case TypeKind::kDouble: return "double";
    case TypeKind::kString: return "string";
    case TypeKind::kBytes: return "bytes";
    case TypeKind::kList: return "list(" + params[0].String() + ")";
    case TypeKind::kMap: return "map(" + params[0].String() + ", " + params[1].String() + ")";
    case TypeKind::kQuantity: return "kubernetes.Quantity";
    case TypeKind::kSemver: return "kubernetes.Semver";
    case TypeKind::kDevice: return "kubernetes.DRADevice";
    case TypeKind::kType: return "type";
    case TypeKind::kParam: return std::string(1, name);
  }
  return "dyn";
}

namespace {

Type ParseTypeAt(std::string_view text, size_t& pos) {
  while (pos < text.size() && text[pos] == ' ') ++pos;
  size_t start = pos;
  while (pos < text.size() && text[pos] != '(' && text[pos] != ')' && text[pos] != ',') ++pos;
  std::string_view name = text.substr(start, pos - start);
  while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
  if (name == "list" || name == "map") {
    ++pos;  // '('
    std::vector<Type> params;
    params.push_back(ParseTypeAt(text, pos));
    if (name == "map") {
      ++pos;  // ','
      params.push_back(ParseTypeAt(text, pos));
    }
    ++pos;  // ')'
    return Type{name == "list" ? TypeKind::kList : TypeKind::kMap, std::move(params), 0};
  }
  if (name.size() == 1 && name[0] >= 'A' && name[0] <= 'Z') return Type{TypeKind::kParam, {}, name[0]};
  static const std::pair<std::string_view, TypeKind> kNames[] = {
      {"int", TypeKind::kInt},           {"uint", TypeKind::kUint},         {"double", TypeKind::kDouble},
      {"bool", TypeKind::kBool},         {"string", TypeKind::kString},     {"bytes", TypeKind::kBytes},
      {"null_type", TypeKind::kNull},    {"dyn", TypeKind::kDyn},           {"any", TypeKind::kAny},
      {"type", TypeKind::kType},         {"quantity", TypeKind::kQuantity}, {"semver", TypeKind::kSemver},
      {"device", TypeKind::kDevice},
  };
  for (const auto& [n, k] : kNames) {
    if (n == name) return Type::Of(k);
  }
  assert(false && "unknown type in signature");
  return Type::Of(TypeKind::kDyn);
}

}  // namespace

Type ParseType(std::string_view text) {
  size_t pos = 0;
  return ParseTypeAt(text, pos);
}

bool Unify(const Type& param, const Type& arg, TypeBindings& bindings) {
  if (param.kind == TypeKind::kParam) {
    auto it = bindings.find(param.name);
    if (it == bindings.end()) {
      bindings.emplace(param.name, arg);
      return true;
    }
    Type& bound = it->second;
    if (bound.IsDynLike()) return true;
    if (arg.IsDynLike()) {
      bound = arg;  // the most general type wins, as the checker's join does
      return true;
    }
    if (bound.kind == arg.kind && bound.params.size() == arg.params.size()) {
      // Two lists (or maps): join element types, letting dyn absorb differences.
      for (size_t i = 0; i < arg.params.size(); ++i) {
        if (bound.params[i] == arg.params[i] || bound.params[i].IsDynLike()) continue;
        if (arg.params[i].IsDynLike()) {
          bound.params[i] = arg.params[i];
          continue;
        }
        if (bound.params[i].kind != arg.params[i].kind) return false;
      }
      return true;
    }
    return false;
  }
  if (param.IsDynLike() || arg.IsDynLike()) return true;
  if (param.kind != arg.kind || param.params.size() != arg.params.size()) return false;
  for (size_t i = 0; i < param.params.size(); ++i) {
    if (!Unify(param.params[i], arg.params[i], bindings)) return false;
  }
  return true;
}

Type Substitute(const Type& t, const TypeBindings& bindings) {
  if (t.kind == TypeKind::kParam) {
    auto it = bindings.find(t.name);
    return it == bindings.end() ? Type::Of(TypeKind::kDyn) : it->second;
  }
  Type out = t;
  for (Type& p : out.params) p = Substitute(p, bindings);
  return out;
}

bool MatchesValue(const Type& param, const Value& v) {
  switch (param.kind) {
    case TypeKind::kDyn:
    case TypeKind::kAny:
    case TypeKind::kParam:
    case TypeKind::kError:
      return true;
    case TypeKind::kNull: return v.kind() == ValueKind::kNull;
    case TypeKind::kBool: return v.kind() == ValueKind::kBool;
    case TypeKind::kInt: return v.kind() == ValueKind::kInt;
    case TypeKind::kUint: return v.kind() == ValueKind::kUint;
    case TypeKind::kDouble: return v.kind() == ValueKind::kDouble;
    case TypeKind::kString: return v.kind() == ValueKind::kString;
    case TypeKind::kBytes: return v.kind() == ValueKind::kBytes;
    case TypeKind::kList: return v.kind() == ValueKind::kList;
    case TypeKind::kMap: return v.IsMapLike();
    case TypeKind::kQuantity: return v.kind() == ValueKind::kQuantity;
    case TypeKind::kSemver: return v.kind() == ValueKind::kSemver;
    case TypeKind::kDevice: return v.kind() == ValueKind::kDevice;
    case TypeKind::kType: return v.kind() == ValueKind::kType;
  }
  return false;
}

}  // namespace ksched::cel
