// ClusterListers against a real kube-apiserver + etcd: a labelled namespace and a
// Service, ReplicationController, ReplicaSet and StatefulSet selecting the same pods are
// listed and watched into NamespaceLabels / NamespacesMatching / DefaultSpreadSelector,
// and label changes, selector changes and deletes show up there; a PodDisruptionBudget
// (policy/v1beta1, found by discovery on the 1.20 apiserver) into DisruptionBudgets.
#include <gtest/gtest.h>

#include <set>

#include "informers/cluster_lister.h"
#include "pkg/client/curl_client.h"
#include "pkg/client/rest_config.h"
#include "tests/harness/api_helpers.h"
#include "tests/harness/control_plane.h"
#include "tests/fakes/event_log.h"

namespace ksched::informers {
namespace {

using namespace std::chrono_literals;
using api::LabelSelector;
using api::LabelSelectorRequirement;
using api::SelectorOperator;
using api::StringMap;
using ksched::testing::ControlPlane;

using ksched::testing::AdminClient;

void Post(client::ApiClient& c, const std::string& path, const std::string& body) {
  auto r = c.Do({.verb = client::Verb::kPost, .path = path, .body = body});
  ASSERT_TRUE(r.ok()) << path << ": " << r.status().ToString();
}

void MergePatch(client::ApiClient& c, const std::string& path, const std::string& body) {
  auto r = c.Do({.verb = client::Verb::kPatch, .path = path, .body = body, .content_type = std::string(client::kContentMergePatch)});
  ASSERT_TRUE(r.ok()) << path << ": " << r.status().ToString();
}

// Background propagation: an RC's default is to orphan its pods, which holds the RC
// behind a finalizer until the garbage collector (not running here) removes it.
void Delete(client::ApiClient& c, const std::string& path) {
  auto r = c.Do({.verb = client::Verb::kDelete, .path = path + "?propagationPolicy=Background"});
  ASSERT_TRUE(r.ok()) << path << ": " << r.status().ToString();
}

constexpr char kNs[] = "cl-int";

// A pod template every workload below can use: its labels satisfy all their selectors.
constexpr char kTemplate[] =
    R"({"metadata":{"labels":{"app":"web","tier":"fe"}},"spec":{"containers":[{"name":"c","image":"pause"}]}})";

std::string ServiceJson(const std::string& selector) {
  return R"({"apiVersion":"v1","kind":"Service","metadata":{"name":"web"},"spec":{"selector":)" + selector +
         R"(,"ports":[{"port":80}]}})";
}

bool WaitFor(const std::function<bool()>& pred) { return ksched::testing::Eventually(pred, 30s); }

api::Pod WebPod() {
  api::Pod p;
  p.metadata.namespace_ = kNs;
  p.metadata.name = "web-0";
  p.metadata.labels = {{"app", "web"}, {"tier", "fe"}};
  return p;
}

// Informers that retry within a second, so a test never waits out a long backoff.
InformerOptions FastRetries() {
  InformerOptions opts;
  opts.initial_backoff = 100ms;
  opts.max_backoff = 1s;
  return opts;
}

TEST(ClusterListerIntegrationTest, FollowsNamespacesAndWorkloads) {
  auto c = AdminClient();
  ClusterListers listers(*c, FastRetries());
  listers.Start();
  ASSERT_TRUE(listers.WaitForSync(60s));
  // The control plane's own namespaces are listed.
  EXPECT_TRUE(WaitFor([&] { return listers.NamespaceLabels("kube-system").has_value(); }));

  Post(*c, "/api/v1/namespaces",
       std::string(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")") + kNs +
           R"(","labels":{"team":"shop","env":"test"}}})");
  ASSERT_TRUE(WaitFor([&] { return listers.NamespaceLabels(kNs).has_value(); }));
  auto labels = listers.NamespaceLabels(kNs);
  const std::string* team = labels->Get("team");
  ASSERT_NE(team, nullptr);
  EXPECT_EQ(*team, "shop");
  auto env_test = api::LabelSelectorMatcher::Parse(LabelSelector{{{"env", "test"}}, {}});
  auto env_prod = api::LabelSelectorMatcher::Parse(LabelSelector{{{"env", "prod"}}, {}});
  ASSERT_TRUE(env_test.ok() && env_prod.ok());
  EXPECT_EQ(listers.NamespacesMatching(*env_test), std::vector<std::string>{kNs});

  const std::string ns_path = std::string("/api/v1/namespaces/") + kNs;
  Post(*c, ns_path + "/services", ServiceJson(R"({"app":"web"})"));
  Post(*c, ns_path + "/replicationcontrollers",
       std::string(R"({"apiVersion":"v1","kind":"ReplicationController","metadata":{"name":"legacy"},)"
                   R"("spec":{"replicas":0,"selector":{"app":"web","tier":"fe"},"template":)") +
           kTemplate + "}}");
  const std::string apps_path = std::string("/apis/apps/v1/namespaces/") + kNs;
  Post(*c, apps_path + "/replicasets",
       std::string(R"({"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"web-1"},)"
                   R"("spec":{"replicas":0,"selector":{"matchLabels":{"app":"web"},)"
                   R"("matchExpressions":[{"key":"track","operator":"NotIn","values":["canary"]}]},"template":)") +
           kTemplate + "}}");
  Post(*c, apps_path + "/statefulsets",
       std::string(R"({"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"db"},)"
                   R"("spec":{"replicas":0,"serviceName":"web","selector":{"matchLabels":{"tier":"fe"}},"template":)") +
           kTemplate + "}}");

  const LabelSelector want{
      {{"app", "web"}, {"tier", "fe"}},  // Service + RC
      {{"app", SelectorOperator::kIn, {"web"}},
       {"track", SelectorOperator::kNotIn, {"canary"}},  // ReplicaSet
       {"tier", SelectorOperator::kIn, {"fe"}}}};        // StatefulSet
  EXPECT_TRUE(WaitFor([&] { return listers.DefaultSpreadSelector(WebPod()) == want; }))
      << "got " << listers.DefaultSpreadSelector(WebPod()).match_expressions.size() << " requirements";
  // Other namespaces and pods without labels are selected by nothing.
  api::Pod elsewhere = WebPod();
  elsewhere.metadata.namespace_ = "default";
  EXPECT_EQ(listers.DefaultSpreadSelector(elsewhere), LabelSelector{});
  api::Pod unlabelled = WebPod();
  unlabelled.metadata.labels = {};
  EXPECT_EQ(listers.DefaultSpreadSelector(unlabelled), LabelSelector{});

  // Label and selector changes.
  MergePatch(*c, ns_path, R"({"metadata":{"labels":{"env":"prod"}}})");
  EXPECT_TRUE(WaitFor([&] { return listers.NamespacesMatching(*env_prod) == std::vector<std::string>{kNs}; }));
  EXPECT_TRUE(listers.NamespacesMatching(*env_test).empty());
  MergePatch(*c, ns_path + "/services/web", R"({"spec":{"selector":{"app":"web","v":"2"}}})");
  // Now the Service selects only pods labelled v=2 (web-0 keeps app and tier from the RC).
  api::Pod v2 = WebPod();
  v2.metadata.labels.Set("v", "2");
  EXPECT_TRUE(WaitFor([&] {
    return listers.DefaultSpreadSelector(v2).match_labels == StringMap{{"app", "web"}, {"tier", "fe"}, {"v", "2"}};
  }));
  EXPECT_EQ(listers.DefaultSpreadSelector(WebPod()), want);

  // Deletes.
  Delete(*c, apps_path + "/statefulsets/db");
  Delete(*c, apps_path + "/replicasets/web-1");
  EXPECT_TRUE(WaitFor([&] { return listers.DefaultSpreadSelector(WebPod()).match_expressions.empty(); }));
  EXPECT_EQ(listers.DefaultSpreadSelector(WebPod()).match_labels, (StringMap{{"app", "web"}, {"tier", "fe"}}));
  Delete(*c, ns_path + "/replicationcontrollers/legacy");
  Delete(*c, ns_path + "/services/web");
  EXPECT_TRUE(WaitFor([&] { return listers.DefaultSpreadSelector(WebPod()) == LabelSelector{}; }));
  listers.Stop();
}

// Without kube-controller-manager nobody computes a budget's status: the test writes it
// through the status subresource, as the disruption controller would.
TEST(ClusterListerIntegrationTest, FollowsDisruptionBudgets) {
  auto c = AdminClient();
  const std::string ns = "cl-pdb";
  ASSERT_EQ(DisruptionBudgetPath(*c), "/apis/policy/v1beta1/poddisruptionbudgets");  // 1.20: v1beta1 only
  ClusterListers listers(*c, FastRetries());
  listers.Start();
  ASSERT_TRUE(listers.WaitForSync(60s));

  Post(*c, "/api/v1/namespaces", R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")" + ns + R"("}})");
  const std::string pdbs = "/apis/policy/v1beta1/namespaces/" + ns + "/poddisruptionbudgets";
  Post(*c, pdbs,
       R"({"apiVersion":"policy/v1beta1","kind":"PodDisruptionBudget","metadata":{"name":"web"},)"
       R"("spec":{"minAvailable":1,"selector":{"matchLabels":{"app":"web"}}}})");
  // Covers no pod: never listed.
  Post(*c, pdbs,
       R"({"apiVersion":"policy/v1beta1","kind":"PodDisruptionBudget","metadata":{"name":"all"},)"
       R"("spec":{"maxUnavailable":1,"selector":{}}})");
  ASSERT_TRUE(WaitFor([&] { return listers.DisruptionBudgets(ns).size() == 1; }));
  api::DisruptionBudgetPtr web = listers.DisruptionBudgets(ns)[0];
  EXPECT_EQ(web->name, "web");
  EXPECT_EQ(web->namespace_, ns);
  EXPECT_EQ(web->disruptions_allowed, 0);  // no disruption controller here
  EXPECT_TRUE(web->selector.Matches({{"app", "web"}}));
  EXPECT_FALSE(web->selector.Matches({{"app", "db"}}));
  EXPECT_TRUE(listers.DisruptionBudgets("default").empty());

  MergePatch(*c, pdbs + "/web/status",
             R"({"status":{"disruptionsAllowed":2,"currentHealthy":3,"desiredHealthy":1,"expectedPods":3,)"
             R"("observedGeneration":1,"disruptedPods":{"web-0":"2024-05-01T10:00:00Z"}}})");
  EXPECT_TRUE(WaitFor([&] {
    auto got = listers.DisruptionBudgets(ns);
    return got.size() == 1 && got[0]->disruptions_allowed == 2;
  }));
  EXPECT_EQ(listers.DisruptionBudgets(ns).at(0)->disrupted_pods, (std::set<std::string, std::less<>>{"web-0"}));

  Delete(*c, pdbs + "/web");
  EXPECT_TRUE(WaitFor([&] { return listers.DisruptionBudgets(ns).empty(); }));
  listers.Stop();
}

}  // namespace
}  // namespace ksched::informers
