// HTTP scheduler extenders end to end on the real kube-apiserver: the ksched binary with
// `extenders:` in its configuration, and ksched_test_extender (tests/fakes) as the
// extender. Filter, prioritize with a weight, bind by the extender, an ignorable
// extender that is down, nodeCacheCapable both ways, managedResources with
// ignoredByScheduler; then the same extender, configuration and pods under
// kube-scheduler 1.20.2 place every pod on the same node as ksched.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <string>
#include <thread>

#include "pkg/api/json.h"
#include "tests/fakes/event_log.h"
#include "tests/fakes/objects.h"
#include "tests/harness/api_helpers.h"
#include "tests/harness/control_plane.h"
#include "tests/harness/process_util.h"

namespace ksched::testing {
namespace {

using namespace std::chrono_literals;
using client::Verb;

bool TestFailed() { return ::testing::Test::HasFailure(); }

constexpr char kNs[] = "extenders";
// The extender's verdicts, by node: b fails, c fails for good, the rest are scored.
const std::vector<std::string> kNodes = {"ext-a", "ext-b", "ext-c", "ext-d", "ext-e"};

class ExtenderIntegrationTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ControlPlane& cp = ControlPlane::Get();
    admin_ = AdminClient().release();
    CreateNamespace(*admin_, kNs);
    for (const std::string& name : kNodes) {
      api::Node n = TestNode(name, *api::Quantity::Parse("4"), *api::Quantity::Parse("16Gi"));
      n.metadata.labels.Set("extender-test", "true");
      Post(*admin_, "/api/v1/nodes", api::EncodeNode(n));
    }
    extender_ = StartExtender(cp.dir() + "/test-extender.log",
                              {"--reject=ext-b", "--unresolvable=ext-c", "--scores=ext-a=2,ext-d=9,ext-e=5",
                               "--kubeconfig=" + cp.kubeconfig()},
                              &extender_url_)
                    .release();
  }
  static void TearDownTestSuite() {
    delete extender_;
    delete admin_;
  }

  static std::unique_ptr<ChildProcess> StartExtender(const std::string& log, std::vector<std::string> args,
                                                     std::string* url) {
    args.insert(args.begin(), KSCHED_TEST_EXTENDER);
    auto child = std::make_unique<ChildProcess>(std::move(args), log, ChildProcess::Options{.print_log_if = TestFailed});
    std::smatch m;
    std::string out;  // m points into it
    EXPECT_TRUE(Eventually(
        [&] {
          out = child->Log();
          return std::regex_search(out, m, std::regex("listening on (127\\.0\\.0\\.1:[0-9]+)"));
        },
        10s));
    *url = "http://" + m[1].str();
    return child;
  }

  // The extender's call counts (GET /stats).
  static std::string Stats() {
    auto out = RunCommand("curl -s --max-time 5 " + extender_url_ + "/stats");
    return out.ok() ? *out : "";
  }
  static int64_t Stat(const std::string& stats, const std::string& key) {
    std::smatch m;
    if (!std::regex_search(stats, m, std::regex("\"" + key + "\":([0-9]+)"))) return -1;
    return std::stoll(m[1].str());
  }

  // The extenders block (same fields in v1 and kube-scheduler 1.20's v1beta1).
  static std::string ExtendersYaml(bool node_cache_capable, bool with_down_extender,
                                   const std::string& managed = "") {
    std::string y = "extenders:\n- urlPrefix: " + extender_url_ +
                    "\n  filterVerb: filter\n  prioritizeVerb: prioritize\n  weight: 5\n  bindVerb: bind\n"
                    "  nodeCacheCapable: " + (node_cache_capable ? "true" : "false") + "\n";
    if (!managed.empty()) y += "  managedResources: [{name: " + managed + ", ignoredByScheduler: true}]\n";
    if (with_down_extender) {
      y += "- urlPrefix: http://127.0.0.1:" + std::to_string(FreePort()) +
           "/down\n  filterVerb: filter\n  prioritizeVerb: prioritize\n  weight: 1\n  ignorable: true\n"
           "  httpTimeout: 2s\n";
    }
    return y;
  }

  std::unique_ptr<ChildProcess> StartKsched(const std::string& name, const std::string& extenders) {
    const std::string dir = ControlPlane::Get().dir();
    const std::string config = dir + "/" + name + ".yaml";
    std::ofstream(config) << "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                             "leaderElection: {leaderElect: false}\nprofiles: [{schedulerName: " << name << "}]\n"
                          << extenders;
    auto child = std::make_unique<ChildProcess>(
        std::vector<std::string>{KSCHED_BINARY, "--config=" + config, "--kubeconfig=" + ControlPlane::Get().kubeconfig(),
                                 "--bind-address=127.0.0.1", "--secure-port=" + std::to_string(FreePort())},
        dir + "/" + name + ".log", ChildProcess::Options{.print_log_if = TestFailed});
    EXPECT_TRUE(child->Started());
    return child;
  }

  // Creates the pods one at a time, each once the one before is bound, and returns
  // where each went ("" for one not bound within the timeout).
  std::vector<std::string> Place(const std::string& scheduler, const std::vector<api::Pod>& pods) {
    std::vector<std::string> where;
    for (api::Pod p : pods) {
      p.spec.scheduler_name = scheduler;
      CreatePod(*admin_, p);
      where.push_back(BoundNode(p.metadata.name, 60s));
      if (where.back().empty()) break;
    }
    return where;
  }

  std::string BoundNode(const std::string& pod, std::chrono::milliseconds timeout) {
    return ksched::testing::BoundNode(*admin_, std::string(kNs) + "/" + pod, timeout);
  }

  void DeletePods(const std::vector<api::Pod>& pods) {
    for (const api::Pod& p : pods) {
      (void)admin_->Do({.verb = Verb::kDelete,
                        .path = std::string("/api/v1/namespaces/") + kNs + "/pods/" + p.metadata.name,
                        .body = R"({"gracePeriodSeconds":0})"});
    }
    EXPECT_TRUE(Eventually(
        [&] {
          auto r = admin_->Do({.path = std::string("/api/v1/namespaces/") + kNs + "/pods"});
          return r.ok() && r->body.find("\"items\":[]") != std::string::npos;
        },
        30s));
  }

  // Pods of 1 CPU on nodes of 4: the extender's scores (d 9, e 5, a 2, times weight 5,
  // times 10) outweigh the plugins', so d fills first, then e.
  static std::vector<api::Pod> OneCpuPods(const std::string& prefix, int n) {
    std::vector<api::Pod> pods;
    for (int i = 0; i < n; ++i) {
      api::Pod p = TestPod(kNs, prefix + std::to_string(i), "", {{"cpu", *api::Quantity::Parse("1")}});
      p.spec.node_selector.Set("extender-test", "true");
      pods.push_back(std::move(p));
    }
    return pods;
  }

  static inline client::ApiClient* admin_ = nullptr;
  static inline ChildProcess* extender_ = nullptr;
  static inline std::string extender_url_;
};

TEST_F(ExtenderIntegrationTest, FilterPrioritizeAndBindThroughTheExtenderBothWays) {
  for (bool cache_capable : {true, false}) {
    SCOPED_TRACE(cache_capable ? "nodeCacheCapable" : "Node objects");
    const std::string before = Stats();
    const std::string name = cache_capable ? "ksched-ext-names" : "ksched-ext-nodes";
    auto ksched = StartKsched(name, ExtendersYaml(cache_capable, /*with_down_extender=*/true));
    auto pods = OneCpuPods(cache_capable ? "n" : "o", 6);
    EXPECT_EQ(Place(name, pods), (std::vector<std::string>{"ext-d", "ext-d", "ext-d", "ext-d", "ext-e", "ext-e"}));
    const std::string after = Stats();
    // Every pod was filtered, scored and bound by the extender (the ignorable one that
    // is down did not hold anything up).
    EXPECT_EQ(Stat(after, "bind") - Stat(before, "bind"), 6) << before << "\n" << after;
    EXPECT_GE(Stat(after, "filter") - Stat(before, "filter"), 6);
    EXPECT_GE(Stat(after, "prioritize") - Stat(before, "prioritize"), 5);
    // Names only when nodeCacheCapable, Node objects otherwise.
    const std::string sent = cache_capable ? "withNames" : "withNodes";
    const std::string not_sent = cache_capable ? "withNodes" : "withNames";
    EXPECT_GE(Stat(after, sent) - Stat(before, sent), 11);
    EXPECT_EQ(Stat(after, not_sent), Stat(before, not_sent));
    ksched.reset();
    DeletePods(pods);
  }
}

TEST_F(ExtenderIntegrationTest, FailedNodesAreNamedInThePodCondition) {
  // Only b and c are for this pod (node affinity by name): the extender rejects both,
  // c for good.
  auto ksched = StartKsched("ksched-ext-fail", ExtendersYaml(true, false));
  api::Pod p = TestPod(kNs, "nowhere", "ksched-ext-fail", {{"cpu", *api::Quantity::Parse("100m")}});
  p.spec.node_selector.Set("extender-test", "true");
  auto& terms = p.spec.affinity.emplace().node_affinity.emplace().required.emplace();
  for (const char* node : {"ext-b", "ext-c"}) {
    api::NodeSelectorTerm term;  // a field selector takes one value a term; the terms are ORed
    term.match_fields.push_back({"metadata.name", api::SelectorOperator::kIn, {node}});
    terms.push_back(term);
  }
  CreatePod(*admin_, p);
  std::string body;
  EXPECT_TRUE(Eventually(
      [&] {
        auto r = admin_->Do({.path = std::string("/api/v1/namespaces/") + kNs + "/pods/nowhere"});
        body = r.ok() ? r->body : "";
        return body.find("rejected by the test extender") != std::string::npos;
      },
      30s))
      << body;
  // NodeAffinity's PreFilter narrowed the search to b and c, so only they are counted
  // (as upstream); the preemption that follows finds no victims.
  EXPECT_NE(body.find("0/5 nodes are available: 1 never fits the test extender, 1 rejected by the test extender. "
                      "preemption: 0/5 nodes are available: 1 No preemption victims found for incoming pod, "
                      "4 Preemption is not helpful for scheduling."),
            std::string::npos)
      << body;
  ksched.reset();
  DeletePods({p});
}

TEST_F(ExtenderIntegrationTest, ManagedResourcesChooseThePodsAndAreLeftToTheExtender) {
  auto ksched = StartKsched("ksched-ext-managed", ExtendersYaml(true, false, "example.com/gpu"));
  const std::string before = Stats();
  // No node has example.com/gpu: NodeResourcesFit ignores it (ignoredByScheduler), and
  // the extender places the pod.
  // (An extended resource needs a limit equal to its request, which EncodePod leaves out.)
  api::Pod gpu = TestPod(kNs, "gpu", "ksched-ext-managed", {});
  Post(*admin_, std::string("/api/v1/namespaces/") + kNs + "/pods",
       R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"gpu","namespace":")" + std::string(kNs) +
           R"("},"spec":{"schedulerName":"ksched-ext-managed","nodeSelector":{"extender-test":"true"},)"
           R"("containers":[{"name":"c","image":"pause","resources":{"requests":{"cpu":"1","example.com/gpu":"1"},)"
           R"("limits":{"example.com/gpu":"1"}}}]}})");
  EXPECT_EQ(BoundNode("gpu", 60s), "ext-d");
  const std::string mid = Stats();
  EXPECT_EQ(Stat(mid, "bind") - Stat(before, "bind"), 1);
  // A pod without it is not the extender's: not filtered, scored nor bound by it.
  api::Pod plain = TestPod(kNs, "plain", "", {{"cpu", *api::Quantity::Parse("1")}});
  plain.spec.node_selector.Set("extender-test", "true");
  auto where = Place("ksched-ext-managed", {plain});
  ASSERT_EQ(where.size(), 1u);
  EXPECT_FALSE(where[0].empty());
  const std::string after = Stats();
  EXPECT_EQ(Stat(after, "filter"), Stat(mid, "filter"));
  EXPECT_EQ(Stat(after, "bind"), Stat(mid, "bind"));
  ksched.reset();
  DeletePods({gpu, plain});
}

// The same extender, configuration and pods under kube-scheduler 1.20.2 (v1beta1 config,
// the same extender fields): every pod lands where ksched put it.
TEST_F(ExtenderIntegrationTest, PlacementsEqualKubeScheduler) {
  auto bin = RunCommand("KSCHED_K8S_BINARIES=kube-scheduler bash " KSCHED_CONTROL_PLANE_SCRIPT " build 2>/dev/null");
  ASSERT_TRUE(bin.ok()) << bin.status().ToString();
  std::string dir = *bin;
  while (!dir.empty() && (dir.back() == '\n' || dir.back() == ' ')) dir.pop_back();
  const std::string kube_scheduler = dir + "/kube-scheduler";
  ASSERT_EQ(::access(kube_scheduler.c_str(), X_OK), 0) << kube_scheduler;

  auto ksched = StartKsched("ksched-side", ExtendersYaml(false, false));
  auto pods = OneCpuPods("k", 7);
  std::vector<std::string> ours = Place("ksched-side", pods);
  ksched.reset();
  DeletePods(pods);

  const std::string cp_dir = ControlPlane::Get().dir();
  const std::string config = cp_dir + "/kube-scheduler-ext.yaml";
  std::ofstream(config) << "apiVersion: kubescheduler.config.k8s.io/v1beta1\nkind: KubeSchedulerConfiguration\n"
                           "clientConnection: {kubeconfig: " << ControlPlane::Get().kubeconfig()
                        << "}\nleaderElection: {leaderElect: false}\nprofiles: [{schedulerName: upstream-side}]\n"
                        << ExtendersYaml(false, false);
  ChildProcess upstream({kube_scheduler, "--config=" + config, "--port=0", "--secure-port=0", "--v=2"},
                        cp_dir + "/kube-scheduler-ext.log", ChildProcess::Options{.print_log_if = TestFailed});
  ASSERT_TRUE(upstream.Started());
  std::vector<std::string> theirs = Place("upstream-side", pods);
  EXPECT_EQ(ours, theirs);
  EXPECT_EQ(ours, (std::vector<std::string>{"ext-d", "ext-d", "ext-d", "ext-d", "ext-e", "ext-e", "ext-e"}));
  DeletePods(pods);
}

}  // namespace
}  // namespace ksched::testing
