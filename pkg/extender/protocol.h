// The scheduler extender wire format (upstream k8s.io/kube-scheduler/extender/v1): JSON
// with Go's field names ("Pod", "NodeNames", "FailedNodes", ...), since those types carry
// no json tags. Decoding matches keys case-insensitively and ignores unknown ones, as
// Go's encoding/json does, so extenders written against either spelling work.
//
// The Pod and Node objects sent hold what ksched keeps of them: metadata (labels,
// annotations when extenders are configured, owners), the scheduling fields of the spec
// and the status the scheduler reads, not the whole object.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/api/json.h"
#include "pkg/api/types.h"
#include "pkg/cache/node_info.h"
#include "pkg/framework/extender.h"
#include "pkg/util/status.h"

namespace ksched::extender {

// ExtenderArgs: the pod, and the candidate nodes as names (a node cache capable
// extender) or as objects in a NodeList. `node_json(i)` gives node i's JSON.
template <typename NodeJson>
std::string EncodeExtenderArgs(std::string_view pod_json, std::span<const cache::NodeInfoPtr> nodes, bool names_only,
                               NodeJson&& node_json);

// ExtenderFilterResult.
struct FilterResponse {
  std::optional<std::vector<std::string>> node_names;  // NodeNames, when not null
  std::optional<std::vector<std::string>> nodes;       // Nodes.items[].metadata.name, when not null
  std::map<std::string, std::string, std::less<>> failed;
  std::map<std::string, std::string, std::less<>> failed_and_unresolvable;
  std::string error;
};
StatusOr<FilterResponse> DecodeFilterResult(std::string_view body);

// HostPriorityList.
StatusOr<std::vector<framework::HostPriority>> DecodeHostPriorityList(std::string_view body);

// ExtenderBindingArgs, and ExtenderBindingResult's Error.
std::string EncodeBindingArgs(const api::Pod& pod, std::string_view node);
StatusOr<std::string> DecodeBindingResult(std::string_view body);

// ExtenderPreemptionArgs: the candidates' victims as whole pods (NodeNameToVictims), or
// as UIDs for a node cache capable extender (NodeNameToMetaVictims).
std::string EncodePreemptionArgs(std::string_view pod_json, const framework::NodeVictims& candidates, bool meta);
// ExtenderPreemptionResult: node -> victim UIDs and PDB violations.
struct MetaVictims {
  std::vector<std::string> uids;
  int64_t num_pdb_violations = 0;
};
StatusOr<std::map<std::string, MetaVictims, std::less<>>> DecodePreemptionResult(std::string_view body);

// ---- implementation ----

template <typename NodeJson>
std::string EncodeExtenderArgs(std::string_view pod_json, std::span<const cache::NodeInfoPtr> nodes, bool names_only,
                               NodeJson&& node_json) {
  std::string out;
  out.reserve(pod_json.size() + 64 + nodes.size() * (names_only ? 24 : 1024));
  out += "{\"Pod\":";
  out += pod_json;
  if (names_only) {
    out += ",\"Nodes\":null,\"NodeNames\":[";
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (i) out += ',';
      api::AppendJsonString(out, nodes[i]->name());
    }
    out += "]}";
  } else {
    out += ",\"Nodes\":{\"metadata\":{},\"items\":[";
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (i) out += ',';
      out += node_json(i);
    }
    out += "]},\"NodeNames\":null}";
  }
  return out;
}

}  // namespace ksched::extender
