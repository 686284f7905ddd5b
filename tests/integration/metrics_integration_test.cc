// The ksched binary on a real kube-apiserver, scraped like Prometheus would: with the
// least-privileged "ksched" credentials (rbac.yaml applied), two nodes and a known
// workload (5 pods that fit, 1 that fits nowhere), /metrics must refuse anonymous and
// unauthorized callers, and for the admin token report upstream's names, labels, buckets
// and the values this workload implies. /configz and /healthz are checked on the way;
// then /debug/pods and `ksched explain` on the pod that fits nowhere, before and after a
// node it fits on joins.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <simdjson.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <sstream>
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

// A client for ksched's own HTTPS endpoints (self-signed certificate).
client::ApiClientPtr KschedClient(int port, std::string token) {
  return NewClient({.server = "https://127.0.0.1:" + std::to_string(port),
                    .insecure_skip_tls_verify = true,
                    .bearer_token = std::move(token),
                    .qps = 0,
                    .timeout = 10s});
}

std::string NodeBody(const std::string& name) {
  return api::EncodeNode(
      ksched::testing::TestNode(name, *api::Quantity::Parse("4"), *api::Quantity::Parse("16Gi")));
}

std::string PodBody(const std::string& name, const std::string& cpu) {
  return api::EncodePod(ksched::testing::TestPod("metrics", name, "ksched", {{"cpu", *api::Quantity::Parse(cpu)}}));
}

// "name{labels}" -> value, for every sample line of a Prometheus text exposition.
std::map<std::string, double> Samples(const std::string& text) {
  std::map<std::string, double> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    size_t space = line.rfind(' ');
    if (space == std::string::npos) continue;
    out[line.substr(0, space)] = std::strtod(line.c_str() + space + 1, nullptr);
  }
  return out;
}

// What the workload must show; each entry is "sample" -> predicate on its value.
struct Expectation {
  std::string sample;
  std::function<bool(double)> ok;
  std::string want;
};

std::vector<std::string> Unmet(const std::map<std::string, double>& samples, const std::vector<Expectation>& want) {
  std::vector<std::string> unmet;
  for (const Expectation& e : want) {
    auto it = samples.find(e.sample);
    if (it == samples.end()) {
      unmet.push_back(e.sample + " missing");
    } else if (!e.ok(it->second)) {
      unmet.push_back(e.sample + " = " + std::to_string(it->second) + ", want " + e.want);
    }
  }
  return unmet;
}

Expectation Eq(std::string sample, double v) {
  return {std::move(sample), [v](double got) { return got == v; }, "== " + std::to_string(v)};
}
Expectation Ge(std::string sample, double v) {
  return {std::move(sample), [v](double got) { return got >= v; }, ">= " + std::to_string(v)};
}

TEST(MetricsIntegrationTest, ScrapeAfterKnownWorkload) {
  ControlPlane& cp = ControlPlane::Get();
  auto admin = AdminClient();
  // ksched runs as the least-privileged user, so rbac.yaml must be enough.
  ASSERT_TRUE(ApplyManifestFile(*admin, std::string(KSCHED_MANIFESTS_DIR) + "/rbac.yaml").ok());
  Post(*admin, "/api/v1/namespaces", R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"metrics"}})");
  Post(*admin, "/api/v1/nodes", NodeBody("metrics-node-a"));
  Post(*admin, "/api/v1/nodes", NodeBody("metrics-node-b"));

  const std::string config_path = cp.dir() + "/metrics-ksched.yaml";
  std::ofstream(config_path) << "apiVersion: kubescheduler.config.k8s.io/v1\n"
                                "kind: KubeSchedulerConfiguration\n"
                                "profiles:\n"
                                "- schedulerName: ksched\n";
  const int port = FreePort();
  ASSERT_GT(port, 0);
  ChildProcess ksched({KSCHED_BINARY, "--config=" + config_path, "--kubeconfig=" + cp.ksched_kubeconfig(),
                       "--leader-elect=false", "--bind-address=127.0.0.1", "--secure-port=" + std::to_string(port),
                       "-v=2"},
                      cp.dir() + "/metrics-ksched.log",
                      {.print_log_if = [] { return ::testing::Test::HasFailure(); }});
  ASSERT_TRUE(ksched.Started());

  auto anonymous = KschedClient(port, "");
  auto authorized = KschedClient(port, "admintoken");
  auto unprivileged = KschedClient(port, "kschedtoken");
  // /healthz is anonymous and says "ok" once ksched serves.
  std::string healthz;
  ASSERT_TRUE(Eventually(
      [&] {
        auto r = anonymous->Do({.path = "/healthz", .max_retries = 0});
        if (r.ok()) healthz = r->body;
        return r.ok() || !ksched.Running();
      },
      20s, 100ms));
  ASSERT_TRUE(ksched.Running()) << "ksched exited";
  EXPECT_EQ(healthz, "ok");
  ASSERT_TRUE(Eventually([&] { return anonymous->Do({.path = "/readyz", .max_retries = 0}).ok(); }, 20s, 100ms));

  for (int i = 0; i < 5; ++i) Post(*admin, "/api/v1/namespaces/metrics/pods", PodBody("fits-" + std::to_string(i), "500m"));
  Post(*admin, "/api/v1/namespaces/metrics/pods", PodBody("fits-nowhere", "100"));
  ASSERT_TRUE(Eventually(
      [&] {
        auto r = admin->Do({.path = "/api/v1/namespaces/metrics/pods"});
        if (!r.ok()) return false;
        auto list = api::DecodePodList(r->body);
        if (!list.ok()) return false;
        int bound = 0;
        bool rejected = false;
        for (const auto& p : list->items) {
          if (p->IsAssigned()) ++bound;
          const api::PodCondition* cond = p->FindCondition("PodScheduled");
          if (p->metadata.name == "fits-nowhere" && cond && cond->status == "False") rejected = true;
        }
        return bound == 5 && rejected;
      },
      20s, 100ms));

  // Not anonymous, and not for a caller RBAC does not allow to get /metrics.
  auto denied = anonymous->Do({.path = "/metrics", .max_retries = 0});
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.status().code(), StatusCode::kUnauthenticated) << denied.status().ToString();
  denied = unprivileged->Do({.path = "/metrics", .max_retries = 0});
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.status().code(), StatusCode::kPermissionDenied) << denied.status().ToString();
  denied = anonymous->Do({.path = "/configz", .max_retries = 0});
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.status().code(), StatusCode::kUnauthenticated) << denied.status().ToString();

  const std::string attempt = R"(scheduler_scheduling_attempt_duration_seconds_bucket{profile="ksched",result="scheduled",le=")";
  std::vector<Expectation> want = {
      Eq(R"(scheduler_schedule_attempts_total{profile="ksched",result="scheduled"})", 5),
      Ge(R"(scheduler_schedule_attempts_total{profile="ksched",result="unschedulable"})", 1),
      Eq(R"(scheduler_pending_pods{queue="unschedulable"})", 1),
      Eq(R"(scheduler_pending_pods{queue="active"})", 0),
      Eq(R"(scheduler_unschedulable_pods{plugin="NodeResourcesFit",profile="ksched"})", 1),
      Eq("scheduler_pod_scheduling_attempts_count", 5),
      Eq(R"(scheduler_pod_scheduling_attempts_bucket{le="1"})", 5),
      Eq(R"(scheduler_cache_size{type="nodes"})", 2),
      Eq(R"(scheduler_cache_size{type="pods"})", 5),
      Eq(R"(scheduler_cache_size{type="assumed_pods"})", 0),
      Eq(R"(scheduler_scheduling_attempt_duration_seconds_count{profile="ksched",result="scheduled"})", 5),
      Eq(attempt + R"(+Inf"})", 5),
      // Per extension point, as upstream: Filter runs per node and is timed only by the
      // sampled scheduler_plugin_execution_duration_seconds, so it has no sample here.
      Ge(R"(scheduler_framework_extension_point_duration_seconds_count{extension_point="PreFilter",profile="ksched",status="Success"})", 5),
      Eq(R"(scheduler_framework_extension_point_duration_seconds_count{extension_point="Bind",profile="ksched",status="Success"})", 5),
      Eq(R"(scheduler_framework_extension_point_duration_seconds_bucket{extension_point="Bind",profile="ksched",status="Success",le="+Inf"})", 5),
      Ge(R"(scheduler_queue_incoming_pods_total{event="PodAdd",queue="active"})", 6),
      Eq(R"(ksched_stuck_pods{profile="ksched"})", 0),
  };
  // Upstream's buckets for the attempt duration: ExponentialBuckets(0.001, 2, 15).
  for (const char* le : {"0.001", "0.002", "0.004", "0.008", "0.016", "0.032", "0.064", "0.128", "0.256", "0.512",
                         "1.024", "2.048", "4.096", "8.192", "16.384"}) {
    want.push_back(Ge(attempt + le + "\"}", 0));
  }
  // The counts settle once the sixth pod is back in unschedulablePods.
  std::string text;
  std::vector<std::string> unmet;
  Eventually(
      [&] {
        auto r = authorized->Do({.path = "/metrics", .max_retries = 0});
        if (!r.ok()) {
          unmet = {"/metrics: " + r.status().ToString()};
          return false;
        }
        text = r->body;
        unmet = Unmet(Samples(text), want);
        return unmet.empty();
      },
      10s, 200ms);
  for (const std::string& u : unmet) ADD_FAILURE() << u;
  EXPECT_NE(text.find("# TYPE scheduler_unschedulable_pods gauge"), std::string::npos);
  EXPECT_NE(text.find("# TYPE scheduler_scheduling_attempt_duration_seconds histogram"), std::string::npos);
  if (HasFailure()) std::fprintf(stderr, "---- /metrics ----\n%s\n", text.c_str());

  // /configz: the effective configuration as JSON.
  auto configz = authorized->Do({.path = "/configz", .max_retries = 0});
  ASSERT_TRUE(configz.ok()) << configz.status().ToString();
  simdjson::padded_string json(configz->body);
  simdjson::ondemand::parser parser;
  auto doc = parser.iterate(json);
  simdjson::ondemand::object cc;
  ASSERT_EQ(doc["componentconfig"].get_object().get(cc), simdjson::SUCCESS) << configz->body;
  EXPECT_NE(configz->body.find(R"("schedulerName":"ksched")"), std::string::npos) << configz->body;
  bool leader_elect = true;
  ASSERT_EQ(cc["leaderElection"]["leaderElect"].get(leader_elect), simdjson::SUCCESS) << configz->body;
  EXPECT_FALSE(leader_elect);  // --leader-elect=false is reflected

  // /debug/pods: the same authorization as /metrics.
  denied = anonymous->Do({.path = "/debug/pods", .max_retries = 0});
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.status().code(), StatusCode::kUnauthenticated) << denied.status().ToString();
  denied = unprivileged->Do({.path = "/debug/pods/metrics/fits-nowhere", .max_retries = 0});
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.status().code(), StatusCode::kPermissionDenied) << denied.status().ToString();

  auto list = authorized->Do({.path = "/debug/pods", .max_retries = 0});
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  simdjson::dom::parser dom;
  simdjson::dom::element pods;
  ASSERT_EQ(dom.parse(list->body).get(pods), simdjson::SUCCESS) << list->body;
  ASSERT_EQ(simdjson::dom::array(pods["pods"]).size(), 1u) << list->body;
  EXPECT_EQ(std::string_view(pods["pods"].at(0)["name"]), "fits-nowhere");
  EXPECT_EQ(std::string_view(pods["pods"].at(0)["queue"]), "unschedulablePods");
  // Upstream's message, double full stop included (its FitError appends "." after the
  // PostFilter message, which ends with one).
  EXPECT_EQ(std::string_view(pods["pods"].at(0)["reason"]),
            "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 No preemption "
            "victims found for incoming pod..");

  auto one = authorized->Do({.path = "/debug/pods/metrics/fits-nowhere", .max_retries = 0});
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  simdjson::dom::element pod;
  ASSERT_EQ(dom.parse(one->body).get(pod), simdjson::SUCCESS) << one->body;
  EXPECT_EQ(std::string_view(pod["status"]), "Pending");
  auto fit = pod["lastFailure"]["plugins"].at(0);
  EXPECT_EQ(std::string_view(fit["plugin"]), "NodeResourcesFit") << one->body;
  EXPECT_EQ(int64_t(fit["nodes"]), 2);
  EXPECT_EQ(std::string_view(fit["reasons"].at(0)["reason"]), "Insufficient cpu");
  EXPECT_EQ(simdjson::dom::array(fit["reasons"].at(0)["sampleNodes"]).size(), 2u);
  EXPECT_EQ(simdjson::dom::array(pod["lastFailure"]["closestNodes"]).size(), 2u) << one->body;
  EXPECT_GE(simdjson::dom::array(pod["wakeUpEvents"]).size(), 1u) << one->body;

  auto scheduled = authorized->Do({.path = "/debug/pods/metrics/fits-0", .max_retries = 0});
  ASSERT_TRUE(scheduled.ok()) << scheduled.status().ToString();
  ASSERT_EQ(dom.parse(scheduled->body).get(pod), simdjson::SUCCESS) << scheduled->body;
  EXPECT_EQ(std::string_view(pod["status"]), "Scheduled");
  EXPECT_EQ(int64_t(pod["scheduled"]["feasibleNodes"]), 2);
  EXPECT_EQ(simdjson::dom::array(pod["scheduled"]["topNodes"]).size(), 2u) << scheduled->body;

  auto unknown = authorized->Do({.path = "/debug/pods/metrics/no-such-pod", .max_retries = 0});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), StatusCode::kNotFound) << unknown.status().ToString();

  // `ksched explain`, as an operator runs it: a token file and the self-signed cert.
  const std::string token_file = cp.dir() + "/explain-token";
  std::ofstream(token_file) << "admintoken\n";
  const std::string explain = std::string(KSCHED_BINARY) + " explain --server https://127.0.0.1:" +
                              std::to_string(port) + " --insecure-skip-tls-verify --token-file " + token_file;
  auto text_out = RunCommand(explain + " metrics/fits-nowhere 2>&1");
  ASSERT_TRUE(text_out.ok()) << text_out.status().ToString();
  EXPECT_NE(text_out->find("NodeResourcesFit"), std::string::npos) << *text_out;
  EXPECT_NE(text_out->find("Insufficient cpu"), std::string::npos) << *text_out;
  EXPECT_NE(text_out->find("metrics-node-a"), std::string::npos) << *text_out;
  auto list_out = RunCommand(explain + " 2>&1");
  ASSERT_TRUE(list_out.ok()) << list_out.status().ToString();
  EXPECT_NE(list_out->find("metrics/fits-nowhere"), std::string::npos) << *list_out;
  auto json_out = RunCommand(explain + " -o json metrics/fits-0");
  ASSERT_TRUE(json_out.ok()) << json_out.status().ToString();
  EXPECT_NE(json_out->find(R"("status":"Scheduled")"), std::string::npos) << *json_out;
  // Refused for a token RBAC does not allow: exit 1 and the reason.
  auto forbidden = RunCommand(std::string(KSCHED_BINARY) + " explain --server https://127.0.0.1:" +
                              std::to_string(port) + " --insecure-skip-tls-verify --token kschedtoken " +
                              "metrics/fits-nowhere 2>&1");
  ASSERT_FALSE(forbidden.ok());
  EXPECT_NE(forbidden.status().message().find("status 1"), std::string::npos) << forbidden.status().ToString();

  // A node it fits on joins: the pod is scheduled there and explain says why.
  Post(*admin, "/api/v1/nodes",
       api::EncodeNode(ksched::testing::TestNode("metrics-node-big", *api::Quantity::Parse("128"),
                                                 *api::Quantity::Parse("16Gi"))));
  std::string after;
  EXPECT_TRUE(Eventually(
      [&] {
        auto r = RunCommand(explain + " metrics/fits-nowhere 2>&1");
        after = r.ok() ? *r : r.status().ToString();
        return after.find("Scheduled to metrics-node-big") != std::string::npos;
      },
      20s, 200ms))
      << after;

  // A graceful stop exits 0.
  int status = ksched.Stop();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
}

}  // namespace
}  // namespace ksched::testing
