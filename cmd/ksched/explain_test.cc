// `ksched explain` flags, credentials, and the whole command against a local HTTPS
// responder (the real /debug/pods endpoints are tested with the scheduler).
#include "cmd/ksched/explain.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "pkg/server/server.h"

namespace ksched::cmd {
namespace {

StatusOr<ExplainOptions> Parse(std::vector<std::string> args) {
  std::vector<char*> argv{const_cast<char*>("explain")};
  for (auto& a : args) argv.push_back(a.data());
  return ParseExplainFlags(static_cast<int>(argv.size()), argv.data());
}

TEST(ExplainFlagsTest, Defaults) {
  auto o = Parse({});
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o->pod_namespace, "");
  EXPECT_EQ(o->pod_name, "");  // list the pending pods
  EXPECT_EQ(o->server, "https://127.0.0.1:10259");
  EXPECT_EQ(o->output, ExplainOutput::kText);
  EXPECT_EQ(o->request_timeout, std::chrono::seconds(10));
  EXPECT_FALSE(o->insecure_skip_tls_verify);
  EXPECT_FALSE(o->help);
}

TEST(ExplainFlagsTest, EveryFlagInBothSpellings) {
  struct Case {
    std::vector<std::string> args;
    std::function<void(const ExplainOptions&)> check;
  } cases[] = {
      {{"--server=https://ksched:1/"}, [](auto& o) { EXPECT_EQ(o.server, "https://ksched:1"); }},
      {{"--server", "http://10.0.0.1:10259"}, [](auto& o) { EXPECT_EQ(o.server, "http://10.0.0.1:10259"); }},
      {{"--token=abc"}, [](auto& o) { EXPECT_EQ(o.token, "abc"); }},
      {{"--token", "abc"}, [](auto& o) { EXPECT_EQ(o.token, "abc"); }},
      {{"--token-file=/t"}, [](auto& o) { EXPECT_EQ(o.token_file, "/t"); }},
      {{"--token-file", "/t"}, [](auto& o) { EXPECT_EQ(o.token_file, "/t"); }},
      {{"--kubeconfig=/kc"}, [](auto& o) { EXPECT_EQ(o.kubeconfig, "/kc"); }},
      {{"--kubeconfig", "/kc"}, [](auto& o) { EXPECT_EQ(o.kubeconfig, "/kc"); }},
      {{"--certificate-authority=/ca"}, [](auto& o) { EXPECT_EQ(o.certificate_authority, "/ca"); }},
      {{"--certificate-authority", "/ca"}, [](auto& o) { EXPECT_EQ(o.certificate_authority, "/ca"); }},
      {{"--insecure-skip-tls-verify"}, [](auto& o) { EXPECT_TRUE(o.insecure_skip_tls_verify); }},
      {{"--insecure-skip-tls-verify=true"}, [](auto& o) { EXPECT_TRUE(o.insecure_skip_tls_verify); }},
      {{"--insecure-skip-tls-verify=false"}, [](auto& o) { EXPECT_FALSE(o.insecure_skip_tls_verify); }},
      {{"-o", "json"}, [](auto& o) { EXPECT_EQ(o.output, ExplainOutput::kJson); }},
      {{"-o=json"}, [](auto& o) { EXPECT_EQ(o.output, ExplainOutput::kJson); }},
      {{"-ojson"}, [](auto& o) { EXPECT_EQ(o.output, ExplainOutput::kJson); }},
      {{"--output", "json"}, [](auto& o) { EXPECT_EQ(o.output, ExplainOutput::kJson); }},
      {{"--output=json", "-o", "text"}, [](auto& o) { EXPECT_EQ(o.output, ExplainOutput::kText); }},
      {{"--request-timeout=1m30s"}, [](auto& o) { EXPECT_EQ(o.request_timeout, std::chrono::seconds(90)); }},
      {{"--request-timeout", "0"}, [](auto& o) { EXPECT_EQ(o.request_timeout.count(), 0); }},
      {{"-h"}, [](auto& o) { EXPECT_TRUE(o.help); }},
      {{"--help"}, [](auto& o) { EXPECT_TRUE(o.help); }},
      {{"kube-system/big"},
       [](auto& o) {
         EXPECT_EQ(o.pod_namespace, "kube-system");
         EXPECT_EQ(o.pod_name, "big");
       }},
      {{"--token", "t", "big", "-o", "json"},
       [](auto& o) {
         EXPECT_EQ(o.pod_namespace, "default");
         EXPECT_EQ(o.pod_name, "big");
         EXPECT_EQ(o.output, ExplainOutput::kJson);
       }},
  };
  for (const auto& c : cases) {
    auto o = Parse(c.args);
    ASSERT_TRUE(o.ok()) << c.args[0] << ": " << o.status().message();
    c.check(*o);
  }
}

TEST(ExplainFlagsTest, ErrorsNameTheFlagOrArgument) {
  struct Case {
    std::vector<std::string> args;
    std::string want;
  } cases[] = {
      {{"--bogus"}, "unknown flag: --bogus"},
      {{"-x"}, "unknown shorthand flag: \"-x\""},
      {{"--server"}, "flag needs an argument: --server"},
      {{"-o"}, "flag needs an argument: -o, --output"},
      {{"-o", "yaml"}, "invalid argument \"yaml\" for \"-o, --output\" flag: must be json or text"},
      {{"--server=127.0.0.1:10259"}, "for \"--server\" flag: want https://host:port"},
      {{"--request-timeout=10"}, "invalid argument \"10\" for \"--request-timeout\" flag"},
      {{"--request-timeout=-1s"}, "for \"--request-timeout\" flag: must not be negative"},
      {{"--insecure-skip-tls-verify=maybe"}, "for \"--insecure-skip-tls-verify\" flag"},
      {{"--token="}, "for \"--token\" flag: must not be empty"},
      {{"a/b", "c/d"}, "unexpected argument \"c/d\": explain takes at most one NAMESPACE/NAME"},
      {{"a/b/c"}, "invalid pod \"a/b/c\": want NAMESPACE/NAME"},
      {{"/name"}, "invalid pod \"/name\""},
      {{"ns/"}, "invalid pod \"ns/\""},
      {{"--insecure-skip-tls-verify", "--certificate-authority=/ca"},
       "--certificate-authority and --insecure-skip-tls-verify cannot be used together"},
  };
  for (const auto& c : cases) {
    auto o = Parse(c.args);
    ASSERT_FALSE(o.ok()) << c.args[0];
    EXPECT_EQ(o.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(o.status().message().find(c.want), std::string::npos) << o.status().message();
  }
}

TEST(ExplainFlagsTest, UsageListsEveryFlag) {
  std::string u = ExplainUsage();
  for (const char* flag : {"--server string", "--token string", "--token-file string", "--kubeconfig string",
                           "--certificate-authority string", "--insecure-skip-tls-verify", "-o, --output string",
                           "--request-timeout duration", "-h, --help", "ksched explain [NAMESPACE/NAME]"})
    EXPECT_NE(u.find(flag), std::string::npos) << flag;
}

// A temporary directory, removed with its files.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "explain_test.XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }
  std::string Write(const std::string& name, const std::string& content) const {
    std::string p = path_ + "/" + name;
    std::ofstream(p) << content;
    return p;
  }

 private:
  std::string path_;
};

std::string Kubeconfig(const std::string& user) {
  return "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
         "contexts:\n- name: c\n  context: {cluster: k, user: u}\n"
         "clusters:\n- name: k\n  cluster: {server: https://10.0.0.1:6443}\n"
         "users:\n- name: u\n  user: " + user + "\n";
}

TEST(ExplainTokenTest, FromFlagsAndKubeconfig) {
  TempDir dir;
  const std::string token_file = dir.Write("token", "from-file\n");
  dir.Write("kc-token-file", "from-kubeconfig-file\n");
  const std::string kc_token = dir.Write("kc1", Kubeconfig("{token: from-kubeconfig}"));
  // A relative tokenFile is relative to the kubeconfig.
  const std::string kc_file = dir.Write("kc2", Kubeconfig("{tokenFile: kc-token-file}"));
  const std::string kc_certs = dir.Write("kc3", Kubeconfig("{username: admin, password: secret}"));

  auto token = [](ExplainOptions o) {
    auto t = LoadExplainToken(o);
    return t.ok() ? *t : "error: " + t.status().message();
  };
  EXPECT_EQ(token({}), "");
  EXPECT_EQ(token({.token = "literal"}), "literal");
  EXPECT_EQ(token({.token = "literal", .token_file = token_file, .kubeconfig = kc_token}), "literal");
  EXPECT_EQ(token({.token_file = token_file, .kubeconfig = kc_token}), "from-file");
  EXPECT_EQ(token({.kubeconfig = kc_token}), "from-kubeconfig");
  EXPECT_EQ(token({.kubeconfig = kc_file}), "from-kubeconfig-file");

  EXPECT_EQ(token({.token_file = dir.path() + "/missing"}).rfind("error: --token-file: cannot read", 0), 0u);
  EXPECT_NE(token({.kubeconfig = kc_certs}).find("the current context's user has no token or tokenFile"),
            std::string::npos);
  EXPECT_NE(token({.kubeconfig = "/nonexistent/kc"}).find("kubeconfig: cannot read /nonexistent/kc"),
            std::string::npos);
}

struct Ran {
  int code = -1;
  std::string out, err;
};

// RunExplain with its output captured.
Ran RunCli(std::vector<std::string> args) {
  std::vector<char*> argv{const_cast<char*>("explain")};
  for (auto& a : args) argv.push_back(a.data());
  char *out_buf = nullptr, *err_buf = nullptr;
  size_t out_size = 0, err_size = 0;
  FILE* out = open_memstream(&out_buf, &out_size);
  FILE* err = open_memstream(&err_buf, &err_size);
  Ran r;
  r.code = RunExplain(static_cast<int>(argv.size()), argv.data(), out, err);
  std::fclose(out);
  std::fclose(err);
  r.out.assign(out_buf, out_size);
  r.err.assign(err_buf, err_size);
  std::free(out_buf);
  std::free(err_buf);
  return r;
}

TEST(ExplainRunTest, UsageErrorsAndHelp) {
  Ran bad = RunCli({"--output=yaml"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.out, "");
  EXPECT_EQ(bad.err,
            "Error: invalid argument \"yaml\" for \"-o, --output\" flag: must be json or text\n"
            "Run 'ksched explain --help' for usage.\n");

  Ran missing = RunCli({"--certificate-authority=/nonexistent/ca.crt"});
  EXPECT_EQ(missing.code, 2);
  EXPECT_EQ(missing.err.rfind("Error: --certificate-authority: cannot read /nonexistent/ca.crt", 0), 0u)
      << missing.err;

  Ran help = RunCli({"default/big", "--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_EQ(help.out, ExplainUsage());
  EXPECT_EQ(help.err, "");
}

// A local HTTPS server, one connection at a time, with a self-signed certificate from the
// scheduler's own generator: enough to run the client end to end.
class TinyHttpsServer {
 public:
  struct Request {
    std::string path, authorization;
  };
  struct Response {
    int status = 200;
    std::string body;
  };
  using Handler = std::function<Response(const Request&)>;

  explicit TinyHttpsServer(Handler handler) : handler_(std::move(handler)) {
    signal(SIGPIPE, SIG_IGN);  // a client that hangs up must not end the test
    auto pair = server::GenerateSelfSignedCert({});
    EXPECT_TRUE(pair.ok()) << pair.status().message();
    if (!pair.ok()) return;
    cert_pem_ = pair->cert_pem;
    ctx_ = SSL_CTX_new(TLS_server_method());
    BIO* cert_bio = BIO_new_mem_buf(pair->cert_pem.data(), static_cast<int>(pair->cert_pem.size()));
    BIO* key_bio = BIO_new_mem_buf(pair->key_pem.data(), static_cast<int>(pair->key_pem.size()));
    X509* cert = PEM_read_bio_X509(cert_bio, nullptr, nullptr, nullptr);
    EVP_PKEY* key = PEM_read_bio_PrivateKey(key_bio, nullptr, nullptr, nullptr);
    EXPECT_EQ(SSL_CTX_use_certificate(ctx_, cert), 1);
    EXPECT_EQ(SSL_CTX_use_PrivateKey(ctx_, key), 1);
    X509_free(cert);
    EVP_PKEY_free(key);
    BIO_free(cert_bio);
    BIO_free(key_bio);

    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    EXPECT_EQ(::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), len), 0);
    EXPECT_EQ(::listen(listen_fd_, 8), 0);
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }

  ~TinyHttpsServer() {
    if (listen_fd_ >= 0) ::shutdown(listen_fd_, SHUT_RDWR);  // wakes accept()
    if (thread_.joinable()) thread_.join();
    if (listen_fd_ >= 0) ::close(listen_fd_);
    SSL_CTX_free(ctx_);
  }

  std::string url() const { return "https://127.0.0.1:" + std::to_string(port_); }
  const std::string& cert_pem() const { return cert_pem_; }
  std::vector<Request> requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }

 private:
  void Serve() {
    for (;;) {
      int fd = ::accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) return;
      timeval timeout{.tv_sec = 5, .tv_usec = 0};
      ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
      SSL* ssl = SSL_new(ctx_);
      SSL_set_fd(ssl, fd);
      if (SSL_accept(ssl) == 1) {
        Answer(ssl);
        SSL_shutdown(ssl);
      }
      SSL_free(ssl);
      ::close(fd);
    }
  }

  void Answer(SSL* ssl) {
    std::string req;
    char buf[4096];
    while (req.find("\r\n\r\n") == std::string::npos) {
      int n = SSL_read(ssl, buf, sizeof(buf));
      if (n <= 0) return;
      req.append(buf, static_cast<size_t>(n));
    }
    Request r;
    size_t start = req.find(' ') + 1;  // GET /path HTTP/1.1
    r.path = req.substr(start, req.find(' ', start) - start);
    std::string lower = req;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (size_t h = lower.find("\r\nauthorization: "); h != std::string::npos) {
      h += 17;
      r.authorization = req.substr(h, req.find("\r\n", h) - h);
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      requests_.push_back(r);
    }
    Response resp = handler_(r);
    std::string out = "HTTP/1.1 " + std::to_string(resp.status) +
                      " X\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: " +
                      std::to_string(resp.body.size()) + "\r\n\r\n" + resp.body;
    SSL_write(ssl, out.data(), static_cast<int>(out.size()));
  }

  Handler handler_;
  std::string cert_pem_;
  SSL_CTX* ctx_ = nullptr;
  int listen_fd_ = -1;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::vector<Request> requests_;
};

constexpr char kList[] =
    R"({"pods": [{"namespace": "default", "name": "big", "profile": "ksched", "queue": "unschedulablePods",
        "attempts": 3, "pendingSince": "2026-11-25T10:04:11Z", "reason": "0/3 nodes are available.",
        "stuck": false}], "stuckPods": 0})";
constexpr char kPod[] =
    R"({"namespace": "my ns", "name": "big", "profile": "ksched", "status": "Pending", "attempts": 1})";

// The ladder of ksched's secure port: no token 401, a token it does not know 401, a user
// without the RBAC grant 403, unknown pods 404.
TinyHttpsServer::Response Answer(const TinyHttpsServer::Request& r) {
  if (r.authorization.empty() || r.authorization == "Bearer expired") return {401, "Unauthorized\n"};
  if (r.authorization != "Bearer good") return {403, "Forbidden\n"};
  if (r.path == "/debug/pods") return {200, kList};
  if (r.path == "/debug/pods/my%20ns/big") return {200, kPod};
  return {404, "404 page not found\n"};
}

TEST(ExplainRunTest, AgainstAnHttpsServer) {
  TinyHttpsServer server(Answer);
  TempDir dir;
  const std::string ca = dir.Write("ca.crt", server.cert_pem());
  const std::string token = dir.Write("token", "good\n");
  const std::vector<std::string> base = {"--server", server.url(), "--certificate-authority", ca};
  auto with = [&base](std::vector<std::string> more) {
    more.insert(more.begin(), base.begin(), base.end());
    return more;
  };

  Ran list = RunCli(with({"--token-file", token}));
  EXPECT_EQ(list.code, 0) << list.err;
  EXPECT_NE(list.out.find("default/big     ksched   unschedulablePods  3"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("1 pending, 0 stuck\n"), std::string::npos) << list.out;
  ASSERT_FALSE(server.requests().empty());
  EXPECT_EQ(server.requests().back().path, "/debug/pods");
  EXPECT_EQ(server.requests().back().authorization, "Bearer good");

  // The namespace is escaped into the path; -o json prints the body as is.
  Ran json = RunCli(with({"--token=good", "my ns/big", "-o", "json"}));
  EXPECT_EQ(json.code, 0) << json.err;
  EXPECT_EQ(json.out, std::string(kPod) + "\n");
  Ran text = RunCli(with({"--token=good", "my ns/big"}));
  EXPECT_EQ(text.code, 0) << text.err;
  EXPECT_EQ(text.out.rfind("Pod my ns/big (profile ksched): Pending, 1 attempt\n", 0), 0u) << text.out;

  struct Case {
    std::vector<std::string> args;
    std::string want_err;
  } failures[] = {
      {{}, "Error: Unauthorized: the server did not accept the token (none was sent: pass --token-file"},
      {{"--token=expired"}, "Error: Unauthorized: the server did not accept the token (TokenReview rejected it"},
      {{"--token=other"}, "Error: Forbidden: the token's user may not get /debug/pods (grant it"},
      {{"--token=good", "gone"},
       "Error: pod default/gone is not known to ksched (not pending in a ksched profile, nor among the recently "
       "scheduled)\n"},
  };
  for (const auto& c : failures) {
    Ran r = RunCli(with(c.args));
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err.rfind(c.want_err, 0), 0u) << r.err;
  }

  // Without the CA the self-signed certificate is refused, unless verification is off.
  Ran untrusted = RunCli({"--server", server.url(), "--token=good"});
  EXPECT_EQ(untrusted.code, 1);
  EXPECT_NE(untrusted.err.find("pass --certificate-authority"), std::string::npos) << untrusted.err;
  Ran insecure = RunCli({"--server", server.url(), "--token=good", "--insecure-skip-tls-verify"});
  EXPECT_EQ(insecure.code, 0) << insecure.err;
}

TEST(ExplainRunTest, AnswerThatIsNotTheSchemaIsAnError) {
  TinyHttpsServer server([](const TinyHttpsServer::Request&) { return TinyHttpsServer::Response{200, "[1, 2]"}; });
  Ran r = RunCli({"--server", server.url(), "--insecure-skip-tls-verify"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "Error: reading the answer of GET " + server.url() + "/debug/pods: want a JSON object, got array\n");
}

TEST(ExplainRunTest, NoServerIsARequestError) {
  // A port that was just free: nothing listens there.
  std::string url;
  {
    TinyHttpsServer server([](const TinyHttpsServer::Request&) { return TinyHttpsServer::Response{}; });
    url = server.url();
  }
  Ran r = RunCli({"--server", url, "--request-timeout=5s"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err.rfind("Error: GET " + url + "/debug/pods: ", 0), 0u) << r.err;
}

}  // namespace
}  // namespace ksched::cmd
