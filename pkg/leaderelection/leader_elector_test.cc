#include "pkg/leaderelection/leader_elector.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <thread>

#include "tests/fakes/fake_api_client.h"
#include "tests/fakes/fake_leases.h"

namespace ksched::leaderelection {
namespace {

using namespace std::chrono_literals;
using client::Verb;
using ksched::testing::FakeApiClient;
using ksched::testing::FakeLeases;

constexpr char kName[] = "ksched";

// The `verb` requests sent to `client` so far.
int Sent(const FakeApiClient& client, Verb verb) { return static_cast<int>(client.Count(FakeApiClient::Is(verb))); }
std::vector<std::string> Bodies(const FakeApiClient& client, Verb verb) {
  std::vector<std::string> out;
  for (const client::Request& r : client.Requests(FakeApiClient::Is(verb))) out.push_back(r.body);
  return out;
}

// A hung connection: requests from now on stay unanswered until Unhang() answers them
// with Unavailable, as a reset connection would.
void Hang(FakeApiClient& client) {
  client.Hold([](const client::Request&) { return true; });
}
void Unhang(FakeApiClient& client) {
  client.Hold(nullptr);
  client.Release(nullptr, Unavailable("connection reset"));
}

// A FakeClock that knows where each loop thread sleeps, so a test can wait until every
// loop has finished reacting to an Advance() and is parked on a future deadline.
class SteppingClock : public Clock {
 public:
  time_point Now() const override { return fake_.Now(); }
  wall_time WallNow() const override { return fake_.WallNow(); }
  bool SleepUntil(time_point deadline, std::stop_token stop) override {
    {
      std::lock_guard l(mu_);
      sleeping_[std::this_thread::get_id()] = deadline;
      cv_.notify_all();
    }
    bool reached = fake_.SleepUntil(deadline, stop);
    std::lock_guard l(mu_);
    sleeping_.erase(std::this_thread::get_id());
    cv_.notify_all();
    return reached;
  }

  // Waits (bounded, real time) until `threads` loops sleep on deadlines still ahead.
  bool Settle(size_t threads) {
    std::unique_lock l(mu_);
    return cv_.wait_for(l, 5s, [&] {
      if (sleeping_.size() != threads) return false;
      for (const auto& [id, deadline] : sleeping_)
        if (deadline <= fake_.Now()) return false;
      return true;
    });
  }
  // Advances time and waits for `threads` loops to settle again.
  bool Step(duration d, size_t threads = 1) {
    fake_.Advance(d);
    return Settle(threads);
  }
  void Advance(duration d) { fake_.Advance(d); }

 private:
  FakeClock fake_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::thread::id, time_point> sleeping_;
};

// Counts callbacks; waits for them in bounded real time.
struct Events {
  std::mutex mu;
  std::condition_variable cv;
  int started = 0;
  int stopped = 0;
  std::vector<std::string> leaders;

  LeaderCallbacks Callbacks() {
    return {.on_started_leading = [this] { Bump(started); },
            .on_stopped_leading = [this] { Bump(stopped); },
            .on_new_leader =
                [this](const std::string& id) {
                  std::lock_guard l(mu);
                  leaders.push_back(id);
                  cv.notify_all();
                }};
  }
  void Bump(int& n) {
    std::lock_guard l(mu);
    ++n;
    cv.notify_all();
  }
  bool WaitFor(const int& n, int want) {
    std::unique_lock l(mu);
    return cv.wait_for(l, 5s, [&] { return n >= want; });
  }
  int Get(const int& n) {
    std::lock_guard l(mu);
    return n;
  }
};

std::unique_ptr<LeaderElector> MustNew(LeaderElectorOptions o) {
  auto le = LeaderElector::New(std::move(o));
  EXPECT_TRUE(le.ok()) << le.status().ToString();
  return le.ok() ? std::move(*le) : nullptr;
}

// Every test's API server: a FakeApiClient with the Lease endpoints behind it. Each test
// brings its own clock (a FakeClock, a SteppingClock for the loops, or the real one),
// declared after these and so destroyed before them, as before.
class LeaderElectorTest : public ::testing::Test {
 protected:
  // Options for candidate `identity` on the fake client, without jitter; with `ev`, the
  // callbacks count into it.
  LeaderElectorOptions Options(Clock& clock, std::string identity, Events* ev = nullptr) {
    LeaderElectorOptions o{.client = &client,
                           .lock_namespace = "kube-system",
                           .lock_name = kName,
                           .identity = std::move(identity),
                           .jitter_factor = 0,
                           .clock = &clock};
    if (ev != nullptr) o.callbacks = ev->Callbacks();
    return o;
  }
  // Candidate `identity`, not started.
  std::unique_ptr<LeaderElector> New(Clock& clock, std::string identity) {
    return MustNew(Options(clock, std::move(identity)));
  }
  // Candidate `identity` whose callbacks count into `ev`, its loop started.
  std::unique_ptr<LeaderElector> StartLoop(Clock& clock, std::string identity, Events& ev) {
    auto le = MustNew(Options(clock, std::move(identity), &ev));
    le->Start();
    return le;
  }

  FakeApiClient client;
  FakeLeases leases{client};
};

LeaseRecord HeldBy(std::string holder, int transitions = 0, std::string renew = "2026-01-01T00:00:00.000000Z") {
  return {.holder_identity = std::move(holder),
          .lease_duration_seconds = 15,
          .acquire_time = "2026-01-01T00:00:00.000000Z",
          .renew_time = std::move(renew),
          .lease_transitions = transitions};
}

Clock::time_point Later(Clock& c) { return c.Now() + 10s; }

TEST_F(LeaderElectorTest, ValidatesOptions) {
  FakeClock clock;
  struct Case {
    const char* name;
    std::function<void(LeaderElectorOptions&)> mutate;
    const char* error;  // nullptr: valid
  };
  const Case cases[] = {
      {"defaults", [](auto&) {}, nullptr},
      {"lease not above renew", [](auto& o) { o.lease_duration = 10s; }, "leaseDuration must be greater than renewDeadline"},
      {"renew not above 1.2 retry", [](auto& o) { o.retry_period = 9s; },
       "renewDeadline must be greater than retryPeriod*JitterFactor"},
      {"zero retry", [](auto& o) { o.retry_period = 0s; }, "retryPeriod must be greater than zero"},
      {"no identity", [](auto& o) { o.identity.clear(); }, "Lock identity is empty"},
      {"no client", [](auto& o) { o.client = nullptr; }, "Lock must not be nil."},
      {"no name", [](auto& o) { o.lock_name.clear(); }, "lock namespace and name are required"},
      {"short test timings", [](auto& o) { o.lease_duration = 2s; o.renew_deadline = 1500ms; o.retry_period = 300ms; },
       nullptr},
  };
  for (const auto& c : cases) {
    auto o = Options(clock, "a");
    c.mutate(o);
    auto le = LeaderElector::New(o);
    if (c.error == nullptr) {
      EXPECT_TRUE(le.ok()) << c.name << ": " << le.status().ToString();
    } else {
      ASSERT_FALSE(le.ok()) << c.name;
      EXPECT_EQ(le.status().message(), c.error) << c.name;
    }
  }
}

TEST_F(LeaderElectorTest, AcquiresAbsentLease) {
  FakeClock clock;
  auto le = New(clock, "a");
  EXPECT_FALSE(le->IsLeader());
  ASSERT_TRUE(le->TryAcquireOrRenew(Later(clock)));
  EXPECT_TRUE(le->IsLeader());
  EXPECT_EQ(le->GetLeader(), "a");
  auto stored = leases.Get(kName);
  ASSERT_TRUE(stored.has_value());
  const std::string now = FormatMicroTime(clock.WallNow());
  EXPECT_EQ(stored->record, (LeaseRecord{.holder_identity = "a",
                                         .lease_duration_seconds = 15,
                                         .acquire_time = now,
                                         .renew_time = now,
                                         .lease_transitions = 0}));
  EXPECT_EQ(Sent(client, Verb::kPost), 1);
}

TEST_F(LeaderElectorTest, DoesNotTakeOverAFreshLease) {
  FakeClock clock;
  leases.Put(kName, HeldBy("other"));
  auto le = New(clock, "a");
  EXPECT_FALSE(le->TryAcquireOrRenew(Later(clock)));
  clock.Advance(15s - 1ms);
  EXPECT_FALSE(le->TryAcquireOrRenew(Later(clock)));
  EXPECT_FALSE(le->IsLeader());
  EXPECT_EQ(le->GetLeader(), "other");
  EXPECT_EQ(Sent(client, Verb::kPut), 0);
  EXPECT_EQ(leases.Get(kName)->record.holder_identity, "other");
}

TEST_F(LeaderElectorTest, TakesOverAfterLeaseDurationOnOwnClockDespiteRemoteTimes) {
  // The holder's clock runs 50 years ahead: its renewTime is in our future. Only the
  // local time since the record last changed counts.
  FakeClock clock;
  leases.Put(kName, HeldBy("other", 2, "2076-01-01T00:00:00.000000Z"));
  auto le = New(clock, "a");
  EXPECT_FALSE(le->TryAcquireOrRenew(Later(clock)));
  // The holder renews 10 s later: the expiry clock restarts when we see the change.
  clock.Advance(10s);
  leases.Put(kName, HeldBy("other", 2, "2076-01-01T00:00:10.000000Z"));
  EXPECT_FALSE(le->TryAcquireOrRenew(Later(clock)));
  clock.Advance(14s);
  EXPECT_FALSE(le->TryAcquireOrRenew(Later(clock)));  // 24 s since first seen, 14 s since the change
  clock.Advance(1s);
  ASSERT_TRUE(le->TryAcquireOrRenew(Later(clock)));
  auto stored = leases.Get(kName)->record;
  EXPECT_EQ(stored.holder_identity, "a");
  EXPECT_EQ(stored.lease_transitions, 3);
  EXPECT_EQ(stored.acquire_time, FormatMicroTime(clock.WallNow()));
  EXPECT_TRUE(le->IsLeader());
}

TEST_F(LeaderElectorTest, TakesAReleasedLeaseAtOnce) {
  FakeClock clock;
  leases.Put(kName, {.holder_identity = "", .lease_duration_seconds = 1, .lease_transitions = 5});
  auto le = New(clock, "a");
  ASSERT_TRUE(le->TryAcquireOrRenew(Later(clock)));
  EXPECT_EQ(leases.Get(kName)->record.lease_transitions, 6);
}

TEST_F(LeaderElectorTest, RenewKeepsAcquireTimeTransitionsAndMetadata) {
  FakeClock clock;
  leases.Put(kName, {.holder_identity = "", .lease_transitions = 1}, R"("labels":{"team":"sched"})");
  auto le = New(clock, "a");
  ASSERT_TRUE(le->TryAcquireOrRenew(Later(clock)));
  const std::string acquired = FormatMicroTime(clock.WallNow());
  clock.Advance(2s);
  ASSERT_TRUE(le->TryAcquireOrRenew(Later(clock)));
  auto stored = leases.Get(kName)->record;
  EXPECT_EQ(stored.acquire_time, acquired);
  EXPECT_EQ(stored.renew_time, FormatMicroTime(clock.WallNow()));
  EXPECT_EQ(stored.lease_transitions, 2);
  auto puts = Bodies(client, Verb::kPut);
  ASSERT_EQ(puts.size(), 2u);
  EXPECT_NE(puts[1].find(R"("labels":{"team":"sched"})"), std::string::npos) << puts[1];
}

TEST_F(LeaderElectorTest, CreateRaceYieldsOneLeader) {
  FakeClock clock;
  auto a = New(clock, "a");
  auto b = New(clock, "b");
  // a reads 404; before its POST lands, b reads 404 and creates the lease.
  bool b_won = false;
  leases.BeforeNext(Verb::kPost, [&] { b_won = b->TryAcquireOrRenew(Later(clock)); });
  EXPECT_FALSE(a->TryAcquireOrRenew(Later(clock)));
  EXPECT_TRUE(b_won);
  EXPECT_FALSE(a->IsLeader());
  EXPECT_TRUE(b->IsLeader());
  EXPECT_EQ(leases.Get(kName)->record.holder_identity, "b");
  // a sees b's fresh lease on its next attempt.
  EXPECT_FALSE(a->TryAcquireOrRenew(Later(clock)));
  EXPECT_EQ(a->GetLeader(), "b");
}

TEST_F(LeaderElectorTest, UpdateRaceYieldsOneLeaderThrough409) {
  FakeClock clock;
  leases.Put(kName, HeldBy("dead", 7));
  auto a = New(clock, "a");
  auto b = New(clock, "b");
  EXPECT_FALSE(a->TryAcquireOrRenew(Later(clock)));
  EXPECT_FALSE(b->TryAcquireOrRenew(Later(clock)));
  clock.Advance(15s);
  // Both see the lease expired; b's takeover lands between a's GET and a's PUT.
  bool b_won = false;
  leases.BeforeNext(Verb::kPut, [&] { b_won = b->TryAcquireOrRenew(Later(clock)); });
  EXPECT_FALSE(a->TryAcquireOrRenew(Later(clock)));
  EXPECT_TRUE(b_won);
  EXPECT_FALSE(a->IsLeader());
  EXPECT_TRUE(b->IsLeader());
  auto stored = leases.Get(kName)->record;
  EXPECT_EQ(stored.holder_identity, "b");
  EXPECT_EQ(stored.lease_transitions, 8);
  EXPECT_FALSE(a->TryAcquireOrRenew(Later(clock)));
}

TEST_F(LeaderElectorTest, ReleaseClearsTheHolderOnlyIfOurs) {
  FakeClock clock;
  auto le = New(clock, "a");
  ASSERT_TRUE(le->TryAcquireOrRenew(Later(clock)));
  clock.Advance(1s);
  ASSERT_TRUE(le->Release().ok());
  auto stored = leases.Get(kName)->record;
  const std::string now = FormatMicroTime(clock.WallNow());
  EXPECT_EQ(stored, (LeaseRecord{.holder_identity = "",
                                 .lease_duration_seconds = 1,
                                 .acquire_time = now,
                                 .renew_time = now,
                                 .lease_transitions = 0}));
  EXPECT_FALSE(le->IsLeader());
  // Not leader any more: a second release writes nothing.
  int puts = Sent(client, Verb::kPut);
  ASSERT_TRUE(le->Release().ok());
  EXPECT_EQ(Sent(client, Verb::kPut), puts);
  // Another candidate takes the released lease on its first attempt.
  auto b = New(clock, "b");
  EXPECT_TRUE(b->TryAcquireOrRenew(Later(clock)));
  EXPECT_EQ(leases.Get(kName)->record.lease_transitions, 1);
}

TEST_F(LeaderElectorTest, ReleaseRetriesWhenALateRenewalOfOursLandsFirst) {
  FakeClock clock;
  auto le = New(clock, "a");
  ASSERT_TRUE(le->TryAcquireOrRenew(Later(clock)));
  // A renewal that Stop() abandoned lands between Release's read and its write: the
  // resourceVersion moves on (409) but the lease is still ours, so Release reads again.
  auto ours = leases.Get(kName)->record;
  leases.BeforeNext(Verb::kPut, [&] { leases.Put(kName, ours); });
  ASSERT_TRUE(le->Release().ok());
  EXPECT_EQ(leases.Get(kName)->record.holder_identity, "");
  EXPECT_EQ(Sent(client, Verb::kPut), 2);  // the conflicting release and its retry (acquire was a POST)
  EXPECT_FALSE(le->IsLeader());
}

TEST_F(LeaderElectorTest, ReleaseLeavesALeaseTakenByOthersAlone) {
  FakeClock clock;
  auto le = New(clock, "a");
  ASSERT_TRUE(le->TryAcquireOrRenew(Later(clock)));
  leases.Put(kName, HeldBy("b", 1));
  int puts = Sent(client, Verb::kPut);
  EXPECT_TRUE(le->Release().ok());
  EXPECT_EQ(Sent(client, Verb::kPut), puts);
  EXPECT_EQ(leases.Get(kName)->record.holder_identity, "b");
  // A takeover between Release's read and write is the server's 409; the read that
  // follows sees the new holder and leaves the lease alone.
  auto c = New(clock, "c");
  leases.Put(kName, {.holder_identity = "", .lease_transitions = 1});
  ASSERT_TRUE(c->TryAcquireOrRenew(Later(clock)));
  leases.BeforeNext(Verb::kPut, [&] { leases.Put(kName, HeldBy("d", 3)); });
  Status s = c->Release();
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(leases.Get(kName)->record.holder_identity, "d");
  EXPECT_FALSE(c->IsLeader());
}

TEST_F(LeaderElectorTest, LoopAcquiresRenewsAndReportsLeaders) {
  SteppingClock clock;
  Events ev;
  leases.Put(kName, HeldBy("other"));
  auto le = StartLoop(clock, "a", ev);
  ASSERT_TRUE(clock.Settle(1));
  EXPECT_EQ(ev.Get(ev.started), 0);
  // Acquire attempts every retry_period (2 s, no jitter); 15 s after first sight it wins.
  for (int i = 0; i < 7; ++i) ASSERT_TRUE(clock.Step(2s));
  EXPECT_EQ(ev.Get(ev.started), 0);
  ASSERT_TRUE(clock.Step(2s));  // t = 16 s
  EXPECT_TRUE(ev.WaitFor(ev.started, 1));
  EXPECT_TRUE(le->IsLeader());
  // The leader renews every retry_period.
  int puts = Sent(client, Verb::kPut);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(clock.Step(2s));
  EXPECT_EQ(Sent(client, Verb::kPut), puts + 3);
  EXPECT_EQ(leases.Get(kName)->record.renew_time, FormatMicroTime(clock.WallNow()));
  le->Stop();
  EXPECT_EQ(ev.Get(ev.stopped), 0);  // a requested stop is not a loss
  std::lock_guard l(ev.mu);
  EXPECT_EQ(ev.leaders, (std::vector<std::string>{"other", "a"}));
}

TEST_F(LeaderElectorTest, JitteredAcquireWaitsBetweenOneAndTwoPointTwoRetryPeriods) {
  SteppingClock clock;
  leases.Put(kName, HeldBy("other"));
  auto o = Options(clock, "a");
  o.jitter_factor = kJitterFactor;
  auto le = MustNew(o);
  le->Start();
  ASSERT_TRUE(clock.Settle(1));
  EXPECT_EQ(Sent(client, Verb::kGet), 1);
  clock.Advance(2s - 1ms);
  ASSERT_TRUE(clock.Settle(1));
  EXPECT_EQ(Sent(client, Verb::kGet), 1);
  ASSERT_TRUE(clock.Step(2401ms));  // past 2 s * 2.2
  EXPECT_EQ(Sent(client, Verb::kGet), 2);
}

TEST_F(LeaderElectorTest, LosesLeadershipWhenRenewalsFailForRenewDeadline) {
  SteppingClock clock;
  Events ev;
  auto le = StartLoop(clock, "a", ev);
  ASSERT_TRUE(clock.Settle(1));  // acquired at t0, sleeping until the next round at t0+2s
  ASSERT_EQ(ev.Get(ev.started), 1);
  leases.SetFault([](const client::Request&) { return Unavailable("apiserver down"); });
  // The round starting at t0+2s retries until t0+12s; the loss comes then, no earlier,
  // and still 3 s before a candidate could take over at t0+15s.
  for (int t = 1; t <= 11; ++t) {
    ASSERT_TRUE(clock.Step(1s)) << "t0+" << t << "s";
    EXPECT_EQ(ev.Get(ev.stopped), 0) << "t0+" << t << "s";
    EXPECT_TRUE(le->IsLeader());
  }
  EXPECT_EQ(Sent(client, Verb::kGet), 2 + 5);  // acquire and first renewal, then +2 +4 +6 +8 +10
  clock.Advance(1s);
  ASSERT_TRUE(ev.WaitFor(ev.stopped, 1));
  EXPECT_FALSE(le->IsLeader());
  // The watchdog: healthy until the lease is lease_duration + 20 s old.
  EXPECT_TRUE(le->Check().ok());
  clock.Advance(23s);  // t0+35s
  EXPECT_TRUE(le->Check().ok());
  clock.Advance(1ms);
  Status s = le->Check();
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "failed election to renew leadership on lease kube-system/ksched");
}

// A 429 storm (with Retry-After far longer than the renew deadline) on the lease
// requests: the elector does not sleep out Retry-After (its calls do not retry in the
// client); it tries again each retry period, and the rounds that get through keep the
// lease for as long as the storm lasts (here one request in three is refused).
TEST_F(LeaderElectorTest, KeepsTheLeaseThroughA429Storm) {
  SteppingClock clock;
  Events ev;
  auto le = StartLoop(clock, "a", ev);
  ASSERT_TRUE(clock.Settle(1));
  ASSERT_EQ(ev.Get(ev.started), 1);
  std::atomic<int> calls{0};
  leases.SetFault([&](const client::Request&) {
    return calls++ % 3 == 0 ? Status(StatusCode::kResourceExhausted, "TooManyRequests (Retry-After: 30)")
                            : Status::OK();
  });
  for (int t = 1; t <= 40; ++t) {
    ASSERT_TRUE(clock.Step(1s)) << "t0+" << t << "s";
    EXPECT_TRUE(le->IsLeader()) << "t0+" << t << "s";
  }
  EXPECT_EQ(ev.Get(ev.stopped), 0);
  EXPECT_GE(calls.load(), 20);  // it kept trying, each retry period, through the storm
}

TEST_F(LeaderElectorTest, LosesLeadershipWhenAnotherTookTheLease) {
  SteppingClock clock;
  Events ev;
  auto le = StartLoop(clock, "a", ev);
  ASSERT_TRUE(clock.Settle(1));
  leases.Put(kName, HeldBy("b", 1));
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(clock.Step(2s));
  EXPECT_EQ(ev.Get(ev.stopped), 0);
  clock.Advance(2s);
  ASSERT_TRUE(ev.WaitFor(ev.stopped, 1));
  EXPECT_FALSE(le->IsLeader());
  EXPECT_EQ(le->GetLeader(), "b");
  EXPECT_TRUE(le->Check().ok());  // not the leader: nothing to watch
}

TEST_F(LeaderElectorTest, TwoLoopsOneLeaderThenFailover) {
  SteppingClock clock;
  Events ev_a, ev_b;
  auto a = MustNew(Options(clock, "a", &ev_a));
  auto b = MustNew(Options(clock, "b", &ev_b));
  a->Start();
  b->Start();
  ASSERT_TRUE(clock.Settle(2));
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(clock.Step(2s, 2));
    EXPECT_NE(a->IsLeader(), b->IsLeader());
  }
  LeaderElector& leader = a->IsLeader() ? *a : *b;
  LeaderElector& standby = a->IsLeader() ? *b : *a;
  Events& standby_ev = a->IsLeader() ? ev_b : ev_a;
  leader.Stop();  // dies without releasing
  ASSERT_TRUE(clock.Settle(1));
  // The standby last saw the record change at the leader's last renewal, or one poll
  // before or after it (the two loops poll at the same instants in either order), so it
  // takes over 14..18 s after that renewal: never before lease_duration on its clock.
  int steps = 0;
  while (!standby.IsLeader() && steps < 10) {
    ASSERT_TRUE(clock.Step(2s));
    ++steps;
  }
  EXPECT_GE(steps, 7);
  EXPECT_LE(steps, 9);
  EXPECT_TRUE(standby_ev.WaitFor(standby_ev.started, 1));
}

TEST_F(LeaderElectorTest, StopAbandonsAHungRequest) {
  SteppingClock clock;
  auto le = New(clock, "a");
  Hang(client);
  le->Start();
  while (Sent(client, Verb::kGet) == 0) std::this_thread::yield();
  auto before = std::chrono::steady_clock::now();
  le->Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - before, 1s);
  Unhang(client);  // the late answer finds nobody waiting
  EXPECT_FALSE(le->IsLeader());
}

// A process frozen past its lease (SIGSTOP, then SIGCONT) must not act on the stale
// belief that it leads: IsLeader() turns false once the last successful write is older
// than renew_deadline + retry_period, before the elector's thread has even run.
TEST_F(LeaderElectorTest, IsLeaderTurnsFalseWhenTheLastRenewalIsTooOld) {
  FakeClock clock;
  auto le = New(clock, "a");  // 15 s / 10 s / 2 s
  ASSERT_TRUE(le->TryAcquireOrRenew(Later(clock)));
  EXPECT_TRUE(le->IsLeader());
  clock.Advance(11s);
  EXPECT_TRUE(le->IsLeader());  // a slow renewal round is still within its deadline
  clock.Advance(1s);
  EXPECT_FALSE(le->IsLeader());  // 12 s: a renewal should have landed by now
  ASSERT_TRUE(le->TryAcquireOrRenew(Later(clock)));
  EXPECT_TRUE(le->IsLeader());
}

// The renew call is bounded by its own deadline, not only by the client's: a client that
// never answers (here: a hung connection) still ends the round, and leadership is lost
// within about renew_deadline.
TEST_F(LeaderElectorTest, RenewalEndsWhenTheClientNeverAnswers) {
  Events events;
  LeaderElectorOptions o = Options(RealClock(), "a", &events);
  o.lease_duration = 2s;
  o.renew_deadline = 1s;
  o.retry_period = 200ms;
  auto le = MustNew(o);
  le->Start();
  ASSERT_TRUE(events.WaitFor(events.started, 1));
  Hang(client);
  const auto hung_at = std::chrono::steady_clock::now();
  ASSERT_TRUE(events.WaitFor(events.stopped, 1));
  // The round's deadline (1 s) plus the call's own slack (1 s) plus a retry period.
  EXPECT_LT(std::chrono::steady_clock::now() - hung_at, 3500ms);
  EXPECT_FALSE(le->IsLeader());
  le->Stop();
  Unhang(client);
}

}  // namespace
}  // namespace ksched::leaderelection
