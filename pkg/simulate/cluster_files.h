// Reading a cluster from files for `ksched simulate`: YAML (multi-document) or JSON,
// single objects or lists (`kind: List`, or any *List with items), from files or from
// every *.yaml, *.yml and *.json of a directory. Each object is checked with the same
// decoder the scheduler's informers use, so a bad field is reported here, naming the
// file, the document and the field, rather than skipped later.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/util/status.h"

namespace ksched::simulate {

// A kind the simulated API server serves, and where.
struct KindInfo {
  std::string_view kind;        // "Pod"
  std::string_view collection;  // "/api/v1/pods": the path the informers list
  bool namespaced = true;
};

// The kinds ksched's plugins read, plus PriorityClass, which simulate reads to give pods
// their priority as the API server's Priority admission does. Null for any other kind.
const KindInfo* FindKind(std::string_view kind);
// Every kind FindKind knows.
const std::vector<KindInfo>& Kinds();

// One object read from a file (or listed from a cluster).
struct SourceObject {
  std::string source;  // "cluster.yaml: document 3", "pods.json: items[7]"
  const KindInfo* kind = nullptr;
  std::string namespace_;  // as written ("" for cluster-scoped or unset)
  std::string name;
  std::string json;  // the object, compact JSON, kind and apiVersion included
};

struct ClusterObjects {
  std::vector<SourceObject> objects;  // in file order
  // Kinds that were read but that nothing here uses, with how many of each (skipped).
  std::map<std::string, size_t> skipped_kinds;
};

// Reads files and directories in order (a directory's files sorted by name). Errors are
// kInvalidArgument and name the file, the document and what is wrong.
StatusOr<ClusterObjects> LoadClusterFiles(const std::vector<std::string>& paths);
// The objects of one file's text (`file` names it in messages), appended to `out`.
Status ParseClusterText(std::string_view text, const std::string& file, ClusterObjects& out);
// One JSON object or list, e.g. a LIST answer (`source` names it in messages).
Status AddJsonDocument(std::string_view json, const std::string& source, ClusterObjects& out);

}  // namespace ksched::simulate
