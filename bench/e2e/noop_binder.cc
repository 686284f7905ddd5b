// The most any scheduler could reach on this API server: binds every pending pod of one
// schedulerName round-robin over the nodes with no scheduling at all, through ksched's
// own API client and bind request (scheduler::ApiWriter::BindAsync) at the same qps.
// bench-e2e runs it with LIMIT=1 in place of a scheduler, so every run can print
// ksched's fraction of the reachable maximum.
//   bench_noop_binder <kubeconfig> <schedulerName> <qps> [--watch-pods]
// Lists the nodes and the pending pods in pages (as an informer's list does), sends one
// bind per pod (at most kInFlight at once), prints what it did, and then waits to be
// ended (bench_e2e stops it once every pod is bound). With --watch-pods it also keeps a
// pod informer as ksched's (its own connection, the same field selector) from before
// the first bind, so the API server encodes and sends every bound pod to one more
// watcher, as it must for any scheduler: what a scheduler could reach, rather than a
// binder alone.
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/client/curl_client.h"
#include "informers/informer.h"
#include "pkg/client/rest_config.h"
#include "pkg/api/json.h"
#include "pkg/scheduler/api_writer.h"

namespace {

using namespace ksched;

constexpr int kInFlight = 512;
constexpr int kPageSize = 500;

// Every page of a list; `decode` is the type's list decoder.
template <typename T, typename Decode>
StatusOr<std::vector<std::shared_ptr<const T>>> ListAll(client::ApiClient& client, const std::string& path,
                                                        Decode decode) {
  std::vector<std::shared_ptr<const T>> all;
  std::string token;
  do {
    std::string url = path + (path.find('?') == std::string::npos ? "?" : "&") + "limit=" + std::to_string(kPageSize);
    if (!token.empty()) url += "&continue=" + token;
    auto r = client.Do({.path = url});
    if (!r.ok()) return r.status();
    api::JsonParser parser;
    auto list = decode(parser, api::JsonText(r->body));
    if (!list.ok()) return list.status();
    for (auto& item : list->items) all.push_back(std::move(item));
    token = list->continue_token;
  } while (!token.empty());
  return all;
}

int Main(int argc, char** argv) {
  const bool watch_pods = argc == 5 && std::string_view(argv[4]) == "--watch-pods";
  if (argc != 4 && !watch_pods) {
    std::fprintf(stderr, "usage: %s <kubeconfig> <schedulerName> <qps> [--watch-pods]\n", argv[0]);
    return 2;
  }
  auto rc = client::LoadKubeconfig(argv[1]);
  if (!rc.ok()) {
    std::fprintf(stderr, "%s\n", rc.status().ToString().c_str());
    return 1;
  }
  const std::string scheduler_name = argv[2];
  rc->qps = std::atof(argv[3]);
  rc->burst = std::max(1, std::atoi(argv[3]));
  auto client = client::NewCurlApiClient(*rc);
  if (!client.ok()) {
    std::fprintf(stderr, "%s\n", client.status().ToString().c_str());
    return 1;
  }
  // As ksched: watches on a connection of their own, no handler work.
  struct Ignore final : informers::EventHandler<api::Pod> {
    void OnAdd(const api::PodPtr&) override {}
    void OnUpdate(const api::PodPtr&, const api::PodPtr&) override {}
    void OnDelete(const informers::Deleted<api::Pod>&) override {}
  } ignore;
  std::unique_ptr<client::ApiClient> watch_client;
  std::unique_ptr<informers::PodInformer> watcher;
  if (watch_pods) {
    auto created = client::NewCurlApiClient(*rc);
    if (!created.ok()) {
      std::fprintf(stderr, "%s\n", created.status().ToString().c_str());
      return 1;
    }
    watch_client = std::move(*created);
    watcher = std::make_unique<informers::PodInformer>(*watch_client, "/api/v1/pods",
                                                       informers::InformerOptions{
                                                           .field_selector = informers::kNonTerminalPodsSelector});
    watcher->AddHandler(&ignore);
    watcher->Start();
    if (!watcher->WaitForSync(std::chrono::minutes(2))) {
      std::fprintf(stderr, "bench_noop_binder: the pod informer did not sync\n");
      return 1;
    }
  }
  auto nodes = ListAll<api::Node>(**client, "/api/v1/nodes",
                                  [](api::JsonParser& p, api::JsonText t) { return api::DecodeNodeList(p, t); });
  auto pods = ListAll<api::Pod>(
      **client, "/api/v1/pods?fieldSelector=spec.nodeName%3D,spec.schedulerName%3D" + scheduler_name,
      [](api::JsonParser& p, api::JsonText t) { return api::DecodePodList(p, t); });
  if (!nodes.ok() || !pods.ok() || nodes->empty()) {
    std::fprintf(stderr, "bench_noop_binder: list: %s\n",
                 !nodes.ok() ? nodes.status().ToString().c_str()
                 : !pods.ok() ? pods.status().ToString().c_str()
                              : "no nodes");
    return 1;
  }

  scheduler::ApiWriter writer({.bind_client = client->get(), .status_client = client->get()});
  std::mutex mu;
  std::condition_variable cv;
  int in_flight = 0;
  std::atomic<int> failed{0};
  for (size_t i = 0; i < pods->size(); ++i) {
    {
      std::unique_lock l(mu);
      cv.wait(l, [&] { return in_flight < kInFlight; });
      ++in_flight;
    }
    writer.BindAsync(*(*pods)[i], (*nodes)[i % nodes->size()]->Name(), [&](Status s) {
      if (!s.ok()) failed.fetch_add(1);
      std::lock_guard l(mu);
      --in_flight;
      cv.notify_one();
    });
  }
  {
    std::unique_lock l(mu);
    cv.wait(l, [&] { return in_flight == 0; });
  }
  std::fprintf(stderr, "bench_noop_binder: %zu pods bound round-robin over %zu nodes, %d failed%s\n", pods->size(),
               nodes->size(), failed.load(), watch_pods ? " (with a pod watch)" : "");
  pause();  // as a scheduler would, run until ended
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return Main(argc, argv); }
