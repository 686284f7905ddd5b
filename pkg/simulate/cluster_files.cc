#include "pkg/simulate/cluster_files.h"

#include <simdjson.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "config/emitter.h"
#include "pkg/api/json.h"
#include "pkg/simulate/json_dom.h"
#include "pkg/simulate/json_patch.h"

namespace ksched::simulate {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

// Kinds that exist in the API but that no plugin of ksched reads yet: read and skipped,
// and said so, like any unknown kind.
const std::vector<KindInfo>& KindTable() {
  static const auto* kinds = new std::vector<KindInfo>{
      {"Node", "/api/v1/nodes", false},
      {"Pod", "/api/v1/pods", true},
      {"Namespace", "/api/v1/namespaces", false},
      {"Service", "/api/v1/services", true},
      {"ReplicationController", "/api/v1/replicationcontrollers", true},
      {"PersistentVolume", "/api/v1/persistentvolumes", false},
      {"PersistentVolumeClaim", "/api/v1/persistentvolumeclaims", true},
      {"ReplicaSet", "/apis/apps/v1/replicasets", true},
      {"StatefulSet", "/apis/apps/v1/statefulsets", true},
      {"PodDisruptionBudget", "/apis/policy/v1/poddisruptionbudgets", true},
      {"PriorityClass", "/apis/scheduling.k8s.io/v1/priorityclasses", false},
      {"StorageClass", "/apis/storage.k8s.io/v1/storageclasses", false},
      {"CSINode", "/apis/storage.k8s.io/v1/csinodes", false},
      {"CSIDriver", "/apis/storage.k8s.io/v1/csidrivers", false},
      {"DeviceClass", "/apis/resource.k8s.io/v1/deviceclasses", false},
      {"ResourceSlice", "/apis/resource.k8s.io/v1/resourceslices", false},
      {"ResourceClaim", "/apis/resource.k8s.io/v1/resourceclaims", true},
      {"ResourceClaimTemplate", "/apis/resource.k8s.io/v1/resourceclaimtemplates", true},
      {"PodGroup", "/apis/scheduling.x-k8s.io/v1alpha1/podgroups", true},
  };
  return *kinds;
}

// The decoder of each kind, as the informers run it; PriorityClass has none there.
Status Validate(api::JsonParser& parser, std::string_view kind, const std::string& json) {
  using Decode = std::function<Status(api::JsonParser&, const std::string&)>;
  auto of = [](auto decode) -> Decode {
    return [decode](api::JsonParser& p, const std::string& j) { return decode(p, api::JsonText(j)).status(); };
  };
  static const auto* decoders = new std::map<std::string_view, Decode>{
      {"Node", of([](api::JsonParser& p, api::JsonText t) { return api::DecodeNode(p, t); })},
      {"Pod", of([](api::JsonParser& p, api::JsonText t) { return api::DecodePod(p, t); })},
      {"Namespace", of([](api::JsonParser& p, api::JsonText t) { return api::DecodeNamespace(p, t); })},
      {"Service", of([](api::JsonParser& p, api::JsonText t) { return api::DecodeService(p, t); })},
      {"ReplicationController",
       of([](api::JsonParser& p, api::JsonText t) { return api::DecodeReplicationController(p, t); })},
      {"PersistentVolume", of([](api::JsonParser& p, api::JsonText t) { return api::DecodePersistentVolume(p, t); })},
      {"PersistentVolumeClaim",
       of([](api::JsonParser& p, api::JsonText t) { return api::DecodePersistentVolumeClaim(p, t); })},
      {"ReplicaSet", of([](api::JsonParser& p, api::JsonText t) { return api::DecodeReplicaSet(p, t); })},
      {"StatefulSet", of([](api::JsonParser& p, api::JsonText t) { return api::DecodeStatefulSet(p, t); })},
      {"PodDisruptionBudget",
       of([](api::JsonParser& p, api::JsonText t) { return api::DecodePodDisruptionBudget(p, t); })},
      {"StorageClass", of([](api::JsonParser& p, api::JsonText t) { return api::DecodeStorageClass(p, t); })},
      {"CSINode", of([](api::JsonParser& p, api::JsonText t) { return api::DecodeCSINode(p, t); })},
      {"CSIDriver", of([](api::JsonParser& p, api::JsonText t) { return api::DecodeCSIDriver(p, t); })},
      {"DeviceClass", of([](api::JsonParser& p, api::JsonText t) { return api::DecodeDeviceClass(p, t); })},
      {"ResourceSlice", of([](api::JsonParser& p, api::JsonText t) { return api::DecodeResourceSlice(p, t); })},
      {"ResourceClaim", of([](api::JsonParser& p, api::JsonText t) { return api::DecodeResourceClaim(p, t); })},
      {"ResourceClaimTemplate",
       of([](api::JsonParser& p, api::JsonText t) { return api::DecodeResourceClaimTemplate(p, t); })},
      {"PodGroup", of([](api::JsonParser& p, api::JsonText t) { return api::DecodePodGroup(p, t); })},
  };
  auto it = decoders->find(kind);
  return it == decoders->end() ? Status::OK() : it->second(parser, json);
}


Status Bad(const std::string& source, const std::string& what) { return InvalidArgument(source + ": " + what); }

// A PriorityClass's value must be a 32-bit integer (the decoders never see the kind).
Status ValidatePriorityClass(element obj, const std::string& name) {
  auto v = obj["value"];
  if (v.error()) return InvalidArgument("PriorityClass \"" + name + "\": value: Required value");
  if (!v.value().is_int64()) return InvalidArgument("PriorityClass \"" + name + "\": value: must be an integer");
  const int64_t value = int64_t(v.value());
  if (value < INT32_MIN || value > INT32_MAX)
    return InvalidArgument("PriorityClass \"" + name + "\": value: must fit 32 bits");
  return Status::OK();
}

struct Loader {
  ClusterObjects& out;
  api::JsonParser decode_parser;

  Status AddObject(element obj, std::string json, const std::string& source) {
    if (obj.type() != element_type::OBJECT) return Bad(source, "not an object");
    const auto kind = StringViewAt(obj, "kind");
    if (!kind || kind->empty()) return Bad(source, "kind is missing");
    if (!StringViewAt(obj, "apiVersion")) return Bad(source, std::string(*kind) + ": apiVersion is missing");
    const KindInfo* info = FindKind(*kind);
    if (info == nullptr) {
      ++out.skipped_kinds[std::string(*kind)];
      return Status::OK();
    }
    SourceObject o{.source = source, .kind = info};
    auto md = obj["metadata"];
    if (!md.error()) {
      o.name = std::string(StringViewAt(md.value(), "name").value_or(""));
      o.namespace_ = std::string(StringViewAt(md.value(), "namespace").value_or(""));
    }
    if (o.name.empty()) return Bad(source, std::string(*kind) + ": metadata.name is missing");
    if (info->kind == "PriorityClass") {
      if (Status s = ValidatePriorityClass(obj, o.name); !s.ok()) return Bad(source, s.message());
    } else if (Status s = Validate(decode_parser, info->kind, json); !s.ok()) {
      return Bad(source, s.message());
    }
    o.json = std::move(json);
    out.objects.push_back(std::move(o));
    return Status::OK();
  }

  Status AddDocument(std::string_view text, const std::string& source) {
    simdjson::dom::parser parser;
    auto doc = parser.parse(text.data(), text.size());
    if (doc.error()) return Bad(source, std::string("not JSON: ") + simdjson::error_message(doc.error()));
    element root = doc.value();
    if (root.type() != element_type::OBJECT) return Bad(source, "a document must be an object");
    const auto kind = StringViewAt(root, "kind");
    auto items = root["items"];
    if (kind && kind->ends_with("List") && !items.error()) {
      if (items.value().type() != element_type::ARRAY) return Bad(source, "items: must be a list");
      // Items of a typed list (PodList) carry no kind of their own.
      const std::string item_kind(kind->substr(0, kind->size() - 4));
      const std::string api_version(StringViewAt(root, "apiVersion").value_or("v1"));
      size_t i = 0;
      for (element item : items.value().get_array()) {
        const std::string item_source = source + ": items[" + std::to_string(i++) + "]";
        std::string json = simdjson::minify(item);
        if (item.type() == element_type::OBJECT && !StringViewAt(item, "kind") && item_kind != "") {
          std::string patch = "{\"kind\":";
          api::AppendJsonString(patch, item_kind);
          patch += ",\"apiVersion\":";
          api::AppendJsonString(patch, api_version);
          patch += '}';
          auto typed = MergePatch(json, patch);
          if (!typed.ok()) return Bad(item_source, typed.status().message());
          json = std::move(*typed);
          simdjson::dom::parser item_parser;
          auto reparsed = item_parser.parse(json);
          if (reparsed.error()) return Bad(item_source, "not JSON");
          if (Status s = AddObject(reparsed.value(), json, item_source); !s.ok()) return s;
          continue;
        }
        if (Status s = AddObject(item, std::move(json), item_source); !s.ok()) return s;
      }
      return Status::OK();
    }
    return AddObject(root, simdjson::minify(root), source);
  }
};

struct YamlDocument {
  std::string text;
  size_t first_line = 0;  // 0-based line of the file where it starts
};

// upstream apimachinery's YAMLReader: a line that starts with "---" and has nothing else
// but spaces or a comment separates documents.
std::vector<YamlDocument> SplitYamlDocuments(std::string_view text) {
  std::vector<YamlDocument> docs(1);
  size_t line_no = 0;
  for (size_t at = 0; at < text.size(); ++line_no) {
    size_t end = text.find('\n', at);
    const size_t next = end == std::string_view::npos ? text.size() : end + 1;
    const std::string_view line = text.substr(at, next - at);
    at = next;
    if (line.starts_with("---")) {
      const std::string_view rest = line.substr(3);
      const size_t first = rest.find_first_not_of(" \t\r\n");
      if (first == std::string_view::npos || rest[first] == '#') {
        docs.push_back({.text = "", .first_line = line_no + 1});
        continue;
      }
    }
    docs.back().text.append(line);
  }
  return docs;
}

// Whether some line has more than spaces and a comment.
bool HasContent(std::string_view text) {
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(at, end - at);
    at = end + 1;
    const size_t first = line.find_first_not_of(" \t\r");
    if (first != std::string_view::npos && line[first] != '#') return true;
  }
  return false;
}

bool LooksLikeJson(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && text[first] == '{';
}

}  // namespace

const std::vector<KindInfo>& Kinds() { return KindTable(); }

const KindInfo* FindKind(std::string_view kind) {
  for (const KindInfo& k : KindTable()) {
    if (k.kind == kind) return &k;
  }
  return nullptr;
}

Status AddJsonDocument(std::string_view json, const std::string& source, ClusterObjects& out) {
  Loader loader{out};
  return loader.AddDocument(json, source);
}

Status ParseClusterText(std::string_view text, const std::string& file, ClusterObjects& out) {
  Loader loader{out};
  // JSON is read as JSON (a 50 MB pod list in well under a second); YAML documents are
  // typed as Kubernetes' YAML reader types them, then read as JSON.
  if (LooksLikeJson(text)) return loader.AddDocument(text, file);
  // Documents are split as kubectl's YAML reader splits them (a line starting "---" with
  // nothing after it but a comment), then each is parsed alone. yaml-cpp's LoadAll is not
  // used: on some malformed input (a stray "}" at the top of a document) it returns
  // empty documents forever.
  const std::vector<YamlDocument> docs = SplitYamlDocuments(text);
  size_t number = 0;  // documents with content, counted from 1
  for (size_t i = 0; i < docs.size(); ++i) {
    YAML::Node doc;
    try {
      doc = YAML::Load(docs[i].text);
    } catch (const YAML::Exception& e) {
      return InvalidArgument(file + ": line " + std::to_string(docs[i].first_line + e.mark.line + 1) + ", column " +
                             std::to_string(e.mark.column + 1) + ": " + e.msg);
    }
    if (doc.IsNull()) {
      if (!HasContent(docs[i].text)) continue;  // empty or comments only
      // yaml-cpp gives up on some malformed text without an exception.
      return InvalidArgument(file + ": line " + std::to_string(docs[i].first_line + 1) +
                             ": not a YAML document that can be read");
    }
    const std::string source = file + ": document " + std::to_string(++number);
    if (!doc.IsMap()) return Bad(source, "a document must be a map");
    auto json = config::YamlToJson(doc);
    if (!json.ok()) return Bad(source, json.status().message());
    if (Status s = loader.AddDocument(*json, source); !s.ok()) return s;
  }
  return Status::OK();
}

StatusOr<ClusterObjects> LoadClusterFiles(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  ClusterObjects out;
  for (const std::string& path : paths) {
    std::error_code ec;
    std::vector<std::string> files;
    if (fs::is_directory(path, ec)) {
      for (const auto& entry : fs::directory_iterator(path, ec)) {
        const std::string ext = entry.path().extension().string();
        if (entry.is_regular_file() && (ext == ".yaml" || ext == ".yml" || ext == ".json"))
          files.push_back(entry.path().string());
      }
      if (ec) return InvalidArgument(path + ": " + ec.message());
      std::sort(files.begin(), files.end());
    } else if (fs::exists(path, ec)) {
      files.push_back(path);
    } else {
      return InvalidArgument(path + ": no such file or directory");
    }
    for (const std::string& file : files) {
      std::ifstream in(file, std::ios::binary);
      if (!in) return InvalidArgument(file + ": cannot be read");
      std::ostringstream text;
      text << in.rdbuf();
      if (Status s = ParseClusterText(text.str(), file, out); !s.ok()) return s;
    }
  }
  return out;
}

}  // namespace ksched::simulate
