#include "pkg/client/request_lanes.h"

#include <algorithm>
#include <cstddef>
#include <string>

#include "pkg/util/log.h"

namespace ksched::client::curl_internal {
namespace {

constexpr std::chrono::milliseconds kMaxConnectRetryDelay{std::chrono::seconds(30)};

}  // namespace

RequestLanes::RequestLanes(const RestConfig& config, const CurlClientOptions& options, Clock& clock,
                           TokenSource& tokens)
    : options_(options),
      clock_(clock),
      tokens_(tokens),
      lanes_{Lane(config.qps, config.burst, clock_.Now()),
             Lane(options.background_qps.value_or(config.qps), options.background_burst.value_or(config.burst),
                  clock_.Now())} {}

void RequestLanes::Enqueue(std::unique_ptr<Transfer> t) {
  const bool background = t->req.background;
  Lane& lane = lanes_[background ? 1 : 0];
  if (t->req.first) {
    lane.ready.insert(lane.ready.begin() + static_cast<std::ptrdiff_t>(lane.first), std::move(t));
    ++lane.first;
  } else {
    lane.ready.push_back(std::move(t));
  }
  if (background && lane.ready.size() > options_.max_queued_background) {
    std::unique_ptr<Transfer> dropped = std::move(lane.ready.front());
    lane.ready.pop_front();
    if (lane.first > 0) --lane.first;
    if (++dropped_background_ % 1000 == 1)
      KLOG(WARNING) << "API client: " << dropped_background_ << " background request(s) dropped so far, "
                    << "queue full (" << options_.max_queued_background << "), e.g. "
                    << VerbName(dropped->req.verb) << " " << dropped->req.path;
    if (dropped->done)
      dropped->done(Status(StatusCode::kResourceExhausted, "background request queue full, request dropped"));
  }
}

void RequestLanes::StartDue(const std::function<void(std::unique_ptr<Transfer>)>& start) {
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
      // While other foreground requests than binds (a burst of preemption's evictions)
      // are in flight, few background ones: the server shares its CPU among all it
      // serves. Beside binds alone they are not held: that costs a bind burst more than
      // the events take from it.
      if (&lane != &lanes_[0] && in_flight_ - background_in_flight_ - first_in_flight_ > 0 &&
          background_in_flight_ >= options_.max_background_in_flight_beside_evictions)
        break;
      if (t->req.precondition) {
        if (Status s = t->req.precondition(); !s.ok()) {
          std::unique_ptr<Transfer> unsent = std::move(t);
          lane.ready.pop_front();
          if (lane.first > 0) --lane.first;
          unsent->done(std::move(s));
          continue;
        }
      }
      auto wait = lane.bucket.TryTake(now);
      if (wait > Clock::duration::zero()) {
        lane.free_at = now + wait;
        break;
      }
      auto next = std::move(t);
      lane.ready.pop_front();
      if (lane.first > 0) --lane.first;
      start(std::move(next));
    }
  }
}

Clock::time_point RequestLanes::NextDue(Clock::time_point now) const {
  Clock::time_point due = Clock::time_point::max();
  if (!delayed_.empty()) due = std::min(due, delayed_.begin()->first);
  for (const Lane& lane : lanes_)
    if (!lane.ready.empty() && lane.free_at > now) due = std::min(due, lane.free_at);
  return due;
}

void RequestLanes::Cancel(uint64_t watch_id) {
  auto is_it = [&](const auto& t) { return t->watch && t->watch->id == watch_id; };
  for (Lane& lane : lanes_) {
    // Watches are never marked first: the leading ones stay.
    std::erase_if(lane.ready, is_it);
  }
  std::erase_if(delayed_, [&](const auto& kv) { return is_it(kv.second); });
}

void RequestLanes::Drain(const std::function<void(std::unique_ptr<Transfer>&)>& fn) {
  for (Lane& lane : lanes_) {
    for (auto& t : lane.ready) fn(t);
    lane.ready.clear();
    lane.first = 0;
  }
  for (auto& [at, t] : delayed_) fn(t);
  delayed_.clear();
}

void RequestLanes::Failed(std::unique_ptr<Transfer> t, Status s, bool connection_error) {
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

void RequestLanes::Answered(std::unique_ptr<Transfer> t, long code) {
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

}  // namespace ksched::client::curl_internal
