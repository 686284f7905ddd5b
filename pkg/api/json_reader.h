// Internal to pkg/api: simdjson on-demand helpers shared by the decoders. Every reader
// returns false on failure after recording the error in a DecodeError; callers add
// their field name while unwinding, so the path is only built on the error path.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/api/dedup.h"
#include "pkg/api/json.h"
#include "pkg/api/types.h"

namespace ksched::api {

struct JsonParser::Impl {
  simdjson::ondemand::parser parser;
  std::string scratch;  // padded copy of texts that arrive without padding
};

namespace json_internal {

namespace od = simdjson::ondemand;

class DecodeError {
 public:
  // Records the innermost failure; always returns false so readers can `return Fail(..)`.
  bool Fail(std::string message) {
    message_ = std::move(message);
    path_.clear();
    malformed_ = false;
    return false;
  }
  bool Fail(simdjson::error_code code);
  // True when the failure was broken JSON text (truncated, bad syntax, too deep) rather
  // than a well-formed value of the wrong type or content: callers may skip one bad
  // object in a readable document, but not a document they cannot read.
  bool malformed() const { return malformed_; }
  // Broken text found by a check of our own (e.g. content after the root value).
  bool FailMalformed(std::string message) {
    Fail(std::move(message));
    malformed_ = true;
    return false;
  }
  // Prepend a path element while unwinding; both return false.
  bool InField(std::string_view name);
  bool AtIndex(size_t index);

  // "spec.containers[0].name: expected string, got number" (or just the message).
  std::string Describe() const;

 private:
  std::string message_;
  std::vector<std::string> path_;  // innermost first
  bool malformed_ = false;
};

std::string_view TypeName(od::json_type t);

// The JSON type of `v`; false (with the error recorded) when the document is malformed.
bool PeekType(od::value& v, od::json_type& t, DecodeError& err);
bool TypeMismatch(std::string_view want, od::json_type got, DecodeError& err);

bool ReadString(od::value& v, std::string& out, DecodeError& err);
bool ReadOptString(od::value& v, std::optional<std::string>& out, DecodeError& err);
bool ReadBool(od::value& v, bool& out, DecodeError& err);
bool ReadInt64(od::value& v, int64_t& out, DecodeError& err);
bool ReadInt32(od::value& v, int32_t& out, DecodeError& err);
bool ReadOptInt64(od::value& v, std::optional<int64_t>& out, DecodeError& err);
bool ReadOptInt32(od::value& v, std::optional<int32_t>& out, DecodeError& err);
bool ReadStringList(od::value& v, std::vector<std::string>& out, DecodeError& err);
bool ReadStringMap(od::value& v, StringMap& out, DecodeError& err);
bool ReadResourceList(od::value& v, ResourceList& out, DecodeError& err);
// Reads a JSON string without copying; the view lives until the parser's next document.
bool ReadStringView(od::value& v, std::string_view& out, DecodeError& err);

// Calls on_field(key, value) for each field of an object. A failing callback gets the
// key added to the error path.
template <typename F>
bool ReadFields(od::object& obj, DecodeError& err, F&& on_field) {
  for (auto field : obj) {
    std::string_view key;
    if (auto e = field.unescaped_key().get(key)) return err.Fail(e);
    od::value fv;
    if (auto e = field.value().get(fv)) return err.Fail(e);
    if (!on_field(key, fv)) return err.InField(key);
  }
  return true;
}

// ReadFields on a JSON object value; null is an empty object.
template <typename F>
bool ReadObject(od::value& v, DecodeError& err, F&& on_field) {
  od::json_type t{};
  if (!PeekType(v, t, err)) return false;
  if (t == od::json_type::null) return true;
  if (t != od::json_type::object) return TypeMismatch("object", t, err);
  od::object obj;
  if (auto e = v.get_object().get(obj)) return err.Fail(e);
  return ReadFields(obj, err, on_field);
}

// Reads the elements of `arr` into `out`, sized exactly (objects are retained for a
// long time). decode(value, T&, DecodeError&) reads one element.
template <typename T, typename F>
bool ReadElements(od::array& arr, std::vector<T>& out, DecodeError& err, F&& decode) {
  size_t n = 0;
  if (auto e = arr.count_elements().get(n)) return err.Fail(e);
  out.reserve(n);
  size_t i = 0;
  for (auto elem : arr) {
    od::value ev;
    if (auto e = elem.get(ev)) return err.Fail(e);
    out.emplace_back();
    if (!decode(ev, out.back(), err)) return err.AtIndex(i);
    ++i;
  }
  return true;
}

// Reads an array into `out` (sized exactly, as objects are retained for a long time);
// null leaves it empty. decode(value, T&, DecodeError&) reads one element.
template <typename T, typename F>
bool ReadArray(od::value& v, std::vector<T>& out, DecodeError& err, F&& decode) {
  od::json_type t{};
  if (!PeekType(v, t, err)) return false;
  out.clear();
  if (t == od::json_type::null) return true;
  if (t != od::json_type::array) return TypeMismatch("array", t, err);
  od::array arr;
  if (auto e = v.get_array().get(arr)) return err.Fail(e);
  return ReadElements(arr, out, err, decode);
}

// ReadArray keeping only the elements for which keep(const T&) holds; every element
// is still decoded and validated.
template <typename T, typename F, typename K>
bool ReadArrayIf(od::value& v, std::vector<T>& out, DecodeError& err, F&& decode, K&& keep) {
  od::json_type t{};
  if (!PeekType(v, t, err)) return false;
  out.clear();
  if (t == od::json_type::null) return true;
  if (t != od::json_type::array) return TypeMismatch("array", t, err);
  od::array arr;
  if (auto e = v.get_array().get(arr)) return err.Fail(e);
  std::vector<T> kept;  // stays unallocated in the common case of nothing kept
  size_t i = 0;
  for (auto elem : arr) {
    od::value ev;
    if (auto e = elem.get(ev)) return err.Fail(e);
    T item;
    if (!decode(ev, item, err)) return err.AtIndex(i);
    if (keep(item)) kept.push_back(std::move(item));
    ++i;
  }
  out.reserve(kept.size());
  for (T& item : kept) out.push_back(std::move(item));
  return true;
}

inline uint64_t HashJson(std::string_view raw) { return std::hash<std::string_view>{}(raw); }

// The raw JSON text of an array or object (its dedup key). Reading it consumes the
// container, so it is rewound for the decoder.
template <typename Container>
bool RawAndRewind(Container& c, std::string_view& raw, DecodeError& err) {
  if (auto e = c.raw_json().get(raw)) return err.Fail(e);
  if (auto e = c.reset().error()) return err.Fail(e);
  return true;
}

// ReadArray into a SharedVector: an array whose JSON text was seen before (on any
// thread) shares the instance decoded then, when the decoded values are equal.
template <typename T, typename F>
bool ReadSharedArray(od::value& v, SharedVector<T>& out, DedupTable<std::vector<T>>& table,
                     DecodeError& err, F&& decode) {
  od::json_type t{};
  if (!PeekType(v, t, err)) return false;
  out.clear();
  if (t == od::json_type::null) return true;
  if (t != od::json_type::array) return TypeMismatch("array", t, err);
  od::array arr;
  std::string_view raw;
  if (auto e = v.get_array().get(arr)) return err.Fail(e);
  if (!RawAndRewind(arr, raw, err)) return false;
  auto fresh = std::make_shared<std::vector<T>>();
  if (!ReadElements(arr, *fresh, err, decode)) return false;
  if (!fresh->empty()) out = SharedVector<T>(table.Intern(HashJson(raw), std::move(fresh)));
  return true;
}

// The same for an optional object; null leaves `out` empty. decode_fields(od::object&,
// T&, DecodeError&) reads the fields.
template <typename T, typename F>
bool ReadSharedObject(od::value& v, SharedOptional<T>& out, DedupTable<T>& table, DecodeError& err,
                      F&& decode_fields) {
  od::json_type t{};
  if (!PeekType(v, t, err)) return false;
  out.reset();
  if (t == od::json_type::null) return true;
  if (t != od::json_type::object) return TypeMismatch("object", t, err);
  od::object obj;
  std::string_view raw;
  if (auto e = v.get_object().get(obj)) return err.Fail(e);
  if (!RawAndRewind(obj, raw, err)) return false;
  auto fresh = std::make_shared<T>();
  if (!decode_fields(obj, *fresh, err)) return false;
  out = SharedOptional<T>(table.Intern(HashJson(raw), std::move(fresh)));
  return true;
}

// Field decoders shared between pods and nodes (json_decode_meta.cc).
bool DecodeObjectMeta(od::value& v, ObjectMeta& m, DecodeError& err);
bool DecodeLabelSelector(od::value& v, LabelSelector& s, DecodeError& err);
bool DecodeSelectorRequirement(od::value& v, LabelSelectorRequirement& r, DecodeError& err);
bool DecodeTaintEffect(od::value& v, TaintEffect& out, DecodeError& err);
bool DecodeOwnerReference(od::value& v, OwnerReference& r, DecodeError& err);
bool DecodeNodeSelectorTerm(od::value& v, NodeSelectorTerm& t, DecodeError& err);
// A pod's toleration, also a DRA claim's device toleration (json_decode_pod.cc).
bool DecodeToleration(od::value& v, Toleration& t, DecodeError& err);
// One field of a volume source (a pod's inline volume or a PersistentVolume's spec):
// `key` is the source's kind ("csi", "gcePersistentDisk", "rbd", ...). Sets `known`
// false, reading nothing, for kinds VolumeSource does not keep.
bool ReadVolumeSourceField(std::string_view key, od::value& v, VolumeSource& s, bool& known, DecodeError& err);
// The object's "kind", when present, must be `want`: an object of another kind (a wrong
// GVK in a watch, which client-go's reflector skips) fails the object, which the list
// and watch decoders then skip rather than store a pod made of a node's fields.
bool CheckKind(od::value& v, std::string_view want, DecodeError& err);
bool DecodeApiStatusObject(od::value& v, ApiStatus& s, DecodeError& err);

// Object decoders (json_decode_pod.cc, json_decode_node.cc).
bool DecodePodObject(od::value& v, Pod& pod, DecodeError& err);
bool DecodeNodeObject(od::value& v, Node& node, DecodeError& err);

}  // namespace json_internal
}  // namespace ksched::api
