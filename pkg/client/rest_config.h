// How to reach and authenticate to a kube-apiserver: from a kubeconfig file, from the
// in-cluster service-account environment, or from --master.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "pkg/util/clock.h"
#include "pkg/util/mutex.h"
#include "pkg/util/status.h"

namespace ksched::client {

struct RestConfig {
  std::string server;  // https://host:port (no trailing slash)

  // TLS. PEM bytes are loaded into memory so files may rotate underneath us.
  std::string ca_pem;       // empty: system trust store
  bool insecure_skip_tls_verify = false;
  std::string tls_server_name;  // SNI / name to verify, when it differs from the host
  std::string client_cert_pem;
  std::string client_key_pem;

  // Authentication (at most one of token / token_file / basic is normally set).
  std::string bearer_token;
  std::string token_file;  // re-read about every minute and after a 401
  std::string username, password;

  // Client behaviour (clientConnection in KubeSchedulerConfiguration).
  double qps = 50;
  int burst = 100;
  std::string user_agent;  // default "ksched/<version> (linux/amd64)"
  std::chrono::milliseconds timeout{std::chrono::seconds(30)};
};

// Loads `path` (the kubeconfig format of kubectl), using `context` or current-context.
// Relative file paths inside the kubeconfig are resolved against its directory.
// `master`, when non-empty, overrides the cluster's server (the --master flag).
StatusOr<RestConfig> LoadKubeconfig(const std::string& path, const std::string& context = "",
                                    const std::string& master = "");
// LoadKubeconfig on kubeconfig text already read: relative paths inside it (CA, client
// certificate and key files, tokenFile) are resolved against `dir`. Errors name the
// kubeconfig without a path.
StatusOr<RestConfig> ParseKubeconfig(std::string_view yaml, const std::string& dir, const std::string& context = "",
                                     const std::string& master = "");

// The in-cluster configuration: KUBERNETES_SERVICE_HOST/PORT plus the service account's
// token and ca.crt under `sa_dir`. Fails with a clear message when not in a cluster.
StatusOr<RestConfig> InClusterConfig(
    const std::string& sa_dir = "/var/run/secrets/kubernetes.io/serviceaccount");

// Formats "https://host:port", bracketing IPv6 literals.
// The server URL as the clients use it, or an error naming what is wrong with it (an
// unparsable URL fails at start, not at the first request): https or http, a host, an
// optional port from 1 to 65535; a bare "host:port" gets https:// as client-go gives it.
StatusOr<std::string> NormalizeServerUrl(std::string_view server);

std::string JoinHostPort(const std::string& scheme, const std::string& host, const std::string& port);

std::string DefaultUserAgent();

// Reads a small file (at most 16 MiB; a larger one is an error). Errors start with `what`
// and name the path.
StatusOr<std::string> ReadFile(const std::string& path, std::string_view what);
// ReadFile for a bearer token file, without the trailing newline or spaces it usually has.
StatusOr<std::string> ReadTokenFile(const std::string& path, std::string_view what);

// Standard base64 with padding (for a Basic authorization header).
std::string Base64Encode(std::string_view in);
// Decodes standard base64 as Go's base64.StdEncoding (what client-go uses for the
// kubeconfig's *-data fields), except that all whitespace is ignored rather than only
// newlines: padding is required and may appear only at the end. Errors name `field`.
StatusOr<std::string> Base64Decode(std::string_view in, std::string_view field = "base64 data");

// Supplies the bearer token: a fixed token, or a token file that is re-read when its
// cached copy is older than a minute or after the server answered 401.
class TokenSource {
 public:
  TokenSource(const RestConfig& config, Clock& clock);
  // The current token; empty when none is configured.
  std::string Token();
  // Called after a 401: the next Token() re-reads the file.
  void Invalidate();
  bool FromFile() const { return !file_.empty(); }

 private:
  Clock& clock_;
  const std::string fixed_;
  const std::string file_;
  Mutex mu_;
  std::string cached_ GUARDED_BY(mu_);
  Clock::time_point read_at_ GUARDED_BY(mu_);
  bool valid_ GUARDED_BY(mu_) = false;
};

}  // namespace ksched::client
