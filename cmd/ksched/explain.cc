#include "cmd/ksched/explain.h"

#include <curl/curl.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "cmd/ksched/explain_render.h"
#include "cmd/ksched/subcommand_flags.h"
#include "config/duration.h"
#include "pkg/client/rest_config.h"

namespace ksched::cmd {
namespace {

constexpr char kUsageHint[] = "Run 'ksched explain --help' for usage.";
// How much of an unexpected error body is quoted.
constexpr size_t kQuotedBodyBytes = 200;

const SubcommandFlags<ExplainOptions>& Flags() {
  static const SubcommandFlags<ExplainOptions> flags{.defs = {
      {"server", {"string", "ksched's secure port (default https://127.0.0.1:10259).",
                  [](ExplainOptions& o, const std::string& v) {
                    if (v.rfind("https://", 0) != 0 && v.rfind("http://", 0) != 0)
                      return std::string("want https://host:port");
                    o.server = v;
                    while (o.server.back() == '/') o.server.pop_back();
                    return std::string();
                  }}},
      {"token", {"string", "Bearer token to send.", SetString<ExplainOptions>(&ExplainOptions::token)}},
      {"token-file", {"string", "File holding the bearer token to send.", SetString<ExplainOptions>(&ExplainOptions::token_file)}},
      {"kubeconfig", {"string", "Send the token (or tokenFile) of this kubeconfig's current user; its server and "
                                "CA are the API server's and are not used.",
                      SetString<ExplainOptions>(&ExplainOptions::kubeconfig)}},
      {"certificate-authority", {"string", "PEM file with the CA of ksched's serving certificate (default: the "
                                           "system trust store).",
                                 SetString<ExplainOptions>(&ExplainOptions::certificate_authority)}},
      {"insecure-skip-tls-verify", {nullptr, "Do not verify ksched's serving certificate (insecure).",
                                    [](ExplainOptions& o, const std::string& v) {
                                      if (v != "true" && v != "false" && !v.empty())
                                        return "strconv.ParseBool: parsing \"" + v + "\": invalid syntax";
                                      o.insecure_skip_tls_verify = v != "false";
                                      return std::string();
                                    }}},
      {"output", {"string", "Output format: text or json (the endpoint's JSON as is) (default text).",
                  [](ExplainOptions& o, const std::string& v) {
                    if (v == "text") o.output = ExplainOutput::kText;
                    else if (v == "json") o.output = ExplainOutput::kJson;
                    else return std::string("must be json or text");
                    return std::string();
                  }}},
      {"request-timeout", {"duration", "How long to wait for the answer; 0 waits forever (default 10s).",
                           [](ExplainOptions& o, const std::string& v) {
                             auto d = config::ParseGoDuration(v);
                             if (!d.ok()) return d.status().message();
                             if (d->count() < 0) return std::string("must not be negative");
                             o.request_timeout = std::chrono::duration_cast<std::chrono::milliseconds>(*d);
                             return std::string();
                           }}},
      {"help", {nullptr, "help for explain", [](ExplainOptions& o, const std::string& v) {
                  o.help = v != "false";
                  return std::string();
                }}},
  }, .shorthands = {{'o', "output"}, {'h', "help"}}};
  return flags;
}

// NAMESPACE/NAME, or NAME in namespace "default" (as kubectl without -n).
Status SetPod(const std::string& arg, ExplainOptions& o) {
  size_t slash = arg.find('/');
  o.pod_namespace = slash == std::string::npos ? "default" : arg.substr(0, slash);
  o.pod_name = slash == std::string::npos ? arg : arg.substr(slash + 1);
  if (o.pod_namespace.empty() || o.pod_name.empty() || o.pod_name.find('/') != std::string::npos)
    return InvalidArgument("invalid pod \"" + arg + "\": want NAMESPACE/NAME, or NAME in namespace default");
  return Status::OK();
}

struct HttpAnswer {
  long status = 0;
  std::string body;
};

size_t AppendBody(char* data, size_t size, size_t n, void* body) {
  static_cast<std::string*>(body)->append(data, size * n);
  return size * n;
}

// The request as the options and `token` say; `ca_pem` is the --certificate-authority
// file's content. Fails only when no HTTP answer came back.
StatusOr<HttpAnswer> Get(const ExplainOptions& o, const std::string& token, const std::string& ca_pem,
                         const std::string& url) {
  static const bool curl_ready = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_ready ? curl_easy_init() : nullptr,
                                                           curl_easy_cleanup);
  if (!curl) return Internal("cannot initialise libcurl");
  CURL* c = curl.get();
  HttpAnswer answer;
  char error[CURL_ERROR_SIZE] = {};
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_USERAGENT, client::DefaultUserAgent().c_str());
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, AppendBody);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &answer.body);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(o.request_timeout.count()));
  // Redirects are not followed: the token must not go anywhere but --server.
  std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> headers(nullptr, curl_slist_free_all);
  auto add_header = [&headers](const std::string& h) {
    // Appending returns the list's head, or null (and leaves the list as it was).
    if (curl_slist* head = curl_slist_append(headers.get(), h.c_str())) {
      (void)headers.release();
      headers.reset(head);
    }
  };
  add_header("Accept: application/json");
  if (!token.empty()) add_header("Authorization: Bearer " + token);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  curl_blob ca{const_cast<char*>(ca_pem.data()), ca_pem.size(), CURL_BLOB_COPY};
  if (o.insecure_skip_tls_verify) {
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
  } else if (!ca_pem.empty()) {
    curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &ca);
  }
  if (CURLcode rc = curl_easy_perform(c); rc != CURLE_OK) {
    std::string m = "GET " + url + ": " + (error[0] ? error : curl_easy_strerror(rc));
    if (rc == CURLE_PEER_FAILED_VERIFICATION)
      m += " (pass --certificate-authority with the CA of ksched's serving certificate, or "
           "--insecure-skip-tls-verify)";
    if (rc == CURLE_OPERATION_TIMEDOUT) m += " (see --request-timeout)";
    return Status(rc == CURLE_OPERATION_TIMEDOUT ? StatusCode::kDeadlineExceeded : StatusCode::kUnavailable, m);
  }
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &answer.status);
  return answer;
}

std::string Escape(const std::string& segment) {
  char* e = curl_easy_escape(nullptr, segment.data(), static_cast<int>(segment.size()));
  std::string out = e ? e : segment;
  curl_free(e);
  return out;
}

// The error for an answer other than 200, naming what the user can do about it.
std::string AnswerError(const ExplainOptions& o, const std::string& url, const std::string& path, bool sent_token,
                        const HttpAnswer& a) {
  switch (a.status) {
    case 401:
      return std::string("Unauthorized: the server did not accept the token (") +
             (sent_token ? "TokenReview rejected it: expired, or not a token of this cluster?"
                         : "none was sent: pass --token-file, --token or --kubeconfig") +
             ")";
    case 403:
      return "Forbidden: the token's user may not get " + path +
             " (grant it the verb get on the nonResourceURLs /debug/pods and /debug/pods/*)";
    case 404:
      if (!o.pod_name.empty())
        return "pod " + o.pod_namespace + "/" + o.pod_name +
               " is not known to ksched (not pending in a ksched profile, nor among the recently scheduled)";
      return "GET " + url + ": 404 Not Found (is --server a ksched that serves /debug/pods?)";
  }
  std::string body = a.body.substr(0, a.body.find('\n'));
  if (body.size() > kQuotedBodyBytes) body = body.substr(0, kQuotedBodyBytes) + "...";
  return "GET " + url + ": HTTP " + std::to_string(a.status) + (body.empty() ? "" : ": " + body);
}

int UsageError(FILE* err, const std::string& message) {
  std::fprintf(err, "Error: %s\n%s\n", message.c_str(), kUsageHint);
  return 2;
}

int RequestError(FILE* err, const std::string& message) {
  std::fprintf(err, "Error: %s\n", message.c_str());
  return 1;
}

}  // namespace

StatusOr<ExplainOptions> ParseExplainFlags(int argc, char** argv) {
  ExplainOptions o;
  bool have_pod = false;
  Status parsed = Flags().Parse(argc, argv, o, [&](const std::string& a) {
    if (have_pod) return InvalidArgument("unexpected argument \"" + a + "\": explain takes at most one NAMESPACE/NAME");
    have_pod = true;
    return SetPod(a, o);
  });
  if (!parsed.ok()) return parsed;
  // As kubectl: a CA and no verification contradict each other.
  if (o.insecure_skip_tls_verify && !o.certificate_authority.empty())
    return InvalidArgument("--certificate-authority and --insecure-skip-tls-verify cannot be used together");
  return o;
}

std::string ExplainUsage() {
  std::string u =
      "Why a pod is pending, or where it went: asks a running ksched on its secure port.\n"
      "\n"
      "With NAMESPACE/NAME (or NAME, in namespace default): the verdict of the pod's last\n"
      "scheduling attempt (the plugins that rejected it and on how many nodes, the nodes one\n"
      "fix away, the events that would retry it), or the node it went to and the scores that\n"
      "put it there. Without: every pending pod of ksched's profiles, stuck ones first.\n"
      "Times are UTC. The token's user needs get on the nonResourceURLs /debug/pods and\n"
      "/debug/pods/*.\n"
      "\n"
      "Usage:\n"
      "  ksched explain [NAMESPACE/NAME] [flags]\n"
      "\n"
      "Examples:\n"
      "  ksched explain default/big --token-file /path/to/token --certificate-authority ca.crt\n"
      "  ksched explain --kubeconfig ~/.kube/config --insecure-skip-tls-verify -o json\n"
      "\n"
      "Flags:\n";
  return u + Flags().Usage();
}

StatusOr<std::string> LoadExplainToken(const ExplainOptions& o) {
  if (!o.token.empty()) return o.token;
  if (!o.token_file.empty()) return client::ReadTokenFile(o.token_file, "--token-file");
  if (o.kubeconfig.empty()) return std::string();
  // --server stands in for the cluster's server, which may be absent and is not used.
  auto rc = client::LoadKubeconfig(o.kubeconfig, "", o.server);
  if (!rc.ok()) return rc.status();  // "kubeconfig <path>: ..."
  if (!rc->bearer_token.empty()) return rc->bearer_token;
  if (!rc->token_file.empty()) return client::ReadTokenFile(rc->token_file, "--kubeconfig: tokenFile");
  return InvalidArgument("--kubeconfig " + o.kubeconfig +
                         ": the current context's user has no token or tokenFile (ksched's secure port takes "
                         "bearer tokens only)");
}

int RunExplain(int argc, char** argv, FILE* out, FILE* err) {
  auto options = ParseExplainFlags(argc, argv);
  if (!options.ok()) return UsageError(err, options.status().message());
  const ExplainOptions& o = *options;
  if (o.help) {
    std::fputs(ExplainUsage().c_str(), out);
    return 0;
  }
  auto token = LoadExplainToken(o);
  if (!token.ok()) return UsageError(err, token.status().message());
  std::string ca_pem;
  if (!o.certificate_authority.empty()) {
    auto pem = client::ReadFile(o.certificate_authority, "--certificate-authority");
    if (!pem.ok()) return UsageError(err, pem.status().message());
    ca_pem = std::move(*pem);
  }

  const bool list = o.pod_name.empty();
  const std::string path = list ? "/debug/pods" : "/debug/pods/" + Escape(o.pod_namespace) + "/" + Escape(o.pod_name);
  const std::string url = o.server + path;
  auto answer = Get(o, *token, ca_pem, url);
  if (!answer.ok()) return RequestError(err, answer.status().message());
  if (answer->status != 200) return RequestError(err, AnswerError(o, url, path, !token->empty(), *answer));

  if (o.output == ExplainOutput::kJson) {
    std::fputs(answer->body.c_str(), out);
    if (answer->body.empty() || answer->body.back() != '\n') std::fputc('\n', out);
    return 0;
  }
  const RenderOptions render{.now = std::chrono::system_clock::now()};
  auto text = list ? RenderPodListText(answer->body, render) : RenderPodText(answer->body, render);
  if (!text.ok()) return RequestError(err, "reading the answer of GET " + url + ": " + text.status().message());
  std::fputs(text->c_str(), out);
  return 0;
}

}  // namespace ksched::cmd
