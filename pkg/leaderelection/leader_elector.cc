#include "pkg/leaderelection/leader_elector.h"

#include <condition_variable>
#include <mutex>
#include <optional>

#include "pkg/util/log.h"

namespace ksched::leaderelection {

using client::Request;
using client::Response;
using client::Verb;

namespace {

// A request can never take less than this, so a nearly spent deadline still gets a try.
constexpr auto kMinRequestTimeout = std::chrono::milliseconds(50);

}  // namespace

StatusOr<std::unique_ptr<LeaderElector>> LeaderElector::New(LeaderElectorOptions o) {
  if (o.lease_duration <= o.renew_deadline) return InvalidArgument("leaseDuration must be greater than renewDeadline");
  if (std::chrono::duration<double>(o.renew_deadline) <= kJitterFactor * std::chrono::duration<double>(o.retry_period))
    return InvalidArgument("renewDeadline must be greater than retryPeriod*JitterFactor");
  if (o.lease_duration <= Clock::duration::zero()) return InvalidArgument("leaseDuration must be greater than zero");
  if (o.renew_deadline <= Clock::duration::zero()) return InvalidArgument("renewDeadline must be greater than zero");
  if (o.retry_period <= Clock::duration::zero()) return InvalidArgument("retryPeriod must be greater than zero");
  if (o.jitter_factor < 0) return InvalidArgument("jitter factor must not be negative");
  if (o.client == nullptr) return InvalidArgument("Lock must not be nil.");
  if (o.lock_name.empty() || o.lock_namespace.empty()) return InvalidArgument("lock namespace and name are required");
  if (o.identity.empty()) return InvalidArgument("Lock identity is empty");
  if (o.clock == nullptr) o.clock = &RealClock();
  return std::unique_ptr<LeaderElector>(new LeaderElector(std::move(o)));
}

LeaderElector::LeaderElector(LeaderElectorOptions options)
    : options_(std::move(options)),
      describe_(options_.lock_namespace + "/" + options_.lock_name),
      clock_(*options_.clock),
      rng_(std::random_device{}()) {}

LeaderElector::~LeaderElector() { Stop(); }

void LeaderElector::Start() {
  thread_ = std::jthread([this](std::stop_token stop) { Run(stop); });
}

void LeaderElector::Stop() {
  thread_.request_stop();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

bool LeaderElector::IsLeader() const {
  MutexLock l(mu_);
  const Clock::duration fresh = std::min(options_.renew_deadline + options_.retry_period, options_.lease_duration);
  return IsLeaderLocked() && !lost_ && clock_.Now() - renewed_at_ < fresh;
}

std::string LeaderElector::GetLeader() const {
  MutexLock l(mu_);
  return observed_.holder_identity;
}

LeaseRecord LeaderElector::ObservedRecord() const {
  MutexLock l(mu_);
  return observed_;
}

Status LeaderElector::Check(Clock::duration tolerance) const {
  MutexLock l(mu_);
  // A hot standby is healthy; only a leader that should have died is not.
  if (!IsLeaderLocked()) return Status::OK();
  if (clock_.Now() - observed_time_ > options_.lease_duration + tolerance)
    return Unavailable("failed election to renew leadership on lease " + describe_);
  return Status::OK();
}

void LeaderElector::Run(std::stop_token stop) {
  if (!Acquire(stop)) return;
  if (options_.callbacks.on_started_leading) options_.callbacks.on_started_leading();
  if (Renew(stop)) return;
  {
    MutexLock l(mu_);
    lost_ = true;
  }
  if (options_.callbacks.on_stopped_leading) options_.callbacks.on_stopped_leading();
}

bool LeaderElector::Acquire(std::stop_token stop) {
  KLOG(INFO) << "attempting to acquire leader lease " << describe_ << "...";
  std::uniform_real_distribution<double> jitter(0.0, options_.jitter_factor);
  while (!stop.stop_requested()) {
    bool ok = TryAcquireOrRenew(clock_.Now() + options_.renew_deadline, stop);
    MaybeReportTransition();
    if (ok) {
      KLOG(INFO) << "successfully acquired lease " << describe_;
      return true;
    }
    KLOG_V(4) << "failed to acquire lease " << describe_;
    double factor = options_.jitter_factor > 0 ? 1.0 + jitter(rng_) : 1.0;
    auto wait = std::chrono::duration_cast<Clock::duration>(options_.retry_period * factor);
    if (!clock_.SleepFor(wait, stop)) return false;
  }
  return false;
}

bool LeaderElector::Renew(std::stop_token stop) {
  while (!stop.stop_requested()) {
    // One round: retry every retry_period until renewed or renew_deadline has passed.
    const auto deadline = clock_.Now() + options_.renew_deadline;
    bool renewed = false;
    while (true) {
      if (TryAcquireOrRenew(deadline, stop)) {
        renewed = true;
        break;
      }
      if (stop.stop_requested()) return true;
      auto next = std::min(clock_.Now() + options_.retry_period, deadline);
      if (!clock_.SleepUntil(next, stop)) return true;
      if (clock_.Now() >= deadline) break;
    }
    MaybeReportTransition();
    if (!renewed) {
      KLOG(INFO) << "failed to renew lease " << describe_ << ": timed out waiting for the condition";
      return false;
    }
    KLOG_V(5) << "successfully renewed lease " << describe_;
    if (!clock_.SleepFor(options_.retry_period, stop)) return true;
  }
  return true;
}

void LeaderElector::MaybeReportTransition() {
  std::string holder = GetLeader();
  if (holder == reported_leader_) return;
  reported_leader_ = holder;
  if (options_.callbacks.on_new_leader) options_.callbacks.on_new_leader(holder);
}

StatusOr<Response> LeaderElector::Call(Request request, Clock::time_point deadline, std::stop_token stop) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_.Now());
  request.timeout = std::max(left, std::chrono::duration_cast<std::chrono::milliseconds>(kMinRequestTimeout));
  const auto request_timeout = request.timeout;
  // The elector's own loop is the retry policy; a client retry after Retry-After could
  // outlast the renew deadline.
  request.max_retries = 0;
  // The callback may run after we gave up on it, so the slot it fills is shared.
  struct Slot {
    Mutex mu;
    std::condition_variable_any cv;
    std::optional<StatusOr<Response>> result GUARDED_BY(mu);
  };
  auto slot = std::make_shared<Slot>();
  options_.client->Send(std::move(request), [slot](StatusOr<Response> r) {
    MutexLock lock(slot->mu);
    slot->result.emplace(std::move(r));
    slot->cv.notify_all();
  });
  // Bounded on its own too (in real time, a little past the request's timeout): a client
  // that never answers (a request stuck in its queue, a lost callback) must not hold a
  // renewal round past its deadline, or a leader would keep acting after losing.
  const auto limit = std::chrono::steady_clock::now() + request_timeout + std::chrono::seconds(1);
  MutexLock lock(slot->mu);
  if (!slot->cv.wait_until(lock, stop, limit, [&]() REQUIRES(slot->mu) { return slot->result.has_value(); })) {
    if (stop.stop_requested()) return Status(StatusCode::kCancelled, "leader election stopped");
    return Status(StatusCode::kDeadlineExceeded, "no answer from the API client within the renew deadline");
  }
  return std::move(*slot->result);
}

bool LeaderElector::TryAcquireOrRenew(Clock::time_point deadline, std::stop_token stop) {
  const Clock::time_point round_start = clock_.Now();
  const std::string now = FormatMicroTime(clock_.WallNow());
  LeaseRecord desired{.holder_identity = options_.identity,
                      .lease_duration_seconds = static_cast<int32_t>(
                          std::chrono::duration_cast<std::chrono::seconds>(options_.lease_duration).count()),
                      .acquire_time = now,
                      .renew_time = now};

  // 1. Read the record, or create it.
  auto got = Call({.verb = Verb::kGet, .path = LeasePath(options_.lock_namespace, options_.lock_name)}, deadline, stop);
  if (!got.ok()) {
    if (stop.stop_requested()) return false;
    if (got.status().code() != StatusCode::kNotFound) {
      KLOG(ERROR) << "error retrieving resource lock " << describe_ << ": " << got.status().message();
      return false;
    }
    auto created = Call({.verb = Verb::kPost,
                         .path = LeaseCollectionPath(options_.lock_namespace),
                         .body = EncodeNewLease(options_.lock_namespace, options_.lock_name, desired)},
                        deadline, stop);
    if (!created.ok()) {
      if (stop.stop_requested()) return false;
      KLOG(ERROR) << "error initially creating leader election record: " << created.status().message();
      return false;
    }
    return Wrote(desired, round_start);
  }
  auto lease = DecodeLease(got->body);
  if (!lease.ok()) {
    KLOG(ERROR) << "error retrieving resource lock " << describe_ << ": " << lease.status().message();
    return false;
  }

  // 2. The record changed since we last looked: restart the expiry clock (our own).
  {
    MutexLock l(mu_);
    if (lease->record != observed_) {
      observed_ = lease->record;
      observed_time_ = clock_.Now();
    }
    if (!lease->record.holder_identity.empty() && observed_time_ + options_.lease_duration > clock_.Now() &&
        !IsLeaderLocked()) {
      KLOG_V(4) << "lock is held by " << lease->record.holder_identity << " and has not yet expired";
      return false;
    }
    // 3. Renewing keeps acquireTime and the transition count; taking over bumps it.
    if (IsLeaderLocked()) {
      desired.acquire_time = lease->record.acquire_time;
      desired.lease_transitions = lease->record.lease_transitions;
    } else {
      desired.lease_transitions = lease->record.lease_transitions + 1;
    }
  }

  // The metadata we read carries its resourceVersion: a racing writer makes this a 409.
  auto updated = Call({.verb = Verb::kPut,
                       .path = LeasePath(options_.lock_namespace, options_.lock_name),
                       .body = EncodeLeaseUpdate(lease->raw_metadata, desired)},
                      deadline, stop);
  if (!updated.ok()) {
    if (stop.stop_requested()) return false;
    KLOG(ERROR) << "Failed to update lock: " << updated.status().message();
    return false;
  }
  return Wrote(desired, round_start);
}

bool LeaderElector::Wrote(const LeaseRecord& record, Clock::time_point round_start) {
  MutexLock l(mu_);
  observed_ = record;
  observed_time_ = clock_.Now();
  renewed_at_ = round_start;
  lost_ = false;
  return true;
}

Status LeaderElector::Release() {
  Stop();
  {
    MutexLock l(mu_);
    if (!IsLeaderLocked()) return Status::OK();
  }
  const auto deadline = clock_.Now() + options_.renew_deadline;
  const std::string path = LeasePath(options_.lock_namespace, options_.lock_name);
  // A renewal that Stop() abandoned may still land after our read and turn the write
  // into a 409; the lease is still ours then, so read again and retry.
  constexpr int kAttempts = 3;
  for (int attempt = 1;; ++attempt) {
    // Read first so a lease someone else took over since our last renewal is left alone;
    // the PUT's resourceVersion covers a takeover between the two requests.
    auto got = Call({.verb = Verb::kGet, .path = path}, deadline, {});
    StatusOr<LeaseObject> lease = got.ok() ? DecodeLease(got->body) : StatusOr<LeaseObject>(got.status());
    if (!lease.ok()) {
      KLOG(ERROR) << "Failed to release lock: " << lease.status().message();
      return lease.status();
    }
    if (lease->record.holder_identity != options_.identity) {
      MutexLock l(mu_);
      observed_ = lease->record;
      observed_time_ = clock_.Now();
      return Status::OK();
    }
    const std::string now = FormatMicroTime(clock_.WallNow());
    LeaseRecord released{.holder_identity = "",
                         .lease_duration_seconds = 1,
                         .acquire_time = now,
                         .renew_time = now,
                         .lease_transitions = lease->record.lease_transitions};
    auto put = Call({.verb = Verb::kPut, .path = path, .body = EncodeLeaseUpdate(lease->raw_metadata, released)},
                    deadline, {});
    if (!put.ok() && put.status().code() == StatusCode::kConflict && attempt < kAttempts) continue;
    if (!put.ok()) {
      KLOG(ERROR) << "Failed to release lock: " << put.status().message();
      return put.status();
    }
    KLOG(INFO) << "released lease " << describe_;
    MutexLock l(mu_);
    observed_ = released;
    observed_time_ = clock_.Now();
    return Status::OK();
  }
}

}  // namespace ksched::leaderelection
