#include "pkg/server/io_loop.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <deque>
#include <set>
#include <thread>
#include <unordered_map>
#include <utility>

#include "pkg/server/tls_socket.h"
#include "pkg/util/log.h"
#include "pkg/util/mutex.h"
#include "pkg/util/thread_name.h"

namespace ksched::server {
namespace {

// Socket deadlines are real time by nature (epoll_wait sleeps on the kernel's clock), so
// the loop reads the monotonic clock itself; tests shorten the timeouts instead.
using SteadyClock = std::chrono::steady_clock;
using TimePoint = SteadyClock::time_point;
constexpr TimePoint kNever = TimePoint::max();

// After the last response of a connection the write side is shut and the socket kept
// this long, or until the peer closes: closing with unread request bytes would send a
// reset that can destroy the response before the client reads it (Go's
// rstAvoidanceDelay)...
constexpr auto kLingerTime = std::chrono::milliseconds(500);
// ... and meanwhile at most this much of what the peer still sends is read and dropped
// (Go's maxPostHandlerReadBytes).
constexpr size_t kLingerDrainBytes = 256 << 10;
constexpr size_t kReadChunk = 16 << 10;
constexpr int kAcceptBatch = 64;
// Out of descriptors: the pending connection stays queued and the listener readable, so
// accepting pauses instead of spinning (the cpprestsdk listener spun a core here).
constexpr auto kAcceptPause = std::chrono::milliseconds(100);
constexpr auto kWarningInterval = std::chrono::seconds(10);
// epoll tags: the listener, the wake-up eventfd, then connection ids (never reused).
constexpr uint64_t kListenerTag = 0;
constexpr uint64_t kWakeTag = 1;
constexpr uint64_t kFirstConnectionId = 2;

const char* StatusText(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 411: return "Length Required";
    case 413: return "Request Entity Too Large";
    case 417: return "Expectation Failed";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "";
  }
}

std::string FormatResponse(const HandlerResponse& r, bool head, bool keep_alive, int minor_version) {
  std::string out;
  out.reserve(200 + r.content_type.size() + (head ? 0 : r.body.size()));
  out.append("HTTP/1.1 ").append(std::to_string(r.status)).append(" ").append(StatusText(r.status)).append("\r\n");
  out.append("Content-Type: ").append(r.content_type).append("\r\n");
  out.append("Content-Length: ").append(std::to_string(r.body.size())).append("\r\n");
  out.append("X-Content-Type-Options: nosniff\r\n");
  if (r.status == 401) out.append("WWW-Authenticate: Bearer\r\n");
  if (r.status == 429) out.append("Retry-After: 1\r\n");
  if (!keep_alive) {
    out.append("Connection: close\r\n");
  } else if (minor_version == 0) {
    out.append("Connection: keep-alive\r\n");
  }
  out.append("\r\n");
  if (!head) out.append(r.body);
  return out;
}

// Logs a recurring condition at most once per kWarningInterval, with its count.
class RateLimitedWarning {
 public:
  // True when a warning is due; *count is how often it happened since the last one.
  bool Due(TimePoint now, uint64_t* count) {
    ++count_;
    if (now < next_) return false;
    *count = count_;
    count_ = 0;
    next_ = now + kWarningInterval;
    return true;
  }

 private:
  uint64_t count_ = 0;
  TimePoint next_{};
};

enum class Phase {
  kHandshake,  // TLS handshake (read_header_timeout from accept)
  kReading,    // a request (idle_timeout, then read_header_timeout from its first byte)
  kHandling,   // dispatched; nothing is read until the answer is written
  kWriting,    // the answer (write_timeout)
  kLingering,  // write side shut, waiting for the peer's close (kLingerTime)
};

const char* PhaseName(Phase phase) {
  switch (phase) {
    case Phase::kHandshake: return "TLS handshake";
    case Phase::kReading: return "reading a request";
    case Phase::kHandling: return "handling";
    case Phase::kWriting: return "writing a response";
    case Phase::kLingering: return "closing";
  }
  return "";
}

struct Connection {
  Connection(uint64_t id, int fd, SslPtr ssl, HttpRequestLimits limits)
      : id(id), fd(fd), ssl(std::move(ssl)), parser(limits) {}

  const uint64_t id;
  const int fd;
  SslPtr ssl;
  Phase phase = Phase::kHandshake;
  HttpRequestParser parser;
  bool idle = false;          // kReading after a response: no byte of the next request yet
  std::string pending_input;  // read with the last request, for the next (at most one read)
  bool head = false;          // the answer has no body
  bool keep_alive = false;
  int minor_version = 1;
  std::string out;  // the answer being written
  size_t out_offset = 0;
  bool tls_broken = false;  // after a fatal TLS error no close_notify may be sent
  uint32_t events = 0;      // registered with epoll
  TimePoint deadline = kNever;
  size_t drained = 0;  // bytes dropped while lingering
};

class EpollLoop : public IoLoop {
 public:
  EpollLoop(const ServerOptions& options, SslCtxPtr ctx, int listen_fd, int epoll_fd, int wake_fd)
      : limits_{options.max_header_bytes, options.max_body_bytes},
        read_header_timeout_(options.read_header_timeout),
        idle_timeout_(options.idle_timeout),
        write_timeout_(options.write_timeout),
        max_connections_(static_cast<size_t>(options.max_connections)),
        ctx_(std::move(ctx)),
        listen_fd_(listen_fd),
        epoll_fd_(epoll_fd),
        wake_fd_(wake_fd) {}

  ~EpollLoop() override {
    Stop();
    if (listen_fd_ >= 0) ::close(listen_fd_);
    ::close(epoll_fd_);
    ::close(wake_fd_);
  }

  void Start(Dispatch dispatch) override {
    dispatch_ = std::move(dispatch);
    thread_ = std::thread([this] {
      SetThreadName("ksched-https");
      Run();
    });
  }

  void Stop() override {
    if (!thread_.joinable()) return;
    stopping_ = true;
    Wake();
    thread_.join();
  }

  void Respond(uint64_t connection, HandlerResponse response) override {
    {
      MutexLock l(mu_);
      responses_.emplace_back(connection, std::move(response));
    }
    Wake();
  }

  int port() const override { return port_; }
  void set_port(int port) { port_ = port; }

 private:
  void Wake() {
    uint64_t one = 1;
    if (::write(wake_fd_, &one, sizeof(one)) < 0) {
      // EAGAIN: the counter is already non-zero, so the loop wakes anyway.
    }
  }

  void Run() {
    std::array<epoll_event, 64> events;
    while (!stopping_) {
      int n = ::epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()), WaitMillis());
      if (n < 0 && errno != EINTR) {
        KLOG(ERROR) << "secure server: epoll_wait: " << ErrnoText(errno);
        break;
      }
      for (int i = 0; i < n; ++i) {
        const uint64_t tag = events[i].data.u64;
        if (tag == kListenerTag) {
          AcceptConnections();
        } else if (tag == kWakeTag) {
          uint64_t count;
          if (::read(wake_fd_, &count, sizeof(count)) < 0) {
            // EAGAIN: drained already.
          }
        } else {
          OnEvent(tag, events[i].events);
        }
      }
      DeliverResponses();
      ExpireDeadlines();
    }
    while (!connections_.empty()) Close(*connections_.begin()->second);
    ::close(listen_fd_);
    listen_fd_ = -1;
  }

  int WaitMillis() const {
    TimePoint next = deadlines_.empty() ? kNever : deadlines_.begin()->first;
    if (accept_paused_) next = std::min(next, accept_resume_);
    if (next == kNever) return -1;
    const TimePoint now = SteadyClock::now();
    if (next <= now) return 0;
    return static_cast<int>(std::min<int64_t>(std::chrono::ceil<std::chrono::milliseconds>(next - now).count(), 60'000));
  }

  void AcceptConnections() {
    const TimePoint now = SteadyClock::now();
    for (int i = 0; i < kAcceptBatch; ++i) {
      int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        const int err = errno;
        if (err == EINTR || err == ECONNABORTED) continue;
        if (err == EAGAIN || err == EWOULDBLOCK) return;
        uint64_t count = 0;
        if (accept_warning_.Due(now, &count)) {
          KLOG(WARNING) << "secure server: accepting a connection failed: " << ErrnoText(err) << " (" << count
                        << " since the last warning); accepting pauses for " << kAcceptPause.count() << "ms";
        }
        PauseAccepting(now);
        return;
      }
      if (connections_.size() >= max_connections_) {
        ::close(fd);
        uint64_t count = 0;
        if (rejected_warning_.Due(now, &count)) {
          KLOG(WARNING) << "secure server: " << max_connections_ << " connections are open (max_connections): "
                        << "new ones are closed at once (" << count << " since the last warning)";
        }
        continue;
      }
      AddConnection(fd, now);
    }
  }

  void PauseAccepting(TimePoint now) {
    epoll_event ev{};
    ev.data.u64 = kListenerTag;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, listen_fd_, &ev);
    accept_paused_ = true;
    accept_resume_ = now + kAcceptPause;
  }

  void ResumeAccepting() {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = kListenerTag;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, listen_fd_, &ev);
    accept_paused_ = false;
  }

  void AddConnection(int fd, TimePoint now) {
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    SslPtr ssl = NewServerSession(ctx_.get(), fd);
    if (!ssl) {
      KLOG_V(2) << "secure server: allocating a TLS session failed: " << OpenSslErrors();
      ::close(fd);
      return;
    }
    const uint64_t id = next_id_++;
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = id;
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
      ::close(fd);
      return;
    }
    auto owned = std::make_unique<Connection>(id, fd, std::move(ssl), limits_);
    Connection& c = *owned;
    c.events = EPOLLIN;
    connections_.emplace(id, std::move(owned));
    SetDeadline(c, now + read_header_timeout_);
  }

  // Every path below ends in Close(c) or in waiting for an event, a response or a
  // deadline; after Close(c), `c` is gone.
  void Close(Connection& c) {
    if (!c.tls_broken && (c.phase == Phase::kReading || c.phase == Phase::kHandling || c.phase == Phase::kWriting)) {
      ERR_clear_error();
      SSL_shutdown(c.ssl.get());  // one attempt at a close_notify; the socket may be full
    }
    ERR_clear_error();
    SetDeadline(c, kNever);
    ::close(c.fd);  // also leaves the epoll set
    const uint64_t id = c.id;
    connections_.erase(id);
  }

  void OnEvent(uint64_t id, uint32_t events) {
    auto it = connections_.find(id);
    if (it == connections_.end()) return;  // closed earlier in this batch
    Connection& c = *it->second;
    if (events & (EPOLLERR | EPOLLHUP)) {
      c.tls_broken = true;  // reset or both directions shut: nothing can be sent
      Close(c);
      return;
    }
    switch (c.phase) {
      case Phase::kHandshake: Handshake(c); break;
      case Phase::kReading: Read(c); break;
      case Phase::kHandling: break;
      case Phase::kWriting: Write(c); break;
      case Phase::kLingering: Linger(c); break;
    }
  }

  void Watch(Connection& c, uint32_t events) {
    if (c.events == events) return;
    epoll_event ev{};
    ev.events = events;
    ev.data.u64 = c.id;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c.fd, &ev);
    c.events = events;
  }

  void SetDeadline(Connection& c, TimePoint deadline) {
    if (c.deadline != kNever) deadlines_.erase({c.deadline, c.id});
    c.deadline = deadline;
    if (deadline != kNever) deadlines_.emplace(deadline, c.id);
  }

  // After an SSL_* call returned `rc` <= 0: the events to wait for, or 0 when the
  // connection is over (the peer closed, or a TLS or socket error).
  static uint32_t WaitFor(Connection& c, int rc) {
    switch (SSL_get_error(c.ssl.get(), rc)) {
      case SSL_ERROR_WANT_READ: return EPOLLIN;
      case SSL_ERROR_WANT_WRITE: return EPOLLOUT;
      case SSL_ERROR_ZERO_RETURN: break;  // a clean close_notify
      default: c.tls_broken = true;
    }
    ERR_clear_error();
    return 0;
  }

  void Handshake(Connection& c) {
    ERR_clear_error();
    int rc = SSL_accept(c.ssl.get());
    if (rc == 1) {
      // Go's ReadHeaderTimeout starts after the handshake for the first request.
      c.phase = Phase::kReading;
      SetDeadline(c, SteadyClock::now() + read_header_timeout_);
      Read(c);
      return;
    }
    if (uint32_t wait = WaitFor(c, rc)) {
      Watch(c, wait);
      return;
    }
    KLOG_V(4) << "secure server: TLS handshake of connection " << c.id << " failed";
    Close(c);
  }

  void Read(Connection& c) {
    for (;;) {
      std::string carried;
      std::string_view input;
      if (!c.pending_input.empty()) {
        carried.swap(c.pending_input);
        input = carried;
      } else {
        ERR_clear_error();
        int n = SSL_read(c.ssl.get(), read_buf_.data(), static_cast<int>(read_buf_.size()));
        if (n <= 0) {
          if (uint32_t wait = WaitFor(c, n)) {
            Watch(c, wait);
          } else {
            Close(c);  // EOF or error; a partial request is dropped, as Go does
          }
          return;
        }
        input = std::string_view(read_buf_.data(), static_cast<size_t>(n));
      }
      if (c.idle) {
        // The keep-alive wait is over: the request has read_header_timeout to arrive.
        c.idle = false;
        SetDeadline(c, SteadyClock::now() + read_header_timeout_);
      }
      size_t used = c.parser.Parse(input);
      switch (c.parser.state()) {
        case HttpRequestParser::State::kIncomplete: break;
        case HttpRequestParser::State::kComplete:
          c.pending_input.assign(input.substr(used));
          Handle(c);
          return;
        case HttpRequestParser::State::kError:
          RejectRequest(c);
          return;
      }
    }
  }

  void Handle(Connection& c) {
    const HttpRequest& request = c.parser.request();
    c.phase = Phase::kHandling;
    c.head = request.method == "HEAD";
    c.keep_alive = request.keep_alive;
    c.minor_version = request.minor_version;
    SetDeadline(c, kNever);  // as Go: no deadline while the handler runs
    Watch(c, 0);             // one request at a time; errors and hang-ups still show
    dispatch_(c.id, request);
  }

  void RejectRequest(Connection& c) {
    const int status = c.parser.error_status();
    KLOG_V(4) << "secure server: connection " << c.id << ": " << status << " " << c.parser.error_message();
    HandlerResponse r{status, std::to_string(status) + " " + StatusText(status) + ": " + c.parser.error_message() + "\n"};
    c.keep_alive = false;
    StartWriting(c, FormatResponse(r, /*head=*/false, /*keep_alive=*/false, 1));
  }

  void DeliverResponses() {
    std::deque<std::pair<uint64_t, HandlerResponse>> batch;
    {
      MutexLock l(mu_);
      batch.swap(responses_);
    }
    for (auto& [id, response] : batch) {
      auto it = connections_.find(id);
      if (it == connections_.end() || it->second->phase != Phase::kHandling) continue;  // closed meanwhile
      Connection& c = *it->second;
      StartWriting(c, FormatResponse(response, c.head, c.keep_alive, c.minor_version));
    }
  }

  void StartWriting(Connection& c, std::string bytes) {
    c.phase = Phase::kWriting;
    c.out = std::move(bytes);
    c.out_offset = 0;
    SetDeadline(c, SteadyClock::now() + write_timeout_);
    Write(c);
  }

  void Write(Connection& c) {
    while (c.out_offset < c.out.size()) {
      const size_t left = std::min<size_t>(c.out.size() - c.out_offset, 1 << 30);
      ERR_clear_error();
      int n = SSL_write(c.ssl.get(), c.out.data() + c.out_offset, static_cast<int>(left));
      if (n > 0) {
        c.out_offset += static_cast<size_t>(n);
        continue;
      }
      if (uint32_t wait = WaitFor(c, n)) {
        Watch(c, wait);
      } else {
        Close(c);
      }
      return;
    }
    std::string().swap(c.out);
    if (!c.keep_alive) {
      StartLingering(c);
      return;
    }
    c.parser.Reset();
    c.phase = Phase::kReading;
    c.idle = true;
    SetDeadline(c, SteadyClock::now() + idle_timeout_);
    Read(c);
  }

  void StartLingering(Connection& c) {
    if (!c.tls_broken) {
      ERR_clear_error();
      SSL_shutdown(c.ssl.get());
      ERR_clear_error();
    }
    ::shutdown(c.fd, SHUT_WR);
    c.phase = Phase::kLingering;
    SetDeadline(c, SteadyClock::now() + kLingerTime);
    Watch(c, EPOLLIN);
    Linger(c);
  }

  void Linger(Connection& c) {
    for (;;) {
      ssize_t n = ::recv(c.fd, read_buf_.data(), read_buf_.size(), 0);
      if (n > 0) {
        c.drained += static_cast<size_t>(n);
        if (c.drained <= kLingerDrainBytes) continue;
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        return;
      }
      Close(c);  // the peer closed, failed, or keeps sending
      return;
    }
  }

  void ExpireDeadlines() {
    const TimePoint now = SteadyClock::now();
    if (accept_paused_ && now >= accept_resume_) ResumeAccepting();
    while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
      auto it = connections_.find(deadlines_.begin()->second);
      if (it == connections_.end()) {
        deadlines_.erase(deadlines_.begin());
        continue;
      }
      Connection& c = *it->second;
      KLOG_V(4) << "secure server: connection " << c.id << " timed out: " << PhaseName(c.phase);
      Close(c);
    }
  }

  const HttpRequestLimits limits_;
  const std::chrono::milliseconds read_header_timeout_;
  const std::chrono::milliseconds idle_timeout_;
  const std::chrono::milliseconds write_timeout_;
  const size_t max_connections_;
  const SslCtxPtr ctx_;
  int listen_fd_;
  const int epoll_fd_;
  const int wake_fd_;
  int port_ = 0;

  Dispatch dispatch_;
  std::thread thread_;
  std::atomic<bool> stopping_{false};

  Mutex mu_;
  std::deque<std::pair<uint64_t, HandlerResponse>> responses_ GUARDED_BY(mu_);

  // The I/O thread's own state.
  std::unordered_map<uint64_t, std::unique_ptr<Connection>> connections_;
  std::set<std::pair<TimePoint, uint64_t>> deadlines_;  // (deadline, connection id)
  uint64_t next_id_ = kFirstConnectionId;
  bool accept_paused_ = false;
  TimePoint accept_resume_{};
  RateLimitedWarning accept_warning_;
  RateLimitedWarning rejected_warning_;
  std::array<char, kReadChunk> read_buf_{};
};

}  // namespace

StatusOr<std::unique_ptr<IoLoop>> IoLoop::Listen(const ServerOptions& options, const CertKeyPair& cert) {
  if (options.secure_port < 0 || options.secure_port > 65535) {
    return InvalidArgument(std::string("secure port ").append(std::to_string(options.secure_port)).append(" is out of range"));
  }
  if (options.max_connections < 1 || options.max_header_bytes < 1 || options.read_header_timeout.count() <= 0 ||
      options.idle_timeout.count() <= 0 || options.write_timeout.count() <= 0) {
    return InvalidArgument("the secure server's limits and timeouts must be positive");
  }
  auto ctx = NewServerTlsContext(cert, options.tls13_only, options.tls12_ciphers);
  if (!ctx.ok()) return ctx.status();
  auto listen_fd = ListenTcp(options.bind_address, options.secure_port);
  if (!listen_fd.ok()) return listen_fd.status();
  int epoll_fd = ::epoll_create1(EPOLL_CLOEXEC);
  int wake_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (epoll_fd < 0 || wake_fd < 0) {
    const int err = errno;
    for (int fd : {*listen_fd, epoll_fd, wake_fd}) {
      if (fd >= 0) ::close(fd);
    }
    return Internal("secure server: " + ErrnoText(err));
  }
  auto loop = std::make_unique<EpollLoop>(options, std::move(*ctx), *listen_fd, epoll_fd, wake_fd);
  for (auto [fd, tag] : {std::pair{*listen_fd, kListenerTag}, std::pair{wake_fd, kWakeTag}}) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = tag;
    if (::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0) return Internal("secure server: epoll: " + ErrnoText(errno));
  }
  loop->set_port(LocalPort(*listen_fd));
  return std::unique_ptr<IoLoop>(std::move(loop));
}

}  // namespace ksched::server
