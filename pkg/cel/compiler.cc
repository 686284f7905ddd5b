// The checker follows cel-go's checker (checker/checker.go, checker/errors.go) for the
// errors a selector author is likely to meet: undeclared identifiers and functions,
// undefined fields of `device`, no matching overload, mixed-type list and map
// literals (cel.HomogeneousAggregateLiterals) and bad comprehension ranges. Types it
// cannot know (attribute values, dyn) check as dyn, as in cel-go.
#include "pkg/cel/compiler.h"

#include <utility>
#include <vector>

#include "pkg/cel/parser.h"

namespace ksched::cel {
namespace {

struct Typed {
  Type type;
  NodePtr node;
};

Type T(TypeKind k) { return Type::Of(k); }
const Type& AttributesType() {
  static const Type t = Type::Map(T(TypeKind::kString), Type::Map(T(TypeKind::kString), T(TypeKind::kAny)));
  return t;
}
const Type& CapacityType() {
  static const Type t = Type::Map(T(TypeKind::kString), Type::Map(T(TypeKind::kString), T(TypeKind::kQuantity)));
  return t;
}

// Fields of kubernetes.DRADevice.
bool DeviceFieldType(std::string_view field, Type& out) {
  if (field == "driver") out = T(TypeKind::kString);
  else if (field == "attributes") out = AttributesType();
  else if (field == "capacity") out = CapacityType();
  else if (field == "allowMultipleAllocations") out = T(TypeKind::kBool);
  else return false;
  return true;
}

// Identifiers that name types (type(x) == int).
const char* TypeIdent(std::string_view name) {
  static constexpr const char* kNames[] = {"int", "uint", "double", "bool", "string", "bytes",
                                           "list", "map", "null_type", "type"};
  for (const char* n : kNames) {
    if (name == n) return n;
  }
  return nullptr;
}

// The most general of two types where either may stand for the other (ternary
// branches, list elements); false when they are incompatible.
bool Join(const Type& a, const Type& b, Type& out) {
  if (a == b) {
    out = a;
    return true;
  }
  if (a.kind == TypeKind::kError || b.kind == TypeKind::kError) {
    out = T(TypeKind::kError);
    return true;
  }
  if (a.kind == TypeKind::kAny || b.kind == TypeKind::kAny) {
    out = T(TypeKind::kAny);
    return true;
  }
  if (a.IsDynLike() || b.IsDynLike()) {
    out = T(TypeKind::kDyn);
    return true;
  }
  if (a.kind == b.kind && (a.kind == TypeKind::kList || a.kind == TypeKind::kMap)) {
    out = a;
    for (size_t i = 0; i < a.params.size(); ++i) {
      if (!Join(a.params[i], b.params[i], out.params[i])) return false;
    }
    return true;
  }
  return false;
}

class Compiler {
 public:
  explicit Compiler(std::vector<Issue>& issues) : issues_(issues) {}

  Typed Compile(const Expr& e) {
    switch (e.kind) {
      case ExprKind::kConst: return CompileConst(e);
      case ExprKind::kIdent: return CompileIdent(e);
      case ExprKind::kSelect: return CompileSelect(e);
      case ExprKind::kCall: return CompileCall(e);
      case ExprKind::kList: return CompileList(e);
      case ExprKind::kMap: return CompileMap(e);
      case ExprKind::kMacro: return CompileMacro(e);
    }
    return Error(e.offset, "unknown expression");
  }

  int slots() const { return max_slots_; }

 private:
  struct ScopeVar {
    std::string name;
    Type type;
    int slot;
  };

  Typed Error(int32_t offset, std::string message) {
    issues_.push_back(Issue{offset, std::move(message)});
    return Typed{T(TypeKind::kError), nullptr};
  }

  const ScopeVar* Lookup(std::string_view name) const {
    for (auto it = scope_.rbegin(); it != scope_.rend(); ++it) {
      if (it->name == name) return &*it;
    }
    return nullptr;
  }
  int Push(std::string name, Type type) {
    int slot = static_cast<int>(scope_.size());
    scope_.push_back(ScopeVar{std::move(name), std::move(type), slot});
    max_slots_ = std::max(max_slots_, slot + 1);
    return slot;
  }
  void Pop() { scope_.pop_back(); }

  bool IsDeviceIdent(const Expr& e) const {
    return e.kind == ExprKind::kIdent && e.name == "device" && Lookup("device") == nullptr;
  }

  // device.attributes["domain"] or device.capacity["domain"] with a constant domain:
  // sets `capacity` and `domain`.
  bool IsConstDomain(const Expr& e, bool& capacity, std::string& domain) const {
    if (e.kind != ExprKind::kCall || e.name != "_[_]" || e.target != nullptr || e.args.size() != 2) return false;
    const Expr& m = *e.args[0];
    const Expr& k = *e.args[1];
    if (m.kind != ExprKind::kSelect || !IsDeviceIdent(*m.target)) return false;
    if (m.name != "attributes" && m.name != "capacity") return false;
    if (k.kind != ExprKind::kConst || k.constant.kind != ConstKind::kString) return false;
    capacity = m.name == "capacity";
    domain = k.constant.s;
    return true;
  }

  Typed CompileConst(const Expr& e) {
    static constexpr TypeKind kKinds[] = {TypeKind::kNull, TypeKind::kBool, TypeKind::kInt, TypeKind::kUint,
                                          TypeKind::kDouble, TypeKind::kString, TypeKind::kBytes};
    return Typed{T(kKinds[static_cast<int>(e.constant.kind)]), MakeConst(e.constant)};
  }

  Typed CompileIdent(const Expr& e) {
    if (const ScopeVar* v = Lookup(e.name)) return Typed{v->type, MakeSlot(v->slot)};
    if (e.name == "device") return Typed{T(TypeKind::kDevice), MakeDevice()};
    if (const char* type_name = TypeIdent(e.name)) return Typed{T(TypeKind::kType), MakeTypeConst(type_name)};
    return Error(e.offset, "undeclared reference to '" + e.name + "' (in container '')");
  }

  // The type of `operand.field`, or an error.
  bool FieldType(const Expr& e, const Type& operand, Type& out) {
    switch (operand.kind) {
      case TypeKind::kDevice:
        if (DeviceFieldType(e.name, out)) return true;
        Error(e.offset, "undefined field '" + e.name + "'");
        return false;
      case TypeKind::kMap:
        out = operand.params[1];
        return true;
      case TypeKind::kDyn:
      case TypeKind::kAny:
      case TypeKind::kError:
        out = T(TypeKind::kDyn);
        return true;
      default:
        Error(e.offset, "type '" + operand.String() + "' does not support field selection");
        return false;
    }
  }

  Typed CompileSelect(const Expr& e) {
    bool capacity = false;
    std::string domain;
    if (IsConstDomain(*e.target, capacity, domain)) {
      Type value = capacity ? T(TypeKind::kQuantity) : T(TypeKind::kAny);
      return Typed{value, MakeDeviceLookup(capacity, domain, e.name)};
    }
    Typed operand = Compile(*e.target);
    Type out;
    if (!FieldType(e, operand.type, out)) return Typed{T(TypeKind::kError), nullptr};
    return Typed{out, operand.node ? MakeSelect(std::move(operand.node), e.name) : nullptr};
  }

  static std::string Signature(const std::vector<Type>& args, bool member) {
    std::string out;
    size_t first = 0;
    if (member) {
      out = args[0].String() + ".";
      first = 1;
    }
    out += "(";
    for (size_t i = first; i < args.size(); ++i) {
      if (i > first) out += ", ";
      out += args[i].String();
    }
    return out + ")";
  }

  Typed CompileCall(const Expr& e) {
    // Fast paths of the device variable: device.attributes["d"] and
    // device.attributes["d"]["id"].
    if (e.name == "_[_]" && e.target == nullptr && e.args.size() == 2) {
      bool capacity = false;
      std::string domain;
      if (IsConstDomain(e, capacity, domain)) return Typed{Type::Map(T(TypeKind::kString), capacity ? T(TypeKind::kQuantity) : T(TypeKind::kAny)), MakeDomain(capacity, domain)};
      const Expr& key = *e.args[1];
      if (IsConstDomain(*e.args[0], capacity, domain) && key.kind == ExprKind::kConst &&
          key.constant.kind == ConstKind::kString) {
        return Typed{capacity ? T(TypeKind::kQuantity) : T(TypeKind::kAny), MakeDeviceLookup(capacity, domain, key.constant.s)};
      }
    }
    std::string function = e.name;
    const Expr* target = e.target.get();
    // Namespaced functions (sets.contains) parse as member calls on an identifier.
    if (target != nullptr && target->kind == ExprKind::kIdent && Lookup(target->name) == nullptr &&
        target->name != "device" && !FindOverloads(target->name + "." + e.name).empty()) {
      function = target->name + "." + e.name;
      target = nullptr;
    }
    bool member = target != nullptr;
    std::vector<Typed> args;
    if (member) args.push_back(Compile(*target));
    for (const ExprPtr& a : e.args) args.push_back(Compile(*a));
    std::vector<Type> types;
    bool failed = false;
    for (const Typed& a : args) {
      types.push_back(a.type);
      failed |= a.node == nullptr;
    }
    if (function == "_&&_" || function == "_||_") return CompileLogic(e, function, std::move(args), failed);
    if (function == "_?_:_") return CompileTernary(e, std::move(args), failed);

    std::vector<const Overload*> all = FindOverloads(function);
    if (all.empty()) return Error(e.offset, "undeclared reference to '" + function + "' (in container '')");
    std::vector<const Overload*> matched;
    Type result;
    bool first = true;
    for (const Overload* o : all) {
      if (o->member != member || o->params.size() != types.size()) continue;
      TypeBindings bindings;
      bool ok = true;
      for (size_t i = 0; i < types.size() && ok; ++i) ok = Unify(o->params[i], types[i], bindings);
      if (!ok) continue;
      matched.push_back(o);
      Type r = Substitute(o->result, bindings);
      if (first) result = r;
      else if (!(result == r)) result = T(TypeKind::kDyn);
      first = false;
    }
    if (matched.empty()) {
      return Error(e.offset, "found no matching overload for '" + function + "' applied to '" + Signature(types, member) + "'");
    }
    if (failed) return Typed{result, nullptr};
    std::vector<NodePtr> nodes;
    for (Typed& a : args) nodes.push_back(std::move(a.node));
    return Typed{result, MakeCall(std::move(matched), std::move(nodes))};
  }

  static bool IsBoolish(const Type& t) { return t.kind == TypeKind::kBool || t.IsDynLike(); }

  Typed CompileLogic(const Expr& e, const std::string& function, std::vector<Typed> args, bool failed) {
    if (!IsBoolish(args[0].type) || !IsBoolish(args[1].type)) {
      return Error(e.offset, "found no matching overload for '" + function + "' applied to '" +
                                 Signature({args[0].type, args[1].type}, false) + "'");
    }
    if (failed) return Typed{T(TypeKind::kBool), nullptr};
    NodePtr n = function == "_&&_" ? MakeAnd(std::move(args[0].node), std::move(args[1].node))
                                   : MakeOr(std::move(args[0].node), std::move(args[1].node));
    return Typed{T(TypeKind::kBool), std::move(n)};
  }

  Typed CompileTernary(const Expr& e, std::vector<Typed> args, bool failed) {
    Type joined;
    if (!IsBoolish(args[0].type) || !Join(args[1].type, args[2].type, joined)) {
      return Error(e.offset, "found no matching overload for '_?_:_' applied to '" +
                                 Signature({args[0].type, args[1].type, args[2].type}, false) + "'");
    }
    if (failed) return Typed{joined, nullptr};
    return Typed{joined, MakeTernary(std::move(args[0].node), std::move(args[1].node), std::move(args[2].node))};
  }

  // cel.HomogeneousAggregateLiterals: all elements (keys, values) of one type.
  bool Homogeneous(const std::vector<const Expr*>& exprs, std::vector<Typed>& typed, Type& out) {
    out = T(TypeKind::kDyn);
    bool have = false, ok = true;
    for (size_t i = 0; i < typed.size(); ++i) {
      const Type& t = typed[i].type;
      if (t.kind == TypeKind::kError) continue;
      if (!have) {
        out = t;
        have = true;
        continue;
      }
      Type joined;
      if (t.IsDynLike() || out.IsDynLike() || !Join(out, t, joined) || !(joined == out)) {
        if (t.IsDynLike() || out.IsDynLike()) continue;  // dyn(x) opts out of the check
        Error(exprs[i]->offset, "expected type '" + out.String() + "' but found '" + t.String() + "'");
        ok = false;
      }
    }
    return ok;
  }

  Typed CompileList(const Expr& e) {
    std::vector<Typed> elems;
    std::vector<const Expr*> exprs;
    bool failed = false;
    for (const ExprPtr& a : e.args) {
      elems.push_back(Compile(*a));
      exprs.push_back(a.get());
      failed |= elems.back().node == nullptr;
    }
    Type elem;
    if (!Homogeneous(exprs, elems, elem)) return Typed{T(TypeKind::kError), nullptr};
    if (failed) return Typed{Type::List(elem), nullptr};
    std::vector<NodePtr> nodes;
    for (Typed& t : elems) nodes.push_back(std::move(t.node));
    return Typed{Type::List(elem), MakeList(std::move(nodes))};
  }

  Typed CompileMap(const Expr& e) {
    std::vector<Typed> keys, values;
    std::vector<const Expr*> key_exprs, value_exprs;
    bool failed = false;
    for (size_t i = 0; i + 1 < e.args.size(); i += 2) {
      keys.push_back(Compile(*e.args[i]));
      values.push_back(Compile(*e.args[i + 1]));
      key_exprs.push_back(e.args[i].get());
      value_exprs.push_back(e.args[i + 1].get());
      failed |= keys.back().node == nullptr || values.back().node == nullptr;
    }
    Type k, v;
    bool ok = Homogeneous(key_exprs, keys, k);
    ok = Homogeneous(value_exprs, values, v) && ok;
    if (!ok) return Typed{T(TypeKind::kError), nullptr};
    if (failed) return Typed{Type::Map(k, v), nullptr};
    std::vector<NodePtr> nodes;
    for (size_t i = 0; i < keys.size(); ++i) {
      nodes.push_back(std::move(keys[i].node));
      nodes.push_back(std::move(values[i].node));
    }
    return Typed{Type::Map(k, v), MakeMap(std::move(nodes))};
  }

  Typed CompileMacro(const Expr& e) {
    if (e.macro == MacroKind::kHas) return CompileHas(e);
    if (e.macro == MacroKind::kBind) {
      Typed init = Compile(*e.target);
      int slot = Push(e.name, init.type);
      Typed body = Compile(*e.args[0]);
      Pop();
      if (init.node == nullptr || body.node == nullptr) return Typed{body.type, nullptr};
      return Typed{body.type, MakeBind(slot, std::move(init.node), std::move(body.node))};
    }
    Typed range = Compile(*e.target);
    Type var1, var2;
    const Type& rt = range.type;
    bool two = !e.name2.empty();
    switch (rt.kind) {
      case TypeKind::kList:
        var1 = two ? T(TypeKind::kInt) : rt.params[0];
        var2 = rt.params[0];
        break;
      case TypeKind::kMap:
        var1 = rt.params[0];
        var2 = rt.params[1];
        break;
      case TypeKind::kDyn:
      case TypeKind::kAny:
      case TypeKind::kError:
        var1 = var2 = T(TypeKind::kDyn);
        break;
      default:
        return Error(e.target->offset, "expression of type '" + rt.String() +
                                           "' cannot be range of a comprehension (must be list, map, or dynamic)");
    }
    Comprehension c;
    c.kind = e.macro;
    c.slot1 = Push(e.name, var1);
    if (two) c.slot2 = Push(e.name2, var2);
    std::vector<Typed> bodies;
    for (const ExprPtr& a : e.args) bodies.push_back(Compile(*a));
    if (two) Pop();
    Pop();
    bool failed = range.node == nullptr;
    for (const Typed& b : bodies) failed |= b.node == nullptr;
    Type result = T(TypeKind::kBool);
    // The predicate feeds cel-go's expansion: accu && p, accu || p, p ? ... : ...
    const Typed& p = bodies[0];
    bool predicate = e.macro != MacroKind::kMap || bodies.size() == 2;
    if (predicate && !IsBoolish(p.type)) {
      std::string op = e.macro == MacroKind::kAll ? "_&&_" : e.macro == MacroKind::kExists ? "_||_" : "_?_:_";
      std::string sig = op == "_?_:_" ? "(" + p.type.String() + ", list(dyn), list(dyn))" : "(bool, " + p.type.String() + ")";
      return Error(e.args[0]->offset, "found no matching overload for '" + op + "' applied to '" + sig + "'");
    }
    if (e.macro == MacroKind::kMap) result = Type::List(bodies.back().type);
    if (e.macro == MacroKind::kFilter) result = Type::List(var1);
    if (failed) return Typed{result, nullptr};
    c.range = std::move(range.node);
    c.body = std::move(bodies[0].node);
    if (bodies.size() == 2) c.body2 = std::move(bodies[1].node);
    return Typed{result, MakeComprehension(std::move(c))};
  }

  Typed CompileHas(const Expr& e) {
    Typed operand = Compile(*e.target);
    Type unused;
    if (!FieldType(e, operand.type, unused)) return Typed{T(TypeKind::kError), nullptr};
    if (operand.node == nullptr) return Typed{T(TypeKind::kBool), nullptr};
    return Typed{T(TypeKind::kBool), MakeHas(std::move(operand.node), e.name)};
  }

  std::vector<Issue>& issues_;
  std::vector<ScopeVar> scope_;
  int max_slots_ = 0;
};

}  // namespace

StatusOr<std::unique_ptr<const Program>> CompileProgram(std::string_view expression) {
  std::vector<Issue> issues;
  ExprPtr ast = Parse(expression, issues);
  if (ast == nullptr) return InvalidArgument("compilation failed: " + FormatIssues(expression, std::move(issues)));
  Compiler compiler(issues);
  Typed root = compiler.Compile(*ast);
  if (!issues.empty()) return InvalidArgument("compilation failed: " + FormatIssues(expression, std::move(issues)));
  if (root.type.kind != TypeKind::kBool && root.type.kind != TypeKind::kAny) {
    return InvalidArgument("must evaluate to bool or the unknown type, not " + root.type.String());
  }
  auto program = std::make_unique<Program>();
  program->root = std::move(root.node);
  program->slots = compiler.slots();
  return std::unique_ptr<const Program>(std::move(program));
}

}  // namespace ksched::cel
