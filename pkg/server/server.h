// The HTTPS endpoints of ksched on --secure-port (10259), as kube-scheduler serves them:
// /healthz, /livez, /readyz, /metrics, /configz.
//
// Built on cpprestsdk's http_listener with an OpenSSL (boost::asio::ssl) context rather than
// prometheus-cpp's exposer: the exposer's CivetWeb server has had serious CVEs and cannot be
// given our own authentication chain, while http_listener lets every request pass through
// the authorization check below before any handler runs.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "pkg/util/status.h"

namespace ksched::server {

// Decides whether the holder of a bearer token may `verb` the non-resource `path`.
// Allowed() may block (it can call the apiserver); an error becomes a 500.
class Authorizer {
 public:
  virtual ~Authorizer() = default;
  virtual StatusOr<bool> Allowed(const std::string& token, const std::string& path, const std::string& verb) = 0;
};

// Upstream's --authorization-always-allow-paths default.
inline const std::vector<std::string>& DefaultAlwaysAllowPaths() {
  static const auto* paths = new std::vector<std::string>{"/healthz", "/readyz", "/livez"};
  return *paths;
}

struct HandlerResponse {
  int status = 200;
  std::string body;
  std::string content_type = "text/plain; charset=utf-8";
};

// A further GET endpoint: `prefix` itself and every path under `prefix/`.
struct Endpoint {
  std::string prefix;
  std::function<HandlerResponse(const std::string& path)> handler;
};

struct ServerOptions {
  std::string bind_address = "0.0.0.0";  // --bind-address
  int secure_port = 10259;               // --secure-port; 0 is not supported by cpprestsdk
  // --tls-cert-file / --tls-private-key-file (PEM). Both empty: a self-signed certificate
  // for localhost, 127.0.0.1 and `hostname` is generated in memory.
  std::string tls_cert_file;
  std::string tls_private_key_file;
  // --cert-dir: where the self-signed pair is kept (ksched.crt / ksched.key); an existing
  // pair there is reused. Empty: memory only.
  std::string cert_dir;
  std::string hostname;  // extra SAN for the self-signed certificate

  // --authorization-always-allow-paths: served without a token. A trailing "*" matches a
  // prefix ("/debug/*"), as upstream.
  std::vector<std::string> always_allow_paths = DefaultAlwaysAllowPaths();
  // Serve /metrics anonymously too (simple setups without TokenReview RBAC).
  bool anonymous_metrics = false;
  // Checks tokens for every other path. Null: every other path is forbidden, as upstream
  // without an authorization kubeconfig. Not owned; must outlive the server.
  Authorizer* authorizer = nullptr;
  // Requests that need the authorizer (TokenReview + SubjectAccessReview round trips)
  // run on a small pool of their own, never on the listener's threads, so a flood of
  // random tokens cannot starve /healthz. Past `max_pending_authorizations` waiting or
  // running such requests are answered 429 at once.
  int authorizer_workers = 4;
  size_t max_pending_authorizations = 64;

  // /readyz: OK when ready; otherwise the message is the failing check's reason
  // (e.g. "handlers are not fully synchronized"). Empty: always ready.
  std::function<Status()> ready;
  // /healthz and /livez extra check (e.g. the leader-election watchdog). Empty: always ok.
  std::function<Status()> healthy;
  // /metrics body (Prometheus text 0.0.4). Empty: 404.
  std::function<std::string()> metrics;
  // /configz body (JSON, {"componentconfig": {...}}). Empty: 404.
  std::function<std::string()> configz;
  // Further endpoints (e.g. /debug/pods), behind the same authorization.
  std::vector<Endpoint> endpoints;
};

// PEM-encoded certificate and private key.
struct CertKeyPair {
  std::string cert_pem;
  std::string key_pem;
};

// A self-signed EC P-256 certificate valid for one year, with subjectAltName
// DNS:localhost, IP:127.0.0.1 and DNS:<each of extra_hosts> (IP: when it parses as one).
StatusOr<CertKeyPair> GenerateSelfSignedCert(const std::vector<std::string>& extra_hosts);

// Resolves the serving certificate from the options (files, cert dir, or generated).
StatusOr<CertKeyPair> LoadServingCert(const ServerOptions& options);

class Server {
 public:
  explicit Server(ServerOptions options);
  ~Server();  // Stop()s
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Loads or generates the certificate and starts listening; returns once the port is
  // open or with the error (port taken, bad certificate, ...).
  Status Start();
  // Closes the listener; in-flight requests finish. Idempotent.
  void Stop();

  // The serving certificate (PEM), e.g. to pin it in a client.
  const std::string& cert_pem() const { return cert_.cert_pem; }

 private:
  struct Impl;
  ServerOptions options_;
  CertKeyPair cert_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ksched::server
