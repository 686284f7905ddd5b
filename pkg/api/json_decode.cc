// Node decoding and the public entry points: documents, lists and watch events.
#include "pkg/api/json_reader.h"

namespace ksched::api {

JsonParser::JsonParser() : impl_(std::make_unique<Impl>()) {}
JsonParser::~JsonParser() = default;
JsonParser::JsonParser(JsonParser&&) noexcept = default;
JsonParser& JsonParser::operator=(JsonParser&&) noexcept = default;

namespace json_internal {
namespace {

bool DecodeTaint(od::value& v, Taint& t, DecodeError& err) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "key") return ReadString(fv, t.key, err);
    if (key == "value") return ReadString(fv, t.value, err);
    if (key == "effect") return DecodeTaintEffect(fv, t.effect, err);
    return true;
  });
}

bool DecodeNodeCondition(od::value& v, NodeCondition& c, DecodeError& err) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "type") return ReadString(fv, c.type, err);
    if (key == "status") return ReadString(fv, c.status, err);
    if (key == "reason") return ReadString(fv, c.reason, err);
    return true;
  });
}

bool DecodeContainerImage(od::value& v, ContainerImage& img, DecodeError& err) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "names") return ReadStringList(fv, img.names, err);
    if (key == "sizeBytes") return ReadInt64(fv, img.size_bytes, err);
    return true;
  });
}

}  // namespace

bool DecodeNodeObject(od::value& v, Node& node, DecodeError& err) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "metadata") return DecodeObjectMeta(fv, node.metadata, err);
    if (key == "spec") {
      return ReadObject(fv, err, [&](std::string_view skey, od::value& sv) {
        if (skey == "unschedulable") return ReadBool(sv, node.spec.unschedulable, err);
        if (skey == "taints") return ReadArray(sv, node.spec.taints, err, DecodeTaint);
        return true;
      });
    }
    if (key == "status") {
      NodeStatus& s = node.status;
      return ReadObject(fv, err, [&](std::string_view skey, od::value& sv) {
        if (skey == "capacity") return ReadResourceList(sv, s.capacity, err);
        if (skey == "allocatable") return ReadResourceList(sv, s.allocatable, err);
        if (skey == "conditions") return ReadArray(sv, s.conditions, err, DecodeNodeCondition);
        if (skey == "images") return ReadArray(sv, s.images, err, DecodeContainerImage);
        return true;
      });
    }
    return true;
  });
}

namespace {

// Per-kind hooks so lists and watch events are written once for pods and nodes.
template <typename T>
struct Kind;

template <>
struct Kind<Pod> {
  static constexpr std::string_view kName = "pod";
  static constexpr std::string_view kList = "PodList";
  static bool Decode(od::value& v, Pod& p, DecodeError& err) { return DecodePodObject(v, p, err); }
  static std::string Id(const Pod& p) {
    if (p.metadata.namespace_.empty()) return p.metadata.name;
    return p.Key();
  }
};

template <>
struct Kind<Node> {
  static constexpr std::string_view kName = "node";
  static constexpr std::string_view kList = "NodeList";
  static bool Decode(od::value& v, Node& n, DecodeError& err) { return DecodeNodeObject(v, n, err); }
  static std::string Id(const Node& n) { return n.metadata.name; }
};

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

// Starts a document on `text`, copying it into the scratch buffer when the caller's
// buffer lacks simdjson's padding.
bool Iterate(JsonParser::Impl& p, const JsonText& json, od::document& doc, DecodeError& err) {
  simdjson::error_code e;
  if (json.capacity >= json.text.size() + kJsonPadding) {
    e = p.parser.iterate(json.text.data(), json.text.size(), json.capacity).get(doc);
  } else {
    p.scratch.assign(json.text.data(), json.text.size());
    p.scratch.reserve(json.text.size() + kJsonPadding);
    e = p.parser.iterate(p.scratch.data(), p.scratch.size(), p.scratch.capacity()).get(doc);
  }
  if (e) return err.Fail(e);
  return true;
}

bool RootValue(od::document& doc, od::value& v, DecodeError& err) {
  if (auto e = doc.get_value().get(v)) return err.Fail(e);
  return true;
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
  if (!Kind<T>::Decode(root, *obj, err)) return InvalidArgument(ObjectError(*obj, err));
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
        item_error = "items[" + std::to_string(i) + "]: " + ObjectError(*obj, err);
        return false;
      }
      list.items.push_back(std::move(obj));
      ++i;
    }
    return true;
  });
  if (!ok) return fail(item_error.empty() ? err.Describe() : item_error);
  return list;
}

bool ParseEventType(std::string_view s, WatchEventType& t) {
  if (s == "ADDED") t = WatchEventType::kAdded;
  else if (s == "MODIFIED") t = WatchEventType::kModified;
  else if (s == "DELETED") t = WatchEventType::kDeleted;
  else if (s == "BOOKMARK") t = WatchEventType::kBookmark;
  else if (s == "ERROR") t = WatchEventType::kError;
  else return false;
  return true;
}

template <typename T>
bool DecodeEventObject(od::value& v, WatchEvent<T>& ev, DecodeError& err, std::string& obj_error) {
  if (ev.type == WatchEventType::kError) return DecodeApiStatusObject(v, ev.error, err);
  auto obj = std::make_shared<T>();
  if (!Kind<T>::Decode(v, *obj, err)) {
    obj_error = ObjectError(*obj, err);
    return false;
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
      if (!ParseEventType(s, ev.type)) return err.Fail("unknown watch event type \"" + std::string(s) + "\"");
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
  if (ok && !deferred.empty()) {
    DecodeError inner;
    ok = Iterate(parser.impl(), JsonText(deferred), doc, inner) && RootValue(doc, root, inner) &&
         DecodeEventObject(root, ev, inner, obj_error);
    if (!ok) inner.InField("object");
    err = std::move(inner);
  }
  if (!ok) return fail(obj_error.empty() ? err.Describe() : "object: " + obj_error);
  return ev;
}

JsonParser& ThreadParser() {
  thread_local JsonParser parser;
  return parser;
}

}  // namespace
}  // namespace json_internal

using json_internal::DecodeError;
using json_internal::DecodeEvent;
using json_internal::DecodeList;
using json_internal::DecodeOne;
using json_internal::ThreadParser;

StatusOr<PodPtr> DecodePod(JsonParser& parser, JsonText json) { return DecodeOne<Pod>(parser, json); }
StatusOr<NodePtr> DecodeNode(JsonParser& parser, JsonText json) {
  return DecodeOne<Node>(parser, json);
}
StatusOr<ObjectList<Pod>> DecodePodList(JsonParser& parser, JsonText json) {
  return DecodeList<Pod>(parser, json);
}
StatusOr<ObjectList<Node>> DecodeNodeList(JsonParser& parser, JsonText json) {
  return DecodeList<Node>(parser, json);
}
StatusOr<WatchEvent<Pod>> DecodePodWatchEvent(JsonParser& parser, JsonText json) {
  return DecodeEvent<Pod>(parser, json);
}
StatusOr<WatchEvent<Node>> DecodeNodeWatchEvent(JsonParser& parser, JsonText json) {
  return DecodeEvent<Node>(parser, json);
}

StatusOr<ApiStatus> DecodeApiStatus(JsonParser& parser, JsonText json) {
  namespace ji = json_internal;
  DecodeError err;
  ji::od::document doc;
  ji::od::value root;
  ApiStatus status;
  if (!ji::Iterate(parser.impl(), json, doc, err) || !ji::RootValue(doc, root, err) ||
      !ji::DecodeApiStatusObject(root, status, err)) {
    return InvalidArgument("status: " + err.Describe());
  }
  return status;
}

StatusOr<PodPtr> DecodePod(JsonText json) { return DecodePod(ThreadParser(), json); }
StatusOr<NodePtr> DecodeNode(JsonText json) { return DecodeNode(ThreadParser(), json); }
StatusOr<ObjectList<Pod>> DecodePodList(JsonText json) { return DecodePodList(ThreadParser(), json); }
StatusOr<ObjectList<Node>> DecodeNodeList(JsonText json) {
  return DecodeNodeList(ThreadParser(), json);
}
StatusOr<WatchEvent<Pod>> DecodePodWatchEvent(JsonText json) {
  return DecodePodWatchEvent(ThreadParser(), json);
}
StatusOr<WatchEvent<Node>> DecodeNodeWatchEvent(JsonText json) {
  return DecodeNodeWatchEvent(ThreadParser(), json);
}
StatusOr<ApiStatus> DecodeApiStatus(JsonText json) { return DecodeApiStatus(ThreadParser(), json); }

}  // namespace ksched::api
