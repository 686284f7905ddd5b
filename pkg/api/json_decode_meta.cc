// Primitive readers, error paths and the decoders shared by pods and nodes.
#include <algorithm>
#include <atomic>
#include <charconv>

#include "pkg/api/json_reader.h"
#include "pkg/api/selector.h"
#include "pkg/util/mutex.h"
#include "pkg/util/strings.h"

namespace ksched::api::json_internal {

static_assert(kJsonPadding == simdjson::SIMDJSON_PADDING, "kJsonPadding must match simdjson");

bool DecodeError::Fail(simdjson::error_code code) {
  Fail(std::string("invalid JSON: ") + simdjson::error_message(code));
  // A wrong type or an out-of-range number leaves the document readable; anything else
  // means the text itself is broken.
  malformed_ = code != simdjson::INCORRECT_TYPE && code != simdjson::NUMBER_OUT_OF_RANGE;
  return false;
}

bool DecodeError::InField(std::string_view name) {
  path_.emplace_back(name);
  return false;
}

bool DecodeError::AtIndex(size_t index) {
  char buf[24];
  buf[0] = '[';
  auto [end, ec] = std::to_chars(buf + 1, buf + sizeof(buf) - 1, index);
  *end++ = ']';
  path_.emplace_back(buf, end);
  return false;
}

std::string DecodeError::Describe() const {
  std::string out;
  for (size_t i = path_.size(); i-- > 0;) {
    const std::string& seg = path_[i];
    if (!out.empty() && seg.front() != '[') out += '.';
    out += seg;
  }
  if (!out.empty()) out += ": ";
  out += message_;
  return out;
}

std::string_view TypeName(od::json_type t) {
  switch (t) {
    case od::json_type::array: return "array";
    case od::json_type::object: return "object";
    case od::json_type::number: return "number";
    case od::json_type::string: return "string";
    case od::json_type::boolean: return "boolean";
    case od::json_type::null: return "null";
  }
  return "unknown";
}

bool PeekType(od::value& v, od::json_type& t, DecodeError& err) {
  if (auto e = v.type().get(t)) return err.Fail(e);
  return true;
}

bool TypeMismatch(std::string_view want, od::json_type got, DecodeError& err) {
  std::string m("expected ");
  m += want;
  m += ", got ";
  m += TypeName(got);
  return err.Fail(std::move(m));
}

bool ReadStringView(od::value& v, std::string_view& out, DecodeError& err) {
  od::json_type t{};
  if (!PeekType(v, t, err)) return false;
  if (t == od::json_type::null) {
    out = {};
    return true;
  }
  if (t != od::json_type::string) return TypeMismatch("string", t, err);
  if (auto e = v.get_string().get(out)) return err.Fail(e);
  return true;
}

bool ReadString(od::value& v, std::string& out, DecodeError& err) {
  od::json_type t{};
  if (!PeekType(v, t, err)) return false;
  if (t == od::json_type::null) return true;
  if (t != od::json_type::string) return TypeMismatch("string", t, err);
  std::string_view s;
  if (auto e = v.get_string().get(s)) return err.Fail(e);
  // Construct rather than assign: assigning 16..29 chars into an empty string makes
  // libstdc++ reserve 30, while construction allocates exactly, which matters for the
  // dozens of strings every retained pod holds.
  out = std::string(s.data(), s.size());
  return true;
}

bool ReadOptString(od::value& v, std::optional<std::string>& out, DecodeError& err) {
  od::json_type t{};
  if (!PeekType(v, t, err)) return false;
  if (t == od::json_type::null) {
    out.reset();
    return true;
  }
  return ReadString(v, out.emplace(), err);
}

bool ReadBool(od::value& v, bool& out, DecodeError& err) {
  od::json_type t{};
  if (!PeekType(v, t, err)) return false;
  if (t == od::json_type::null) return true;
  if (t != od::json_type::boolean) return TypeMismatch("boolean", t, err);
  if (auto e = v.get_bool().get(out)) return err.Fail(e);
  return true;
}

bool ReadInt64(od::value& v, int64_t& out, DecodeError& err) {
  od::json_type t{};
  if (!PeekType(v, t, err)) return false;
  if (t == od::json_type::null) return true;
  if (t != od::json_type::number) return TypeMismatch("integer", t, err);
  if (v.get_int64().get(out)) {
    std::string_view raw = v.raw_json_token();
    while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\n' || raw.back() == '\r' ||
                            raw.back() == '\t')) {
      raw.remove_suffix(1);
    }
    return err.Fail("expected integer, got " + std::string(raw));
  }
  return true;
}

bool ReadInt32(od::value& v, int32_t& out, DecodeError& err) {
  int64_t wide = out;
  if (!ReadInt64(v, wide, err)) return false;
  if (wide < INT32_MIN || wide > INT32_MAX) {
    return err.Fail("value " + std::to_string(wide) + " overflows int32");
  }
  out = static_cast<int32_t>(wide);
  return true;
}

bool ReadOptInt64(od::value& v, std::optional<int64_t>& out, DecodeError& err) {
  od::json_type t{};
  if (!PeekType(v, t, err)) return false;
  if (t == od::json_type::null) {
    out.reset();
    return true;
  }
  return ReadInt64(v, out.emplace(), err);
}

bool ReadOptInt32(od::value& v, std::optional<int32_t>& out, DecodeError& err) {
  od::json_type t{};
  if (!PeekType(v, t, err)) return false;
  if (t == od::json_type::null) {
    out.reset();
    return true;
  }
  return ReadInt32(v, out.emplace(), err);
}

bool ReadStringList(od::value& v, std::vector<std::string>& out, DecodeError& err) {
  return ReadArray(v, out, err, [](od::value& ev, std::string& s, DecodeError& e) {
    return ReadString(ev, s, e);
  });
}

namespace {

// Opens an object for a map-like reader that wants the field count; `present` is false
// for null.
bool OpenCountedObject(od::value& v, od::object& obj, size_t& count, bool& present,
                       DecodeError& err) {
  od::json_type t{};
  if (!PeekType(v, t, err)) return false;
  present = t != od::json_type::null;
  if (!present) return true;
  if (t != od::json_type::object) return TypeMismatch("object", t, err);
  if (auto e = v.get_object().get(obj)) return err.Fail(e);
  if (auto e = obj.count_fields().get(count)) return err.Fail(e);
  return true;
}

}  // namespace

bool ReadStringMap(od::value& v, StringMap& out, DecodeError& err) {
  od::object obj;
  size_t count = 0;
  bool present = false;
  if (!OpenCountedObject(v, obj, count, present, err)) return false;
  out = StringMap();
  if (!present) return true;
  out.Reserve(count);
  for (auto field : obj) {
    std::string_view key;
    if (auto e = field.unescaped_key().get(key)) return err.Fail(e);
    std::string k(key);
    od::value fv;
    if (auto e = field.value().get(fv)) return err.Fail(e);
    std::string val;
    if (!ReadString(fv, val, err)) return err.InField(k);
    out.Set(std::move(k), std::move(val));
  }
  return true;
}

bool ReadResourceList(od::value& v, ResourceList& out, DecodeError& err) {
  od::object obj;
  size_t count = 0;
  bool present = false;
  if (!OpenCountedObject(v, obj, count, present, err)) return false;
  out.clear();
  if (!present) return true;
  out.reserve(count);
  for (auto field : obj) {
    std::string_view key;
    if (auto e = field.unescaped_key().get(key)) return err.Fail(e);
    std::string name(key);
    od::value fv;
    if (auto e = field.value().get(fv)) return err.Fail(e);
    od::json_type t{};
    if (!PeekType(fv, t, err)) return err.InField(name);
    if (t == od::json_type::null) continue;
    std::string_view text;
    if (t == od::json_type::string) {
      if (auto e = fv.get_string().get(text)) return err.Fail(e);
    } else if (t == od::json_type::number) {
      // resource.Quantity also unmarshals bare JSON numbers.
      text = fv.raw_json_token();
      while (!text.empty() && (text.back() == ' ' || text.back() == '\n' ||
                               text.back() == '\r' || text.back() == '\t')) {
        text.remove_suffix(1);
      }
    } else {
      TypeMismatch("quantity string", t, err);
      return err.InField(name);
    }
    auto q = Quantity::Parse(text);
    if (!q.ok()) {
      err.Fail(q.status().message());
      return err.InField(name);
    }
    out.emplace_back(std::move(name), *q);
  }
  return true;
}

bool DecodeSelectorRequirement(od::value& v, LabelSelectorRequirement& r, DecodeError& err) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "key") return ReadString(fv, r.key, err);
    if (key == "operator") {
      std::string_view op;
      if (!ReadStringView(fv, op, err)) return false;
      // An operator from a newer API decodes as kUnknown, so the object still decodes
      // and only selectors using it fail (upstream: the selector conversion errors).
      r.op = SelectorOperatorFromName(op).value_or(SelectorOperator::kUnknown);
      return true;
    }
    if (key == "values") return ReadStringList(fv, r.values, err);
    return true;
  });
}

bool DecodeLabelSelector(od::value& v, LabelSelector& s, DecodeError& err) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "matchLabels") return ReadStringMap(fv, s.match_labels, err);
    if (key == "matchExpressions") {
      return ReadArray(fv, s.match_expressions, err, DecodeSelectorRequirement);
    }
    return true;
  });
}

bool CheckKind(od::value& v, std::string_view want, DecodeError& err) {
  std::string_view kind;
  if (!ReadStringView(v, kind, err)) return false;
  if (kind.empty() || kind == want) return true;
  return err.Fail(Quoted(kind) + ", expected " + Quoted(want));
}

bool DecodeTaintEffect(od::value& v, TaintEffect& out, DecodeError& err) {
  std::string_view s;
  if (!ReadStringView(v, s, err)) return false;
  if (s.empty()) out = TaintEffect::kNone;
  else if (s == "NoSchedule") out = TaintEffect::kNoSchedule;
  else if (s == "PreferNoSchedule") out = TaintEffect::kPreferNoSchedule;
  else if (s == "NoExecute") out = TaintEffect::kNoExecute;
  else out = TaintEffect::kUnknown;  // from a newer API: ignored by filters and scorers
  return true;
}

namespace {

// RetainAnnotationKeys' list. The flag lets the common case (nothing retained) skip
// annotations without taking the lock.
struct RetainedAnnotations {
  Mutex mu;
  std::shared_ptr<const std::vector<std::string>> keys GUARDED_BY(mu);
  std::atomic<bool> any{false};
};

RetainedAnnotations& Retained() { return Immortal<RetainedAnnotations>(); }

bool ReadRetainedAnnotations(od::value& v, StringMap& out, DecodeError& err) {
  out = StringMap();
  RetainedAnnotations& r = Retained();
  if (!r.any.load(std::memory_order_acquire)) return true;  // left unread: simdjson skips it
  std::shared_ptr<const std::vector<std::string>> keys;
  {
    MutexLock lock(r.mu);
    keys = r.keys;
  }
  const bool all = std::find(keys->begin(), keys->end(), "*") != keys->end();
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (!all && std::find(keys->begin(), keys->end(), key) == keys->end()) return true;
    std::string value;
    if (!ReadString(fv, value, err)) return false;
    out.Set(std::string(key), std::move(value));
    return true;
  });
}

}  // namespace

bool DecodeOwnerReference(od::value& v, OwnerReference& r, DecodeError& err) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "apiVersion") return ReadString(fv, r.api_version, err);
    if (key == "kind") return ReadString(fv, r.kind, err);
    if (key == "name") return ReadString(fv, r.name, err);
    if (key == "uid") return ReadString(fv, r.uid, err);
    if (key == "controller") return ReadBool(fv, r.controller, err);
    return true;
  });
}

bool DecodeObjectMeta(od::value& v, ObjectMeta& m, DecodeError& err) {
  // managedFields is never touched: simdjson skips it without materialising it.
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "name") return ReadString(fv, m.name, err);
    if (key == "namespace") return ReadString(fv, m.namespace_, err);
    if (key == "uid") return ReadString(fv, m.uid, err);
    if (key == "resourceVersion") return ReadString(fv, m.resource_version, err);
    if (key == "generation") return ReadInt64(fv, m.generation, err);
    if (key == "creationTimestamp") return ReadString(fv, m.creation_timestamp, err);
    if (key == "deletionTimestamp") return ReadOptString(fv, m.deletion_timestamp, err);
    if (key == "labels") return ReadStringMap(fv, m.labels, err);
    if (key == "annotations") return ReadRetainedAnnotations(fv, m.annotations, err);
    if (key == "ownerReferences") {
      return ReadArray(fv, m.owner_references, err, DecodeOwnerReference);
    }
    return true;
  });
}

bool DecodeApiStatusObject(od::value& v, ApiStatus& s, DecodeError& err) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "status") return ReadString(fv, s.status, err);
    if (key == "message") return ReadString(fv, s.message, err);
    if (key == "reason") return ReadString(fv, s.reason, err);
    if (key == "code") return ReadInt32(fv, s.code, err);
    return true;
  });
}

}  // namespace ksched::api::json_internal

namespace ksched::api {

void RetainAnnotationKeys(std::vector<std::string> keys) {
  auto& r = json_internal::Retained();
  bool any = !keys.empty();
  MutexLock lock(r.mu);
  r.keys = std::make_shared<const std::vector<std::string>>(std::move(keys));
  r.any.store(any, std::memory_order_release);
}

}  // namespace ksched::api
