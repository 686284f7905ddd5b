// ksched_test_extender: an HTTP scheduler extender for integration tests and benchmarks,
// speaking upstream's extender/v1 protocol to ksched and kube-scheduler alike. Its
// verdicts follow node names, so they are the same whether it is sent node names
// (nodeCacheCapable) or Node objects:
//
//   ksched_test_extender [--reject n1,n2] [--unresolvable n3] [--scores n1=10,n2=3]
//                        [--kubeconfig FILE] [--delay-ms N]
//
//   POST /filter      nodes in --reject fail (FailedNodes), in --unresolvable fail for
//                     good (FailedAndUnresolvableNodes); the others pass, answered in the
//                     form they came in (NodeNames, or the Node objects themselves)
//   POST /prioritize  each node's --scores entry (0 when not listed)
//   POST /bind        binds through the API server of --kubeconfig (the bind verb)
//   POST /preempt     accepts every candidate with its victims, as UIDs
//   GET  /stats       calls per verb, and how many requests carried names / Node objects
//
// Listens on 127.0.0.1 on a free port and prints "listening on 127.0.0.1:PORT" first.
#include <signal.h>
#include <simdjson.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "pkg/api/json.h"
#include "pkg/client/curl_client.h"
#include "pkg/client/rest_config.h"
#include "tests/fakes/fake_api_server.h"

namespace {

using ksched::testing::HttpRequest;
using ksched::testing::ResponseWriter;

std::set<std::string> SplitSet(const std::string& s) {
  std::set<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) out.insert(item);
  }
  return out;
}

struct Options {
  std::set<std::string> reject, unresolvable;
  std::map<std::string, int64_t> scores;
  std::string kubeconfig;
  int delay_ms = 0;
};

struct Stats {
  std::atomic<int64_t> filter{0}, prioritize{0}, bind{0}, preempt{0}, with_names{0}, with_nodes{0};
};

// Go's encoding/json matches field names ignoring case; so does this extender.
simdjson::dom::element Field(simdjson::dom::element obj, std::string_view name) {
  simdjson::dom::object o;
  if (obj.get(o)) return {};
  for (auto [k, v] : o) {
    if (k.size() != name.size()) continue;
    bool same = true;
    for (size_t i = 0; i < k.size() && same; ++i) same = std::tolower(k[i]) == std::tolower(name[i]);
    if (same) return v;
  }
  return {};
}

bool Present(simdjson::dom::element e) { return e.type() != simdjson::dom::element_type::NULL_VALUE; }

class Extender {
 public:
  explicit Extender(Options o) : o_(std::move(o)) {
    if (!o_.kubeconfig.empty()) {
      auto rc = ksched::client::LoadKubeconfig(o_.kubeconfig);
      if (!rc.ok()) {
        std::fprintf(stderr, "ksched_test_extender: %s\n", rc.status().message().c_str());
        std::exit(2);
      }
      rc->qps = 0;
      auto c = ksched::client::NewCurlApiClient(*rc);
      if (!c.ok()) std::exit(2);
      api_ = std::move(*c);
    }
  }

  void Serve(const HttpRequest& req, ResponseWriter& w) {
    if (o_.delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(o_.delay_ms));
    if (req.method == "GET" && req.path == "/stats") {
      w.Respond(200, "{\"filter\":" + std::to_string(stats_.filter) + ",\"prioritize\":" +
                         std::to_string(stats_.prioritize) + ",\"bind\":" + std::to_string(stats_.bind) +
                         ",\"preempt\":" + std::to_string(stats_.preempt) + ",\"withNames\":" +
                         std::to_string(stats_.with_names) + ",\"withNodes\":" + std::to_string(stats_.with_nodes) +
                         "}");
      return;
    }
    simdjson::dom::parser parser;
    simdjson::dom::element root;
    if (req.method != "POST" || parser.parse(req.body).get(root)) {
      w.Respond(400, "bad request");
      return;
    }
    const std::string verb = req.path.substr(req.path.rfind('/') + 1);
    if (verb == "filter") return w.Respond(200, Filter(root));
    if (verb == "prioritize") return w.Respond(200, Prioritize(root));
    if (verb == "bind") return w.Respond(200, Bind(root));
    if (verb == "preempt") return w.Respond(200, Preempt(root));
    w.Respond(404, "no such verb");
  }

 private:
  // The candidate nodes' names, and their objects when sent.
  void Candidates(simdjson::dom::element args, std::vector<std::string>& names,
                  std::vector<std::string>* objects) {
    simdjson::dom::element node_names = Field(args, "NodeNames");
    if (Present(node_names)) {
      ++stats_.with_names;
      simdjson::dom::array arr;
      if (!node_names.get(arr)) {
        for (auto n : arr) names.emplace_back(std::string_view(n));
      }
      return;
    }
    ++stats_.with_nodes;
    simdjson::dom::array items;
    if (Field(Field(args, "Nodes"), "items").get(items)) return;
    for (auto item : items) {
      std::string_view name;
      if (item.at_pointer("/metadata/name").get(name)) continue;
      names.emplace_back(name);
      if (objects) objects->push_back(simdjson::minify(item));
    }
  }

  std::string Filter(simdjson::dom::element args) {
    ++stats_.filter;
    std::vector<std::string> names, objects;
    Candidates(args, names, &objects);
    const bool by_name = objects.empty() && !names.empty() && Present(Field(args, "NodeNames"));
    std::string passed, failed, unresolvable;
    for (size_t i = 0; i < names.size(); ++i) {
      std::string quoted;
      ksched::api::AppendJsonString(quoted, names[i]);
      if (o_.reject.contains(names[i])) {
        failed += (failed.empty() ? "" : ",") + quoted + ":\"rejected by the test extender\"";
      } else if (o_.unresolvable.contains(names[i])) {
        unresolvable += (unresolvable.empty() ? "" : ",") + quoted + ":\"never fits the test extender\"";
      } else {
        passed += (passed.empty() ? "" : ",") + (by_name ? quoted : objects[i]);
      }
    }
    std::string out = by_name ? "{\"Nodes\":null,\"NodeNames\":[" + passed + "]"
                              : "{\"Nodes\":{\"metadata\":{},\"items\":[" + passed + "]},\"NodeNames\":null";
    return out + ",\"FailedNodes\":{" + failed + "},\"FailedAndUnresolvableNodes\":{" + unresolvable +
           "},\"Error\":\"\"}";
  }

  std::string Prioritize(simdjson::dom::element args) {
    ++stats_.prioritize;
    std::vector<std::string> names;
    Candidates(args, names, nullptr);
    std::string out = "[";
    for (size_t i = 0; i < names.size(); ++i) {
      auto it = o_.scores.find(names[i]);
      if (i) out += ',';
      out += "{\"Host\":";
      ksched::api::AppendJsonString(out, names[i]);
      out += ",\"Score\":" + std::to_string(it == o_.scores.end() ? 0 : it->second) + "}";
    }
    return out + "]";
  }

  std::string Bind(simdjson::dom::element args) {
    ++stats_.bind;
    std::string_view name, ns, uid, node;
    if (Field(args, "PodName").get(name) || Field(args, "PodNamespace").get(ns) || Field(args, "PodUID").get(uid) ||
        Field(args, "Node").get(node)) {
      return R"({"Error":"PodName, PodNamespace, PodUID and Node must be strings"})";
    }
    if (!api_) return R"({"Error":"this extender was started without --kubeconfig: it cannot bind"})";
    auto r = api_->Do({.verb = ksched::client::Verb::kPost,
                       .path = "/api/v1/namespaces/" + std::string(ns) + "/pods/" + std::string(name) + "/binding",
                       .body = ksched::api::EncodeBinding(ns, name, uid, node)});
    if (r.ok()) return R"({"Error":""})";
    std::string out = "{\"Error\":";
    ksched::api::AppendJsonString(out, r.status().message());
    return out + "}";
  }

  std::string Preempt(simdjson::dom::element args) {
    ++stats_.preempt;
    std::string out = "{\"NodeNameToMetaVictims\":{";
    bool first = true;
    for (std::string_view key : {"NodeNameToMetaVictims", "NodeNameToVictims"}) {
      simdjson::dom::object nodes;
      if (Field(args, key).get(nodes)) continue;
      for (auto [node, victims] : nodes) {
        if (!first) out += ',';
        first = false;
        ksched::api::AppendJsonString(out, node);
        out += ":{\"Pods\":[";
        simdjson::dom::array pods;
        bool first_pod = true;
        if (!Field(victims, "Pods").get(pods)) {
          for (auto p : pods) {
            std::string_view uid;
            if (Field(p, "UID").get(uid) && p.at_pointer("/metadata/uid").get(uid)) continue;
            out += first_pod ? "" : ",";
            first_pod = false;
            out += "{\"UID\":";
            ksched::api::AppendJsonString(out, uid);
            out += "}";
          }
        }
        int64_t pdb = 0;
        if (Field(victims, "NumPDBViolations").get(pdb)) pdb = 0;
        out += "],\"NumPDBViolations\":" + std::to_string(pdb) + "}";
      }
    }
    return out + "}}";
  }

  Options o_;
  Stats stats_;
  ksched::client::ApiClientPtr api_;
};

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](std::string_view flag) -> std::optional<std::string> {
      if (a.rfind(std::string(flag) + "=", 0) == 0) return a.substr(flag.size() + 1);
      if (a == flag && i + 1 < argc) return std::string(argv[++i]);
      return std::nullopt;
    };
    if (auto v = value("--reject")) {
      o.reject = SplitSet(*v);
    } else if (auto v = value("--unresolvable")) {
      o.unresolvable = SplitSet(*v);
    } else if (auto v = value("--scores")) {
      for (const std::string& kv : SplitSet(*v)) {
        size_t eq = kv.find('=');
        if (eq != std::string::npos) o.scores[kv.substr(0, eq)] = std::stoll(kv.substr(eq + 1));
      }
    } else if (auto v = value("--kubeconfig")) {
      o.kubeconfig = *v;
    } else if (auto v = value("--delay-ms")) {
      o.delay_ms = std::stoi(*v);
    } else {
      std::fprintf(stderr, "ksched_test_extender: unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGINT);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
  Extender extender(std::move(o));
  ksched::testing::FakeApiServer server([&](const HttpRequest& r, ResponseWriter& w) { extender.Serve(r, w); },
                                        /*record=*/false);
  std::printf("listening on 127.0.0.1:%d\n", server.port());
  std::fflush(stdout);
  int sig = 0;
  sigwait(&sigs, &sig);
  server.Stop();
  return 0;
}
