// InterPodAffinity and PodTopologySpread in ksched's default profile, end to end on a
// real kube-apiserver: Filter (hard constraints hold, the failure names the plugin's
// reason), Score (preferred affinity gathers pods) and requeue (a blocked pod is bound
// within a couple of seconds of the change that unblocks it).
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "pkg/api/json.h"
#include "tests/harness/scheduler_harness.h"
#include "tests/fakes/builders.h"
#include "tests/fakes/event_log.h"
#include "tests/fakes/objects.h"

namespace ksched::scheduler {
namespace {

using namespace std::chrono_literals;
using client::Verb;
using ksched::testing::AdminClient;
using ksched::testing::AffinityKind;
using ksched::testing::CreateNamespace;
using ksched::testing::CreatePod;
using ksched::testing::Eventually;
using ksched::testing::ListPods;
using ksched::testing::Post;
using Harness = ksched::testing::SchedulerHarness;

constexpr char kHostname[] = "kubernetes.io/hostname";
constexpr char kZone[] = "topology.kubernetes.io/zone";
constexpr auto kRequeueBound = 3s;  // unblocked pod bound within this (flush is 1 s + backoff)

// A node in `zone`, labelled with its hostname and `group` (pods select their group so
// the nodes of other tests sharing the cluster stay out of the way).
void CreateNode(client::ApiClient& c, const std::string& name, const std::string& zone, const std::string& group,
                const std::string& cpu = "4") {
  api::Node n = ksched::testing::TestNode(name, *api::Quantity::Parse(cpu), *api::Quantity::Parse("16Gi"));
  n.metadata.labels.Set(kHostname, name);
  n.metadata.labels.Set(kZone, zone);
  n.metadata.labels.Set("test-group", group);
  Post(c, "/api/v1/nodes", api::EncodeNode(n));
}

// A ksched pod of `group` asking for `cpu`, labelled app=<app>.
ksched::testing::PodBuilder PodOf(const std::string& ns, const std::string& name, const std::string& app,
                                  const std::string& group, const std::string& cpu = "100m") {
  ksched::testing::PodBuilder b(name);
  b.Namespace(ns).SchedulerName("ksched").Label("app", app).NodeSelector("test-group", group).Req({{"cpu", cpu}});
  return b;
}

void DeletePod(client::ApiClient& c, const std::string& ns, const std::string& name) {
  auto r = c.Do({.verb = Verb::kDelete, .path = "/api/v1/namespaces/" + ns + "/pods/" + name,
                 .body = R"({"apiVersion":"v1","kind":"DeleteOptions","gracePeriodSeconds":0})"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
}

// Waits for the pod's PodScheduled=False condition and returns its message.
std::string WaitUnschedulable(Harness& h, const std::string& key) {
  std::string message;
  EXPECT_TRUE(Eventually(
      [&] {
        auto p = h.pods().Get(key);
        const api::PodCondition* cond = p ? p->FindCondition("PodScheduled") : nullptr;
        if (!cond || cond->status != "False") return false;
        message = cond->message;
        return true;
      },
      30s))
      << key << " never became unschedulable";
  return message;
}

// node -> zone of this test's nodes.
std::map<std::string, std::string> ZonesOf(Harness& h, const std::string& group) {
  std::map<std::string, std::string> out;
  for (const auto& n : h.nodes().List()) {
    const std::string* g = n->metadata.labels.Get("test-group");
    if (g && *g == group) out[n->Name()] = *n->metadata.labels.Get(kZone);
  }
  return out;
}

TEST(PlacementIntegrationTest, RequiredAntiAffinityOnePodPerNodeAndRequeueOnDelete) {
  auto c = AdminClient();
  CreateNamespace(*c, "anti");
  for (int i = 0; i < 4; ++i) CreateNode(*c, "anti-node-" + std::to_string(i), "z", "anti");
  Harness h({"ksched"});
  ASSERT_TRUE(Eventually([&] { return ZonesOf(h, "anti").size() == 4; }, 10s));
  auto anti_pod = [&](const std::string& name) {
    return PodOf("anti", name, "anti", "anti").PodAntiAffinityIn("app", kHostname, {"anti"}, AffinityKind::kRequired).Build();
  };
  for (int i = 0; i < 4; ++i) CreatePod(*c, anti_pod("p" + std::to_string(i)));
  std::set<std::string> nodes;
  for (int i = 0; i < 4; ++i) nodes.insert(h.WaitBound("anti/p" + std::to_string(i), 30s));
  EXPECT_EQ(nodes.size(), 4u) << "two anti-affine pods share a node";

  CreatePod(*c, anti_pod("p4"));
  std::string msg = WaitUnschedulable(h, "anti/p4");
  EXPECT_NE(msg.find("4 node(s) didn't match pod anti-affinity rules"), std::string::npos) << msg;
  std::string freed = h.pods().Get("anti/p1")->spec.node_name;
  DeletePod(*c, "anti", "p1");
  EXPECT_EQ(h.WaitBound("anti/p4", kRequeueBound), freed);
}

TEST(PlacementIntegrationTest, AntiAffinityRequeuedWhenTheBlockingPodIsRelabelled) {
  auto c = AdminClient();
  CreateNamespace(*c, "relabel");
  CreateNode(*c, "relabel-0", "z", "relabel");
  CreateNode(*c, "relabel-1", "z", "relabel");
  // Blockers placed by another scheduler, without terms of their own.
  CreatePod(*c, PodOf("relabel", "b0", "blocker", "relabel").SchedulerName("elsewhere").Node("relabel-0").Build());
  CreatePod(*c, PodOf("relabel", "b1", "blocker", "relabel").SchedulerName("elsewhere").Node("relabel-1").Build());
  Harness h({"ksched"});
  ASSERT_TRUE(Eventually([&] { return h.pods().Get("relabel/b0") && h.pods().Get("relabel/b1"); }, 10s));
  CreatePod(*c, PodOf("relabel", "q", "q", "relabel").PodAntiAffinityIn("app", kHostname, {"blocker"}, AffinityKind::kRequired).Build());
  std::string msg = WaitUnschedulable(h, "relabel/q");
  EXPECT_NE(msg.find("2 node(s) didn't match pod anti-affinity rules"), std::string::npos) << msg;
  auto patched = c->Do({.verb = Verb::kPatch, .path = "/api/v1/namespaces/relabel/pods/b1",
                        .body = R"({"metadata":{"labels":{"app":"other"}}})",
                        .content_type = std::string(client::kContentMergePatch)});
  ASSERT_TRUE(patched.ok()) << patched.status().ToString();
  EXPECT_EQ(h.WaitBound("relabel/q", kRequeueBound), "relabel-1");
}

TEST(PlacementIntegrationTest, ExistingPodsAntiAffinityKeepsOutAPodWithoutTermsUntilDeleted) {
  auto c = AdminClient();
  CreateNamespace(*c, "symm");
  CreateNode(*c, "symm-0", "z", "symm");
  // The existing pod repels app=victim from its node; the victim has no terms at all.
  CreatePod(*c, PodOf("symm", "guard", "guard", "symm")
                    .SchedulerName("elsewhere")
                    .Node("symm-0")
                    .PodAntiAffinityIn("app", kHostname, {"victim"}, AffinityKind::kRequired)
                    .Build());
  Harness h({"ksched"});
  ASSERT_TRUE(Eventually([&] { return h.pods().Get("symm/guard") != nullptr; }, 10s));
  CreatePod(*c, PodOf("symm", "victim", "victim", "symm").Build());
  std::string msg = WaitUnschedulable(h, "symm/victim");
  EXPECT_NE(msg.find("1 node(s) didn't satisfy existing pods anti-affinity rules"), std::string::npos) << msg;
  DeletePod(*c, "symm", "guard");
  EXPECT_EQ(h.WaitBound("symm/victim", kRequeueBound), "symm-0");
}

TEST(PlacementIntegrationTest, RequiredAffinityWaitsForItsTargetThenJoinsItsZone) {
  auto c = AdminClient();
  CreateNamespace(*c, "aff");
  for (const char* zone : {"a", "b"}) {
    for (int i = 0; i < 2; ++i) CreateNode(*c, std::string("aff-") + zone + "-" + std::to_string(i), zone, "aff");
  }
  Harness h({"ksched"});
  ASSERT_TRUE(Eventually([&] { return ZonesOf(h, "aff").size() == 4; }, 10s));
  CreatePod(*c, PodOf("aff", "follower", "web", "aff").PodAffinityIn("app", kZone, {"db"}, AffinityKind::kRequired).Build());
  std::string msg = WaitUnschedulable(h, "aff/follower");
  EXPECT_NE(msg.find("4 node(s) didn't match pod affinity rules"), std::string::npos) << msg;

  // The target appears already bound (another scheduler placed it): the follower is
  // requeued by the assigned-pod event and lands in the target's zone.
  CreatePod(*c, PodOf("aff", "db", "db", "aff").SchedulerName("elsewhere").Node("aff-b-1").Build());
  std::string node = h.WaitBound("aff/follower", kRequeueBound);
  EXPECT_EQ(ZonesOf(h, "aff")[node], "b") << node;
}

TEST(PlacementIntegrationTest, PreferredAffinityGathersPodsInTheTargetsZone) {
  auto c = AdminClient();
  CreateNamespace(*c, "pref");
  for (const char* zone : {"a", "b", "c"}) {
    for (int i = 0; i < 2; ++i) CreateNode(*c, std::string("pref-") + zone + "-" + std::to_string(i), zone, "pref");
  }
  Harness h({"ksched"});
  ASSERT_TRUE(Eventually([&] { return ZonesOf(h, "pref").size() == 6; }, 10s));
  CreatePod(*c, PodOf("pref", "anchor", "cache", "pref").SchedulerName("elsewhere").Node("pref-c-0").Build());
  ASSERT_TRUE(Eventually([&] { return h.pods().Get("pref/anchor") != nullptr; }, 10s));
  for (int i = 0; i < 6; ++i) {
    CreatePod(*c, PodOf("pref", "w" + std::to_string(i), "web", "pref")
                      .PodAffinityIn("app", kZone, {"cache"}, AffinityKind::kPreferred, 100)
                      .Build());
  }
  auto zones = ZonesOf(h, "pref");
  for (int i = 0; i < 6; ++i) {
    std::string node = h.WaitBound("pref/w" + std::to_string(i), 30s);
    EXPECT_EQ(zones[node], "c") << "w" << i << " on " << node;
  }
}

TEST(PlacementIntegrationTest, TopologySpreadDoNotScheduleBalancesZonesAgainstResourceScores) {
  auto c = AdminClient();
  CreateNamespace(*c, "spread");
  // Zone a has far more room, so resource scoring alone would put every pod there.
  CreateNode(*c, "spread-a-0", "a", "spread", "32");
  CreateNode(*c, "spread-a-1", "a", "spread", "32");
  CreateNode(*c, "spread-b-0", "b", "spread", "2");
  CreateNode(*c, "spread-c-0", "c", "spread", "2");
  Harness h({"ksched"});
  ASSERT_TRUE(Eventually([&] { return ZonesOf(h, "spread").size() == 4; }, 10s));
  for (int i = 0; i < 9; ++i) {
    CreatePod(*c, PodOf("spread", "s" + std::to_string(i), "spread", "spread")
                      .SpreadConstraint(1, kZone, api::WhenUnsatisfiable::kDoNotSchedule,
                                        ksched::testing::LabelsSelector({{"app", "spread"}}))
                      .Build());
  }
  auto zones = ZonesOf(h, "spread");
  std::map<std::string, int> per_zone;
  for (int i = 0; i < 9; ++i) ++per_zone[zones[h.WaitBound("spread/s" + std::to_string(i), 30s)]];
  EXPECT_EQ(per_zone, (std::map<std::string, int>{{"a", 3}, {"b", 3}, {"c", 3}}));
}

TEST(PlacementIntegrationTest, TopologySpreadBlockedPodBoundWhenNodeInEmptyZoneAppears) {
  auto c = AdminClient();
  CreateNamespace(*c, "spreadq");
  CreateNode(*c, "spreadq-a-0", "a", "spreadq", "4");
  CreateNode(*c, "spreadq-b-0", "b", "spreadq", "1");
  // Zone a already holds one matching pod; zone b's only node is full.
  CreatePod(*c, PodOf("spreadq", "existing", "sq", "spreadq").SchedulerName("elsewhere").Node("spreadq-a-0").Build());
  CreatePod(*c, PodOf("spreadq", "filler", "other", "spreadq", "900m").SchedulerName("elsewhere").Node("spreadq-b-0").Build());
  Harness h({"ksched"});
  ASSERT_TRUE(Eventually([&] { return ZonesOf(h, "spreadq").size() == 2; }, 10s));
  ASSERT_TRUE(Eventually([&] { return h.pods().Get("spreadq/existing") && h.pods().Get("spreadq/filler"); }, 10s));
  CreatePod(*c, PodOf("spreadq", "blocked", "sq", "spreadq", "500m")
                    .SpreadConstraint(1, kZone, api::WhenUnsatisfiable::kDoNotSchedule,
                                      ksched::testing::LabelsSelector({{"app", "sq"}}))
                    .Build());
  std::string msg = WaitUnschedulable(h, "spreadq/blocked");
  EXPECT_NE(msg.find("1 node(s) didn't match pod topology spread constraints"), std::string::npos) << msg;
  EXPECT_NE(msg.find("1 Insufficient cpu"), std::string::npos) << msg;

  CreateNode(*c, "spreadq-b-1", "b", "spreadq", "4");
  EXPECT_EQ(h.WaitBound("spreadq/blocked", kRequeueBound), "spreadq-b-1");
}

TEST(PlacementIntegrationTest, SystemDefaultSpreadingMovesReplicaSetPodsAwayFromTheirSiblings) {
  auto c = AdminClient();
  CreateNamespace(*c, "sysdef");
  // Resource scoring prefers the big node; system-default spreading (the pods belong to a
  // ReplicaSet) prefers the node without siblings.
  CreateNode(*c, "sysdef-big", "a", "sysdef", "64");
  CreateNode(*c, "sysdef-small", "b", "sysdef", "4");
  Post(*c, "/apis/apps/v1/namespaces/sysdef/replicasets", R"({"apiVersion":"apps/v1","kind":"ReplicaSet",
      "metadata":{"name":"web"},"spec":{"replicas":0,"selector":{"matchLabels":{"app":"web"}},
      "template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"pause"}]}}}})");
  for (int i = 0; i < 3; ++i) {
    CreatePod(*c, PodOf("sysdef", "sibling" + std::to_string(i), "web", "sysdef")
                      .SchedulerName("elsewhere")
                      .Node("sysdef-big")
                      .Build());
  }
  CreatePod(*c, PodOf("sysdef", "busy", "other", "sysdef", "2").SchedulerName("elsewhere").Node("sysdef-small").Build());
  Harness h({"ksched"});
  ASSERT_TRUE(Eventually([&] { return ZonesOf(h, "sysdef").size() == 2; }, 10s));
  ASSERT_TRUE(Eventually([&] { return h.pods().Get("sysdef/sibling2") && h.pods().Get("sysdef/busy"); }, 10s));
  api::Pod probe = PodOf("sysdef", "probe", "web", "sysdef").Build();
  ASSERT_TRUE(Eventually([&] { return !h.listers().DefaultSpreadSelector(probe).match_expressions.empty(); }, 10s))
      << "the ReplicaSet never reached the lister";

  // Not selected by the ReplicaSet: resource scoring alone decides.
  CreatePod(*c, PodOf("sysdef", "loner", "loner", "sysdef").Build());
  EXPECT_EQ(h.WaitBound("sysdef/loner", 30s), "sysdef-big");
  // Selected: spread away from the siblings.
  CreatePod(*c, PodOf("sysdef", "replica", "web", "sysdef").Build());
  EXPECT_EQ(h.WaitBound("sysdef/replica", 30s), "sysdef-small");
}

}  // namespace
}  // namespace ksched::scheduler
