#include "pkg/cel/runtime.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace ksched::cel {
namespace {

bool IsNumeric(ValueKind k) { return k == ValueKind::kInt || k == ValueKind::kUint || k == ValueKind::kDouble; }

// -1, 0, 1, or 2 when unordered (NaN).
int CompareNumbers(const Value& a, const Value& b) {
  ValueKind ka = a.kind(), kb = b.kind();
  if (ka == ValueKind::kDouble || kb == ValueKind::kDouble) {
    if (ka == ValueKind::kDouble && kb == ValueKind::kDouble) {
      double x = a.AsDouble(), y = b.AsDouble();
      if (std::isnan(x) || std::isnan(y)) return 2;
      return x < y ? -1 : x > y ? 1 : 0;
    }
    // A double against an integer: compare exactly where the double is integral in
    // range (cel-go common/types/compare.go compares via float64 with range checks).
    bool flip = ka != ValueKind::kDouble;
    const Value& d = flip ? b : a;
    const Value& n = flip ? a : b;
    double x = d.AsDouble();
    if (std::isnan(x)) return 2;
    int r;
    if (n.kind() == ValueKind::kInt) {
      if (x < -9223372036854775808.0) r = -1;
      else if (x >= 9223372036854775808.0) r = 1;
      else {
        double fl = std::floor(x);
        int64_t xi = static_cast<int64_t>(fl);
        if (xi < n.AsInt()) r = -1;
        else if (xi > n.AsInt()) r = 1;
        else r = fl < x ? 1 : 0;
      }
    } else {
      if (x < 0) r = -1;
      else if (x >= 18446744073709551616.0) r = 1;
      else {
        double fl = std::floor(x);
        uint64_t xu = static_cast<uint64_t>(fl);
        if (xu < n.AsUint()) r = -1;
        else if (xu > n.AsUint()) r = 1;
        else r = fl < x ? 1 : 0;
      }
    }
    return flip ? -r : r;
  }
  if (ka == kb) {
    if (ka == ValueKind::kInt) return a.AsInt() < b.AsInt() ? -1 : a.AsInt() > b.AsInt() ? 1 : 0;
    return a.AsUint() < b.AsUint() ? -1 : a.AsUint() > b.AsUint() ? 1 : 0;
  }
  if (ka == ValueKind::kInt) {
    if (a.AsInt() < 0) return -1;
    uint64_t x = static_cast<uint64_t>(a.AsInt());
    return x < b.AsUint() ? -1 : x > b.AsUint() ? 1 : 0;
  }
  return -CompareNumbers(b, a);
}

// Whether a name's domain is `domain` (unqualified names are in the driver's).
bool InDomain(const EvalCtx& ctx, std::string_view name, std::string_view domain) {
  return api::SplitQualifiedName(name, ctx.driver).first == domain;
}

template <typename M>
auto FindQualified(const EvalCtx& ctx, const M& map, std::string_view domain, std::string_view id)
    -> const typename M::mapped_type* {
  if (domain == ctx.driver) {
    auto it = map.find(id);
    if (it != map.end() && id.find('/') == std::string_view::npos) return &it->second;
  }
  // Qualified names "domain/id" sort together after lower_bound(domain).
  for (auto it = map.lower_bound(domain); it != map.end() && it->first.starts_with(domain); ++it) {
    std::string_view name = it->first;
    if (name.size() == domain.size() + 1 + id.size() && name[domain.size()] == '/' &&
        name.substr(domain.size() + 1) == id) {
      return &it->second;
    }
  }
  return nullptr;
}

template <typename M>
std::vector<std::string_view> Domains(const EvalCtx& ctx, const M& map) {
  std::set<std::string_view> seen;
  for (const auto& [name, unused] : map) seen.insert(api::SplitQualifiedName(name, ctx.driver).first);
  return {seen.begin(), seen.end()};
}

template <typename M>
bool HasDomain(const EvalCtx& ctx, const M& map, std::string_view domain) {
  for (const auto& [name, unused] : map) {
    if (InDomain(ctx, name, domain)) return true;
  }
  return false;
}

}  // namespace

Value NoSuchOverload() { return Value::Error("no such overload"); }

Value CostLimitExceeded() { return Value::Error(std::string(kCostLimitExceeded)); }

Value NoSuchKey(const Value& key) {
  std::string k;
  switch (key.kind()) {
    case ValueKind::kString: k = std::string(key.AsString()); break;
    case ValueKind::kInt: k = std::to_string(key.AsInt()); break;
    case ValueKind::kUint: k = std::to_string(key.AsUint()); break;
    case ValueKind::kBool: k = key.AsBool() ? "true" : "false"; break;
    default: k = std::string(TypeName(key)); break;
  }
  return Value::Error("no such key: " + k);
}

const api::DeviceAttribute* FindAttribute(const EvalCtx& ctx, std::string_view domain, std::string_view id) {
  return FindQualified(ctx, ctx.device->attributes, domain, id);
}

const api::DeviceCapacity* FindCapacity(const EvalCtx& ctx, std::string_view domain, std::string_view id) {
  return FindQualified(ctx, ctx.device->capacity, domain, id);
}

Value AttributeValue(const api::DeviceAttribute& attr) {
  struct Visitor {
    Value operator()(int64_t i) const { return Value::Int(i); }
    Value operator()(bool b) const { return Value::Bool(b); }
    Value operator()(const std::string& s) const { return Value::StringView(s); }
    Value operator()(const api::SemVersion& v) const { return Value::SemverView(&v); }
  };
  return std::visit(Visitor{}, attr.value);
}

bool EqualValues(EvalCtx& ctx, const Value& a, const Value& b) {
  ValueKind ka = a.kind(), kb = b.kind();
  if (IsNumeric(ka) && IsNumeric(kb)) return CompareNumbers(a, b) == 0;
  if (a.IsMapLike() && b.IsMapLike()) {
    if (SizeOf(ctx, a) != SizeOf(ctx, b)) return false;
    std::vector<std::pair<Value, Value>> entries;
    Entries(ctx, a, entries);
    for (const auto& [k, v] : entries) {
      if (!ctx.Work(1)) return false;
      bool found = false;
      Value other = MapFind(ctx, b, k, found);
      if (!found || !EqualValues(ctx, v, other)) return false;
    }
    return true;
  }
  if (ka != kb) return false;
  switch (ka) {
    case ValueKind::kNull: return true;
    case ValueKind::kBool: return a.AsBool() == b.AsBool();
    case ValueKind::kString:
    case ValueKind::kBytes:
    case ValueKind::kType:
      return a.AsString() == b.AsString();
    case ValueKind::kList: {
      const auto& x = a.AsList();
      const auto& y = b.AsList();
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i) {
        if (!ctx.Work(1) || !EqualValues(ctx, x[i], y[i])) return false;
      }
      return true;
    }
    case ValueKind::kQuantity: return a.AsQuantity() == b.AsQuantity();
    case ValueKind::kSemver: return a.AsSemver().Compare(b.AsSemver()) == 0;
    case ValueKind::kDevice: return true;
    default: return false;
  }
}

Value Equal(EvalCtx& ctx, const Value& a, const Value& b) {
  if (a.IsError()) return a;
  if (b.IsError()) return b;
  return Value::Bool(EqualValues(ctx, a, b));
}

Value Compare(const Value& a, const Value& b) {
  ValueKind ka = a.kind(), kb = b.kind();
  if (IsNumeric(ka) && IsNumeric(kb)) {
    int c = CompareNumbers(a, b);
    if (c == 2) return Value::Error("NaN values cannot be ordered");
    return Value::Int(c);
  }
  if (ka != kb) return NoSuchOverload();
  switch (ka) {
    case ValueKind::kString:
    case ValueKind::kBytes: {
      int c = a.AsString().compare(b.AsString());
      return Value::Int(c < 0 ? -1 : c > 0 ? 1 : 0);
    }
    case ValueKind::kBool: return Value::Int(a.AsBool() == b.AsBool() ? 0 : a.AsBool() ? 1 : -1);
    default: return NoSuchOverload();
  }
}

int64_t SizeOf(EvalCtx& ctx, const Value& v) {
  switch (v.kind()) {
    case ValueKind::kString: {
      int64_t n = 0;
      for (char c : v.AsString()) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
      return n;
    }
    case ValueKind::kBytes: return static_cast<int64_t>(v.AsString().size());
    case ValueKind::kList: return static_cast<int64_t>(v.AsList().size());
    case ValueKind::kMap: return static_cast<int64_t>(v.AsMap().entries.size());
    case ValueKind::kDeviceAttrs: return static_cast<int64_t>(Domains(ctx, ctx.device->attributes).size());
    case ValueKind::kDeviceCaps: return static_cast<int64_t>(Domains(ctx, ctx.device->capacity).size());
    case ValueKind::kAttrDomain:
    case ValueKind::kCapDomain: {
      int64_t n = 0;
      auto count = [&](const auto& map) {
        for (const auto& [name, unused] : map) n += InDomain(ctx, name, v.AsString());
      };
      if (v.kind() == ValueKind::kAttrDomain) count(ctx.device->attributes);
      else count(ctx.device->capacity);
      return n;
    }
    default: return -1;
  }
}

uint64_t CostSize(EvalCtx& ctx, const Value& v) {
  int64_t n = SizeOf(ctx, v);
  return n < 0 ? 1 : static_cast<uint64_t>(n);
}

Value MapFind(EvalCtx& ctx, const Value& map, const Value& key, bool& found) {
  found = false;
  switch (map.kind()) {
    case ValueKind::kMap: {
      ctx.Work(map.AsMap().entries.size());  // a linear search
      const Value* v = map.AsMap().Find(key);
      if (v == nullptr) return Value();
      found = true;
      return *v;
    }
    case ValueKind::kDeviceAttrs:
    case ValueKind::kDeviceCaps:
      if (key.kind() != ValueKind::kString) return Value();
      found = true;
      return Value::DeviceView(map.kind() == ValueKind::kDeviceAttrs ? ValueKind::kAttrDomain : ValueKind::kCapDomain,
                               key.AsString());
    case ValueKind::kAttrDomain: {
      if (key.kind() != ValueKind::kString) return Value();
      const api::DeviceAttribute* attr = FindAttribute(ctx, map.AsString(), key.AsString());
      if (attr == nullptr) return Value();
      found = true;
      return AttributeValue(*attr);
    }
    case ValueKind::kCapDomain: {
      if (key.kind() != ValueKind::kString) return Value();
      const api::DeviceCapacity* cap = FindCapacity(ctx, map.AsString(), key.AsString());
      if (cap == nullptr) return Value();
      found = true;
      return Value::Quantity(cap->value.ExactMilli());
    }
    default:
      return Value();
  }
}

Value IndexValue(EvalCtx& ctx, const Value& container, const Value& key) {
  if (container.IsError()) return container;
  if (key.IsError()) return key;
  if (container.kind() == ValueKind::kList) {
    const auto& list = container.AsList();
    int64_t i;
    switch (key.kind()) {
      case ValueKind::kInt: i = key.AsInt(); break;
      case ValueKind::kUint:
        if (key.AsUint() > static_cast<uint64_t>(INT64_MAX)) return Value::Error("index out of range");
        i = static_cast<int64_t>(key.AsUint());
        break;
      case ValueKind::kDouble: {
        double d = key.AsDouble();
        if (d != std::floor(d) || d < -9.2e18 || d > 9.2e18) {
          return Value::Error("unsupported index value " + std::to_string(d) + " in list");
        }
        i = static_cast<int64_t>(d);
        break;
      }
      default:
        return NoSuchOverload();
    }
    if (i < 0 || i >= static_cast<int64_t>(list.size())) {
      return Value::Error("index '" + std::to_string(i) + "' out of range in list size '" + std::to_string(list.size()) + "'");
    }
    return list[static_cast<size_t>(i)];
  }
  if (container.IsMapLike()) {
    bool found = false;
    Value v = MapFind(ctx, container, key, found);
    if (!found) return NoSuchKey(key);
    return v;
  }
  return NoSuchOverload();
}

Value InValue(EvalCtx& ctx, const Value& key, const Value& container) {
  if (key.IsError()) return key;
  if (container.IsError()) return container;
  switch (container.kind()) {
    case ValueKind::kList:
      for (const Value& v : container.AsList()) {
        if (!ctx.Work(1)) return Value::Bool(false);
        if (EqualValues(ctx, key, v)) return Value::Bool(true);
      }
      return Value::Bool(false);
    case ValueKind::kMap: {
      bool found = false;
      MapFind(ctx, container, key, found);
      return Value::Bool(found);
    }
    case ValueKind::kDeviceAttrs:
    case ValueKind::kDeviceCaps:
      if (key.kind() != ValueKind::kString) return Value::Bool(false);
      return Value::Bool(container.kind() == ValueKind::kDeviceAttrs
                             ? HasDomain(ctx, ctx.device->attributes, key.AsString())
                             : HasDomain(ctx, ctx.device->capacity, key.AsString()));
    case ValueKind::kAttrDomain:
    case ValueKind::kCapDomain: {
      bool found = false;
      MapFind(ctx, container, key, found);
      return Value::Bool(found);
    }
    default:
      return NoSuchOverload();
  }
}

bool Entries(EvalCtx& ctx, const Value& range, std::vector<std::pair<Value, Value>>& out) {
  out.clear();
  switch (range.kind()) {
    case ValueKind::kList: {
      const auto& list = range.AsList();
      out.reserve(list.size());
      if (!ctx.Work(list.size())) return true;  // cancelled: nothing to iterate
      for (size_t i = 0; i < list.size(); ++i) out.emplace_back(Value::Int(static_cast<int64_t>(i)), list[i]);
      return true;
    }
    case ValueKind::kMap:
      if (!ctx.Work(range.AsMap().entries.size())) return true;
      out = range.AsMap().entries;
      return true;
    case ValueKind::kDeviceAttrs:
    case ValueKind::kDeviceCaps: {
      bool attrs = range.kind() == ValueKind::kDeviceAttrs;
      auto domains = attrs ? Domains(ctx, ctx.device->attributes) : Domains(ctx, ctx.device->capacity);
      for (std::string_view d : domains) {
        out.emplace_back(Value::StringView(d), Value::DeviceView(attrs ? ValueKind::kAttrDomain : ValueKind::kCapDomain, d));
      }
      return true;
    }
    case ValueKind::kAttrDomain:
      for (const auto& [name, attr] : ctx.device->attributes) {
        auto [domain, id] = api::SplitQualifiedName(name, ctx.driver);
        if (domain == range.AsString()) out.emplace_back(Value::StringView(id), AttributeValue(attr));
      }
      return true;
    case ValueKind::kCapDomain:
      for (const auto& [name, cap] : ctx.device->capacity) {
        auto [domain, id] = api::SplitQualifiedName(name, ctx.driver);
        if (domain == range.AsString()) out.emplace_back(Value::StringView(id), Value::Quantity(cap.value.ExactMilli()));
      }
      return true;
    default:
      return false;
  }
}

}  // namespace ksched::cel
