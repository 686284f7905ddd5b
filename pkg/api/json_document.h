// Internal to pkg/api: whole documents (one object, a list, a watch event) decoded once
// for every kind. Each kind specialises Kind<T> next to its object decoder:
//   template <> struct Kind<Pod> {
//     static constexpr std::string_view kName = "pod", kList = "PodList";
//     static bool Decode(od::value&, Pod&, DecodeError&);
//     static std::string Id(const Pod&);  // "ns/name" for error messages
//   };
// T needs a `metadata.resource_version` (watch events copy it).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "pkg/api/json_reader.h"

namespace ksched::api::json_internal {

template <typename T>
struct Kind;

// Starts a document on `json`, copying it into the scratch buffer when the caller's
// buffer lacks simdjson's padding.
bool Iterate(JsonParser::Impl& p, const JsonText& json, od::document& doc, DecodeError& err);
bool RootValue(od::document& doc, od::value& v, DecodeError& err);
// True when the whole text has been read: anything after the root value (which the
// on-demand parser would otherwise never look at) is broken input.
bool AtEnd(od::document& doc, DecodeError& err);
bool ParseEventType(std::string_view s, WatchEventType& t);
// The parser of the calling thread, for the decode functions without a parser argument.
JsonParser& ThreadParser();

// "pod \"ns/name\": spec.x: message"; the name is whatever was decoded before the
// failure (metadata comes first in everything the apiserver sends).
template <typename T>
std::string ObjectError(const T& obj, const DecodeError& err) {
  std::string m(Kind<T>::kName);
  std::string id = Kind<T>::Id(obj);
  if (!id.empty()) {
    m += " \"";
    m += id;
    m += '"';
  }
  m += ": ";
  m += err.Describe();
  return m;
}

template <typename T>
StatusOr<std::shared_ptr<const T>> DecodeOne(JsonParser& parser, const JsonText& json) {
  DecodeError err;
  od::document doc;
  od::value root;
  auto obj = std::make_shared<T>();
  if (!Iterate(parser.impl(), json, doc, err) || !RootValue(doc, root, err)) {
    return InvalidArgument(ObjectError(*obj, err));
  }
  if (!Kind<T>::Decode(root, *obj, err) || !AtEnd(doc, err)) return InvalidArgument(ObjectError(*obj, err));
  return std::shared_ptr<const T>(std::move(obj));
}

template <typename T>
bool DecodeListMeta(od::value& v, ObjectList<T>& list, DecodeError& err) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "resourceVersion") return ReadString(fv, list.resource_version, err);
    if (key == "continue") return ReadString(fv, list.continue_token, err);
    if (key == "remainingItemCount") return ReadOptInt64(fv, list.remaining_item_count, err);
    return true;
  });
}

template <typename T>
StatusOr<ObjectList<T>> DecodeList(JsonParser& parser, const JsonText& json) {
  DecodeError err;
  od::document doc;
  od::value root;
  ObjectList<T> list;
  auto fail = [&](std::string detail) {
    std::string m(Kind<T>::kList);
    m += ": ";
    m += detail;
    return InvalidArgument(std::move(m));
  };
  if (!Iterate(parser.impl(), json, doc, err) || !RootValue(doc, root, err)) {
    return fail(err.Describe());
  }
  std::string item_error;
  bool ok = ReadObject(root, err, [&](std::string_view key, od::value& fv) {
    if (key == "metadata") return DecodeListMeta(fv, list, err);
    if (key != "items") return true;
    od::json_type t{};
    if (!PeekType(fv, t, err)) return false;
    if (t == od::json_type::null) return true;
    if (t != od::json_type::array) return TypeMismatch("array", t, err);
    od::array arr;
    if (auto e = fv.get_array().get(arr)) return err.Fail(e);
    size_t i = 0;
    for (auto elem : arr) {
      od::value ev;
      if (auto e = elem.get(ev)) return err.Fail(e);
      auto obj = std::make_shared<T>();
      if (!Kind<T>::Decode(ev, *obj, err)) {
        std::string what = "items[" + std::to_string(i) + "]: " + ObjectError(*obj, err);
        if (err.malformed()) {
          item_error = std::move(what);
          return false;
        }
        // Readable JSON with a value we cannot use: skip this one object, not the list.
        // The array iterator skips whatever of the item is left unread.
        list.skipped.push_back({std::move(obj), std::move(what)});
        ++i;
        continue;
      }
      list.items.push_back(std::move(obj));
      ++i;
    }
    return true;
  });
  if (ok) ok = AtEnd(doc, err);
  if (!ok) return fail(item_error.empty() ? err.Describe() : item_error);
  return list;
}

// Decodes the event's "object". A well-formed object with a value we cannot use does not
// fail the event: it is returned with object_error set and what was read of it, so the
// informer can skip that one object instead of restarting the stream at the same event.
template <typename T>
bool DecodeEventObject(od::value& v, WatchEvent<T>& ev, DecodeError& err, std::string& obj_error) {
  if (ev.type == WatchEventType::kError) return DecodeApiStatusObject(v, ev.error, err);
  if (ev.type == WatchEventType::kUnknown) return true;  // skipped by the informer unread
  auto obj = std::make_shared<T>();
  if (!Kind<T>::Decode(v, *obj, err)) {
    obj_error = ObjectError(*obj, err);
    if (err.malformed()) return false;
    ev.object_error = obj_error;
    obj_error.clear();
  }
  ev.resource_version = obj->metadata.resource_version;
  ev.object = std::move(obj);
  return true;
}

template <typename T>
StatusOr<WatchEvent<T>> DecodeEvent(JsonParser& parser, const JsonText& json) {
  DecodeError err;
  od::document doc;
  od::value root;
  WatchEvent<T> ev;
  auto fail = [&](std::string detail) {
    return InvalidArgument("watch event: " + std::move(detail));
  };
  if (!Iterate(parser.impl(), json, doc, err) || !RootValue(doc, root, err)) {
    return fail(err.Describe());
  }
  bool have_type = false;
  std::string deferred;  // "object" seen before "type": decoded after the type is known
  std::string obj_error;
  bool ok = ReadObject(root, err, [&](std::string_view key, od::value& fv) {
    if (key == "type") {
      std::string_view s;
      if (!ReadStringView(fv, s, err)) return false;
      // A type from a newer API is skipped, as client-go's watchHandler does.
      if (!ParseEventType(s, ev.type)) ev.type = WatchEventType::kUnknown;
      have_type = true;
      return true;
    }
    if (key != "object") return true;
    if (have_type) return DecodeEventObject(fv, ev, err, obj_error);
    od::object obj;
    std::string_view raw;
    if (auto e = fv.get_object().get(obj)) return err.Fail(e);
    if (auto e = obj.raw_json().get(raw)) return err.Fail(e);
    deferred.assign(raw);
    return true;
  });
  if (ok && !have_type) ok = err.Fail("missing \"type\"");
  if (ok) ok = AtEnd(doc, err);
  if (ok && !deferred.empty()) {
    DecodeError inner;
    ok = Iterate(parser.impl(), JsonText(deferred), doc, inner) && RootValue(doc, root, inner) &&
         DecodeEventObject(root, ev, inner, obj_error);
    if (!ok) inner.InField("object");
    err = std::move(inner);
  }
  if (!ok) return fail(obj_error.empty() ? err.Describe() : "object: " + obj_error);
  const bool needs_object = ev.type == WatchEventType::kAdded || ev.type == WatchEventType::kModified ||
                            ev.type == WatchEventType::kDeleted;
  if (needs_object && ev.object == nullptr) return fail("missing \"object\"");
  return ev;
}

}  // namespace ksched::api::json_internal
