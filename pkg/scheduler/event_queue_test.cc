// EventQueue on a scripted API client: what an event's request holds, how many go to
// the client at once, and that none is lost while the client holds them back.
#include "pkg/scheduler/event_queue.h"

#include <gtest/gtest.h>

#include <string>

#include "pkg/util/clock.h"
#include "tests/fakes/builders.h"
#include "tests/fakes/fake_api_client.h"

namespace ksched::scheduler {
namespace {

using client::Verb;
using testing::FakeApiClient;
using testing::PodBuilder;

Clock::wall_time At(int64_t nanos) { return Clock::wall_time(std::chrono::nanoseconds(nanos)); }

PendingEvent Scheduled(const std::string& pod_name) {
  auto pod = PodBuilder(pod_name).Namespace("ns").UID("u-" + pod_name).Obj();
  return PendingEvent(*pod, nullptr, "ksched", /*warning=*/false, "Scheduled", "Binding",
                      "Successfully assigned ns/" + pod_name + " to n1", At(1));
}

// The pod each sent event is about, in the order they were sent.
std::vector<std::string> SentFor(const FakeApiClient& api) {
  std::vector<std::string> out;
  for (const client::Request& r : api.Requests()) {
    auto at = r.body.find(R"("regarding":{"apiVersion":"v1","kind":"Pod","namespace":"ns","name":")");
    EXPECT_NE(at, std::string::npos) << r.body;
    if (at == std::string::npos) continue;
    at = r.body.find("\"name\":\"", at) + 8;
    out.push_back(r.body.substr(at, r.body.find('"', at) - at));
  }
  return out;
}

TEST(PendingEventTest, RequestCarriesUpstreamsRecorderFields) {
  auto victim = PodBuilder("low").Namespace("ns").UID("u-low").Obj();
  api::Pod versioned = *victim;
  versioned.metadata.resource_version = "42";
  auto preemptor = PodBuilder("high").Namespace("ns").UID("u-high").Obj();
  PendingEvent e(versioned, preemptor.get(), "ksched", /*warning=*/false, "Preempted", "Preempting",
                 "Preempted by ns/high on node n1", At(0x1234));
  EXPECT_EQ(e.Path(), "/apis/events.k8s.io/v1/namespaces/ns/events");
  EXPECT_EQ(e.PodKey(), "ns/low");
  const std::string body = e.Body("host");
  EXPECT_NE(body.find(R"("metadata":{"name":"low.1234)"), std::string::npos) << body;
  EXPECT_NE(body.find(R"("reportingController":"ksched","reportingInstance":"ksched-host",)"
                      R"("action":"Preempting","reason":"Preempted",)"),
            std::string::npos)
      << body;
  EXPECT_NE(body.find(R"("regarding":{"apiVersion":"v1","kind":"Pod","namespace":"ns","name":"low","uid":"u-low",)"
                      R"("resourceVersion":"42"},"related":{"apiVersion":"v1","kind":"Pod","namespace":"ns",)"
                      R"("name":"high","uid":"u-high"},"note":"Preempted by ns/high on node n1","type":"Normal"})"),
            std::string::npos)
      << body;
}

TEST(PendingEventTest, LongNoteIsCutToTheApisLimit) {
  auto pod = PodBuilder("p").Namespace("ns").Obj();
  PendingEvent e(*pod, nullptr, "ksched", /*warning=*/true, "FailedScheduling", "Scheduling", std::string(2000, 'x'),
                 At(1));
  EXPECT_EQ(e.note().size(), 1024u);
  EXPECT_TRUE(e.note().ends_with("x ..."));
  EXPECT_NE(e.Body("h").find(R"("type":"Warning")"), std::string::npos);
}

TEST(EventQueueTest, OnlyMaxSendingAreWithTheClientAtOnce) {
  FakeApiClient api;
  api.Hold(FakeApiClient::Is(Verb::kPost));
  EventQueue q({.client = &api, .hostname = "h", .max_sending = 2});
  for (const char* name : {"a", "b", "c", "d", "e"}) q.Add(Scheduled(name));
  EXPECT_EQ(SentFor(api), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(q.Waiting(), 3u);
  for (const client::Request& r : api.Requests()) EXPECT_TRUE(r.background);

  // An answer, even an error, lets the next one go.
  EXPECT_EQ(api.Release([](const client::Request& r) { return r.body.find(R"("name":"a")") != std::string::npos; },
                        FakeApiClient::ApiError(500, "InternalError", "etcd is away")),
            1u);
  EXPECT_EQ(SentFor(api), (std::vector<std::string>{"a", "b", "c"}));
  while (api.Release() > 0) {
  }
  EXPECT_EQ(SentFor(api), (std::vector<std::string>{"a", "b", "c", "d", "e"}));
  EXPECT_EQ(q.Waiting(), 0u);
}

TEST(EventQueueTest, AnswersInsideSendDrainTheQueueWithoutRecursing) {
  FakeApiClient api;  // answers inside Send()
  api.Hold(FakeApiClient::Is(Verb::kPost));
  EventQueue q({.client = &api, .hostname = "h", .max_sending = 1});
  constexpr int kEvents = 20000;
  for (int i = 0; i < kEvents; ++i) q.Add(Scheduled("p" + std::to_string(i)));
  EXPECT_EQ(api.Count(), 1u);
  api.Hold(nullptr);
  // Each answer comes inside the Send() of the pass it frees a slot for; that pass sends
  // the next one, so the stack stays one level deep.
  EXPECT_EQ(api.Release(), 1u);
  EXPECT_EQ(api.Count(), static_cast<size_t>(kEvents));
  EXPECT_EQ(q.Waiting(), 0u);
}

TEST(EventQueueTest, FullQueueDropsTheOldestWaiting) {
  FakeApiClient api;
  api.Hold(FakeApiClient::Is(Verb::kPost));
  EventQueue q({.client = &api, .hostname = "h", .max_sending = 1, .max_waiting = 3});
  for (const char* name : {"a", "b", "c", "d", "e"}) q.Add(Scheduled(name));
  EXPECT_EQ(q.Waiting(), 3u);
  while (api.Release() > 0) {
  }
  EXPECT_EQ(SentFor(api), (std::vector<std::string>{"a", "c", "d", "e"}));
}

PendingEvent ScheduledAt(const std::string& pod_name, Clock::wall_time at) {
  auto pod = PodBuilder(pod_name).Namespace("ns").UID("u-" + pod_name).Obj();
  return PendingEvent(*pod, nullptr, "ksched", /*warning=*/false, "Scheduled", "Binding", "assigned", at);
}

TEST(EventQueueTest, EventsWaitWhileAHoldLivesAndGoWithTheLastOne) {
  FakeApiClient api;
  FakeClock clock;
  EventQueue q({.client = &api, .hostname = "h", .max_hold = std::chrono::seconds(10), .clock = &clock});
  auto first = q.Hold();
  auto copy = first;  // a completion's copy: the hold ends with the last of them
  auto second = q.Hold();
  for (const char* name : {"a", "b", "c"}) q.Add(ScheduledAt(name, clock.WallNow()));
  EXPECT_EQ(api.Count(), 0u);
  EXPECT_EQ(q.Waiting(), 3u);
  first.reset();
  second.reset();
  EXPECT_EQ(api.Count(), 0u);  // `copy` still holds
  copy.reset();
  EXPECT_EQ(SentFor(api), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(q.Waiting(), 0u);

  // With no hold, an event goes at once.
  q.Add(ScheduledAt("d", clock.WallNow()));
  EXPECT_EQ(api.Count(), 4u);
}

TEST(EventQueueTest, AHeldEventGoesOnceItHasWaitedMaxHold) {
  FakeApiClient api;
  FakeClock clock;
  EventQueue q({.client = &api, .hostname = "h", .max_hold = std::chrono::seconds(10), .clock = &clock});
  auto hold = q.Hold();  // a sustained load: the writes never stop
  q.Add(ScheduledAt("a", clock.WallNow()));
  clock.Advance(std::chrono::seconds(6));
  q.Add(ScheduledAt("b", clock.WallNow()));
  EXPECT_EQ(api.Count(), 0u);
  clock.Advance(std::chrono::seconds(5));
  // The next event to arrive lets out the ones that waited 10 s, oldest first, and no
  // more: "b" has waited 5 s.
  q.Add(ScheduledAt("c", clock.WallNow()));
  EXPECT_EQ(SentFor(api), (std::vector<std::string>{"a"}));
  clock.Advance(std::chrono::seconds(5));
  q.Add(ScheduledAt("d", clock.WallNow()));
  EXPECT_EQ(SentFor(api), (std::vector<std::string>{"a", "b"}));
  hold.reset();
  EXPECT_EQ(SentFor(api), (std::vector<std::string>{"a", "b", "c", "d"}));
}

TEST(EventQueueTest, AnswersOnTheClientsThreadSendEverything) {
  FakeApiClient api({.async = true});
  EventQueue q({.client = &api, .hostname = "h", .max_sending = 4});
  constexpr int kEvents = 2000;
  for (int i = 0; i < kEvents; ++i) q.Add(Scheduled("p" + std::to_string(i)));
  for (int i = 0; i < 1000 && api.Count() < static_cast<size_t>(kEvents); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(api.Count(), static_cast<size_t>(kEvents));
}

}  // namespace
}  // namespace ksched::scheduler
