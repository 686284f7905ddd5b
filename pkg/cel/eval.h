// The evaluator: a compiled expression is a tree of nodes, each evaluating itself
// against an EvalCtx and charging cel-go's runtime cost for what it does.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "pkg/cel/ast.h"
#include "pkg/cel/library.h"
#include "pkg/cel/runtime.h"

namespace ksched::cel {

class Node {
 public:
  virtual ~Node() = default;
  virtual Value Eval(EvalCtx& ctx) const = 0;
};
using NodePtr = std::unique_ptr<const Node>;

// A constant; `storage` keeps the bytes a string/bytes Value views alive.
NodePtr MakeConst(const Constant& c);
NodePtr MakeTypeConst(std::string_view static_name);
NodePtr MakeSlot(int slot);
NodePtr MakeDevice();
// operand.field: map lookup ("no such key: field" when absent) or a device field.
NodePtr MakeSelect(NodePtr operand, std::string field);
// has(operand.field).
NodePtr MakeHas(NodePtr operand, std::string field);
// device.attributes[domain] / device.capacity[domain] with a constant domain.
NodePtr MakeDomain(bool capacity, std::string domain);
// device.attributes[domain].id (or ["id"]) with constants: one map lookup, no
// allocation.
NodePtr MakeDeviceLookup(bool capacity, std::string domain, std::string id);
NodePtr MakeCall(std::vector<const Overload*> candidates, std::vector<NodePtr> args);
NodePtr MakeAnd(NodePtr a, NodePtr b);
NodePtr MakeOr(NodePtr a, NodePtr b);
NodePtr MakeTernary(NodePtr cond, NodePtr t, NodePtr f);
NodePtr MakeList(std::vector<NodePtr> elems);
NodePtr MakeMap(std::vector<NodePtr> keys_and_values);

struct Comprehension {
  MacroKind kind = MacroKind::kAll;
  int slot1 = -1;  // the (first) iteration variable
  int slot2 = -1;  // the second variable of a two-variable comprehension, or -1
  NodePtr range;
  NodePtr body;   // predicate / transform / map's filter when `body2` is set
  NodePtr body2;  // map(x, filter, transform): the transform
};
NodePtr MakeComprehension(Comprehension c);
NodePtr MakeBind(int slot, NodePtr init, NodePtr body);

}  // namespace ksched::cel
