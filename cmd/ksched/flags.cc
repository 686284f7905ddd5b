#include "cmd/ksched/flags.h"

#include <cstdlib>
#include <functional>
#include <map>

namespace ksched::cmd {
namespace {

struct FlagDef {
  const char* help;
  bool is_bool;
  // Stores the value; returns an error message or "".
  std::function<std::string(Flags&, const std::string&)> set;
};

std::string SetDuration(std::optional<config::Duration>& out, const std::string& v) {
  auto d = config::ParseGoDuration(v);
  if (!d.ok()) return d.status().message();
  out = *d;
  return "";
}

std::string SetBool(std::optional<bool>& out, const std::string& v) {
  if (v == "true" || v.empty()) out = true;
  else if (v == "false") out = false;
  else return "strconv.ParseBool: parsing \"" + v + "\": invalid syntax";
  return "";
}

const std::map<std::string, FlagDef>& Defs() {
  static const std::map<std::string, FlagDef> defs = {
      {"config", {"The path to the configuration file.", false,
                  [](Flags& f, const std::string& v) { f.config = v; return std::string(); }}},
      {"kubeconfig", {"Path to kubeconfig file with authorization and master location information.", false,
                      [](Flags& f, const std::string& v) { f.kubeconfig = v; return std::string(); }}},
      {"master", {"The address of the Kubernetes API server (overrides any value in kubeconfig).", false,
                  [](Flags& f, const std::string& v) { f.master = v; return std::string(); }}},
      {"write-config-to", {"If set, write the configuration values to this file and exit.", false,
                           [](Flags& f, const std::string& v) { f.write_config_to = v; return std::string(); }}},
      {"pod-max-in-unschedulable-pods-duration",
       {"The maximum time a pod can stay in unschedulablePods (default 5m0s).", false,
        [](Flags& f, const std::string& v) {
          auto d = config::ParseGoDuration(v);
          if (!d.ok()) return d.status().message();
          f.pod_max_in_unschedulable_pods_duration = *d;
          return std::string();
        }}},
      {"explain-records",
       {"How many scheduled pods /debug/pods remembers (why each went where it went); 0 turns the decision log "
        "off, pending pods' verdicts included (default 1000).", false,
        [](Flags& f, const std::string& v) {
          char* end = nullptr;
          long long n = std::strtoll(v.c_str(), &end, 10);
          if (v.empty() || *end || n < 0 || n > 10'000'000) return std::string("must be a number from 0 to 10000000");
          f.explain_records = static_cast<size_t>(n);
          return std::string();
        }}},
      {"stuck-after",
       {"A pending pod unschedulable this long, with the same verdict in its last 3 attempts, is stuck: "
        "ksched_stuck_pods counts it and it gets a SchedulingStuck event (default 10m0s).", false,
        [](Flags& f, const std::string& v) {
          auto d = config::ParseGoDuration(v);
          if (!d.ok()) return d.status().message();
          if (*d <= std::chrono::nanoseconds::zero()) return std::string("must be a positive duration");
          f.stuck_after = *d;
          return std::string();
        }}},
      {"leader-elect", {"Start a leader election client and gain leadership before executing the main loop.", true,
                        [](Flags& f, const std::string& v) { return SetBool(f.leader_elect, v); }}},
      {"leader-elect-lease-duration", {"The duration that non-leader candidates will wait to force acquire leadership.",
                                       false, [](Flags& f, const std::string& v) {
                                         return SetDuration(f.leader_elect_lease_duration, v);
                                       }}},
      {"leader-elect-renew-deadline", {"The interval between attempts by the acting master to renew a leadership slot.",
                                       false, [](Flags& f, const std::string& v) {
                                         return SetDuration(f.leader_elect_renew_deadline, v);
                                       }}},
      {"leader-elect-retry-period", {"The duration clients should wait between attempting acquisition and renewal.",
                                     false, [](Flags& f, const std::string& v) {
                                       return SetDuration(f.leader_elect_retry_period, v);
                                     }}},
      {"leader-elect-resource-lock", {"The type of resource object that is used for locking (leases).", false,
                                      [](Flags& f, const std::string& v) {
                                        f.leader_elect_resource_lock = v;
                                        return std::string();
                                      }}},
      {"leader-elect-resource-name", {"The name of resource object that is used for locking.", false,
                                      [](Flags& f, const std::string& v) {
                                        f.leader_elect_resource_name = v;
                                        return std::string();
                                      }}},
      {"leader-elect-resource-namespace", {"The namespace of resource object that is used for locking.", false,
                                           [](Flags& f, const std::string& v) {
                                             f.leader_elect_resource_namespace = v;
                                             return std::string();
                                           }}},
      {"secure-port", {"The port on which to serve HTTPS with authentication and authorization; 0 disables it "
                       "(default 10259).", false,
                       [](Flags& f, const std::string& v) {
                         char* end = nullptr;
                         long n = std::strtol(v.c_str(), &end, 10);
                         if (v.empty() || *end || n < 0 || n > 65535) return std::string("must be a port number");
                         f.secure_port = static_cast<int>(n);
                         return std::string();
                       }}},
      {"bind-address", {"The IP address on which to listen for the --secure-port port (default 0.0.0.0).", false,
                        [](Flags& f, const std::string& v) { f.bind_address = v; return std::string(); }}},
      {"cert-dir", {"The directory where the TLS certs are located (or written, when generated).", false,
                    [](Flags& f, const std::string& v) { f.cert_dir = v; return std::string(); }}},
      {"tls-cert-file", {"File containing the default x509 Certificate for HTTPS.", false,
                         [](Flags& f, const std::string& v) { f.tls_cert_file = v; return std::string(); }}},
      {"tls-private-key-file", {"File containing the default x509 private key matching --tls-cert-file.", false,
                                [](Flags& f, const std::string& v) { f.tls_private_key_file = v; return std::string(); }}},
      {"authorization-always-allow-paths",
       {"A list of HTTP paths to skip during authorization (default [/healthz,/readyz,/livez]); add /metrics to "
        "allow anonymous scrapes.", false,
        [](Flags& f, const std::string& v) {
          f.authorization_always_allow_paths.clear();
          size_t start = 0;
          while (start <= v.size()) {
            size_t comma = v.find(',', start);
            std::string p = v.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
            if (!p.empty()) f.authorization_always_allow_paths.push_back(p);
            if (comma == std::string::npos) break;
            start = comma + 1;
          }
          return std::string();
        }}},
      {"v", {"number for the log level verbosity", false,
             [](Flags& f, const std::string& v) {
               char* end = nullptr;
               long n = std::strtol(v.c_str(), &end, 10);
               if (v.empty() || *end || n < 0) return "invalid argument \"" + v + "\" for \"-v, --v\" flag";
               f.verbosity = static_cast<int>(n);
               return std::string();
             }}},
      {"version", {"Print version information and quit.", true,
                   [](Flags& f, const std::string& v) {
                     f.version = v != "false";
                     return std::string();
                   }}},
      {"help", {"help for ksched", true, [](Flags& f, const std::string& v) {
                  f.help = v != "false";
                  return std::string();
                }}},
  };
  return defs;
}

}  // namespace

bool ParseFlags(int argc, char** argv, Flags* flags, std::string* err) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    std::string name, value;
    bool has_value = false;
    if (a == "-h") a = "--help";
    if (a.rfind("--", 0) == 0) {
      name = a.substr(2);
    } else if (a.rfind("-v", 0) == 0) {  // -v 3, -v=3, -v3
      name = 'v';
      if (a.size() > 2) {
        value = a.substr(a[2] == '=' ? 3 : 2);
        has_value = true;
      }
    } else {
      *err = "unexpected argument \"" + a + "\"";
      return false;
    }
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    auto it = Defs().find(name);
    if (it == Defs().end()) {
      *err = "unknown flag: --" + name;
      return false;
    }
    if (!has_value && !it->second.is_bool) {
      if (i + 1 >= argc) {
        *err = "flag needs an argument: --" + name;
        return false;
      }
      value = argv[++i];
    }
    if (std::string e = it->second.set(*flags, value); !e.empty()) {
      *err = "invalid argument \"" + value + "\" for \"--" + name + "\" flag: " + e;
      return false;
    }
  }
  return true;
}

void ApplyFlagOverrides(const Flags& f, config::KubeSchedulerConfiguration& cfg) {
  auto& le = cfg.leader_election;
  if (f.leader_elect) le.leader_elect = *f.leader_elect;
  if (f.leader_elect_lease_duration) le.lease_duration = *f.leader_elect_lease_duration;
  if (f.leader_elect_renew_deadline) le.renew_deadline = *f.leader_elect_renew_deadline;
  if (f.leader_elect_retry_period) le.retry_period = *f.leader_elect_retry_period;
  if (f.leader_elect_resource_lock) le.resource_lock = *f.leader_elect_resource_lock;
  if (f.leader_elect_resource_name) le.resource_name = *f.leader_elect_resource_name;
  if (f.leader_elect_resource_namespace) le.resource_namespace = *f.leader_elect_resource_namespace;
}

std::string Usage() {
  std::string u =
      "Usage:\n"
      "  ksched [flags]\n"
      "  ksched explain [NAMESPACE/NAME] --server ... : why a pod is pending or where it went; see --help\n"
      "\n"
      "Flags:\n";
  for (const auto& [name, def] : Defs()) {
    std::string left = (name == "v" ? "  -v, --v" : name == "help" ? "  -h, --help" : "      --" + name);
    if (!def.is_bool) left += name == "v" ? " int" : " string";
    if (left.size() < 48) left.resize(48, ' ');
    u += left + " " + def.help + "\n";
  }
  return u;
}

}  // namespace ksched::cmd
