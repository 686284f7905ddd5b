#include "pkg/framework/cluster_event.h"

#include <gtest/gtest.h>

namespace ksched::framework {
namespace {

// ActionType bit values, and two ActionTypes match iff their bitwise AND is non-zero
// (upstream pkg/scheduler/framework/types.go, the ActionType constants and
// ClusterEvent.Match).
TEST(ClusterEventTest, ActionTypeValues) {
  EXPECT_EQ(kAdd, 1u);
  EXPECT_EQ(kDelete, 2u);
  EXPECT_EQ(kUpdateNodeAllocatable, 4u);
  EXPECT_EQ(kUpdateNodeLabel, 8u);
  EXPECT_EQ(kUpdateNodeTaint, 16u);
  EXPECT_EQ(kUpdateNodeCondition, 32u);
  EXPECT_EQ(kAll, 63u);
  EXPECT_EQ(kUpdate, 60u);
}

TEST(ClusterEventTest, Match) {
  struct Case {
    std::string name;
    ClusterEvent registered, incoming;
    bool match;
  };
  const Case cases[] = {
      {"same action", {EventResource::kNode, kAdd, ""}, kNodeAdd, true},
      {"All matches any action", {EventResource::kPod, kAll, ""}, kAssignedPodDelete, true},
      {"Update matches a node sub-update", {EventResource::kNode, kUpdate, ""}, kNodeTaintChange, true},
      {"Add|Update matches NodeAdd", {EventResource::kNode, kAdd | kUpdate, ""}, kNodeAdd, true},
      {"different actions do not match", {EventResource::kNode, kAdd, ""}, kNodeDelete, false},
      {"different resources do not match", {EventResource::kNode, kAdd, ""}, kPvcAdd, false},
      {"wildcard resource, matching action", {EventResource::kWildCard, kAdd, ""}, kPvAdd, true},
      {"wildcard registration matches all", kWildCardEvent, kServiceDelete, true},
      {"label ignored on registrations", {EventResource::kNode, kUpdateNodeLabel, ""}, kNodeLabelChange, true},
  };
  for (const Case& c : cases) EXPECT_EQ(c.registered.Match(c.incoming), c.match) << c.name;
}

TEST(ClusterEventTest, WildCard) {
  EXPECT_TRUE(kWildCardEvent.IsWildCard());
  EXPECT_TRUE(kUnschedulableTimeout.IsWildCard());
  EXPECT_TRUE(kForceActivate.IsWildCard());
  EXPECT_FALSE(kNodeAdd.IsWildCard());
  EXPECT_FALSE((ClusterEvent{EventResource::kWildCard, kAdd, ""}).IsWildCard());
  EXPECT_EQ(ResourceName(EventResource::kStorageClass), "storage.k8s.io/StorageClass");
}

TEST(ClusterEventTest, RegistrationNameForPeople) {
  EXPECT_EQ(RegistrationName({EventResource::kNode, kAdd | kUpdateNodeAllocatable, ""}), "Node/Add|UpdateNodeAllocatable");
  EXPECT_EQ(RegistrationName({EventResource::kPod, kDelete, ""}), "Pod/Delete");
  EXPECT_EQ(RegistrationName({EventResource::kPod, kAdd | kUpdate, ""}), "Pod/Add|Update");
  EXPECT_EQ(RegistrationName({EventResource::kNode, kAll, ""}), "Node/All");
  EXPECT_EQ(RegistrationName({EventResource::kStorageClass, kAdd, ""}), "storage.k8s.io/StorageClass/Add");
  EXPECT_EQ(RegistrationName(kWildCardEvent), "*");
}

}  // namespace
}  // namespace ksched::framework
