#include "informers/rest_config.h"

#include <openssl/evp.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace ksched::informers {
namespace {

constexpr auto kTokenRereadInterval = std::chrono::minutes(1);
constexpr size_t kMaxFileBytes = 16 << 20;

StatusOr<std::string> ReadFile(const std::string& path, std::string_view what) {
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  if (ec) return InvalidArgument(std::string(what) + ": cannot read " + path + ": " + ec.message());
  if (size > kMaxFileBytes) return InvalidArgument(std::string(what) + ": " + path + " is too large");
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  if (!in && !in.eof()) return InvalidArgument(std::string(what) + ": cannot read " + path);
  return ss.str();
}

StatusOr<std::string> Base64Decode(const std::string& in, std::string_view field) {
  std::string clean;
  clean.reserve(in.size());
  for (char c : in) {
    if (!std::isspace(static_cast<unsigned char>(c))) clean.push_back(c);
  }
  if (clean.size() % 4 != 0) return InvalidArgument(std::string(field) + ": invalid base64 data");
  std::string out(clean.size() / 4 * 3, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(clean.data()), static_cast<int>(clean.size()));
  if (n < 0) return InvalidArgument(std::string(field) + ": invalid base64 data");
  size_t pad = 0;
  if (!clean.empty() && clean.back() == '=') ++pad;
  if (clean.size() > 1 && clean[clean.size() - 2] == '=') ++pad;
  out.resize(static_cast<size_t>(n) - pad);
  return out;
}

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

std::string DefaultUserAgent() { return "ksched/0.1.0 (linux/amd64)"; }

std::string JoinHostPort(const std::string& scheme, const std::string& host, const std::string& port) {
  bool v6 = host.find(':') != std::string::npos && host.front() != '[';
  return scheme + "://" + (v6 ? "[" + host + "]" : host) + ":" + port;
}

StatusOr<RestConfig> LoadKubeconfig(const std::string& path, const std::string& context, const std::string& master) {
  auto text = ReadFile(path, "kubeconfig");
  if (!text.ok()) return text.status();
  YAML::Node root;
  try {
    root = YAML::Load(*text);
  } catch (const YAML::Exception& e) {
    return InvalidArgument("kubeconfig " + path + ": " + e.what());
  }
  if (!root.IsMap()) return InvalidArgument("kubeconfig " + path + ": not a map");
  const std::filesystem::path base = std::filesystem::path(path).parent_path();
  RestConfig cfg;
  cfg.user_agent = DefaultUserAgent();
  try {
    std::string ctx_name = context.empty() ? Scalar(root, "current-context") : context;
    if (ctx_name.empty()) return InvalidArgument("kubeconfig " + path + ": no current-context and no --context");
    auto ctx = FindNamed(root, "contexts", "context", ctx_name);
    if (!ctx.ok()) return ctx.status();
    auto cluster = FindNamed(root, "clusters", "cluster", Scalar(*ctx, "cluster"));
    if (!cluster.ok()) return cluster.status();
    cfg.server = master.empty() ? Scalar(*cluster, "server") : master;
    while (!cfg.server.empty() && cfg.server.back() == '/') cfg.server.pop_back();
    if (cfg.server.empty()) return InvalidArgument("kubeconfig " + path + ": cluster has no server and no --master given");
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
        return InvalidArgument("kubeconfig " + path + ": user \"" + user_name +
                               "\" has a client certificate without a key, or a key without a certificate");
      if (!cfg.token_file.empty() && cfg.bearer_token.empty()) {
        auto t = ReadFile(cfg.token_file, "kubeconfig: tokenFile");
        if (!t.ok()) return t.status();
      }
    }
  } catch (const YAML::Exception& e) {
    return InvalidArgument("kubeconfig " + path + ": " + e.what());
  }
  return cfg;
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
    auto t = ReadFile(file_, "token file");
    if (t.ok()) {
      std::string tok = std::move(*t);
      while (!tok.empty() && std::isspace(static_cast<unsigned char>(tok.back()))) tok.pop_back();
      cached_ = std::move(tok);
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

std::string Base64Encode(std::string_view in) {
  std::string out(4 * ((in.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(in.data()), static_cast<int>(in.size()));
  out.resize(static_cast<size_t>(std::max(n, 0)));
  return out;
}

}  // namespace ksched::informers
