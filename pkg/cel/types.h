// Static types for the checker and the signatures of library functions.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/cel/value.h"

namespace ksched::cel {

enum class TypeKind : uint8_t {
  kDyn,
  kAny,  // google.protobuf.Any: what attribute values are declared as (compile.go)
  kError,
  kNull,
  kBool,
  kInt,
  kUint,
  kDouble,
  kString,
  kBytes,
  kList,
  kMap,
  kQuantity,
  kSemver,
  kDevice,
  kType,
  kParam,  // a type parameter of a generic signature (A, B, K, V)
};

struct Type {
  TypeKind kind = TypeKind::kDyn;
  std::vector<Type> params;  // list: element; map: key, value
  char name = 0;             // kParam

  static Type Of(TypeKind k) { return Type{k, {}, 0}; }
  static Type List(Type elem) { return Type{TypeKind::kList, {std::move(elem)}, 0}; }
  static Type Map(Type k, Type v) { return Type{TypeKind::kMap, {std::move(k), std::move(v)}, 0}; }
  bool IsDynLike() const { return kind == TypeKind::kDyn || kind == TypeKind::kAny || kind == TypeKind::kError; }
  bool operator==(const Type&) const = default;

  // cel-go's FormatCELType: "int", "list(string)", "map(string, int)", "kubernetes.Quantity".
  std::string String() const;
};

// Parses a signature type: int uint double bool string bytes null_type dyn any type
// quantity semver device, list(T), map(K, V), and parameters A B K V.
Type ParseType(std::string_view text);

using TypeBindings = std::map<char, Type>;

// Whether an argument of type `arg` may be passed for `param`, binding parameters.
bool Unify(const Type& param, const Type& arg, TypeBindings& bindings);
// `t` with bound parameters substituted (unbound ones become dyn).
Type Substitute(const Type& t, const TypeBindings& bindings);

// Whether a runtime value may be passed for `param` (kinds only; element types of
// lists and maps are checked by the functions that care).
bool MatchesValue(const Type& param, const Value& v);

}  // namespace ksched::cel
