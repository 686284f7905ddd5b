#include "pkg/framework/plugins/schedulinggates/scheduling_gates.h"

#include <gtest/gtest.h>

namespace ksched::framework::plugins {
namespace {

api::Pod Pod(std::string uid, std::vector<std::string> gates) {
  api::Pod p;
  p.metadata.namespace_ = "ns";
  p.metadata.name = "p-" + uid;
  p.metadata.uid = uid;
  p.spec.scheduling_gates = std::move(gates);
  return p;
}

TEST(SchedulingGatesTest, PreEnqueue) {
  SchedulingGates pl;
  EXPECT_TRUE(pl.PreEnqueue(Pod("1", {})).IsSuccess());
  Status s = pl.PreEnqueue(Pod("1", {"a", "b"}));
  EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(s.Message(), "waiting for scheduling gates: [a b]");
  EXPECT_EQ(s.plugin(), "SchedulingGates");
}

TEST(SchedulingGatesTest, HintQueuesOnlyWhenOwnGatesRemoved) {
  SchedulingGates pl;
  auto events = pl.EventsToRegister();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].event.resource, EventResource::kPod);
  EXPECT_TRUE(events[0].event.Match(kUnscheduledPodUpdate));
  struct Case {
    std::string name;
    api::Pod updated;
    QueueingHint want;
  };
  const Case cases[] = {
      {"gates removed", Pod("1", {}), QueueingHint::kQueue},
      {"gates remain", Pod("1", {"b"}), QueueingHint::kSkip},
      {"another pod", Pod("2", {}), QueueingHint::kSkip},
  };
  api::Pod target = Pod("1", {"a", "b"});
  for (const Case& c : cases) {
    auto r = events[0].hint_fn(target, &target, &c.updated);
    ASSERT_TRUE(r.ok()) << c.name;
    EXPECT_EQ(*r, c.want) << c.name;
  }
  EXPECT_FALSE(events[0].hint_fn(target, &target, nullptr).ok());
}

}  // namespace
}  // namespace ksched::framework::plugins
