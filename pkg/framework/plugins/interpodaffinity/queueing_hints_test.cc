// upstream interpodaffinity/plugin_test.go: Test_isSchedulableAfterPodChange and
// Test_isSchedulableAfterNodeChange (cases re-expressed with our builders).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pkg/framework/plugins/interpodaffinity/test_util.h"

namespace ksched::framework::plugins::interpodaffinity {
namespace {

using namespace testutil;  // NOLINT

const auto kQueue = QueueingHint::kQueue;
const auto kSkip = QueueingHint::kSkip;

TEST(InterPodAffinityHints, EventsToRegister) {
  Env env({}, {});
  std::vector<ClusterEventWithHint> events = env.plugin.EventsToRegister();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_TRUE(events[0].event.Match(kAssignedPodAdd));
  EXPECT_TRUE(events[0].event.Match(kAssignedPodUpdate));
  EXPECT_TRUE(events[0].event.Match(kAssignedPodDelete));
  EXPECT_TRUE(events[1].event.Match(kNodeAdd));
  EXPECT_TRUE(events[1].event.Match(kNodeLabelChange));
  EXPECT_FALSE(events[1].event.Match(kNodeTaintChange));
  EXPECT_FALSE(events[1].event.Match(kNodeAllocatableChange));
}

TEST(InterPodAffinityHints, Test_isSchedulableAfterPodChange) {
  const Terms aff = {Term({In("service", {"securityscan", "value2"})}, "region")};
  const Terms anti = {Term({In("service", {"securityscan", "value2"})}, "zone")};
  struct Case {
    std::string name;
    api::PodPtr pod, old_pod, new_pod;
    QueueingHint want;
  };
  const std::vector<Case> cases = {
      {"add a pod which matches the pod affinity", PodWith("", "", {}, aff, {}), nullptr,
       Plain("node1", {{"service", "securityscan"}}), kQueue},
      {"add an un-scheduled pod", PodWith("", "", {}, aff, {}), nullptr, Plain("", {{"service", "securityscan"}}),
       kSkip},
      {"add a pod which doesn't match the pod affinity", PodWith("", "", {}, aff, {}), nullptr,
       Plain("node1", {{"aaa", "a"}}), kSkip},
      {"update a pod from non-match to match pod affinity", PodWith("", "", {}, aff, {}),
       Plain("node1", {{"aaa", "a"}}), Plain("node1", {{"service", "securityscan"}}), kQueue},
      {"the updating pod matches target pod's affinity both before and after label changes",
       PodWith("", "", {}, aff, {}), Plain("node1", {{"service", "securityscan"}}),
       Plain("node1", {{"service", "value2"}}), kSkip},
      {"update an un-scheduled pod", PodWith("", "", {}, aff, {}), Plain("", {{"service", "securityscan"}}),
       Plain("", {{"service", "value2"}}), kSkip},
      {"update a pod from match to non-match the pod anti-affinity", PodWith("", "", {}, {}, anti),
       Plain("node1", {{"service", "securityscan"}}), Plain("node1", {{"aaa", "a"}}), kQueue},
      {"update a pod from match to non-match pod's affinity - multiple terms case",
       PodWith("", "", {}, {Term({Exists("aaa")}, "zone"), Term({Exists("bbb")}, "zone")}, {}),
       Plain("node1", {{"aaa", "a"}}), Plain("node1", {{"bbb", "b"}}), kSkip},
      {"update a pod from non-match to match pod's affinity - multiple terms case",
       PodWith("", "", {}, {Term({Exists("aaa")}, "zone"), Term({Exists("bbb")}, "zone")}, {}),
       Plain("node1", {{"aaa", "a"}}), Plain("node1", {{"aaa", "a"}, {"bbb", "b"}}), kQueue},
      {"modify pod label to change it from satisfying pod anti-affinity to not satisfying anti-affinity",
       PodWith("", "", {}, {}, anti), Plain("node1", {{"service", "securityscan"}}),
       Plain("node1", {{"service", "aaaa"}}), kQueue},
      {"delete a pod which doesn't match pod's anti-affinity", PodWith("", "", {}, {}, anti),
       Plain("node1", {{"aaa", "a"}}), nullptr, kSkip},
      {"delete a pod which matches pod's anti-affinity", PodWith("", "", {}, {}, anti),
       Plain("node1", {{"service", "securityscan"}}), nullptr, kQueue},
      // ksched's addition: the existing pod's own anti-affinity kept a pod without terms out.
      {"delete a pod whose anti-affinity matches a pod without terms",
       PodWith("", "", {{"service", "securityscan"}}, {}, {}), PodWith("", "node1", {}, {}, anti), nullptr, kQueue},
      {"delete a pod whose anti-affinity does not match the pod", PodWith("", "", {{"aaa", "a"}}, {}, {}),
       PodWith("", "node1", {}, {}, anti), nullptr, kSkip},
      {"update a pod so its anti-affinity stops matching the pod",
       PodWith("", "", {{"service", "securityscan"}}, {}, {}), PodWith("", "node1", {}, {}, anti),
       PodWith("", "node1", {}, {}, {Term({In("service", {"other"})}, "zone")}), kQueue},
      {"update a pod whose anti-affinity keeps matching the pod",
       PodWith("", "", {{"service", "securityscan"}}, {}, {}), PodWith("", "node1", {}, {}, anti),
       PodWith("", "node1", {{"x", "y"}}, {}, anti), kSkip},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    auto got = PodChangeHint(*tc.pod, tc.old_pod.get(), tc.new_pod.get());
    ASSERT_TRUE(got.ok()) << got.status().message();
    EXPECT_EQ(*got, tc.want);
  }
}

TEST(InterPodAffinityHints, Test_isSchedulableAfterNodeChange) {
  const Terms aff = {Term({In("service", {"securityscan", "value2"})}, "zone")};
  const Terms anti = {Term({In("service", {"securityscan", "value2"})}, "zone")};
  struct Case {
    std::string name;
    api::PodPtr pod;
    api::NodePtr old_node, new_node;
    QueueingHint want;
  };
  const std::vector<Case> cases = {
      {"add a new node with matched pod affinity topologyKey", PodWith("", "", {}, aff, {}), nullptr,
       NodeWith("node1", {{"zone", "zone1"}}), kQueue},
      {"add a new node without matched topologyKey", PodWith("", "", {}, aff, {}), nullptr,
       NodeWith("node1", {{"region", "region1"}}), kSkip},
      {"update node topologyKey", PodWith("", "", {}, aff, {}), NodeWith("node1", {{"zone", "zone1"}}),
       NodeWith("node1", {{"zone", "zone2"}}), kQueue},
      {"update node lable but not topologyKey", PodWith("", "", {}, aff, {}), NodeWith("node1", {{"aaa", "a"}}),
       NodeWith("node1", {{"aaa", "b"}}), kSkip},
      {"update node label that isn't related to the pod affinity", PodWith("", "", {}, aff, {}),
       NodeWith("node1", {{"zone", "zone1"}, {"unrelated-label", "unrelated"}}), NodeWith("node1", {{"zone", "zone1"}}),
       kSkip},
      {"update node with different affinity topologyKey", PodWith("", "", {}, aff, {}),
       NodeWith("node1", {{"region", "region1"}}), NodeWith("node1", {{"region", "region2"}}), kSkip},
      {"update node to have the topologyKey of pod affinity", PodWith("", "", {}, aff, {}),
       NodeWith("node1", {{"region", "region1"}}), NodeWith("node1", {{"region", "region1"}, {"zone", "zone1"}}),
       kQueue},
      {"add a new node with matched pod anti-affinity topologyKey", PodWith("", "", {}, {}, anti), nullptr,
       NodeWith("node1", {{"zone", "zone2"}}), kQueue},
      {"add a new node without matched pod anti-affinity topologyKey", PodWith("", "", {}, {}, anti), nullptr,
       NodeWith("node1", {{"region", "region1"}}), kQueue},
      {"update node with different anti-affinity topologyKey", PodWith("", "", {}, {}, anti),
       NodeWith("node1", {{"region", "region1"}}), NodeWith("node1", {{"region", "region2"}}), kSkip},
      {"update node to remove the topologyKey of pod anti-affinity", PodWith("", "", {}, {}, anti),
       NodeWith("node1", {{"zone", "zone1"}}), NodeWith("node1", {{"region", "region1"}}), kQueue},
      {"update node to have the topologyKey of pod anti-affinity", PodWith("", "", {}, {}, anti),
       NodeWith("node1", {{"region", "region1"}}), NodeWith("node1", {{"region", "region1"}, {"zone", "zone1"}}),
       kSkip},
      {"move node to another anti-affinity domain", PodWith("", "", {}, {}, anti), NodeWith("node1", {{"zone", "z1"}}),
       NodeWith("node1", {{"zone", "z2"}}), kQueue},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    auto got = NodeChangeHint(*tc.pod, tc.old_node.get(), tc.new_node.get());
    ASSERT_TRUE(got.ok()) << got.status().message();
    EXPECT_EQ(*got, tc.want);
  }
}

TEST(InterPodAffinityHints, RegisteredHintsReadObjects) {
  Env env({}, {});
  auto events = env.plugin.EventsToRegister();
  auto pod = PodWith("", "", {}, {}, {Term({Exists("app")}, "zone")});
  api::Pod deleted = *Plain("n1", {{"app", "x"}});
  auto got = events[0].hint_fn(*pod, &deleted, nullptr);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, kQueue);
  api::Node added = *NodeWith("n2", {});
  got = events[1].hint_fn(*pod, nullptr, &added);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, kQueue);
}

}  // namespace
}  // namespace ksched::framework::plugins::interpodaffinity
