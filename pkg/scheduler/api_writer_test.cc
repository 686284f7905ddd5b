// ApiWriter::EvictPod, preemption's eviction of a victim, on a scripted API client. On
// servers from 1.26 on, upstream's PreemptPod first patches the victim's status with the
// DisruptionTarget condition (reason PreemptionByScheduler) and only then deletes it; the
// local 1.20 apiserver does not know the condition, so this path is tested here.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pkg/scheduler/api_writer.h"
#include "pkg/util/clock.h"
#include "tests/fakes/builders.h"
#include "tests/fakes/fake_api_client.h"

namespace ksched::scheduler {
namespace {

using client::Verb;
using testing::FakeApiClient;
using testing::PodBuilder;

class EvictPodTest : public ::testing::Test {
 protected:
  // Evicts ns/victim (uid u-1) and returns what `done` got (nullopt: never called).
  std::optional<Status> Evict(bool disruption_target) {
    ApiWriter writer({.bind_client = &api_,
                      .status_client = &api_,
                      .clock = &clock_,
                      .hostname = "host",
                      .disruption_target_condition = disruption_target});
    std::optional<Status> got;
    writer.EvictPod(*PodBuilder("victim").Namespace("ns").UID("u-1").Node("n1").Obj(), "ksched",
                    [&got](Status s) { got = std::move(s); });
    return got;
  }

  FakeApiClient api_;  // answers inside Send(): `done` has run when EvictPod returns
  FakeClock clock_;
};

TEST_F(EvictPodTest, DisruptionTargetConditionIsPatchedBeforeTheDelete) {
  std::optional<Status> got = Evict(true);
  ASSERT_TRUE(got.has_value());
  EXPECT_TRUE(got->ok()) << got->ToString();

  auto requests = api_.Requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].verb, Verb::kPatch);
  EXPECT_EQ(requests[0].path, "/api/v1/namespaces/ns/pods/victim/status");
  EXPECT_EQ(requests[0].content_type, std::string(client::kContentStrategicMerge));
  for (const char* want : {R"("type":"DisruptionTarget")", R"("status":"True")", R"("reason":"PreemptionByScheduler")",
                           R"("message":"ksched: preempting to accommodate a higher priority pod")"}) {
    EXPECT_NE(requests[0].body.find(want), std::string::npos) << want << " not in " << requests[0].body;
  }
  EXPECT_EQ(requests[1].verb, Verb::kDelete);
  EXPECT_EQ(requests[1].path, "/api/v1/namespaces/ns/pods/victim");
  EXPECT_NE(requests[1].body.find(R"("preconditions":{"uid":"u-1"})"), std::string::npos) << requests[1].body;
}

TEST_F(EvictPodTest, WithoutTheConditionOnlyTheDeleteIsSent) {
  std::optional<Status> got = Evict(false);
  ASSERT_TRUE(got.has_value());
  EXPECT_TRUE(got->ok()) << got->ToString();
  auto requests = api_.Requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].verb, Verb::kDelete);
}

// A victim already gone when its status is patched no longer holds the room: the
// eviction succeeds and no DELETE is sent.
TEST_F(EvictPodTest, VictimGoneBeforeThePatchIsASuccessWithoutDelete) {
  api_.SetHandler([](const client::Request& r) -> StatusOr<client::Response> {
    if (r.verb == Verb::kPatch) return FakeApiClient::ApiError(404, "NotFound", R"(pods "victim" not found)");
    return client::Response{200, "{}"};
  });
  std::optional<Status> got = Evict(true);
  ASSERT_TRUE(got.has_value());
  EXPECT_TRUE(got->ok()) << got->ToString();
  EXPECT_EQ(api_.Count(FakeApiClient::Is(Verb::kDelete)), 0u);
}

// Any other failure of the patch fails the eviction (the preemptor's nomination is then
// cleared and it is requeued), and nothing is deleted.
TEST_F(EvictPodTest, FailedPatchFailsTheEvictionWithoutDelete) {
  api_.SetHandler([](const client::Request& r) -> StatusOr<client::Response> {
    if (r.verb == Verb::kPatch) return FakeApiClient::ApiError(403, "Forbidden", "pods/status is forbidden");
    return client::Response{200, "{}"};
  });
  std::optional<Status> got = Evict(true);
  ASSERT_TRUE(got.has_value());
  EXPECT_FALSE(got->ok());
  EXPECT_EQ(api_.Count(FakeApiClient::Is(Verb::kDelete)), 0u);
}

// Events wait while a bind or an eviction is with the server, so a burst's binds do not
// share the server with its events; they go once the last answer is in.
TEST(ApiWriterEventsTest, EventsWaitForTheBindsAndEvictionsInFlight) {
  FakeApiClient api;
  FakeClock clock;
  api.Hold([](const client::Request& r) {
    return FakeApiClient::Is(Verb::kPost, "/binding")(r) || FakeApiClient::Is(Verb::kDelete)(r);
  });
  ApiWriter writer({.bind_client = &api, .status_client = &api, .clock = &clock, .hostname = "host"});
  auto pod = PodBuilder("p").Namespace("ns").UID("u-p").Obj();
  auto victim = PodBuilder("v").Namespace("ns").UID("u-v").Node("n1").Obj();
  int binds_done = 0;
  writer.BindAsync(*pod, "n1", [&binds_done](Status s) { binds_done += s.ok(); });
  writer.EvictPod(*victim, "ksched", [](Status) {});
  writer.RecordEvent(*pod, "ksched", false, "Scheduled", "Binding", "Successfully assigned ns/p to n1");
  const auto events = FakeApiClient::Is(Verb::kPost, "/events");
  EXPECT_EQ(api.Count(events), 0u);
  EXPECT_EQ(api.Release(FakeApiClient::Is(Verb::kPost, "/binding")), 1u);
  EXPECT_EQ(binds_done, 1);
  EXPECT_EQ(api.Count(events), 0u);  // the eviction is still out
  EXPECT_EQ(api.Release(FakeApiClient::Is(Verb::kDelete)), 1u);
  EXPECT_EQ(api.Count(events), 1u);

  // Nothing in flight: the next event goes at once.
  writer.RecordEvent(*pod, "ksched", false, "Scheduled", "Binding", "again");
  EXPECT_EQ(api.Count(events), 2u);
}

// A pod's writes reach the server in the order they were made: its bind waits for the
// status patch of its failed attempt (PodScheduled=False, the nomination) that is still
// with the client, so the patch cannot land on the bound pod. Other pods' binds do not
// wait.
TEST(ApiWriterOrderTest, ABindWaitsForThePodsStatusPatchesInFlight) {
  FakeApiClient api;
  FakeClock clock;
  api.Hold(FakeApiClient::Is(Verb::kPatch));
  ApiWriter writer({.bind_client = &api, .status_client = &api, .clock = &clock, .hostname = "host"});
  auto pod = PodBuilder("p").Namespace("ns").UID("u-p").Obj();
  auto other = PodBuilder("o").Namespace("ns").UID("u-o").Obj();
  writer.PatchPodScheduledFalse(*pod, "Unschedulable", "0/1 nodes are available", std::string("n1"));
  writer.ClearNominatedNodeName(*pod);
  int bound = 0;
  writer.BindAsync(*pod, "n1", [&bound](Status s) { bound += s.ok(); });
  writer.BindAsync(*other, "n2", [&bound](Status s) { bound += s.ok(); });
  const auto binds = FakeApiClient::Is(Verb::kPost, "/binding");
  ASSERT_EQ(api.Count(binds), 1u);
  EXPECT_NE(api.Requests(binds)[0].path.find("/pods/o/"), std::string::npos);
  EXPECT_EQ(bound, 1);

  // One of the two patches answered: still waiting; both: the bind goes.
  EXPECT_EQ(api.Release([first = true](const client::Request& r) mutable {
              return FakeApiClient::Is(Verb::kPatch)(r) && std::exchange(first, false);
            }),
            1u);
  EXPECT_EQ(api.Count(binds), 1u);
  EXPECT_EQ(api.Release(FakeApiClient::Is(Verb::kPatch)), 1u);
  ASSERT_EQ(api.Count(binds), 2u);
  EXPECT_NE(api.Requests(binds)[1].path.find("/pods/p/"), std::string::npos);
  EXPECT_EQ(bound, 2);

  // Nothing out for the pod any more: the next bind goes at once, blocking or not.
  EXPECT_TRUE(writer.Bind(*pod, "n1").ok());
  EXPECT_EQ(api.Count(binds), 3u);
}

// kube-apiserver 1.20 binds by name. A bind held for its pod's status patches is
// cancelled when the pod is deleted, so it never lands on a pod re-created under the same
// name; the re-created pod's own bind is not held up by the old pod's patches.
TEST(ApiWriterOrderTest, ADeletedPodsHeldBindIsCancelledNotSent) {
  FakeApiClient api;
  FakeClock clock;
  api.Hold(FakeApiClient::Is(Verb::kPatch));
  ApiWriter writer({.bind_client = &api, .status_client = &api, .clock = &clock, .hostname = "host"});
  auto old_pod = PodBuilder("p").Namespace("ns").UID("u-old").Obj();
  writer.PatchPodScheduledFalse(*old_pod, "Unschedulable", "0/1 nodes are available");
  std::optional<Status> old_bind;
  writer.BindAsync(*old_pod, "n1", [&old_bind](Status s) { old_bind = std::move(s); });
  EXPECT_FALSE(old_bind.has_value());

  writer.CancelBinds("u-old");
  ASSERT_TRUE(old_bind.has_value());
  EXPECT_EQ(old_bind->code(), StatusCode::kCancelled) << old_bind->ToString();

  auto new_pod = PodBuilder("p").Namespace("ns").UID("u-new").Obj();
  std::optional<Status> new_bind;
  writer.BindAsync(*new_pod, "n2", [&new_bind](Status s) { new_bind = std::move(s); });
  ASSERT_TRUE(new_bind.has_value());
  EXPECT_TRUE(new_bind->ok());

  // The old pod's patch is answered later: nothing else is sent.
  EXPECT_EQ(api.Release(FakeApiClient::Is(Verb::kPatch)), 1u);
  const auto binds = FakeApiClient::Is(Verb::kPost, "/binding");
  ASSERT_EQ(api.Count(binds), 1u);
  EXPECT_NE(api.Requests(binds)[0].body.find("u-new"), std::string::npos);
}

// With a pod lister, a bind goes out only while the informer still has the very pod
// unassigned: checked when the bind is about to be sent, after its wait.
TEST(ApiWriterOrderTest, ABindIsSentOnlyWhileTheInformerHasThePodUnassigned) {
  FakeApiClient api;
  FakeClock clock;
  api.Hold(FakeApiClient::Is(Verb::kPatch));
  api::PodPtr known = PodBuilder("p").Namespace("ns").UID("u-1").Obj();
  ApiWriter writer({.bind_client = &api,
                    .status_client = &api,
                    .clock = &clock,
                    .hostname = "host",
                    .pod_lister = [&known](const std::string& key) { return key == "ns/p" ? known : nullptr; }});
  const auto pod = known;
  std::vector<Status> got;
  auto record = [&got](Status s) { got.push_back(std::move(s)); };

  writer.PatchPodScheduledFalse(*pod, "Unschedulable", "0/1 nodes are available");
  writer.BindAsync(*pod, "n1", record);
  known = PodBuilder("p").Namespace("ns").UID("u-2").Obj();  // deleted and re-created meanwhile
  EXPECT_EQ(api.Release(FakeApiClient::Is(Verb::kPatch)), 1u);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].code(), StatusCode::kCancelled) << got[0].ToString();

  known = nullptr;  // gone
  writer.BindAsync(*pod, "n1", record);
  known = PodBuilder("p").Namespace("ns").UID("u-1").Node("n9").Obj();  // bound by someone else
  writer.BindAsync(*pod, "n1", record);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[1].code(), StatusCode::kCancelled);
  EXPECT_EQ(got[2].code(), StatusCode::kCancelled);
  EXPECT_NE(got[2].message().find("n9"), std::string::npos) << got[2].ToString();
  EXPECT_EQ(api.Count(FakeApiClient::Is(Verb::kPost, "/binding")), 0u);
  EXPECT_EQ(api.Unsent().size(), 3u);

  known = pod;  // still there, unassigned: sent
  writer.BindAsync(*pod, "n1", record);
  ASSERT_EQ(got.size(), 4u);
  EXPECT_TRUE(got[3].ok()) << got[3].ToString();
  EXPECT_EQ(api.Count(FakeApiClient::Is(Verb::kPost, "/binding")), 1u);
}

// Under a storm of failures the client's background queue drops status patches; each
// drop is not a warning line of its own (ten minutes of churn wrote 398,112 of them):
// the first and then every 1000th are logged, with the count.
TEST(ApiWriterOrderTest, DroppedStatusPatchesAreLoggedOncePerThousand) {
  FakeApiClient api;
  FakeClock clock;
  api.SetHandler([](const client::Request& r) -> StatusOr<client::Response> {
    if (r.verb == Verb::kPatch)
      return Status(StatusCode::kResourceExhausted, "background request queue full, request dropped");
    return client::Response{200, "{}"};
  });
  ApiWriter writer({.bind_client = &api, .status_client = &api, .clock = &clock, .hostname = "host"});
  ::testing::internal::CaptureStderr();
  for (int i = 0; i < 2500; ++i) {
    auto pod = PodBuilder("p" + std::to_string(i)).Namespace("ns").UID("u" + std::to_string(i)).Obj();
    writer.PatchPodScheduledFalse(*pod, "Unschedulable", "0/1 nodes are available");
  }
  const std::string log = ::testing::internal::GetCapturedStderr();
  size_t lines = 0;
  for (size_t at = log.find("request dropped"); at != std::string::npos; at = log.find("request dropped", at + 1))
    ++lines;
  EXPECT_EQ(lines, 3u) << log;
  EXPECT_NE(log.find("(2001 status patch(es) dropped so far)"), std::string::npos) << log;
  // A drop still ends the patch's turn: the pod's next bind is not held.
  auto pod = PodBuilder("p0").Namespace("ns").UID("u0").Obj();
  EXPECT_TRUE(writer.Bind(*pod, "n1").ok());
}

}  // namespace
}  // namespace ksched::scheduler
