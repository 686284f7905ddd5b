// ksched: flags -> config -> API clients -> informers -> (leader election) -> scheduler,
// then run until SIGTERM/SIGINT (graceful: stop popping, let in-flight binds finish,
// release the lease, exit 0). Losing the lease exits 1 at once.
#include "cmd/ksched/app.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <atomic>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "cmd/ksched/explain.h"
#include "cmd/ksched/simulate.h"
#include "cmd/ksched/flags.h"
#include "config/encode.h"
#include "config/defaults.h"
#include "config/load.h"
#include "config/validate.h"
#include "informers/cluster_lister.h"
#include "pkg/client/curl_client.h"
#include "informers/informer.h"
#include "pkg/client/rest_config.h"
#include "pkg/leaderelection/identity.h"
#include "pkg/leaderelection/leader_elector.h"
#include "pkg/framework/registry.h"
#include "pkg/framework/runtime/framework.h"
#include "pkg/metrics/metrics.h"
#include "pkg/server/authorizer.h"
#include "pkg/server/server.h"
#include "pkg/scheduler/scheduler.h"
#include "pkg/util/log.h"

namespace {

using namespace ksched;

// While the caches are not synced, what is missing is logged this often (upstream waits
// for ever too; /readyz says the same meanwhile).
constexpr auto kSyncReport = std::chrono::seconds(30);
constexpr auto kShutdownGrace = std::chrono::seconds(30);
constexpr auto kFreshReadTimeout = std::chrono::milliseconds(10000);  // per try, as leader
constexpr auto kWriteFlushGrace = std::chrono::seconds(10);

// What start-up is waiting for, for /readyz before the informers run.
class StartupState {
 public:
  void Set(std::string why) {
    std::lock_guard lock(mu_);
    why_ = std::move(why);
  }
  Status Get() const {
    std::lock_guard lock(mu_);
    return why_.empty() ? Status::OK() : Status(StatusCode::kUnavailable, why_);
  }

 private:
  mutable std::mutex mu_;
  std::string why_ = "starting";
};

// The API server's GET /version, asked until it answers (upstream's client waits for the
// server too): the first failure is logged at once with the server's address, later ones
// with a backoff up to 30 s. `why` carries the last failure for /readyz. SIGTERM and
// SIGINT end the process meanwhile (the signal thread).
std::string WaitForServerVersion(client::ApiClient& client, const std::string& server, StartupState& why) {
  auto delay = std::chrono::milliseconds(500);
  for (int attempt = 1;; ++attempt) {
    auto r = client.Do({.path = "/version", .timeout = std::chrono::seconds(10), .max_retries = 0});
    if (r.ok()) return r->body;
    why.Set("waiting for the API server at " + server + ": GET /version: " + r.status().ToString());
    // The first failure is an error, the retries warnings.
    log::Message(attempt == 1 ? log::Severity::kError : log::Severity::kWarning, __FILE__, __LINE__).stream()
        << "cannot reach the API server at " << server << " (attempt " << attempt
        << "): GET /version: " << r.status().ToString() << "; retrying in " << delay.count() << "ms";
    std::this_thread::sleep_for(delay);
    delay = std::min(delay * 2, std::chrono::milliseconds(30000));
  }
}

// Whether a GET /version body is at least 1.`minor` ("minor" may carry a suffix such as
// "27+").
bool VersionAtLeastMinor(const std::string& body, int minor) {
  // The first number after the key, in {"major": "1", "minor": "27+", ...}.
  auto number = [&body](std::string_view key) {
    size_t pos = body.find(key);
    if (pos != std::string::npos) pos = body.find_first_of("0123456789", pos + key.size());
    return pos == std::string::npos ? -1 : std::atoi(body.c_str() + pos);
  };
  const int major = number("\"major\""), got = number("\"minor\"");
  return major > 1 || (major == 1 && got >= minor);
}

std::string Hostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "localhost";
  return buf;
}

StatusOr<config::KubeSchedulerConfiguration> LoadConfig(const cmd::Flags& flags) {
  config::KubeSchedulerConfiguration cfg;
  if (!flags.config.empty()) {
    auto loaded = config::LoadConfigFile(flags.config);
    if (!loaded.ok()) return loaded.status();
    cfg = std::move(*loaded);
  } else {
    config::SetDefaults(cfg);
  }
  cmd::ApplyFlagOverrides(flags, cfg);
  if (auto s = config::ValidateConfig(cfg); !s.ok()) return s;
  return cfg;
}

// Builds each profile's plugins once, before the API server is contacted (upstream's
// Setup builds the frameworks before anything runs): an unknown plugin or bad plugin
// args are reported at start-up, not after the server has answered.
Status CheckProfiles(const config::KubeSchedulerConfiguration& cfg, const framework::Registry& registry) {
  for (const config::KubeSchedulerProfile& profile : cfg.profiles) {
    auto fw = framework::runtime::NewFramework(registry, profile, {.parallelism = 1});
    if (!fw.ok()) return fw.status().WithContext("profile \"" + profile.scheduler_name + "\"");
  }
  return Status::OK();
}

StatusOr<client::RestConfig> ClientConfig(const cmd::Flags& flags, const config::KubeSchedulerConfiguration& cfg) {
  std::string kubeconfig = !flags.kubeconfig.empty() ? flags.kubeconfig : cfg.client_connection.kubeconfig;
  auto rc = kubeconfig.empty() && flags.master.empty() ? client::InClusterConfig()
                                                       : client::LoadKubeconfig(kubeconfig, "", flags.master);
  if (!rc.ok()) return rc.status();
  rc->qps = cfg.client_connection.qps;
  rc->burst = cfg.client_connection.burst;
  return rc;
}

int Run(const cmd::Flags& flags, framework::Registry registry) {
  // Signals are taken synchronously, so no handler races the scheduler. They are blocked
  // before any thread starts (threads inherit the mask): a thread that left SIGTERM
  // unblocked would take it with the default action and kill the process. One thread
  // waits for SIGTERM and SIGINT at every stage: before scheduling has started there is
  // nothing to hand over, and the process exits at once (a start-up that waits for an
  // unreachable API server or a cache that never syncs must not outlive a SIGTERM);
  // afterwards it wakes this thread for the graceful stop. SIGUSR2 is internal: the
  // signal thread and the leader elector's thread wake this one with it.
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGINT);
  sigaddset(&sigs, SIGUSR2);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
  const pthread_t main_thread = pthread_self();
  sigset_t wake;
  sigemptyset(&wake);
  sigaddset(&wake, SIGUSR2);
  static std::atomic<bool> scheduling{false};
  static std::atomic<int> stop_signal{0};
  std::thread([main_thread] {
    sigset_t stops;
    sigemptyset(&stops);
    sigaddset(&stops, SIGTERM);
    sigaddset(&stops, SIGINT);
    int sig = 0;
    sigwait(&stops, &sig);
    if (!scheduling.load()) {
      KLOG(INFO) << "Received " << (sig == SIGTERM ? "SIGTERM" : "SIGINT")
                 << " before scheduling started; exiting";
      std::_Exit(0);
    }
    stop_signal = sig;
    pthread_kill(main_thread, SIGUSR2);
  }).detach();

  auto cfg = LoadConfig(flags);
  if (!cfg.ok()) {
    std::fprintf(stderr, "Error: %s\n", cfg.status().message().c_str());
    return 1;
  }
  if (!flags.write_config_to.empty()) {
    std::ofstream out(flags.write_config_to);
    out << config::EncodeConfig(*cfg);
    if (!out) {
      std::fprintf(stderr, "Error: writing %s failed\n", flags.write_config_to.c_str());
      return 1;
    }
    KLOG(INFO) << "Wrote configuration to: " << flags.write_config_to;
    return 0;
  }
  if (Status s = CheckProfiles(*cfg, registry); !s.ok()) {
    std::fprintf(stderr, "Error: %s\n", s.message().c_str());
    return 1;
  }
  auto rc = ClientConfig(flags, *cfg);
  if (!rc.ok()) {
    KLOG(ERROR) << "invalid client configuration: " << rc.status().message();
    return 1;
  }
  KLOG(INFO) << "API server: " << rc->server;
  const std::string hostname = Hostname();  // events' reportingInstance, the lease identity, the cert SAN
  // Four clients, each an I/O thread with its own connection and rate budget: watches;
  // writes (binds in front, events and status patches as background requests with a
  // budget of their own, so failures never starve binds, and an event after a bind is
  // sent without waking another thread); token/access reviews for /metrics; and the
  // leader-election lease, so a renewal never queues behind binds.
  auto watch_client = client::NewCurlApiClient(*rc, {.thread_name = "io-watch"});
  auto write_client = client::NewCurlApiClient(*rc, {.thread_name = "io-write"});
  // TokenReview and SubjectAccessReview go to the API server of --authentication-kubeconfig
  // / --authorization-kubeconfig when given (kubeadm passes the scheduler's own), else to
  // the scheduler's.
  client::RestConfig review_config = *rc;
  if (const std::string& k = !flags.authorization_kubeconfig.empty() ? flags.authorization_kubeconfig
                                                                      : flags.authentication_kubeconfig;
      !k.empty()) {
    auto loaded = client::LoadKubeconfig(k);
    if (!loaded.ok()) {
      KLOG(ERROR) << "invalid --authorization-kubeconfig / --authentication-kubeconfig: " << loaded.status().message();
      return 1;
    }
    review_config = std::move(*loaded);
  }
  auto review_client = client::NewCurlApiClient(review_config, {.thread_name = "io-review"});
  auto lease_client = client::NewCurlApiClient(*rc, {.thread_name = "io-lease"});
  for (const auto* c : {&watch_client, &write_client, &review_client, &lease_client}) {
    if (!c->ok()) {
      KLOG(ERROR) << "creating API clients: " << c->status().message();
      return 1;
    }
  }
  // Set once the scheduler (the elector) exists; the secure server and the metrics,
  // started before them, read them.
  std::atomic<scheduler::Scheduler*> sched_ptr{nullptr};
  std::atomic<leaderelection::LeaderElector*> elector_ptr{nullptr};
  // Declared before the scheduler, so the scheduler (whose queue reports into it) goes first.
  metrics::Metrics metrics({
      .cache_sizes = [&sched_ptr] {
        scheduler::Scheduler* s = sched_ptr.load();
        if (!s) return metrics::CacheSizes{};
        auto& c = s->cache();
        return metrics::CacheSizes{c.NodeCount(), c.PodCount(), c.AssumedPodCount()};
      },
      .unschedulable_pods = [&sched_ptr] {
        scheduler::Scheduler* s = sched_ptr.load();
        return s ? s->queue().UnschedulablePodsByPlugin() : metrics::UnschedulablePodCounts{};
      },
      .stuck_pods = [&sched_ptr] {
        scheduler::Scheduler* s = sched_ptr.load();
        return s && s->decisions() ? s->decisions()->StuckCounts() : std::map<std::string, size_t>{};
      },
      // Upstream's LeaderElectionConfig.Name, whatever the lease is called.
      .leader = [&elector_ptr, leader_elect = cfg->leader_election.leader_elect]()
          -> std::optional<std::pair<std::string, bool>> {
        if (!leader_elect) return std::nullopt;
        leaderelection::LeaderElector* e = elector_ptr.load();
        return std::make_pair(std::string("kube-scheduler"), e != nullptr && e->IsLeader());
      },
      .process_metrics = true,
      .disabled = flags.disabled_metrics,
      .show_hidden = !flags.show_hidden_metrics_for_version.empty(),
  });
  informers::PodInformer pods(**watch_client, "/api/v1/pods",
                              {.field_selector = informers::kNonTerminalPodsSelector});
  informers::NodeInformer nodes(**watch_client, "/api/v1/nodes");
  // Namespaces and the objects that select pods, for the plugins' namespace selectors and
  // default spreading, and PodDisruptionBudgets for preemption (upstream: the shared
  // informer factory's listers).
  informers::ClusterListers listers(**watch_client);

  std::atomic<bool> synced{false};
  std::atomic<bool> informers_started{false};
  StartupState startup;
  // What start-up still waits for, first reason first: the API server (before the
  // informers start), then discovery or an informer that has not synced. Empty once
  // synced. /readyz shows the first; the sync loop logs them all.
  auto waiting_for = [&informers_started, &startup, &nodes, &pods, &listers] {
    std::vector<Status> why;
    if (!informers_started) {
      if (Status s = startup.Get(); !s.ok()) why.push_back(std::move(s));
      return why;
    }
    for (Status s : {listers.SyncStatus(), informers::SyncStatusOf(nodes), informers::SyncStatusOf(pods)}) {
      if (!s.ok()) why.push_back(std::move(s));
    }
    return why;
  };
  // The leader-election watchdog (OK without leader election, and before the elector exists).
  auto elector_check = [&elector_ptr] {
    leaderelection::LeaderElector* e = elector_ptr.load();
    return e ? e->Check() : Status::OK();
  };
  server::TokenReviewAuthorizer authorizer({.client = review_client->get()});
  std::unique_ptr<server::Server> srv;
  if (flags.secure_port != 0) {
    srv = std::make_unique<server::Server>(server::ServerOptions{
        .bind_address = flags.bind_address,
        .secure_port = flags.secure_port,
        .tls_cert_file = flags.tls_cert_file,
        .tls_private_key_file = flags.tls_private_key_file,
        .cert_dir = flags.cert_dir,
        .hostname = hostname,
        .tls13_only = flags.tls_min_version == "VersionTLS13",
        .tls12_ciphers = cmd::OpenSslCipherList(flags.tls_cipher_suites),
        .always_allow_paths = flags.authorization_always_allow_paths,
        .authorizer = &authorizer,
        // As upstream, /readyz carries the leader-election watchdog, which passes on a
        // standby: a standby is ready (with delayCacheUntilActive it is not, until its
        // caches sync after winning). /healthz and /livez fail only for a leader that
        // failed to renew and is still running.
        .ready =
            [&synced, &waiting_for, &elector_check] {
              if (!synced) {
                std::vector<Status> why = waiting_for();
                return Unavailable("handlers are not fully synchronized" +
                                   (why.empty() ? std::string() : ": " + why.front().message()));
              }
              return elector_check();
            },
        .healthy = elector_check,
        .metrics = [&metrics] { return metrics.Serialize(); },
        .configz = [configz = config::EncodeConfigz(*cfg)] { return configz; },
        // Why pods are pending and why they went where they went (ksched explain).
        .endpoints = {{.prefix = "/debug/pods",
                       .handler = [&sched_ptr](const std::string& path) -> server::HandlerResponse {
                         scheduler::Scheduler* s = sched_ptr.load();
                         auto [status, body] = explain::ServeDebugPods(s ? s->decisions() : nullptr, path);
                         return {status, std::move(body), "application/json"};
                       }}}});
    if (Status s = srv->Start(); !s.ok()) {
      KLOG(ERROR) << "serving on port " << flags.secure_port << ": " << s.message();
      return 1;
    }
  }

  // The server's version decides whether victims get the DisruptionTarget condition
  // (1.26 on, as kube-scheduler); asked until the server answers.
  const std::string version = WaitForServerVersion(**write_client, rc->server, startup);
  startup.Set("starting");

  scheduler::SchedulerOptions so;
  so.config = *cfg;
  so.registry = std::move(registry);
  so.bind_client = write_client->get();
  so.status_client = write_client->get();
  so.hostname = hostname;
  so.pod_max_in_unschedulable = flags.pod_max_in_unschedulable_pods_duration;
  so.explain_records = flags.explain_records;
  so.stuck_after = std::chrono::duration_cast<Clock::duration>(flags.stuck_after);
  so.pod_lister = [&pods](const std::string& key) { return pods.Get(key); };
  so.cluster_lister = &listers;
  // Preemption marks its victims with the DisruptionTarget condition where the server
  // knows the condition (1.26 on), as kube-scheduler does.
  so.disruption_target_condition = VersionAtLeastMinor(version, 26);
  so.queue_metrics = &metrics;
  so.framework_metrics = &metrics;
  so.metrics = &metrics;
  // Declared before the scheduler, which asks the elector before every bind (and so is
  // destroyed first); `leading` outlives the elector whose callback sets it.
  std::atomic<bool> leading{false};
  std::unique_ptr<leaderelection::LeaderElector> elector;
  so.may_bind = [&elector] { return elector == nullptr || elector->IsLeader(); };
  auto sched = scheduler::Scheduler::New(std::move(so));
  if (!sched.ok()) {
    KLOG(ERROR) << sched.status().message();
    return 1;
  }
  // Gang members are indexed before the scheduler sees a pod (its PreFilter counts them).
  listers.pod_groups().SetWanted((*sched)->UsesPodGroups());
  if (listers.pod_groups().wanted()) (*sched)->WatchPodGroups(pods, listers.pod_groups());
  pods.AddHandler(&(*sched)->pod_handler());
  nodes.AddHandler(&(*sched)->node_handler());
  (*sched)->WatchStorage(listers.storage());
  (*sched)->WatchResources(listers.resources());
  sched_ptr = sched->get();
  metrics.SetGoroutinesSource("binding", [&sched_ptr] { return static_cast<int64_t>(sched_ptr.load()->BindsInFlight()); });

  // Leader election, as kube-scheduler: only the lease holder schedules. Losing the lease
  // exits at once, well inside the renew_deadline < lease_duration margin before another
  // replica may take over; binds already sent are the apiserver's to finish or reject.
  if (cfg->leader_election.leader_elect) {
    const auto& le = cfg->leader_election;
    auto e = leaderelection::LeaderElector::New({
        .client = lease_client->get(),
        .lock_namespace = le.resource_namespace,
        .lock_name = le.resource_name,
        .identity = leaderelection::UniqueIdentity(hostname),
        .lease_duration = le.lease_duration,
        .renew_deadline = le.renew_deadline,
        .retry_period = le.retry_period,
        .callbacks = {.on_started_leading =
                          [&leading, main_thread] {
                            leading = true;
                            pthread_kill(main_thread, SIGUSR2);
                          },
                      .on_stopped_leading =
                          [] {
                            KLOG(ERROR) << "Leaderelection lost";
                            std::_Exit(1);
                          },
                      .on_new_leader =
                          [](const std::string& id) {
                            if (!id.empty()) KLOG(INFO) << "New leader elected: " << id;
                          }},
    });
    if (!e.ok()) {
      KLOG(ERROR) << "couldn't create leader elector: " << e.status().message();
      if (srv) srv->Stop();  // its handlers read the scheduler, which goes first
      return 1;
    }
    elector = std::move(*e);
    elector_ptr = elector.get();
  }

  auto start_informers = [&] {
    nodes.Start();
    pods.Start();
    informers_started = true;  // /readyz asks them from now on
    listers.Start();           // discovery first: asked until the server answers
    KLOG(INFO) << "Waiting for caches to sync";
    while (!(nodes.WaitForSync(kSyncReport) && pods.WaitForSync(kSyncReport) && listers.WaitForSync(kSyncReport))) {
      for (const Status& why : waiting_for()) KLOG(WARNING) << "caches not synced yet: " << why.message();
    }
    synced = true;
  };
  // A standby keeps warm caches so it can take over at once, unless delayCacheUntilActive.
  const bool delay_cache = elector && cfg->delay_cache_until_active;
  if (!delay_cache) start_informers();

  int sig = 0;
  if (elector) {
    elector->Start();
    while (!leading) sigwait(&wake, &sig);
  }
  if (delay_cache) start_informers();
  if (elector && !delay_cache) {
    // A standby's watches may have been failing or lagging (an apiserver restart, RBAC
    // still warming up): its cache can miss the previous leader's last binds, and
    // scheduling on it would fill that room twice. Read pods and nodes afresh from etcd
    // before the first scheduling cycle.
    KLOG(INFO) << "Became leader; reading pods and nodes afresh before scheduling";
    while (!(pods.RelistAndWait(kFreshReadTimeout) && nodes.RelistAndWait(kFreshReadTimeout)))
      KLOG(WARNING) << "pods and nodes not read afresh within " << kFreshReadTimeout.count() << " ms; waiting";
  }
  KLOG(INFO) << "Caches are synced; starting to schedule (" << cfg->profiles.size() << " profile(s), "
             << nodes.Size() << " nodes)";
  scheduling = true;
  (*sched)->Run();
  while (stop_signal.load() == 0) sigwait(&wake, &sig);
  sig = stop_signal.load();
  KLOG(INFO) << "Received " << (sig == SIGTERM ? "SIGTERM" : "SIGINT") << ", shutting down";
  (*sched)->Stop(kShutdownGrace);
  // Events and status patches wait behind binds; send what is still queued before the
  // lease goes, so a burst that just ended does not lose its events.
  if (!(*write_client)->WaitIdle(kWriteFlushGrace))
    KLOG(WARNING) << "events or status patches still unsent after " << kWriteFlushGrace.count() << "s; dropping them";
  // The lease is renewed until scheduling has stopped, then handed over (ReleaseOnCancel).
  if (elector) (void)elector->Release();
  if (srv) srv->Stop();
  pods.Stop();
  nodes.Stop();
  listers.Stop();
  return 0;
}

// The in-tree plugins and the caller's; a name taken twice is an error naming it.
StatusOr<framework::Registry> AllPlugins(framework::Registry out_of_tree) {
  framework::Registry registry = framework::InTreeRegistry();
  if (ksched::Status s = framework::MergeRegistry(registry, std::move(out_of_tree)); !s.ok()) {
    return s.WithContext("registering out-of-tree plugins");
  }
  return registry;
}

}  // namespace

namespace ksched::app {

int Main(int argc, char** argv, framework::Registry out_of_tree) {
  auto registry = AllPlugins(std::move(out_of_tree));
  if (!registry.ok()) {
    std::fprintf(stderr, "Error: %s\n", registry.status().message().c_str());
    return 1;
  }
  // A subcommand of its own: a client of a running ksched, with flags of its own.
  if (argc > 1 && std::string_view(argv[1]) == "explain") return cmd::RunExplain(argc - 1, argv + 1, stdout, stderr);
  if (argc > 1 && std::string_view(argv[1]) == "simulate")
    return cmd::RunSimulate(argc - 1, argv + 1, stdout, stderr, *registry);
  cmd::Flags flags;
  std::string err;
  if (!cmd::ParseFlags(argc, argv, &flags, &err)) {
    std::fprintf(stderr, "Error: %s\n\n%s", err.c_str(), cmd::Usage().c_str());
    return 2;
  }
  if (flags.help) {
    std::fputs(cmd::Usage().c_str(), stdout);
    return 0;
  }
  if (flags.version) {
    std::printf("ksched v0.1.0 (KubeSchedulerConfiguration kubescheduler.config.k8s.io/v1)\n");
    return 0;
  }
  if (ksched::Status s = cmd::ValidateFlags(flags); !s.ok()) {
    std::fprintf(stderr, "Error: %s\n", s.message().c_str());
    return 1;
  }
  log::SetVerbosity(flags.verbosity);
  log::SetVmodule(flags.vmodule);
  if (flags.logging_format == "json") log::SetFormat(log::Format::kJson);
  for (const auto& [name, why] : flags.without_effect)
    KLOG(WARNING) << "flag --" << name << " is accepted but has no effect: " << why;
  return Run(flags, std::move(*registry));
}

}  // namespace ksched::app
