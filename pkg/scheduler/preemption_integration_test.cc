// Preemption end to end on a real kube-apiserver: DefaultPreemption in ksched's default
// profile evicts through the API, nominates the preemptor and binds it once its victims
// are gone. There is no kubelet: tests/harness/kubelet_standin.h finishes the graceful
// deletes (or the test holds them, to look at the state in between).
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "pkg/api/json.h"
#include "tests/harness/kubelet_standin.h"
#include "tests/harness/scheduler_harness.h"
#include "tests/fakes/builders.h"
#include "tests/fakes/event_log.h"
#include "tests/fakes/objects.h"

namespace ksched::scheduler {
namespace {

using namespace std::chrono_literals;
using client::Verb;
using ksched::testing::AdminClient;
using ksched::testing::CreateNamespace;
using ksched::testing::CreatePod;
using ksched::testing::Eventually;
using ksched::testing::Post;
using Harness = ksched::testing::SchedulerHarness;

// PriorityClasses shared by the tests (the Priority admission plugin resolves them).
void CreatePriorityClasses(client::ApiClient& c) {
  for (const auto& [name, value, policy] : std::vector<std::tuple<std::string, int, std::string>>{
           {"pt-low", 0, ""}, {"pt-mid", 500, ""}, {"pt-high", 1000, ""}, {"pt-never", 1000, "Never"}}) {
    std::string body = R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":")" + name +
                       R"("},"value":)" + std::to_string(value);
    if (!policy.empty()) body += R"(,"preemptionPolicy":")" + policy + "\"";
    Post(c, "/apis/scheduling.k8s.io/v1/priorityclasses", body + "}");
  }
}

// Nodes of `group` with `cpu` each.
void CreateNodes(client::ApiClient& c, const std::string& group, int n, const std::string& cpu = "1") {
  for (int i = 0; i < n; ++i) {
    api::Node node = ksched::testing::TestNode(group + "-" + std::to_string(i), *api::Quantity::Parse(cpu),
                                               *api::Quantity::Parse("16Gi"));
    node.metadata.labels.Set("test-group", group);
    Post(c, "/api/v1/nodes", api::EncodeNode(node));
  }
}

api::Pod PodOf(const std::string& group, const std::string& name, const std::string& klass, int32_t priority,
               const std::string& cpu, const std::string& node = "") {
  return ksched::testing::PodBuilder(name)
      .Namespace(group)
      .SchedulerName("ksched")
      .Label("app", name)
      .NodeSelector("test-group", group)
      .Req({{"cpu", cpu}})
      .PriorityClassName(klass)
      .Priority(priority)
      .Node(node)
      .Build();
}

api::PodPtr Get(Harness& h, const std::string& key) { return h.pods().Get(key); }

std::string WaitNominated(Harness& h, const std::string& key, std::chrono::milliseconds timeout = 30s) {
  std::string node;
  EXPECT_TRUE(Eventually(
      [&] {
        auto p = Get(h, key);
        if (p) node = p->status.nominated_node_name;
        return !node.empty();
      },
      timeout))
      << key << " never nominated";
  return node;
}

// The notes of the events about pods in `ns` with `reason`.
std::vector<std::string> EventNotes(client::ApiClient& c, const std::string& ns, const std::string& reason) {
  auto r = c.Do({.path = "/apis/events.k8s.io/v1/namespaces/" + ns + "/events"});
  EXPECT_TRUE(r.ok());
  std::vector<std::string> notes;
  if (!r.ok()) return notes;
  const std::string& b = r->body;
  // Good enough for our own events: each carries "reason":"X" and then "note":"...".
  for (size_t pos = b.find("\"reason\":\"" + reason + "\""); pos != std::string::npos;
       pos = b.find("\"reason\":\"" + reason + "\"", pos + 1)) {
    size_t n = b.find("\"note\":\"", pos);
    if (n == std::string::npos) break;
    n += 8;
    notes.push_back(b.substr(n, b.find('"', n) - n));
  }
  return notes;
}

int Bound(const std::vector<api::PodPtr>& pods, const std::string& ns) {
  int n = 0;
  for (const auto& p : pods) n += p->metadata.namespace_ == ns && p->IsAssigned() && !p->IsBeingDeleted();
  return n;
}

// The basic preemption case: four 1-CPU nodes full of 900m low-priority pods; one 900m
// high-priority pod evicts exactly one of them, is nominated, and is bound there.
TEST(PreemptionIntegrationTest, FourFullNodesOneVictim) {
  auto c = AdminClient();
  CreatePriorityClasses(*c);
  CreateNamespace(*c, "pt-four");
  CreateNodes(*c, "pt-four", 4);
  ksched::testing::KubeletStandin kubelet(*c, {.pods_path = "/api/v1/namespaces/pt-four/pods"});
  ASSERT_TRUE(kubelet.Start());
  Harness h({"ksched"});
  for (int i = 0; i < 4; ++i) CreatePod(*c, PodOf("pt-four", "low" + std::to_string(i), "pt-low", 0, "900m"));
  ASSERT_TRUE(Eventually([&] { return Bound(h.pods().List(), "pt-four") == 4; }, 30s));

  CreatePod(*c, PodOf("pt-four", "high", "pt-high", 1000, "900m"));
  const std::string node = h.WaitBound("pt-four/high");
  ASSERT_TRUE(kubelet.WaitForRemovals(1, 5s));
  auto removals = kubelet.Removals();
  ASSERT_EQ(removals.size(), 1u) << "exactly one victim";
  EXPECT_EQ(removals[0].node, node) << "the pod is bound where its victim was";
  EXPECT_EQ(Bound(h.pods().List(), "pt-four"), 4);
  EXPECT_EQ(Get(h, "pt-four/high")->status.nominated_node_name, node);
  ASSERT_TRUE(Eventually([&] { return !EventNotes(*c, "pt-four", "Preempted").empty(); }, 10s));
  EXPECT_EQ(EventNotes(*c, "pt-four", "Preempted"),
            std::vector<std::string>{"Preempted by pt-four/high on node " + node});
}

// A PodDisruptionBudget with no disruption left protects the pod it covers when another
// victim would do.
TEST(PreemptionIntegrationTest, PdbProtectsItsPodWhenAnotherVictimExists) {
  auto c = AdminClient();
  CreatePriorityClasses(*c);
  CreateNamespace(*c, "pt-pdb");
  CreateNodes(*c, "pt-pdb", 1, "2");
  Post(*c, "/apis/policy/v1beta1/namespaces/pt-pdb/poddisruptionbudgets",
       R"({"apiVersion":"policy/v1beta1","kind":"PodDisruptionBudget","metadata":{"name":"keep-a"},)"
       R"("spec":{"minAvailable":1,"selector":{"matchLabels":{"app":"a"}}}})");
  ksched::testing::KubeletStandin kubelet(*c, {.pods_path = "/api/v1/namespaces/pt-pdb/pods"});
  ASSERT_TRUE(kubelet.Start());
  Harness h({"ksched"});
  ASSERT_TRUE(Eventually([&] { return !h.listers().DisruptionBudgets("pt-pdb").empty(); }, 10s));
  // "a" started later (less important by start time alone), but the budget keeps it.
  CreatePod(*c, PodOf("pt-pdb", "b", "pt-low", 0, "1"));
  CreatePod(*c, PodOf("pt-pdb", "a", "pt-low", 0, "1"));
  ASSERT_TRUE(Eventually([&] { return Bound(h.pods().List(), "pt-pdb") == 2; }, 30s));
  CreatePod(*c, PodOf("pt-pdb", "high", "pt-high", 1000, "1"));
  h.WaitBound("pt-pdb/high");
  ASSERT_TRUE(kubelet.WaitForRemovals(1, 5s));
  auto removals = kubelet.Removals();
  ASSERT_EQ(removals.size(), 1u);
  EXPECT_EQ(removals[0].key, "pt-pdb/b");
  EXPECT_TRUE(Get(h, "pt-pdb/a") != nullptr);
}

// preemptionPolicy: Never (from its PriorityClass): the pod waits, nobody is evicted.
TEST(PreemptionIntegrationTest, PreemptionPolicyNeverEvictsNobody) {
  auto c = AdminClient();
  CreatePriorityClasses(*c);
  CreateNamespace(*c, "pt-never");
  CreateNodes(*c, "pt-never", 1);
  ksched::testing::KubeletStandin kubelet(*c, {.pods_path = "/api/v1/namespaces/pt-never/pods"});
  ASSERT_TRUE(kubelet.Start());
  Harness h({"ksched"});
  CreatePod(*c, PodOf("pt-never", "low", "pt-low", 0, "900m"));
  h.WaitBound("pt-never/low");
  CreatePod(*c, PodOf("pt-never", "polite", "pt-never", 1000, "900m"));
  std::string message;
  ASSERT_TRUE(Eventually(
      [&] {
        auto p = Get(h, "pt-never/polite");
        const api::PodCondition* cond = p ? p->FindCondition("PodScheduled") : nullptr;
        if (cond) message = cond->message;
        return cond != nullptr;
      },
      30s));
  // upstream's FitError: the nodes' reasons, then " <PostFilter message>."
  EXPECT_NE(message.find(". preemption: not eligible due to preemptionPolicy=Never.."), std::string::npos) << message;
  std::this_thread::sleep_for(1s);
  EXPECT_EQ(kubelet.RemovalCount(), 0u);
  EXPECT_FALSE(Get(h, "pt-never/polite")->IsAssigned());
}

// While a preemption's victim is still terminating, a higher-priority pod arrives: it
// takes over the node (the victim already leaving is not evicted twice), the lower
// nominated pod loses its nomination, and nothing else is evicted.
TEST(PreemptionIntegrationTest, HigherPriorityPodArrivingMidPreemptionTakesOver) {
  auto c = AdminClient();
  CreatePriorityClasses(*c);
  CreateNamespace(*c, "pt-mid");
  CreateNodes(*c, "pt-mid", 1);
  Harness h({"ksched"});
  CreatePod(*c, PodOf("pt-mid", "low", "pt-low", 0, "900m"));
  const std::string node = h.WaitBound("pt-mid/low");
  // No kubelet stand-in yet: the victim stays terminating.
  CreatePod(*c, PodOf("pt-mid", "mid", "pt-mid", 500, "900m"));
  EXPECT_EQ(WaitNominated(h, "pt-mid/mid"), node);
  ASSERT_TRUE(Eventually([&] { auto p = Get(h, "pt-mid/low"); return p && p->IsBeingDeleted(); }, 10s));
  // /debug/pods tells why it waits: its nomination and the victim it evicted.
  auto record = h.scheduler().decisions()->PodJson("pt-mid", "mid");
  ASSERT_TRUE(record.has_value());
  EXPECT_NE(record->find(R"("preemption":{"nominatedNode":")" + node + R"(","victims":["pt-mid/low"]})"),
            std::string::npos)
      << *record;

  CreatePod(*c, PodOf("pt-mid", "high", "pt-high", 1000, "900m"));
  EXPECT_EQ(WaitNominated(h, "pt-mid/high"), node);
  // The lower nominated pod gives the node up.
  ASSERT_TRUE(Eventually([&] { auto p = Get(h, "pt-mid/mid"); return p && p->status.nominated_node_name.empty(); },
                         10s))
      << "mid kept its nomination";

  // The "kubelet" finishes the victim: the higher pod gets the node, the other waits.
  ksched::testing::KubeletStandin kubelet(*c, {.pods_path = "/api/v1/namespaces/pt-mid/pods"});
  ASSERT_TRUE(kubelet.Start());
  EXPECT_EQ(h.WaitBound("pt-mid/high", 10s), node);
  std::this_thread::sleep_for(1500ms);
  EXPECT_FALSE(Get(h, "pt-mid/mid")->IsAssigned());
  EXPECT_EQ(kubelet.RemovalCount(), 1u) << "only the first victim went";
  ASSERT_EQ(EventNotes(*c, "pt-mid", "Preempted").size(), 1u);
}

// Two preemptors at once on two full nodes: both bound, two victims, no node over.
TEST(PreemptionIntegrationTest, ConcurrentPreemptorsEachEvictOne) {
  auto c = AdminClient();
  CreatePriorityClasses(*c);
  CreateNamespace(*c, "pt-two");
  CreateNodes(*c, "pt-two", 2);
  ksched::testing::KubeletStandin kubelet(*c, {.pods_path = "/api/v1/namespaces/pt-two/pods"});
  ASSERT_TRUE(kubelet.Start());
  Harness h({"ksched"});
  CreatePod(*c, PodOf("pt-two", "low0", "pt-low", 0, "900m"));
  CreatePod(*c, PodOf("pt-two", "low1", "pt-low", 0, "900m"));
  ASSERT_TRUE(Eventually([&] { return Bound(h.pods().List(), "pt-two") == 2; }, 30s));
  CreatePod(*c, PodOf("pt-two", "mid", "pt-mid", 500, "900m"));
  CreatePod(*c, PodOf("pt-two", "high", "pt-high", 1000, "900m"));
  const std::string a = h.WaitBound("pt-two/mid"), b = h.WaitBound("pt-two/high");
  EXPECT_NE(a, b);
  EXPECT_EQ(kubelet.RemovalCount(), 2u);
  EXPECT_EQ(Bound(h.pods().List(), "pt-two"), 2);
}

}  // namespace
}  // namespace ksched::scheduler
