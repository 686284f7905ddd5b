// The dynamic values of our CEL interpreter. A Value is a small tagged union: scalars
// and quantities are held inline, strings may borrow (the program's constants and the
// device under evaluation outlive every evaluation, so reading them allocates
// nothing), and lists, maps, owned strings and errors share immutable heap state.
// The maps of the `device` variable are views of the api::Device being evaluated, so
// a selector never copies a device's attributes.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pkg/api/quantity.h"
#include "pkg/api/resource.h"

namespace ksched::cel {

enum class ValueKind : uint8_t {
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
  kType,   // a type value, e.g. the result of type(1); holds its name
  kError,  // an evaluation error; holds its message
  // Views of the device under evaluation (see DeviceView in eval.h).
  kDevice,       // the `device` variable
  kDeviceAttrs,  // device.attributes: domain -> kAttrDomain
  kDeviceCaps,   // device.capacity: domain -> kCapDomain
  kAttrDomain,   // device.attributes[domain]: id -> attribute value
  kCapDomain,    // device.capacity[domain]: id -> quantity
};

class Value;
struct MapValue;

class Value {
 public:
  Value() : kind_(ValueKind::kNull) { u_.i = 0; }

  static Value Null() { return Value(); }
  static Value Bool(bool b) { Value v(ValueKind::kBool); v.u_.b = b; return v; }
  static Value Int(int64_t i) { Value v(ValueKind::kInt); v.u_.i = i; return v; }
  static Value Uint(uint64_t u) { Value v(ValueKind::kUint); v.u_.u = u; return v; }
  static Value Double(double d) { Value v(ValueKind::kDouble); v.u_.d = d; return v; }
  // A string that outlives the evaluation (program constants, the device).
  static Value StringView(std::string_view s) { Value v(ValueKind::kString); v.u_.s = {s.data(), s.size()}; return v; }
  static Value String(std::string s) { return Owned(ValueKind::kString, std::move(s)); }
  static Value Bytes(std::string s) { return Owned(ValueKind::kBytes, std::move(s)); }
  static Value BytesView(std::string_view s) { Value v(ValueKind::kBytes); v.u_.s = {s.data(), s.size()}; return v; }
  static Value List(std::vector<Value> elems);
  static Value Map(MapValue map);
  static Value Quantity(api::Quantity::Milli milli) { Value v(ValueKind::kQuantity); v.u_.q = milli; return v; }
  static Value SemverView(const api::SemVersion* s) { Value v(ValueKind::kSemver); v.u_.p = s; return v; }
  static Value Semver(api::SemVersion s);
  static Value Type(std::string_view static_name) { Value v(ValueKind::kType); v.u_.s = {static_name.data(), static_name.size()}; return v; }
  static Value Error(std::string message) { return Owned(ValueKind::kError, std::move(message)); }
  static Value DeviceView(ValueKind kind, std::string_view domain = {}) { Value v(kind); v.u_.s = {domain.data(), domain.size()}; return v; }

  ValueKind kind() const { return kind_; }
  bool IsError() const { return kind_ == ValueKind::kError; }
  bool IsMapLike() const;

  bool AsBool() const { return u_.b; }
  int64_t AsInt() const { return u_.i; }
  uint64_t AsUint() const { return u_.u; }
  double AsDouble() const { return u_.d; }
  // String, bytes, type name, error message, device-domain name.
  std::string_view AsString() const { return {u_.s.data, u_.s.size}; }
  const std::vector<Value>& AsList() const { return *static_cast<const std::vector<Value>*>(owner_.get()); }
  const MapValue& AsMap() const { return *static_cast<const MapValue*>(owner_.get()); }
  api::Quantity::Milli AsQuantity() const { return u_.q; }
  const api::SemVersion& AsSemver() const { return *static_cast<const api::SemVersion*>(u_.p); }
  const std::string& ErrorMessage() const { return *static_cast<const std::string*>(owner_.get()); }

 private:
  explicit Value(ValueKind kind) : kind_(kind) { u_.i = 0; }
  static Value Owned(ValueKind kind, std::string s);

  ValueKind kind_;
  union {
    bool b;
    int64_t i;
    uint64_t u;
    double d;
    struct {
      const char* data;
      size_t size;
    } s;
    api::Quantity::Milli q;
    const void* p;
  } u_;
  std::shared_ptr<const void> owner_;
};

// Map literals and map results: insertion-ordered entries (CEL iterates a map literal
// in the order it was written), looked up by CEL key equality.
struct MapValue {
  std::vector<std::pair<Value, Value>> entries;
  const Value* Find(const Value& key) const;
};

// The CEL type name of a value, as cel-go prints it ("int", "list", "kubernetes.Quantity").
std::string_view TypeName(const Value& v);

}  // namespace ksched::cel
