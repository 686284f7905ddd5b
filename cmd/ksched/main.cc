// ksched: a Kubernetes scheduler. This entry point parses flags, builds the API client
// from --kubeconfig / --master (or the in-cluster config) and checks the connection.
// The scheduling loop is wired in here as the scheduler core lands (see README).
#include <cstdio>
#include <cstring>
#include <string>

#include "informers/curl_client.h"
#include "informers/rest_config.h"
#include "pkg/util/log.h"

namespace {

struct Flags {
  std::string kubeconfig;
  std::string master;
  bool version = false;
  bool help = false;
  int verbosity = 0;
};

constexpr char kUsage[] = R"(Usage: ksched [flags]

Flags:
      --kubeconfig string   Path to a kubeconfig file (default: in-cluster config)
      --master string       The address of the Kubernetes API server (overrides any value in kubeconfig)
  -v, --v int               Log verbosity
      --version             Print version information and quit
  -h, --help                Help for ksched
)";

bool ParseFlags(int argc, char** argv, Flags* f, std::string* err) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    std::string value;
    bool has_value = false;
    if (auto eq = a.find('='); eq != std::string::npos && a.rfind("--", 0) == 0) {
      value = a.substr(eq + 1);
      a = a.substr(0, eq);
      has_value = true;
    }
    auto next = [&](std::string* out) {
      if (has_value) { *out = value; return true; }
      if (i + 1 >= argc) { *err = "flag needs an argument: " + a; return false; }
      *out = argv[++i];
      return true;
    };
    if (a == "--kubeconfig") { if (!next(&f->kubeconfig)) return false; }
    else if (a == "--master") { if (!next(&f->master)) return false; }
    else if (a == "--version") f->version = true;
    else if (a == "-h" || a == "--help") f->help = true;
    else if (a == "-v" || a == "--v") {
      std::string v;
      if (!next(&v)) return false;
      char* end = nullptr;
      long n = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end || n < 0) { *err = "invalid argument \"" + v + "\" for \"-v, --v\" flag"; return false; }
      f->verbosity = static_cast<int>(n);
    } else {
      *err = "unknown flag: " + a;
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  std::string err;
  if (!ParseFlags(argc, argv, &flags, &err)) {
    std::fprintf(stderr, "Error: %s\n%s", err.c_str(), kUsage);
    return 2;
  }
  if (flags.help) { std::fputs(kUsage, stdout); return 0; }
  if (flags.version) { std::printf("ksched v0.1.0 (kube-scheduler API compatible: v1.20)\n"); return 0; }
  ksched::log::SetVerbosity(flags.verbosity);

  auto cfg = flags.kubeconfig.empty() && flags.master.empty()
                 ? ksched::informers::InClusterConfig()
                 : ksched::informers::LoadKubeconfig(flags.kubeconfig, "", flags.master);
  if (!cfg.ok()) {
    KLOG(ERROR) << "invalid client configuration: " << cfg.status().message();
    return 1;
  }
  auto client = ksched::informers::NewCurlApiClient(*cfg);
  if (!client.ok()) {
    KLOG(ERROR) << client.status().message();
    return 1;
  }
  auto version = (*client)->Do({.path = "/version"});
  if (!version.ok()) {
    KLOG(ERROR) << "cannot reach the API server " << cfg->server << ": " << version.status().ToString();
    return 1;
  }
  KLOG(INFO) << "connected to " << cfg->server;
  std::fputs(version->body.c_str(), stdout);
  std::fputs("\n", stdout);
  return 0;
}
