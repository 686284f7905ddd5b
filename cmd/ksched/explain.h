// `ksched explain`: asks a running ksched, on its secure port, why a pod is pending or
// where it went (GET /debug/pods and /debug/pods/{namespace}/{name}) and prints the
// answer as text (explain_render.h) or as the endpoint's JSON.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

#include "pkg/util/status.h"

namespace ksched::cmd {

enum class ExplainOutput { kText, kJson };

struct ExplainOptions {
  // The pod to explain; both empty: list every pending pod.
  std::string pod_namespace;
  std::string pod_name;
  std::string server = "https://127.0.0.1:10259";
  // Credentials, the first one given wins: a literal token, a token file, or the token
  // (or tokenFile) of the kubeconfig's current user. The kubeconfig's server and CA are
  // the API server's, not ksched's, so they are not used.
  std::string token;
  std::string token_file;
  std::string kubeconfig;
  // PEM file with the CA of ksched's serving certificate; empty: the system trust store.
  std::string certificate_authority;
  bool insecure_skip_tls_verify = false;
  ExplainOutput output = ExplainOutput::kText;
  std::chrono::milliseconds request_timeout = std::chrono::seconds(10);  // 0: no timeout
  bool help = false;
};

// Parses the arguments of `ksched explain` (argv[0] is "explain"), pflag style:
// --name=value, --name value, -o json, -ojson, bare booleans. Errors are
// InvalidArgument naming the flag or the argument.
StatusOr<ExplainOptions> ParseExplainFlags(int argc, char** argv);
std::string ExplainUsage();

// The bearer token the options name ("" when no credential flag is given). Errors name the
// flag and the file.
StatusOr<std::string> LoadExplainToken(const ExplainOptions& options);

// Runs `ksched explain` (argv[0] is "explain"), printing the answer to `out` and errors
// to `err` as one line each. Returns 0, 1 when the request fails or its answer cannot be
// read, or 2 for a usage error (a bad flag, an unreadable credential or CA file).
int RunExplain(int argc, char** argv, FILE* out, FILE* err);

}  // namespace ksched::cmd
