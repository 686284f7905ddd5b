// The same clusters through the live scheduler on a real kube-apiserver and through
// `ksched simulate --from-cluster` (the binary, reading that API server): for every pod,
// in order, the same FailedScheduling message or the same node (up to a tie between
// equally scored nodes, broken at random by both). Random clusters
// (tests/fakes/random_cluster.h): resources, zones, taints and tolerations, node
// affinity, images, labels, pod (anti-)affinity and spread constraints. Simulate also
// writes nothing.
#include <gtest/gtest.h>
#include <simdjson.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "pkg/api/json.h"
#include "tests/fakes/random_cluster.h"
#include "tests/harness/process_util.h"
#include "tests/harness/scheduler_harness.h"

namespace ksched::simulate {
namespace {

using namespace std::chrono_literals;
using ksched::testing::AdminClient;
using ksched::testing::Eventually;
using ksched::testing::RandomCluster;

struct Outcome {
  std::string node;  // "" when unschedulable
  std::string reason;
  std::string explain;  // simulate's verdict and scores, for the failure message
  bool operator==(const Outcome& o) const { return node == o.node && reason == o.reason; }
};

std::ostream& operator<<(std::ostream& os, const Outcome& o) {
  return os << "{node: \"" << o.node << "\", reason: \"" << o.reason << "\"}";
}

// What `ksched simulate --from-cluster --pods FILE -o json` says of each pod.
std::vector<Outcome> Simulated(const std::string& pods_file, uint64_t seed, const std::string& config_file) {
  const auto& cp = ksched::testing::ControlPlane::Get();
  auto out = ksched::testing::RunCommand(std::string(KSCHED_BINARY) + " simulate --from-cluster --kubeconfig " +
                                         cp.kubeconfig() + " --pods " + pods_file + " --config " + config_file +
                                         " --seed " + std::to_string(seed) + " --explain -o json");
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  std::vector<Outcome> got;
  if (!out.ok()) return got;
  simdjson::dom::parser parser;
  auto doc = parser.parse(*out);
  EXPECT_FALSE(doc.error()) << *out;
  if (doc.error()) return got;
  for (simdjson::dom::element p : doc.value()["pods"].get_array()) {
    Outcome o;
    if (!p["node"].is_null()) o.node = std::string(std::string_view(p["node"]));
    o.reason = std::string(std::string_view(p["reason"]));
    if (auto e = p["explain"]; !e.error()) o.explain = simdjson::minify(e.value());
    got.push_back(o);
  }
  return got;
}

// The live scheduler's outcome for one pod: bound, or unschedulable (then deleted, as
// simulate withdraws it, so it never takes a node out of turn).
Outcome Live(client::ApiClient& c, ksched::testing::SchedulerHarness& h, const api::Pod& pod) {
  ksched::testing::CreatePod(c, pod);
  Outcome o;
  if (::testing::Test::HasFatalFailure()) return o;
  const std::string key = pod.Key();
  EXPECT_TRUE(Eventually(
      [&] {
        api::PodPtr p = h.pods().Get(key);
        if (!p) return false;
        if (p->IsAssigned()) {
          o.node = p->spec.node_name;
          return true;
        }
        const api::PodCondition* cond = p->FindCondition("PodScheduled");
        if (cond == nullptr || cond->status != "False") return false;
        o.reason = cond->message;
        return true;
      },
      30s))
      << key << " neither bound nor unschedulable";
  if (explain::DecisionLog* log = h.scheduler().decisions())
    o.explain = log->PodJson(pod.metadata.namespace_, pod.metadata.name).value_or("");
  if (o.node.empty()) {
    auto r = c.Do({.verb = client::Verb::kDelete,
                   .path = "/api/v1/namespaces/" + pod.metadata.namespace_ + "/pods/" + pod.metadata.name,
                   .body = R"({"apiVersion":"v1","kind":"DeleteOptions","gracePeriodSeconds":0})"});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_TRUE(Eventually([&] { return h.pods().Get(key) == nullptr; }, 10s));
    // The scheduler has dropped it too before the next pod comes.
    EXPECT_TRUE(Eventually([&] { return !h.scheduler().queue().QueuedPod(key); }, 10s));
  }
  return o;
}

// Whether simulate's verdict gave `node` the same total score as the node it chose:
// a tie, which kube-scheduler (and so ksched) breaks at random among the tied nodes in
// the order its informer delivered them, and the API server's watch cache lists them in
// no fixed order.
bool TiedWithTheChoice(const std::string& explain, const std::string& node) {
  simdjson::dom::parser parser;
  auto doc = parser.parse(explain);
  if (doc.error()) return false;
  auto top = doc.value()["scheduled"]["topNodes"].get_array();
  if (top.error() || top.value().size() == 0) return false;
  const int64_t best = int64_t(top.value().at(0)["score"]);
  bool all_tied = true;
  for (simdjson::dom::element n : top.value()) {
    const bool tied = int64_t(n["score"]) == best;
    if (std::string_view(n["node"]) == node) return tied;
    all_tied = all_tied && tied;
  }
  return all_tied;  // more tied nodes than the verdict lists
}

TEST(SimulateIntegrationTest, SimulateFromTheClusterPlacesPodsAsTheLiveSchedulerDoes) {
  auto c = AdminClient();
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("ksched-simulate-eq-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string config = (dir / "config.yaml").string();
  std::ofstream(config) << "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                           "profiles:\n- schedulerName: ksched\n";
  int placed = 0, unschedulable = 0, ties = 0;
  for (uint32_t seed : {11u, 12u, 13u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const std::string group = "eq" + std::to_string(seed);
    ksched::testing::CreateNamespace(*c, group);
    RandomCluster r(seed);
    api::StringMap group_label;
    group_label.Set("sim-group", group);
    std::vector<api::NodePtr> nodes = r.Nodes(8, {.prefix = group + "-node-", .labels = group_label});
    for (const api::NodePtr& n : nodes) {
      ASSERT_NO_FATAL_FAILURE(ksched::testing::Post(*c, "/api/v1/nodes", api::EncodeNode(*n)));
      for (const api::PodPtr& p : r.BoundPods(*n, {.prefix = group + "-bound-", .namespaces = {group}})) {
        ASSERT_NO_FATAL_FAILURE(ksched::testing::CreatePod(*c, *p));
      }
    }
    // Extended resources must be requested with equal limits; the generator's GPU pods
    // have requests only, so the pods here ask for cpu and memory. And fields the 1.20
    // API server would drop (but simulate, reading the file, would keep) are left out.
    const RandomCluster::PodOptions options{.prefix = group + "-p",
                                            .namespaces = {group},
                                            .scheduler_name = "ksched",
                                            .node_selector = group_label,
                                            .gpus = false,
                                            .labels = true,
                                            .pod_affinity = true,
                                            .spread = true,
                                            .newer_api_fields = false};
    // One pod at a time: simulate reads the cluster as the live scheduler has left it
    // and says where the pod goes; then the live scheduler places it.
    ksched::testing::SchedulerHarness h({"ksched"}, nullptr, nullptr, seed);
    auto versions = [&] {
      std::map<std::string, std::string> out;
      auto l = api::DecodePodList(c->Do({.path = "/api/v1/namespaces/" + group + "/pods"})->body);
      EXPECT_TRUE(l.ok());
      for (const api::PodPtr& p : l->items) out[p->Key()] = p->metadata.resource_version;
      return out;
    };
    for (int i = 0; i < 24; ++i) {
      api::Pod pod = *r.Pod(i, options);
      pod.metadata.uid.clear();  // the API server gives each its own
      const std::string pods_file = (dir / (group + "-pod.json")).string();
      std::ofstream(pods_file) << api::EncodePod(pod);
      const std::map<std::string, std::string> before = versions();
      std::vector<Outcome> simulated = Simulated(pods_file, seed, config);
      EXPECT_EQ(versions(), before) << "simulate --from-cluster changed the cluster";
      ASSERT_EQ(simulated.size(), 1u);
      Outcome live = Live(*c, h, pod);
      ASSERT_FALSE(HasFatalFailure());
      const bool tie = !live.node.empty() && !simulated[0].node.empty() && live.node != simulated[0].node &&
                       TiedWithTheChoice(simulated[0].explain, live.node);
      if (!tie) {
        EXPECT_EQ(simulated[0], live) << pod.Key() << "\nsimulate explains: " << simulated[0].explain
                                      << "\nthe live scheduler explains: " << live.explain;
      }
      (live.node.empty() ? unschedulable : placed)++;
      ties += tie;
    }
  }
  // The clusters exercised both outcomes.
  EXPECT_GT(placed, 30);
  EXPECT_GT(unschedulable, 0);
  EXPECT_LT(ties, placed / 4) << "most placements were ties: the comparison says little";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ksched::simulate
