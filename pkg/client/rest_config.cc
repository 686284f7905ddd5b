#include "pkg/client/rest_config.h"

#include "pkg/util/strings.h"

#include <openssl/evp.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace ksched::client {
namespace {

constexpr auto kTokenRereadInterval = std::chrono::minutes(1);
constexpr size_t kMaxFileBytes = 16 << 20;

std::string Resolve(const std::filesystem::path& base, const std::string& p) {
  if (p.empty() || std::filesystem::path(p).is_absolute()) return p;
  return (base / p).string();
}

std::string Scalar(const YAML::Node& n, const char* key) {
  auto v = n[key];
  return v && v.IsScalar() ? v.as<std::string>() : std::string();
}

// Finds the entry named `name` in a kubeconfig list (clusters, users, contexts) and
// returns its `inner` map.
StatusOr<YAML::Node> FindNamed(const YAML::Node& root, const char* list, const char* inner, const std::string& name) {
  auto seq = root[list];
  if (seq && seq.IsSequence()) {
    for (const auto& item : seq) {
      if (item.IsMap() && Scalar(item, "name") == name) {
        auto n = item[inner];
        if (!n || !n.IsMap()) return YAML::Node(YAML::NodeType::Map);
        return n;
      }
    }
  }
  return InvalidArgument(std::string("kubeconfig: ") + list + ": no entry named \"" + name + "\"");
}

// Fills a PEM field from either "<field>-data" (base64) or "<field>" (a file path).
Status LoadPem(const YAML::Node& n, const std::string& field, const std::filesystem::path& base, std::string* out) {
  if (auto data = Scalar(n, (field + "-data").c_str()); !data.empty()) {
    auto pem = Base64Decode(data, field + "-data");
    if (!pem.ok()) return pem.status().WithContext("kubeconfig");
    *out = std::move(*pem);
    return Status::OK();
  }
  if (auto file = Scalar(n, field.c_str()); !file.empty()) {
    auto pem = ReadFile(Resolve(base, file), "kubeconfig: " + field);
    if (!pem.ok()) return pem.status();
    *out = std::move(*pem);
  }
  return Status::OK();
}

}  // namespace

StatusOr<std::string> ReadFile(const std::string& path, std::string_view what) {
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  if (ec) return InvalidArgument(std::string(what) + ": cannot read " + path + ": " + ec.message());
  if (size > kMaxFileBytes) return InvalidArgument(std::string(what) + ": " + path + " is too large");
  // Read at most one byte past the limit: files that report size 0 (/proc, pipes) must
  // not be read without bound either.
  std::ifstream in(path, std::ios::binary);
  if (!in) return InvalidArgument(std::string(what) + ": cannot read " + path);
  std::string out;
  char buf[65536];
  while (in.read(buf, sizeof(buf)) || in.gcount() > 0) {
    out.append(buf, static_cast<size_t>(in.gcount()));
    if (out.size() > kMaxFileBytes) return InvalidArgument(std::string(what) + ": " + path + " is too large");
  }
  if (in.bad()) return InvalidArgument(std::string(what) + ": cannot read " + path);
  return out;
}

StatusOr<std::string> ReadTokenFile(const std::string& path, std::string_view what) {
  auto t = ReadFile(path, what);
  if (!t.ok()) return t;
  std::string tok = std::move(*t);
  while (!tok.empty() && std::isspace(static_cast<unsigned char>(tok.back()))) tok.pop_back();
  return tok;
}

std::string DefaultUserAgent() { return "ksched/0.1.0 (linux/amd64)"; }

std::string JoinHostPort(const std::string& scheme, const std::string& host, const std::string& port) {
  bool v6 = host.find(':') != std::string::npos && host.front() != '[';
  return scheme + "://" + (v6 ? "[" + host + "]" : host) + ":" + port;
}

namespace {

// The body of LoadKubeconfig / ParseKubeconfig; `what` starts every error message
// ("kubeconfig /path/to/file" or just "kubeconfig").
StatusOr<RestConfig> ParseKubeconfigText(std::string_view yaml, const std::filesystem::path& base,
                                         const std::string& what, const std::string& context,
                                         const std::string& master) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return InvalidArgument(what + ": " + e.what());
  }
  if (!root.IsMap()) return InvalidArgument(what + ": not a map");
  RestConfig cfg;
  cfg.user_agent = DefaultUserAgent();
  try {
    std::string ctx_name = context.empty() ? Scalar(root, "current-context") : context;
    if (ctx_name.empty()) return InvalidArgument(what + ": no current-context and no --context");
    auto ctx = FindNamed(root, "contexts", "context", ctx_name);
    if (!ctx.ok()) return ctx.status();
    auto cluster = FindNamed(root, "clusters", "cluster", Scalar(*ctx, "cluster"));
    if (!cluster.ok()) return cluster.status();
    cfg.server = master.empty() ? Scalar(*cluster, "server") : master;
    while (!cfg.server.empty() && cfg.server.back() == '/') cfg.server.pop_back();
    if (cfg.server.empty()) return InvalidArgument(what + ": cluster has no server and no --master given");
    auto server = NormalizeServerUrl(cfg.server);
    if (!server.ok()) return server.status().WithContext(what);
    cfg.server = std::move(*server);
    cfg.insecure_skip_tls_verify = Scalar(*cluster, "insecure-skip-tls-verify") == "true";
    cfg.tls_server_name = Scalar(*cluster, "tls-server-name");
    if (auto s = LoadPem(*cluster, "certificate-authority", base, &cfg.ca_pem); !s.ok()) return s;

    if (auto user_name = Scalar(*ctx, "user"); !user_name.empty()) {
      auto user = FindNamed(root, "users", "user", user_name);
      if (!user.ok()) return user.status();
      cfg.bearer_token = Scalar(*user, "token");
      cfg.token_file = Resolve(base, Scalar(*user, "tokenFile"));
      cfg.username = Scalar(*user, "username");
      cfg.password = Scalar(*user, "password");
      if (auto s = LoadPem(*user, "client-certificate", base, &cfg.client_cert_pem); !s.ok()) return s;
      if (auto s = LoadPem(*user, "client-key", base, &cfg.client_key_pem); !s.ok()) return s;
      if (cfg.client_cert_pem.empty() != cfg.client_key_pem.empty())
        return InvalidArgument(what + ": user \"" + user_name +
                               "\" has a client certificate without a key, or a key without a certificate");
      if (!cfg.token_file.empty() && cfg.bearer_token.empty()) {
        auto t = ReadFile(cfg.token_file, "kubeconfig: tokenFile");
        if (!t.ok()) return t.status();
      }
    }
  } catch (const YAML::Exception& e) {
    return InvalidArgument(what + ": " + e.what());
  }
  return cfg;
}

}  // namespace

StatusOr<std::string> NormalizeServerUrl(std::string_view server) {
  const std::string quoted = Quoted(server);
  auto bad = [&](std::string_view why) {
    return InvalidArgument("invalid server URL " + quoted + ": " + std::string(why));
  };
  for (char c : server) {
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) return bad("contains whitespace or a control character");
  }
  std::string url(server);
  // A bare host[:port] means https, as client-go's DefaultServerURL reads it.
  if (url.find("://") == std::string::npos) url = "https://" + url;
  size_t scheme_end = url.find("://");
  std::string scheme = url.substr(0, scheme_end);
  if (scheme != "https" && scheme != "http") return bad("scheme must be https or http");
  std::string_view rest = std::string_view(url).substr(scheme_end + 3);
  std::string_view authority = rest.substr(0, rest.find_first_of("/?#"));
  if (authority.find('@') != std::string_view::npos) return bad("user information in the URL is not supported");
  std::string_view host = authority, port;
  if (!authority.empty() && authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return bad("unterminated IPv6 address");
    host = authority.substr(1, close - 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return bad("junk after the IPv6 address");
      port = after.substr(1);
    }
  } else if (size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
    if (host.find(':') != std::string_view::npos) return bad("an IPv6 address must be in brackets");
  }
  if (host.empty()) return bad("no host");
  for (char c : host) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_' || c == ':' ||
                    c == '%';
    if (!ok) return bad("invalid character in the host");
  }
  if (authority.back() == ':') return bad("empty port");
  if (!port.empty()) {
    if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string_view::npos ||
        std::stoi(std::string(port)) < 1 || std::stoi(std::string(port)) > 65535)
      return bad("port must be a number from 1 to 65535");
  }
  return url;
}

StatusOr<RestConfig> LoadKubeconfig(const std::string& path, const std::string& context, const std::string& master) {
  auto text = ReadFile(path, "kubeconfig");
  if (!text.ok()) return text.status();
  return ParseKubeconfigText(*text, std::filesystem::path(path).parent_path(), "kubeconfig " + path, context,
                             master);
}

StatusOr<RestConfig> ParseKubeconfig(std::string_view yaml, const std::string& dir, const std::string& context,
                                     const std::string& master) {
  return ParseKubeconfigText(yaml, dir, "kubeconfig", context, master);
}

StatusOr<RestConfig> InClusterConfig(const std::string& sa_dir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (!host || !*host || !port || !*port)
    return InvalidArgument(
        "unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined");
  RestConfig cfg;
  cfg.user_agent = DefaultUserAgent();
  cfg.server = JoinHostPort("https", host, port);
  cfg.token_file = sa_dir + "/token";
  auto token = ReadFile(cfg.token_file, "in-cluster token");
  if (!token.ok()) return token.status();
  auto ca = ReadFile(sa_dir + "/ca.crt", "in-cluster CA");
  if (!ca.ok()) return ca.status();
  cfg.ca_pem = std::move(*ca);
  return cfg;
}

TokenSource::TokenSource(const RestConfig& config, Clock& clock)
    : clock_(clock), fixed_(config.bearer_token), file_(config.bearer_token.empty() ? config.token_file : "") {}

std::string TokenSource::Token() {
  if (file_.empty()) return fixed_;
  MutexLock lock(mu_);
  auto now = clock_.Now();
  if (!valid_ || now - read_at_ >= kTokenRereadInterval) {
    auto t = ReadTokenFile(file_, "token file");
    if (t.ok()) {
      cached_ = std::move(*t);
      read_at_ = now;
      valid_ = true;
    }
    // On a read error keep the last good token; the file may be mid-rotation.
  }
  return cached_;
}

void TokenSource::Invalidate() {
  MutexLock lock(mu_);
  valid_ = false;
}

// Go's base64.StdEncoding.DecodeString, which client-go uses for the kubeconfig's *-data
// fields, except that any whitespace is skipped (Go skips only '\r' and '\n'). Written out
// rather than with OpenSSL's EVP_DecodeBlock, which reads '=' anywhere as zero bits and
// drops trailing '-' characters, so it accepted "====" and "QUJD----" (found by
// tests/fuzz/fuzz_base64). Like Go's non-strict decoding, unused low bits of the last
// symbol are ignored.
StatusOr<std::string> Base64Decode(std::string_view in, std::string_view field) {
  auto invalid = [&] { return InvalidArgument(std::string(field) + ": invalid base64 data"); };
  auto symbol = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  out.reserve(in.size() / 4 * 3);
  uint32_t bits = 0;  // the symbols of the current quantum
  int symbols = 0;
  int padding = 0;
  for (char c : in) {
    if (std::isspace(static_cast<unsigned char>(c))) continue;
    if (c == '=') {
      ++padding;
      continue;
    }
    int v = symbol(c);
    if (v < 0 || padding > 0) return invalid();  // not base64, or data after the padding
    bits = bits << 6 | static_cast<uint32_t>(v);
    if (++symbols == 4) {
      out += static_cast<char>(bits >> 16 & 0xff);
      out += static_cast<char>(bits >> 8 & 0xff);
      out += static_cast<char>(bits & 0xff);
      bits = 0;
      symbols = 0;
    }
  }
  // A final quantum of two or three symbols needs exactly two or one '='.
  if (symbols == 0 && padding == 0) return out;
  if (symbols == 2 && padding == 2) {
    out += static_cast<char>(bits >> 4 & 0xff);
    return out;
  }
  if (symbols == 3 && padding == 1) {
    out += static_cast<char>(bits >> 10 & 0xff);
    out += static_cast<char>(bits >> 2 & 0xff);
    return out;
  }
  return invalid();
}

std::string Base64Encode(std::string_view in) {
  std::string out(4 * ((in.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(in.data()), static_cast<int>(in.size()));
  out.resize(static_cast<size_t>(std::max(n, 0)));
  return out;
}

}  // namespace ksched::client
