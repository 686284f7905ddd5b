// Reading manifests/*.yaml for the integration tests: each YAML document becomes the JSON
// body kubectl would send (config::YamlToJson types scalars like kubectl's YAML reader),
// plus where to POST it.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "pkg/client/api_client.h"
#include "pkg/util/status.h"

namespace ksched::testing {

struct ManifestObject {
  std::string file;  // path, for messages
  size_t index = 0;  // document number in the file
  std::string api_version, kind, name, namespace_;  // namespace_ empty: cluster-scoped or unset
  YAML::Node yaml;
  std::string json;

  std::string Describe() const { return file + "#" + std::to_string(index) + " " + kind + "/" + name; }
};

// Every non-empty document of a YAML file.
StatusOr<std::vector<ManifestObject>> LoadManifestFile(const std::string& path);
// Every *.yaml / *.yml directly in `dir`, sorted by name.
std::vector<std::string> ManifestFiles(const std::string& dir);

// Whether the object is a Kubernetes API object (not e.g. a KubeSchedulerConfiguration).
bool IsApiObject(const ManifestObject& obj);
// The collection to POST to: "/api/v1/namespaces/<ns>/configmaps",
// "/apis/rbac.authorization.k8s.io/v1/clusterroles", ... Namespaced objects without a
// namespace go to "default", as kubectl does. Unknown kinds are an error.
StatusOr<std::string> CollectionPath(const ManifestObject& obj);
// POSTs the object (?dryRun=All when dry_run): the server's answer or its error.
StatusOr<client::Response> CreateObject(client::ApiClient& client, const ManifestObject& obj, bool dry_run);
// Creates every API object of the file for real; existing objects are left alone.
Status ApplyManifestFile(client::ApiClient& client, const std::string& path);

}  // namespace ksched::testing
