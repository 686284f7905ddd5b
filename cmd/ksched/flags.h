// Command-line flags, spelled as kube-scheduler spells them (pflag style: --name=value,
// --name value, bare --bool). Explicitly set leader-election flags override the file.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "config/duration.h"
#include "config/types.h"

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
  // Serving (HTTPS /healthz /livez /readyz /metrics); secure_port 0 disables it.
  int secure_port = 10259;
  std::string bind_address = "0.0.0.0";
  std::string cert_dir, tls_cert_file, tls_private_key_file;
  std::vector<std::string> authorization_always_allow_paths = {"/healthz", "/readyz", "/livez"};
  int verbosity = 0;
  bool version = false;
  bool help = false;
};

// Parses argv; on failure `err` names the flag and the problem.
bool ParseFlags(int argc, char** argv, Flags* flags, std::string* err);
// Applies the flags that override configuration fields.
void ApplyFlagOverrides(const Flags& flags, config::KubeSchedulerConfiguration& cfg);
std::string Usage();

}  // namespace ksched::cmd
