#include "pkg/framework/plugins/nodename/node_name.h"

#include <gtest/gtest.h>

#include "tests/fakes/builders.h"
#include "tests/fakes/fake_handle.h"

namespace ksched::framework::plugins::nodename {
namespace {

using ksched::testing::NodeBuilder;
using ksched::testing::PodBuilder;

TEST(NodeNameTest, Filter) {
  struct Case {
    std::string name;
    std::string pod_node;
    bool fits;
  };
  const Case cases[] = {
      {"no host specified", "", true},
      {"host matches", "foo", true},
      {"host doesn't match", "bar", false},
  };
  NodeName pl;
  CycleState state;
  cache::NodeInfo node(NodeBuilder("foo").Obj());
  for (const Case& c : cases) {
    Status s = pl.Filter(state, PodBuilder("p").Node(c.pod_node).Build(), node);
    if (c.fits) {
      EXPECT_TRUE(s.IsSuccess()) << c.name;
    } else {
      EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable) << c.name;
      EXPECT_EQ(s.Message(), "node(s) didn't match the requested node name") << c.name;
    }
  }
  EXPECT_EQ(pl.Filter(state, PodBuilder("p").Build(), cache::NodeInfo()).code(), Code::kError);
}

TEST(NodeNameTest, HintQueuesOnlyTheNamedNode) {
  NodeName pl;
  auto events = pl.EventsToRegister();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_TRUE(events[0].event.Match(kNodeAdd));
  EXPECT_TRUE(events[0].event.Match(kNodeLabelChange));
  EXPECT_FALSE(events[0].event.Match(kNodeDelete));
  api::NodePtr foo = NodeBuilder("foo").Obj();
  api::NodePtr bar = NodeBuilder("bar").Obj();
  struct Case {
    std::string pod_node;
    const api::Node* old_node;
    const api::Node* new_node;
    QueueingHint want;
  };
  const Case cases[] = {
      {"foo", nullptr, foo.get(), QueueingHint::kQueue},
      {"foo", nullptr, bar.get(), QueueingHint::kSkip},
      {"foo", foo.get(), foo.get(), QueueingHint::kQueue},
      {"", nullptr, bar.get(), QueueingHint::kQueue},
  };
  for (const Case& c : cases) {
    auto r = events[0].hint_fn(PodBuilder("p").Node(c.pod_node).Build(), c.old_node, c.new_node);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(*r, c.want) << c.pod_node << " -> " << c.new_node->Name();
  }
}


TEST(NodeNameTest, Factory) {
  ksched::testing::FakeHandle h;
  auto pl = NodeName::New(std::monostate{}, h);
  ASSERT_TRUE(pl.ok());
  EXPECT_EQ((*pl)->Name(), "NodeName");
}

}  // namespace
}  // namespace ksched::framework::plugins::nodename
