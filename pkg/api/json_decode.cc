// Node decoding and the public entry points for pods and nodes (the generic document
// decoders are in json_document.h).
#include "pkg/api/json_document.h"

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
    if (key == "kind") return CheckKind(fv, "Node", err);
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

bool AtEnd(od::document& doc, DecodeError& err) {
  const char* at = nullptr;
  auto e = doc.current_location().get(at);
  if (e == simdjson::OUT_OF_BOUNDS) return true;
  if (e) return err.Fail(e);
  return err.FailMalformed("unexpected content after the JSON value");
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

JsonParser& ThreadParser() {
  thread_local JsonParser parser;
  return parser;
}

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
      !ji::DecodeApiStatusObject(root, status, err) || !ji::AtEnd(doc, err)) {
    return InvalidArgument("status: " + err.Describe());
  }
  return status;
}

StatusOr<std::vector<std::string>> DecodeApiGroupVersions(JsonParser& parser, JsonText json) {
  namespace ji = json_internal;
  DecodeError err;
  ji::od::document doc;
  ji::od::value root;
  std::vector<std::string> versions;
  auto version = [&](ji::od::value& v, std::string& out, DecodeError& e) {
    return ji::ReadObject(v, e, [&](std::string_view key, ji::od::value& fv) {
      return key != "groupVersion" || ji::ReadString(fv, out, e);
    });
  };
  bool ok = ji::Iterate(parser.impl(), json, doc, err) && ji::RootValue(doc, root, err) &&
            ji::ReadObject(root, err, [&](std::string_view key, ji::od::value& fv) {
              if (key == "kind") return ji::CheckKind(fv, "APIGroup", err);
              return key != "versions" || ji::ReadArray(fv, versions, err, version);
            }) &&
            ji::AtEnd(doc, err);
  if (!ok) return InvalidArgument("APIGroup: " + err.Describe());
  return versions;
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
