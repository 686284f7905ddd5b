// Leader election on a real kube-apiserver: two electors in one process, then two ksched
// processes failing over (SIGKILL of the leader) and handing over (SIGTERM releases).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include "pkg/client/curl_client.h"
#include "pkg/client/rest_config.h"
#include "pkg/api/json.h"
#include "pkg/leaderelection/leader_elector.h"
#include "pkg/leaderelection/lease.h"
#include "tests/harness/api_helpers.h"
#include "tests/harness/control_plane.h"
#include "tests/harness/process_util.h"
#include "tests/fakes/event_log.h"
#include "tests/fakes/objects.h"
#include "tests/integration/manifests.h"

namespace ksched::leaderelection {
namespace {

using namespace std::chrono_literals;
using client::Verb;
using ksched::testing::ChildProcess;
using ksched::testing::ControlPlane;
using ksched::testing::Eventually;
using ksched::testing::FreePort;
using ksched::testing::ReadFile;

using ksched::testing::AdminClient;
using ksched::testing::Post;

std::optional<LeaseRecord> ReadLease(client::ApiClient& c, const std::string& name) {
  auto r = c.Do({.path = LeasePath("kube-system", name)});
  if (!r.ok()) return std::nullopt;
  auto lease = DecodeLease(r->body);
  if (!lease.ok()) return std::nullopt;
  return lease->record;
}

// ---- (a) two electors in one process ------------------------------------------------

TEST(LeaderElectionIntegrationTest, InProcessFailoverAndRelease) {
  constexpr char kLease[] = "le-inproc";
  auto client = AdminClient();
  auto make = [&](const std::string& id) {
    auto le = LeaderElector::New({.client = client.get(),
                                  .lock_namespace = "kube-system",
                                  .lock_name = kLease,
                                  .identity = id,
                                  .lease_duration = 2s,
                                  .renew_deadline = 1500ms,
                                  .retry_period = 300ms});
    EXPECT_TRUE(le.ok()) << le.status().ToString();
    return std::move(*le);
  };
  auto a = make("a");
  auto b = make("b");
  a->Start();
  b->Start();
  ASSERT_TRUE(Eventually([&] { return a->IsLeader() || b->IsLeader(); }, 5s));
  // Stays exactly one for a few renewals.
  for (int i = 0; i < 10; ++i) {
    EXPECT_NE(a->IsLeader(), b->IsLeader());
    std::this_thread::sleep_for(100ms);
  }
  LeaderElector& leader = a->IsLeader() ? *a : *b;
  LeaderElector& standby = a->IsLeader() ? *b : *a;
  auto lease = ReadLease(*client, kLease);
  ASSERT_TRUE(lease.has_value());
  EXPECT_EQ(lease->holder_identity, leader.identity());
  EXPECT_EQ(lease->lease_duration_seconds, 2);
  const int transitions = lease->lease_transitions;

  // The leader dies without releasing: the standby waits out the lease on its own clock.
  auto killed = std::chrono::steady_clock::now();
  leader.Stop();
  ASSERT_TRUE(Eventually([&] { return standby.IsLeader(); }, 2s + 2s, 10ms));
  auto took = std::chrono::steady_clock::now() - killed;
  EXPECT_GE(took, 1s) << "took over long before the lease could have expired";
  lease = ReadLease(*client, kLease);
  ASSERT_TRUE(lease.has_value());
  EXPECT_EQ(lease->holder_identity, standby.identity());
  EXPECT_EQ(lease->lease_transitions, transitions + 1);

  // A released lease is taken on the next attempt, well before it would have expired.
  auto c = make("c");
  c->Start();
  std::this_thread::sleep_for(500ms);  // c has seen the fresh lease and is waiting
  EXPECT_FALSE(c->IsLeader());
  auto released = std::chrono::steady_clock::now();
  ASSERT_TRUE(standby.Release().ok());
  ASSERT_TRUE(Eventually([&] { return c->IsLeader(); }, 1500ms, 10ms));
  EXPECT_LT(std::chrono::steady_clock::now() - released, 1500ms);
  lease = ReadLease(*client, kLease);
  ASSERT_TRUE(lease.has_value());
  EXPECT_EQ(lease->holder_identity, "c");
  EXPECT_EQ(lease->lease_transitions, transitions + 2);
  ASSERT_TRUE(c->Release().ok());
  lease = ReadLease(*client, kLease);
  ASSERT_TRUE(lease.has_value());
  EXPECT_EQ(lease->holder_identity, "");
  EXPECT_EQ(lease->lease_duration_seconds, 1);
}

// ---- (b) two ksched processes ---------------------------------------------------------

#ifdef KSCHED_BINARY

// A child ksched (ChildProcess, tests/harness/process_util.h) whose stdout+stderr go to a
// log file; SIGKILLed and reaped when the test ends, however it ends.
class KschedProcess : public ChildProcess {
 public:
  KschedProcess(std::vector<std::string> args, std::string log)
      : ChildProcess(WithBinary(std::move(args)), std::move(log), {.destroy_grace = std::chrono::milliseconds(0)}) {}

  // The exit status once it has exited (waiting up to `timeout`); a death by signal
  // reads as 128 + signal.
  std::optional<int> Wait(std::chrono::milliseconds timeout) {
    if (!WaitExit(timeout)) return std::nullopt;
    return ExitCode();
  }
  bool Logged(const std::string& s) const { return Log().find(s) != std::string::npos; }

 private:
  static std::vector<std::string> WithBinary(std::vector<std::string> args) {
    args.insert(args.begin(), KSCHED_BINARY);
    return args;
  }
};

constexpr char kScheduler[] = "le-test-scheduler";
constexpr char kNs[] = "le-test";

void CreatePod(client::ApiClient& c, const std::string& name) {
  api::Pod p = ksched::testing::TestPod(kNs, name, kScheduler, {{"cpu", *api::Quantity::Parse("100m")}});
  Post(c, std::string("/api/v1/namespaces/") + kNs + "/pods", api::EncodePod(p));
}

bool Bound(client::ApiClient& c, const std::string& name) {
  auto r = c.Do({.path = std::string("/api/v1/namespaces/") + kNs + "/pods/" + name});
  if (!r.ok()) return false;
  auto p = api::DecodePod(r->body);
  return p.ok() && (*p)->IsAssigned();
}

std::string BoundLine(const std::string& pod) {
  return std::string("Successfully bound pod to node, pod=\"") + kNs + "/" + pod + "\"";
}

TEST(LeaderElectionIntegrationTest, TwoKschedProcessesFailOverAndHandOver) {
  auto admin = AdminClient();
  const std::string dir = ControlPlane::Get().dir();
  // The lease rules of rbac.yaml (create; get/update on resourceNames [ksched]) must do.
  Status applied = ksched::testing::ApplyManifestFile(*admin, KSCHED_RBAC_MANIFEST);
  ASSERT_TRUE(applied.ok()) << applied.ToString();
  const std::string config = dir + "/le-ksched.yaml";
  {
    std::ofstream out(config);
    out << "apiVersion: kubescheduler.config.k8s.io/v1\n"
           "kind: KubeSchedulerConfiguration\n"
           "leaderElection:\n"
           "  leaderElect: true\n"
           "  leaseDuration: 4s\n"
           "  renewDeadline: 3s\n"
           "  retryPeriod: 400ms\n"
           "  resourceLock: leases\n"
           "  resourceName: ksched\n"
           "  resourceNamespace: kube-system\n"
           "clientConnection:\n"
           "  kubeconfig: "
        << ControlPlane::Get().ksched_kubeconfig() << "\nprofiles:\n- schedulerName: " << kScheduler << "\n";
  }
  Post(*admin, "/api/v1/namespaces", std::string(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")") +
                                         kNs + R"("}})");
  Post(*admin, "/api/v1/nodes",
       api::EncodeNode(ksched::testing::TestNode("le-node", *api::Quantity::Parse("8"), *api::Quantity::Parse("16Gi"))));

  auto start = [&](const std::string& name, int port = FreePort()) {
    return std::make_unique<KschedProcess>(
        std::vector<std::string>{"--config=" + config, "--secure-port=" + std::to_string(port),
                                 "--bind-address=127.0.0.1", "-v=2"},
        dir + "/" + name + ".log");
  };
  auto p1 = start("ksched-1");
  auto p2 = start("ksched-2");
  constexpr char kAcquired[] = "successfully acquired lease kube-system/ksched";
  ASSERT_TRUE(Eventually([&] { return p1->Logged(kAcquired) || p2->Logged(kAcquired); }, 15s, 50ms))
      << "ksched-1:\n" << p1->Log() << "\nksched-2:\n" << p2->Log();
  std::this_thread::sleep_for(1s);  // a second leader would show up within a retry period
  ASSERT_NE(p1->Logged(kAcquired), p2->Logged(kAcquired)) << p1->Log() << "\n----\n" << p2->Log();
  KschedProcess* leader = p1->Logged(kAcquired) ? p1.get() : p2.get();
  KschedProcess* standby = leader == p1.get() ? p2.get() : p1.get();
  ASSERT_TRUE(standby->Logged("attempting to acquire leader lease kube-system/ksched...")) << standby->Log();
  auto lease = ReadLease(*admin, "ksched");
  ASSERT_TRUE(lease.has_value());
  EXPECT_TRUE(leader->Logged("New leader elected: " + lease->holder_identity)) << leader->Log();

  // Only the leader binds.
  for (int i = 0; i < 3; ++i) CreatePod(*admin, "before-" + std::to_string(i));
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(Eventually([&] { return Bound(*admin, "before-" + std::to_string(i)); }, 15s, 50ms))
        << leader->Log();
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(leader->Logged(BoundLine("before-" + std::to_string(i))));
  EXPECT_FALSE(standby->Logged("Successfully bound")) << standby->Log();

  // The leader dies without releasing; the standby takes over within leaseDuration + 2 s.
  // (The standby notices the leader's last renewal on its first poll after it, up to
  // 2.2 x retryPeriod later, and takes over on its first poll a leaseDuration after that:
  // at worst leaseDuration + 4.4 x retryPeriod = 5.76 s here.)
  leader->Signal(SIGKILL);
  auto killed = std::chrono::steady_clock::now();
  for (int i = 0; i < 3; ++i) CreatePod(*admin, "after-" + std::to_string(i));
  ASSERT_TRUE(Eventually([&] { return standby->Logged(kAcquired); }, 4s + 2s, 20ms)) << standby->Log();
  EXPECT_LE(std::chrono::steady_clock::now() - killed, 6s);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(Eventually([&] { return Bound(*admin, "after-" + std::to_string(i)); }, 15s, 50ms))
        << standby->Log();
    EXPECT_TRUE(Eventually([&] { return standby->Logged(BoundLine("after-" + std::to_string(i))); }, 5s, 20ms));
    EXPECT_FALSE(standby->Logged(BoundLine("before-" + std::to_string(i))));
  }
  lease = ReadLease(*admin, "ksched");
  ASSERT_TRUE(lease.has_value());
  EXPECT_TRUE(standby->Logged("New leader elected: " + lease->holder_identity));
  EXPECT_GE(lease->lease_transitions, 1);

  // A standby is live and ready (the watchdog passes for non-leaders), and a SIGTERM
  // before it ever led exits 0 without touching the lease.
  const int standby_port = FreePort();
  auto p3 = start("ksched-3", standby_port);
  ASSERT_TRUE(Eventually([&] { return p3->Logged("attempting to acquire leader lease"); }, 15s, 50ms)) << p3->Log();
  for (const char* path : {"/healthz", "/readyz", "/livez"}) {
    auto body = ksched::testing::RunCommand("curl -sk https://127.0.0.1:" + std::to_string(standby_port) + path);
    ASSERT_TRUE(body.ok()) << path << ": " << body.status().ToString();
    EXPECT_EQ(*body, "ok") << path;
  }
  p3->Signal(SIGTERM);
  auto p3_code = p3->Wait(10s);
  ASSERT_TRUE(p3_code.has_value()) << p3->Log();
  EXPECT_EQ(*p3_code, 0) << p3->Log();
  EXPECT_FALSE(p3->Logged("successfully acquired lease"));
  EXPECT_EQ(ReadLease(*admin, "ksched")->holder_identity, lease->holder_identity);

  // SIGTERM: stop scheduling, release the lease, exit 0.
  standby->Signal(SIGTERM);
  auto code = standby->Wait(20s);
  ASSERT_TRUE(code.has_value()) << standby->Log();
  EXPECT_EQ(*code, 0) << standby->Log();
  EXPECT_TRUE(standby->Logged("released lease kube-system/ksched")) << standby->Log();
  lease = ReadLease(*admin, "ksched");
  ASSERT_TRUE(lease.has_value());
  EXPECT_EQ(lease->holder_identity, "");
  EXPECT_EQ(lease->lease_duration_seconds, 1);
}

// A leader that cannot renew (the apiserver is gone) exits 1 within renewDeadline of its
// last renewal round, before a standby could take over.
TEST(LeaderElectionIntegrationTest, KschedExitsWhenTheLeaseIsLost) {
  const std::string dir = ControlPlane::Get().dir();
  const std::string config = dir + "/le-lost.yaml";
  std::ofstream(config) << "apiVersion: kubescheduler.config.k8s.io/v1\n"
                           "kind: KubeSchedulerConfiguration\n"
                           "leaderElection:\n"
                           "  leaderElect: true\n"
                           "  leaseDuration: 4s\n"
                           "  renewDeadline: 3s\n"
                           "  retryPeriod: 1s\n"
                           "  resourceName: le-lost\n"
                           "  resourceNamespace: kube-system\n"
                           "profiles:\n- schedulerName: le-lost\n";
  KschedProcess p({"--config=" + config, "--kubeconfig=" + ControlPlane::Get().kubeconfig(),
                   "--secure-port=" + std::to_string(FreePort()), "--bind-address=127.0.0.1"},
                  dir + "/ksched-lost.log");
  ASSERT_TRUE(Eventually([&] { return p.Logged("successfully acquired lease kube-system/le-lost"); }, 15s, 50ms))
      << p.Log();
  ASSERT_TRUE(ControlPlane::Get().StopApiserver().ok());
  auto stopped = std::chrono::steady_clock::now();
  auto code = p.Wait(8s);
  auto took = std::chrono::steady_clock::now() - stopped;
  Status restarted = ControlPlane::Get().StartApiserver();
  ASSERT_TRUE(code.has_value()) << p.Log();
  EXPECT_EQ(*code, 1) << p.Log();
  EXPECT_TRUE(p.Logged("Leaderelection lost")) << p.Log();
  EXPECT_TRUE(p.Logged("failed to renew lease kube-system/le-lost")) << p.Log();
  // Last renewal <= retryPeriod before the stop, then renewDeadline of retries.
  EXPECT_LE(took, 1s + 3s + 1s);
  EXPECT_TRUE(restarted.ok()) << restarted.ToString();
}

// A leader frozen (SIGSTOP) past its lease while a standby takes over: on SIGCONT its
// first move must be a leadership check, not a bind. A pod created during the freeze is
// bound by the new leader only; the old one never binds it, finds the lease gone and exits.
TEST(LeaderElectionIntegrationTest, FrozenLeaderDoesNotBindOnWaking) {
  auto admin = AdminClient();
  const std::string dir = ControlPlane::Get().dir();
  Status applied = ksched::testing::ApplyManifestFile(*admin, KSCHED_RBAC_MANIFEST);
  ASSERT_TRUE(applied.ok()) << applied.ToString();
  const std::string config = dir + "/le-frozen.yaml";
  std::ofstream(config) << "apiVersion: kubescheduler.config.k8s.io/v1\n"
                           "kind: KubeSchedulerConfiguration\n"
                           "leaderElection:\n"
                           "  leaderElect: true\n"
                           "  leaseDuration: 4s\n"
                           "  renewDeadline: 3s\n"
                           "  retryPeriod: 400ms\n"
                           "  resourceName: le-frozen\n"
                           "  resourceNamespace: kube-system\n"
                           "profiles:\n- schedulerName: "
                        << kScheduler << "\n";
  Post(*admin, "/api/v1/namespaces", std::string(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")") +
                                         kNs + R"("}})");
  Post(*admin, "/api/v1/nodes",
       api::EncodeNode(ksched::testing::TestNode("le-node", *api::Quantity::Parse("8"), *api::Quantity::Parse("16Gi"))));
  auto start = [&](const std::string& name) {
    return std::make_unique<KschedProcess>(
        std::vector<std::string>{"--config=" + config, "--kubeconfig=" + ControlPlane::Get().kubeconfig(),
                                 "--secure-port=" + std::to_string(FreePort()), "--bind-address=127.0.0.1", "-v=2"},
        dir + "/" + name + ".log");
  };
  constexpr char kAcquired[] = "successfully acquired lease kube-system/le-frozen";
  auto leader = start("ksched-frozen-1");
  ASSERT_TRUE(Eventually([&] { return leader->Logged(kAcquired); }, 15s, 50ms)) << leader->Log();
  auto standby = start("ksched-frozen-2");
  ASSERT_TRUE(Eventually([&] { return standby->Logged("attempting to acquire leader lease"); }, 15s, 50ms))
      << standby->Log();

  leader->Signal(SIGSTOP);
  CreatePod(*admin, "frozen-0");  // neither schedules it yet: one is frozen, one waits
  ASSERT_TRUE(Eventually([&] { return standby->Logged(kAcquired); }, 10s, 20ms)) << standby->Log();
  leader->Signal(SIGCONT);

  ASSERT_TRUE(Eventually([&] { return Bound(*admin, "frozen-0"); }, 15s, 50ms)) << standby->Log();
  EXPECT_TRUE(Eventually([&] { return standby->Logged(BoundLine("frozen-0")); }, 5s, 20ms)) << standby->Log();
  auto code = leader->Wait(10s);
  ASSERT_TRUE(code.has_value()) << leader->Log();
  EXPECT_EQ(*code, 1) << leader->Log();
  EXPECT_TRUE(leader->Logged("Leaderelection lost")) << leader->Log();
  EXPECT_FALSE(leader->Logged(BoundLine("frozen-0"))) << leader->Log();
  standby->Signal(SIGTERM);
  EXPECT_TRUE(standby->Wait(20s).has_value());
}

#endif  // KSCHED_BINARY

}  // namespace
}  // namespace ksched::leaderelection
