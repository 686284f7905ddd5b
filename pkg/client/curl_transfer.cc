#include "pkg/client/curl_transfer.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>

namespace ksched::client::curl_internal {

bool IsConnectionError(CURLcode c) {
  switch (c) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
      return true;
    default:
      return false;
  }
}

bool HasBody(const Request& r) {
  return r.verb == Verb::kPost || r.verb == Verb::kPut || r.verb == Verb::kPatch ||
         (r.verb == Verb::kDelete && !r.body.empty());
}

Status StatusFromCurl(CURLcode c, const char* errbuf) {
  std::string msg = errbuf && *errbuf ? errbuf : curl_easy_strerror(c);
  if (c == CURLE_OPERATION_TIMEDOUT) return {StatusCode::kDeadlineExceeded, msg};
  if (c == CURLE_PEER_FAILED_VERIFICATION || c == CURLE_SSL_CACERT_BADFILE || c == CURLE_SSL_CERTPROBLEM)
    return {StatusCode::kUnavailable, "TLS: " + msg};
  return {StatusCode::kUnavailable, msg};
}

// ---- libcurl's callbacks of one transfer ------------------------------------------

namespace {

void DeliverLine(Transfer& t, std::string_view line) {
  if (line.empty() || (line.size() == 1 && line[0] == '\r')) return;
  MutexLock lock(t.watch->cb_mu);
  if (!t.watch->cancelled.load() && t.watch->callbacks.on_line) t.watch->callbacks.on_line(line);
}


// CURLOPT_HEADERFUNCTION: reads Retry-After.
size_t OnHeader(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  std::string_view h(data, size * n);
  constexpr std::string_view kRetryAfter = "retry-after:";
  if (h.size() > kRetryAfter.size() &&
      std::equal(kRetryAfter.begin(), kRetryAfter.end(), h.begin(),
                 [](char a, char b) { return a == std::tolower(static_cast<unsigned char>(b)); })) {
    long v = std::strtol(std::string(h.substr(kRetryAfter.size())).c_str(), nullptr, 10);
    if (v >= 0) t->retry_after = std::min(v, kMaxRetryAfterSeconds);
  }
  return size * n;
}

// CURLOPT_WRITEFUNCTION: collects the body, or hands a watch's lines to on_line.
size_t OnData(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t len = size * n;
  if (!t->watch || t->ResponseCode() != 200) {
    if (t->body.size() + len > t->max_body) {
      t->body_overflow = true;
      return 0;  // aborts the transfer
    }
    t->body.append(data, len);
    return len;
  }
  // A watch: deliver each complete line.
  std::string_view chunk(data, len);
  while (!chunk.empty()) {
    size_t nl = chunk.find('\n');
    if (nl == std::string_view::npos) {
      if (t->line.size() + chunk.size() > t->max_line) {
        t->body_overflow = true;
        return 0;
      }
      t->line.append(chunk);
      break;
    }
    std::string_view piece = chunk.substr(0, nl);
    chunk.remove_prefix(nl + 1);
    if (t->line.empty()) {
      DeliverLine(*t, piece);
    } else {
      t->line.append(piece);
      DeliverLine(*t, t->line);
      t->line.clear();
    }
  }
  return len;
}

}  // namespace

// ---- PendingCount ------------------------------------------------------------------

void PendingCount::Add() {
  MutexLock lock(mu_);
  ++n_;
}

void PendingCount::Done() {
  MutexLock lock(mu_);
  if (--n_ == 0) idle_.notify_all();
}

bool PendingCount::WaitIdle(std::chrono::milliseconds timeout) {
  MutexLock lock(mu_);
  return idle_.wait_for(lock, timeout, [this]() REQUIRES(mu_) { return n_ == 0; });
}

// ---- Transfer ----------------------------------------------------------------------

Transfer::~Transfer() {
  if (headers) curl_slist_free_all(headers);
  if (easy) curl_easy_cleanup(easy);
  if (pending) pending->Done();
}

void Transfer::BeginAttempt() {
  ++attempt;
  body.clear();
  line.clear();
  retry_after = -1;
  body_overflow = false;
  errbuf[0] = 0;
}

long Transfer::ResponseCode() const {
  long code = 0;
  curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &code);
  return code;
}

Status Transfer::WatchEndStatus(CURLcode rc, long code) const {
  if (body_overflow) return {StatusCode::kOutOfRange, "watch event larger than the line limit"};
  if (rc != CURLE_OK) return StatusFromCurl(rc, errbuf);
  if (code != 200) return StatusFromHttp(code, body);
  return Status();
}

void Transfer::CloseWatch(const Status& s) {
  MutexLock lock(watch->cb_mu);
  if (!watch->cancelled.load() && watch->callbacks.on_close) watch->callbacks.on_close(s);
}

// ---- TransferSetup -----------------------------------------------------------------

TransferSetup::TransferSetup(const RestConfig& config, const CurlClientOptions& options)
    : config_(config),
      options_(options),
      user_agent_(config.user_agent.empty() ? DefaultUserAgent() : config.user_agent),
      basic_auth_(config.username.empty() ? "" : Base64Encode(config.username + ":" + config.password)) {
  if (!config_.tls_server_name.empty() && config_.server.rfind("https://", 0) == 0) SetUpTlsServerName();
}

TransferSetup::~TransferSetup() {
  if (connect_to_) curl_slist_free_all(connect_to_);
}

// libcurl takes both SNI and the name it verifies from the URL's host (the native
// HTTP/2 session sets them itself), so the URL carries the TLS name and
// CURLOPT_CONNECT_TO maps it to the real host and port.
void TransferSetup::SetUpTlsServerName() {
  std::string_view rest = std::string_view(config_.server).substr(std::strlen("https://"));
  size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
  std::string host, port;
  if (!authority.empty() && authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return;  // rejected when the first request fails
    host = std::string(authority.substr(0, close + 1));  // stays bracketed for CONNECT_TO
    if (close + 2 <= authority.size()) port = std::string(authority.substr(close + 2));
  } else {
    size_t colon = authority.rfind(':');
    host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port = std::string(authority.substr(colon + 1));
  }
  if (port.empty()) port = "443";
  tls_server_url_ = "https://" + config_.tls_server_name + ":" + port + std::string(path);
  connect_to_ = curl_slist_append(nullptr, (config_.tls_server_name + ":" + port + ":" + host + ":" + port).c_str());
}

// See CurlClientOptions::tcp_user_timeout.
int TransferSetup::OnSocketOpen(void* self_ptr, curl_socket_t fd, curlsocktype purpose) {
  auto* self = static_cast<TransferSetup*>(self_ptr);
  if (purpose == CURLSOCKTYPE_IPCXN) {
    unsigned int ms = static_cast<unsigned int>(self->options_.tcp_user_timeout.count());
    setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ms, sizeof(ms));  // fails harmlessly off TCP
  }
  return CURL_SOCKOPT_OK;
}

void TransferSetup::SetUpEasy(Transfer& t, const std::string& token) const {
  if (t.easy) curl_easy_cleanup(t.easy);
  if (t.headers) curl_slist_free_all(t.headers);
  t.headers = nullptr;
  CURL* e = t.easy = curl_easy_init();
  const Request& r = t.req;
  std::string url = (connect_to_ ? tls_server_url_ : config_.server) + r.path;
  curl_easy_setopt(e, CURLOPT_URL, url.c_str());
  // tls-server-name: the URL names that host, so libcurl sends it as SNI and verifies the
  // certificate against it, and CONNECT_TO sends the connection to the real server.
  if (connect_to_) curl_easy_setopt(e, CURLOPT_CONNECT_TO, connect_to_);
  curl_easy_setopt(e, CURLOPT_SOCKOPTFUNCTION, &TransferSetup::OnSocketOpen);
  curl_easy_setopt(e, CURLOPT_SOCKOPTDATA, const_cast<TransferSetup*>(this));
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t.errbuf);
  curl_easy_setopt(e, CURLOPT_USERAGENT, user_agent_.c_str());
  if (options_.http2) {
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS);
    curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
  }
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(kConnectTimeout.count()));
  curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(e, CURLOPT_TCP_KEEPIDLE, static_cast<long>(options_.tcp_keepalive_idle.count()));
  curl_easy_setopt(e, CURLOPT_TCP_KEEPINTVL, 5L);
  if (!t.watch) {
    auto timeout = r.timeout.count() > 0 ? r.timeout : config_.timeout;
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
  }
  // TLS: verify against the configured CA (in memory), present a client cert if any.
  if (config_.insecure_skip_tls_verify) {
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
  } else if (!config_.ca_pem.empty()) {
    curl_blob ca{const_cast<char*>(config_.ca_pem.data()), config_.ca_pem.size(), CURL_BLOB_NOCOPY};
    curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, &ca);
  }
  if (!config_.client_cert_pem.empty()) {
    curl_blob cert{const_cast<char*>(config_.client_cert_pem.data()), config_.client_cert_pem.size(),
                   CURL_BLOB_NOCOPY};
    curl_blob key{const_cast<char*>(config_.client_key_pem.data()), config_.client_key_pem.size(),
                  CURL_BLOB_NOCOPY};
    curl_easy_setopt(e, CURLOPT_SSLCERT_BLOB, &cert);
    curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
    curl_easy_setopt(e, CURLOPT_SSLKEY_BLOB, &key);
    curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM");
  }
  if (!config_.username.empty()) {
    curl_easy_setopt(e, CURLOPT_USERNAME, config_.username.c_str());
    curl_easy_setopt(e, CURLOPT_PASSWORD, config_.password.c_str());
  }
  t.headers = curl_slist_append(t.headers, "Accept: application/json");
  if (!token.empty()) t.headers = curl_slist_append(t.headers, ("Authorization: Bearer " + token).c_str());
  if (r.verb != Verb::kGet && r.verb != Verb::kPost)
    curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, VerbName(r.verb).data());
  if (HasBody(r)) {
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, r.body.data());
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(r.body.size()));
    t.headers = curl_slist_append(t.headers, ("Content-Type: " + r.content_type).c_str());
    // Over HTTP/1.1 libcurl asks a body over 1 KiB to wait for "100 Continue", up to a
    // second when the server sends none (Go's net/http client never asks): sent at once.
    t.headers = curl_slist_append(t.headers, "Expect:");
  }
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, t.headers);
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &OnHeader);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &OnData);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(e, CURLOPT_PRIVATE, &t);
}

void TransferSetup::SetUpH2(Transfer& t, const std::string& token, Clock::time_point now) const {
  const Request& r = t.req;
  H2Exchange& ex = t.h2;
  ex.method = VerbName(r.verb);
  ex.path = r.path;
  ex.has_body = HasBody(r);
  ex.body = r.body;
  auto timeout = r.timeout.count() > 0 ? r.timeout : config_.timeout;
  ex.deadline = now + timeout;
  ex.max_body = t.max_body;
  ex.user = &t;
  ex.headers.clear();
  ex.headers.emplace_back("accept", "application/json");
  ex.headers.emplace_back("user-agent", user_agent_);
  if (!token.empty()) {
    ex.headers.emplace_back("authorization", "Bearer " + token);
  } else if (!config_.username.empty()) {
    ex.headers.emplace_back("authorization", "Basic " + basic_auth_);
  }
  if (ex.has_body) {
    ex.headers.emplace_back("content-type", r.content_type);
    ex.headers.emplace_back("content-length", std::to_string(r.body.size()));
  }
}

}  // namespace ksched::client::curl_internal
