// CurlApiClient: ties together the parts in curl_transfer.h (one request on the wire),
// request_lanes.h (which request goes next, and retries) and curl_io_loop.h (the
// thread's poll loop), and takes requests and watch cancellations from other threads.
#include "pkg/client/curl_client.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>
#include <unordered_map>
#include <vector>

#include "pkg/client/curl_io_loop.h"
#include "pkg/client/curl_transfer.h"
#include "pkg/client/h2_session.h"
#include "pkg/client/request_lanes.h"
#include "pkg/util/mutex.h"
#include "pkg/util/thread_annotations.h"
#include "pkg/util/thread_name.h"

namespace ksched::client {
namespace {

using curl_internal::CurlIoLoop;
using curl_internal::PendingCount;
using curl_internal::RequestLanes;
using curl_internal::Transfer;
using curl_internal::TransferSetup;
using curl_internal::WatchState;
using std::chrono::milliseconds;

void GlobalInit() {
  static const bool done = [] { return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK; }();
  (void)done;
}

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
        setup_(config_, options_),
        lanes_(config_, options_, clock_, tokens_) {
    if (options_.http2 && options_.native_http2 && config_.server.rfind("https://", 0) == 0) {
      auto h2 = H2Session::Create(config_, {.connect_timeout = curl_internal::kConnectTimeout,
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
    }
    loop_ = std::jthread([this](std::stop_token st) { Loop(st); });
  }

  const Status& init_status() const { return init_status_; }

  ~CurlApiClient() override {
    if (!loop_.joinable()) return;  // never started: init_status() failed
    loop_.request_stop();
    io_.Wake();
    loop_.join();
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

  void CancelWatch(const std::shared_ptr<WatchState>& state) EXCLUDES(mu_) {
    state->cancelled.store(true);
    { MutexLock wait_for_running_callback(state->cb_mu); }
    {
      MutexLock lock(mu_);
      cancels_.push_back(state->id);
    }
    io_.Wake();
  }

  bool OnIoThread() const { return std::this_thread::get_id() == loop_.get_id(); }

 private:
  // One wake-up per batch: a request submitted while an earlier wake-up is still
  // pending rides on it, and one submitted from a callback on the I/O thread (e.g. an
  // event after a bind) needs none, since the loop goes round again before it polls.
  void Submit(std::unique_ptr<Transfer> t) EXCLUDES(mu_) {
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
    if (wake) io_.Wake();
  }

  // ---- the I/O thread ------------------------------------------------------------------

  void Loop(std::stop_token st) {
    SetThreadName(options_.thread_name);
    while (!st.stop_requested()) {
      TakeIncoming();
      lanes_.StartDue([this](std::unique_ptr<Transfer> t) { Start(std::move(t)); });
      io_.RunDueTimers();
      Reap();
      if (h2_) h2_->Service();
      if (!from_callbacks_.empty()) continue;
      if (!io_.Poll(h2_.get(), NextWait())) continue;
      Reap();
    }
    Shutdown();
  }

  void TakeIncoming() EXCLUDES(mu_) {
    std::vector<std::unique_ptr<Transfer>> in;
    std::vector<uint64_t> cancels;
    {
      MutexLock lock(mu_);
      in.swap(incoming_);
      cancels.swap(cancels_);
      wakeup_pending_ = false;
    }
    for (auto& t : from_callbacks_) lanes_.Enqueue(std::move(t));
    from_callbacks_.clear();
    for (auto& t : in) lanes_.Enqueue(std::move(t));
    for (uint64_t id : cancels) {
      auto it = std::find_if(active_.begin(), active_.end(),
                             [&](const auto& kv) { return kv.second->watch && kv.second->watch->id == id; });
      if (it != active_.end()) {
        io_.Remove(it->first);
        active_.erase(it);
      }
      lanes_.Cancel(id);
    }
  }

  // How long the loop may sleep in poll(): until curl's next timer, a retry or token
  // falls due, or the HTTP/2 session's next deadline, and at most a second.
  milliseconds NextWait() {
    milliseconds wait(1000);
    if (milliseconds curl = io_.CurlTimeout(); curl.count() >= 0) wait = std::min(wait, curl);
    auto now = clock_.Now();
    auto until = [&](Clock::time_point at) {
      return std::max(std::chrono::duration_cast<milliseconds>(at - now) + milliseconds(1), milliseconds(0));
    };
    if (auto due = lanes_.NextDue(now); due != Clock::time_point::max()) wait = std::min(wait, until(due));
    if (h2_ && h2_->next_deadline() != Clock::time_point::max()) wait = std::min(wait, until(h2_->next_deadline()));
    return wait;
  }

  void Start(std::unique_ptr<Transfer> t) {
    if (t->watch && t->watch->cancelled.load()) return;
    t->BeginAttempt();
    if (h2_ && h2_->available() && !t->watch) {
      StartH2(std::move(t));
      return;
    }
    setup_.SetUpEasy(*t, tokens_.Token());
    CURL* e = t->easy;
    io_.Add(e);
    if (!t->watch) lanes_.Started(*t);
    active_.emplace(e, std::move(t));
  }

  // The same request on the client's own HTTP/2 session (see h2_session.h).
  void StartH2(std::unique_ptr<Transfer> t) {
    setup_.SetUpH2(*t, tokens_.Token(), clock_.Now());
    lanes_.Started(*t);
    Transfer* raw = t.get();
    h2_active_.emplace(raw, std::move(t));
    h2_->Submit(&raw->h2);
  }

  void OnH2Done(H2Exchange* ex, H2End end, std::string_view error) {
    auto it = h2_active_.find(static_cast<Transfer*>(ex->user));
    if (it == h2_active_.end()) return;
    std::unique_ptr<Transfer> t = std::move(it->second);
    h2_active_.erase(it);
    lanes_.Ended(*t);
    switch (end) {
      case H2End::kResponse:
        t->body = std::move(ex->response);
        t->retry_after =
            ex->retry_after >= 0 ? std::min(ex->retry_after, curl_internal::kMaxRetryAfterSeconds) : -1;
        lanes_.Answered(std::move(t), ex->status);
        return;
      case H2End::kNotHttp2:  // not an attempt: it goes out through libcurl instead
        --t->attempt;
        lanes_.Retry(std::move(t), clock_.Now());
        return;
      case H2End::kRefused:
        if (t->attempt <= t->req.max_retries) {
          lanes_.Retry(std::move(t), clock_.Now());
          return;
        }
        t->done(Status(StatusCode::kUnavailable, "the server refused the request (HTTP/2 REFUSED_STREAM)"));
        return;
      case H2End::kConnectionError:
        lanes_.Failed(std::move(t), Status(StatusCode::kUnavailable, std::string(error)), /*connection_error=*/true);
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

  void Reap() {
    io_.Reap([this](CURL* e, CURLcode rc) {
      auto it = active_.find(e);
      if (it == active_.end()) return;
      std::unique_ptr<Transfer> t = std::move(it->second);
      active_.erase(it);
      if (!t->watch) lanes_.Ended(*t);
      Finish(std::move(t), rc);
    });
  }

  void Finish(std::unique_ptr<Transfer> t, CURLcode rc) {
    const long code = t->ResponseCode();
    if (t->watch) {
      Status s = t->WatchEndStatus(rc, code);
      if (code == 401 && tokens_.FromFile()) tokens_.Invalidate();
      t->CloseWatch(s);
      return;
    }
    if (rc != CURLE_OK) {
      if (t->body_overflow) {
        t->done(Status(StatusCode::kOutOfRange, "response body exceeds " + std::to_string(t->max_body) + " bytes"));
        return;
      }
      Status s = curl_internal::StatusFromCurl(rc, t->errbuf);
      lanes_.Failed(std::move(t), std::move(s), curl_internal::IsConnectionError(rc));
      return;
    }
    lanes_.Answered(std::move(t), code);
  }

  void Shutdown() {
    TakeIncoming();
    if (h2_) h2_->Abort();  // its requests end through OnH2Done
    Status cancelled(StatusCode::kCancelled, "API client shut down");
    auto finish = [&](std::unique_ptr<Transfer>& t) {
      if (t->watch) {
        t->CloseWatch(cancelled);
      } else if (t->done) {
        t->done(cancelled);
      }
    };
    for (auto& [e, t] : active_) {
      io_.Remove(e);
      finish(t);
    }
    active_.clear();
    lanes_.Drain(finish);
  }

  PendingCount pending_;  // first member: the last to go, after Shutdown's transfers
  const RestConfig config_;
  const CurlClientOptions options_;
  Clock& clock_;
  TokenSource tokens_;
  // Before io_, so what its easy handles point at (CONNECT_TO list, socket callback data)
  // outlives the multi handle and its connections.
  const TransferSetup setup_;
  std::atomic<uint64_t> next_watch_id_{1};

  Mutex mu_;
  std::vector<std::unique_ptr<Transfer>> incoming_ GUARDED_BY(mu_);
  bool wakeup_pending_ GUARDED_BY(mu_) = false;
  std::vector<uint64_t> cancels_ GUARDED_BY(mu_);

  // Owned by the I/O thread (io_.Wake() aside).
  CurlIoLoop io_;
  RequestLanes lanes_;
  std::vector<std::unique_ptr<Transfer>> from_callbacks_;  // submitted on the I/O thread
  std::unordered_map<CURL*, std::unique_ptr<Transfer>> active_;
  std::unordered_map<Transfer*, std::unique_ptr<Transfer>> h2_active_;  // before h2_: outlives it
  std::unique_ptr<H2Session> h2_;  // null: everything through libcurl
  Status init_status_;

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

}  // namespace ksched::client
