#include "pkg/simulate/list_cluster.h"

#include <vector>

#include "informers/informer.h"
#include "pkg/simulate/json_patch.h"

namespace ksched::simulate {

Status ListCluster(client::ApiClient& client, const std::string& server, ClusterObjects& out) {
  for (const KindInfo& kind : Kinds()) {
    std::vector<std::string> paths = {std::string(kind.collection)};
    // Servers before 1.21 serve PodDisruptionBudgets as policy/v1beta1 only.
    if (kind.kind == "PodDisruptionBudget") paths.push_back("/apis/policy/v1beta1/poddisruptionbudgets");
    for (const std::string& path : paths) {
      std::string cont;
      bool served = true;
      do {
        std::string p = path + "?limit=500";
        if (kind.kind == "Pod") p += "&fieldSelector=" + client::UrlEncode(informers::kNonTerminalPodsSelector);
        if (!cont.empty()) p += "&continue=" + client::UrlEncode(cont);
        auto r = client.Do({.path = p, .timeout = std::chrono::seconds(60)});
        if (!r.ok()) {
          if (r.status().code() == StatusCode::kNotFound) {
            served = false;
            break;
          }
          return Status(r.status().code(), "--from-cluster: GET " + server + p + ": " + r.status().message());
        }
        if (Status s = AddJsonDocument(r->body, server + path, out); !s.ok()) return s;
        auto next = StringAt(r->body, "metadata.continue");
        cont = next.ok() && *next ? **next : "";
      } while (!cont.empty());
      if (served) break;
    }
  }
  return Status::OK();
}

}  // namespace ksched::simulate
