#include "pkg/framework/plugins/nodeports/node_ports.h"

#include <gtest/gtest.h>

#include <sstream>

namespace ksched::framework::plugins::nodeports {
namespace {

// "UDP/127.0.0.1/8080" per port, as upstream's test helper.
api::PodPtr PodWithPorts(std::string name, std::string node, std::vector<std::string> ports) {
  auto p = std::make_shared<api::Pod>();
  p->metadata.namespace_ = "default";
  p->metadata.name = name;
  p->metadata.uid = "uid-" + name;
  p->spec.node_name = std::move(node);
  api::Container c;
  c.name = "c";
  for (const std::string& spec : ports) {
    std::istringstream in(spec);
    std::string protocol, ip, port;
    std::getline(in, protocol, '/');
    std::getline(in, ip, '/');
    std::getline(in, port, '/');
    api::ContainerPort cp;
    cp.protocol = protocol;
    cp.host_ip = ip;
    cp.host_port = std::stoi(port);
    cp.container_port = cp.host_port;
    c.ports.push_back(cp);
  }
  p->spec.containers.push_back(std::move(c));
  return p;
}

cache::NodeInfo NodeWith(const std::vector<api::PodPtr>& pods) {
  auto node = std::make_shared<api::Node>();
  node->metadata.name = "m1";
  cache::NodeInfo info(node);
  for (const auto& p : pods) info.AddPod(p);
  return info;
}

TEST(NodePortsTest, Filter) {
  struct Case {
    std::string name;
    std::vector<std::string> want_ports;
    std::vector<std::string> used_ports;
    bool fits;
  };
  const Case cases[] = {
      {"other port", {"UDP/127.0.0.1/8080"}, {"UDP/127.0.0.1/9090"}, true},
      {"same udp port", {"UDP/127.0.0.1/8080"}, {"UDP/127.0.0.1/8080"}, false},
      {"same tcp port", {"TCP/127.0.0.1/8080"}, {"TCP/127.0.0.1/8080"}, false},
      {"different host ip", {"TCP/127.0.0.1/8080"}, {"TCP/127.0.0.2/8080"}, true},
      {"different protocol", {"UDP/127.0.0.1/8080"}, {"TCP/127.0.0.1/8080"}, true},
      {"second udp port conflict", {"UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"}, {"UDP/127.0.0.1/8080"}, false},
      {"first tcp port conflict",
       {"TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"},
       {"TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"},
       false},
      {"conflict due to wanted 0.0.0.0", {"TCP/0.0.0.0/8001"}, {"TCP/127.0.0.1/8001"}, false},
      {"conflict due to wanted 0.0.0.0 among others",
       {"TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"},
       {"TCP/127.0.0.1/8001"},
       false},
      {"conflict due to used 0.0.0.0", {"TCP/127.0.0.1/8001"}, {"TCP/0.0.0.0/8001"}, false},
      {"used 0.0.0.0 with another protocol", {"UDP/127.0.0.1/8001"}, {"TCP/0.0.0.0/8001"}, true},
      {"udp conflict due to used 0.0.0.0", {"UDP/127.0.0.1/8001"}, {"TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"}, false},
      {"empty ip means 0.0.0.0", {"TCP//8001"}, {"TCP/127.0.0.1/8001"}, false},
  };
  for (const Case& c : cases) {
    NodePorts pl;
    CycleState state;
    PreFilterResult result;
    api::PodPtr pod = PodWithPorts("p", "", c.want_ports);
    ASSERT_TRUE(pl.PreFilter(state, *pod, result).IsSuccess()) << c.name;
    EXPECT_TRUE(result.AllNodes()) << c.name;
    cache::NodeInfo node = NodeWith({PodWithPorts("existing", "m1", c.used_ports)});
    Status s = pl.Filter(state, *pod, node);
    if (c.fits) {
      EXPECT_TRUE(s.IsSuccess()) << c.name << ": " << s.ToString();
    } else {
      EXPECT_EQ(s.code(), Code::kUnschedulable) << c.name;
      EXPECT_EQ(s.Message(), "node(s) didn't have free ports for the requested pod ports") << c.name;
    }
  }
}

TEST(NodePortsTest, PreFilterSkipsPodsWithoutHostPorts) {
  NodePorts pl;
  CycleState state;
  PreFilterResult result;
  api::Pod pod;
  api::Container c;
  c.ports.push_back(api::ContainerPort{.container_port = 80});  // no hostPort
  pod.spec.containers.push_back(c);
  EXPECT_TRUE(pl.PreFilter(state, pod, result).IsSkip());
}

TEST(NodePortsTest, FilterWithoutPreFilterIsAnError) {
  NodePorts pl;
  CycleState state;
  cache::NodeInfo node = NodeWith({});
  Status s = pl.Filter(state, api::Pod(), node);
  EXPECT_EQ(s.code(), Code::kError);
  EXPECT_EQ(s.Message(), "reading \"PreFilterNodePorts\" from cycleState: not found");
}

TEST(NodePortsTest, EventsAndPodDeleteHint) {
  NodePorts pl;
  auto events = pl.EventsToRegister();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_TRUE(events[0].event.Match(kAssignedPodDelete));
  EXPECT_FALSE(events[0].event.Match(kAssignedPodUpdate));
  EXPECT_TRUE(events[1].event.Match(kNodeAdd));
  EXPECT_TRUE(events[1].event.Match(kNodeAllocatableChange));
  EXPECT_FALSE(events[1].hint_fn);  // node events always requeue

  api::PodPtr pod = PodWithPorts("p", "", {"TCP/0.0.0.0/8080"});
  struct Case {
    std::string name;
    api::PodPtr deleted;
    QueueingHint want;
  };
  const Case cases[] = {
      {"deleted pod held the port", PodWithPorts("d", "m1", {"TCP/127.0.0.1/8080"}), QueueingHint::kQueue},
      {"deleted pod held another port", PodWithPorts("d", "m1", {"TCP/127.0.0.1/9090"}), QueueingHint::kSkip},
      {"deleted pod held the port for udp", PodWithPorts("d", "m1", {"UDP/127.0.0.1/8080"}), QueueingHint::kSkip},
      {"deleted pod had no host ports", PodWithPorts("d", "m1", {}), QueueingHint::kSkip},
      {"deleted pod was not assigned", PodWithPorts("d", "", {"TCP/127.0.0.1/8080"}), QueueingHint::kSkip},
  };
  for (const Case& c : cases) {
    auto r = events[0].hint_fn(*pod, c.deleted.get(), nullptr);
    ASSERT_TRUE(r.ok()) << c.name;
    EXPECT_EQ(*r, c.want) << c.name;
  }
  EXPECT_FALSE(events[0].hint_fn(*pod, nullptr, nullptr).ok());
}

}  // namespace
}  // namespace ksched::framework::plugins::nodeports
