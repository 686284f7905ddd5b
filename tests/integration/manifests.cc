#include "tests/integration/manifests.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include "config/emitter.h"

namespace ksched::testing {
namespace {

struct KindInfo {
  std::string_view plural;
  bool namespaced;
};

// The kinds our manifests use (and a few neighbours); anything else fails loudly, so a
// new kind in manifests/ gets added here rather than silently skipped.
const std::map<std::string, KindInfo, std::less<>>& Kinds() {
  static const auto* kinds = new std::map<std::string, KindInfo, std::less<>>{
      {"Namespace", {"namespaces", false}},
      {"ServiceAccount", {"serviceaccounts", true}},
      {"ConfigMap", {"configmaps", true}},
      {"Secret", {"secrets", true}},
      {"Service", {"services", true}},
      {"Pod", {"pods", true}},
      {"Deployment", {"deployments", true}},
      {"ClusterRole", {"clusterroles", false}},
      {"ClusterRoleBinding", {"clusterrolebindings", false}},
      {"Role", {"roles", true}},
      {"RoleBinding", {"rolebindings", true}},
      {"PriorityClass", {"priorityclasses", false}},
      {"CustomResourceDefinition", {"customresourcedefinitions", false}},
      {"PodGroup", {"podgroups", true}},
  };
  return *kinds;
}

std::string ScalarAt(const YAML::Node& n, const char* key) {
  YAML::Node v = n[key];
  return v && v.IsScalar() ? v.Scalar() : "";
}

}  // namespace

StatusOr<std::vector<ManifestObject>> LoadManifestFile(const std::string& path) {
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAllFromFile(path);
  } catch (const YAML::Exception& e) {
    return InvalidArgument(path + ": " + e.what());
  }
  std::vector<ManifestObject> out;
  for (size_t i = 0; i < docs.size(); ++i) {
    if (docs[i].IsNull()) continue;  // a comment-only document
    ManifestObject obj;
    obj.file = path;
    obj.index = i;
    obj.yaml = docs[i];
    if (!docs[i].IsMap()) return InvalidArgument(obj.Describe() + ": a document must be a map");
    obj.api_version = ScalarAt(docs[i], "apiVersion");
    obj.kind = ScalarAt(docs[i], "kind");
    if (YAML::Node md = docs[i]["metadata"]; md && md.IsMap()) {
      obj.name = ScalarAt(md, "name");
      obj.namespace_ = ScalarAt(md, "namespace");
    }
    auto json = config::YamlToJson(docs[i]);
    if (!json.ok()) return InvalidArgument(obj.Describe() + ": " + json.status().message());
    obj.json = std::move(*json);
    out.push_back(std::move(obj));
  }
  return out;
}

std::vector<std::string> ManifestFiles(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::string ext = entry.path().extension().string();
    if (entry.is_regular_file() && (ext == ".yaml" || ext == ".yml")) files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

bool IsApiObject(const ManifestObject& obj) {
  return obj.api_version.rfind("kubescheduler.config.k8s.io/", 0) != 0;
}

StatusOr<std::string> CollectionPath(const ManifestObject& obj) {
  auto it = Kinds().find(obj.kind);
  if (it == Kinds().end()) return InvalidArgument(obj.Describe() + ": kind " + obj.kind + " is not known to the test");
  if (obj.api_version.empty()) return InvalidArgument(obj.Describe() + ": no apiVersion");
  std::string path = obj.api_version.find('/') == std::string::npos ? "/api/" + obj.api_version
                                                                       : "/apis/" + obj.api_version;
  if (it->second.namespaced) path += "/namespaces/" + (obj.namespace_.empty() ? "default" : obj.namespace_);
  return path + "/" + std::string(it->second.plural);
}

StatusOr<client::Response> CreateObject(client::ApiClient& client, const ManifestObject& obj, bool dry_run) {
  auto path = CollectionPath(obj);
  if (!path.ok()) return path.status();
  return client.Do({.verb = client::Verb::kPost,
                    .path = *path + (dry_run ? "?dryRun=All" : ""),
                    .body = obj.json,
                    .max_retries = 3});
}

Status ApplyManifestFile(client::ApiClient& client, const std::string& path) {
  auto objs = LoadManifestFile(path);
  if (!objs.ok()) return objs.status();
  for (const ManifestObject& obj : *objs) {
    if (!IsApiObject(obj)) continue;
    auto r = CreateObject(client, obj, /*dry_run=*/false);
    if (!r.ok() && r.status().code() != StatusCode::kAlreadyExists) {
      return Status(r.status().code(), obj.Describe() + ": " + r.status().message());
    }
  }
  return Status::OK();
}

}  // namespace ksched::testing
