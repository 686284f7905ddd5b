// The HTTPS endpoints of ksched on --secure-port (10259), as kube-scheduler serves them:
// /healthz, /livez, /readyz, /metrics, /configz (and /debug/... endpoints).
//
// Served by a small server of our own (pkg/server/io_loop.h: one epoll thread,
// non-blocking sockets, OpenSSL, TLS 1.2+; pkg/server/http_request_parser.h) rather than
// a library's. cpprestsdk's http_listener, used before, leaked the descriptor of every
// connection closed before its first byte (the process then ran out of descriptors and
// could not reach its API server) and had no limit on header or body size and no
// timeouts, so any client of the port could hold the scheduler's memory and sockets
// without logging in. prometheus-cpp's exposer (CivetWeb) has had serious CVEs and cannot
// be given our authorization chain.
//
// The limits follow what upstream's secure serving gives Go's http.Server
// (k8s.io/apiserver/pkg/server/secure_serving.go): headers up to 1 MiB (MaxHeaderBytes),
// 32 s for the TLS handshake and for each request's header (ReadHeaderTimeout, which also
// bounds Go's handshake), 90 s between keep-alive requests (IdleTimeout). Beyond Go: a
// body may announce at most 64 KiB (no endpoint takes one; larger is 413 without reading
// it), chunked bodies are refused (411), a response must be taken within 60 s, and at
// most 1024 connections are open (beyond, new ones are closed at once). A connection
// buffers at most about twice the header limit (the fields kept from it) and one 16 KiB
// read, and its descriptor is closed on EOF, error, timeout or limit.
#pragma once

#include <chrono>
#include <cstddef>
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
  int secure_port = 10259;               // --secure-port; 0: a port the kernel picks (Server::port())
  // --tls-cert-file / --tls-private-key-file (PEM). Both empty: a self-signed certificate
  // for localhost, 127.0.0.1 and `hostname` is generated in memory.
  std::string tls_cert_file;
  std::string tls_private_key_file;
  // --cert-dir: where the self-signed pair is kept (ksched.crt / ksched.key); an existing
  // pair there is reused. Empty: memory only.
  std::string cert_dir;
  std::string hostname;  // extra SAN for the self-signed certificate
  // --tls-min-version=VersionTLS13: refuse TLS 1.2 (the default minimum).
  bool tls13_only = false;
  // --tls-cipher-suites as an OpenSSL cipher list for TLS 1.2; empty: ECDHE with AEAD.
  std::string tls12_ciphers;

  // --authorization-always-allow-paths: served without a token. A trailing "*" matches a
  // prefix ("/debug/*"), as upstream.
  std::vector<std::string> always_allow_paths = DefaultAlwaysAllowPaths();
  // Serve /metrics anonymously too (simple setups without TokenReview RBAC).
  bool anonymous_metrics = false;
  // Checks tokens for every other path. Null: every other path is forbidden, as upstream
  // without an authorization kubeconfig. Not owned; must outlive the server.
  Authorizer* authorizer = nullptr;
  // Requests that need the authorizer (TokenReview + SubjectAccessReview round trips)
  // run on a small pool of their own, never on the I/O thread, so a flood of random
  // tokens cannot starve /healthz. Past `max_pending_authorizations` waiting or running
  // such requests are answered 429 at once (as are anonymous requests other than the
  // health checks, which run on a pool of two threads: /metrics rendering takes time).
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

  // Per-connection limits (see the top of this file for why these values). A request
  // past a size limit is answered (431, 413) and its connection closed; a connection
  // past a timeout is closed.
  size_t max_header_bytes = 1 << 20;  // request line + headers (Go's MaxHeaderBytes)
  size_t max_body_bytes = 64 << 10;   // a larger Content-Length is refused unread
  // From accept to the end of the TLS handshake, and from a request's first byte (the
  // first request: from the handshake's end) to the end of its header and body.
  std::chrono::milliseconds read_header_timeout = std::chrono::seconds(32);
  std::chrono::milliseconds idle_timeout = std::chrono::seconds(90);   // between keep-alive requests
  std::chrono::milliseconds write_timeout = std::chrono::seconds(60);  // to send one response
  int max_connections = 1024;  // open at once; more are accepted and closed at once
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
  // Closes the listener and every connection; answers still being computed are
  // dropped. Idempotent.
  void Stop();

  // The port served (secure_port, or the kernel's choice for 0); 0 before Start().
  int port() const { return port_; }

  // The serving certificate (PEM), e.g. to pin it in a client.
  const std::string& cert_pem() const { return cert_.cert_pem; }

 private:
  struct Impl;
  ServerOptions options_;
  CertKeyPair cert_;
  int port_ = 0;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ksched::server
