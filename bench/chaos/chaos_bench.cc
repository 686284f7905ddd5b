// Chaos benchmark (make bench-chaos; scripts/bench-chaos.sh brings the control plane up
// with KSCHED_CP_AUDIT=1 and runs this):
//   chaos_bench <control-plane dir> <ksched binary> <control-plane.sh> [--nodes N] [--churn N] [--seed N]
//               [--faults apiserver,compact,churn,leader]
//
// N one-CPU nodes exactly filled by 10 x N pods of 100m (schedulerName ksched), scheduled
// by two ksched replicas with leader election (lease 4 s, renew 3 s, retry 400 ms) while:
//   1. kube-apiserver is SIGKILLed and restarted, a fifth of the pods bound;
//   2. once binding resumes, etcd is compacted to its current revision;
//   3. half the churn: random pods deleted (gracePeriodSeconds 0), as many new ones created;
//   4. the leader is SIGKILLed;
//   5. once another replica leads, the other half of the churn, and at once
//      kube-apiserver is SIGKILLed and restarted again.
// The cluster is exactly full before and after the churn, so a pod the scheduler
// overcommits or strands shows. Replicas that exit (the one SIGKILLed, or a leader that
// could not renew while the apiserver was down) are restarted at once, as a kubelet
// would, so two run again. Then, once every pod is bound, it checks: every pod bound, no
// node over its CPU, no pod with more than one successful binding in the apiserver's audit
// log (409s, binds refused because the pod was already bound or deleted meanwhile, are
// counted, not failed), and a replica still running with /healthz ok. Prints the settle
// time (from the apiserver's return after the last fault to all bound), then "chaos: PASS" or
// "chaos: FAIL <reasons>" as its last line, and exits 1 on failure. --faults picks a
// subset of the faults (default all), to tell which one a failure needs.
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <fstream>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <simdjson.h>

#include "pkg/client/curl_client.h"
#include "informers/informer.h"
#include "pkg/client/rest_config.h"
#include "pkg/api/json.h"
#include "pkg/leaderelection/lease.h"
#include "tests/harness/process_util.h"
#include "tests/fakes/objects.h"
#include "tests/integration/manifests.h"

namespace {

using namespace ksched;
using namespace std::chrono_literals;
using ksched::testing::ChildProcess;
using ksched::testing::FreePort;
using ksched::testing::ReadFile;
using ksched::testing::RunCommand;
using Steady = std::chrono::steady_clock;

constexpr int kPodsPerNode = 10;  // 10 x 100m fill a 1-CPU node exactly
constexpr int64_t kNodeMilliCpu = 1000;
constexpr int64_t kPodMilliCpu = 100;
constexpr int kMaxRestarts = 20;  // more exits than this is a crash loop: stop restarting
constexpr auto kSettleTimeout = 150s;
constexpr char kNs[] = "default";
constexpr char kAcquired[] = "successfully acquired lease kube-system/ksched";
constexpr char kBoundLine[] = "Successfully bound pod to node";

const Steady::time_point g_start = Steady::now();

double Seconds(Steady::duration d) { return std::chrono::duration<double>(d).count(); }

// A timeline line: seconds since the start, then the message.
__attribute__((format(printf, 1, 2))) void Note(const char* fmt, ...) {
  char buf[1024];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  std::printf("[%6.1fs] %s\n", Seconds(Steady::now() - g_start), buf);
  std::fflush(stdout);
}

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s;
}

// Gone, or a zombie (its sockets are closed, so the port is free again).
bool Alive(pid_t pid) {
  std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  size_t close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z';
}

size_t CountOf(const std::string& text, std::string_view needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// One ksched replica: a child process, restarted under the same name and port; each
// incarnation logs (stdout + stderr, -v=2) to <dir>/ksched-<name>.<incarnation>.log.
class Replica {
 public:
  Replica(std::string name, std::string binary, std::vector<std::string> args, std::string dir)
      : name_(std::move(name)),
        binary_(std::move(binary)),
        args_(std::move(args)),
        dir_(std::move(dir)),
        port_(FreePort()) {}
  Replica(const Replica&) = delete;
  Replica& operator=(const Replica&) = delete;

  // Must be called from the main thread: the child is SIGKILLed when the thread that
  // started it ends (ChildProcess::Options::kill_with_parent), which keeps a crashed
  // driver from leaving schedulers behind.
  void Start() {
    logs_.push_back(dir_ + "/ksched-" + name_ + "." + std::to_string(logs_.size()) + ".log");
    std::vector<std::string> args = {binary_};
    args.insert(args.end(), args_.begin(), args_.end());
    args.push_back("--secure-port=" + std::to_string(port_));
    child_ = std::make_unique<ChildProcess>(
        std::move(args), logs_.back(),
        ChildProcess::Options{.kill_with_parent = true, .destroy_grace = std::chrono::milliseconds(0)});
    reaped_ = false;
  }
  void Kill(int sig) {
    if (child_) child_->Signal(sig);
  }
  // Once the process has exited: how ("exit 1", "signal 9") plus its last error line.
  std::optional<std::string> Reap() {
    if (!child_ || reaped_ || child_->Running()) return std::nullopt;
    reaped_ = true;
    std::string how = child_->HowExited();
    std::string last_error;
    std::istringstream in(ReadFile(logs_.back()));
    for (std::string line; std::getline(in, line);)
      if (!line.empty() && line[0] == 'E') last_error = line;
    // The last error explains an exit 1 ("Leaderelection lost"); after a signal or a
    // clean exit it is just whatever went wrong last.
    const bool failed = child_->ExitedNormally() && child_->ExitCode() != 0;
    return !failed || last_error.empty() ? how : how + " (" + last_error + ")";
  }
  // Waits up to `timeout` for the process to exit; nullopt if it did not.
  std::optional<std::string> Wait(std::chrono::milliseconds timeout) {
    for (auto until = Steady::now() + timeout; Steady::now() < until; std::this_thread::sleep_for(20ms))
      if (auto how = Reap()) return how;
    return std::nullopt;
  }
  bool running() const { return child_ && !reaped_; }
  // The current incarnation won the lease (a leader that loses it exits at once).
  bool Leads() const { return running() && ReadFile(logs_.back()).find(kAcquired) != std::string::npos; }
  std::string Healthz() const {
    auto out = RunCommand("curl -sk --max-time 5 https://127.0.0.1:" + std::to_string(port_) + "/healthz 2>/dev/null");
    return out.ok() ? *out : "(no answer)";
  }
  // Binds per incarnation, from the logs.
  std::vector<size_t> Binds() const {
    std::vector<size_t> n;
    for (const auto& log : logs_) n.push_back(CountOf(ReadFile(log), kBoundLine));
    return n;
  }
  // Adds pod name -> "<replica>.<incarnation> <time>" for each bind the logs record.
  void CollectBinds(std::unordered_map<std::string, std::string>& by) const {
    for (size_t i = 0; i < logs_.size(); ++i) {
      std::istringstream in(ReadFile(logs_[i]));
      for (std::string line; std::getline(in, line);) {
        size_t at = line.find(kBoundLine);
        size_t pod = line.find("pod=\"", at == std::string::npos ? line.size() : at);
        if (pod == std::string::npos || line.size() < 21) continue;
        pod = line.find('/', pod) + 1;
        by[line.substr(pod, line.find('"', pod) - pod)] = name_ + "." + std::to_string(i) + " " + line.substr(6, 15);
      }
    }
  }
  const std::string& name() const { return name_; }
  int incarnation() const { return static_cast<int>(logs_.size()) - 1; }
  const std::string& log() const { return logs_.back(); }

 private:
  std::string name_, binary_;
  std::vector<std::string> args_;
  std::string dir_;
  int port_;
  std::unique_ptr<ChildProcess> child_;  // the current incarnation
  bool reaped_ = false;                  // its exit has been reported by Reap()
  std::vector<std::string> logs_;
};

// Restarts replicas as they exit (a kubelet's restartPolicy Always, without its backoff).
class Supervisor {
 public:
  explicit Supervisor(std::vector<Replica*> replicas) : replicas_(std::move(replicas)) {}
  // Main thread only (see Replica::Start).
  void Poll() {
    for (Replica* r : replicas_) {
      auto how = r->Reap();
      if (!how) continue;
      const bool intended = killed_ == r;
      if (intended) killed_ = nullptr;
      Note("replica %s.%d exited: %s%s", r->name().c_str(), r->incarnation(), how->c_str(),
           intended ? " [the SIGKILL above]" : "");
      exits_.push_back(r->name() + "." + std::to_string(r->incarnation()) + ": " + *how);
      if (++restarts_ > kMaxRestarts) {
        if (restarts_ == kMaxRestarts + 1) Note("more than %d exits: not restarting any more", kMaxRestarts);
        continue;
      }
      r->Start();
      Note("replica %s restarted as %s.%d", r->name().c_str(), r->name().c_str(), r->incarnation());
    }
  }
  void KillLeader(Replica* r) {
    killed_ = r;
    r->Kill(SIGKILL);
  }
  Replica* Leader() const {
    Replica* leader = nullptr;
    for (Replica* r : replicas_)
      if (r->Leads()) {
        if (leader != nullptr) return nullptr;  // two claim it: one is on its way out
        leader = r;
      }
    return leader;
  }
  // Polls (restarting replicas) until pred() or the timeout.
  template <typename Pred>
  bool WaitFor(Pred pred, std::chrono::milliseconds timeout, const char* what) {
    for (auto until = Steady::now() + timeout;; std::this_thread::sleep_for(50ms)) {
      Poll();
      if (pred()) return true;
      if (Steady::now() >= until) {
        Note("timed out after %.0f s waiting for %s", Seconds(timeout), what);
        return false;
      }
    }
  }
  const std::vector<std::string>& exits() const { return exits_; }
  bool crash_looping() const { return restarts_ > kMaxRestarts; }

 private:
  std::vector<Replica*> replicas_;
  Replica* killed_ = nullptr;
  std::vector<std::string> exits_;
  int restarts_ = 0;
};

// Sends all requests at once (a burst, as a controller's would be), then again those that
// failed, for up to 5 rounds: the apiserver may be coming back. NotFound (a delete already
// done) and AlreadyExists (a create already done) count as success. Returns how many
// never succeeded.
size_t SendAll(client::ApiClient& c, std::vector<client::Request> reqs) {
  for (int round = 0; round < 5 && !reqs.empty(); ++round) {
    if (round > 0) std::this_thread::sleep_for(500ms);
    std::mutex mu;
    std::condition_variable cv;
    size_t done = 0;
    std::vector<client::Request> failed;
    std::string first_error;
    for (const auto& r : reqs) {
      c.Send(r, [&, r](StatusOr<client::Response> resp) {
        std::lock_guard l(mu);
        ++done;
        if (!resp.ok() && resp.status().code() != StatusCode::kNotFound &&
            resp.status().code() != StatusCode::kAlreadyExists) {
          if (first_error.empty()) first_error = resp.status().ToString();
          failed.push_back(r);
        }
        cv.notify_all();
      });
    }
    std::unique_lock l(mu);
    cv.wait(l, [&] { return done == reqs.size(); });
    if (!failed.empty())
      Note("%zu of %zu requests failed (%s); retrying", failed.size(), reqs.size(), first_error.c_str());
    reqs = std::move(failed);
  }
  return reqs.size();
}

std::string PodJson(const std::string& name) {
  return api::EncodePod(
      ksched::testing::TestPod(kNs, name, "ksched", {{"cpu", api::Quantity::FromMilli(kPodMilliCpu)}}));
}

client::Request CreatePod(const std::string& name) {
  return {.verb = client::Verb::kPost,
          .path = std::string("/api/v1/namespaces/") + kNs + "/pods",
          .body = PodJson(name)};
}

client::Request DeletePod(const std::string& name) {
  return {.verb = client::Verb::kDelete,
          .path = std::string("/api/v1/namespaces/") + kNs + "/pods/" + name + "?gracePeriodSeconds=0"};
}

struct Counts {
  size_t total = 0, bound = 0;
};
Counts Count(const informers::PodInformer& inf) {
  Counts c;
  for (const auto& p : inf.List()) {
    ++c.total;
    c.bound += p->IsAssigned();
  }
  return c;
}

// The binding requests of the audit log (ResponseComplete events of pods/binding creates).
struct Audit {
  size_t requests = 0;
  std::map<int64_t, size_t> codes;                    // HTTP code -> requests
  std::unordered_map<std::string, size_t> successes;  // pod name -> 201s
  size_t unreadable = 0;
};

Audit ReadAudit(const std::string& path) {
  Audit a;
  std::ifstream in(path);
  simdjson::dom::parser parser;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    simdjson::dom::element event;
    simdjson::dom::object ref;
    std::string_view stage, resource, subresource, name;
    int64_t code = 0;
    if (parser.parse(line).get(event) || event["stage"].get(stage) || event["objectRef"].get(ref) ||
        ref["resource"].get(resource)) {
      ++a.unreadable;
      continue;
    }
    const bool has_subresource = !ref["subresource"].get(subresource);
    const bool binding = (resource == "pods" && has_subresource && subresource == "binding") ||
                         (resource == "bindings" && !has_subresource);
    if (stage != "ResponseComplete" || !binding) continue;
    if (ref["name"].get(name) || event["responseStatus"]["code"].get(code)) {
      ++a.unreadable;
      continue;
    }
    ++a.requests;
    ++a.codes[code];
    if (code == 201) ++a.successes[std::string(name)];
  }
  return a;
}

// A set-up failure: the verdict line still comes last, so CI counts it.
int SetupFailed(const std::string& why) {
  std::printf("chaos: FAIL set-up: %s\n", why.c_str());
  return 1;
}

std::string Join(const std::vector<std::string>& v, size_t max = 5) {
  std::string s;
  for (size_t i = 0; i < v.size() && i < max; ++i) s += (i ? ", " : "") + v[i];
  if (v.size() > max) s += ", ... (" + std::to_string(v.size()) + " in all)";
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr,
                 "usage: %s <control-plane dir> <ksched binary> <control-plane.sh> [--nodes N] [--churn N] "
                 "[--seed N] [--faults apiserver,compact,churn,leader]\n",
                 argv[0]);
    return 2;
  }
  const std::string dir = argv[1], ksched_bin = argv[2], cp_script = argv[3];
  int num_nodes = 200, churn = 200;
  uint64_t seed = std::random_device{}();
  std::string faults = "apiserver,compact,churn,leader";
  for (int i = 4; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--nodes")
      num_nodes = std::atoi(argv[i + 1]);
    else if (flag == "--churn")
      churn = std::atoi(argv[i + 1]);
    else if (flag == "--seed")
      seed = std::strtoull(argv[i + 1], nullptr, 10);
    else if (flag == "--faults")
      faults = argv[i + 1];
    else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  const int num_pods = num_nodes * kPodsPerNode;
  std::set<std::string> fault_set;
  {
    std::istringstream in(faults);
    for (std::string f; std::getline(in, f, ',');) {
      if (f != "apiserver" && f != "compact" && f != "churn" && f != "leader") {
        std::fprintf(stderr, "unknown fault \"%s\" (apiserver, compact, churn, leader)\n", f.c_str());
        return 2;
      }
      fault_set.insert(f);
    }
  }
  const bool kill_apiserver = fault_set.contains("apiserver"), compact = fault_set.contains("compact"),
             do_churn = fault_set.contains("churn"), kill_leader = fault_set.contains("leader");
  if (!do_churn) churn = 0;
  if (num_nodes <= 0 || churn < 0 || churn > num_pods) {
    std::fprintf(stderr, "need --nodes > 0 and 0 <= --churn <= 10 x nodes\n");
    return 2;
  }
  ::signal(SIGPIPE, SIG_IGN);

  auto rc = client::LoadKubeconfig(dir + "/kubeconfig");
  if (!rc.ok()) return SetupFailed(rc.status().ToString());
  rc->qps = 0;
  auto client = client::NewCurlApiClient(*rc);
  if (!client.ok()) return SetupFailed(client.status().ToString());
  client::ApiClient& admin = **client;
  // ksched runs as the `ksched` user with the shipped least-privilege RBAC.
  if (Status s = ksched::testing::ApplyManifestFile(admin, KSCHED_RBAC_MANIFEST); !s.ok())
    return SetupFailed("applying the RBAC manifest: " + s.ToString());

  // ---- the cluster: exactly full --------------------------------------------------------
  std::vector<client::Request> creates;
  for (int i = 0; i < num_nodes; ++i) {
    api::Node n = ksched::testing::TestNode("chaos-node-" + std::to_string(i), api::Quantity::FromMilli(kNodeMilliCpu),
                                            *api::Quantity::Parse("4Gi"));
    n.metadata.labels.Set("kubernetes.io/hostname", n.metadata.name);
    creates.push_back({.verb = client::Verb::kPost, .path = "/api/v1/nodes", .body = api::EncodeNode(n)});
  }
  if (SendAll(admin, std::move(creates)) != 0) return SetupFailed("creating the nodes");
  creates.clear();
  for (int i = 0; i < num_pods; ++i) creates.push_back(CreatePod("chaos-pod-" + std::to_string(i)));
  if (SendAll(admin, std::move(creates)) != 0) return SetupFailed("creating the pods");
  Note("created %d one-CPU nodes and %d pods of %lldm (seed %llu)", num_nodes, num_pods,
       static_cast<long long>(kPodMilliCpu), static_cast<unsigned long long>(seed));

  // Which pods the churn deletes (from the original ones, bound or not when it comes), and
  // the pods expected at the end.
  std::mt19937_64 rng(seed);
  std::vector<int> order(static_cast<size_t>(num_pods));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  order.resize(static_cast<size_t>(churn));
  std::set<std::string> expected;
  for (int i = 0; i < num_pods; ++i) expected.insert("chaos-pod-" + std::to_string(i));
  for (int i : order) expected.erase("chaos-pod-" + std::to_string(i));
  for (int i = 0; i < churn; ++i) expected.insert("chaos-new-" + std::to_string(i));

  // The driver's own view of the pods, with a short backoff so it sees the apiserver back
  // quickly (it only paces the faults; the checks use a fresh LIST).
  informers::PodInformer pods(admin, std::string("/api/v1/namespaces/") + kNs + "/pods",
                              {.initial_backoff = 200ms, .max_backoff = 1s});
  pods.Start();
  if (!pods.WaitForSync(1min)) return SetupFailed("the pod informer did not sync");

  // ---- two replicas ----------------------------------------------------------------------
  const std::string config = dir + "/chaos-ksched.yaml";
  std::ofstream(config) << "apiVersion: kubescheduler.config.k8s.io/v1\n"
                           "kind: KubeSchedulerConfiguration\n"
                           "clientConnection: {qps: 5000, burst: 5000}\n"
                           "leaderElection: {leaderElect: true, leaseDuration: 4s, renewDeadline: 3s, "
                           "retryPeriod: 400ms, resourceLock: leases, resourceName: ksched, "
                           "resourceNamespace: kube-system}\n"
                           "profiles: [{schedulerName: ksched}]\n";
  const std::vector<std::string> args = {"--config=" + config, "--kubeconfig=" + dir + "/ksched.kubeconfig",
                                         "--bind-address=127.0.0.1", "-v=2"};
  Replica a("a", ksched_bin, args, dir), b("b", ksched_bin, args, dir);
  Supervisor sup({&a, &b});
  const auto sched_start = Steady::now();
  a.Start();
  b.Start();
  Note("started replicas a and b");

  const std::string etcd = "ETCDCTL_API=3 etcdctl --endpoints=http://127.0.0.1:" + Trim(ReadFile(dir + "/etcd.port"));
  // SIGKILLs kube-apiserver and starts it again (the script waits for /readyz), polling
  // the replicas meanwhile. Returns when it is ready again.
  auto restart_apiserver = [&](int nth) {
    pid_t pid = static_cast<pid_t>(std::atoi(ReadFile(dir + "/apiserver.pid").c_str()));
    Counts c = Count(pods);
    auto killed = Steady::now();
    if (pid <= 0 || ::kill(pid, SIGKILL) != 0) Note("no kube-apiserver to kill (pid %d)", pid);
    Note("fault %d: kill -9 kube-apiserver (%zu of %zu pods bound)", nth, c.bound, c.total);
    sup.WaitFor([&] { return !Alive(pid); }, 10s, "kube-apiserver to die");
    auto started = std::async(std::launch::async,
                              [&] { return RunCommand("bash " + cp_script + " start-apiserver " + dir + " 1>&2"); });
    sup.WaitFor([&] { return started.wait_for(0s) == std::future_status::ready; }, 90s, "kube-apiserver to restart");
    auto out = started.get();
    if (!out.ok())
      Note("restarting kube-apiserver failed: %s", out.status().ToString().c_str());
    else
      Note("kube-apiserver ready again after %.1f s down", Seconds(Steady::now() - killed));
    return Steady::now();
  };
  auto bound_now = [&] { return Count(pods).bound; };

  // ---- the faults --------------------------------------------------------------------------
  int nth = 0;
  // When the last fault began and when it was over (for the apiserver: ready again).
  Steady::time_point last_kill = Steady::now(), last_fault = last_kill;
  std::string last_name = "none";
  if (sup.WaitFor([&] { return sup.Leader() != nullptr; }, 20s, "a leader"))
    Note("replica %s leads", sup.Leader()->name().c_str());
  sup.WaitFor([&] { return bound_now() >= static_cast<size_t>(num_pods / 5); }, 60s, "a fifth of the pods bound");
  if (kill_apiserver) {
    last_kill = Steady::now();
    last_fault = restart_apiserver(++nth);
    last_name = "kube-apiserver kill -9 and restart";
    const size_t resumed_from = bound_now();
    sup.WaitFor([&] { return bound_now() >= std::min<size_t>(resumed_from + 200, static_cast<size_t>(num_pods)); }, 60s,
                "binding to resume");
  }
  if (compact) {
    auto rev = RunCommand(etcd + " endpoint status -w json | jq -r '.[0].Status.header.revision'");
    auto compacted = rev.ok() ? RunCommand(etcd + " compact " + Trim(*rev) + " 1>&2") : rev;
    if (compacted.ok())
      Note("fault %d: etcd compacted to revision %s (%zu pods bound)", ++nth, Trim(*rev).c_str(), bound_now());
    else
      Note("compacting etcd failed: %s", compacted.status().ToString().c_str());
    last_kill = last_fault = Steady::now();
    last_name = "etcd compaction";
  }

  auto churn_batch = [&](size_t from, size_t to) {
    if (from == to) return;
    std::vector<client::Request> reqs;
    for (size_t i = from; i < to; ++i) {
      reqs.push_back(DeletePod("chaos-pod-" + std::to_string(order[i])));
      reqs.push_back(CreatePod("chaos-new-" + std::to_string(i)));
    }
    Counts c = Count(pods);
    last_kill = Steady::now();
    size_t failed = SendAll(admin, std::move(reqs));
    last_fault = Steady::now();
    last_name = "churn";
    Note("fault %d: deleted %zu random pods and created %zu new ones (%zu of %zu bound before)%s", ++nth, to - from,
         to - from, c.bound, c.total, failed ? " -- some requests never succeeded" : "");
  };
  // With apiserver restarts, half the churn comes right before the second one.
  const size_t half = kill_apiserver ? static_cast<size_t>(churn) / 2 : static_cast<size_t>(churn);
  churn_batch(0, half);

  if (kill_leader) {
    Replica* leader = sup.Leader();
    if (leader == nullptr && sup.WaitFor([&] { return sup.Leader() != nullptr; }, 20s, "a leader to kill"))
      leader = sup.Leader();
    if (leader != nullptr) {
      Note("fault %d: SIGKILL the leader, replica %s.%d", ++nth, leader->name().c_str(), leader->incarnation());
      const int killed = leader->incarnation();
      last_kill = last_fault = Steady::now();
      last_name = "leader SIGKILL";
      sup.KillLeader(leader);
      // The supervisor restarts it as soon as it is reaped.
      sup.WaitFor([&] { return leader->incarnation() > killed; }, 5s, "the leader to die");
      if (sup.WaitFor([&] { return sup.Leader() != nullptr; }, 20s, "another leader"))
        Note("replica %s.%d leads", sup.Leader()->name().c_str(), sup.Leader()->incarnation());
    }
  }

  churn_batch(half, static_cast<size_t>(churn));
  if (kill_apiserver) {
    last_kill = Steady::now();
    last_fault = restart_apiserver(++nth);
    last_name = "kube-apiserver kill -9 and restart";
  }

  // ---- settle --------------------------------------------------------------------------
  auto all_bound = [&](const std::vector<std::shared_ptr<const api::Pod>>& list) {
    if (list.size() != expected.size()) return false;
    for (const auto& p : list)
      if (!p->IsAssigned() || !expected.contains(p->metadata.name)) return false;
    return true;
  };
  std::vector<std::shared_ptr<const api::Pod>> final_pods;
  bool listed = false;
  const bool settled = sup.WaitFor(
      [&] {
        if (!all_bound(pods.List())) return false;
        // The informer may lag; a fresh LIST decides.
        auto r = admin.Do({.path = std::string("/api/v1/namespaces/") + kNs + "/pods"});
        if (!r.ok()) return false;
        api::JsonParser parser;
        auto list = api::DecodePodList(parser, api::JsonText::Padded(r->body));
        if (!list.ok()) return false;
        final_pods = std::move(list->items);
        listed = true;
        return all_bound(final_pods);
      },
      kSettleTimeout, "every pod bound");
  const auto settled_at = Steady::now();
  if (!listed) {
    if (auto r = admin.Do({.path = std::string("/api/v1/namespaces/") + kNs + "/pods"}); r.ok()) {
      api::JsonParser parser;
      if (auto list = api::DecodePodList(parser, api::JsonText::Padded(r->body)); list.ok())
        final_pods = std::move(list->items);
    }
  }
  // Anything still in flight (a bind sent twice, a late event) lands in the audit log.
  std::this_thread::sleep_for(1s);
  sup.Poll();

  // ---- checks ----------------------------------------------------------------------------
  std::vector<std::string> failures;
  std::vector<std::string> unbound, unexpected;
  std::map<std::string, int64_t> cpu_on;  // node -> milli-CPU requested by its pods
  std::map<std::string, int> pods_on;
  std::set<std::string> seen;
  for (const auto& p : final_pods) {
    const std::string& name = p->metadata.name;
    seen.insert(name);
    if (!expected.contains(name)) unexpected.push_back(name);
    if (!p->IsAssigned()) {
      unbound.push_back(name);
      continue;
    }
    int64_t milli = 0;
    for (const auto& c : p->spec.containers)
      if (const api::Quantity* q = api::FindResource(c.requests, "cpu")) milli += q->MilliValue();
    cpu_on[p->spec.node_name] += milli;
    ++pods_on[p->spec.node_name];
  }
  std::vector<std::string> missing, over;
  for (const auto& name : expected)
    if (!seen.contains(name)) missing.push_back(name);
  for (const auto& [node, milli] : cpu_on)
    if (milli > kNodeMilliCpu || pods_on[node] > 110 || node.rfind("chaos-node-", 0) != 0)
      over.push_back(node + " (" + std::to_string(milli) + "m, " + std::to_string(pods_on[node]) + " pods)");
  if (!settled) failures.push_back("not settled within " + std::to_string(kSettleTimeout.count()) + " s");
  if (!unbound.empty()) failures.push_back(std::to_string(unbound.size()) + " pod(s) unbound: " + Join(unbound));
  if (!missing.empty()) failures.push_back(std::to_string(missing.size()) + " pod(s) missing: " + Join(missing));
  if (!unexpected.empty())
    failures.push_back(std::to_string(unexpected.size()) + " deleted pod(s) still there: " + Join(unexpected));
  if (!over.empty()) failures.push_back(std::to_string(over.size()) + " node(s) over capacity: " + Join(over));

  Audit audit = ReadAudit(dir + "/audit.log");
  std::vector<std::string> twice, unaudited;
  for (const auto& [pod, n] : audit.successes)
    if (n > 1) twice.push_back(pod + " x" + std::to_string(n));
  for (const auto& p : final_pods)
    if (p->IsAssigned() && !audit.successes.contains(p->metadata.name)) unaudited.push_back(p->metadata.name);
  if (audit.requests == 0) failures.push_back("no binding request in the audit log (is KSCHED_CP_AUDIT=1 set?)");
  if (!twice.empty()) failures.push_back(std::to_string(twice.size()) + " pod(s) bound twice: " + Join(twice));

  Replica* final_leader = sup.Leader();
  std::string lease_holder = "(unreadable)";
  if (auto r = admin.Do({.path = leaderelection::LeasePath("kube-system", "ksched")}); r.ok())
    if (auto lease = leaderelection::DecodeLease(r->body); lease.ok()) lease_holder = lease->record.holder_identity;
  size_t healthy = 0;
  std::string health;
  for (Replica* r : {&a, &b}) {
    std::string h = r->running() ? r->Healthz() : "(not running)";
    healthy += r->running() && h == "ok";
    health += " " + r->name() + "." + std::to_string(r->incarnation()) + "=" + h;
  }
  if (healthy == 0) failures.push_back("no replica running with /healthz ok:" + health);
  if (sup.crash_looping())
    failures.push_back("replicas crash-looping (more than " + std::to_string(kMaxRestarts) + " exits)");

  // ---- report ----------------------------------------------------------------------------
  std::string codes;
  for (const auto& [code, n] : audit.codes) codes += " " + std::to_string(code) + "=" + std::to_string(n);
  std::printf("pods: %zu expected, %zu listed, %zu bound, %zu unbound; nodes used %zu of %d, fullest %lldm\n",
              expected.size(), final_pods.size(), final_pods.size() - unbound.size(), unbound.size(), cpu_on.size(),
              num_nodes,
              static_cast<long long>(
                  cpu_on.empty() ? 0 : std::max_element(cpu_on.begin(), cpu_on.end(), [](const auto& x, const auto& y) {
                                         return x.second < y.second;
                                       })->second));
  std::printf(
      "bindings (audit log): %zu requests, %zu succeeded (201), %zu conflicts (409: already bound, or "
      "deleted meanwhile); by code:%s\n",
      audit.requests, audit.codes[201], audit.codes[409], codes.c_str());
  std::printf("pods bound twice: %zu; bound pods without an audited 201: %zu%s\n", twice.size(), unaudited.size(),
              unaudited.empty() ? "" : " (a bind committed as kube-apiserver was killed, before its audit event)");
  if (audit.unreadable) std::printf("unreadable audit lines: %zu\n", audit.unreadable);
  // Who put the pods of an overcommitted node there, from the replicas' logs; a pod no
  // replica logged was bound by a request whose answer was lost (the apiserver killed).
  if (!over.empty()) {
    std::unordered_map<std::string, std::string> bound_by;
    a.CollectBinds(bound_by);
    b.CollectBinds(bound_by);
    size_t shown = 0;
    for (const auto& [node, milli] : cpu_on) {
      if (milli <= kNodeMilliCpu) continue;
      if (shown++ == 3) break;
      std::printf("over capacity: %s holds", node.c_str());
      for (const auto& p : final_pods) {
        if (p->spec.node_name != node) continue;
        auto it = bound_by.find(p->metadata.name);
        std::printf(" %s (%s)", p->metadata.name.c_str(),
                    it == bound_by.end() ? "no replica logged its bind" : it->second.c_str());
      }
      std::printf("\n");
    }
  }
  for (Replica* r : {&a, &b}) {
    auto binds = r->Binds();
    std::string per;
    for (size_t i = 0; i < binds.size(); ++i) per += (i ? " " : "") + std::to_string(binds[i]);
    std::printf("replica %s: %d restart(s), binds per incarnation: %s\n", r->name().c_str(), r->incarnation(),
                per.c_str());
  }
  for (const auto& e : sup.exits()) std::printf("exit: %s\n", e.c_str());
  std::printf(
      "leader at the end: %s (lease holder %s); /healthz:%s\n",
      final_leader ? (final_leader->name() + "." + std::to_string(final_leader->incarnation())).c_str() : "(none)",
      lease_holder.empty() ? "(none)" : lease_holder.c_str(), health.c_str());
  if (settled)
    std::printf("settle time: %.2f s after the last fault (%s) was over, %.2f s after it began\n",
                Seconds(settled_at - last_fault), last_name.c_str(), Seconds(settled_at - last_kill));
  std::printf("total: %.1f s from the replicas' start to all bound\n", Seconds(settled_at - sched_start));

  // Graceful shutdown, as a rollout would do it; reported, not judged.
  for (Replica* r : {&a, &b}) r->Kill(SIGTERM);
  for (Replica* r : {&a, &b})
    if (r->running()) {
      auto how = r->Wait(40s);
      std::printf("replica %s.%d on SIGTERM: %s\n", r->name().c_str(), r->incarnation(),
                  how ? how->c_str() : "still running after 40 s");
    }
  pods.Stop();

  if (failures.empty()) {
    std::printf("chaos: PASS\n");
    return 0;
  }
  std::string reasons;
  for (const auto& f : failures) reasons += (reasons.empty() ? "" : "; ") + f;
  std::printf("chaos: FAIL %s\n", reasons.c_str());
  return 1;
}
