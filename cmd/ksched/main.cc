// ksched: flags -> config -> API clients -> informers -> (leader election) -> scheduler,
// then run until SIGTERM/SIGINT (graceful: stop popping, let in-flight binds finish,
// release the lease, exit 0). Losing the lease exits 1 at once.
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <atomic>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>

#include "cmd/ksched/explain.h"
#include "cmd/ksched/flags.h"
#include "config/encode.h"
#include "config/defaults.h"
#include "config/load.h"
#include "config/validate.h"
#include "informers/cluster_lister.h"
#include "informers/curl_client.h"
#include "informers/informer.h"
#include "informers/rest_config.h"
#include "pkg/leaderelection/identity.h"
#include "pkg/leaderelection/leader_elector.h"
#include "pkg/framework/registry.h"
#include "pkg/metrics/metrics.h"
#include "pkg/server/authorizer.h"
#include "pkg/server/server.h"
#include "pkg/scheduler/scheduler.h"
#include "pkg/util/log.h"

namespace {

using namespace ksched;

constexpr auto kSyncTimeout = std::chrono::minutes(5);
constexpr auto kShutdownGrace = std::chrono::seconds(30);
constexpr auto kFreshReadTimeout = std::chrono::milliseconds(10000);  // per try, as leader
constexpr auto kWriteFlushGrace = std::chrono::seconds(10);

// Whether the API server is at least 1.`minor` (GET /version; "minor" may carry a
// suffix such as "27+"). False when it cannot be asked: the feature then stays off.
bool ServerAtLeastMinor(informers::ApiClient& client, int minor) {
  auto r = client.Do({.path = "/version"});
  if (!r.ok()) {
    KLOG(WARNING) << "GET /version: " << r.status().ToString();
    return false;
  }
  // The first number after the key, in {"major": "1", "minor": "27+", ...}.
  auto number = [&b = r->body](std::string_view key) {
    size_t pos = b.find(key);
    if (pos != std::string::npos) pos = b.find_first_of("0123456789", pos + key.size());
    return pos == std::string::npos ? -1 : std::atoi(b.c_str() + pos);
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

StatusOr<informers::RestConfig> ClientConfig(const cmd::Flags& flags, const config::KubeSchedulerConfiguration& cfg) {
  std::string kubeconfig = !flags.kubeconfig.empty() ? flags.kubeconfig : cfg.client_connection.kubeconfig;
  auto rc = kubeconfig.empty() && flags.master.empty() ? informers::InClusterConfig()
                                                       : informers::LoadKubeconfig(kubeconfig, "", flags.master);
  if (!rc.ok()) return rc.status();
  rc->qps = cfg.client_connection.qps;
  rc->burst = cfg.client_connection.burst;
  return rc;
}

int Run(const cmd::Flags& flags) {
  // Signals are taken synchronously by this thread, so no handler races the scheduler.
  // Blocked before any thread starts (threads inherit the mask): a thread that left
  // SIGTERM unblocked would take it with the default action and kill the process.
  // SIGUSR2 is internal: the leader elector's thread wakes this one with it.
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGINT);
  sigaddset(&sigs, SIGUSR2);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
  const pthread_t main_thread = pthread_self();

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
  auto rc = ClientConfig(flags, *cfg);
  if (!rc.ok()) {
    KLOG(ERROR) << "invalid client configuration: " << rc.status().message();
    return 1;
  }
  const std::string hostname = Hostname();  // events' reportingInstance, the lease identity, the cert SAN
  // Four clients, each an I/O thread with its own connection and rate budget: watches;
  // writes (binds in front, events and status patches as background requests with a
  // budget of their own, so failures never starve binds, and an event after a bind is
  // sent without waking another thread); token/access reviews for /metrics; and the
  // leader-election lease, so a renewal never queues behind binds.
  auto watch_client = informers::NewCurlApiClient(*rc, {.thread_name = "io-watch"});
  auto write_client = informers::NewCurlApiClient(*rc, {.thread_name = "io-write"});
  auto review_client = informers::NewCurlApiClient(*rc, {.thread_name = "io-review"});
  auto lease_client = informers::NewCurlApiClient(*rc, {.thread_name = "io-lease"});
  for (const auto* c : {&watch_client, &write_client, &review_client, &lease_client}) {
    if (!c->ok()) {
      KLOG(ERROR) << "creating API clients: " << c->status().message();
      return 1;
    }
  }
  // Declared before the scheduler, so the scheduler (whose queue reports into it) goes first.
  scheduler::Scheduler* sched_ptr = nullptr;  // set below; read only during scrapes
  metrics::Metrics metrics({
      .cache_sizes = [&sched_ptr] {
        if (!sched_ptr) return metrics::CacheSizes{};
        auto& c = sched_ptr->cache();
        return metrics::CacheSizes{c.NodeCount(), c.PodCount(), c.AssumedPodCount()};
      },
      .unschedulable_pods = [&sched_ptr] {
        return sched_ptr ? sched_ptr->queue().UnschedulablePodsByPlugin() : metrics::UnschedulablePodCounts{};
      },
      .stuck_pods = [&sched_ptr] {
        return sched_ptr && sched_ptr->decisions() ? sched_ptr->decisions()->StuckCounts()
                                                   : std::map<std::string, size_t>{};
      },
  });
  informers::PodInformer pods(**watch_client, "/api/v1/pods",
                              {.field_selector = informers::kNonTerminalPodsSelector});
  informers::NodeInformer nodes(**watch_client, "/api/v1/nodes");
  // Namespaces and the objects that select pods, for the plugins' namespace selectors and
  // default spreading, and PodDisruptionBudgets for preemption (upstream: the shared
  // informer factory's listers).
  informers::ClusterListers listers(**watch_client);

  scheduler::SchedulerOptions so;
  so.config = *cfg;
  so.registry = framework::InTreeRegistry();
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
  so.disruption_target_condition = ServerAtLeastMinor(**write_client, 26);
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
  pods.AddHandler(&(*sched)->pod_handler());
  nodes.AddHandler(&(*sched)->node_handler());
  (*sched)->WatchStorage(listers.storage());
  sched_ptr = sched->get();
  metrics.SetGoroutinesSource("binding", [&sched_ptr] { return static_cast<int64_t>(sched_ptr->BindsInFlight()); });

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
      return 1;
    }
    elector = std::move(*e);
  }

  std::atomic<bool> synced{false};
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
        .always_allow_paths = flags.authorization_always_allow_paths,
        .authorizer = &authorizer,
        // As upstream, /readyz carries the leader-election watchdog, which passes on a
        // standby: a standby is ready (with delayCacheUntilActive it is not, until its
        // caches sync after winning). /healthz and /livez fail only for a leader that
        // failed to renew and is still running.
        .ready =
            [&synced, &elector] {
              if (!synced) return Unavailable("handlers are not fully synchronized");
              return elector ? elector->Check() : Status::OK();
            },
        .healthy = [&elector] { return elector ? elector->Check() : Status::OK(); },
        .metrics = [&metrics] { return metrics.Serialize(); },
        .configz = [configz = config::EncodeConfigz(*cfg)] { return configz; },
        // Why pods are pending and why they went where they went (ksched explain).
        .endpoints = {{.prefix = "/debug/pods",
                       .handler = [&sched_ptr](const std::string& path) -> server::HandlerResponse {
                         auto [status, body] =
                             explain::ServeDebugPods(sched_ptr ? sched_ptr->decisions() : nullptr, path);
                         return {status, std::move(body), "application/json"};
                       }}}});
    if (Status s = srv->Start(); !s.ok()) {
      KLOG(ERROR) << "serving on port " << flags.secure_port << ": " << s.message();
      return 1;
    }
    KLOG(INFO) << "Serving securely on " << flags.bind_address << ":" << flags.secure_port;
  }

  auto start_informers = [&] {
    nodes.Start();
    pods.Start();
    listers.Start();
    KLOG(INFO) << "Waiting for caches to sync";
    if (!nodes.WaitForSync(kSyncTimeout) || !pods.WaitForSync(kSyncTimeout) || !listers.WaitForSync(kSyncTimeout)) {
      KLOG(ERROR) << "informers did not sync within " << kSyncTimeout.count() << " minutes";
      return false;
    }
    synced = true;
    return true;
  };
  // A standby keeps warm caches so it can take over at once, unless delayCacheUntilActive.
  const bool delay_cache = elector && cfg->delay_cache_until_active;
  if (!delay_cache && !start_informers()) return 1;

  int sig = 0;
  if (elector) {
    elector->Start();
    while (!leading && (sig == 0 || sig == SIGUSR2)) sigwait(&sigs, &sig);
    if (sig == SIGUSR2) sig = 0;
  }
  if (sig == 0) {
    if (delay_cache && !start_informers()) {
      (void)elector->Release();
      return 1;
    }
    if (elector && !delay_cache) {
      // A standby's watches may have been failing or lagging (an apiserver restart, RBAC
      // still warming up): its cache can miss the previous leader's last binds, and
      // scheduling on it would fill that room twice. Read pods and nodes afresh from etcd
      // before the first scheduling cycle.
      KLOG(INFO) << "Became leader; reading pods and nodes afresh before scheduling";
      while (sig == 0 && !(pods.RelistAndWait(kFreshReadTimeout) && nodes.RelistAndWait(kFreshReadTimeout))) {
        KLOG(WARNING) << "pods and nodes not read afresh within " << kFreshReadTimeout.count() << " ms; waiting";
        timespec poll{};
        int pending = sigtimedwait(&sigs, nullptr, &poll);
        if (pending == SIGTERM || pending == SIGINT) sig = pending;
      }
    }
  }
  if (sig == 0) {
    KLOG(INFO) << "Caches are synced; starting to schedule (" << cfg->profiles.size() << " profile(s), "
               << nodes.Size() << " nodes)";
    (*sched)->Run();
    do sigwait(&sigs, &sig);
    while (sig == SIGUSR2);
  }
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

}  // namespace

int main(int argc, char** argv) {
  // A subcommand of its own: a client of a running ksched, with flags of its own.
  if (argc > 1 && std::string_view(argv[1]) == "explain")
    return ksched::cmd::RunExplain(argc - 1, argv + 1, stdout, stderr);
  ksched::cmd::Flags flags;
  std::string err;
  if (!ksched::cmd::ParseFlags(argc, argv, &flags, &err)) {
    std::fprintf(stderr, "Error: %s\n\n%s", err.c_str(), ksched::cmd::Usage().c_str());
    return 2;
  }
  if (flags.help) {
    std::fputs(ksched::cmd::Usage().c_str(), stdout);
    return 0;
  }
  if (flags.version) {
    std::printf("ksched v0.1.0 (KubeSchedulerConfiguration kubescheduler.config.k8s.io/v1)\n");
    return 0;
  }
  ksched::log::SetVerbosity(flags.verbosity);
  return Run(flags);
}
