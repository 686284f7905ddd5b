// The REST client against a real kube-apiserver (tests/e2e/control-plane.sh).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "informers/curl_client.h"
#include "informers/rest_config.h"
#include "pkg/api/json.h"
#include "tests/e2e/control_plane.h"

namespace ksched::informers {
namespace {

using ksched::testing::ControlPlane;

ApiClientPtr MustClient(const RestConfig& cfg) {
  auto c = NewCurlApiClient(cfg);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return std::move(*c);
}

RestConfig AdminConfig() {
  auto cfg = LoadKubeconfig(ControlPlane::Get().kubeconfig());
  EXPECT_TRUE(cfg.ok()) << cfg.status().ToString();
  return *cfg;
}

std::string NodeJson(const std::string& name) {
  return R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")" + name +
         R"(","labels":{"kubernetes.io/hostname":")" + name +
         R"("}},"status":{"capacity":{"cpu":"4","memory":"8Gi","pods":"110"},)"
         R"("allocatable":{"cpu":"4","memory":"8Gi","pods":"110"}}})";
}

TEST(ApiClientIntegrationTest, ReadsVersionOverVerifiedTls) {
  auto client = MustClient(AdminConfig());
  auto r = client->Do({.path = "/version"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->http_code, 200);
  EXPECT_NE(r->body.find("\"gitVersion\": \"v1.20.2"), std::string::npos) << r->body;
}

TEST(ApiClientIntegrationTest, CreatesAndListsNodes) {
  auto client = MustClient(AdminConfig());
  for (const char* name : {"it-node-a", "it-node-b"}) {
    auto r = client->Do({.verb = Verb::kPost, .path = "/api/v1/nodes", .body = NodeJson(name)});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->http_code, 201);
  }
  auto r = client->Do({.path = "/api/v1/nodes?labelSelector=kubernetes.io%2Fhostname%20in%20(it-node-a,it-node-b)"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto list = api::DecodeNodeList(r->body);
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  ASSERT_EQ(list->items.size(), 2u);
  EXPECT_FALSE(list->resource_version.empty());
  EXPECT_EQ(list->items[0]->Name(), "it-node-a");
  const api::Quantity* cpu = api::FindResource(list->items[0]->status.allocatable, "cpu");
  ASSERT_NE(cpu, nullptr);
  EXPECT_EQ(cpu->MilliValue(), 4000);

  // Creating it again is a conflict with reason AlreadyExists.
  auto dup = client->Do({.verb = Verb::kPost, .path = "/api/v1/nodes", .body = NodeJson("it-node-a")});
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.status().code(), StatusCode::kAlreadyExists);
  EXPECT_NE(dup.status().message().find("\"it-node-a\" already exists"), std::string::npos);
}

TEST(ApiClientIntegrationTest, NotFoundCarriesReasonAndMessage) {
  auto client = MustClient(AdminConfig());
  auto r = client->Do({.path = "/api/v1/namespaces/default/pods/does-not-exist"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(r.status().message(), "pods \"does-not-exist\" not found");
}

TEST(ApiClientIntegrationTest, RejectsServerSignedByAnotherCa) {
  RestConfig cfg = AdminConfig();
  // A freshly made CA that did not sign the apiserver's certificate.
  std::string dir = ControlPlane::Get().dir() + "/other-ca";
  std::filesystem::create_directories(dir);
  auto made = ksched::testing::RunCommand("openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=other -keyout " +
                                          dir + "/ca.key -out " + dir + "/ca.crt 2>/dev/null");
  ASSERT_TRUE(made.ok());
  std::ifstream in(dir + "/ca.crt");
  cfg.ca_pem.assign(std::istreambuf_iterator<char>(in), {});
  auto client = MustClient(cfg);
  auto r = client->Do({.path = "/version", .max_retries = 0});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find("TLS"), std::string::npos) << r.status().ToString();
}

TEST(ApiClientIntegrationTest, WrongTokenIsUnauthorized) {
  RestConfig cfg = AdminConfig();
  cfg.bearer_token = "not-a-token";
  auto client = MustClient(cfg);
  auto r = client->Do({.path = "/api/v1/nodes"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnauthenticated);
}

TEST(ApiClientIntegrationTest, ClientCertificateAuthenticates) {
  RestConfig cfg = AdminConfig();
  cfg.bearer_token.clear();
  const auto& dir = ControlPlane::Get().dir();
  std::ifstream c(dir + "/admin.crt"), k(dir + "/admin.key");
  cfg.client_cert_pem.assign(std::istreambuf_iterator<char>(c), {});
  cfg.client_key_pem.assign(std::istreambuf_iterator<char>(k), {});
  auto client = MustClient(cfg);
  auto r = client->Do({.path = "/api/v1/nodes?limit=1"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
}

TEST(ApiClientIntegrationTest, ManyConcurrentRequestsAllComplete) {
  auto client = MustClient(AdminConfig());
  constexpr int kRequests = 200;
  std::atomic<int> ok{0}, done{0};
  std::mutex mu;
  std::condition_variable cv;
  for (int i = 0; i < kRequests; ++i) {
    client->Send({.path = "/api/v1/nodes?limit=1"}, [&](StatusOr<Response> r) {
      if (r.ok()) ++ok;
      std::lock_guard l(mu);
      ++done;
      cv.notify_all();
    });
  }
  std::unique_lock l(mu);
  ASSERT_TRUE(cv.wait_for(l, std::chrono::seconds(60), [&] { return done == kRequests; }));
  EXPECT_EQ(ok.load(), kRequests);
}

}  // namespace
}  // namespace ksched::informers
