#include "pkg/server/handler.h"

#include <algorithm>
#include <cctype>

#include "pkg/util/log.h"

namespace ksched::server {
namespace {

constexpr char kMetricsContentType[] = "text/plain; version=0.0.4; charset=utf-8";

// "Bearer <token>" (scheme case-insensitive, as RFC 6750); "" otherwise.
std::string BearerToken(const std::string& authorization) {
  constexpr std::string_view kScheme = "bearer ";
  if (authorization.size() <= kScheme.size()) return "";
  for (size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != kScheme[i]) return "";
  }
  size_t start = authorization.find_first_not_of(' ', kScheme.size());
  if (start == std::string::npos) return "";
  size_t end = authorization.find_last_not_of(" \t");
  return authorization.substr(start, end + 1 - start);
}

std::string LowerVerb(const std::string& method) {
  std::string verb = method;
  std::transform(verb.begin(), verb.end(), verb.begin(), [](unsigned char c) { return std::tolower(c); });
  return verb;
}

// Upstream's healthz output: "ok", or the failing check and "<name> check failed".
HandlerResponse HealthCheck(const std::function<Status()>& check, const char* endpoint, const char* check_name) {
  if (!check) return {200, "ok"};
  Status s = check();
  if (s.ok()) return {200, "ok"};
  KLOG_V(2) << endpoint << " check failed: " << s.message();
  return {500, std::string("[-]") + check_name + " failed: " + s.message() + "\n" + endpoint + " check failed\n"};
}

}  // namespace

bool IsAlwaysAllowed(const ServerOptions& options, const std::string& path) {
  if (options.anonymous_metrics && path == "/metrics") return true;
  for (const std::string& allowed : options.always_allow_paths) {
    if (!allowed.empty() && allowed.back() == '*') {
      if (path.compare(0, allowed.size() - 1, allowed, 0, allowed.size() - 1) == 0) return true;
    } else if (path == allowed) {
      return true;
    }
  }
  return false;
}

HandlerResponse HandleRequest(const ServerOptions& options, const std::string& method, const std::string& path,
                              const std::string& authorization) {
  if (!IsAlwaysAllowed(options, path)) {
    const std::string token = BearerToken(authorization);
    if (token.empty()) return {401, "Unauthorized\n"};
    if (options.authorizer == nullptr) return {403, "Forbidden: no authorizer is configured\n"};
    StatusOr<bool> allowed = options.authorizer->Allowed(token, path, LowerVerb(method));
    if (!allowed.ok() && allowed.status().code() == StatusCode::kUnauthenticated) return {401, "Unauthorized\n"};
    if (!allowed.ok()) {
      KLOG(WARNING) << "authorizing " << method << " " << path << ": " << allowed.status().message();
      return {500, "Internal Server Error: authorization failed\n"};
    }
    if (!*allowed) return {403, "Forbidden: not allowed to " + LowerVerb(method) + " path \"" + path + "\"\n"};
  }
  if (method != "GET" && method != "HEAD") return {405, "Method Not Allowed\n"};
  if (path == "/healthz" || path == "/livez") return HealthCheck(options.healthy, path.c_str() + 1, "ping");
  if (path == "/readyz") {
    // A liveness failure (e.g. lost leader watchdog) also makes the server unready.
    HandlerResponse live = HealthCheck(options.healthy, "readyz", "ping");
    if (live.status != 200) return live;
    return HealthCheck(options.ready, "readyz", "sched-handler-sync");
  }
  if (path == "/metrics" && options.metrics) return {200, options.metrics(), kMetricsContentType};
  if (path == "/configz" && options.configz) return {200, options.configz(), "application/json"};
  for (const Endpoint& e : options.endpoints) {
    if (path.starts_with(e.prefix) && (path.size() == e.prefix.size() || path[e.prefix.size()] == '/'))
      return e.handler(path);
  }
  return {404, "404 page not found\n"};
}

}  // namespace ksched::server
