#include "pkg/extender/protocol.h"

#include <simdjson.h>

#include <cctype>

namespace ksched::extender {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

// Go's encoding/json matches a key to a field name ignoring case.
bool KeyIs(std::string_view key, std::string_view field) {
  if (key.size() != field.size()) return false;
  if (key == field) return true;  // the usual spelling, without a per-character fold
  for (size_t i = 0; i < key.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(key[i])) != std::tolower(static_cast<unsigned char>(field[i])))
      return false;
  }
  return true;
}

// A parser per thread: filter and prioritize answers are decoded on the scheduling
// thread, bind answers on binding workers.
simdjson::dom::parser& Parser() {
  thread_local simdjson::dom::parser parser;
  return parser;
}

StatusOr<element> Parse(std::string_view body, std::string_view what) {
  element root;
  if (auto err = Parser().parse(body.data(), body.size()).get(root); err) {
    return InvalidArgument("decoding the extender's " + std::string(what) + ": " + simdjson::error_message(err));
  }
  return root;
}

Status TypeError(std::string_view what, std::string_view field, std::string_view want) {
  return InvalidArgument("decoding the extender's " + std::string(what) + ": " + std::string(field) + " is not " +
                         std::string(want));
}

// A JSON object of strings (FailedNodesMap); null leaves it empty.
Status ReadStringMap(element e, std::string_view what, std::string_view field,
                     std::map<std::string, std::string, std::less<>>& out) {
  if (e.is_null()) return Status::OK();
  simdjson::dom::object obj;
  if (e.get(obj)) return TypeError(what, field, "an object");
  for (auto [k, v] : obj) {
    std::string_view s;
    if (v.get(s)) return TypeError(what, std::string(field) + "[" + std::string(k) + "]", "a string");
    out[std::string(k)] = std::string(s);
  }
  return Status::OK();
}

Status ReadStrings(element e, std::string_view what, std::string_view field, std::vector<std::string>& out) {
  simdjson::dom::array arr;
  if (e.get(arr)) return TypeError(what, field, "an array");
  for (element v : arr) {
    std::string_view s;
    if (v.get(s)) return TypeError(what, field, "an array of strings");
    out.emplace_back(s);
  }
  return Status::OK();
}

Status ReadInt(element e, std::string_view what, std::string_view field, int64_t& out) {
  if (e.is_null()) return Status::OK();
  if (e.get(out)) return TypeError(what, field, "an integer");
  return Status::OK();
}

// A NodeList's item names.
Status ReadNodeListNames(element e, std::vector<std::string>& out) {
  constexpr std::string_view kWhat = "filter result";
  simdjson::dom::object list;
  if (e.get(list)) return TypeError(kWhat, "Nodes", "an object");
  for (auto [k, v] : list) {
    if (!KeyIs(k, "items") || v.is_null()) continue;
    simdjson::dom::array items;
    if (v.get(items)) return TypeError(kWhat, "Nodes.items", "an array");
    for (element item : items) {
      std::string_view name;
      if (item.at_pointer("/metadata/name").get(name)) return TypeError(kWhat, "Nodes.items[].metadata.name", "a string");
      out.emplace_back(name);
    }
  }
  return Status::OK();
}

}  // namespace

StatusOr<FilterResponse> DecodeFilterResult(std::string_view body) {
  constexpr std::string_view kWhat = "filter result";
  auto root = Parse(body, kWhat);
  if (!root.ok()) return root.status();
  simdjson::dom::object obj;
  if (root->get(obj)) return TypeError(kWhat, "the answer", "an object");
  FilterResponse r;
  for (auto [k, v] : obj) {
    Status s;
    if (KeyIs(k, "NodeNames")) {
      if (!v.is_null()) s = ReadStrings(v, kWhat, "NodeNames", r.node_names.emplace());
    } else if (KeyIs(k, "Nodes")) {
      if (!v.is_null()) s = ReadNodeListNames(v, r.nodes.emplace());
    } else if (KeyIs(k, "FailedNodes")) {
      s = ReadStringMap(v, kWhat, "FailedNodes", r.failed);
    } else if (KeyIs(k, "FailedAndUnresolvableNodes")) {
      s = ReadStringMap(v, kWhat, "FailedAndUnresolvableNodes", r.failed_and_unresolvable);
    } else if (KeyIs(k, "Error")) {
      std::string_view e;
      if (!v.is_null() && v.get(e)) return TypeError(kWhat, "Error", "a string");
      r.error = std::string(e);
    }
    if (!s.ok()) return s;
  }
  return r;
}

StatusOr<std::vector<framework::HostPriority>> DecodeHostPriorityList(std::string_view body) {
  constexpr std::string_view kWhat = "host priority list";
  auto root = Parse(body, kWhat);
  if (!root.ok()) return root.status();
  std::vector<framework::HostPriority> out;
  if (root->is_null()) return out;
  simdjson::dom::array arr;
  if (root->get(arr)) return TypeError(kWhat, "the answer", "an array");
  for (element e : arr) {
    simdjson::dom::object obj;
    if (e.get(obj)) return TypeError(kWhat, "an entry", "an object");
    framework::HostPriority& hp = out.emplace_back();
    for (auto [k, v] : obj) {
      if (KeyIs(k, "Host")) {
        std::string_view host;
        if (v.get(host)) return TypeError(kWhat, "Host", "a string");
        hp.host = std::string(host);
      } else if (KeyIs(k, "Score")) {
        if (Status s = ReadInt(v, kWhat, "Score", hp.score); !s.ok()) return s;
      }
    }
  }
  return out;
}

std::string EncodeBindingArgs(const api::Pod& pod, std::string_view node) {
  std::string out = "{\"PodName\":";
  api::AppendJsonString(out, pod.metadata.name);
  out += ",\"PodNamespace\":";
  api::AppendJsonString(out, pod.metadata.namespace_);
  out += ",\"PodUID\":";
  api::AppendJsonString(out, pod.metadata.uid);
  out += ",\"Node\":";
  api::AppendJsonString(out, node);
  out += '}';
  return out;
}

StatusOr<std::string> DecodeBindingResult(std::string_view body) {
  constexpr std::string_view kWhat = "binding result";
  auto root = Parse(body, kWhat);
  if (!root.ok()) return root.status();
  simdjson::dom::object obj;
  if (root->get(obj)) return TypeError(kWhat, "the answer", "an object");
  std::string error;
  for (auto [k, v] : obj) {
    if (!KeyIs(k, "Error") || v.is_null()) continue;
    std::string_view e;
    if (v.get(e)) return TypeError(kWhat, "Error", "a string");
    error = std::string(e);
  }
  return error;
}

std::string EncodePreemptionArgs(std::string_view pod_json, const framework::NodeVictims& candidates, bool meta) {
  std::string out = "{\"Pod\":";
  out += pod_json;
  out += meta ? ",\"NodeNameToVictims\":null,\"NodeNameToMetaVictims\":{" : ",\"NodeNameToVictims\":{";
  bool first = true;
  for (const auto& [node, victims] : candidates) {
    if (!first) out += ',';
    first = false;
    api::AppendJsonString(out, node);
    out += ":{\"Pods\":[";
    for (size_t i = 0; i < victims.pods.size(); ++i) {
      if (i) out += ',';
      if (meta) {
        out += "{\"UID\":";
        api::AppendJsonString(out, victims.pods[i]->metadata.uid);
        out += '}';
      } else {
        out += api::EncodePod(*victims.pods[i]);
      }
    }
    out += "],\"NumPDBViolations\":" + std::to_string(victims.num_pdb_violations) + "}";
  }
  out += meta ? "}}" : "},\"NodeNameToMetaVictims\":null}";
  return out;
}

StatusOr<std::map<std::string, MetaVictims, std::less<>>> DecodePreemptionResult(std::string_view body) {
  constexpr std::string_view kWhat = "preemption result";
  auto root = Parse(body, kWhat);
  if (!root.ok()) return root.status();
  simdjson::dom::object obj;
  if (root->get(obj)) return TypeError(kWhat, "the answer", "an object");
  std::map<std::string, MetaVictims, std::less<>> out;
  for (auto [k, v] : obj) {
    if (!KeyIs(k, "NodeNameToMetaVictims") || v.is_null()) continue;
    simdjson::dom::object nodes;
    if (v.get(nodes)) return TypeError(kWhat, "NodeNameToMetaVictims", "an object");
    for (auto [node, mv] : nodes) {
      MetaVictims& m = out[std::string(node)];
      if (mv.is_null()) continue;
      simdjson::dom::object fields;
      if (mv.get(fields)) return TypeError(kWhat, "NodeNameToMetaVictims[" + std::string(node) + "]", "an object");
      for (auto [fk, fv] : fields) {
        if (KeyIs(fk, "NumPDBViolations")) {
          if (Status s = ReadInt(fv, kWhat, "NumPDBViolations", m.num_pdb_violations); !s.ok()) return s;
        } else if (KeyIs(fk, "Pods") && !fv.is_null()) {
          simdjson::dom::array pods;
          if (fv.get(pods)) return TypeError(kWhat, "Pods", "an array");
          for (element p : pods) {
            simdjson::dom::object po;
            if (p.get(po)) return TypeError(kWhat, "Pods[]", "an object");
            for (auto [pk, pv] : po) {
              std::string_view uid;
              if (!KeyIs(pk, "UID")) continue;
              if (pv.get(uid)) return TypeError(kWhat, "Pods[].UID", "a string");
              m.uids.emplace_back(uid);
            }
          }
        }
      }
    }
  }
  return out;
}

}  // namespace ksched::extender
