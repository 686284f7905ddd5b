#include "pkg/framework/plugins/nodeunschedulable/node_unschedulable.h"

#include <gtest/gtest.h>

#include "tests/fakes/builders.h"

namespace ksched::framework::plugins::nodeunschedulable {
namespace {

api::NodePtr MakeNode(bool unschedulable) {
  ksched::testing::NodeBuilder n("n");
  if (unschedulable) n.Unschedulable();
  return n.Obj();
}

api::Toleration Tol(std::string key, bool exists, api::TaintEffect effect) {
  api::Toleration t;
  t.key = std::move(key);
  t.op_exists = exists;
  t.effect = effect;
  return t;
}

TEST(NodeUnschedulableTest, Filter) {
  struct Case {
    std::string name;
    bool unschedulable;
    std::vector<api::Toleration> tolerations;
    bool fits;
  };
  const Case cases[] = {
      {"schedulable node", false, {}, true},
      {"unschedulable node", true, {}, false},
      {"unschedulable node, pod tolerates the taint",
       true,
       {Tol("node.kubernetes.io/unschedulable", true, api::TaintEffect::kNoSchedule)},
       true},
      {"tolerates every taint", true, {Tol("", true, api::TaintEffect::kNone)}, true},
      {"tolerates the key for another effect",
       true,
       {Tol("node.kubernetes.io/unschedulable", true, api::TaintEffect::kNoExecute)},
       false},
  };
  NodeUnschedulable pl;
  CycleState state;
  for (const Case& c : cases) {
    api::Pod pod;
    pod.spec.tolerations = c.tolerations;
    cache::NodeInfo node(MakeNode(c.unschedulable));
    Status s = pl.Filter(state, pod, node);
    if (c.fits) {
      EXPECT_TRUE(s.IsSuccess()) << c.name;
    } else {
      EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable) << c.name;
      EXPECT_EQ(s.Message(), "node(s) were unschedulable") << c.name;
    }
  }
  Status ghost = pl.Filter(state, api::Pod(), cache::NodeInfo());
  EXPECT_EQ(ghost.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(ghost.Message(), "node(s) had unknown conditions");
}

TEST(NodeUnschedulableTest, HintQueuesWhenNodeBecomesSchedulable) {
  NodeUnschedulable pl;
  auto events = pl.EventsToRegister();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_TRUE(events[0].event.Match(kNodeAdd));
  EXPECT_TRUE(events[0].event.Match(kNodeSpecUnschedulableChange));
  EXPECT_FALSE(events[0].event.Match(kNodeLabelChange));
  api::NodePtr sched = MakeNode(false);
  api::NodePtr unsched = MakeNode(true);
  struct Case {
    std::string name;
    const api::Node* old_node;
    const api::Node* new_node;
    QueueingHint want;
  };
  const Case cases[] = {
      {"schedulable node added", nullptr, sched.get(), QueueingHint::kQueue},
      {"unschedulable node added", nullptr, unsched.get(), QueueingHint::kSkip},
      {"uncordoned", unsched.get(), sched.get(), QueueingHint::kQueue},
      {"stays schedulable", sched.get(), sched.get(), QueueingHint::kSkip},
      {"cordoned", sched.get(), unsched.get(), QueueingHint::kSkip},
  };
  for (const Case& c : cases) {
    auto r = events[0].hint_fn(api::Pod(), c.old_node, c.new_node);
    ASSERT_TRUE(r.ok()) << c.name;
    EXPECT_EQ(*r, c.want) << c.name;
  }
}

}  // namespace
}  // namespace ksched::framework::plugins::nodeunschedulable
