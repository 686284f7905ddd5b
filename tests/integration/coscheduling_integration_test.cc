// Gangs end to end on the real kube-apiserver: the PodGroup CRD of manifests/coscheduling
// installed as an operator would, and the ksched binary with a Coscheduling profile
// (PrioritySort replaced, as scheduler-plugins documents it). Two nodes of 4 CPUs hold
// 8 pods of 1 CPU: groups of 4 fit two at a time, and no group is ever bound in part.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <string>
#include <thread>

#include "pkg/api/json.h"
#include "tests/fakes/objects.h"
#include "tests/harness/api_helpers.h"
#include "tests/harness/control_plane.h"
#include "tests/harness/process_util.h"
#include "tests/integration/manifests.h"

namespace ksched::testing {
namespace {

using namespace std::chrono_literals;
using client::Verb;

bool TestFailed() { return ::testing::Test::HasFailure(); }

constexpr char kNs[] = "gangs";
constexpr char kScheduler[] = "gang-scheduler";
constexpr char kGroupLabel[] = "scheduling.x-k8s.io/pod-group";

class CoschedulingIntegrationTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ControlPlane& cp = ControlPlane::Get();
    admin_ = AdminClient().release();
    Status crd = ApplyManifestFile(*admin_, std::string(KSCHED_MANIFESTS_DIR) + "/coscheduling/podgroup-crd.yaml");
    ASSERT_TRUE(crd.ok()) << crd.ToString();
    // The CRD is served once established: discovery lists the group.
    ASSERT_TRUE(Eventually(
        [] { return admin_->Do({.path = "/apis/scheduling.x-k8s.io/v1alpha1/podgroups"}).ok(); }, 30s));
    CreateNamespace(*admin_, kNs);
    for (const char* name : {"gang-a", "gang-b"}) {
      Post(*admin_, "/api/v1/nodes",
           api::EncodeNode(TestNode(name, *api::Quantity::Parse("4"), *api::Quantity::Parse("16Gi"))));
    }
    const std::string config = cp.dir() + "/coscheduling.yaml";
    std::ofstream(config) << "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                             "leaderElection: {leaderElect: false}\n"
                             "profiles:\n- schedulerName: " << kScheduler << "\n"
                             "  plugins:\n    multiPoint:\n      enabled: [{name: Coscheduling}]\n"
                             "      disabled: [{name: PrioritySort}]\n"
                             "  pluginConfig:\n  - name: Coscheduling\n    args: {permitWaitingTimeSeconds: 5}\n";
    ksched_ = new ChildProcess({KSCHED_BINARY, "--config=" + config, "--kubeconfig=" + cp.kubeconfig(),
                                "--bind-address=127.0.0.1", "--secure-port=" + std::to_string(FreePort()), "-v=3"},
                               cp.dir() + "/ksched.log", ChildProcess::Options{.print_log_if = TestFailed});
    ASSERT_TRUE(ksched_->Started());
  }
  static void TearDownTestSuite() {
    delete ksched_;
    delete admin_;
  }
  void TearDown() override { DeleteAll(); }

  static void CreateGroup(const std::string& name, int min_member, const std::string& extra_spec = "") {
    Post(*admin_, std::string("/apis/scheduling.x-k8s.io/v1alpha1/namespaces/") + kNs + "/podgroups",
         R"({"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"PodGroup","metadata":{"name":")" + name +
             R"("},"spec":{"minMember":)" + std::to_string(min_member) + extra_spec + "}}");
  }
  static api::Pod Member(const std::string& group, const std::string& name, const std::string& cpu = "1",
                         const std::string& scheduler = kScheduler) {
    api::Pod p = TestPod(kNs, name, scheduler, {{"cpu", *api::Quantity::Parse(cpu)}});
    p.metadata.labels.Set(kGroupLabel, group);
    return p;
  }
  static void CreateMembers(const std::string& group, int n, const std::string& cpu = "1") {
    for (int i = 0; i < n; ++i) CreatePod(*admin_, Member(group, group + "-" + std::to_string(i), cpu));
  }

  // group -> members bound, over every pod of the namespace.
  static std::map<std::string, int> BoundPerGroup() {
    std::map<std::string, int> out;
    auto r = admin_->Do({.path = std::string("/api/v1/namespaces/") + kNs + "/pods"});
    if (!r.ok()) return out;
    auto list = api::DecodePodList(r->body);
    if (!list.ok()) return out;
    for (const api::PodPtr& p : list->items) {
      const std::string* g = p->metadata.labels.Get(kGroupLabel);
      if (g == nullptr) continue;
      out[*g] += p->spec.node_name.empty() ? 0 : 1;
    }
    return out;
  }
  static int TotalBound(const std::map<std::string, int>& m) {
    int n = 0;
    for (const auto& [g, c] : m) n += c;
    return n;
  }
  // Every group is bound whole (`size` members) or not at all.
  static void ExpectNoPartialGroup(const std::map<std::string, int>& bound, int size) {
    for (const auto& [g, c] : bound) EXPECT_TRUE(c == 0 || c == size) << "group " << g << " has " << c << " bound";
  }

  // The PodScheduled condition's message of a pending pod.
  static std::string SchedulingMessage(const std::string& pod) {
    auto r = admin_->Do({.path = std::string("/api/v1/namespaces/") + kNs + "/pods/" + pod});
    if (!r.ok()) return "";
    auto p = api::DecodePod(r->body);
    if (!p.ok()) return "";
    for (const auto& c : (*p)->status.conditions) {
      if (c.type == "PodScheduled") return c.message;
    }
    return "";
  }

  static void DeletePod(const std::string& name) {
    (void)admin_->Do({.verb = Verb::kDelete, .path = std::string("/api/v1/namespaces/") + kNs + "/pods/" + name,
                      .body = R"({"gracePeriodSeconds":0})"});
  }
  static void DeleteAll() {
    (void)admin_->Do({.verb = Verb::kDelete, .path = std::string("/api/v1/namespaces/") + kNs + "/pods",
                      .body = R"({"gracePeriodSeconds":0})"});
    (void)admin_->Do({.verb = Verb::kDelete,
                      .path = std::string("/apis/scheduling.x-k8s.io/v1alpha1/namespaces/") + kNs + "/podgroups"});
    EXPECT_TRUE(Eventually(
        [] {
          auto r = admin_->Do({.path = std::string("/api/v1/namespaces/") + kNs + "/pods"});
          return r.ok() && r->body.find("\"items\":[]") != std::string::npos;
        },
        30s));
  }

  static client::ApiClient* admin_;
  static ChildProcess* ksched_;
};

client::ApiClient* CoschedulingIntegrationTest::admin_ = nullptr;
ChildProcess* CoschedulingIntegrationTest::ksched_ = nullptr;

// Three groups of 4 on room for 8: two are bound whole, the third not at all (also
// after its members' Permit timeouts); freeing one group's room binds the third.
TEST_F(CoschedulingIntegrationTest, TwoOfThreeGroupsBoundWholeThenTheThird) {
  for (const char* g : {"g1", "g2", "g3"}) CreateGroup(g, 4);
  for (const char* g : {"g1", "g2", "g3"}) CreateMembers(g, 4);
  ASSERT_TRUE(Eventually([] { return TotalBound(BoundPerGroup()) == 8; }, 60s)) << TotalBound(BoundPerGroup());
  std::this_thread::sleep_for(7s);  // past the 5 s Permit timeout of any waiting member
  auto bound = BoundPerGroup();
  EXPECT_EQ(TotalBound(bound), 8);
  ExpectNoPartialGroup(bound, 4);
  std::string done, pending;
  for (const auto& [g, c] : bound) (c == 4 ? done : pending) = g;
  ASSERT_FALSE(pending.empty());
  for (int i = 0; i < 4; ++i) DeletePod(done + "-" + std::to_string(i));
  EXPECT_TRUE(Eventually([&] { return BoundPerGroup()[pending] == 4; }, 60s)) << BoundPerGroup()[pending];
  ExpectNoPartialGroup(BoundPerGroup(), 4);
}

// Members wait at Permit for the rest of their group; when it does not come within the
// group's scheduleTimeoutSeconds, every waiting member is released unbound. A member that
// arrives later brings the group together.
TEST_F(CoschedulingIntegrationTest, TimeoutReleasesWaitingMembersAndALateMemberCompletesTheGroup) {
  CreateGroup("slow", 3, R"(,"scheduleTimeoutSeconds":3)");
  // The third member belongs to another scheduler: it counts as a member but never
  // reaches this one's Permit.
  CreatePod(*admin_, Member("slow", "slow-0"));
  CreatePod(*admin_, Member("slow", "slow-1"));
  CreatePod(*admin_, Member("slow", "slow-foreign", "1", "nobody"));
  EXPECT_TRUE(Eventually([] { return SchedulingMessage("slow-0").find("timeout") != std::string::npos; }, 30s))
      << SchedulingMessage("slow-0");
  EXPECT_EQ(TotalBound(BoundPerGroup()), 0);
  DeletePod("slow-foreign");
  CreatePod(*admin_, Member("slow", "slow-2"));
  EXPECT_TRUE(Eventually([] { return BoundPerGroup()["slow"] == 3; }, 60s)) << BoundPerGroup()["slow"];
}

// Too few members: none is tried until minMember exist.
TEST_F(CoschedulingIntegrationTest, GroupWaitsForMinMemberPods) {
  CreateGroup("few", 3);
  CreateMembers("few", 2);
  EXPECT_TRUE(Eventually(
      [] { return SchedulingMessage("few-0").find("cannot find enough sibling pods") != std::string::npos; }, 30s))
      << SchedulingMessage("few-0");
  EXPECT_EQ(TotalBound(BoundPerGroup()), 0);
  CreatePod(*admin_, Member("few", "few-2"));
  EXPECT_TRUE(Eventually([] { return BoundPerGroup()["few"] == 3; }, 60s)) << BoundPerGroup()["few"];
}

// minResources larger than the cluster's free room holds the group at PreFilter; a
// PodGroup update that lowers it lets the group through.
TEST_F(CoschedulingIntegrationTest, MinResourcesAgainstTheCluster) {
  CreateGroup("big", 2, R"(,"minResources":{"cpu":"100"})");
  CreateMembers("big", 2);
  EXPECT_TRUE(Eventually(
      [] { return SchedulingMessage("big-0").find("resource gap") != std::string::npos; }, 30s))
      << SchedulingMessage("big-0");
  EXPECT_EQ(TotalBound(BoundPerGroup()), 0);
  auto r = admin_->Do({.verb = Verb::kPatch,
                       .path = std::string("/apis/scheduling.x-k8s.io/v1alpha1/namespaces/") + kNs + "/podgroups/big",
                       .body = R"({"spec":{"minResources":{"cpu":"2"}}})",
                       .content_type = "application/merge-patch+json"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(Eventually([] { return BoundPerGroup()["big"] == 2; }, 60s)) << BoundPerGroup()["big"];
}

// Many groups race for room for 80 pods of 100m: whatever is bound is whole groups.
TEST_F(CoschedulingIntegrationTest, ManyGroupsRacingNeverBindInPart) {
  constexpr int kGroups = 20, kSize = 5;
  for (int g = 0; g < kGroups; ++g) CreateGroup("race" + std::to_string(g), kSize);
  for (int g = 0; g < kGroups; ++g) CreateMembers("race" + std::to_string(g), kSize, "100m");
  // 16 groups fit; give the scheduler until every group that can be whole is.
  EXPECT_TRUE(Eventually([] { return TotalBound(BoundPerGroup()) == 80; }, 90s)) << TotalBound(BoundPerGroup());
  std::this_thread::sleep_for(7s);
  auto bound = BoundPerGroup();
  ExpectNoPartialGroup(bound, kSize);
  EXPECT_EQ(TotalBound(bound), 80);
}

}  // namespace
}  // namespace ksched::testing
