#include "pkg/client/h2_session.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <nghttp2/nghttp2.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "pkg/util/log.h"
#include "pkg/util/mutex.h"

namespace ksched::client {
namespace {

constexpr int32_t kStreamWindow = 16 << 20;      // per stream: a large LIST in few round trips
constexpr int32_t kConnectionWindow = 64 << 20;  // the whole connection
constexpr size_t kWriteChunk = 64 << 10;         // frames gathered into one TLS write

std::string TlsError(std::string_view what) {
  std::string msg(what);
  unsigned long e;
  bool first = true;
  while ((e = ERR_get_error()) != 0) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof(buf));
    msg += first ? ": " : "; ";
    msg += buf;
    first = false;
  }
  return msg;
}

std::string SysError(std::string_view what, int err) { return std::string(what) + ": " + std::strerror(err); }

// Certificates in a PEM blob, in order.
std::vector<X509*> ReadCerts(const std::string& pem) {
  std::vector<X509*> out;
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  while (X509* x = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) out.push_back(x);
  BIO_free(bio);
  ERR_clear_error();  // the read that ends the loop leaves "no start line"
  return out;
}

nghttp2_nv Nv(std::string_view name, std::string_view value) {
  return {reinterpret_cast<uint8_t*>(const_cast<char*>(name.data())),
          reinterpret_cast<uint8_t*>(const_cast<char*>(value.data())), name.size(), value.size(),
          NGHTTP2_NV_FLAG_NONE};
}

}  // namespace

struct H2Callbacks {
  static H2Exchange* Exchange(nghttp2_session* s, int32_t id) {
    return static_cast<H2Exchange*>(nghttp2_session_get_stream_user_data(s, id));
  }

  static int OnHeader(nghttp2_session* s, const nghttp2_frame* frame, const uint8_t* name, size_t namelen,
                      const uint8_t* value, size_t valuelen, uint8_t /*flags*/, void* /*self*/) {
    if (frame->hd.type != NGHTTP2_HEADERS) return 0;
    H2Exchange* ex = Exchange(s, frame->hd.stream_id);
    if (!ex) return 0;
    std::string_view n(reinterpret_cast<const char*>(name), namelen);
    std::string_view v(reinterpret_cast<const char*>(value), valuelen);
    auto number = [&] {
      long x = 0;
      for (char c : v) {
        if (c < '0' || c > '9' || x > 1'000'000) return -1L;
        x = x * 10 + (c - '0');
      }
      return v.empty() ? -1L : x;
    };
    if (n == ":status") ex->status = number();
    else if (n == "retry-after") ex->retry_after = number();
    return 0;
  }

  static int OnFrameRecv(nghttp2_session* s, const nghttp2_frame* frame, void* self_ptr) {
    auto* self = static_cast<H2Session*>(self_ptr);
    if (frame->hd.type == NGHTTP2_GOAWAY) {
      // Streams past last_stream_id are closed as refused by nghttp2; new ones wait for
      // the next connection.
      self->draining_ = true;
      return 0;
    }
    if ((frame->hd.type == NGHTTP2_DATA || frame->hd.type == NGHTTP2_HEADERS) &&
        (frame->hd.flags & NGHTTP2_FLAG_END_STREAM)) {
      if (H2Exchange* ex = Exchange(s, frame->hd.stream_id)) ex->end_stream_received = true;
    }
    return 0;
  }

  static int OnDataChunk(nghttp2_session* s, uint8_t /*flags*/, int32_t id, const uint8_t* data, size_t len,
                         void* /*self*/) {
    H2Exchange* ex = Exchange(s, id);
    if (!ex || ex->overflow) return 0;
    if (ex->response.size() + len > ex->max_body) {
      ex->overflow = true;
      nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, id, NGHTTP2_CANCEL);
      return 0;
    }
    ex->response.append(reinterpret_cast<const char*>(data), len);
    return 0;
  }

  static int OnStreamClose(nghttp2_session* s, int32_t id, uint32_t error_code, void* self_ptr) {
    auto* self = static_cast<H2Session*>(self_ptr);
    H2Exchange* ex = Exchange(s, id);
    if (!ex) return 0;  // finished already (its deadline passed)
    self->streams_.erase(id);
    if (ex->overflow) {
      self->Finish(ex, H2End::kOverflow);
    } else if (ex->end_stream_received && ex->status > 0) {
      self->Finish(ex, H2End::kResponse);
    } else if (error_code == NGHTTP2_REFUSED_STREAM) {
      self->Finish(ex, H2End::kRefused);
    } else {
      self->Finish(ex, H2End::kConnectionError,
                   std::string("HTTP/2 stream reset: ") + nghttp2_http2_strerror(error_code));
    }
    return 0;
  }

  static ssize_t ReadBody(nghttp2_session* /*s*/, int32_t /*id*/, uint8_t* buf, size_t length,
                          uint32_t* data_flags, nghttp2_data_source* source, void* /*self*/) {
    auto* ex = static_cast<H2Exchange*>(source->ptr);
    size_t n = std::min(length, ex->body.size() - ex->sent);
    std::memcpy(buf, ex->body.data() + ex->sent, n);
    ex->sent += n;
    if (ex->sent == ex->body.size()) *data_flags |= NGHTTP2_DATA_FLAG_EOF;
    return static_cast<ssize_t>(n);
  }
};

H2Session::H2Session(const RestConfig& config, H2SessionOptions options, Clock& clock, DoneFn done)
    : config_(config), options_(options), clock_(clock), done_(std::move(done)) {}

StatusOr<std::unique_ptr<H2Session>> H2Session::Create(const RestConfig& config, H2SessionOptions options,
                                                       Clock& clock, DoneFn done) {
  std::unique_ptr<H2Session> s(new H2Session(config, options, clock, std::move(done)));
  if (Status st = s->Init(); !st.ok()) return st;
  return s;
}

Status H2Session::Init() {
  // https://host[:port][/prefix]; IPv6 literals in brackets.
  std::string_view rest(config_.server);
  if (rest.substr(0, 8) != "https://") return InvalidArgument("server \"" + config_.server + "\": not https");
  rest.remove_prefix(8);
  const size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  if (authority.empty()) return InvalidArgument("server \"" + config_.server + "\": no host");
  authority_ = std::string(authority);
  if (slash != std::string_view::npos) path_prefix_ = std::string(rest.substr(slash));
  if (authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return InvalidArgument("server \"" + config_.server + "\": bad IPv6 host");
    host_ = std::string(authority.substr(1, close - 1));
    port_ = close + 2 <= authority.size() ? std::string(authority.substr(close + 2)) : "";
  } else {
    size_t colon = authority.rfind(':');
    host_ = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port_ = std::string(authority.substr(colon + 1));
  }
  if (port_.empty()) port_ = "443";
  unsigned char probe[sizeof(in6_addr)];
  host_is_ip_ = inet_pton(AF_INET, host_.c_str(), probe) == 1 || inet_pton(AF_INET6, host_.c_str(), probe) == 1;
  verify_name_ = config_.tls_server_name.empty() ? host_ : config_.tls_server_name;

  ctx_ = SSL_CTX_new(TLS_client_method());
  if (!ctx_) return Status(StatusCode::kInternal, TlsError("SSL_CTX_new"));
  SSL_CTX_set_min_proto_version(ctx_, TLS1_2_VERSION);
  SSL_CTX_set_mode(ctx_, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  static const unsigned char kAlpn[] = {2, 'h', '2'};
  SSL_CTX_set_alpn_protos(ctx_, kAlpn, sizeof(kAlpn));
  if (config_.insecure_skip_tls_verify) {
    SSL_CTX_set_verify(ctx_, SSL_VERIFY_NONE, nullptr);
  } else {
    SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER, nullptr);
    if (config_.ca_pem.empty()) {
      SSL_CTX_set_default_verify_paths(ctx_);
    } else {
      auto certs = ReadCerts(config_.ca_pem);
      if (certs.empty()) return InvalidArgument("certificate-authority: no PEM certificate found");
      X509_STORE* store = SSL_CTX_get_cert_store(ctx_);
      for (X509* x : certs) {
        X509_STORE_add_cert(store, x);
        X509_free(x);
      }
    }
  }
  if (!config_.client_cert_pem.empty()) {
    auto certs = ReadCerts(config_.client_cert_pem);
    if (certs.empty()) return InvalidArgument("client-certificate: no PEM certificate found");
    bool ok = SSL_CTX_use_certificate(ctx_, certs[0]) == 1;
    for (size_t i = 1; i < certs.size(); ++i) ok = ok && SSL_CTX_add1_chain_cert(ctx_, certs[i]) == 1;
    for (X509* x : certs) X509_free(x);
    BIO* bio = BIO_new_mem_buf(config_.client_key_pem.data(), static_cast<int>(config_.client_key_pem.size()));
    EVP_PKEY* key = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
    BIO_free(bio);
    ok = ok && key && SSL_CTX_use_PrivateKey(ctx_, key) == 1 && SSL_CTX_check_private_key(ctx_) == 1;
    EVP_PKEY_free(key);
    if (!ok) return InvalidArgument(TlsError("client certificate and key"));
  }
  return Status::OK();
}

H2Session::~H2Session() {
  Abort();
  if (ctx_) SSL_CTX_free(ctx_);
}

void H2Session::Submit(H2Exchange* ex) {
  ex->stream_id = 0;
  ex->sent = 0;
  ex->status = 0;
  ex->retry_after = -1;
  ex->response.clear();
  ex->end_stream_received = false;
  ex->overflow = false;
  if (not_http2_) {
    Finish(ex, H2End::kNotHttp2);
    return;
  }
  queued_.push_back(ex);
  NoteDeadline(ex->deadline);
}

short H2Session::poll_events() const {
  if (fd_ < 0) return 0;
  if (state_ == State::kConnecting) return POLLOUT;
  return static_cast<short>(POLLIN | (want_write_ ? POLLOUT : 0));
}

void H2Session::Service() {
  Expire();
  Pump();
  Dispatch();
}

void H2Session::Pump() {
  if (state_ == State::kReady) {
    SubmitQueued();
    SendFrames();
  }
  // A connection that went away (GOAWAY, drained, dropped) leaves unsent requests for
  // the next one.
  if (state_ == State::kIdle && !queued_.empty() && !not_http2_) StartConnect();
}

void H2Session::OnReady(short revents) {
  switch (state_) {
    case State::kIdle:
    case State::kResolving:  // no socket yet
      break;
    case State::kConnecting: {
      int err = 0;
      socklen_t len = sizeof(err);
      if (getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
      if (err == EINPROGRESS) break;
      if (err != 0) {
        KLOG_V(2) << "connect to " << authority_ << ": " << std::strerror(err);
        ::close(fd_);
        fd_ = -1;
        if (addrs_.empty()) {
          Close(H2End::kConnectionError, SysError("connect to " + authority_, err), true);
        } else {
          ConnectNext();
        }
        break;
      }
      StartTls();
      break;
    }
    case State::kHandshaking:
      Handshake();
      break;
    case State::kReady:
      if (revents & (POLLIN | POLLHUP | POLLERR)) ReadFrames();
      Pump();
      break;
  }
  Dispatch();
}

namespace {

// How often a running host name lookup is checked for completion.
constexpr auto kResolvePoll = std::chrono::milliseconds(5);

}  // namespace

// getaddrinfo blocks (DNS) and this runs on the client's only I/O thread, which also
// carries every watch. A lookup of a name therefore runs on a detached thread of its
// own, which owns its copy of the inputs; the session polls for the result and simply
// drops it if it gave up (connect timeout, Close) meanwhile. An IP literal is resolved
// in place: AI_NUMERICHOST never blocks.
struct H2Session::Resolution {
  Mutex mu;
  bool done GUARDED_BY(mu) = false;
  int rc GUARDED_BY(mu) = 0;
  std::vector<std::vector<unsigned char>> addrs GUARDED_BY(mu);

  static void Run(const std::shared_ptr<Resolution>& r, const std::string& host, const std::string& port,
                  bool numeric) {
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV | (numeric ? AI_NUMERICHOST : 0);
    addrinfo* res = nullptr;
    int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &res);
    std::vector<std::vector<unsigned char>> addrs;
    if (rc == 0) {
      for (addrinfo* a = res; a; a = a->ai_next) {
        auto* p = reinterpret_cast<unsigned char*>(a->ai_addr);
        addrs.emplace_back(p, p + a->ai_addrlen);
      }
      freeaddrinfo(res);
    }
    MutexLock l(r->mu);
    r->rc = rc;
    r->addrs = std::move(addrs);
    r->done = true;
  }
};

void H2Session::StartConnect() {
  addrs_.clear();
  connect_deadline_ = clock_.Now() + options_.connect_timeout;
  NoteDeadline(connect_deadline_);
  resolution_ = std::make_shared<Resolution>();
  state_ = State::kResolving;
  if (host_is_ip_) {
    Resolution::Run(resolution_, host_, port_, /*numeric=*/true);
  } else {
    std::thread([r = resolution_, host = host_, port = port_] { Resolution::Run(r, host, port, false); }).detach();
  }
  if (!TakeResolution()) NoteDeadline(clock_.Now() + kResolvePoll);
}

bool H2Session::TakeResolution() {
  {
    MutexLock l(resolution_->mu);
    if (!resolution_->done) return false;
    if (resolution_->rc != 0) {
      std::string why = "resolving " + host_ + ": " + gai_strerror(resolution_->rc);
      resolution_.reset();
      Close(H2End::kConnectionError, why, true);
      return true;
    }
    addrs_ = std::move(resolution_->addrs);
  }
  resolution_.reset();
  std::reverse(addrs_.begin(), addrs_.end());  // taken from the back, in resolver order
  ConnectNext();
  return true;
}

void H2Session::CheckHealth(Clock::time_point now) {
  if (state_ != State::kReady) return;
  if (ping_sent_ != Clock::time_point::max()) {
    if (now - ping_sent_ >= options_.ping_timeout) {
      Close(H2End::kConnectionError,
            "no answer to a PING from " + authority_ + " within " +
                std::to_string(std::chrono::duration_cast<std::chrono::seconds>(options_.ping_timeout).count()) + "s",
            false);
      return;
    }
    NoteDeadline(ping_sent_ + options_.ping_timeout);
    return;
  }
  if (now - last_read_ >= options_.read_idle_timeout) {
    nghttp2_submit_ping(session_, NGHTTP2_FLAG_NONE, nullptr);
    ping_sent_ = now;
    NoteDeadline(now + options_.ping_timeout);
    return;  // Service() sends it right after Expire()
  }
  NoteDeadline(last_read_ + options_.read_idle_timeout);
}

void H2Session::ConnectNext() {
  int last_err = ECONNREFUSED;
  while (!addrs_.empty()) {
    std::vector<unsigned char> a = std::move(addrs_.back());
    addrs_.pop_back();
    auto* sa = reinterpret_cast<const sockaddr*>(a.data());
    int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      last_err = errno;
      continue;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
    int idle = static_cast<int>(options_.tcp_keepalive_idle.count()), intvl = 5;
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
    unsigned int user_timeout = static_cast<unsigned int>(options_.tcp_user_timeout.count());
    setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout, sizeof(user_timeout));
    if (connect(fd, sa, static_cast<socklen_t>(a.size())) == 0 || errno == EINPROGRESS) {
      fd_ = fd;
      state_ = State::kConnecting;
      return;
    }
    last_err = errno;
    ::close(fd);
  }
  Close(H2End::kConnectionError, SysError("connect to " + authority_, last_err), true);
}

void H2Session::StartTls() {
  ssl_ = SSL_new(ctx_);
  SSL_set_fd(ssl_, fd_);
  if (!host_is_ip_ || !config_.tls_server_name.empty()) SSL_set_tlsext_host_name(ssl_, verify_name_.c_str());
  if (!config_.insecure_skip_tls_verify) {
    X509_VERIFY_PARAM* param = SSL_get0_param(ssl_);
    if (config_.tls_server_name.empty() && host_is_ip_) {
      X509_VERIFY_PARAM_set1_ip_asc(param, host_.c_str());
    } else {
      X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
      X509_VERIFY_PARAM_set1_host(param, verify_name_.c_str(), 0);
    }
  }
  state_ = State::kHandshaking;
  Handshake();
}

void H2Session::Handshake() {
  ERR_clear_error();
  int rc = SSL_connect(ssl_);
  if (rc != 1) {
    int err = SSL_get_error(ssl_, rc);
    if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
      want_write_ = err == SSL_ERROR_WANT_WRITE;
      return;
    }
    std::string why = TlsError("TLS handshake with " + authority_);
    if (long v = SSL_get_verify_result(ssl_); v != X509_V_OK) why += std::string(": ") + X509_verify_cert_error_string(v);
    Close(H2End::kConnectionError, why, true);
    return;
  }
  want_write_ = false;
  const unsigned char* proto = nullptr;
  unsigned int len = 0;
  SSL_get0_alpn_selected(ssl_, &proto, &len);
  if (len != 2 || std::memcmp(proto, "h2", 2) != 0) {
    KLOG(INFO) << authority_ << " does not offer HTTP/2 over TLS; requests go through libcurl";
    not_http2_ = true;
    Close(H2End::kNotHttp2, "no HTTP/2", true);
    return;
  }
  if (Status s = StartHttp2(); !s.ok()) {
    Close(H2End::kConnectionError, s.message(), true);
    return;
  }
  connect_deadline_ = Clock::time_point::max();
  state_ = State::kReady;
  last_read_ = clock_.Now();
  ping_sent_ = Clock::time_point::max();
  NoteDeadline(last_read_ + options_.read_idle_timeout);
  Pump();
}

Status H2Session::StartHttp2() {
  nghttp2_session_callbacks* cbs = nullptr;
  nghttp2_session_callbacks_new(&cbs);
  nghttp2_session_callbacks_set_on_header_callback(cbs, &H2Callbacks::OnHeader);
  nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, &H2Callbacks::OnFrameRecv);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, &H2Callbacks::OnDataChunk);
  nghttp2_session_callbacks_set_on_stream_close_callback(cbs, &H2Callbacks::OnStreamClose);
  nghttp2_option* opt = nullptr;
  nghttp2_option_new(&opt);
  // Until the server's SETTINGS arrive, assume a modest stream limit; nghttp2 holds
  // requests beyond the limit in its own queue.
  nghttp2_option_set_peer_max_concurrent_streams(opt, 100);
  int rc = nghttp2_session_client_new2(&session_, cbs, this, opt);
  nghttp2_option_del(opt);
  nghttp2_session_callbacks_del(cbs);
  if (rc != 0) return Status(StatusCode::kInternal, std::string("nghttp2: ") + nghttp2_strerror(rc));
  nghttp2_settings_entry settings[] = {{NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
                                       {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, kStreamWindow}};
  nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, settings, 2);
  nghttp2_session_set_local_window_size(session_, NGHTTP2_FLAG_NONE, 0, kConnectionWindow);
  draining_ = false;
  return Status::OK();
}

void H2Session::SubmitQueued() {
  if (queued_.empty() || draining_) return;
  std::vector<nghttp2_nv> nv;
  std::string prefixed;
  size_t i = 0;
  for (; i < queued_.size(); ++i) {
    H2Exchange* ex = queued_[i];
    nv.clear();
    nv.push_back(Nv(":method", ex->method));
    nv.push_back(Nv(":scheme", "https"));
    nv.push_back(Nv(":authority", authority_));
    if (path_prefix_.empty()) {
      nv.push_back(Nv(":path", ex->path));
    } else {
      prefixed = path_prefix_;
      prefixed += ex->path;
      nv.push_back(Nv(":path", prefixed));  // copied by nghttp2_submit_request
    }
    for (const auto& [k, v] : ex->headers) nv.push_back(Nv(k, v));
    nghttp2_data_provider body{};
    body.source.ptr = ex;
    body.read_callback = &H2Callbacks::ReadBody;
    int32_t id = nghttp2_submit_request(session_, nullptr, nv.data(), nv.size(), ex->has_body ? &body : nullptr, ex);
    if (id == NGHTTP2_ERR_STREAM_ID_NOT_AVAILABLE || id == NGHTTP2_ERR_START_STREAM_NOT_ALLOWED) {
      draining_ = true;  // the rest go out on the next connection
      break;
    }
    if (id < 0) {
      Finish(ex, H2End::kConnectionError, std::string("HTTP/2 request: ") + nghttp2_strerror(id));
      continue;
    }
    ex->stream_id = id;
    streams_.emplace(id, ex);
  }
  queued_.erase(queued_.begin(), queued_.begin() + static_cast<std::ptrdiff_t>(i));
}

void H2Session::SendFrames() {
  for (;;) {
    if (out_off_ == out_.size()) {
      out_.clear();
      out_off_ = 0;
      while (out_.size() < kWriteChunk) {
        const uint8_t* data = nullptr;
        ssize_t n = nghttp2_session_mem_send(session_, &data);
        if (n < 0) {
          Close(H2End::kConnectionError, std::string("HTTP/2: ") + nghttp2_strerror(static_cast<int>(n)), false);
          return;
        }
        if (n == 0) break;
        out_.append(reinterpret_cast<const char*>(data), static_cast<size_t>(n));
      }
      if (out_.empty()) break;
    }
    ERR_clear_error();
    int n = SSL_write(ssl_, out_.data() + out_off_, static_cast<int>(out_.size() - out_off_));
    if (n > 0) {
      out_off_ += static_cast<size_t>(n);
      continue;
    }
    int err = SSL_get_error(ssl_, n);
    if (err == SSL_ERROR_WANT_WRITE || err == SSL_ERROR_WANT_READ) {
      want_write_ = err == SSL_ERROR_WANT_WRITE;
      return;
    }
    Close(H2End::kConnectionError, TlsError("TLS write to " + authority_), false);
    return;
  }
  want_write_ = false;
  if (!nghttp2_session_want_read(session_) && !nghttp2_session_want_write(session_)) {
    Close(H2End::kConnectionError, "connection closed by the server (GOAWAY)", false);
  } else if (draining_ && streams_.empty()) {
    Close(H2End::kConnectionError, "connection drained", false);
  }
}

void H2Session::ReadFrames() {
  unsigned char buf[16384];
  for (;;) {
    ERR_clear_error();
    int n = SSL_read(ssl_, buf, sizeof(buf));
    if (n > 0) {
      // Any frame (a PING ack included) shows the connection is alive.
      last_read_ = clock_.Now();
      ping_sent_ = Clock::time_point::max();
      ssize_t r = nghttp2_session_mem_recv(session_, buf, static_cast<size_t>(n));
      if (r < 0) {
        Close(H2End::kConnectionError, std::string("HTTP/2: ") + nghttp2_strerror(static_cast<int>(r)), false);
        return;
      }
      continue;
    }
    int err = SSL_get_error(ssl_, n);
    if (err == SSL_ERROR_WANT_READ) return;
    if (err == SSL_ERROR_WANT_WRITE) {
      want_write_ = true;
      return;
    }
    Close(H2End::kConnectionError,
          err == SSL_ERROR_ZERO_RETURN || (err == SSL_ERROR_SYSCALL && ERR_peek_error() == 0)
              ? "connection closed by " + authority_
              : TlsError("TLS read from " + authority_),
          false);
    return;
  }
}

void H2Session::Expire() {
  auto now = clock_.Now();
  if (now < next_deadline_) return;
  next_deadline_ = Clock::time_point::max();
  if (state_ == State::kResolving && TakeResolution()) now = clock_.Now();
  CheckHealth(now);
  if (state_ == State::kResolving) NoteDeadline(now + kResolvePoll);
  if (state_ != State::kIdle && state_ != State::kReady) {
    if (now >= connect_deadline_) {
      Close(H2End::kConnectionError, "connection to " + authority_ + " timed out", true);
    } else {
      NoteDeadline(connect_deadline_);
    }
  }
  std::erase_if(queued_, [&](H2Exchange* ex) {
    if (now >= ex->deadline) {
      Finish(ex, H2End::kTimeout);
      return true;
    }
    NoteDeadline(ex->deadline);
    return false;
  });
  for (auto it = streams_.begin(); it != streams_.end();) {
    H2Exchange* ex = it->second;
    if (now < ex->deadline) {
      NoteDeadline(ex->deadline);
      ++it;
      continue;
    }
    nghttp2_session_set_stream_user_data(session_, it->first, nullptr);
    nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, it->first, NGHTTP2_CANCEL);
    it = streams_.erase(it);
    Finish(ex, H2End::kTimeout);
  }
}

void H2Session::Close(H2End end, std::string_view why, bool fail_queued) {
  if (fd_ >= 0) KLOG_V(2) << "HTTP/2 connection to " << authority_ << " closed: " << why;
  for (auto& [id, ex] : streams_) Finish(ex, end, std::string(why));
  streams_.clear();
  if (fail_queued) {
    for (H2Exchange* ex : queued_) Finish(ex, end, std::string(why));
    queued_.clear();
  }
  if (session_) nghttp2_session_del(session_);
  session_ = nullptr;
  if (ssl_) SSL_free(ssl_);
  ssl_ = nullptr;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  out_.clear();
  out_off_ = 0;
  want_write_ = false;
  draining_ = false;
  addrs_.clear();
  resolution_.reset();  // a lookup still running finishes into its own state
  ping_sent_ = Clock::time_point::max();
  connect_deadline_ = Clock::time_point::max();
  state_ = State::kIdle;
}

void H2Session::Abort() {
  Close(H2End::kCancelled, "API client shut down", true);
  Dispatch();
}

void H2Session::Finish(H2Exchange* ex, H2End end, std::string error) {
  done_list_.push_back({ex, end, std::move(error)});
}

void H2Session::Dispatch() {
  while (!done_list_.empty()) {
    std::vector<Done> list;
    list.swap(done_list_);
    for (auto& d : list) done_(d.ex, d.end, d.error);
  }
}

}  // namespace ksched::client
