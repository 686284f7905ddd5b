#include "pkg/client/rest_config.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace ksched::client {
namespace {

using namespace std::chrono_literals;

class RestConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ksched-restcfg-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    auto p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  std::filesystem::path dir_;
};

constexpr char kKubeconfig[] = R"(apiVersion: v1
kind: Config
clusters:
- name: a
  cluster:
    server: https://10.0.0.1:6443/
    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==
- name: b
  cluster:
    server: https://[fd00::1]:443
    certificate-authority: ca.crt
    insecure-skip-tls-verify: false
users:
- name: tok
  user:
    token: abc
- name: file
  user:
    tokenFile: token
contexts:
- name: one
  context: {cluster: a, user: tok}
- name: two
  context: {cluster: b, user: file}
current-context: one
)";

TEST_F(RestConfigTest, CurrentContextAndInlineData) {
  auto cfg = LoadKubeconfig(Write("kc", kKubeconfig));
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  EXPECT_EQ(cfg->server, "https://10.0.0.1:6443");  // trailing slash dropped
  EXPECT_EQ(cfg->ca_pem, "-----BEGIN CERTIFICATE-----\n");
  EXPECT_EQ(cfg->bearer_token, "abc");
}

TEST_F(RestConfigTest, NamedContextWithRelativeFilesAndMasterOverride) {
  Write("ca.crt", "PEM");
  Write("token", "t1\n");
  auto kc = Write("kc", kKubeconfig);
  auto cfg = LoadKubeconfig(kc, "two");
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  EXPECT_EQ(cfg->server, "https://[fd00::1]:443");
  EXPECT_EQ(cfg->ca_pem, "PEM");
  EXPECT_EQ(cfg->token_file, (dir_ / "token").string());
  auto m = LoadKubeconfig(kc, "two", "https://127.0.0.1:1");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->server, "https://127.0.0.1:1");
}

TEST_F(RestConfigTest, ErrorsNameWhatIsWrong) {
  struct Case { std::string text; std::string want; } cases[] = {
      {"- a\n- b\n", "not a map"},
      {"clusters: []\ncontexts: []\n", "no current-context"},
      {"current-context: x\ncontexts: []\n", "contexts: no entry named \"x\""},
      {"current-context: x\ncontexts: [{name: x, context: {cluster: c}}]\n", "clusters: no entry named \"c\""},
      {"current-context: x\ncontexts: [{name: x, context: {cluster: c}}]\nclusters: [{name: c, cluster: {}}]\n",
       "cluster has no server"},
      {"current-context: x\ncontexts: [{name: x, context: {cluster: c}}]\n"
       "clusters: [{name: c, cluster: {server: 'https://h', certificate-authority-data: '%%%'}}]\n",
       "certificate-authority-data: invalid base64"},
      {"current-context: x\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n"
       "clusters: [{name: c, cluster: {server: 'https://h'}}]\nusers: [{name: u, user: {client-key-data: QQ==}}]\n",
       "without a key, or a key without a certificate"},
      {"{{{", "kubeconfig"},
  };
  for (const auto& c : cases) {
    auto cfg = LoadKubeconfig(Write("kc", c.text));
    ASSERT_FALSE(cfg.ok()) << c.text;
    EXPECT_NE(cfg.status().message().find(c.want), std::string::npos) << cfg.status().message();
  }
  auto missing = LoadKubeconfig((dir_ / "nope").string());
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("nope"), std::string::npos);
}

TEST_F(RestConfigTest, InClusterConfigUsesServiceEnvAndBracketsIpv6) {
  Write("token", "sa-token\n");
  Write("ca.crt", "CA");
  ::setenv("KUBERNETES_SERVICE_HOST", "fd00::10", 1);
  ::setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  auto cfg = InClusterConfig(dir_.string());
  ::unsetenv("KUBERNETES_SERVICE_HOST");
  ::unsetenv("KUBERNETES_SERVICE_PORT");
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  EXPECT_EQ(cfg->server, "https://[fd00::10]:443");
  EXPECT_EQ(cfg->ca_pem, "CA");
  FakeClock clock;
  TokenSource tokens(*cfg, clock);
  EXPECT_EQ(tokens.Token(), "sa-token");
  auto not_in_cluster = InClusterConfig(dir_.string());
  ASSERT_FALSE(not_in_cluster.ok());
  EXPECT_NE(not_in_cluster.status().message().find("KUBERNETES_SERVICE_HOST"), std::string::npos);
}

TEST_F(RestConfigTest, TokenFileIsReReadAfterAMinuteOrAfterInvalidate) {
  RestConfig cfg;
  cfg.token_file = Write("token", "one");
  FakeClock clock;
  TokenSource tokens(cfg, clock);
  EXPECT_EQ(tokens.Token(), "one");
  Write("token", "two");
  clock.Advance(59s);
  EXPECT_EQ(tokens.Token(), "one");  // cached within the minute
  clock.Advance(1s);
  EXPECT_EQ(tokens.Token(), "two");
  Write("token", "three");
  tokens.Invalidate();  // as after a 401
  EXPECT_EQ(tokens.Token(), "three");
  std::filesystem::remove(dir_ / "token");
  tokens.Invalidate();
  EXPECT_EQ(tokens.Token(), "three");  // a missing file keeps the last good token
}

TEST_F(RestConfigTest, ParseKubeconfigResolvesFilesAgainstDir) {
  Write("ca.crt", "PEM");
  Write("token", "t1\n");
  auto cfg = ParseKubeconfig(kKubeconfig, dir_.string(), "two");
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  EXPECT_EQ(cfg->ca_pem, "PEM");
  EXPECT_EQ(cfg->token_file, (dir_ / "token").string());
  auto bad = ParseKubeconfig("- a\n", dir_.string());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "kubeconfig: not a map");
}

// A file that reports size 0 but never ends (/proc files, as a kubeconfig's CA path) is
// read only up to the 16 MiB limit, then refused.
TEST_F(RestConfigTest, FilesReportingSizeZeroAreStillBounded) {
  const char* endless = "/proc/self/pagemap";  // 8 bytes per page of address space: gigabytes
  if (::access(endless, R_OK) != 0) GTEST_SKIP() << endless << " is not readable here";
  std::string text = kKubeconfig;
  text.replace(text.find("ca.crt"), 6, endless);
  auto cfg = ParseKubeconfig(text, dir_.string(), "two");
  ASSERT_FALSE(cfg.ok());
  EXPECT_NE(cfg.status().message().find("too large"), std::string::npos) << cfg.status().ToString();
}

TEST(Base64Test, RoundTripsAndIgnoresWhitespace) {
  for (std::string_view s : {"", "A", "AB", "ABC", "ABCD", "\0\xff\x10"}) {
    auto decoded = Base64Decode(Base64Encode(s));
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
    EXPECT_EQ(*decoded, s);
  }
  EXPECT_EQ(Base64Decode(" QU\nJD\r\n").value(), "ABC");
  EXPECT_EQ(Base64Decode("QQ==").value(), "A");
  EXPECT_EQ(Base64Decode("QUI=").value(), "AB");
}

// Found by tests/fuzz/fuzz_base64: OpenSSL's EVP_DecodeBlock, used before, reads '='
// anywhere as zero bits and drops trailing '-', so these decoded; Go's
// base64.StdEncoding rejects them.
TEST(Base64Test, RejectsWhatGoRejects) {
  for (std::string_view s : {"====", "=IUQ", "Q===", "QQ=A", "QQ==QUJD", "QUJD=QUJ", "QUND----", "QUND\r--\r--",
                             "QQ", "QUI", "QQ=", "QUJD===="}) {
    auto decoded = Base64Decode(s, "certificate-authority-data");
    ASSERT_FALSE(decoded.ok()) << s;
    EXPECT_EQ(decoded.status().message().rfind("certificate-authority-data: invalid base64 data", 0), 0u)
        << decoded.status().message();
  }
  EXPECT_FALSE(Base64Decode("QUJ").ok());   // not a whole quantum
  EXPECT_FALSE(Base64Decode("QU*D").ok());  // not in the alphabet
  EXPECT_FALSE(Base64Decode("QUJ-").ok());  // base64url is not accepted
  // Unused low bits of the last symbol are ignored, as by Go's non-strict decoding.
  EXPECT_EQ(Base64Decode("QR==").value(), "A");
  EXPECT_EQ(Base64Decode("QUJ=\n").value(), "AB");
}

// An unusable server URL is an error at start, naming the URL and what is wrong.
TEST(ServerUrlTest, ParsesOrNamesTheProblem) {
  EXPECT_EQ(*NormalizeServerUrl("https://10.0.0.1:6443"), "https://10.0.0.1:6443");
  EXPECT_EQ(*NormalizeServerUrl("https://[::1]:6443/prefix"), "https://[::1]:6443/prefix");
  EXPECT_EQ(*NormalizeServerUrl("api.example:443"), "https://api.example:443");
  EXPECT_EQ(*NormalizeServerUrl("http://localhost"), "http://localhost");
  const std::pair<std::string, std::string> bad[] = {
      {"htps://host:6443", "scheme must be https or http"},
      {"https://host:0", "port must be a number from 1 to 65535"},
      {"https://host:65536", "port must be a number from 1 to 65535"},
      {"https://host:64x3", "port must be a number from 1 to 65535"},
      {"https://host:", "empty port"},
      {"https://:6443", "no host"},
      {"https://ho st:6443", "whitespace"},
      {"https://h$st", "invalid character in the host"},
      {"https://[::1:6443", "unterminated IPv6 address"},
      {"https://::1:6443", "an IPv6 address must be in brackets"},
      {"https://user@host", "user information"},
  };
  for (const auto& [url, why] : bad) {
    auto got = NormalizeServerUrl(url);
    ASSERT_FALSE(got.ok()) << url;
    EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument) << url;
    EXPECT_NE(got.status().message().find(why), std::string::npos) << url << ": " << got.status().message();
    EXPECT_NE(got.status().message().find("\"" + url + "\""), std::string::npos) << got.status().message();
  }
}

}  // namespace
}  // namespace ksched::client
