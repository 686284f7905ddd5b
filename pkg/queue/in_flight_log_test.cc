// InFlightLog on its own: which events a popped pod sees, and when they are dropped
// (upstream scheduling_queue.go keeps the same bookkeeping in inFlightPods and
// inFlightEvents). The queue-level behaviour is in priority_queue_hints_test.cc.
#include "pkg/queue/in_flight_log.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pkg/queue/queue_test_util.h"

namespace ksched::queue {
namespace {

using testing::MakePod;

InFlightPod Popped(const std::string& name, int attempts = 1) {
  return InFlightPod{.pod = MakePod(name), .attempts = attempts};
}

// The labels of the events `id` would replay, oldest first.
std::vector<std::string> EventsOf(const InFlightLog& log, const std::string& id) {
  std::vector<std::string> out;
  for (const InFlightEvent& e : log.EventsOf(id)) out.emplace_back(e.event.label);
  return out;
}

void Record(InFlightLog& log, const framework::ClusterEvent& event, std::string target = {}) {
  log.Record(event, nullptr, nullptr, std::move(target), false);
}

TEST(InFlightLogTest, NothingRecordedWhileNoPodIsInFlight) {
  InFlightLog log;
  Record(log, framework::kNodeAdd);
  EXPECT_EQ(log.EventCount(), 0u);
  log.Start("a", Popped("a"));
  EXPECT_TRUE(EventsOf(log, "a").empty());
}

TEST(InFlightLogTest, PodSeesOnlyEventsSinceItsStart) {
  InFlightLog log;
  log.Start("a", Popped("a"));
  Record(log, framework::kNodeAdd);
  log.Start("b", Popped("b"));
  Record(log, framework::kNodeDelete);
  EXPECT_EQ(EventsOf(log, "a"), (std::vector<std::string>{"NodeAdd", "NodeDelete"}));
  EXPECT_EQ(EventsOf(log, "b"), (std::vector<std::string>{"NodeDelete"}));
  EXPECT_TRUE(EventsOf(log, "unknown").empty());
}

// A pod's own update or Activate concerns only that pod, and is kept only if it is in
// flight.
TEST(InFlightLogTest, TargetedEventsReachOnlyTheirTarget) {
  InFlightLog log;
  log.Start("a", Popped("a"));
  log.Start("b", Popped("b"));
  Record(log, framework::kUnscheduledPodUpdate, "a");
  Record(log, framework::kUnscheduledPodUpdate, "not-in-flight");
  EXPECT_EQ(log.EventCount(), 1u);
  log.Record(framework::kForceActivate, nullptr, nullptr, "b", true);
  EXPECT_EQ(EventsOf(log, "a"), (std::vector<std::string>{"PodUpdate"}));
  std::vector<bool> forced;
  const std::string b = "b";
  for (const InFlightEvent& e : log.EventsOf(b)) forced.push_back(e.force_activate);
  EXPECT_EQ(forced, (std::vector<bool>{true}));
}

// Events skipped for one pod (targeted at another) do not hide the later ones.
TEST(InFlightLogTest, EventsOfSkipsOtherTargetsInTheMiddle) {
  InFlightLog log;
  log.Start("a", Popped("a"));
  log.Start("b", Popped("b"));
  Record(log, framework::kNodeAdd);
  Record(log, framework::kUnscheduledPodUpdate, "b");
  Record(log, framework::kUnscheduledPodUpdate, "b");
  Record(log, framework::kNodeDelete);
  EXPECT_EQ(EventsOf(log, "a"), (std::vector<std::string>{"NodeAdd", "NodeDelete"}));
  EXPECT_EQ(EventsOf(log, "b"), (std::vector<std::string>{"NodeAdd", "PodUpdate", "PodUpdate", "NodeDelete"}));
}

// Events are dropped once no in-flight pod started before them.
TEST(InFlightLogTest, EndDropsEventsNoOneNeeds) {
  InFlightLog log;
  log.Start("a", Popped("a"));
  Record(log, framework::kNodeAdd);
  log.Start("b", Popped("b"));
  log.Start("c", Popped("c"));  // same start as b
  Record(log, framework::kNodeDelete);
  EXPECT_EQ(log.EventCount(), 2u);
  log.End("b");  // a is older and c shares b's start: nothing goes
  EXPECT_EQ(log.EventCount(), 2u);
  log.End("a");
  EXPECT_EQ(log.EventCount(), 1u);
  EXPECT_EQ(EventsOf(log, "c"), (std::vector<std::string>{"NodeDelete"}));
  log.End("unknown");  // no-op
  EXPECT_EQ(log.EventCount(), 1u);
  log.End("c");
  EXPECT_EQ(log.EventCount(), 0u);
  EXPECT_TRUE(log.pods().empty());
  // Sequence numbers go on after pruning.
  log.Start("d", Popped("d"));
  Record(log, framework::kPvcAdd);
  EXPECT_EQ(EventsOf(log, "d"), (std::vector<std::string>{"PvcAdd"}));
}

// Popping a pod that is still tracked (a stale entry) starts over: the older start would
// replay events from a previous attempt.
TEST(InFlightLogTest, StartAgainReplacesStaleTracking) {
  InFlightLog log;
  log.Start("a", Popped("a", 1));
  Record(log, framework::kNodeAdd);
  log.Start("a", Popped("a", 2));
  EXPECT_TRUE(log.Tracking("a"));
  EXPECT_EQ(log.pods().size(), 1u);
  EXPECT_EQ(log.pods().at("a").attempts, 2);
  EXPECT_TRUE(EventsOf(log, "a").empty());
  EXPECT_EQ(log.EventCount(), 0u);
  log.End("a");
  EXPECT_FALSE(log.Tracking("a"));
}

}  // namespace
}  // namespace ksched::queue
