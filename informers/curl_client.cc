#include "informers/curl_client.h"

#include <curl/curl.h>
#include <poll.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <future>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "informers/h2_session.h"
#include "informers/rate_limiter.h"
#include "pkg/util/log.h"
#include "pkg/util/mutex.h"
#include "pkg/util/thread_name.h"

namespace ksched::informers {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kMaxConnectRetryDelay{std::chrono::seconds(30)};
constexpr milliseconds kConnectTimeout{std::chrono::seconds(10)};
constexpr long kMaxRetryAfterSeconds = 120;

void GlobalInit() {
  static const bool done = [] { return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK; }();
  (void)done;
}

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

// POST/PUT/PATCH always carry a body (possibly empty); DELETE only when given one (e.g.
// DeleteOptions).
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

// What a watch shares with its WatchStream handle. cb_mu is held while a callback runs,
// so Cancel() can wait for a running callback and then guarantee silence.
struct WatchState {
  WatchCallbacks callbacks;
  Mutex cb_mu;
  std::atomic<bool> cancelled{false};
  uint64_t id = 0;
};

// Requests sent and not yet completed, for WaitIdle.
class PendingCount {
 public:
  void Add() {
    MutexLock lock(mu_);
    ++n_;
  }
  void Done() {
    MutexLock lock(mu_);
    if (--n_ == 0) idle_.notify_all();
  }
  bool WaitIdle(std::chrono::milliseconds timeout) {
    MutexLock lock(mu_);
    return idle_.wait_for(lock, timeout, [this]() REQUIRES(mu_) { return n_ == 0; });
  }

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

  ~Transfer() {
    if (headers) curl_slist_free_all(headers);
    if (easy) curl_easy_cleanup(easy);
    if (pending) pending->Done();
  }
};

class CurlApiClient;

class CurlWatchStream final : public WatchStream {
 public:
  CurlWatchStream(CurlApiClient* client, std::shared_ptr<WatchState> state)
      : client_(client), state_(std::move(state)) {}
  ~CurlWatchStream() override { Cancel(); }
  void Cancel() override;

 private:
  CurlApiClient* client_;
  std::shared_ptr<WatchState> state_;
};

class CurlApiClient final : public ApiClient {
 public:
  CurlApiClient(RestConfig config, CurlClientOptions options)
      : config_(std::move(config)),
        options_(options),
        clock_(*options.clock),
        tokens_(config_, clock_),
        lanes_{Lane(config_.qps, config_.burst, clock_.Now()),
               Lane(options_.background_qps.value_or(config_.qps), options_.background_burst.value_or(config_.burst),
                    clock_.Now())} {
    multi_ = curl_multi_init();
    curl_multi_setopt(multi_, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
    // Many watches + requests share one HTTP/2 connection; allow plenty of streams.
    curl_multi_setopt(multi_, CURLMOPT_MAX_CONCURRENT_STREAMS, 1000L);
    // The socket interface: curl tells us which sockets to watch and we tell it which
    // one is ready. curl_multi_perform instead re-checks every transfer with a poll() of
    // its own on each call (libcurl 7.88), a syscall per request in flight per wake-up.
    curl_multi_setopt(multi_, CURLMOPT_SOCKETFUNCTION, &CurlApiClient::OnSocket);
    curl_multi_setopt(multi_, CURLMOPT_SOCKETDATA, this);
    wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (!config_.tls_server_name.empty() && config_.server.rfind("https://", 0) == 0) SetUpTlsServerName();
    if (options_.http2 && options_.native_http2 && config_.server.rfind("https://", 0) == 0) {
      auto h2 = H2Session::Create(config_, {.connect_timeout = kConnectTimeout,
                                            .tcp_keepalive_idle = options_.tcp_keepalive_idle,
                                            .tcp_user_timeout = options_.tcp_user_timeout,
                                            .read_idle_timeout = options_.http2_read_idle_timeout,
                                            .ping_timeout = options_.http2_ping_timeout},
                                  clock_, [this](H2Exchange* ex, H2End end, std::string_view error) {
                                    OnH2Done(ex, end, error);
                                  });
      if (!h2.ok()) {
        init_status_ = h2.status();
        return;
      }
      h2_ = std::move(*h2);
      if (!config_.username.empty()) basic_auth_ = Base64Encode(config_.username + ":" + config_.password);
    }
    loop_ = std::jthread([this](std::stop_token st) { Loop(st); });
  }

  const Status& init_status() const { return init_status_; }

  ~CurlApiClient() override {
    if (!loop_.joinable()) return;  // never started: init_status() failed
    loop_.request_stop();
    Wake();
    loop_.join();
    curl_multi_cleanup(multi_);
    if (wake_fd_ >= 0) close(wake_fd_);
    if (connect_to_) curl_slist_free_all(connect_to_);
  }

  void Send(Request request, ResponseCallback done) override {
    auto t = std::make_unique<Transfer>();
    t->req = std::move(request);
    t->done = std::move(done);
    pending_.Add();
    t->pending = &pending_;
    Submit(std::move(t));
  }

  bool WaitIdle(std::chrono::milliseconds timeout) override { return pending_.WaitIdle(timeout); }

  std::unique_ptr<WatchStream> Watch(Request request, WatchCallbacks callbacks) override {
    auto state = std::make_shared<WatchState>();
    state->callbacks = std::move(callbacks);
    state->id = next_watch_id_.fetch_add(1);
    auto t = std::make_unique<Transfer>();
    t->req = std::move(request);
    t->watch = state;
    Submit(std::move(t));
    return std::make_unique<CurlWatchStream>(this, std::move(state));
  }

  void CancelWatch(const std::shared_ptr<WatchState>& state) {
    state->cancelled.store(true);
    { MutexLock wait_for_running_callback(state->cb_mu); }
    {
      MutexLock lock(mu_);
      cancels_.push_back(state->id);
    }
    Wake();
  }

  bool OnIoThread() const { return std::this_thread::get_id() == loop_.get_id(); }

 private:
  // One wake-up per batch: a request submitted while an earlier wake-up is still
  // pending rides on it, and one submitted from a callback on the I/O thread (e.g. an
  // event after a bind) needs none, since the loop goes round again before it polls.
  void Submit(std::unique_ptr<Transfer> t) {
    t->max_body = options_.max_body_bytes;
    t->max_line = options_.max_watch_line_bytes;
    if (OnIoThread()) {
      from_callbacks_.push_back(std::move(t));
      return;
    }
    bool wake;
    {
      MutexLock lock(mu_);
      incoming_.push_back(std::move(t));
      wake = !wakeup_pending_;
      wakeup_pending_ = true;
    }
    if (wake) Wake();
  }

  // kubeconfig's tls-server-name for libcurl's transfers (the native HTTP/2 session sets
  // SNI and the verified name itself): libcurl takes both from the URL's host, so the URL
  // carries the TLS name and CURLOPT_CONNECT_TO maps it to the real host and port.
  void SetUpTlsServerName() {
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

  // Every libcurl socket gets TCP_USER_TIMEOUT (see CurlClientOptions::tcp_user_timeout).
  static int OnSocketOpen(void* self_ptr, curl_socket_t fd, curlsocktype purpose) {
    auto* self = static_cast<CurlApiClient*>(self_ptr);
    if (purpose == CURLSOCKTYPE_IPCXN) {
      unsigned int ms = static_cast<unsigned int>(self->options_.tcp_user_timeout.count());
      setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ms, sizeof(ms));  // fails harmlessly off TCP
    }
    return CURL_SOCKOPT_OK;
  }

  // ---- the I/O thread ------------------------------------------------------------------

  void Wake() {
    uint64_t one = 1;
    // A full counter (never, in practice) still leaves the fd readable: the wake-up holds.
    [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof(one));
  }

  static int OnSocket(CURL* /*easy*/, curl_socket_t s, int what, void* self_ptr, void* /*socketp*/) {
    auto* self = static_cast<CurlApiClient*>(self_ptr);
    if (what == CURL_POLL_REMOVE) {
      self->sockets_.erase(s);
    } else {
      self->sockets_[s] = what;
    }
    return 0;
  }

  void SocketAction(curl_socket_t s, int events) {
    int running = 0;
    curl_multi_socket_action(multi_, s, events, &running);
  }

  // Runs curl's due timers: new transfers start from a timer that is due at once, and
  // request timeouts fire from them.
  void RunDueTimers() {
    long curl_ms = -1;
    curl_multi_timeout(multi_, &curl_ms);
    if (curl_ms == 0) SocketAction(CURL_SOCKET_TIMEOUT, 0);
  }

  void Loop(std::stop_token st) {
    SetThreadName(options_.thread_name);
    std::vector<pollfd> fds;
    while (!st.stop_requested()) {
      TakeIncoming();
      StartDue();
      RunDueTimers();
      Reap();
      if (h2_) h2_->Service();
      if (!from_callbacks_.empty()) continue;
      fds.clear();
      fds.push_back({wake_fd_, POLLIN, 0});
      const int h2_fd = h2_ ? h2_->fd() : -1;
      if (h2_fd >= 0) fds.push_back({h2_fd, h2_->poll_events(), 0});
      const size_t first_curl = fds.size();
      for (const auto& [fd, what] : sockets_) {
        short ev = static_cast<short>(((what & CURL_POLL_IN) ? POLLIN : 0) | ((what & CURL_POLL_OUT) ? POLLOUT : 0));
        fds.push_back({fd, ev, 0});
      }
      if (poll(fds.data(), fds.size(), static_cast<int>(NextWait().count())) <= 0) continue;
      if (fds[0].revents != 0) {
        uint64_t drained;
        [[maybe_unused]] ssize_t n = read(wake_fd_, &drained, sizeof(drained));
      }
      if (h2_fd >= 0 && fds[1].revents != 0) h2_->OnReady(fds[1].revents);
      // An action may close other sockets of this list; curl ignores unknown ones.
      for (size_t i = first_curl; i < fds.size(); ++i) {
        const short r = fds[i].revents;
        if (r == 0) continue;
        int ev = 0;
        if (r & (POLLIN | POLLHUP)) ev |= CURL_CSELECT_IN;
        if (r & POLLOUT) ev |= CURL_CSELECT_OUT;
        if (r & (POLLERR | POLLNVAL)) ev |= CURL_CSELECT_ERR;
        SocketAction(fds[i].fd, ev);
      }
      Reap();
    }
    Shutdown();
  }

  void TakeIncoming() {
    std::vector<std::unique_ptr<Transfer>> in;
    std::vector<uint64_t> cancels;
    {
      MutexLock lock(mu_);
      in.swap(incoming_);
      cancels.swap(cancels_);
      wakeup_pending_ = false;
    }
    for (auto& t : from_callbacks_) Enqueue(std::move(t));
    from_callbacks_.clear();
    for (auto& t : in) Enqueue(std::move(t));
    for (uint64_t id : cancels) {
      auto it = std::find_if(active_.begin(), active_.end(),
                             [&](const auto& kv) { return kv.second->watch && kv.second->watch->id == id; });
      if (it != active_.end()) {
        curl_multi_remove_handle(multi_, it->first);
        active_.erase(it);
      }
      auto is_it = [&](const auto& t) { return t->watch && t->watch->id == id; };
      for (Lane& lane : lanes_) std::erase_if(lane.ready, is_it);
      std::erase_if(delayed_, [&](const auto& kv) { return is_it(kv.second); });
    }
  }

  void Enqueue(std::unique_ptr<Transfer> t) {
    const bool background = t->req.background;
    Lane& lane = lanes_[background ? 1 : 0];
    lane.ready.push_back(std::move(t));
    if (background && lane.ready.size() > options_.max_queued_background) {
      std::unique_ptr<Transfer> dropped = std::move(lane.ready.front());
      lane.ready.pop_front();
      if (++dropped_background_ % 1000 == 1)
        KLOG(WARNING) << "API client: " << dropped_background_ << " background request(s) dropped so far, "
                      << "queue full (" << options_.max_queued_background << "), e.g. "
                      << VerbName(dropped->req.verb) << " " << dropped->req.path;
      if (dropped->done)
        dropped->done(Status(StatusCode::kResourceExhausted, "background request queue full, request dropped"));
    }
  }

  // Starts queued transfers in FIFO order per lane, as far as the in-flight bound and
  // each lane's rate limiter allow; retries rejoin their lane when their delay is over.
  // Background requests start only while no foreground request waits.
  void StartDue() {
    auto now = clock_.Now();
    while (!delayed_.empty() && delayed_.begin()->first <= now) {
      Enqueue(std::move(delayed_.begin()->second));
      delayed_.erase(delayed_.begin());
    }
    for (Lane& lane : lanes_) {
      if (&lane != &lanes_[0] && !lanes_[0].ready.empty()) break;
      while (!lane.ready.empty() && now >= lane.free_at) {
        auto& t = lane.ready.front();
        if (!t->watch && in_flight_ >= options_.max_in_flight) break;
        auto wait = lane.bucket.TryTake(now);
        if (wait > Clock::duration::zero()) {
          lane.free_at = now + wait;
          break;
        }
        auto next = std::move(t);
        lane.ready.pop_front();
        Start(std::move(next));
      }
    }
  }

  milliseconds NextWait() {
    long curl_ms = -1;
    curl_multi_timeout(multi_, &curl_ms);
    milliseconds wait(1000);
    if (curl_ms >= 0) wait = std::min(wait, milliseconds(curl_ms));
    auto now = clock_.Now();
    auto until = [&](Clock::time_point at) {
      return std::max(std::chrono::duration_cast<milliseconds>(at - now) + milliseconds(1), milliseconds(0));
    };
    if (!delayed_.empty()) wait = std::min(wait, until(delayed_.begin()->first));
    if (h2_ && h2_->next_deadline() != Clock::time_point::max()) wait = std::min(wait, until(h2_->next_deadline()));
    for (const Lane& lane : lanes_)
      if (!lane.ready.empty() && lane.free_at > now) wait = std::min(wait, until(lane.free_at));
    return wait;
  }

  void Start(std::unique_ptr<Transfer> t) {
    if (t->watch && t->watch->cancelled.load()) return;
    ++t->attempt;
    t->body.clear();
    t->line.clear();
    t->retry_after = -1;
    t->body_overflow = false;
    t->errbuf[0] = 0;
    if (h2_ && h2_->available() && !t->watch) {
      StartH2(std::move(t));
      return;
    }
    if (t->easy) curl_easy_cleanup(t->easy);
    if (t->headers) curl_slist_free_all(t->headers);
    t->headers = nullptr;
    CURL* e = t->easy = curl_easy_init();
    const Request& r = t->req;
    std::string url = (connect_to_ ? tls_server_url_ : config_.server) + r.path;
    curl_easy_setopt(e, CURLOPT_URL, url.c_str());
    // tls-server-name: the URL names that host, so libcurl sends it as SNI and verifies the
    // certificate against it, and CONNECT_TO sends the connection to the real server.
    if (connect_to_) curl_easy_setopt(e, CURLOPT_CONNECT_TO, connect_to_);
    curl_easy_setopt(e, CURLOPT_SOCKOPTFUNCTION, &CurlApiClient::OnSocketOpen);
    curl_easy_setopt(e, CURLOPT_SOCKOPTDATA, this);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t->errbuf);
    curl_easy_setopt(e, CURLOPT_USERAGENT, user_agent_.c_str());
    if (options_.http2) {
      curl_easy_setopt(e, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS);
      curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
    }
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(kConnectTimeout.count()));
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPIDLE, static_cast<long>(options_.tcp_keepalive_idle.count()));
    curl_easy_setopt(e, CURLOPT_TCP_KEEPINTVL, 5L);
    if (!t->watch) {
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
    t->headers = curl_slist_append(t->headers, "Accept: application/json");
    if (std::string tok = tokens_.Token(); !tok.empty())
      t->headers = curl_slist_append(t->headers, ("Authorization: Bearer " + tok).c_str());
    if (r.verb != Verb::kGet && r.verb != Verb::kPost)
      curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, VerbName(r.verb).data());
    if (HasBody(r)) {
      curl_easy_setopt(e, CURLOPT_POSTFIELDS, r.body.data());
      curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(r.body.size()));
      t->headers = curl_slist_append(t->headers, ("Content-Type: " + r.content_type).c_str());
    }
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, t->headers);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &CurlApiClient::OnHeader);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, t.get());
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &CurlApiClient::OnData);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, t.get());
    curl_easy_setopt(e, CURLOPT_PRIVATE, t.get());
    curl_multi_add_handle(multi_, e);
    if (!t->watch) ++in_flight_;
    active_.emplace(e, std::move(t));
  }

  // The same request on the client's own HTTP/2 session (see h2_session.h).
  void StartH2(std::unique_ptr<Transfer> t) {
    const Request& r = t->req;
    H2Exchange& ex = t->h2;
    ex.method = VerbName(r.verb);
    ex.path = r.path;
    ex.has_body = HasBody(r);
    ex.body = r.body;
    auto timeout = r.timeout.count() > 0 ? r.timeout : config_.timeout;
    ex.deadline = clock_.Now() + timeout;
    ex.max_body = t->max_body;
    ex.user = t.get();
    ex.headers.clear();
    ex.headers.emplace_back("accept", "application/json");
    ex.headers.emplace_back("user-agent", user_agent_);
    if (std::string tok = tokens_.Token(); !tok.empty()) {
      ex.headers.emplace_back("authorization", "Bearer " + tok);
    } else if (!config_.username.empty()) {
      ex.headers.emplace_back("authorization", "Basic " + basic_auth_);
    }
    if (ex.has_body) {
      ex.headers.emplace_back("content-type", r.content_type);
      ex.headers.emplace_back("content-length", std::to_string(r.body.size()));
    }
    ++in_flight_;
    Transfer* raw = t.get();
    h2_active_.emplace(raw, std::move(t));
    h2_->Submit(&raw->h2);
  }

  void OnH2Done(H2Exchange* ex, H2End end, std::string_view error) {
    auto it = h2_active_.find(static_cast<Transfer*>(ex->user));
    if (it == h2_active_.end()) return;
    std::unique_ptr<Transfer> t = std::move(it->second);
    h2_active_.erase(it);
    --in_flight_;
    switch (end) {
      case H2End::kResponse:
        t->body = std::move(ex->response);
        t->retry_after = ex->retry_after >= 0 ? std::min(ex->retry_after, kMaxRetryAfterSeconds) : -1;
        Answered(std::move(t), ex->status);
        return;
      case H2End::kNotHttp2:  // not an attempt: it goes out through libcurl instead
        --t->attempt;
        Retry(std::move(t), clock_.Now());
        return;
      case H2End::kRefused:
        if (t->attempt <= t->req.max_retries) {
          Retry(std::move(t), clock_.Now());
          return;
        }
        t->done(Status(StatusCode::kUnavailable, "the server refused the request (HTTP/2 REFUSED_STREAM)"));
        return;
      case H2End::kConnectionError:
        Failed(std::move(t), Status(StatusCode::kUnavailable, std::string(error)), /*connection_error=*/true);
        return;
      case H2End::kTimeout:
        t->done(Status(StatusCode::kDeadlineExceeded, "request timed out"));
        return;
      case H2End::kOverflow:
        t->done(Status(StatusCode::kOutOfRange, "response body exceeds " + std::to_string(t->max_body) + " bytes"));
        return;
      case H2End::kCancelled:
        t->done(Status(StatusCode::kCancelled, "API client shut down"));
        return;
    }
  }

  static size_t OnHeader(char* data, size_t size, size_t n, void* user) {
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

  static size_t OnData(char* data, size_t size, size_t n, void* user) {
    auto* t = static_cast<Transfer*>(user);
    const size_t len = size * n;
    long code = 0;
    curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &code);
    if (!t->watch || code != 200) {
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

  static void DeliverLine(Transfer& t, std::string_view line) {
    if (line.empty() || (line.size() == 1 && line[0] == '\r')) return;
    MutexLock lock(t.watch->cb_mu);
    if (!t.watch->cancelled.load() && t.watch->callbacks.on_line) t.watch->callbacks.on_line(line);
  }

  void Reap() {
    int left = 0;
    while (CURLMsg* m = curl_multi_info_read(multi_, &left)) {
      if (m->msg != CURLMSG_DONE) continue;
      CURL* e = m->easy_handle;
      CURLcode rc = m->data.result;
      curl_multi_remove_handle(multi_, e);
      auto it = active_.find(e);
      if (it == active_.end()) continue;
      std::unique_ptr<Transfer> t = std::move(it->second);
      active_.erase(it);
      if (!t->watch) --in_flight_;
      Finish(std::move(t), rc);
    }
  }

  void Finish(std::unique_ptr<Transfer> t, CURLcode rc) {
    long code = 0;
    curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &code);
    if (t->watch) {
      Status s;
      if (t->body_overflow) s = {StatusCode::kOutOfRange, "watch event larger than the line limit"};
      else if (rc != CURLE_OK) s = StatusFromCurl(rc, t->errbuf);
      else if (code != 200) s = StatusFromHttp(code, t->body);
      if (code == 401 && tokens_.FromFile()) tokens_.Invalidate();
      MutexLock lock(t->watch->cb_mu);
      if (!t->watch->cancelled.load() && t->watch->callbacks.on_close) t->watch->callbacks.on_close(s);
      return;
    }
    if (rc != CURLE_OK) {
      if (t->body_overflow) {
        t->done(Status(StatusCode::kOutOfRange, "response body exceeds " + std::to_string(t->max_body) + " bytes"));
        return;
      }
      Status s = StatusFromCurl(rc, t->errbuf);
      Failed(std::move(t), std::move(s), IsConnectionError(rc));
      return;
    }
    Answered(std::move(t), code);
  }

  // No answer came: a GET (or a write marked retry_connection_errors) is tried again
  // after a connection error, anything else fails.
  void Failed(std::unique_ptr<Transfer> t, Status s, bool connection_error) {
    const bool repeatable = t->req.verb == Verb::kGet || t->req.retry_connection_errors;
    if (connection_error && repeatable && t->attempt <= t->req.max_retries) {
      auto delay = std::min(options_.connect_retry_delay * (1 << std::min(t->attempt - 1, 5)), kMaxConnectRetryDelay);
      KLOG_V(2) << "retrying " << VerbName(t->req.verb) << " " << t->req.path << " after " << delay.count()
                << "ms: " << s.message();
      Retry(std::move(t), clock_.Now() + delay);
      return;
    }
    t->done(std::move(s));
  }

  // The server answered `code`; t->body and t->retry_after hold the rest.
  void Answered(std::unique_ptr<Transfer> t, long code) {
    const auto now = clock_.Now();
    const bool can_retry = t->attempt <= t->req.max_retries;
    if (code == 401 && tokens_.FromFile() && !t->auth_retried) {
      tokens_.Invalidate();
      t->auth_retried = true;
      Retry(std::move(t), now);
      return;
    }
    if ((code == 429 || code >= 500) && t->retry_after >= 0 && can_retry) {
      KLOG_V(2) << "server answered " << code << " for " << VerbName(t->req.verb) << " " << t->req.path
                << ", retrying after " << t->retry_after << "s";
      auto at = now + std::chrono::seconds(t->retry_after);  // read before t is moved from
      Retry(std::move(t), at);
      return;
    }
    if (code >= 200 && code < 300) {
      Response resp;
      resp.http_code = code;
      resp.body = std::move(t->body);
      t->done(std::move(resp));
      return;
    }
    t->done(StatusFromHttp(code, t->body));
  }

  void Retry(std::unique_ptr<Transfer> t, Clock::time_point at) { delayed_.emplace(at, std::move(t)); }

  void Shutdown() {
    TakeIncoming();
    if (h2_) h2_->Abort();  // its requests end through OnH2Done
    Status cancelled(StatusCode::kCancelled, "API client shut down");
    auto finish = [&](std::unique_ptr<Transfer>& t) {
      if (t->watch) {
        MutexLock lock(t->watch->cb_mu);
        if (!t->watch->cancelled.load() && t->watch->callbacks.on_close) t->watch->callbacks.on_close(cancelled);
      } else if (t->done) {
        t->done(cancelled);
      }
    };
    for (auto& [e, t] : active_) {
      curl_multi_remove_handle(multi_, e);
      finish(t);
    }
    active_.clear();
    for (Lane& lane : lanes_) {
      for (auto& t : lane.ready) finish(t);
      lane.ready.clear();
    }
    for (auto& [at, t] : delayed_) finish(t);
    delayed_.clear();
  }

  PendingCount pending_;  // first member: the last to go, after Shutdown's transfers
  const RestConfig config_;
  const CurlClientOptions options_;
  const std::string user_agent_ = config_.user_agent.empty() ? DefaultUserAgent() : config_.user_agent;
  Clock& clock_;
  TokenSource tokens_;
  CURLM* multi_ = nullptr;
  int wake_fd_ = -1;  // eventfd: other threads wake the loop's poll()
  std::unordered_map<curl_socket_t, int> sockets_;  // I/O thread: fd -> CURL_POLL_IN/OUT/INOUT
  std::atomic<uint64_t> next_watch_id_{1};

  Mutex mu_;
  std::vector<std::unique_ptr<Transfer>> incoming_ GUARDED_BY(mu_);
  bool wakeup_pending_ GUARDED_BY(mu_) = false;
  std::vector<uint64_t> cancels_ GUARDED_BY(mu_);

  // Owned by the I/O thread.
  // Foreground (0) and background (1) requests: each a FIFO with its own rate budget.
  struct Lane {
    Lane(double qps, int burst, Clock::time_point now) : bucket(qps, burst, now) {}
    TokenBucket bucket;
    std::deque<std::unique_ptr<Transfer>> ready;  // waiting to start
    Clock::time_point free_at{};                  // the limiter's next token
  };
  Lane lanes_[2];
  std::multimap<Clock::time_point, std::unique_ptr<Transfer>> delayed_;  // retries, by due time
  std::vector<std::unique_ptr<Transfer>> from_callbacks_;  // submitted on the I/O thread
  std::unordered_map<CURL*, std::unique_ptr<Transfer>> active_;
  std::unordered_map<Transfer*, std::unique_ptr<Transfer>> h2_active_;  // before h2_: outlives it
  std::unique_ptr<H2Session> h2_;  // null: everything through libcurl
  std::string basic_auth_;         // base64 of user:password
  Status init_status_;
  int in_flight_ = 0;  // active non-watch transfers
  int64_t dropped_background_ = 0;
  // With tls-server-name: the server URL with that name as host, and where to connect.
  std::string tls_server_url_;
  curl_slist* connect_to_ = nullptr;

  std::jthread loop_;  // last: started after every member above exists
};

void CurlWatchStream::Cancel() {
  if (state_ && !state_->cancelled.load()) client_->CancelWatch(state_);
}

}  // namespace

StatusOr<ApiClientPtr> NewCurlApiClient(const RestConfig& config, CurlClientOptions options) {
  GlobalInit();
  if (config.server.rfind("https://", 0) != 0 && config.server.rfind("http://", 0) != 0)
    return InvalidArgument("server \"" + config.server + "\": must start with https:// or http://");
  if (config.client_cert_pem.empty() != config.client_key_pem.empty())
    return InvalidArgument("client certificate and key must be given together");
  auto client = std::make_unique<CurlApiClient>(config, options);
  if (!client->init_status().ok()) return client->init_status();
  return ApiClientPtr(std::move(client));
}

}  // namespace ksched::informers
