// PodEventHandler over a real cache and queue: what a pod's deletion does to preemptors
// waiting for their victims.
#include "pkg/scheduler/event_handlers.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "pkg/cache/cache.h"
#include "pkg/queue/scheduling_queue.h"
#include "pkg/util/clock.h"
#include "tests/fakes/builders.h"

namespace ksched::scheduler {
namespace {

using ksched::testing::NodeBuilder;
using ksched::testing::PodBuilder;

class PreemptorActivationTest : public ::testing::Test {
 protected:
  PreemptorActivationTest()
      : cache_(cache::NewCache()),
        queue_(queue::NewSchedulingQueue({.clock = &clock_})),
        handler_(*cache_, *queue_, [](const api::Pod&) { return true; }, [](const api::Pod&) {}) {
    EXPECT_TRUE(cache_->AddNode(NodeBuilder("n1").Capacity({{"cpu", "1"}, {"pods", "110"}}).Obj()).ok());
  }

  api::PodPtr Victim(std::string name) {
    api::PodPtr bound = PodBuilder(name).UID("uid-" + name).Priority(0).Node("n1").Obj();
    handler_.OnAdd(bound);
    api::PodPtr leaving = PodBuilder(name).UID("uid-" + name).Priority(0).Node("n1").Terminating().Obj();
    handler_.OnUpdate(bound, leaving);
    return leaving;
  }

  // `name` failed its attempt, nominated to n1; `awaiting` as DefaultPreemption said.
  api::PodPtr Preemptor(std::string name, bool awaiting) {
    api::PodPtr pod = PodBuilder(name).UID("uid-" + name).Priority(100).Obj();
    handler_.OnAdd(pod);
    queue::QueuedPodInfoPtr info = queue_->Pop();
    info->unschedulable_plugins.emplace("NodeResourcesFit");
    info->awaiting_preemption = awaiting;
    EXPECT_TRUE(queue_->AddUnschedulableIfNotPresent(std::move(info)).ok());
    queue_->nominator().AddNominatedPod(pod, {.mode = queue::NominatingInfo::Mode::kOverride, .node_name = "n1"});
    return pod;
  }

  std::string Where(const std::string& name) { return std::string(queue_->QueuedPod("default/" + name)->queue); }

  FakeClock clock_;
  std::unique_ptr<cache::Cache> cache_;
  std::unique_ptr<queue::SchedulingQueue> queue_;
  PodEventHandler handler_;
};

TEST_F(PreemptorActivationTest, TheLastVictimsRemovalActivatesThePreemptorsWaitingForIt) {
  api::PodPtr v1 = Victim("v1");
  api::PodPtr v2 = Victim("v2");
  Preemptor("waiting", /*awaiting=*/true);
  Preemptor("other", /*awaiting=*/false);
  EXPECT_TRUE(cache_->HasTerminatingPodBelow("n1", 100));
  EXPECT_FALSE(cache_->HasTerminatingPodBelow("n1", 0));

  handler_.OnDelete({.last_known = v1});
  EXPECT_EQ(Where("waiting"), "unschedulablePods");  // v2 still leaving
  handler_.OnDelete({.last_known = v2});
  EXPECT_FALSE(cache_->HasTerminatingPodBelow("n1", 100));
  EXPECT_EQ(Where("waiting"), "activeQ");
  // Nominated there too, but not waiting for victims: the deletion's hints decide.
  EXPECT_EQ(Where("other"), "unschedulablePods");
}

}  // namespace
}  // namespace ksched::scheduler
