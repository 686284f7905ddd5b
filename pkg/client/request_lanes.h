// The order in which the CurlApiClient's (curl_client.h) requests go out, and whether a
// failed one goes out again: client-go's client-side rate limiting (its rest.Request's
// tryThrottle on a flowcontrol token bucket) and retries (rest.Request's
// retryFn/checkWait: Retry-After on 429 and 5xx, and connection errors for GETs).
//
// Two lanes, each a FIFO with a rate budget of its own: foreground requests (binds,
// lists, watches) and background ones (events, status patches). Background requests
// start only while no foreground request waits, and a full background lane drops its
// oldest request, as upstream's event broadcaster drops events when its queue is full.
// Requests marked Request::first (binds) queue ahead of the rest of their lane, in
// their own order.
//
// Not thread-safe: the client's I/O thread owns it.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>

#include "pkg/client/curl_client.h"
#include "pkg/client/curl_transfer.h"
#include "pkg/client/rate_limiter.h"
#include "pkg/client/rest_config.h"
#include "pkg/util/clock.h"
#include "pkg/util/status.h"

namespace ksched::client::curl_internal {

class RequestLanes {
 public:
  RequestLanes(const RestConfig& config, const CurlClientOptions& options, Clock& clock, TokenSource& tokens);

  // Queues t at the back of its lane.
  void Enqueue(std::unique_ptr<Transfer> t);
  // t rejoins its lane at `at`.
  void Retry(std::unique_ptr<Transfer> t, Clock::time_point at) { delayed_.emplace(at, std::move(t)); }

  // Hands `start` the queued transfers that may start now, in FIFO order per lane, as
  // far as the in-flight bound and each lane's rate limiter allow; retries rejoin their
  // lane first when their delay is over.
  void StartDue(const std::function<void(std::unique_ptr<Transfer>)>& start);
  // A plain request (not a watch) went out, or ended; for the in-flight bounds.
  void Started(const Transfer& t) { Count(t, +1); }
  void Ended(const Transfer& t) { Count(t, -1); }
  // When a queued transfer may start without anything else happening first (a retry's
  // delay or a rate limiter's next token); time_point::max() if none waits on time.
  Clock::time_point NextDue(Clock::time_point now) const;

  // Forgets a cancelled watch waiting here.
  void Cancel(uint64_t watch_id);
  // Hands every waiting transfer to `fn` and forgets them all (at shutdown).
  void Drain(const std::function<void(std::unique_ptr<Transfer>&)>& fn);

  // No answer came: a GET (or a write marked retry_connection_errors) is tried again
  // after a connection error, with a doubling delay; anything else fails with `s`.
  void Failed(std::unique_ptr<Transfer> t, Status s, bool connection_error);
  // The server answered `code`; t->body and t->retry_after hold the rest. A 401 with a
  // token from a file is retried once with the file read again; a 429 or 5xx with
  // Retry-After is retried after it; anything else completes t.
  void Answered(std::unique_ptr<Transfer> t, long code);

 private:
  struct Lane {
    Lane(double qps, int burst, Clock::time_point now) : bucket(qps, burst, now) {}
    TokenBucket bucket;
    std::deque<std::unique_ptr<Transfer>> ready;  // waiting to start
    size_t first = 0;                             // leading requests marked Request::first
    Clock::time_point free_at{};                  // the limiter's next token
  };

  const CurlClientOptions& options_;
  Clock& clock_;
  TokenSource& tokens_;
  // Foreground (0) and background (1) requests.
  Lane lanes_[2];
  std::multimap<Clock::time_point, std::unique_ptr<Transfer>> delayed_;  // retries, by due time
  void Count(const Transfer& t, int delta) {
    in_flight_ += delta;
    if (t.req.background) background_in_flight_ += delta;
    if (t.req.first) first_in_flight_ += delta;
  }
  int in_flight_ = 0;  // plain requests started and not yet ended
  int background_in_flight_ = 0;  // of which background ones
  int first_in_flight_ = 0;       // and ones marked Request::first (binds)
  int64_t dropped_background_ = 0;
};

}  // namespace ksched::client::curl_internal
