// Evaluation nodes. Costs follow cel-go's runtime cost tracker
// (interpreter/runtimecost.go): 1 per identifier and per field/index qualifier, 0 for
// constants, a call's cost from library.h, 10 per list and 30 per map created, and a
// comprehension is charged what cel-go's expansion of the macro into a fold would
// cost (parser/macro.go: loop condition, step and result per iteration).
#include "pkg/cel/eval.h"

#include <array>

namespace ksched::cel {
namespace {

Value Cancelled() { return CostLimitExceeded(); }

class ConstNode final : public Node {
 public:
  explicit ConstNode(const Constant& c) : storage_(c.s) {
    switch (c.kind) {
      case ConstKind::kNull: value_ = Value::Null(); break;
      case ConstKind::kBool: value_ = Value::Bool(c.b); break;
      case ConstKind::kInt: value_ = Value::Int(c.i); break;
      case ConstKind::kUint: value_ = Value::Uint(c.u); break;
      case ConstKind::kDouble: value_ = Value::Double(c.d); break;
      case ConstKind::kString: value_ = Value::StringView(storage_); break;
      case ConstKind::kBytes: value_ = Value::BytesView(storage_); break;
    }
  }
  Value Eval(EvalCtx&) const override { return value_; }

 private:
  std::string storage_;  // never modified after value_ views it
  Value value_;
};

class TypeConstNode final : public Node {
 public:
  explicit TypeConstNode(std::string_view name) : value_(Value::Type(name)) {}
  Value Eval(EvalCtx&) const override { return value_; }

 private:
  Value value_;
};

class SlotNode final : public Node {
 public:
  explicit SlotNode(int slot) : slot_(slot) {}
  Value Eval(EvalCtx& ctx) const override {
    ctx.Charge(1);
    return ctx.slots[slot_];
  }

 private:
  int slot_;
};

class DeviceNode final : public Node {
 public:
  Value Eval(EvalCtx& ctx) const override {
    ctx.Charge(1);
    return Value::DeviceView(ValueKind::kDevice);
  }
};

Value SelectField(EvalCtx& ctx, const Value& v, std::string_view field, bool test_only) {
  if (v.IsError()) return v;
  if (v.kind() == ValueKind::kDevice) {
    if (test_only) return Value::Bool(true);  // every declared field is always set
    if (field == "driver") return Value::StringView(ctx.driver);
    if (field == "attributes") return Value::DeviceView(ValueKind::kDeviceAttrs);
    if (field == "capacity") return Value::DeviceView(ValueKind::kDeviceCaps);
    if (field == "allowMultipleAllocations") return Value::Bool(ctx.device->allow_multiple_allocations);
    return Value::Error("no such key: " + std::string(field));
  }
  if (v.IsMapLike()) {
    Value key = Value::StringView(field);
    if (test_only) return InValue(ctx, key, v);
    bool found = false;
    Value out = MapFind(ctx, v, key, found);
    if (!found) return NoSuchKey(key);
    return out;
  }
  return NoSuchOverload();
}

class SelectNode final : public Node {
 public:
  SelectNode(NodePtr operand, std::string field, bool test_only)
      : operand_(std::move(operand)), field_(std::move(field)), test_only_(test_only) {}
  Value Eval(EvalCtx& ctx) const override {
    Value v = operand_->Eval(ctx);
    if (!test_only_) ctx.Charge(1);
    return SelectField(ctx, v, field_, test_only_);
  }

 private:
  NodePtr operand_;
  std::string field_;
  bool test_only_;
};

class DomainNode final : public Node {
 public:
  DomainNode(bool capacity, std::string domain) : capacity_(capacity), domain_(std::move(domain)) {}
  Value Eval(EvalCtx& ctx) const override {
    ctx.Charge(3);  // device, .attributes, [domain]
    return Value::DeviceView(capacity_ ? ValueKind::kCapDomain : ValueKind::kAttrDomain, domain_);
  }

 private:
  bool capacity_;
  std::string domain_;
};

class DeviceLookupNode final : public Node {
 public:
  DeviceLookupNode(bool capacity, std::string domain, std::string id)
      : capacity_(capacity), domain_(std::move(domain)), id_(std::move(id)) {}
  Value Eval(EvalCtx& ctx) const override {
    ctx.Charge(4);  // device, .attributes, [domain], .id
    if (capacity_) {
      const api::DeviceCapacity* c = FindCapacity(ctx, domain_, id_);
      if (c == nullptr) return Value::Error("no such key: " + id_);
      return Value::Quantity(c->value.ExactMilli());
    }
    const api::DeviceAttribute* a = FindAttribute(ctx, domain_, id_);
    if (a == nullptr) return Value::Error("no such key: " + id_);
    return AttributeValue(*a);
  }

 private:
  bool capacity_;
  std::string domain_, id_;
};

class CallNode final : public Node {
 public:
  CallNode(std::vector<const Overload*> candidates, std::vector<NodePtr> args)
      : candidates_(std::move(candidates)), args_(std::move(args)) {}
  Value Eval(EvalCtx& ctx) const override {
    std::array<Value, 4> inline_args;
    std::vector<Value> heap_args;
    Value* args = inline_args.data();
    if (args_.size() > inline_args.size()) {
      heap_args.resize(args_.size());
      args = heap_args.data();
    }
    for (size_t i = 0; i < args_.size(); ++i) {
      args[i] = args_[i]->Eval(ctx);
      if (ctx.cancelled) return Cancelled();
    }
    for (size_t i = 0; i < args_.size(); ++i) {
      if (args[i].IsError()) return args[i];
    }
    for (const Overload* o : candidates_) {
      bool match = true;
      for (size_t i = 0; i < args_.size() && match; ++i) match = MatchesValue(o->params[i], args[i]);
      if (!match) continue;
      ctx.Charge(o->cost != nullptr ? o->cost(ctx, args) : 1);
      if (ctx.cancelled) return Cancelled();
      Value result = o->fn(ctx, args);
      if (ctx.cancelled) return Cancelled();  // it refused to build an unaffordable value
      return result;
    }
    return NoSuchOverload();
  }

 private:
  std::vector<const Overload*> candidates_;
  std::vector<NodePtr> args_;
};

// && and || are commutative over errors: false && error == false, true || error ==
// true (cel-spec langdef "Logical Operators").
template <bool kIsAnd>
class LogicNode final : public Node {
 public:
  LogicNode(NodePtr a, NodePtr b) : a_(std::move(a)), b_(std::move(b)) {}
  Value Eval(EvalCtx& ctx) const override {
    Value a = a_->Eval(ctx);
    if (ctx.cancelled) return Cancelled();
    if (a.kind() == ValueKind::kBool && a.AsBool() != kIsAnd) return a;
    Value b = b_->Eval(ctx);
    if (ctx.cancelled) return Cancelled();
    if (b.kind() == ValueKind::kBool && b.AsBool() != kIsAnd) return b;
    if (a.IsError()) return a;
    if (b.IsError()) return b;
    if (a.kind() != ValueKind::kBool || b.kind() != ValueKind::kBool) return NoSuchOverload();
    return Value::Bool(kIsAnd);
  }

 private:
  NodePtr a_, b_;
};

class TernaryNode final : public Node {
 public:
  TernaryNode(NodePtr c, NodePtr t, NodePtr f) : c_(std::move(c)), t_(std::move(t)), f_(std::move(f)) {}
  Value Eval(EvalCtx& ctx) const override {
    Value c = c_->Eval(ctx);
    if (ctx.cancelled) return Cancelled();
    if (c.IsError()) return c;
    if (c.kind() != ValueKind::kBool) return NoSuchOverload();
    return c.AsBool() ? t_->Eval(ctx) : f_->Eval(ctx);
  }

 private:
  NodePtr c_, t_, f_;
};

class ListNode final : public Node {
 public:
  explicit ListNode(std::vector<NodePtr> elems) : elems_(std::move(elems)) {}
  Value Eval(EvalCtx& ctx) const override {
    std::vector<Value> out;
    out.reserve(elems_.size());
    for (const NodePtr& e : elems_) {
      out.push_back(e->Eval(ctx));
      if (out.back().IsError()) return out.back();
    }
    ctx.Charge(kListCreateCost);
    return Value::List(std::move(out));
  }

 private:
  std::vector<NodePtr> elems_;
};

class MapNode final : public Node {
 public:
  explicit MapNode(std::vector<NodePtr> kv) : kv_(std::move(kv)) {}
  Value Eval(EvalCtx& ctx) const override {
    MapValue out;
    for (size_t i = 0; i + 1 < kv_.size(); i += 2) {
      Value k = kv_[i]->Eval(ctx);
      if (k.IsError()) return k;
      Value v = kv_[i + 1]->Eval(ctx);
      if (v.IsError()) return v;
      ValueKind kk = k.kind();
      if (kk != ValueKind::kString && kk != ValueKind::kInt && kk != ValueKind::kUint && kk != ValueKind::kBool) {
        return Value::Error("unsupported key type");
      }
      if (out.Find(k) != nullptr) return Value::Error("Failed with repeated key");
      out.entries.emplace_back(std::move(k), std::move(v));
    }
    ctx.Charge(kMapCreateCost);
    return Value::Map(std::move(out));
  }

 private:
  std::vector<NodePtr> kv_;
};

// What a comprehension iterates: a list's (index, element) pairs are made as they are
// visited, since `exists` may stop at the first of a million; a map's are copied (maps
// come from literals and the device, both small).
class IterationRange {
 public:
  explicit IterationRange(const std::vector<Value>* list) : list_(list) {}
  explicit IterationRange(std::vector<std::pair<Value, Value>> entries) : entries_(std::move(entries)) {}
  size_t size() const { return list_ != nullptr ? list_->size() : entries_.size(); }
  std::pair<Value, Value> operator[](size_t i) const {
    if (list_ != nullptr) return {Value::Int(static_cast<int64_t>(i)), (*list_)[i]};
    return entries_[i];
  }

 private:
  const std::vector<Value>* list_ = nullptr;  // the range Value keeps it alive
  std::vector<std::pair<Value, Value>> entries_;
};

class ComprehensionNode final : public Node {
 public:
  explicit ComprehensionNode(Comprehension c) : c_(std::move(c)) {}

  Value Eval(EvalCtx& ctx) const override {
    Value range = c_.range->Eval(ctx);
    if (ctx.cancelled) return Cancelled();
    if (range.IsError()) return range;
    bool is_list = range.kind() == ValueKind::kList;
    std::vector<std::pair<Value, Value>> map_entries;
    if (!is_list && !Entries(ctx, range, map_entries)) return NoSuchOverload();
    if (ctx.cancelled) return Cancelled();
    const IterationRange entries = is_list ? IterationRange(&range.AsList()) : IterationRange(std::move(map_entries));
    switch (c_.kind) {
      case MacroKind::kAll:
      case MacroKind::kExists: return Quantifier(ctx, entries, is_list, c_.kind == MacroKind::kAll);
      case MacroKind::kExistsOne: return ExistsOne(ctx, entries, is_list);
      default: return MapOrFilter(ctx, entries, is_list);
    }
  }

 private:
  // Binds the iteration variables: one variable ranges over list elements or map
  // keys; two range over (index, element) or (key, value).
  void Bind(EvalCtx& ctx, const std::pair<Value, Value>& e, bool is_list) const {
    if (c_.slot2 >= 0) {
      ctx.slots[c_.slot1] = e.first;
      ctx.slots[c_.slot2] = e.second;
    } else {
      ctx.slots[c_.slot1] = is_list ? e.second : e.first;
    }
  }

  Value Quantifier(EvalCtx& ctx, const IterationRange& entries, bool is_list, bool all) const {
    Value accu = Value::Bool(all);
    for (size_t i = 0; i < entries.size(); ++i) {
      const std::pair<Value, Value> e = entries[i];
      // Loop condition @not_strictly_false(accu) (all) or (!accu) (exists).
      ctx.Charge(all ? 2 : 3);
      if (accu.kind() == ValueKind::kBool && accu.AsBool() != all) break;
      Bind(ctx, e, is_list);
      ctx.Charge(1);  // accu in the step
      Value p = c_.body->Eval(ctx);
      if (ctx.cancelled) return Cancelled();
      if (p.kind() == ValueKind::kBool) {
        if (p.AsBool() != all) accu = p;
      } else if (!accu.IsError()) {
        accu = p.IsError() ? p : NoSuchOverload();
      }
    }
    ctx.Charge(1);  // the result
    if (ctx.cancelled) return Cancelled();
    return accu;
  }

  Value ExistsOne(EvalCtx& ctx, const IterationRange& entries, bool is_list) const {
    int64_t count = 0;
    for (size_t i = 0; i < entries.size(); ++i) {
      const std::pair<Value, Value> e = entries[i];
      Bind(ctx, e, is_list);
      Value p = c_.body->Eval(ctx);
      if (ctx.cancelled) return Cancelled();
      if (p.IsError()) return p;
      if (p.kind() != ValueKind::kBool) return NoSuchOverload();
      ctx.Charge(p.AsBool() ? 2 : 1);
      count += p.AsBool();
    }
    ctx.Charge(2);
    if (ctx.cancelled) return Cancelled();
    return Value::Bool(count == 1);
  }

  Value MapOrFilter(EvalCtx& ctx, const IterationRange& entries, bool is_list) const {
    ctx.Charge(kListCreateCost);  // the accumulator's initial []
    std::vector<Value> out;
    bool filter = c_.kind == MacroKind::kFilter || c_.body2 != nullptr;
    for (size_t i = 0; i < entries.size(); ++i) {
      const std::pair<Value, Value> e = entries[i];
      Bind(ctx, e, is_list);
      if (filter) {
        Value keep = c_.body->Eval(ctx);
        if (ctx.cancelled) return Cancelled();
        if (keep.IsError()) return keep;
        if (keep.kind() != ValueKind::kBool) return NoSuchOverload();
        if (!keep.AsBool()) {
          ctx.Charge(1);
          continue;
        }
      }
      Value v;
      if (c_.kind == MacroKind::kFilter) {
        v = ctx.slots[c_.slot1];
        ctx.Charge(1);
      } else {
        v = (c_.body2 != nullptr ? c_.body2 : c_.body)->Eval(ctx);
        if (ctx.cancelled) return Cancelled();
        if (v.IsError()) return v;
      }
      ctx.Charge(1 + kListCreateCost + 1);  // accu + [v]
      out.push_back(std::move(v));
    }
    ctx.Charge(1);
    if (ctx.cancelled) return Cancelled();
    return Value::List(std::move(out));
  }

  Comprehension c_;
};

class BindNode final : public Node {
 public:
  BindNode(int slot, NodePtr init, NodePtr body) : slot_(slot), init_(std::move(init)), body_(std::move(body)) {}
  Value Eval(EvalCtx& ctx) const override {
    // ext/bindings.go expands cel.bind into a comprehension over an empty list whose
    // accumulator is the variable.
    ctx.Charge(kListCreateCost);
    ctx.slots[slot_] = init_->Eval(ctx);
    if (ctx.cancelled) return Cancelled();
    return body_->Eval(ctx);
  }

 private:
  int slot_;
  NodePtr init_, body_;
};

}  // namespace

NodePtr MakeConst(const Constant& c) { return std::make_unique<ConstNode>(c); }
NodePtr MakeTypeConst(std::string_view static_name) { return std::make_unique<TypeConstNode>(static_name); }
NodePtr MakeSlot(int slot) { return std::make_unique<SlotNode>(slot); }
NodePtr MakeDevice() { return std::make_unique<DeviceNode>(); }
NodePtr MakeSelect(NodePtr operand, std::string field) {
  return std::make_unique<SelectNode>(std::move(operand), std::move(field), false);
}
NodePtr MakeHas(NodePtr operand, std::string field) {
  return std::make_unique<SelectNode>(std::move(operand), std::move(field), true);
}
NodePtr MakeDomain(bool capacity, std::string domain) { return std::make_unique<DomainNode>(capacity, std::move(domain)); }
NodePtr MakeDeviceLookup(bool capacity, std::string domain, std::string id) {
  return std::make_unique<DeviceLookupNode>(capacity, std::move(domain), std::move(id));
}
NodePtr MakeCall(std::vector<const Overload*> candidates, std::vector<NodePtr> args) {
  return std::make_unique<CallNode>(std::move(candidates), std::move(args));
}
NodePtr MakeAnd(NodePtr a, NodePtr b) { return std::make_unique<LogicNode<true>>(std::move(a), std::move(b)); }
NodePtr MakeOr(NodePtr a, NodePtr b) { return std::make_unique<LogicNode<false>>(std::move(a), std::move(b)); }
NodePtr MakeTernary(NodePtr c, NodePtr t, NodePtr f) {
  return std::make_unique<TernaryNode>(std::move(c), std::move(t), std::move(f));
}
NodePtr MakeList(std::vector<NodePtr> elems) { return std::make_unique<ListNode>(std::move(elems)); }
NodePtr MakeMap(std::vector<NodePtr> kv) { return std::make_unique<MapNode>(std::move(kv)); }
NodePtr MakeComprehension(Comprehension c) { return std::make_unique<ComprehensionNode>(std::move(c)); }
NodePtr MakeBind(int slot, NodePtr init, NodePtr body) {
  return std::make_unique<BindNode>(slot, std::move(init), std::move(body));
}

}  // namespace ksched::cel
