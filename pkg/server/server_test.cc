// The secure server end to end over TLS with libcurl: anonymous health paths, /readyz
// following its callback, and the 401/403/200 ladder on /metrics. (The limits a hostile
// client meets: server_limits_test.cc.)
#include "pkg/server/server.h"

#include <curl/curl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "pkg/metrics/metrics.h"
#include "pkg/server/handler.h"
#include "tests/fakes/fake_authorizer.h"

namespace ksched::server {
namespace {

// A port nothing listens on (for tests that must know it before Start()).
int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

struct CurlResult {
  long code = 0;
  std::string body;
  std::string content_type;
};

size_t Append(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

// Pins the server's own certificate as the only CA, so the TLS verification (including
// the 127.0.0.1 SAN) is exercised rather than switched off.
CurlResult Get(int port, const std::string& path, const std::string& cert_pem, const std::string& token = "") {
  CURL* curl = curl_easy_init();
  CurlResult result;
  const std::string url = "https://127.0.0.1:" + std::to_string(port) + path;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_blob ca{const_cast<char*>(cert_pem.data()), cert_pem.size(), CURL_BLOB_COPY};
  curl_easy_setopt(curl, CURLOPT_CAINFO_BLOB, &ca);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, Append);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &result.body);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT, 10L);
  curl_slist* headers = nullptr;
  if (!token.empty()) {
    headers = curl_slist_append(headers, ("Authorization: Bearer " + token).c_str());
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  }
  CURLcode rc = curl_easy_perform(curl);
  EXPECT_EQ(rc, CURLE_OK) << curl_easy_strerror(rc);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &result.code);
  char* ct = nullptr;
  curl_easy_getinfo(curl, CURLINFO_CONTENT_TYPE, &ct);
  if (ct != nullptr) result.content_type = ct;
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  return result;
}

// The ladder the tests expect: "allowed" may get /metrics; "broken" cannot be checked
// (the apiserver is down); "unknown" is not a valid token; anything else is denied.
StatusOr<bool> Decide(const std::string& token, const std::string& path, const std::string& verb) {
  EXPECT_EQ(verb, "get");
  if (token == "broken") return Unavailable("apiserver down");
  if (token == "unknown") return Status(StatusCode::kUnauthenticated, "Unauthorized");
  return token == "allowed" && path == "/metrics";
}

class ServerTest : public ::testing::Test {
 protected:
  void StartServer(ServerOptions options) {
    options.bind_address = "127.0.0.1";
    options.secure_port = 0;
    options.authorizer = &authz_;
    options.ready = [this] { return ready_ ? Status::OK() : Unavailable("handlers are not fully synchronized"); };
    options.metrics = [] { return std::string("scheduler_pending_pods{queue=\"active\"} 0\n"); };
    options.configz = [] { return std::string(R"({"componentconfig":{}})"); };
    server_ = std::make_unique<Server>(std::move(options));
    Status s = server_->Start();
    ASSERT_TRUE(s.ok()) << s.message();
    port_ = server_->port();
    ASSERT_GT(port_, 0);
  }

  ksched::testing::FakeAuthorizer authz_{Decide};
  std::atomic<bool> ready_{false};
  int port_ = 0;
  std::unique_ptr<Server> server_;
};

TEST_F(ServerTest, EndpointsAndAuthorization) {
  StartServer({});
  const std::string& pem = server_->cert_pem();

  for (const char* path : {"/healthz", "/livez"}) {
    CurlResult r = Get(port_, path, pem);
    EXPECT_EQ(r.code, 200) << path;
    EXPECT_EQ(r.body, "ok") << path;
  }
  CurlResult ready = Get(port_, "/readyz", pem);
  EXPECT_EQ(ready.code, 500);
  EXPECT_NE(ready.body.find("handlers are not fully synchronized"), std::string::npos) << ready.body;
  ready_ = true;
  ready = Get(port_, "/readyz", pem);
  EXPECT_EQ(ready.code, 200);
  EXPECT_EQ(ready.body, "ok");
  EXPECT_EQ(authz_.calls, 0) << "health paths must not consult the authorizer";

  struct Case {
    std::string path, token;
    long code;
  };
  for (const Case& c : std::vector<Case>{{"/metrics", "", 401},
                                         {"/metrics", "denied", 403},
                                         {"/metrics", "unknown", 401},
                                         {"/metrics", "broken", 500},
                                         {"/configz", "allowed", 403},
                                         {"/nope", "allowed", 403}}) {
    EXPECT_EQ(Get(port_, c.path, pem, c.token).code, c.code) << c.path << " token=" << c.token;
  }
  CurlResult metrics = Get(port_, "/metrics", pem, "allowed");
  EXPECT_EQ(metrics.code, 200);
  EXPECT_EQ(metrics.content_type, "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(metrics.body, "scheduler_pending_pods{queue=\"active\"} 0\n");
}

TEST_F(ServerTest, AnonymousMetricsAndExtraAllowPaths) {
  StartServer({.always_allow_paths = {"/healthz", "/readyz", "/livez", "/configz"}, .anonymous_metrics = true});
  CurlResult metrics = Get(port_, "/metrics", server_->cert_pem());
  EXPECT_EQ(metrics.code, 200);
  CurlResult configz = Get(port_, "/configz", server_->cert_pem());
  EXPECT_EQ(configz.code, 200);
  EXPECT_EQ(configz.body, R"({"componentconfig":{}})");
  EXPECT_EQ(configz.content_type, "application/json");
  EXPECT_EQ(authz_.calls, 0);
}

// The whole path a Prometheus scrape takes: recorder calls -> Metrics -> HTTPS /metrics.
TEST_F(ServerTest, ScrapesRealMetrics) {
  metrics::Metrics m(metrics::MetricsOptions{
      .pending_pods = [] { return queue::PendingPodCounts{.active = 2}; },
      .cache_sizes = [] { return metrics::CacheSizes{.nodes = 3}; }});
  m.ObserveAttempt("scheduled", "default-scheduler", 0.01);
  m.IncomingPod(queue::kActiveQueueName, "PodAdd");
  StartServer({});
  server_->Stop();  // restart with the real metrics callback on the same port
  ServerOptions options;
  options.bind_address = "127.0.0.1";
  options.secure_port = port_;
  options.authorizer = &authz_;
  options.metrics = [&m] { return m.Serialize(); };
  server_ = std::make_unique<Server>(std::move(options));
  ASSERT_TRUE(server_->Start().ok());
  CurlResult r = Get(port_, "/metrics", server_->cert_pem(), "allowed");
  ASSERT_EQ(r.code, 200);
  EXPECT_EQ(r.content_type, metrics::kTextContentType);
  for (const char* line : {
           "scheduler_schedule_attempts_total{profile=\"default-scheduler\",result=\"scheduled\"} 1\n",
           "scheduler_queue_incoming_pods_total{event=\"PodAdd\",queue=\"active\"} 1\n",
           "scheduler_pending_pods{queue=\"active\"} 2\n",
           "scheduler_cache_size{type=\"nodes\"} 3\n",
           "# TYPE scheduler_scheduling_attempt_duration_seconds histogram\n"}) {
    EXPECT_NE(r.body.find(line), std::string::npos) << line;
  }
}

// --tls-min-version=VersionTLS13 refuses a TLS 1.2 client; --tls-cipher-suites limits
// TLS 1.2 to the suites named; a suite list OpenSSL cannot use fails Start.
TEST_F(ServerTest, TlsMinimumVersionAndCipherSuites) {
  auto handshake = [this](long max_version, const char* ciphers) {
    CURL* curl = curl_easy_init();
    const std::string url = "https://127.0.0.1:" + std::to_string(port_) + "/healthz";
    curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 0L);
    curl_easy_setopt(curl, CURLOPT_SSLVERSION, CURL_SSLVERSION_TLSv1_2 | max_version);
    if (ciphers) curl_easy_setopt(curl, CURLOPT_SSL_CIPHER_LIST, ciphers);
    std::string body;
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, Append);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, 10L);
    CURLcode rc = curl_easy_perform(curl);
    curl_easy_cleanup(curl);
    return rc == CURLE_OK && body == "ok";
  };
  StartServer({.tls13_only = true});
  EXPECT_FALSE(handshake(CURL_SSLVERSION_MAX_TLSv1_2, nullptr));
  EXPECT_TRUE(handshake(CURL_SSLVERSION_MAX_TLSv1_3, nullptr));
  server_.reset();

  // The self-signed certificate is ECDSA: ECDHE-ECDSA suites.
  StartServer({.tls12_ciphers = "ECDHE-ECDSA-AES256-GCM-SHA384"});
  EXPECT_TRUE(handshake(CURL_SSLVERSION_MAX_TLSv1_2, "ECDHE-ECDSA-AES256-GCM-SHA384"));
  EXPECT_FALSE(handshake(CURL_SSLVERSION_MAX_TLSv1_2, "ECDHE-ECDSA-AES128-GCM-SHA256"));
  server_.reset();

  Server bad({.bind_address = "127.0.0.1", .secure_port = 0, .tls12_ciphers = "NO-SUCH-CIPHER"});
  Status s = bad.Start();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("NO-SUCH-CIPHER"), std::string::npos) << s.message();
}

TEST_F(ServerTest, StopClosesThePort) {
  StartServer({});
  server_->Stop();
  server_->Stop();  // idempotent
  CURL* curl = curl_easy_init();
  const std::string url = "https://127.0.0.1:" + std::to_string(port_) + "/healthz";
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 0L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT, 5L);
  EXPECT_NE(curl_easy_perform(curl), CURLE_OK);
  curl_easy_cleanup(curl);
}

// Token checks are round trips to the apiserver. A flood of requests with random tokens
// must not take the listener's threads: /healthz stays fast, and past the pending bound
// the flood is answered 429 at once instead of queuing.
TEST(ServerFloodTest, TokenFloodDoesNotStarveHealthz) {
  ksched::testing::FakeAuthorizer slow([](const std::string&, const std::string&, const std::string&) -> StatusOr<bool> {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    return false;
  });
  ServerOptions options;
  options.bind_address = "127.0.0.1";
  options.secure_port = FreePort();
  options.authorizer = &slow;
  options.max_pending_authorizations = 8;
  Server server(options);
  ASSERT_TRUE(server.Start().ok());
  const int port = options.secure_port;
  const std::string cert = server.cert_pem();
  std::vector<std::thread> flood;
  std::atomic<int> too_many{0}, forbidden{0};
  for (int i = 0; i < 60; ++i) {
    flood.emplace_back([&, i] {
      CurlResult r = Get(port, "/metrics", cert, "random-token-" + std::to_string(i));
      if (r.code == 429) ++too_many;
      if (r.code == 403) ++forbidden;
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the flood is in
  const auto start = std::chrono::steady_clock::now();
  CurlResult health = Get(port, "/healthz", cert);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(health.code, 200);
  EXPECT_LT(took, std::chrono::seconds(1));
  for (auto& t : flood) t.join();
  EXPECT_GT(too_many.load(), 0);             // shed past the bound
  EXPECT_EQ(too_many + forbidden, 60);       // every request answered
  server.Stop();
}

TEST(CertTest, SelfSignedCertHasTheSans) {
  auto pair = GenerateSelfSignedCert({"myhost", "10.0.0.7"});
  ASSERT_TRUE(pair.ok()) << pair.status().message();
  BIO* bio = BIO_new_mem_buf(pair->cert_pem.data(), static_cast<int>(pair->cert_pem.size()));
  X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  ASSERT_NE(cert, nullptr);
  EXPECT_EQ(X509_check_host(cert, "localhost", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_host(cert, "myhost", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_ip_asc(cert, "127.0.0.1", 0), 1);
  EXPECT_EQ(X509_check_ip_asc(cert, "10.0.0.7", 0), 1);
  EXPECT_NE(X509_check_host(cert, "other", 0, 0, nullptr), 1);
  X509_free(cert);
  BIO_free(bio);
  EXPECT_NE(pair->key_pem.find("PRIVATE KEY"), std::string::npos);
}

TEST(CertTest, CertDirIsWrittenThenReused) {
  const auto dir = std::filesystem::temp_directory_path() / ("ksched-certdir-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  ServerOptions options;
  options.cert_dir = dir.string();
  auto first = LoadServingCert(options);
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_TRUE(std::filesystem::exists(dir / "ksched.crt"));
  EXPECT_TRUE(std::filesystem::exists(dir / "ksched.key"));
  EXPECT_EQ(std::filesystem::status(dir / "ksched.key").permissions() & std::filesystem::perms::others_read,
            std::filesystem::perms::none);
  auto second = LoadServingCert(options);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(first->cert_pem, second->cert_pem);

  // Explicit files win, and must come in pairs.
  ServerOptions files;
  files.tls_cert_file = (dir / "ksched.crt").string();
  files.tls_private_key_file = (dir / "ksched.key").string();
  auto loaded = LoadServingCert(files);
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(loaded->key_pem, first->key_pem);
  files.tls_private_key_file.clear();
  EXPECT_EQ(LoadServingCert(files).status().code(), StatusCode::kInvalidArgument);
  std::filesystem::remove_all(dir);
}

TEST(CertTest, BadCertificateFailsStart) {
  const auto dir = std::filesystem::temp_directory_path() / ("ksched-badcert-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  {
    std::ofstream(dir / "bad.crt") << "not a certificate";
    std::ofstream(dir / "bad.key") << "not a key";
  }
  ServerOptions options;
  options.bind_address = "127.0.0.1";
  options.secure_port = FreePort();
  options.tls_cert_file = (dir / "bad.crt").string();
  options.tls_private_key_file = (dir / "bad.key").string();
  Server server(options);
  Status s = server.Start();
  EXPECT_FALSE(s.ok());
  options.tls_cert_file = (dir / "missing.crt").string();
  Server missing(options);
  EXPECT_EQ(missing.Start().code(), StatusCode::kNotFound);
  std::filesystem::remove_all(dir);
}

TEST(HandlerTest, AlwaysAllowPathsMatchExactlyOrByPrefix) {
  ServerOptions options;
  options.always_allow_paths = {"/healthz", "/debug/*"};
  EXPECT_TRUE(IsAlwaysAllowed(options, "/healthz"));
  EXPECT_FALSE(IsAlwaysAllowed(options, "/healthz/ping"));
  EXPECT_TRUE(IsAlwaysAllowed(options, "/debug/pprof"));
  EXPECT_FALSE(IsAlwaysAllowed(options, "/metrics"));
  // No authorizer configured: any token is forbidden on protected paths.
  EXPECT_EQ(HandleRequest(options, "GET", "/metrics", "Bearer x").status, 403);
  EXPECT_EQ(HandleRequest(options, "GET", "/metrics", "Basic x").status, 401);
  EXPECT_EQ(HandleRequest(options, "POST", "/healthz", "").status, 405);
}

TEST(HandlerTest, EndpointsServeTheirPrefixBehindAuthorization) {
  ServerOptions options;
  std::vector<std::string> seen;
  options.endpoints.push_back({.prefix = "/debug/pods", .handler = [&](const std::string& path) {
                                 seen.push_back(path);
                                 return HandlerResponse{200, "{}", "application/json"};
                               }});
  options.always_allow_paths = {"/debug/pods", "/debug/pods/*", "/debug/podsx"};
  EXPECT_EQ(HandleRequest(options, "GET", "/debug/pods", "").status, 200);
  EXPECT_EQ(HandleRequest(options, "GET", "/debug/pods/ns/name", "").content_type, "application/json");
  EXPECT_EQ(HandleRequest(options, "GET", "/debug/podsx", "").status, 404) << "a prefix, not a string prefix";
  EXPECT_EQ(seen, (std::vector<std::string>{"/debug/pods", "/debug/pods/ns/name"}));
  // Not always allowed: the token check comes first.
  options.always_allow_paths.clear();
  EXPECT_EQ(HandleRequest(options, "GET", "/debug/pods", "").status, 401);
  EXPECT_EQ(HandleRequest(options, "GET", "/debug/pods", "Bearer x").status, 403);
  EXPECT_EQ(seen.size(), 2u);
}

}  // namespace
}  // namespace ksched::server
