// ksched: flags -> config -> API clients -> informers -> scheduler, then run until
// SIGTERM/SIGINT (graceful: stop popping, let in-flight binds finish, exit 0).
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <atomic>
#include <fstream>
#include <memory>
#include <string>

#include "cmd/ksched/flags.h"
#include "config/defaults.h"
#include "config/load.h"
#include "config/validate.h"
#include "informers/curl_client.h"
#include "informers/informer.h"
#include "informers/rest_config.h"
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
  if (cfg->leader_election.leader_elect)
    KLOG(WARNING) << "leader election is not implemented yet: run a single ksched replica "
                     "(set leaderElection.leaderElect: false or --leader-elect=false to silence this)";

  auto rc = ClientConfig(flags, *cfg);
  if (!rc.ok()) {
    KLOG(ERROR) << "invalid client configuration: " << rc.status().message();
    return 1;
  }
  // Four clients: watches, binds, status/events with a budget of their own so failures
  // never starve binds, and token/access reviews for /metrics.
  auto watch_client = informers::NewCurlApiClient(*rc);
  auto bind_client = informers::NewCurlApiClient(*rc);
  auto status_client = informers::NewCurlApiClient(*rc);
  auto review_client = informers::NewCurlApiClient(*rc);
  if (!watch_client.ok() || !bind_client.ok() || !status_client.ok() || !review_client.ok()) {
    KLOG(ERROR) << "creating API clients: " << watch_client.status().message();
    return 1;
  }
  // Declared before the scheduler, so the scheduler (whose queue reports into it) goes first.
  scheduler::Scheduler* sched_ptr = nullptr;  // set below; read only during scrapes
  metrics::Metrics metrics({.cache_sizes = [&sched_ptr] {
    if (!sched_ptr) return metrics::CacheSizes{};
    auto& c = sched_ptr->cache();
    return metrics::CacheSizes{c.NodeCount(), c.PodCount(), c.AssumedPodCount()};
  }});
  informers::PodInformer pods(**watch_client, "/api/v1/pods",
                              {.field_selector = informers::kNonTerminalPodsSelector});
  informers::NodeInformer nodes(**watch_client, "/api/v1/nodes");

  scheduler::SchedulerOptions so;
  so.config = *cfg;
  so.registry = framework::InTreeRegistry();
  so.bind_client = bind_client->get();
  so.status_client = status_client->get();
  so.hostname = Hostname();
  so.pod_max_in_unschedulable = flags.pod_max_in_unschedulable_pods_duration;
  so.pod_lister = [&pods](const std::string& key) { return pods.Get(key); };
  so.queue_metrics = &metrics;
  so.framework_metrics = &metrics;
  so.metrics = &metrics;
  auto sched = scheduler::Scheduler::New(std::move(so));
  if (!sched.ok()) {
    KLOG(ERROR) << sched.status().message();
    return 1;
  }
  pods.AddHandler(&(*sched)->pod_handler());
  nodes.AddHandler(&(*sched)->node_handler());
  sched_ptr = sched->get();
  metrics.SetGoroutinesSource("binding", [&sched_ptr] { return static_cast<int64_t>(sched_ptr->BindsInFlight()); });

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
        .hostname = Hostname(),
        .always_allow_paths = flags.authorization_always_allow_paths,
        .authorizer = &authorizer,
        .ready = [&synced] { return synced ? Status::OK() : Unavailable("handlers are not fully synchronized"); },
        .metrics = [&metrics] { return metrics.Serialize(); }});
    if (Status s = srv->Start(); !s.ok()) {
      KLOG(ERROR) << "serving on port " << flags.secure_port << ": " << s.message();
      return 1;
    }
    KLOG(INFO) << "Serving securely on " << flags.bind_address << ":" << flags.secure_port;
  }

  // Signals are taken synchronously by this thread, so no handler races the scheduler.
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGINT);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);

  nodes.Start();
  pods.Start();
  KLOG(INFO) << "Waiting for caches to sync";
  if (!nodes.WaitForSync(kSyncTimeout) || !pods.WaitForSync(kSyncTimeout)) {
    KLOG(ERROR) << "informers did not sync within " << kSyncTimeout.count() << " minutes";
    return 1;
  }
  synced = true;
  KLOG(INFO) << "Caches are synced; starting to schedule (" << cfg->profiles.size() << " profile(s), "
             << nodes.Size() << " nodes)";
  (*sched)->Run();

  int sig = 0;
  sigwait(&sigs, &sig);
  KLOG(INFO) << "Received " << (sig == SIGTERM ? "SIGTERM" : "SIGINT") << ", shutting down";
  (*sched)->Stop(kShutdownGrace);
  if (srv) srv->Stop();
  pods.Stop();
  nodes.Stop();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
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
