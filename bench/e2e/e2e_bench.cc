// End-to-end scheduler benchmark on a real kube-apiserver.
//   bench_e2e <kubeconfig> <nodes> <pods> <schedulerName> [<workload>] -- <scheduler command...>
// Creates the workload's nodes and pods (bench/e2e/workloads.h; "-" for <nodes> or <pods>
// takes the workload's default; the default workload is "basic") while no scheduler runs,
// then starts the scheduler command, watches the pods until all are bound (or no bind for
// 2 minutes, or 10 minutes in all: then it prints "TIMEOUT: ..." and exits 1), and prints:
// time to all bound, throughput (average, and per-second p50/p90/p99 over the busy
// period), scheduler CPU ms per pod (utime+stime from /proc) until all are bound and
// again once the scheduler has gone quiet (writes it deferred, such as events, included),
// the Scheduled events recorded, and peak RSS (VmHWM). Then it checks the placement
// against the workload's constraints and prints "violations: N" (0 for workloads without
// hard constraints).
// A workload with a fill (preemption) first creates its PriorityClasses and the
// low-priority pods, already bound. In every workload a kubelet stand-in
// (tests/harness/kubelet_standin.h) finishes graceful deletes while the scheduler runs, and
// its watch is the one the binds are timed on.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>
#include <unordered_map>
#include <vector>

#include <simdjson.h>

#include "bench/e2e/informer_memory.h"
#include "bench/e2e/workloads.h"
#include "pkg/client/curl_client.h"
#include "informers/informer.h"
#include "pkg/client/rest_config.h"
#include "pkg/api/json.h"
#include "tests/harness/kubelet_standin.h"

namespace {

using namespace ksched;
using Steady = std::chrono::steady_clock;
constexpr auto kTimeout = std::chrono::minutes(10);
constexpr auto kQuietTimeout = std::chrono::minutes(1);
// No new bind for this long: the scheduler is taken to have given up on the rest.
constexpr auto kStallTimeout = std::chrono::minutes(2);

// Counts first-time binds of the measured pods (not a fill's) with their times, and where
// each pod went.
class BindRecorder : public informers::EventHandler<api::Pod> {
 public:
  void OnAdd(const api::PodPtr& p) override {
    if (p->IsAssigned()) Record(*p);
  }
  void OnUpdate(const api::PodPtr& o, const api::PodPtr& n) override {
    if (!o->IsAssigned() && n->IsAssigned()) Record(*n);
  }
  void OnDelete(const informers::Deleted<api::Pod>&) override {}
  size_t count() {
    std::lock_guard l(mu_);
    return times_.size();
  }
  std::vector<Steady::time_point> times() {
    std::lock_guard l(mu_);
    return times_;
  }
  Steady::time_point last() {
    std::lock_guard l(mu_);
    return times_.empty() ? Steady::time_point() : times_.back();
  }
  // Pod name -> when its bind was seen.
  std::unordered_map<std::string, Steady::time_point> bound_at() {
    std::lock_guard l(mu_);
    return bound_at_;
  }
  // Pod name -> node name.
  std::unordered_map<std::string, std::string> nodes() {
    std::lock_guard l(mu_);
    return node_of_pod_;
  }

 private:
  void Record(const api::Pod& p) {
    if (p.metadata.name.starts_with(bench::kFillPodPrefix)) return;
    std::lock_guard l(mu_);
    times_.push_back(Steady::now());
    node_of_pod_[p.metadata.name] = p.spec.node_name;
    bound_at_[p.metadata.name] = times_.back();
  }
  std::mutex mu_;
  std::vector<Steady::time_point> times_;
  std::unordered_map<std::string, std::string> node_of_pod_;
  std::unordered_map<std::string, Steady::time_point> bound_at_;
};

// The API server's own count of the requests it served (apiserver_request_total on its
// /metrics), summed by verb and resource ("POST pods/binding"). Empty when /metrics
// cannot be read. Every client is counted: the scheduler, and the bench's kubelet
// stand-in and watch.
std::map<std::string, double> ApiRequestCounts(client::ApiClient& c) {
  std::map<std::string, double> counts;
  auto r = c.Do({.path = "/metrics"});
  if (!r.ok()) return counts;
  std::istringstream in(r->body);
  constexpr std::string_view kMetric = "apiserver_request_total{";
  auto label = [](std::string_view labels, std::string_view name) {
    const std::string key = std::string(name) + "=\"";
    for (size_t at = labels.find(key); at != std::string_view::npos; at = labels.find(key, at + 1)) {
      if (at != 0 && labels[at - 1] != ',') continue;
      const size_t begin = at + key.size();
      return labels.substr(begin, labels.find('"', begin) - begin);
    }
    return std::string_view();
  };
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with(kMetric)) continue;
    const size_t close = line.rfind('}');
    if (close == std::string::npos) continue;
    std::string_view labels = std::string_view(line).substr(kMetric.size(), close - kMetric.size());
    std::string key(label(labels, "verb"));
    key += ' ';
    key += label(labels, "resource");
    if (std::string_view sub = label(labels, "subresource"); !sub.empty()) {
      key += '/';
      key += sub;
    }
    counts[key] += std::atof(line.c_str() + close + 1);
  }
  return counts;
}

// "POST pods/binding 500, DELETE pods 3000, ...": what changed between two counts, the
// largest first (reads as the requests each pod cost).
std::string RequestCountsDelta(const std::map<std::string, double>& before,
                               const std::map<std::string, double>& after) {
  std::vector<std::pair<double, std::string>> delta;
  for (const auto& [key, n] : after) {
    auto it = before.find(key);
    const double d = n - (it == before.end() ? 0 : it->second);
    if (d >= 1) delta.emplace_back(d, key);
  }
  std::sort(delta.begin(), delta.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string out;
  for (const auto& [d, key] : delta) {
    if (!out.empty()) out += ", ";
    out += key + " " + std::to_string(static_cast<long long>(d));
  }
  return out.empty() ? "none counted" : out;
}

bool CreateAll(client::ApiClient& c, const std::string& path, const std::vector<std::string>& bodies) {
  std::mutex mu;
  std::condition_variable cv;
  size_t done = 0, failed = 0;
  for (const auto& b : bodies) {
    c.Send({.verb = client::Verb::kPost, .path = path, .body = b}, [&](StatusOr<client::Response> r) {
      std::lock_guard l(mu);
      ++done;
      if (!r.ok() && r.status().code() != StatusCode::kAlreadyExists) {
        if (failed++ == 0) std::fprintf(stderr, "create failed: %s\n", r.status().ToString().c_str());
      }
      cv.notify_all();
    });
  }
  std::unique_lock l(mu);
  cv.wait(l, [&] { return done == bodies.size(); });
  return failed == 0;
}

// utime+stime in seconds and VmHWM in MB of a process.
std::pair<double, double> ProcStats(pid_t pid) {
  double cpu = 0, rss = 0;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string s((std::istreambuf_iterator<char>(stat)), {});
  if (auto close = s.rfind(')'); close != std::string::npos) {
    std::istringstream in(s.substr(close + 2));
    std::string field;
    unsigned long long utime = 0, stime = 0;
    for (int i = 3; i <= 15 && in >> field; ++i) {
      if (i == 14) utime = std::stoull(field);
      if (i == 15) stime = std::stoull(field);
    }
    cpu = static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
  }
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) rss = std::stod(line.substr(6)) / 1024.0;
  }
  return {cpu, rss};
}

// Creates the workload's ReplicaSet; returns its uid (empty on failure).
std::string CreateReplicaSet(client::ApiClient& c) {
  auto r = c.Do({.verb = client::Verb::kPost,
                 .path = "/apis/apps/v1/namespaces/default/replicasets",
                 .body = bench::ReplicaSetJson()});
  if (!r.ok()) {
    std::fprintf(stderr, "create ReplicaSet failed: %s\n", r.status().ToString().c_str());
    return "";
  }
  simdjson::ondemand::parser parser;
  simdjson::padded_string json(r->body);
  std::string_view uid;
  auto doc = parser.iterate(json);
  if (doc.error() || doc["metadata"]["uid"].get_string().get(uid)) {
    std::fprintf(stderr, "no metadata.uid in the created ReplicaSet: %s\n", r->body.c_str());
    return "";
  }
  return std::string(uid);
}

// The PodGroup CRD, once served, and one PodGroup per gang of `size` among `pods`.
bool CreateGangs(client::ApiClient& c, int pods, int size) {
  auto r = c.Do({.verb = client::Verb::kPost, .path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                 .body = bench::PodGroupCrdJson()});
  if (!r.ok() && r.status().code() != StatusCode::kAlreadyExists) {
    std::fprintf(stderr, "create the PodGroup CRD failed: %s\n", r.status().ToString().c_str());
    return false;
  }
  const std::string path = "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/default/podgroups";
  for (int i = 0; !c.Do({.path = path}).ok(); ++i) {
    if (i == 300) {
      std::fprintf(stderr, "the PodGroup CRD was not served within 30 s\n");
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::vector<std::string> groups;
  for (int g = 0; g * size < pods; ++g) groups.push_back(bench::PodGroupJson(g, size));
  return CreateAll(c, path, groups);
}

// The PriorityClasses of a fill (one may exist already).
bool CreatePriorityClasses(client::ApiClient& c, const bench::Fill& fill) {
  for (const bench::PriorityClass& pc : {fill.low, fill.high}) {
    auto r = c.Do({.verb = client::Verb::kPost, .path = "/apis/scheduling.k8s.io/v1/priorityclasses",
                   .body = bench::PriorityClassJson(pc)});
    if (!r.ok() && r.status().code() != StatusCode::kAlreadyExists) {
      std::fprintf(stderr, "create PriorityClass %s failed: %s\n", std::string(pc.name).c_str(),
                   r.status().ToString().c_str());
      return false;
    }
  }
  return true;
}
// Whether the Priority admission plugin resolved the pod's class into spec.priority.
bool HasPriority(client::ApiClient& c, const std::string& name, int32_t want) {
  auto r = c.Do({.path = "/api/v1/namespaces/default/pods/" + name});
  StatusOr<api::PodPtr> pod = r.ok() ? api::DecodePod(r->body) : StatusOr<api::PodPtr>(r.status());
  std::string got;
  if (!pod.ok()) {
    got = pod.status().ToString();
  } else if (!(*pod)->spec.priority) {
    got = "none (is the Priority admission plugin off?)";
  } else if (*(*pod)->spec.priority != want) {
    got = std::to_string(*(*pod)->spec.priority);
  } else {
    return true;
  }
  std::fprintf(stderr, "pod %s: expected spec.priority %d from its PriorityClass, got %s\n", name.c_str(), want,
               got.c_str());
  return false;
}

// "-": the workload's default.
int CountArg(const char* arg, int fallback) { return std::string_view(arg) == "-" ? fallback : std::atoi(arg); }

// bench_e2e --informer-memory <kubeconfig>: one line, the per-node and per-pod figures.
int PrintInformerMemory(const char* kubeconfig) {
  auto measure = [&]() -> StatusOr<bench::InformerMemory> {
    auto rc = client::LoadKubeconfig(kubeconfig);
    if (!rc.ok()) return rc.status();
    auto client = client::NewCurlApiClient(*rc);
    if (!client.ok()) return client.status();
    return bench::MeasureInformerMemory(**client);
  };
  auto m = measure();
  if (!m.ok()) {
    std::printf("informer memory: not measured (%s)\n", m.status().ToString().c_str());
    return 1;
  }
  std::printf("informer memory: %.2f KB per node (Node objects %.2f + cache and snapshot %.2f), "
              "%.2f KB per pod (Pod objects %.2f + cache and snapshot %.2f); %zu nodes, %zu pods\n",
              (m->node_objects + m->node_cache) / 1024, m->node_objects / 1024, m->node_cache / 1024,
              (m->pod_objects + m->pod_cache) / 1024, m->pod_objects / 1024, m->pod_cache / 1024, m->nodes, m->pods);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--informer-memory") return PrintInformerMemory(argv[2]);
  int sep = 0;
  for (int i = 1; i < argc; ++i)
    if (sep == 0 && std::string(argv[i]) == "--") sep = i;
  if (argc < 6 || (sep != 5 && sep != 6) || sep + 1 >= argc) {
    std::fprintf(stderr,
                 "usage: %s <kubeconfig> <nodes|-> <pods|-> <schedulerName> [<workload>] -- <command...>\n",
                 argv[0]);
    return 2;
  }
  const std::string workload_name = sep == 6 ? argv[5] : "basic";
  const bench::Workload* workload = bench::FindWorkload(workload_name);
  if (workload == nullptr) {
    std::string names;
    for (const auto& w : bench::Workloads()) names += " " + std::string(w.name);
    std::fprintf(stderr, "unknown workload \"%s\"; one of:%s\n", workload_name.c_str(), names.c_str());
    return 2;
  }
  const int num_nodes = CountArg(argv[2], workload->nodes), num_pods = CountArg(argv[3], workload->pods);
  if (workload->one_pod_per_node && num_pods > num_nodes) {
    std::fprintf(stderr, "workload %s places at most one pod per node: PODS (%d) must not exceed NODES (%d)\n",
                 workload_name.c_str(), num_pods, num_nodes);
    return 2;
  }
  const std::string scheduler_name = argv[4];
  auto rc = client::LoadKubeconfig(argv[1]);
  if (!rc.ok()) {
    std::fprintf(stderr, "%s\n", rc.status().ToString().c_str());
    return 1;
  }
  rc->qps = 0;
  auto client = client::NewCurlApiClient(*rc);
  if (!client.ok()) return 1;
  auto& c = **client;

  bench::Placement placement;
  placement.nodes = bench::MakeNodes(*workload, num_nodes);
  std::vector<std::string> nodes, pods;
  for (const api::Node& n : placement.nodes) nodes.push_back(api::EncodeNode(n));
  auto t0 = Steady::now();
  if (!CreateAll(c, "/api/v1/nodes", nodes)) return 1;
  std::string owner_uid;
  if (workload->replica_set && (owner_uid = CreateReplicaSet(c)).empty()) return 1;
  const bench::Fill* fill = workload->fill;
  if (fill != nullptr) {
    if (!CreatePriorityClasses(c, *fill)) return 1;
    std::vector<std::string> low;
    for (int n = 0; n < num_nodes; ++n)
      for (int j = 0; j < fill->per_node; ++j)
        low.push_back(api::EncodePod(bench::MakeFillPod(*workload, n, j, scheduler_name)));
    if (!CreateAll(c, "/api/v1/namespaces/default/pods", low)) return 1;
  }
  if (workload->gang_size > 0 && !CreateGangs(c, num_pods, workload->gang_size)) return 1;
  for (int i = 0; i < num_pods; ++i)
    pods.push_back(api::EncodePod(bench::MakePod(*workload, i, scheduler_name, owner_uid)));
  if (!CreateAll(c, "/api/v1/namespaces/default/pods", pods)) return 1;
  const double create_s = std::chrono::duration<double>(Steady::now() - t0).count();
  if (fill != nullptr) {
    if (num_pods > 0 && (!HasPriority(c, std::string(bench::kFillPodPrefix) + "0-0", fill->low.value) ||
                         !HasPriority(c, "bench-pod-0", fill->high.value)))
      return 1;
    std::printf("workload %s: %d nodes filled with %d %s pods (%d per node) created already bound "
                "(spec.nodeName set: no scheduler placed them), then %d %s pods to schedule; created in %.1f s\n",
                workload_name.c_str(), num_nodes, num_nodes * fill->per_node, std::string(fill->low.name).c_str(),
                fill->per_node, num_pods, std::string(fill->high.name).c_str(), create_s);
  } else {
    std::fprintf(stderr, "workload %s: created %d nodes and %d pods in %.1f s\n", workload_name.c_str(), num_nodes,
                 num_pods, create_s);
  }

  // The stand-in's watch also feeds the bind recorder, so bind and removal times are
  // taken on one watch.
  BindRecorder rec;
  testing::KubeletStandin kubelet(c, {.pods_path = "/api/v1/namespaces/default/pods"});
  kubelet.AddHandler(&rec);
  if (!kubelet.Start(std::chrono::minutes(2))) return 1;
  size_t already = rec.count();

  // The control plane's CPU over the same window (BENCH_SERVER_PIDS="<apiserver> <etcd>"),
  // to show how much of the machine the API server needs for the same pods.
  std::vector<pid_t> server_pids;
  if (const char* env = std::getenv("BENCH_SERVER_PIDS")) {
    std::istringstream in(env);
    for (pid_t p; in >> p;) server_pids.push_back(p);
  }
  auto server_cpu = [&] {
    double sum = 0;
    for (pid_t p : server_pids) sum += ProcStats(p).first;
    return sum;
  };
  const double server_cpu0 = server_cpu();
  const auto requests0 = ApiRequestCounts(c);
  auto start = Steady::now();
  pid_t pid = fork();
  if (pid == 0) {
    execvp(argv[sep + 1], argv + sep + 1);
    std::perror("exec");
    _exit(127);
  }
  double peak_rss = 0, cpu = 0;
  const size_t want = already + static_cast<size_t>(num_pods);
  bool stalled = false;
  while (rec.count() < want) {
    auto now = Steady::now();
    if (now - start >= kTimeout || now - std::max(start, rec.last()) >= kStallTimeout) {
      stalled = true;
      break;
    }
    auto [c_now, rss] = ProcStats(pid);
    cpu = std::max(cpu, c_now);
    peak_rss = std::max(peak_rss, rss);
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      std::fprintf(stderr, "scheduler exited early (status %d)\n", status);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  auto end = Steady::now();
  const bool all_bound = rec.count() >= want;
  if (stalled) {
    std::printf("TIMEOUT: %zu of %d pods bound after %.0f s, none in the last %.0f s; giving up (%s)\n",
                rec.count() - already, num_pods, std::chrono::duration<double>(end - start).count(),
                std::chrono::duration<double>(end - std::max(start, rec.last())).count(),
                fill != nullptr ? "does the scheduler preempt?" : "see the scheduler's log");
    std::fflush(stdout);
  }
  const double server_cpu_used = server_cpu() - server_cpu0;
  const auto requests_bound = ApiRequestCounts(c);
  auto [c_final, rss_final] = ProcStats(pid);
  cpu = std::max(cpu, c_final);
  peak_rss = std::max(peak_rss, rss_final);
  // A scheduler may defer events behind binds: let it finish that work (no CPU used for
  // 1.5 s, so a stall of the API server does not pass for the end), so the totals below
  // cover everything the pods cost.
  // (Not after a timeout: the figures are moot then, and a scheduler retrying pods it
  // cannot place never goes quiet.)
  double cpu_all = cpu, last = cpu;
  auto quiet_since = Steady::now();
  while (all_bound && Steady::now() - quiet_since < std::chrono::milliseconds(1500) &&
         Steady::now() - end < kQuietTimeout) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    auto [c_now, rss] = ProcStats(pid);
    peak_rss = std::max(peak_rss, rss);
    if (c_now - last > 0.005) quiet_since = Steady::now();
    last = c_now;
    cpu_all = std::max(cpu_all, c_now);
  }
  const double server_cpu_all = server_cpu() - server_cpu0;
  const auto requests_all = ApiRequestCounts(c);
  size_t scheduled_events = 0;
  if (auto ev = c.Do({.path = "/apis/events.k8s.io/v1/namespaces/default/events"}); ev.ok()) {
    constexpr std::string_view kScheduled = R"("reason":"Scheduled")";
    for (size_t at = ev->body.find(kScheduled); at != std::string::npos; at = ev->body.find(kScheduled, at + 1))
      ++scheduled_events;
  }
  kill(pid, SIGTERM);
  waitpid(pid, nullptr, 0);
  // The pods as they stand, for the placement check.
  std::vector<api::PodPtr> pods_at_end;
  auto listed = c.Do({.path = "/api/v1/namespaces/default/pods"});
  auto list = listed.ok() ? api::DecodePodList(listed->body) : StatusOr<api::ObjectList<api::Pod>>(listed.status());
  if (list.ok()) {
    pods_at_end = std::move(list->items);
  } else {
    std::fprintf(stderr, "listing the pods after the run failed: %s\n", list.status().ToString().c_str());
  }
  kubelet.Stop();

  auto times = rec.times();
  size_t bound = times.size() - already;
  std::sort(times.begin(), times.end());
  double total = std::chrono::duration<double>(end - start).count();
  // Per-second bind counts over the busy period (first to last bind).
  std::vector<double> per_sec;
  if (bound > 0) {
    auto first = times[already];
    size_t buckets = static_cast<size_t>(std::chrono::duration<double>(times.back() - first).count()) + 1;
    per_sec.assign(buckets, 0);
    for (size_t i = already; i < times.size(); ++i)
      per_sec[static_cast<size_t>(std::chrono::duration<double>(times[i] - first).count())] += 1;
    if (per_sec.size() > 1) per_sec.pop_back();  // the last, partial second
  }
  double busy = bound > 0 ? std::chrono::duration<double>(times.back() - times[already]).count() : 0;
  std::printf("scheduler=%s nodes=%d pods=%d bound=%zu\n", scheduler_name.c_str(), num_nodes, num_pods, bound);
  if (all_bound) {
    std::printf("time to all bound (from scheduler start): %.2f s\n", total);
  } else {
    std::printf("time to all bound (from scheduler start): never (gave up after %.2f s)\n", total);
  }
  std::printf("throughput: average %.0f pods/s over the whole run, %.0f pods/s first-to-last bind\n",
              static_cast<double>(bound) / total, busy > 0 ? static_cast<double>(bound) / busy : 0.0);
  std::printf("per-second binds: p50 %.0f  p90 %.0f  p99 %.0f\n", bench::Percentile(per_sec, 0.5),
              bench::Percentile(per_sec, 0.9), bench::Percentile(per_sec, 0.99));
  auto per_pod = [&](double seconds) { return bound ? seconds * 1000 / static_cast<double>(bound) : 0.0; };
  std::printf("scheduler CPU until all bound: %.0f ms total, %.3f ms per pod\n", cpu * 1000, per_pod(cpu));
  std::printf("scheduler CPU incl. deferred writes: %.0f ms total, %.3f ms per pod (%zu Scheduled events)\n",
              cpu_all * 1000, per_pod(cpu_all), scheduled_events);
  std::printf("scheduler peak RSS: %.1f MB\n", peak_rss);
  if (!server_pids.empty())
    std::printf("kube-apiserver+etcd CPU: %.3f ms per pod until all bound, %.3f ms incl. deferred writes\n",
                per_pod(server_cpu_used), per_pod(server_cpu_all));

  std::printf("API requests until all bound (every client): %s\n",
              RequestCountsDelta(requests0, requests_bound).c_str());
  std::printf("API requests after (deferred writes): %s\n", RequestCountsDelta(requests_bound, requests_all).c_str());
  if (fill != nullptr || kubelet.DeletesSent() > 0)
    std::printf("kubelet stand-in: %zu bound pods removed, %zu final deletes sent (%zu failed)\n",
                kubelet.RemovalCount(), kubelet.DeletesSent(), kubelet.DeleteErrors());

  // The placement, over the pods bound (all of them unless the run timed out).
  placement.pods = num_pods;
  placement.node_of_pod = rec.nodes();
  placement.bound_at = rec.bound_at();
  placement.removals = kubelet.Removals();
  placement.pods_at_end = std::move(pods_at_end);
  bench::Verification v = workload->verify(*workload, placement);
  for (const std::string& line : v.lines) std::printf("%s\n", line.c_str());
  if (bound != static_cast<size_t>(num_pods))
    std::printf("(placement of the %zu pods bound; %zu never were)\n", bound, static_cast<size_t>(num_pods) - bound);
  std::printf("violations: %lld\n", static_cast<long long>(v.violations));

  // What ksched's informers and cache keep per object, on the cluster as the run left it,
  // measured by a fresh process of this program (no other thread allocating).
  std::fflush(stdout);
  if (pid_t m = fork(); m == 0) {
    execl("/proc/self/exe", argv[0], "--informer-memory", argv[1], static_cast<char*>(nullptr));
    _exit(127);
  } else if (m > 0) {
    waitpid(m, nullptr, 0);
  }
  return bound == static_cast<size_t>(num_pods) ? 0 : 1;
}
