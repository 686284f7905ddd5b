// The ksched binary's start-up against API servers it cannot use yet, as an operator
// meets them: an unparsable server URL and a config path that is no regular file fail at
// once; an unreachable server or one with a CA ksched does not trust keeps the process up,
// says so in the log from the first attempt and on /readyz, and SIGTERM ends it at once.
// And on the real kube-apiserver: a replica whose every request is still Forbidden (RBAC
// not granted yet, as while a restarted server warms up) asks discovery again rather than
// guessing the policy version, and schedules once access comes.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "pkg/client/curl_client.h"
#include "pkg/client/rest_config.h"
#include "pkg/api/json.h"
#include "tests/harness/api_helpers.h"
#include "tests/harness/control_plane.h"
#include "tests/harness/process_util.h"
#include "tests/fakes/event_log.h"
#include "tests/fakes/objects.h"
#include "tests/integration/manifests.h"

namespace ksched::testing {
namespace {

using namespace std::chrono_literals;
using client::Verb;

bool TestFailed() { return ::testing::Test::HasFailure(); }

std::string WriteKubeconfig(const std::string& path, const std::string& server, const std::string& ca_file) {
  std::ofstream(path) << "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: " << server
                      << "\n    certificate-authority: " << ca_file
                      << "\nusers:\n- name: u\n  user:\n    token: admintoken\ncontexts:\n- name: x\n  context:\n"
                         "    cluster: c\n    user: u\ncurrent-context: x\n";
  return path;
}

// The body of ksched's /readyz (it names what start-up waits for), "" without an answer.
std::string Readyz(int port) {
  auto out = RunCommand("curl -sk --max-time 5 https://127.0.0.1:" + std::to_string(port) + "/readyz 2>/dev/null");
  return out.ok() ? *out : "";
}

// Starts ksched with `args` (plus a secure port on loopback) and returns the port.
int StartKsched(std::unique_ptr<ChildProcess>& child, std::vector<std::string> args, const std::string& log) {
  const int port = FreePort();
  args.insert(args.begin(), KSCHED_BINARY);
  args.push_back("--bind-address=127.0.0.1");
  args.push_back("--secure-port=" + std::to_string(port));
  child = std::make_unique<ChildProcess>(std::move(args), log, ChildProcess::Options{.print_log_if = TestFailed});
  EXPECT_TRUE(child->Started());
  return port;
}

TEST(StartupIntegrationTest, AnUnparsableServerUrlFailsAtOnce) {
  const std::string dir = ControlPlane::Get().dir();
  const std::string kc = WriteKubeconfig(dir + "/bad-url.kubeconfig", "https://host:70000", ControlPlane::Get().ca_file());
  std::unique_ptr<ChildProcess> ksched;
  StartKsched(ksched, {"--kubeconfig=" + kc, "--leader-elect=false"}, dir + "/bad-url.log");
  ASSERT_TRUE(ksched->WaitExit(5s)) << "still running";
  EXPECT_EQ(ksched->ExitCode(), 1);
  EXPECT_NE(ksched->Log().find("invalid server URL \"https://host:70000\""), std::string::npos) << ksched->Log();
}

TEST(StartupIntegrationTest, AConfigThatIsAFifoFailsAtOnce) {
  const std::string dir = ControlPlane::Get().dir();
  const std::string fifo = dir + "/config.fifo";
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::unique_ptr<ChildProcess> ksched;
  StartKsched(ksched, {"--config=" + fifo, "--kubeconfig=" + ControlPlane::Get().kubeconfig()}, dir + "/fifo.log");
  ASSERT_TRUE(ksched->WaitExit(5s)) << "still running: blocked opening the FIFO?";
  EXPECT_EQ(ksched->ExitCode(), 1);
  EXPECT_NE(ksched->Log().find("not a regular file"), std::string::npos) << ksched->Log();
}

// A dead port and a server whose certificate ksched's CA did not sign: the process stays
// up, logs the problem at the first attempt, /readyz names it, SIGTERM ends it at once.
TEST(StartupIntegrationTest, AnUnusableServerIsReportedAndSigtermEndsTheWait) {
  ControlPlane& cp = ControlPlane::Get();
  const std::string dir = cp.dir();
  // A CA that signed nothing the server presents.
  ASSERT_TRUE(RunCommand("openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=other-ca -keyout " + dir +
                         "/other-ca.key -out " + dir + "/other-ca.crt 2>/dev/null")
                  .ok());
  struct Case {
    std::string name, server, ca, want_log;
  };
  const Case cases[] = {
      {"dead-port", "https://127.0.0.1:" + std::to_string(FreePort()), cp.ca_file(), "connect"},
      {"wrong-ca", cp.server(), dir + "/other-ca.crt", "certificate"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string kc = WriteKubeconfig(dir + "/" + c.name + ".kubeconfig", c.server, c.ca);
    std::unique_ptr<ChildProcess> ksched;
    const int port = StartKsched(ksched, {"--kubeconfig=" + kc, "--leader-elect=false"}, dir + "/" + c.name + ".log");
    ASSERT_TRUE(Eventually([&] { return ksched->Log().find("cannot reach the API server at") != std::string::npos; },
                           10s))
        << ksched->Log();
    EXPECT_NE(ksched->Log().find(c.want_log), std::string::npos) << ksched->Log();
    std::string readyz;
    ASSERT_TRUE(Eventually(
        [&] {
          readyz = Readyz(port);
          return readyz.find("waiting for the API server at") != std::string::npos;
        },
        10s))
        << readyz;
    EXPECT_TRUE(ksched->Running());
    const auto start = std::chrono::steady_clock::now();
    ksched->Signal(SIGTERM);
    ASSERT_TRUE(ksched->WaitExit(3s)) << "SIGTERM not honoured while waiting for the API server";
    EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
    EXPECT_EQ(ksched->ExitCode(), 0);
  }
}

// While a restarted kube-apiserver's RBAC warms up, discovery answers 403. Here the
// default system:discovery binding is removed for a while, so the "ksched" user (whose
// own RBAC, rbac.yaml, is in place) is Forbidden on GET /apis/policy. ksched asks again
// rather than guessing the policy version (the 1.20 server would answer NotFound for
// policy/v1 for ever, the budget informer would never sync and the replica would never
// campaign), /readyz says what is missing, and once the binding is back the replica
// syncs, takes the lease and binds a pod.
TEST(StartupIntegrationTest, ForbiddenDiscoveryIsAskedAgainUntilAccessIsGranted) {
  ControlPlane& cp = ControlPlane::Get();
  auto admin = AdminClient();
  ASSERT_TRUE(ApplyManifestFile(*admin, std::string(KSCHED_MANIFESTS_DIR) + "/rbac.yaml").ok());
  const std::string binding = "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings";
  auto del = admin->Do({.verb = Verb::kDelete, .path = binding + "/system:discovery"});
  ASSERT_TRUE(del.ok()) << del.status().ToString();
  const std::string config_path = cp.dir() + "/rbac-late.yaml";
  std::ofstream(config_path) << "apiVersion: kubescheduler.config.k8s.io/v1\n"
                                "kind: KubeSchedulerConfiguration\n"
                                "leaderElection:\n"
                                "  leaderElect: true\n"
                                "  resourceName: ksched\n"
                                "  resourceNamespace: kube-system\n"
                                "profiles:\n"
                                "- schedulerName: ksched-rbac-late\n";
  std::unique_ptr<ChildProcess> ksched;
  const int port = StartKsched(ksched, {"--config=" + config_path, "--kubeconfig=" + cp.ksched_kubeconfig(), "-v=2"},
                               cp.dir() + "/rbac-late.log");
  auto restore = [&] {
    Post(*admin, binding,
         R"({"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding",)"
         R"("metadata":{"name":"system:discovery"},)"
         R"("roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"system:discovery"},)"
         R"("subjects":[{"apiGroup":"rbac.authorization.k8s.io","kind":"Group","name":"system:authenticated"}]})");
  };
  const bool asked = Eventually(
      [&] {
        const std::string log = ksched->Log();
        return log.find("discovering the policy API group") != std::string::npos &&
               log.find("attempt 2") != std::string::npos;
      },
      30s);
  if (!asked) restore();
  ASSERT_TRUE(asked) << ksched->Log();
  EXPECT_NE(ksched->Log().find("forbidden"), std::string::npos) << ksched->Log();
  const std::string readyz = Readyz(port);
  EXPECT_NE(readyz.find("[-]sched-handler-sync failed"), std::string::npos) << readyz;
  EXPECT_NE(readyz.find("policy API group"), std::string::npos) << readyz;

  restore();
  Post(*admin, "/api/v1/namespaces", R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"rbac-late"}})");
  Post(*admin, "/api/v1/nodes",
       api::EncodeNode(TestNode("rbac-late-node", *api::Quantity::Parse("4"), *api::Quantity::Parse("16Gi"))));
  Post(*admin, "/api/v1/namespaces/rbac-late/pods",
       api::EncodePod(TestPod("rbac-late", "p", "ksched-rbac-late", {{"cpu", *api::Quantity::Parse("100m")}})));
  EXPECT_EQ(BoundNode(*admin, "rbac-late/p", 90s), "rbac-late-node") << ksched->Log();
  EXPECT_TRUE(Eventually([&] { return Readyz(port) == "ok"; }, 10s));
  EXPECT_TRUE(ksched->Running());
}

// Started as kubeadm starts kube-scheduler (its static pod's arguments), plus the gates and
// JSON logging operators add: ksched takes the kube-scheduler lease, binds pods that name
// no scheduler, answers /livez and /readyz over HTTPS without a token, and writes only
// JSON lines.
TEST(StartupIntegrationTest, KubeadmArgumentsTakeTheLeaseAndBindDefaultSchedulerPods) {
  ControlPlane& cp = ControlPlane::Get();
  auto admin = AdminClient();
  const std::string kc = cp.kubeconfig();  // stands in for /etc/kubernetes/scheduler.conf
  std::unique_ptr<ChildProcess> ksched;
  const int port = StartKsched(ksched,
                               {"--authentication-kubeconfig=" + kc, "--authorization-kubeconfig=" + kc,
                                "--kubeconfig=" + kc, "--leader-elect=true",
                                "--feature-gates=SchedulerQueueingHints=true", "--logging-format=json"},
                               cp.dir() + "/kubeadm.log");
  Post(*admin, "/api/v1/namespaces", R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"kubeadm"}})");
  Post(*admin, "/api/v1/nodes",
       api::EncodeNode(TestNode("kubeadm-node", *api::Quantity::Parse("4"), *api::Quantity::Parse("16Gi"))));
  Post(*admin, "/api/v1/namespaces/kubeadm/pods",
       api::EncodePod(TestPod("kubeadm", "web", "default-scheduler", {{"cpu", *api::Quantity::Parse("100m")}})));
  EXPECT_EQ(BoundNode(*admin, "kubeadm/web", 60s), "kubeadm-node") << ksched->Log();
  auto lease = admin->Do({.path = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler"});
  ASSERT_TRUE(lease.ok()) << lease.status().ToString();
  EXPECT_NE(lease->body.find("\"holderIdentity\""), std::string::npos) << lease->body;
  EXPECT_TRUE(Eventually([&] { return Readyz(port) == "ok"; }, 10s)) << Readyz(port);
  auto livez = RunCommand("curl -sk --max-time 5 https://127.0.0.1:" + std::to_string(port) + "/livez");
  ASSERT_TRUE(livez.ok());
  EXPECT_EQ(*livez, "ok");
  // stderr (and stdout) hold JSON objects only, one a line.
  ASSERT_TRUE(ksched->Running());
  ksched->Stop();
  std::istringstream lines(ksched->Log());
  size_t count = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    ++count;
    EXPECT_TRUE(line.starts_with("{\"ts\":") && line.ends_with("}") && line.find("\"msg\":") != std::string::npos)
        << line;
  }
  EXPECT_GT(count, 3u);
}

}  // namespace
}  // namespace ksched::testing
