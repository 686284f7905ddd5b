// Command-line flags, spelled as kube-scheduler spells them (pflag style: --name=value,
// --name value, bare --bool, "_" for "-"). Every flag of current kube-scheduler is
// accepted, so ksched starts with the arguments kubeadm and operators give
// kube-scheduler; a flag that has no effect in ksched is accepted with one warning line
// naming it (Flags::without_effect), never silently. Explicitly set leader-election flags
// override the file; the deprecated client flags apply only without --config, as upstream.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/duration.h"
#include "config/types.h"
#include "pkg/util/status.h"

namespace ksched::cmd {

struct Flags {
  std::string config;
  std::string kubeconfig;
  std::string master;
  std::string write_config_to;
  std::chrono::nanoseconds pod_max_in_unschedulable_pods_duration = std::chrono::minutes(5);
  size_t explain_records = 1000;
  std::chrono::nanoseconds stuck_after = std::chrono::minutes(10);
  // Set only when given on the command line.
  std::optional<bool> leader_elect;
  std::optional<config::Duration> leader_elect_lease_duration, leader_elect_renew_deadline,
      leader_elect_retry_period;
  std::optional<std::string> leader_elect_resource_lock, leader_elect_resource_name,
      leader_elect_resource_namespace;
  // Deprecated client flags (upstream ignores them when --config is given; so does ksched).
  std::optional<double> kube_api_qps;
  std::optional<int> kube_api_burst;
  std::optional<std::string> kube_api_content_type;
  // Serving (HTTPS /healthz /livez /readyz /metrics); secure_port 0 disables it.
  int secure_port = 10259;
  std::string bind_address = "0.0.0.0";
  std::string cert_dir, tls_cert_file, tls_private_key_file;
  std::string tls_min_version;                  // "VersionTLS12" ...; empty: TLS 1.2
  std::vector<std::string> tls_cipher_suites;  // IANA names, as upstream takes them
  // The clients for TokenReview and SubjectAccessReview of the secure port's callers
  // (empty: the main kubeconfig).
  std::string authentication_kubeconfig, authorization_kubeconfig;
  std::vector<std::string> authorization_always_allow_paths = {"/healthz", "/readyz", "/livez"};
  // --feature-gates, in the order given (validated by ValidateFlags).
  std::vector<std::pair<std::string, bool>> feature_gates;
  // Logs.
  std::string logging_format = "text";
  std::vector<std::pair<std::string, int>> vmodule;  // pattern -> level
  int verbosity = 0;
  // Metrics.
  std::vector<std::string> disabled_metrics;
  std::string show_hidden_metrics_for_version;
  bool version = false;
  bool help = false;
  // Flags that were given but have no effect in ksched, each with the reason; main logs
  // one warning line per flag.
  std::vector<std::pair<std::string, std::string>> without_effect;
};

// Parses argv; on failure `err` names the flag and the problem.
bool ParseFlags(int argc, char** argv, Flags* flags, std::string* err);
// What kube-scheduler checks after parsing: feature gates (an unknown gate is an error,
// "unrecognized feature gate: X", as upstream; a locked gate set to its other value is
// refused), the log format and --vmodule with it, --show-hidden-metrics-for-version,
// --tls-min-version and --tls-cipher-suites.
Status ValidateFlags(const Flags& flags);
// --tls-cipher-suites as an OpenSSL cipher list ("" for the TLS 1.3 suites alone, which
// OpenSSL does not configure this way).
std::string OpenSslCipherList(const std::vector<std::string>& iana_names);
// Applies the flags that override configuration fields.
void ApplyFlagOverrides(const Flags& flags, config::KubeSchedulerConfiguration& cfg);
// --help: the flags in upstream's groups, then ksched's own.
std::string Usage();

// The feature gates of kube-scheduler 1.36 that ksched knows, with their defaults; the
// enabled state after --feature-gates is FeatureGates::Enabled.
struct FeatureGate {
  const char* name;
  bool default_value;
  const char* stage;  // "ALPHA", "BETA", "GA", "DEPRECATED"
  bool locked;
};
const std::vector<FeatureGate>& KnownFeatureGates();

// The release whose surface ksched follows (flags, gates, metrics' deprecations).
inline constexpr int kKubeMinor = 36;

}  // namespace ksched::cmd
