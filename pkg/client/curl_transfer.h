// One request or watch of the CurlApiClient (curl_client.h) on the wire: its buffers,
// how its libcurl easy handle (or native HTTP/2 exchange) is set up, the libcurl
// callbacks that fill it, and how a finished watch reports its end. Which transfer
// starts when, and whether a failed one is tried again, is request_lanes.h's job; the
// thread that drives them all is curl_io_loop.h's.
//
// Internal to the client; everything here runs on its I/O thread unless it says
// otherwise.
#pragma once

#include <curl/curl.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "pkg/client/api_client.h"
#include "pkg/client/curl_client.h"
#include "pkg/client/h2_session.h"
#include "pkg/client/rest_config.h"
#include "pkg/util/clock.h"
#include "pkg/util/mutex.h"
#include "pkg/util/thread_annotations.h"

namespace ksched::client::curl_internal {

inline constexpr std::chrono::milliseconds kConnectTimeout{std::chrono::seconds(10)};
// Longest Retry-After honoured; a server asking for more is retried after this.
inline constexpr long kMaxRetryAfterSeconds = 120;

// Whether a libcurl error means the request got no answer from the server (so a
// repeatable request may be tried again).
bool IsConnectionError(CURLcode c);

// POST/PUT/PATCH always carry a body (possibly empty); DELETE only when given one (e.g.
// DeleteOptions).
bool HasBody(const Request& r);

Status StatusFromCurl(CURLcode c, const char* errbuf);

// What a watch shares with its WatchStream handle. cb_mu is held while a callback runs,
// so Cancel() can wait for a running callback and then guarantee silence.
struct WatchState {
  WatchCallbacks callbacks;
  Mutex cb_mu;
  std::atomic<bool> cancelled{false};
  uint64_t id = 0;
};

// Requests sent and not yet completed, for WaitIdle. Thread-safe.
class PendingCount {
 public:
  void Add() EXCLUDES(mu_);
  void Done() EXCLUDES(mu_);
  bool WaitIdle(std::chrono::milliseconds timeout) EXCLUDES(mu_);

 private:
  Mutex mu_;
  std::condition_variable_any idle_;
  int64_t n_ GUARDED_BY(mu_) = 0;
};

struct Transfer {
  Request req;
  ResponseCallback done;               // plain requests
  std::shared_ptr<WatchState> watch;   // watches
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
  std::string body;
  std::string line;                    // watch: partial line carried between writes
  long retry_after = -1;               // seconds, from the Retry-After header
  int attempt = 0;
  bool auth_retried = false;
  bool body_overflow = false;
  char errbuf[CURL_ERROR_SIZE] = {};
  size_t max_body = 0;
  size_t max_line = 0;

  PendingCount* pending = nullptr;      // plain requests: counted until destroyed
  H2Exchange h2;                       // when sent through the client's own HTTP/2 session

  Transfer() = default;
  Transfer(const Transfer&) = delete;
  Transfer& operator=(const Transfer&) = delete;
  ~Transfer();

  // Forgets what the previous attempt received: a new attempt starts.
  void BeginAttempt();
  // The HTTP status of the libcurl transfer's response (0 if none came).
  long ResponseCode() const;
  // Why a finished libcurl watch ended: OK when the server closed it normally.
  Status WatchEndStatus(CURLcode rc, long code) const;
  // Hands the end of a watch to its on_close, unless it was cancelled.
  void CloseWatch(const Status& s);
};

// How every libcurl transfer and native HTTP/2 exchange of one client is set up: built
// once from the client's configuration, then used for each attempt.
class TransferSetup {
 public:
  TransferSetup(const RestConfig& config, const CurlClientOptions& options);
  ~TransferSetup();
  TransferSetup(const TransferSetup&) = delete;
  TransferSetup& operator=(const TransferSetup&) = delete;

  // Gives t a fresh easy handle for t.req, with `token` (may be empty) as its bearer
  // token. The handle's callbacks fill t's buffers.
  void SetUpEasy(Transfer& t, const std::string& token) const;
  // Fills t.h2 for t.req, due to end by `now` plus the request's timeout.
  void SetUpH2(Transfer& t, const std::string& token, Clock::time_point now) const;

 private:
  // kubeconfig's tls-server-name for libcurl's transfers (see the .cc).
  void SetUpTlsServerName();

  // CURLOPT_SOCKOPTFUNCTION: every libcurl socket gets TCP_USER_TIMEOUT.
  static int OnSocketOpen(void* self, curl_socket_t fd, curlsocktype purpose);

  const RestConfig& config_;
  const CurlClientOptions& options_;
  const std::string user_agent_;
  const std::string basic_auth_;  // base64 of user:password, for the HTTP/2 session
  // With tls-server-name: the server URL with that name as host, and where to connect.
  std::string tls_server_url_;
  curl_slist* connect_to_ = nullptr;
};

}  // namespace ksched::client::curl_internal
