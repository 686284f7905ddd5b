// The kubelet stand-in against a real kube-apiserver: it finishes graceful deletes of bound
// pods (which would otherwise stay terminating, with no kubelet), leaves unbound pods
// alone, and records each bound pod's removal with its node.
#include "tests/harness/kubelet_standin.h"

#include <gtest/gtest.h>

#include "pkg/client/curl_client.h"
#include "pkg/client/rest_config.h"
#include "pkg/api/json.h"
#include "tests/harness/api_helpers.h"
#include "tests/harness/control_plane.h"
#include "tests/fakes/objects.h"

namespace ksched::testing {
namespace {

using namespace std::chrono_literals;
using client::Verb;

// A pod on `node` ("" for a pending one); the default grace period (30 s) applies.
void CreatePod(client::ApiClient& c, const std::string& ns, const std::string& name, const std::string& node) {
  api::Pod p = TestPod(ns, name, "ksched", {{"cpu", api::Quantity::FromMilli(100)}});
  p.spec.node_name = node;
  auto r = c.Do({.verb = Verb::kPost, .path = "/api/v1/namespaces/" + ns + "/pods", .body = api::EncodePod(p)});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
}

// DELETE as the scheduler deletes a victim: no options, so the pod's grace period applies.
void Delete(client::ApiClient& c, const std::string& ns, const std::string& name, const std::string& body = "") {
  auto r = c.Do({.verb = Verb::kDelete, .path = "/api/v1/namespaces/" + ns + "/pods/" + name, .body = body});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
}

bool Exists(client::ApiClient& c, const std::string& ns, const std::string& name) {
  auto r = c.Do({.path = "/api/v1/namespaces/" + ns + "/pods/" + name});
  EXPECT_TRUE(r.ok() || r.status().code() == StatusCode::kNotFound) << r.status().ToString();
  return r.ok();
}

TEST(KubeletStandinIntegrationTest, FinishesGracefulDeletesOfBoundPodsAndRecordsTheirRemoval) {
  auto c = AdminClient();
  const std::string ns = "standin-finish";
  CreateNamespace(*c, ns);
  KubeletStandin kubelet(*c, {.pods_path = "/api/v1/namespaces/" + ns + "/pods"});
  ASSERT_TRUE(kubelet.Start());
  CreatePod(*c, ns, "victim", "node-a");
  CreatePod(*c, ns, "pending", "");
  CreatePod(*c, ns, "at-once", "node-b");

  const auto before = RealClock().Now();
  // Graceful: only marked by the apiserver; gone long before its 30 s only because the
  // stand-in finished it.
  Delete(*c, ns, "victim");
  ASSERT_TRUE(kubelet.WaitForRemovals(1, 10s));
  EXPECT_FALSE(Exists(*c, ns, "victim"));
  // Unbound pods and grace-0 deletes go at once; only bound pods are recorded.
  Delete(*c, ns, "pending");
  Delete(*c, ns, "at-once", R"({"apiVersion":"v1","kind":"DeleteOptions","gracePeriodSeconds":0})");
  ASSERT_TRUE(kubelet.WaitForRemovals(2, 10s));

  auto removals = kubelet.Removals();
  ASSERT_EQ(removals.size(), 2u);
  EXPECT_EQ(removals[0].key, ns + "/victim");
  EXPECT_EQ(removals[0].node, "node-a");
  EXPECT_GE(removals[0].removed_at, before);
  EXPECT_LE(removals[0].removed_at, RealClock().Now());
  EXPECT_EQ(removals[1].key, ns + "/at-once");
  EXPECT_EQ(removals[1].node, "node-b");
  // The victim's final delete, and maybe one racing the apiserver's own removal of
  // "at-once" (NotFound, not an error).
  EXPECT_GE(kubelet.DeletesSent(), 1u);
  EXPECT_EQ(kubelet.DeleteErrors(), 0u);
}

TEST(KubeletStandinIntegrationTest, FinishesPodsAlreadyTerminatingWhenItStarts) {
  auto c = AdminClient();
  const std::string ns = "standin-start";
  CreateNamespace(*c, ns);
  CreatePod(*c, ns, "stuck", "node-a");
  Delete(*c, ns, "stuck");
  ASSERT_TRUE(Exists(*c, ns, "stuck"));  // terminating, with no kubelet to finish it

  KubeletStandin kubelet(*c, {.pods_path = "/api/v1/namespaces/" + ns + "/pods"});
  ASSERT_TRUE(kubelet.Start());
  ASSERT_TRUE(kubelet.WaitForRemovals(1, 10s));
  EXPECT_FALSE(Exists(*c, ns, "stuck"));
  kubelet.Stop();
  EXPECT_EQ(kubelet.Removals().at(0).key, ns + "/stuck");
}

}  // namespace
}  // namespace ksched::testing
