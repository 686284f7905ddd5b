#include "pkg/cel/value.h"

#include <cmath>

namespace ksched::cel {
namespace {

// CEL map keys are int, uint, bool or string; int and uint keys with the same value
// are the same key (cel-spec: heterogeneous numeric equality).
bool SameKey(const Value& a, const Value& b) {
  ValueKind ka = a.kind(), kb = b.kind();
  if (ka == ValueKind::kString && kb == ValueKind::kString) return a.AsString() == b.AsString();
  if (ka == ValueKind::kBool && kb == ValueKind::kBool) return a.AsBool() == b.AsBool();
  auto numeric = [](ValueKind k) { return k == ValueKind::kInt || k == ValueKind::kUint || k == ValueKind::kDouble; };
  if (!numeric(ka) || !numeric(kb)) return false;
  if (ka == ValueKind::kDouble || kb == ValueKind::kDouble) {
    double x = ka == ValueKind::kDouble ? a.AsDouble() : ka == ValueKind::kInt ? static_cast<double>(a.AsInt()) : static_cast<double>(a.AsUint());
    double y = kb == ValueKind::kDouble ? b.AsDouble() : kb == ValueKind::kInt ? static_cast<double>(b.AsInt()) : static_cast<double>(b.AsUint());
    return x == y;
  }
  if (ka == kb) return ka == ValueKind::kInt ? a.AsInt() == b.AsInt() : a.AsUint() == b.AsUint();
  const Value& i = ka == ValueKind::kInt ? a : b;
  const Value& u = ka == ValueKind::kInt ? b : a;
  return i.AsInt() >= 0 && static_cast<uint64_t>(i.AsInt()) == u.AsUint();
}

}  // namespace

Value Value::Owned(ValueKind kind, std::string s) {
  Value v(kind);
  auto owned = std::make_shared<const std::string>(std::move(s));
  v.u_.s = {owned->data(), owned->size()};
  v.owner_ = std::move(owned);
  return v;
}

Value Value::List(std::vector<Value> elems) {
  Value v(ValueKind::kList);
  v.owner_ = std::make_shared<const std::vector<Value>>(std::move(elems));
  return v;
}

Value Value::Map(MapValue map) {
  Value v(ValueKind::kMap);
  v.owner_ = std::make_shared<const MapValue>(std::move(map));
  return v;
}

Value Value::Semver(api::SemVersion s) {
  Value v(ValueKind::kSemver);
  auto owned = std::make_shared<const api::SemVersion>(std::move(s));
  v.u_.p = owned.get();
  v.owner_ = std::move(owned);
  return v;
}

bool Value::IsMapLike() const {
  switch (kind_) {
    case ValueKind::kMap:
    case ValueKind::kDeviceAttrs:
    case ValueKind::kDeviceCaps:
    case ValueKind::kAttrDomain:
    case ValueKind::kCapDomain:
      return true;
    default:
      return false;
  }
}

const Value* MapValue::Find(const Value& key) const {
  for (const auto& [k, v] : entries) {
    if (SameKey(k, key)) return &v;
  }
  return nullptr;
}

std::string_view TypeName(const Value& v) {
  switch (v.kind()) {
    case ValueKind::kNull: return "null_type";
    case ValueKind::kBool: return "bool";
    case ValueKind::kInt: return "int";
    case ValueKind::kUint: return "uint";
    case ValueKind::kDouble: return "double";
    case ValueKind::kString: return "string";
    case ValueKind::kBytes: return "bytes";
    case ValueKind::kList: return "list";
    case ValueKind::kMap:
    case ValueKind::kDeviceAttrs:
    case ValueKind::kDeviceCaps:
    case ValueKind::kAttrDomain:
    case ValueKind::kCapDomain:
      return "map";
    case ValueKind::kQuantity: return "kubernetes.Quantity";
    case ValueKind::kSemver: return "kubernetes.Semver";
    case ValueKind::kType: return "type";
    case ValueKind::kError: return "*error*";
    case ValueKind::kDevice: return "kubernetes.DRADevice";
  }
  return "dyn";
}

}  // namespace ksched::cel
