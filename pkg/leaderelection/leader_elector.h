// LeaderElector: client-go's leader election on a coordination.k8s.io/v1 Lease.
//
// A candidate polls the Lease every retry_period (with jitter) and takes it when it is
// absent, released (empty holder), or unchanged for a full lease_duration as measured on
// the candidate's OWN monotonic clock since it last saw the record change. Remote
// timestamps are written for humans but never trusted, so clock skew between hosts does
// not matter (clocks running at different rates still would). Writes are PUTs carrying
// the resourceVersion last read, so of two racing candidates exactly one wins; the other
// gets 409 Conflict.
//
// The leader renews every retry_period. A renewal round retries every retry_period
// until renew_deadline has passed; then leadership is lost and on_stopped_leading runs.
// Because renew_deadline < lease_duration, a leader that stops acting as soon as it is
// told has stopped before anyone else can take over. Like client-go this is not fencing:
// a process frozen for longer than the margin can still act after losing the lease.
//
// Threading: Start() runs the loop on its own thread; callbacks run on that thread and
// must return quickly. IsLeader(), GetLeader() and Check() may be called from any thread.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <random>
#include <stop_token>
#include <string>
#include <thread>

#include "pkg/client/api_client.h"
#include "pkg/leaderelection/lease.h"
#include "pkg/util/clock.h"
#include "pkg/util/mutex.h"
#include "pkg/util/status.h"
#include "pkg/util/thread_annotations.h"

namespace ksched::leaderelection {

struct LeaderCallbacks {
  // The lease was acquired; the caller may start acting as leader.
  std::function<void()> on_started_leading;
  // Renewal failed for renew_deadline: stop acting as leader now (kube-scheduler exits).
  // Unlike client-go it is not called when the loop ends through Stop() or Release():
  // the caller asked for that and knows.
  std::function<void()> on_stopped_leading;
  // The observed holder changed (to us, to another candidate, or to "" on release).
  std::function<void(const std::string& identity)> on_new_leader;
};

struct LeaderElectorOptions {
  // The client for lease requests; not owned. Give it a rate budget of its own so a
  // renewal never queues behind other traffic.
  client::ApiClient* client = nullptr;
  std::string lock_namespace = "kube-system";
  std::string lock_name;
  // Unique per process; kube-scheduler uses hostname + "_" + a random UUID.
  std::string identity;
  Clock::duration lease_duration = std::chrono::seconds(15);
  Clock::duration renew_deadline = std::chrono::seconds(10);
  Clock::duration retry_period = std::chrono::seconds(2);
  // Each acquire attempt waits retry_period * (1 + rand[0, jitter_factor)), as
  // wait.JitterUntil(retryPeriod, 1.2); 0 makes the schedule deterministic.
  double jitter_factor = 1.2;
  Clock* clock = &RealClock();
  LeaderCallbacks callbacks;
};

// upstream's JitterFactor, also used in validation.
inline constexpr double kJitterFactor = 1.2;

class LeaderElector {
 public:
  // Validates as NewLeaderElector: lease_duration > renew_deadline > 1.2 * retry_period,
  // all positive, identity and lock name set, a client given.
  static StatusOr<std::unique_ptr<LeaderElector>> New(LeaderElectorOptions options);
  ~LeaderElector();  // Stop()s; does not release the lease
  LeaderElector(const LeaderElector&) = delete;
  LeaderElector& operator=(const LeaderElector&) = delete;

  // Starts the acquire-then-renew loop on a new thread. Call once.
  void Start();
  // Ends the loop (an in-flight request is abandoned) and joins its thread. The lease is
  // kept: others take over after lease_duration. Idempotent; from a callback it only
  // requests the stop.
  void Stop();
  // Stop()s, then gives the lease up if we hold it (ReleaseOnCancel): writes an empty
  // holderIdentity and leaseDurationSeconds 1 so a candidate takes over on its next
  // attempt. A lease someone else took meanwhile is left alone (409 or a foreign holder).
  Status Release();

  // Whether the last observed record names us, renewal has not failed, and our last
  // successful write began recently enough (renew_deadline + retry_period, at most
  // lease_duration ago) that no other candidate can have taken over yet. The last part
  // is what a frozen process (SIGSTOP, a long GC-like stall) sees on waking before the
  // elector's thread has run: not the leader, so it must not bind.
  bool IsLeader() const;
  // The holder in the last observed record ("" when none was seen or it was released).
  std::string GetLeader() const;
  // The watchdog behind /healthz (NewLeaderHealthzAdaptor): fails when the last record
  // we observed names us but was last written more than lease_duration + tolerance ago,
  // i.e. the process should have given up leadership and did not. OK for non-leaders.
  Status Check(Clock::duration tolerance = std::chrono::seconds(20)) const;
  // "namespace/name", as log lines name the lock.
  const std::string& Describe() const { return describe_; }
  const std::string& identity() const { return options_.identity; }

  // One round: read the lease, then create, take over or renew it. True when we hold it
  // afterwards. Requests are bounded by `deadline` and abandoned on `stop`. The loop's
  // building block; exposed so tests can drive races step by step.
  bool TryAcquireOrRenew(Clock::time_point deadline, std::stop_token stop = {});
  LeaseRecord ObservedRecord() const;

 private:
  explicit LeaderElector(LeaderElectorOptions options);

  void Run(std::stop_token stop);
  // Loops until the lease is ours (true) or a stop is requested (false).
  bool Acquire(std::stop_token stop);
  // Renews until a round fails (false: lost) or a stop is requested (true).
  bool Renew(std::stop_token stop);
  void MaybeReportTransition();
  // Send() bounded by `deadline` (no client retries) that gives up on `stop`.
  StatusOr<client::Response> Call(client::Request request, Clock::time_point deadline, std::stop_token stop);
  bool IsLeaderLocked() const REQUIRES(mu_) { return observed_.holder_identity == options_.identity; }
  // Our write of `record` went through: it is what we observed, as of now. Returns true.
  bool Wrote(const LeaseRecord& record, Clock::time_point round_start) EXCLUDES(mu_);

  const LeaderElectorOptions options_;
  const std::string describe_;
  Clock& clock_;

  mutable Mutex mu_;
  LeaseRecord observed_ GUARDED_BY(mu_);
  Clock::time_point observed_time_ GUARDED_BY(mu_);
  bool lost_ GUARDED_BY(mu_) = false;
  // When the round of our last successful write started (the write reached the server
  // no earlier, so others saw it change no earlier).
  Clock::time_point renewed_at_ GUARDED_BY(mu_);

  // Elector thread only (and Release, after the thread is joined).
  std::string reported_leader_;
  std::mt19937_64 rng_;
  std::jthread thread_;
};

}  // namespace ksched::leaderelection
