#include "cmd/ksched/flags.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <set>

namespace ksched::cmd {
namespace {

// Upstream's help groups (cmd/kube-scheduler/app/options Flags(), in that order), then
// ksched's own.
enum class Group { kMisc, kSecureServing, kAuthentication, kAuthorization, kDeprecated, kLeaderElection,
                   kFeatureGate, kMetrics, kLogs, kGlobal, kKsched };

const char* GroupTitle(Group g) {
  switch (g) {
    case Group::kMisc: return "Misc flags";
    case Group::kSecureServing: return "Secure serving flags";
    case Group::kAuthentication: return "Authentication flags";
    case Group::kAuthorization: return "Authorization flags";
    case Group::kDeprecated: return "Deprecated flags";
    case Group::kLeaderElection: return "Leader election flags";
    case Group::kFeatureGate: return "Feature gate flags";
    case Group::kMetrics: return "Metrics flags";
    case Group::kLogs: return "Logs flags";
    case Group::kGlobal: return "Global flags";
    case Group::kKsched: return "ksched flags";
  }
  return "";
}

using Setter = std::function<std::string(Flags&, const std::string&)>;

struct FlagDef {
  Group group;
  const char* type;  // as pflag prints it; "" for a bool
  const char* help;
  // Empty: the flag has its meaning in ksched. Otherwise why it has none; the flag is
  // accepted (its value checked) and main logs this once.
  const char* no_effect;
  Setter set;
};

std::string ParseBoolValue(const std::string& v, bool* out) {
  if (v.empty() || v == "true" || v == "1" || v == "t" || v == "T" || v == "TRUE" || v == "True") *out = true;
  else if (v == "false" || v == "0" || v == "f" || v == "F" || v == "FALSE" || v == "False") *out = false;
  else return "strconv.ParseBool: parsing \"" + v + "\": invalid syntax";
  return "";
}

std::string SetOptDuration(std::optional<config::Duration>& out, const std::string& v) {
  auto d = config::ParseGoDuration(v);
  if (!d.ok()) return d.status().message();
  out = *d;
  return "";
}

std::vector<std::string> SplitList(const std::string& v) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= v.size()) {
    size_t comma = v.find(',', start);
    std::string p = v.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    while (!p.empty() && p.front() == ' ') p.erase(p.begin());
    while (!p.empty() && p.back() == ' ') p.pop_back();
    if (!p.empty()) out.push_back(p);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

// Setters for flags whose value is only checked for its type.
Setter CheckedString() {
  return [](Flags&, const std::string&) { return std::string(); };
}
Setter CheckedBool() {
  return [](Flags&, const std::string& v) {
    bool b;
    return ParseBoolValue(v, &b);
  };
}
Setter CheckedDuration() {
  return [](Flags&, const std::string& v) {
    auto d = config::ParseGoDuration(v);
    return d.ok() ? std::string() : d.status().message();
  };
}
Setter CheckedInt() {
  return [](Flags&, const std::string& v) {
    char* end = nullptr;
    std::strtoll(v.c_str(), &end, 10);
    return v.empty() || *end ? std::string("strconv.ParseInt: parsing \"" + v + "\": invalid syntax") : std::string();
  };
}
Setter String(std::string Flags::*field) {
  return [field](Flags& f, const std::string& v) {
    f.*field = v;
    return std::string();
  };
}
Setter List(std::vector<std::string> Flags::*field) {
  return [field](Flags& f, const std::string& v) {
    f.*field = SplitList(v);
    return std::string();
  };
}
Setter Duration(std::optional<config::Duration> Flags::*field) {
  return [field](Flags& f, const std::string& v) { return SetOptDuration(f.*field, v); };
}
Setter OptString(std::optional<std::string> Flags::*field) {
  return [field](Flags& f, const std::string& v) {
    f.*field = v;
    return std::string();
  };
}
Setter Positive(std::chrono::nanoseconds Flags::*field) {
  return [field](Flags& f, const std::string& v) {
    auto d = config::ParseGoDuration(v);
    if (!d.ok()) return d.status().message();
    if (*d <= std::chrono::nanoseconds::zero()) return std::string("must be a positive duration");
    f.*field = *d;
    return std::string();
  };
}

std::string ParseFeatureGates(Flags& f, const std::string& v) {
  for (std::string item : SplitList(v)) {
    // "kube:Name=true" as the component-qualified form; "kube" is the only component.
    if (auto colon = item.find(':'); colon != std::string::npos) {
      if (item.substr(0, colon) != "kube") return "component not registered: " + item.substr(0, colon);
      item = item.substr(colon + 1);
    }
    auto eq = item.find('=');
    if (eq == std::string::npos) return "missing bool value for " + item;
    bool b;
    const std::string key = item.substr(0, eq), val = item.substr(eq + 1);
    if (std::string e = ParseBoolValue(val, &b); !e.empty() || val.empty())
      return "invalid value of " + key + "=" + val + ", err: " +
             (e.empty() ? "strconv.ParseBool: parsing \"\": invalid syntax" : e);
    f.feature_gates.emplace_back(key, b);
  }
  return "";
}

std::string ParseVmodule(Flags& f, const std::string& v) {
  f.vmodule.clear();
  for (const std::string& item : SplitList(v)) {
    auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0) return "expect comma-separated list of pattern=N";
    char* end = nullptr;
    const std::string level = item.substr(eq + 1);
    long n = std::strtol(level.c_str(), &end, 10);
    if (level.empty() || *end || n < 0) return "expect comma-separated list of pattern=N";
    f.vmodule.emplace_back(item.substr(0, eq), static_cast<int>(n));
  }
  return "";
}

const std::map<std::string, FlagDef>& Defs() {
  constexpr const char* kNoClientCerts =
      "ksched authenticates callers of its secure port by bearer token (TokenReview) only";
  constexpr const char* kNoRequestHeader = "ksched does not authenticate front-proxy request headers";
  constexpr const char* kNoCache = "ksched caches no TokenReview or SubjectAccessReview answers";
  constexpr const char* kNoProfiling = "ksched serves no /debug/pprof endpoint";
  static const std::map<std::string, FlagDef> defs = {
      // ---- misc
      {"config", {Group::kMisc, "string", "The path to the configuration file.", "", String(&Flags::config)}},
      {"master", {Group::kMisc, "string", "The address of the Kubernetes API server (overrides any value in kubeconfig).",
                  "", String(&Flags::master)}},
      {"write-config-to", {Group::kMisc, "string", "If set, write the configuration values to this file and exit.", "",
                           String(&Flags::write_config_to)}},
      // ---- secure serving
      {"bind-address", {Group::kSecureServing, "ip",
                        "The IP address on which to listen for the --secure-port port (default 0.0.0.0).", "",
                        String(&Flags::bind_address)}},
      {"cert-dir", {Group::kSecureServing, "string",
                    "The directory where the TLS certs are located (or written, when generated). Ignored when "
                    "--tls-cert-file and --tls-private-key-file are given.", "", String(&Flags::cert_dir)}},
      {"disable-http2-serving", {Group::kSecureServing, "", "If true, HTTP/2 serving is disabled.",
                                 "ksched's secure port serves HTTP/1.1 only", CheckedBool()}},
      {"http2-max-streams-per-connection",
       {Group::kSecureServing, "int", "The limit on streams in an HTTP/2 connection of the secure port.",
        "ksched's secure port serves HTTP/1.1 only", CheckedInt()}},
      {"permit-address-sharing", {Group::kSecureServing, "", "If true, SO_REUSEADDR is used when binding the port.",
                                  "ksched always binds its port with SO_REUSEADDR", CheckedBool()}},
      {"permit-port-sharing", {Group::kSecureServing, "",
                               "If true, SO_REUSEPORT is used when binding the port, so several instances can share it.",
                               "ksched does not share its port with other processes", CheckedBool()}},
      {"secure-port", {Group::kSecureServing, "int",
                       "The port on which to serve HTTPS with authentication and authorization; 0 disables it "
                       "(default 10259).", "",
                       [](Flags& f, const std::string& v) {
                         char* end = nullptr;
                         long n = std::strtol(v.c_str(), &end, 10);
                         if (v.empty() || *end || n < 0 || n > 65535)
                           return std::string("must be between 0 and 65535, inclusive");
                         f.secure_port = static_cast<int>(n);
                         return std::string();
                       }}},
      {"tls-cert-file", {Group::kSecureServing, "string",
                         "File containing the default x509 certificate for HTTPS (CA certificate, if any, "
                         "concatenated after it).", "", String(&Flags::tls_cert_file)}},
      {"tls-cipher-suites", {Group::kSecureServing, "strings",
                             "Comma-separated cipher suites for the server's TLS 1.2 connections, by their IANA "
                             "names (TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, ...). Omitted: OpenSSL's defaults.", "",
                             List(&Flags::tls_cipher_suites)}},
      {"tls-curve-preferences", {Group::kSecureServing, "int32Slice",
                                 "Elliptic curves for the key exchange, by Go's numeric CurveID.",
                                 "ksched uses OpenSSL's default curves", CheckedString()}},
      {"tls-min-version", {Group::kSecureServing, "string",
                           "Minimum TLS version: VersionTLS12 or VersionTLS13 (VersionTLS10 and VersionTLS11 are "
                           "refused). Omitted: TLS 1.2.", "", String(&Flags::tls_min_version)}},
      {"tls-private-key-file", {Group::kSecureServing, "string",
                                "File containing the default x509 private key matching --tls-cert-file.", "",
                                String(&Flags::tls_private_key_file)}},
      {"tls-sni-cert-key", {Group::kSecureServing, "namedCertKey",
                            "A certificate and key file pair, optionally with the domain patterns it serves.",
                            "ksched serves one certificate (--tls-cert-file) for every name", CheckedString()}},
      // ---- authentication
      {"authentication-kubeconfig",
       {Group::kAuthentication, "string",
        "kubeconfig of the API server that reviews the secure port's bearer tokens (TokenReview). Omitted: the "
        "scheduler's own kubeconfig.", "", String(&Flags::authentication_kubeconfig)}},
      {"authentication-skip-lookup", {Group::kAuthentication, "",
                                      "If false, missing authentication configuration is looked up in the cluster.",
                                      kNoClientCerts, CheckedBool()}},
      {"authentication-token-webhook-cache-ttl",
       {Group::kAuthentication, "duration", "How long answers of the token reviewer are cached (default 10s).",
        kNoCache, CheckedDuration()}},
      {"authentication-tolerate-lookup-failure",
       {Group::kAuthentication, "", "If true, a failed lookup of authentication configuration is not fatal.",
        kNoClientCerts, CheckedBool()}},
      {"client-ca-file", {Group::kAuthentication, "string",
                          "Client certificates signed by these CAs authenticate as their CommonName.", kNoClientCerts,
                          CheckedString()}},
      {"requestheader-allowed-names", {Group::kAuthentication, "strings",
                                       "Client certificate common names allowed to set the user name headers.",
                                       kNoRequestHeader, CheckedString()}},
      {"requestheader-client-ca-file", {Group::kAuthentication, "string",
                                        "CA bundle that verifies front-proxy client certificates.", kNoRequestHeader,
                                        CheckedString()}},
      {"requestheader-extra-headers-prefix", {Group::kAuthentication, "strings",
                                              "Request header prefixes to inspect for extra user information.",
                                              kNoRequestHeader, CheckedString()}},
      {"requestheader-group-headers", {Group::kAuthentication, "strings", "Request headers to inspect for groups.",
                                       kNoRequestHeader, CheckedString()}},
      {"requestheader-uid-headers", {Group::kAuthentication, "strings", "Request headers to inspect for the UID.",
                                     kNoRequestHeader, CheckedString()}},
      {"requestheader-username-headers", {Group::kAuthentication, "strings",
                                          "Request headers to inspect for the user name.", kNoRequestHeader,
                                          CheckedString()}},
      // ---- authorization
      {"authorization-always-allow-paths",
       {Group::kAuthorization, "strings",
        "HTTP paths served without authorization (default [/healthz,/readyz,/livez]); add /metrics to allow "
        "anonymous scrapes.", "", List(&Flags::authorization_always_allow_paths)}},
      {"authorization-kubeconfig",
       {Group::kAuthorization, "string",
        "kubeconfig of the API server that authorizes the secure port's callers (SubjectAccessReview). Omitted: "
        "the scheduler's own kubeconfig.", "", String(&Flags::authorization_kubeconfig)}},
      {"authorization-webhook-cache-authorized-ttl",
       {Group::kAuthorization, "duration", "How long 'authorized' answers are cached (default 10s).", kNoCache,
        CheckedDuration()}},
      {"authorization-webhook-cache-unauthorized-ttl",
       {Group::kAuthorization, "duration", "How long 'unauthorized' answers are cached (default 10s).", kNoCache,
        CheckedDuration()}},
      // ---- deprecated
      {"contention-profiling", {Group::kDeprecated, "", "DEPRECATED: block profiling, when profiling is on.",
                                kNoProfiling, CheckedBool()}},
      {"kube-api-burst", {Group::kDeprecated, "int32",
                          "DEPRECATED: burst to use with the API server (default 100). Ignored with --config.", "",
                          [](Flags& f, const std::string& v) {
                            char* end = nullptr;
                            long n = std::strtol(v.c_str(), &end, 10);
                            if (v.empty() || *end || n < 0) return std::string("must be a non-negative integer");
                            f.kube_api_burst = static_cast<int>(n);
                            return std::string();
                          }}},
      {"kube-api-content-type", {Group::kDeprecated, "string",
                                 "DEPRECATED: content type of requests to the API server. Ignored with --config; "
                                 "ksched reads and writes JSON whatever it says.", "",
                                 OptString(&Flags::kube_api_content_type)}},
      {"kube-api-qps", {Group::kDeprecated, "float32",
                        "DEPRECATED: QPS to use with the API server (default 50). Ignored with --config.", "",
                        [](Flags& f, const std::string& v) {
                          char* end = nullptr;
                          double q = std::strtod(v.c_str(), &end);
                          if (v.empty() || *end || q < 0) return std::string("must be a non-negative number");
                          f.kube_api_qps = q;
                          return std::string();
                        }}},
      {"kubeconfig", {Group::kDeprecated, "string",
                      "Path to a kubeconfig file with the API server's address and credentials.", "",
                      String(&Flags::kubeconfig)}},
      {"pod-max-in-unschedulable-pods-duration",
       {Group::kDeprecated, "duration",
        "DEPRECATED: the longest a pod stays in unschedulablePods before it is retried (default 5m0s).", "",
        Positive(&Flags::pod_max_in_unschedulable_pods_duration)}},
      {"profiling", {Group::kDeprecated, "", "DEPRECATED: profiling through /debug/pprof/.", kNoProfiling,
                     CheckedBool()}},
      // ---- leader election
      {"leader-elect", {Group::kLeaderElection, "",
                        "Start a leader election client and gain leadership before scheduling (default true).", "",
                        [](Flags& f, const std::string& v) {
                          bool b;
                          std::string e = ParseBoolValue(v, &b);
                          if (e.empty()) f.leader_elect = b;
                          return e;
                        }}},
      {"leader-elect-lease-duration", {Group::kLeaderElection, "duration",
                                       "How long non-leaders wait after a renewal before taking an unrenewed lease "
                                       "(default 15s).", "", Duration(&Flags::leader_elect_lease_duration)}},
      {"leader-elect-renew-deadline", {Group::kLeaderElection, "duration",
                                       "How long the leader tries to renew before it stops leading (default 10s).",
                                       "", Duration(&Flags::leader_elect_renew_deadline)}},
      {"leader-elect-resource-lock", {Group::kLeaderElection, "string",
                                      "The kind of object used for the lock: leases (default \"leases\").", "",
                                      OptString(&Flags::leader_elect_resource_lock)}},
      {"leader-elect-resource-name", {Group::kLeaderElection, "string",
                                      "The name of the lock object (default \"kube-scheduler\").", "",
                                      OptString(&Flags::leader_elect_resource_name)}},
      {"leader-elect-resource-namespace", {Group::kLeaderElection, "string",
                                           "The namespace of the lock object (default \"kube-system\").", "",
                                           OptString(&Flags::leader_elect_resource_namespace)}},
      {"leader-elect-retry-period", {Group::kLeaderElection, "duration",
                                     "The wait between tries to acquire or renew the lease (default 2s).", "",
                                     Duration(&Flags::leader_elect_retry_period)}},
      // ---- feature gates
      {"emulated-version", {Group::kFeatureGate, "strings",
                            "The version whose behaviour to emulate (kube=1.N).",
                            "ksched behaves as kube-scheduler 1.36 does", CheckedString()}},
      {"feature-gates", {Group::kFeatureGate, "colonSeparatedMultimapStringString",
                         "Comma-separated Name=true|false pairs (optionally kube:Name=...), repeatable. The gates "
                         "are kube-scheduler 1.36's; an unknown gate is an error.", "", ParseFeatureGates}},
      {"min-compatibility-version", {Group::kFeatureGate, "strings",
                                     "The oldest control plane version to stay compatible with (kube=1.N).",
                                     "ksched behaves as kube-scheduler 1.36 does", CheckedString()}},
      // ---- metrics
      {"allow-metric-labels", {Group::kMetrics, "stringToString",
                               "Allowed values per metric label (<metric>,<label>='v1,v2').",
                               "ksched's metric labels take a bounded set of values already", CheckedString()}},
      {"allow-metric-labels-manifest", {Group::kMetrics, "string",
                                        "A file with the allowed values per metric label.",
                                        "ksched's metric labels take a bounded set of values already",
                                        CheckedString()}},
      {"disabled-metrics", {Group::kMetrics, "strings",
                            "Metrics (full names) not to export; this wins over --show-hidden-metrics-for-version.",
                            "", List(&Flags::disabled_metrics)}},
      {"show-hidden-metrics-for-version", {Group::kMetrics, "string",
                                           "The previous minor version (1.35) whose hidden metrics to show.", "",
                                           String(&Flags::show_hidden_metrics_for_version)}},
      // ---- logs
      {"log-flush-frequency", {Group::kLogs, "duration",
                               "Maximum time between log flushes (default 5s); ksched writes each line at once.", "",
                               CheckedDuration()}},
      {"log-json-info-buffer-size", {Group::kLogs, "quantity", "[Alpha] Buffer for info messages in JSON format.",
                                     "ksched writes each log line at once", CheckedString()}},
      {"log-json-split-stream", {Group::kLogs, "", "[Alpha] JSON errors to stderr and info to stdout.",
                                 "ksched writes every log line to stderr", CheckedBool()}},
      {"log-text-info-buffer-size", {Group::kLogs, "quantity", "[Alpha] Buffer for info messages in text format.",
                                     "ksched writes each log line at once", CheckedString()}},
      {"log-text-split-stream", {Group::kLogs, "", "[Alpha] Text errors to stderr and info to stdout.",
                                 "ksched writes every log line to stderr", CheckedBool()}},
      {"logging-format", {Group::kLogs, "string",
                          "The log format: \"text\" (klog's lines, the default) or \"json\" (one JSON object a "
                          "line, as component-base writes it).", "", String(&Flags::logging_format)}},
      {"v", {Group::kLogs, "Level", "number for the log level verbosity", "",
             [](Flags& f, const std::string& v) {
               char* end = nullptr;
               long n = std::strtol(v.c_str(), &end, 10);
               if (v.empty() || *end || n < 0) return std::string("strconv.ParseInt: invalid syntax");
               f.verbosity = static_cast<int>(n);
               return std::string();
             }}},
      {"vmodule", {Group::kLogs, "pattern=N,...",
                   "Per-file verbosity: comma-separated pattern=N, a pattern matching a file's base name without "
                   "extension, * and ? as wildcards (text format only).", "", ParseVmodule}},
      // ---- global
      {"help", {Group::kGlobal, "", "help for ksched", "",
                [](Flags& f, const std::string& v) {
                  bool b;
                  std::string e = ParseBoolValue(v, &b);
                  f.help = b;
                  return e;
                }}},
      {"version", {Group::kGlobal, "", "Print version information and quit.", "",
                   [](Flags& f, const std::string& v) {
                     f.version = v != "false";
                     return std::string();
                   }}},
      // ---- ksched's own
      {"explain-records",
       {Group::kKsched, "int",
        "How many scheduled pods /debug/pods remembers (why each went where it went); 0 turns the decision log "
        "off, pending pods' verdicts included (default 1000).", "",
        [](Flags& f, const std::string& v) {
          char* end = nullptr;
          long long n = std::strtoll(v.c_str(), &end, 10);
          if (v.empty() || *end || n < 0 || n > 10'000'000) return std::string("must be a number from 0 to 10000000");
          f.explain_records = static_cast<size_t>(n);
          return std::string();
        }}},
      {"stuck-after",
       {Group::kKsched, "duration",
        "A pending pod unschedulable this long, with the same verdict in its last 3 attempts, is stuck: "
        "ksched_stuck_pods counts it and it gets a SchedulingStuck event (default 10m0s).", "",
        Positive(&Flags::stuck_after)}},
  };
  return defs;
}

// IANA names of the TLS 1.2 suites upstream accepts that OpenSSL implements, to OpenSSL's
// names. (TLS 1.3 suites are not configurable, as in Go.)
const std::map<std::string, std::string>& TlsCipherSuites() {
  static const auto* suites = new std::map<std::string, std::string>{
      {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA-AES128-GCM-SHA256"},
      {"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "ECDHE-ECDSA-AES256-GCM-SHA384"},
      {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305", "ECDHE-ECDSA-CHACHA20-POLY1305"},
      {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-ECDSA-CHACHA20-POLY1305"},
      {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA-AES128-GCM-SHA256"},
      {"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA-AES256-GCM-SHA384"},
      {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305", "ECDHE-RSA-CHACHA20-POLY1305"},
      {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-RSA-CHACHA20-POLY1305"},
      {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "ECDHE-ECDSA-AES128-SHA"},
      {"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", "ECDHE-ECDSA-AES256-SHA"},
      {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "ECDHE-RSA-AES128-SHA"},
      {"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", "ECDHE-RSA-AES256-SHA"},
      {"TLS_RSA_WITH_AES_128_GCM_SHA256", "AES128-GCM-SHA256"},
      {"TLS_RSA_WITH_AES_256_GCM_SHA384", "AES256-GCM-SHA384"},
      {"TLS_RSA_WITH_AES_128_CBC_SHA", "AES128-SHA"},
      {"TLS_RSA_WITH_AES_256_CBC_SHA", "AES256-SHA"},
      {"TLS_AES_128_GCM_SHA256", ""},
      {"TLS_AES_256_GCM_SHA384", ""},
      {"TLS_CHACHA20_POLY1305_SHA256", ""},
  };
  return *suites;
}

bool IsBoolFlag(const FlagDef& def) { return def.type[0] == '\0'; }

}  // namespace

bool ParseFlags(int argc, char** argv, Flags* flags, std::string* err) {
  std::set<std::string> warned;
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
      *err = "unexpected argument \"" + a + "\": ksched does not take any arguments";
      return false;
    }
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    std::replace(name.begin(), name.end(), '_', '-');  // pflag's WordSepNormalizeFunc
    auto it = Defs().find(name);
    if (it == Defs().end()) {
      *err = "unknown flag: --" + name;
      return false;
    }
    if (!has_value && !IsBoolFlag(it->second)) {
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
    if (it->second.no_effect[0] != '\0' && warned.insert(name).second)
      flags->without_effect.emplace_back(name, it->second.no_effect);
  }
  return true;
}

Status ValidateFlags(const Flags& f) {
  const auto& gates = KnownFeatureGates();
  for (const auto& gate_value : f.feature_gates) {
    const std::string& name = gate_value.first;
    const bool value = gate_value.second;
    auto it = std::find_if(gates.begin(), gates.end(), [&name](const FeatureGate& g) { return name == g.name; });
    if (it == gates.end()) return InvalidArgument("unrecognized feature gate: " + name);
    if (it->locked && value != it->default_value)
      return InvalidArgument("cannot set feature gate " + name + " to " + (value ? "true" : "false") +
                             ", feature is locked to " + (it->default_value ? "true" : "false"));
  }
  if (f.logging_format != "text" && f.logging_format != "json")
    return InvalidArgument("logging-format: Invalid value: \"" + f.logging_format +
                           "\": Unsupported log format (permitted: \"json\", \"text\")");
  if (f.logging_format != "text" && !f.vmodule.empty())
    return InvalidArgument("Non-default format doesn't honor flag: vmodule");
  const std::string previous = "1." + std::to_string(kKubeMinor - 1);
  if (!f.show_hidden_metrics_for_version.empty() && f.show_hidden_metrics_for_version != previous)
    return InvalidArgument("--show-hidden-metrics-for-version: must be omitted or have the value '" + previous +
                           "'; only the previous minor version is allowed");
  if (!f.tls_min_version.empty() && f.tls_min_version != "VersionTLS12" && f.tls_min_version != "VersionTLS13") {
    if (f.tls_min_version == "VersionTLS10" || f.tls_min_version == "VersionTLS11")
      return InvalidArgument("--tls-min-version: " + f.tls_min_version +
                             " is not supported by ksched: TLS 1.2 is its minimum");
    return InvalidArgument("--tls-min-version: unknown tls version \"" + f.tls_min_version +
                           "\" (VersionTLS12 or VersionTLS13)");
  }
  for (const std::string& suite : f.tls_cipher_suites) {
    if (!TlsCipherSuites().count(suite))
      return InvalidArgument("--tls-cipher-suites: cipher suite " + suite + " not supported or doesn't exist");
  }
  return Status::OK();
}

std::string OpenSslCipherList(const std::vector<std::string>& iana) {
  std::string out;
  for (const std::string& name : iana) {
    auto it = TlsCipherSuites().find(name);
    if (it == TlsCipherSuites().end() || it->second.empty()) continue;
    if (out.find(it->second) != std::string::npos) continue;
    if (!out.empty()) out += ':';
    out += it->second;
  }
  return out;
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
  // The deprecated client flags, only without a config file (upstream ApplyDeprecated).
  if (f.config.empty()) {
    if (f.kube_api_qps) cfg.client_connection.qps = static_cast<float>(*f.kube_api_qps);
    if (f.kube_api_burst) cfg.client_connection.burst = *f.kube_api_burst;
    if (f.kube_api_content_type) cfg.client_connection.content_type = *f.kube_api_content_type;
  }
}

std::string Usage() {
  std::string u =
      "ksched schedules pods onto nodes as kube-scheduler does, with its configuration, flags, metrics, events\n"
      "and plugins.\n"
      "\n"
      "Usage:\n"
      "  ksched [flags]\n"
      "  ksched explain [NAMESPACE/NAME] --server ... : why a pod is pending or where it went; see --help\n";
  for (Group g : {Group::kMisc, Group::kSecureServing, Group::kAuthentication, Group::kAuthorization,
                  Group::kDeprecated, Group::kLeaderElection, Group::kFeatureGate, Group::kMetrics, Group::kLogs,
                  Group::kGlobal, Group::kKsched}) {
    u += std::string("\n") + GroupTitle(g) + ":\n\n";
    for (const auto& [name, def] : Defs()) {
      if (def.group != g) continue;
      std::string left = (name == "v" ? "  -v, --v" : name == "help" ? "  -h, --help" : "      --" + name);
      if (!IsBoolFlag(def)) left += std::string(" ") + def.type;
      if (left.size() < 56) left.resize(56, ' ');
      u += left + " " + def.help;
      if (def.no_effect[0] != '\0') u += std::string(" [no effect in ksched: ") + def.no_effect + "]";
      u += "\n";
      if (name == "feature-gates") {
        for (const FeatureGate& gate : KnownFeatureGates()) {
          if (std::string_view(gate.stage) == "GA" || std::string_view(gate.stage) == "DEPRECATED") continue;
          u += std::string(58, ' ') + "kube:" + gate.name + "=true|false (" + gate.stage +
               " - default=" + (gate.default_value ? "true" : "false") + ")\n";
        }
      }
    }
  }
  return u;
}

}  // namespace ksched::cmd
