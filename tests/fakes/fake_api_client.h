// A scripted, in-memory client::ApiClient for unit tests of code that writes to the
// API server (the scheduler's binds, events and status patches; preemption's deletes):
// every request is recorded, and a per-test handler decides each answer.
//
//   FakeApiClient api;
//   api.SetHandler([](const client::Request& r) -> StatusOr<client::Response> {
//     if (r.path.ends_with("/binding")) return FakeApiClient::ApiError(404, "NotFound", "pods \"p\" not found");
//     return client::Response{201, "{}"};
//   });
//
// Answers. Without a handler, POST gets 201 "{}" and every other verb 200 "{}". A
// handler's Response with a non-2xx http_code becomes an error Status the way the real
// client maps it (client::StatusFromHttp), so a handler can return either an API
// Status body or a ready Status (ApiError() builds one; a transport error such as
// DeadlineExceeded is just a Status).
//
// Threading. By default a request is answered synchronously inside Send(), on the
// caller's thread, before Send() returns: deterministic, and Do() works from any thread.
// With Options::async the answers run in order on the client's own thread, as the real
// client's callbacks run on its I/O thread. Either way the handler and the callbacks run
// without the client's lock held, so they may send further requests (a bind's completion
// that records an event). Matchers (Hold, Release, Requests) run under the lock: keep
// them pure.
//
// In flight. Requests matching Hold()'s predicate are recorded but kept unanswered until
// Release() answers them (with the handler as it is then, or with a given result), so a
// test can act while, say, a bind is pending. Requests still held when the client is
// destroyed are answered Cancelled. Watch() records the request and returns a stream
// that never delivers anything.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "pkg/client/api_client.h"
#include "pkg/api/json.h"
#include "pkg/util/status.h"

namespace ksched::testing {

class FakeApiClient final : public client::ApiClient {
 public:
  using Handler = std::function<StatusOr<client::Response>(const client::Request&)>;
  using Matcher = std::function<bool(const client::Request&)>;

  struct Options {
    bool async = false;  // answer on the client's own thread instead of inside Send()
  };

  FakeApiClient() : FakeApiClient(Options{}) {}
  explicit FakeApiClient(Options options) : async_(options.async) {
    if (async_) worker_ = std::thread([this] { AnswerLoop(); });
  }
  ~FakeApiClient() override {
    Release(nullptr, Status(StatusCode::kCancelled, "fake API client destroyed"));
    if (worker_.joinable()) {
      {
        std::lock_guard l(mu_);
        stopping_ = true;
      }
      cv_.notify_all();
      worker_.join();  // answers what is already queued first
    }
  }
  FakeApiClient(const FakeApiClient&) = delete;
  FakeApiClient& operator=(const FakeApiClient&) = delete;

  // ---- scripting ----------------------------------------------------------------------

  // Decides the answer to every request from now on (null: the default answers).
  void SetHandler(Handler handler) {
    std::lock_guard l(mu_);
    handler_ = std::move(handler);
  }
  // Requests sent from now on that match are held unanswered (null: hold none; requests
  // already held stay held until released).
  void Hold(Matcher matcher) {
    std::lock_guard l(mu_);
    hold_ = std::move(matcher);
  }
  // Answers the held requests that `which` matches (null: all), in the order they were
  // sent, through the handler; returns how many. Sync mode: on this thread, before
  // returning.
  size_t Release(const Matcher& which = nullptr) { return ReleaseImpl(which, std::nullopt); }
  // Same, answering each with `result` instead of asking the handler.
  size_t Release(const Matcher& which, StatusOr<client::Response> result) {
    return ReleaseImpl(which, std::move(result));
  }
  size_t HeldCount() const {
    std::lock_guard l(mu_);
    return held_.size();
  }
  // Blocks (real time, bounded) until at least `n` requests are held.
  bool WaitForHeld(size_t n, std::chrono::milliseconds timeout = std::chrono::seconds(10)) const {
    std::unique_lock l(mu_);
    return cv_.wait_for(l, timeout, [&] { return held_.size() >= n; });
  }

  // ---- what was sent --------------------------------------------------------------------

  // Every request sent so far (held ones included), in order.
  std::vector<client::Request> Requests(const Matcher& which = nullptr) const {
    std::lock_guard l(mu_);
    std::vector<client::Request> out;
    for (const client::Request& r : requests_)
      if (!which || which(r)) out.push_back(r);
    return out;
  }
  size_t Count(const Matcher& which = nullptr) const { return Requests(which).size(); }
  // The requests whose precondition failed: answered with its error, never sent.
  std::vector<client::Request> Unsent() const {
    std::lock_guard l(mu_);
    return unsent_;
  }
  std::vector<client::Request> WatchRequests() const {
    std::lock_guard l(mu_);
    return watches_;
  }
  void ClearRequests() {
    std::lock_guard l(mu_);
    requests_.clear();
    unsent_.clear();
    watches_.clear();
  }

  // ---- helpers --------------------------------------------------------------------------

  // Matches `verb` requests whose path contains `path_part` ("" matches any path).
  static Matcher Is(client::Verb verb, std::string path_part = "") {
    return [verb, part = std::move(path_part)](const client::Request& r) {
      return r.verb == verb && r.path.find(part) != std::string::npos;
    };
  }
  // The error the real client reports for an API Status answer, e.g.
  // ApiError(409, "Conflict", "Operation cannot be fulfilled on ...").
  static Status ApiError(long http_code, std::string_view reason, std::string_view message) {
    std::string body = R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":)";
    api::AppendJsonString(body, message);
    body += R"(,"reason":)";
    api::AppendJsonString(body, reason);
    body += R"(,"code":)" + std::to_string(http_code) + "}";
    return client::StatusFromHttp(http_code, body);
  }

  // ---- client::ApiClient ------------------------------------------------------------

  void Send(client::Request request, client::ResponseCallback done) override {
    Pending p{std::move(request), std::move(done), std::nullopt};
    // A request whose precondition fails is never sent, as the real client does: it is
    // answered with that error and recorded apart (Unsent()).
    if (p.request.precondition) {
      if (Status s = p.request.precondition(); !s.ok()) {
        {
          std::lock_guard l(mu_);
          unsent_.push_back(p.request);
        }
        p.done(std::move(s));
        return;
      }
    }
    {
      std::lock_guard l(mu_);
      requests_.push_back(p.request);
      if (hold_ && hold_(p.request)) {
        held_.push_back(std::move(p));
        cv_.notify_all();
        return;
      }
      if (async_) {
        ++unanswered_;
        queue_.push_back(std::move(p));
        cv_.notify_all();
        return;
      }
    }
    Answer(std::move(p));
  }

  std::unique_ptr<client::WatchStream> Watch(client::Request request, client::WatchCallbacks) override {
    std::lock_guard l(mu_);
    watches_.push_back(std::move(request));
    return std::make_unique<NoopStream>();
  }

  // True once nothing is held or queued for an answer (held requests count as pending:
  // they are in flight until released).
  bool WaitIdle(std::chrono::milliseconds timeout) override {
    std::unique_lock l(mu_);
    return cv_.wait_for(l, timeout, [&] { return held_.empty() && unanswered_ == 0; });
  }

 private:
  struct Pending {
    client::Request request;
    client::ResponseCallback done;
    std::optional<StatusOr<client::Response>> result;  // set: answer with this
  };
  class NoopStream final : public client::WatchStream {
   public:
    void Cancel() override {}
  };

  size_t ReleaseImpl(const Matcher& which, const std::optional<StatusOr<client::Response>>& result) {
    std::vector<Pending> released;
    {
      std::lock_guard l(mu_);
      for (auto it = held_.begin(); it != held_.end();) {
        if (which && !which(it->request)) {
          ++it;
          continue;
        }
        if (result) it->result = *result;
        released.push_back(std::move(*it));
        it = held_.erase(it);
      }
      if (async_) {
        unanswered_ += released.size();
        for (Pending& p : released) queue_.push_back(std::move(p));
        cv_.notify_all();
        return released.size();
      }
      cv_.notify_all();
    }
    for (Pending& p : released) Answer(std::move(p));
    return released.size();
  }

  void Answer(Pending p) {
    StatusOr<client::Response> r = p.result ? std::move(*p.result) : Serve(p.request);
    p.done(std::move(r));
  }

  StatusOr<client::Response> Serve(const client::Request& request) {
    Handler handler;
    {
      std::lock_guard l(mu_);
      handler = handler_;
    }
    if (!handler) return client::Response{request.verb == client::Verb::kPost ? 201L : 200L, "{}"};
    StatusOr<client::Response> r = handler(request);
    if (r.ok() && (r->http_code < 200 || r->http_code >= 300)) return client::StatusFromHttp(r->http_code, r->body);
    return r;
  }

  void AnswerLoop() {
    std::unique_lock l(mu_);
    while (true) {
      cv_.wait(l, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and everything queued is answered
      Pending p = std::move(queue_.front());
      queue_.pop_front();
      l.unlock();
      Answer(std::move(p));
      l.lock();
      --unanswered_;
      cv_.notify_all();
    }
  }

  const bool async_;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  Handler handler_;
  Matcher hold_;
  std::vector<client::Request> requests_;
  std::vector<client::Request> unsent_;
  std::vector<client::Request> watches_;
  std::deque<Pending> held_;
  std::deque<Pending> queue_;  // async: waiting for the answer thread
  size_t unanswered_ = 0;      // async: queued or being answered
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace ksched::testing
