// H2Session: one HTTP/2 connection over TLS to the API server, driven directly by
// nghttp2 and OpenSSL on the API client's I/O thread. It carries plain requests (binds,
// events, patches, lists); watches stay on libcurl.
//
// Why: a libcurl transfer costs ~0.14 ms of CPU here even on a reused connection (a new
// easy handle and connection candidate per transfer, the request written as HTTP/1.1
// and parsed back into HTTP/2 headers, the response parsed as HTTP/1 header lines). Each
// pod costs two writes (bind and event), so that alone was half of ksched's CPU per pod.
// Here a request is an HPACK-encoded HEADERS frame and one DATA frame, and all frames
// of a loop iteration go out in one TLS write.
//
// Not thread-safe: every call comes from the owning I/O thread. Completions are reported
// through the DoneFn after nghttp2 has returned, never from inside its callbacks, so
// the DoneFn may Submit again.
#pragma once

#include <poll.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "pkg/client/rest_config.h"
#include "pkg/util/clock.h"
#include "pkg/util/status.h"

struct ssl_ctx_st;
struct ssl_st;
struct nghttp2_session;

namespace ksched::client {

// One request and its response. Owned by the caller; it must stay alive until the
// DoneFn has been called for it.
struct H2Exchange {
  // The request.
  std::string_view method;   // "GET", "POST", ...
  std::string_view path;     // path and query, after the server URL's own path if it has one
  std::string_view body;     // sent when non-empty, or for POST/PUT/PATCH
  bool has_body = false;
  std::vector<std::pair<std::string, std::string>> headers;  // lower-case names
  Clock::time_point deadline = Clock::time_point::max();
  size_t max_body = size_t{1} << 30;
  void* user = nullptr;

  // The response.
  long status = 0;
  long retry_after = -1;  // seconds, from Retry-After
  std::string response;

  // The session's bookkeeping.
  int32_t stream_id = 0;
  size_t sent = 0;
  bool end_stream_received = false;
  bool overflow = false;
};

enum class H2End {
  kResponse,         // a complete response: status, retry_after and response are set
  kRefused,          // the server did not process it (REFUSED_STREAM, or past GOAWAY)
  kConnectionError,  // the connection failed or the stream was reset; it may have run
  kTimeout,          // the deadline passed
  kOverflow,         // the response body exceeded max_body
  kCancelled,        // Abort()
  kNotHttp2,         // the server does not speak HTTP/2 over TLS: send it another way
};

struct H2SessionOptions {
  std::chrono::milliseconds connect_timeout{std::chrono::seconds(10)};
  std::chrono::seconds tcp_keepalive_idle{30};
  // Data left unacknowledged this long fails the connection (TCP_USER_TIMEOUT), instead
  // of the kernel's ~15 minutes of retransmissions on a dead peer.
  std::chrono::milliseconds tcp_user_timeout{std::chrono::seconds(30)};
  // client-go's HTTP/2 health check: after this long without a frame from the server a
  // PING is sent, and no answer within ping_timeout closes the connection, so requests
  // in flight fail (GETs are retried) instead of waiting out a half-open connection.
  std::chrono::milliseconds read_idle_timeout{std::chrono::seconds(30)};
  std::chrono::milliseconds ping_timeout{std::chrono::seconds(15)};
};

class H2Session {
 public:
  using DoneFn = std::function<void(H2Exchange*, H2End, std::string_view error)>;

  // Fails when the TLS material in `config` cannot be loaded. `config.server` must be
  // an https:// URL.
  static StatusOr<std::unique_ptr<H2Session>> Create(const RestConfig& config, H2SessionOptions options,
                                                     Clock& clock, DoneFn done);
  ~H2Session();
  H2Session(const H2Session&) = delete;
  H2Session& operator=(const H2Session&) = delete;

  // False once the server has answered the TLS handshake without HTTP/2 (ALPN).
  bool available() const { return !not_http2_; }

  // Queues `ex`; it is sent on the next Service(), connecting first if need be.
  void Submit(H2Exchange* ex);

  // Sends what is queued, enforces deadlines and reports completions. Call once per
  // loop iteration, before polling.
  void Service();
  // The socket to poll (-1: none) and the events to wait for.
  int fd() const { return fd_; }
  short poll_events() const;
  // After poll() reported `revents` on fd().
  void OnReady(short revents);
  // The earliest deadline of a request or of the connection attempt.
  Clock::time_point next_deadline() const { return next_deadline_; }

  // Fails every request with kCancelled and closes the connection.
  void Abort();

  // Requests queued or in flight.
  size_t pending() const { return queued_.size() + streams_.size(); }

 private:
  enum class State { kIdle, kResolving, kConnecting, kHandshaking, kReady };
  struct Resolution;  // a host name lookup on a thread of its own

  H2Session(const RestConfig& config, H2SessionOptions options, Clock& clock, DoneFn done);
  Status Init();

  void StartConnect();
  // Takes the addresses of a finished lookup and connects; false while it is running.
  bool TakeResolution();
  void ConnectNext();
  // The HTTP/2 health check (options_.read_idle_timeout / ping_timeout).
  void CheckHealth(Clock::time_point now);
  void StartTls();
  void Handshake();
  Status StartHttp2();
  void Pump();  // submits and sends what it can; reconnects for requests left queued
  void SubmitQueued();
  void SendFrames();
  void ReadFrames();
  void Expire();
  // Ends the connection: open streams end with `end`, queued requests too when
  // `fail_queued` (a connection that never came up), else they wait for the next one.
  void Close(H2End end, std::string_view why, bool fail_queued);
  void Finish(H2Exchange* ex, H2End end, std::string error = {});
  void Dispatch();
  void NoteDeadline(Clock::time_point t) { next_deadline_ = std::min(next_deadline_, t); }

  friend struct H2Callbacks;  // nghttp2's callbacks, in the .cc

  const RestConfig config_;
  const H2SessionOptions options_;
  Clock& clock_;
  DoneFn done_;
  std::string host_, port_, authority_, verify_name_;
  std::string path_prefix_;  // the server URL's path, if any (a proxy's), before each path
  bool host_is_ip_ = false;

  ssl_ctx_st* ctx_ = nullptr;
  ssl_st* ssl_ = nullptr;
  nghttp2_session* session_ = nullptr;
  int fd_ = -1;
  State state_ = State::kIdle;
  bool not_http2_ = false;
  bool want_write_ = false;  // the socket or TLS needs POLLOUT to make progress
  bool draining_ = false;    // no new streams on this connection (GOAWAY, ids used up)
  std::vector<std::vector<unsigned char>> addrs_;  // sockaddrs left to try
  Clock::time_point connect_deadline_ = Clock::time_point::max();
  Clock::time_point next_deadline_ = Clock::time_point::max();
  std::shared_ptr<Resolution> resolution_;   // kResolving only
  Clock::time_point last_read_{};            // the last bytes from the server (kReady)
  Clock::time_point ping_sent_ = Clock::time_point::max();  // an unanswered health PING

  std::vector<H2Exchange*> queued_;                     // not yet given to nghttp2
  std::unordered_map<int32_t, H2Exchange*> streams_;    // open streams
  std::string out_;                                     // frames not yet written
  size_t out_off_ = 0;
  struct Done { H2Exchange* ex; H2End end; std::string error; };
  std::vector<Done> done_list_;
};

}  // namespace ksched::client
