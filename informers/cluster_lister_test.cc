// ClusterIndex / ClusterListers: the same answers as tests/fakes' FakeClusterLister
// (upstream helper.DefaultSelector's rules) on the same objects, kept current through
// informer events; PodDisruptionBudgets by namespace; the policy version discovery; and
// the six informers behind ClusterListers.
#include "informers/cluster_lister.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <tuple>

#include "pkg/client/curl_client.h"
#include "tests/fakes/fake_api_client.h"
#include "tests/fakes/fake_api_server.h"
#include "tests/fakes/fake_cluster_lister.h"
#include "tests/fakes/storage_builders.h"

namespace ksched::informers {
namespace {

using namespace std::chrono_literals;
using api::LabelSelector;
using api::SelectorOperator;
using api::StringMap;
using ksched::testing::FakeClusterLister;

api::LeanObjectMeta Meta(const std::string& ns, const std::string& name) {
  api::LeanObjectMeta m;
  m.namespace_ = ns;
  m.name = name;
  return m;
}

api::NamespacePtr MakeNamespace(const std::string& name, StringMap labels) {
  auto n = std::make_shared<api::Namespace>();
  n->metadata.name = name;
  n->metadata.labels = std::move(labels);
  return n;
}

api::ServicePtr MakeService(const std::string& ns, const std::string& name, std::optional<StringMap> selector) {
  auto s = std::make_shared<api::Service>();
  s->metadata = Meta(ns, name);
  s->selector = std::move(selector);
  return s;
}

api::ReplicationControllerPtr MakeRc(const std::string& ns, const std::string& name, StringMap selector) {
  auto rc = std::make_shared<api::ReplicationController>();
  rc->metadata = Meta(ns, name);
  rc->selector = std::move(selector);
  return rc;
}

template <typename T>
std::shared_ptr<const T> MakeWorkload(const std::string& ns, const std::string& name,
                                      std::optional<LabelSelector> selector) {
  auto w = std::make_shared<T>();
  w->metadata = Meta(ns, name);
  w->selector = std::move(selector);
  return w;
}

api::Pod MakePod(const std::string& ns, StringMap labels) {
  api::Pod p;
  p.metadata.namespace_ = ns;
  p.metadata.name = "p";
  p.metadata.labels = std::move(labels);
  return p;
}

// The requirements as a set: AND does not depend on their order.
LabelSelector Normalized(LabelSelector s) {
  auto key = [](const api::LabelSelectorRequirement& r) { return std::tie(r.key, r.op, r.values); };
  std::sort(s.match_expressions.begin(), s.match_expressions.end(),
            [&](const auto& a, const auto& b) { return key(a) < key(b); });
  return s;
}

std::string Describe(const LabelSelector& s) {
  std::string out = "{";
  for (const auto& [k, v] : s.match_labels) out += k + "=" + v + " ";
  for (const auto& r : s.match_expressions) {
    out += r.key + " " + std::string(api::SelectorOperatorName(r.op)) + " (";
    for (const auto& v : r.values) out += v + ",";
    out += ") ";
  }
  return out + "}";
}

// Feeds the same objects to a ClusterIndex and to the reference fake.
struct Both {
  ClusterIndex index;
  FakeClusterLister fake;

  void Namespace(const std::string& name, StringMap labels) {
    index.Put(MakeNamespace(name, labels));
    fake.namespaces[name] = labels;
  }
  void Service(const std::string& ns, const std::string& name, std::optional<StringMap> selector) {
    index.Put(MakeService(ns, name, selector));
    fake.services.push_back({ns, selector.value_or(StringMap{})});
  }
  void Rc(const std::string& ns, const std::string& name, StringMap selector) {
    index.Put(MakeRc(ns, name, selector));
    fake.replication_controllers.push_back({ns, selector});
  }
  void Rs(const std::string& ns, const std::string& name, std::optional<LabelSelector> selector) {
    index.Put(MakeWorkload<api::ReplicaSet>(ns, name, selector));
    // The fake has no "absent": an empty selector selects nothing in both.
    fake.replica_sets.push_back({ns, selector.value_or(LabelSelector{})});
  }
  void Sts(const std::string& ns, const std::string& name, std::optional<LabelSelector> selector) {
    index.Put(MakeWorkload<api::StatefulSet>(ns, name, selector));
    fake.stateful_sets.push_back({ns, selector.value_or(LabelSelector{})});
  }

  // Returns whether anything selects the pod.
  bool ExpectAgree(const api::Pod& pod) const {
    LabelSelector got = index.DefaultSpreadSelector(pod);
    LabelSelector want = fake.DefaultSpreadSelector(pod);
    EXPECT_EQ(Normalized(got), Normalized(want))
        << "pod " << pod.metadata.namespace_ << " " << Describe(LabelSelector{pod.metadata.labels, {}}) << ": got "
        << Describe(got) << ", want " << Describe(want);
    return want != LabelSelector{};
  }
};

LabelSelector Sel(StringMap match_labels, std::vector<api::LabelSelectorRequirement> exprs = {}) {
  return LabelSelector{std::move(match_labels), std::move(exprs)};
}

TEST(ClusterIndexTest, DefaultSpreadSelectorAgreesWithReference) {
  Both b;
  // Services: a matching one, an empty and an absent selector (both select nothing),
  // one in another namespace, one that does not match.
  b.Service("prod", "web", StringMap{{"app", "web"}});
  b.Service("prod", "empty", StringMap{});
  b.Service("prod", "headless", std::nullopt);
  b.Service("dev", "web", StringMap{{"app", "web"}, {"env", "dev"}});
  b.Service("prod", "db", StringMap{{"app", "db"}});
  b.Rc("prod", "legacy", StringMap{{"app", "web"}, {"tier", "fe"}});
  b.Rc("prod", "empty", StringMap{});
  // ReplicaSets / StatefulSets: labels and expressions, empty, absent, invalid (Gt is not
  // allowed in pod label selectors; a bad key).
  b.Rs("prod", "web-1", Sel({{"app", "web"}}, {{"track", SelectorOperator::kNotIn, {"canary"}}}));
  b.Rs("prod", "empty", Sel({}));
  b.Rs("prod", "absent", std::nullopt);
  b.Rs("prod", "gt", Sel({}, {{"rank", SelectorOperator::kGt, {"1"}}}));
  b.Rs("prod", "badkey", Sel({{"bad key!", "x"}}));
  b.Rs("dev", "web-1", Sel({{"app", "web"}}));
  b.Sts("prod", "web", Sel({}, {{"app", SelectorOperator::kIn, {"web", "api"}}, {"tier", SelectorOperator::kExists, {}}}));
  b.Sts("prod", "empty", Sel({}));

  const api::Pod pods[] = {
      MakePod("prod", {{"app", "web"}}),
      MakePod("prod", {{"app", "web"}, {"tier", "fe"}}),
      MakePod("prod", {{"app", "web"}, {"tier", "fe"}, {"track", "canary"}}),
      MakePod("prod", {{"app", "api"}, {"tier", "be"}}),
      MakePod("prod", {{"app", "db"}}),
      MakePod("prod", {{"rank", "5"}}),
      MakePod("prod", {}),  // no labels: selected by nothing
      MakePod("dev", {{"app", "web"}, {"env", "dev"}}),
      MakePod("dev", {{"app", "web"}}),
      MakePod("nowhere", {{"app", "web"}}),
  };
  for (const api::Pod& pod : pods) b.ExpectAgree(pod);

  // Spot checks of the rules themselves.
  LabelSelector web = b.index.DefaultSpreadSelector(pods[1]);
  EXPECT_EQ(web.match_labels, (StringMap{{"app", "web"}, {"tier", "fe"}}));  // Service + RC merged
  EXPECT_EQ(Normalized(Sel({}, web.match_expressions)),
            Normalized(Sel({}, {{"app", SelectorOperator::kIn, {"web"}},
                                {"track", SelectorOperator::kNotIn, {"canary"}},
                                {"app", SelectorOperator::kIn, {"web", "api"}},
                                {"tier", SelectorOperator::kExists, {}}})));
  EXPECT_EQ(b.index.DefaultSpreadSelector(pods[5]), LabelSelector{});  // the Gt ReplicaSet is ignored
  EXPECT_EQ(b.index.DefaultSpreadSelector(pods[6]), LabelSelector{});
}

TEST(ClusterIndexTest, RandomObjectsAgreeWithReference) {
  std::mt19937 rng(42);
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  const std::string namespaces[] = {"a", "b", "c"};
  const std::string keys[] = {"app", "tier", "env"};
  const std::string values[] = {"x", "y", "z"};
  auto random_map = [&](int max) {
    StringMap m;
    for (int i = pick(max + 1); i > 0; --i) m.Set(keys[pick(3)], values[pick(3)]);
    return m;
  };
  auto random_selector = [&]() -> std::optional<LabelSelector> {
    if (pick(8) == 0) return std::nullopt;
    LabelSelector s{random_map(2), {}};
    for (int i = pick(3); i > 0; --i) {
      static constexpr SelectorOperator kOps[] = {SelectorOperator::kIn, SelectorOperator::kNotIn,
                                                  SelectorOperator::kExists, SelectorOperator::kDoesNotExist,
                                                  SelectorOperator::kGt};
      SelectorOperator op = kOps[pick(5)];
      std::vector<std::string> vals;
      if (op == SelectorOperator::kIn || op == SelectorOperator::kNotIn) vals = {values[pick(3)], values[pick(3)]};
      if (op == SelectorOperator::kGt) vals = {"1"};  // invalid for pod selectors
      s.match_expressions.push_back({keys[pick(3)], op, vals});
    }
    return s;
  };
  int selected = 0, pods = 0;
  for (int round = 0; round < 20; ++round) {
    Both b;
    for (int i = 0; i < 12; ++i) {
      const std::string& ns = namespaces[pick(3)];
      const std::string name = "o" + std::to_string(i);
      switch (pick(4)) {
        case 0: b.Service(ns, name, pick(6) == 0 ? std::nullopt : std::optional<StringMap>(random_map(2))); break;
        case 1: b.Rc(ns, name, random_map(2)); break;
        case 2: b.Rs(ns, name, random_selector()); break;
        default: b.Sts(ns, name, random_selector()); break;
      }
    }
    for (int i = 0; i < 30; ++i, ++pods) selected += b.ExpectAgree(MakePod(namespaces[pick(3)], random_map(3)));
  }
  // Both outcomes are well represented.
  EXPECT_GT(selected, pods / 10);
  EXPECT_LT(selected, pods * 4 / 5);
}

TEST(ClusterIndexTest, NamespaceLookups) {
  Both b;
  b.Namespace("team-b", {{"env", "prod"}, {"team", "b"}});
  b.Namespace("team-a", {{"env", "prod"}, {"team", "a"}});
  b.Namespace("scratch", {});
  auto prod = api::LabelSelectorMatcher::Parse(Sel({{"env", "prod"}}));
  ASSERT_TRUE(prod.ok());
  auto everything = api::LabelSelectorMatcher::Parse(Sel({}));
  ASSERT_TRUE(everything.ok());
  EXPECT_EQ(b.index.NamespacesMatching(*prod), (std::vector<std::string>{"team-a", "team-b"}));
  EXPECT_EQ(b.index.NamespacesMatching(*prod), b.fake.NamespacesMatching(*prod));
  EXPECT_EQ(b.index.NamespacesMatching(*everything), (std::vector<std::string>{"scratch", "team-a", "team-b"}));
  EXPECT_EQ(b.index.NamespaceLabels("team-a"), (StringMap{{"env", "prod"}, {"team", "a"}}));
  EXPECT_EQ(b.index.NamespaceLabels("scratch"), StringMap{});
  EXPECT_EQ(b.index.NamespaceLabels("unknown"), std::nullopt);
  EXPECT_EQ(b.index.NamespaceLabels("unknown"), b.fake.NamespaceLabels("unknown"));
}

// Updates replace an object's previous selector; deletes (tombstones too) remove it.
TEST(ClusterIndexTest, FollowsInformerEvents) {
  ClusterIndex index;
  IndexFeeder<api::Namespace> namespaces(index);
  IndexFeeder<api::Service> services(index);
  IndexFeeder<api::ReplicaSet> replica_sets(index);
  IndexFeeder<api::StatefulSet> stateful_sets(index);
  IndexFeeder<api::ReplicationController> controllers(index);

  auto ns_v1 = MakeNamespace("team-a", {{"env", "dev"}});
  auto ns_v2 = MakeNamespace("team-a", {{"env", "prod"}});
  namespaces.OnAdd(ns_v1);
  namespaces.OnUpdate(ns_v1, ns_v2);
  EXPECT_EQ(index.NamespaceLabels("team-a"), (StringMap{{"env", "prod"}}));
  namespaces.OnDelete({ns_v2, /*final_state_unknown=*/true});
  EXPECT_EQ(index.NamespaceLabels("team-a"), std::nullopt);

  const api::Pod pod = MakePod("team-a", {{"app", "web"}, {"v", "2"}});
  auto svc_v1 = MakeService("team-a", "web", StringMap{{"app", "web"}});
  auto svc_v2 = MakeService("team-a", "web", StringMap{{"app", "web"}, {"v", "2"}});
  auto svc_v3 = MakeService("team-a", "web", StringMap{});
  services.OnAdd(svc_v1);
  EXPECT_EQ(index.DefaultSpreadSelector(pod).match_labels, (StringMap{{"app", "web"}}));
  services.OnUpdate(svc_v1, svc_v2);
  EXPECT_EQ(index.DefaultSpreadSelector(pod).match_labels, (StringMap{{"app", "web"}, {"v", "2"}}));
  services.OnUpdate(svc_v2, svc_v3);  // emptied: selects nothing any more
  EXPECT_EQ(index.DefaultSpreadSelector(pod), LabelSelector{});
  services.OnDelete({svc_v3, false});

  auto rs_v1 = MakeWorkload<api::ReplicaSet>("team-a", "web-1", Sel({{"app", "web"}}));
  auto rs_v2 = MakeWorkload<api::ReplicaSet>("team-a", "web-1", Sel({{"app", "other"}}));
  replica_sets.OnAdd(rs_v1);
  EXPECT_EQ(index.DefaultSpreadSelector(pod).match_expressions,
            (std::vector<api::LabelSelectorRequirement>{{"app", SelectorOperator::kIn, {"web"}}}));
  replica_sets.OnUpdate(rs_v1, rs_v2);
  EXPECT_EQ(index.DefaultSpreadSelector(pod), LabelSelector{});
  replica_sets.OnUpdate(rs_v2, rs_v1);
  auto ss = MakeWorkload<api::StatefulSet>("team-a", "db", Sel({{"v", "2"}}));
  stateful_sets.OnAdd(ss);
  auto rc = MakeRc("team-a", "legacy", {{"v", "2"}});
  controllers.OnAdd(rc);
  LabelSelector all = index.DefaultSpreadSelector(pod);
  EXPECT_EQ(all.match_labels, (StringMap{{"v", "2"}}));
  EXPECT_EQ(all.match_expressions, (std::vector<api::LabelSelectorRequirement>{
                                       {"app", SelectorOperator::kIn, {"web"}}, {"v", SelectorOperator::kIn, {"2"}}}));
  replica_sets.OnDelete({rs_v1, /*final_state_unknown=*/true});
  stateful_sets.OnDelete({ss, false});
  controllers.OnDelete({rc, false});
  EXPECT_EQ(index.DefaultSpreadSelector(pod), LabelSelector{});
  // Deleting what was never indexed (or twice) is harmless.
  stateful_sets.OnDelete({ss, false});
  services.OnDelete({MakeService("gone", "x", std::nullopt), true});
  EXPECT_EQ(index.DefaultSpreadSelector(pod), LabelSelector{});
}

// ---- PodDisruptionBudgets ------------------------------------------------------------------

api::PodDisruptionBudgetPtr MakePdb(const std::string& ns, const std::string& name,
                                    std::optional<LabelSelector> selector, int32_t allowed = 0,
                                    std::vector<std::string> disrupted = {}) {
  auto pdb = std::make_shared<api::PodDisruptionBudget>();
  pdb->metadata = Meta(ns, name);
  pdb->selector = std::move(selector);
  pdb->disruptions_allowed = allowed;
  pdb->disrupted_pods = std::move(disrupted);
  return pdb;
}

std::vector<std::string> Names(const std::vector<api::DisruptionBudgetPtr>& budgets) {
  std::vector<std::string> out;
  for (const auto& b : budgets) out.push_back(b->name);
  return out;
}

TEST(ClusterIndexTest, DisruptionBudgetsByNamespace) {
  ClusterIndex index;
  FakeClusterLister fake;
  auto put = [&](const api::PodDisruptionBudgetPtr& pdb) {
    index.Put(pdb);
    fake.budgets.push_back(FakeClusterLister::Budget(pdb->metadata.namespace_, pdb->metadata.name,
                                                     pdb->selector.value_or(LabelSelector{}), pdb->disruptions_allowed,
                                                     {pdb->disrupted_pods.begin(), pdb->disrupted_pods.end()}));
  };
  put(MakePdb("prod", "web", Sel({{"app", "web"}}), 1, {"web-1", "web-0"}));
  put(MakePdb("prod", "api", Sel({}, {{"app", SelectorOperator::kIn, {"api", "gw"}}})));
  // Cover no pod, so not listed: absent, empty, invalid (Gt is not allowed here).
  put(MakePdb("prod", "absent", std::nullopt, 5));
  put(MakePdb("prod", "empty", Sel({}), 5));
  put(MakePdb("prod", "gt", Sel({}, {{"rank", SelectorOperator::kGt, {"1"}}}), 5));
  put(MakePdb("dev", "web", Sel({{"app", "web"}}), 3));

  for (const std::string ns : {"prod", "dev", "nowhere"}) {
    EXPECT_EQ(Names(index.DisruptionBudgets(ns)), Names(fake.DisruptionBudgets(ns))) << ns;
  }
  auto prod = index.DisruptionBudgets("prod");
  ASSERT_EQ(Names(prod), (std::vector<std::string>{"api", "web"}));  // by name
  const api::DisruptionBudgetPtr web_ptr = prod[1];  // held: the index may drop its copy
  const api::DisruptionBudget& web = *web_ptr;
  EXPECT_EQ(web.namespace_, "prod");
  EXPECT_EQ(web.disruptions_allowed, 1);
  EXPECT_EQ(web.disrupted_pods, (std::set<std::string, std::less<>>{"web-0", "web-1"}));
  EXPECT_TRUE(web.selector.Matches({{"app", "web"}, {"v", "2"}}));
  EXPECT_FALSE(web.selector.Matches({{"app", "api"}}));
  EXPECT_TRUE(prod[0]->selector.Matches({{"app", "gw"}}));
  // Built once per object version: every call hands out the same budget.
  EXPECT_EQ(index.DisruptionBudgets("prod")[1], prod[1]);
  EXPECT_EQ(index.DisruptionBudgets("dev").at(0)->disruptions_allowed, 3);
  EXPECT_TRUE(index.DisruptionBudgets("nowhere").empty());

  // Replacing: the new version's status; emptied, the budget is dropped.
  index.Put(MakePdb("prod", "web", Sel({{"app", "web"}}), 0, {}));
  prod = index.DisruptionBudgets("prod");
  ASSERT_EQ(Names(prod), (std::vector<std::string>{"api", "web"}));
  EXPECT_EQ(prod[1]->disruptions_allowed, 0);
  EXPECT_TRUE(prod[1]->disrupted_pods.empty());
  EXPECT_EQ(web.disruptions_allowed, 1);  // a budget already handed out does not change
  index.Put(MakePdb("prod", "api", Sel({})));
  EXPECT_EQ(Names(index.DisruptionBudgets("prod")), std::vector<std::string>{"web"});
  index.Remove(*MakePdb("prod", "web", std::nullopt));
  EXPECT_TRUE(index.DisruptionBudgets("prod").empty());
  EXPECT_EQ(Names(index.DisruptionBudgets("dev")), std::vector<std::string>{"web"});  // untouched
}

TEST(ClusterIndexTest, DisruptionBudgetsFollowInformerEvents) {
  ClusterIndex index;
  IndexFeeder<api::PodDisruptionBudget> budgets(index);
  auto v1 = MakePdb("shop", "web", Sel({{"app", "web"}}), 2);
  auto v2 = MakePdb("shop", "web", Sel({{"app", "web"}}), 1, {"web-0"});
  budgets.OnAdd(v1);
  EXPECT_EQ(index.DisruptionBudgets("shop").at(0)->disruptions_allowed, 2);
  budgets.OnUpdate(v1, v2);
  auto got = index.DisruptionBudgets("shop");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0]->disruptions_allowed, 1);
  EXPECT_EQ(got[0]->disrupted_pods, (std::set<std::string, std::less<>>{"web-0"}));
  budgets.OnDelete({v2, /*final_state_unknown=*/true});
  EXPECT_TRUE(index.DisruptionBudgets("shop").empty());
  budgets.OnDelete({v2, false});  // twice: harmless
  // A budget and a workload of the same namespace and name do not disturb each other.
  budgets.OnAdd(v1);
  index.Put(MakeWorkload<api::ReplicaSet>("shop", "web", Sel({{"app", "web"}})));
  index.Remove(*MakeWorkload<api::ReplicaSet>("shop", "web", std::nullopt));
  EXPECT_EQ(Names(index.DisruptionBudgets("shop")), std::vector<std::string>{"web"});
}

// GET /apis/policy decides the version: v1 when listed, else v1beta1; no budgets without
// the group or either version.
TEST(DisruptionBudgetPathTest, ChoosesVersionByDiscovery) {
  using ksched::testing::FakeApiClient;
  auto group = [](const std::string& versions) -> StatusOr<client::Response> {
    return client::Response{200, R"({"kind":"APIGroup","apiVersion":"v1","name":"policy","versions":[)" + versions + "]}"};
  };
  constexpr char kV1[] = R"({"groupVersion":"policy/v1","version":"v1"})";
  constexpr char kV1beta1[] = R"({"groupVersion":"policy/v1beta1","version":"v1beta1"})";
  const std::string v1 = "/apis/policy/v1/poddisruptionbudgets";
  const std::string v1beta1 = "/apis/policy/v1beta1/poddisruptionbudgets";
  struct Case {
    std::string name;
    StatusOr<client::Response> answer;
    std::optional<std::string> want;
  };
  const Case cases[] = {
      {"1.21-1.24: both", group(std::string(kV1) + "," + kV1beta1), v1},
      {"1.25 on: v1 only", group(kV1), v1},
      {"1.20: v1beta1 only", group(kV1beta1), v1beta1},
      {"neither version", group(R"({"groupVersion":"policy/v2","version":"v2"})"), std::nullopt},
      {"no policy group", FakeApiClient::ApiError(404, "NotFound", "the server could not find the requested resource"),
       std::nullopt},
  };
  for (const Case& tc : cases) {
    FakeApiClient api;
    api.SetHandler([&](const client::Request&) { return tc.answer; });
    EXPECT_EQ(DisruptionBudgetPath(api), tc.want) << tc.name;
    auto sent = api.Requests();
    ASSERT_EQ(sent.size(), 1u) << tc.name;
    EXPECT_EQ(sent[0].verb, client::Verb::kGet);
    EXPECT_EQ(sent[0].path, "/apis/policy");
  }
}

// Any other outcome decides nothing: a 403 while a restarted server's RBAC warms up, a
// 5xx, an unreadable document. Discovery asks again, backing off, until the server
// answers; a guess would be permanent (a 1.20 server answers NotFound for policy/v1 for
// ever, and the budget informer would never sync).
TEST(DisruptionBudgetPathTest, TransientFailuresAreAskedAgainUntilAnswered) {
  using ksched::testing::FakeApiClient;
  std::vector<StatusOr<client::Response>> answers = {
      FakeApiClient::ApiError(403, "Forbidden", "forbidden: User \"system:kube-scheduler\" cannot get path \"/apis/policy\""),
      FakeApiClient::ApiError(503, "ServiceUnavailable", "etcd is down"),
      client::Response{200, "<html>proxy</html>"},
      client::Response{200, R"({"kind":"APIGroup","name":"policy","versions":[{"groupVersion":"policy/v1beta1","version":"v1beta1"}]})"},
  };
  FakeApiClient api;
  size_t next = 0;
  api.SetHandler([&](const client::Request&) { return answers.at(next++); });
  std::vector<std::chrono::milliseconds> waits;
  std::vector<std::string> failures;
  DiscoveryRetry retry{.initial = std::chrono::milliseconds(500),
                       .max = std::chrono::milliseconds(1000),
                       .on_failure = [&](const Status& s) { failures.push_back(s.message()); },
                       .wait = [&](std::chrono::milliseconds d) {
                         waits.push_back(d);
                         return true;
                       }};
  EXPECT_EQ(DisruptionBudgetPath(api, retry), "/apis/policy/v1beta1/poddisruptionbudgets");
  EXPECT_EQ(api.Count(), 4u);
  EXPECT_EQ(waits, (std::vector<std::chrono::milliseconds>{std::chrono::milliseconds(500),
                                                           std::chrono::milliseconds(1000),
                                                           std::chrono::milliseconds(1000)}));
  ASSERT_EQ(failures.size(), 3u);
  EXPECT_NE(failures[0].find("cannot get path"), std::string::npos) << failures[0];
  EXPECT_NE(failures[0].find("/apis/policy"), std::string::npos) << failures[0];

  // Giving up (the process is stopping) watches no budgets.
  FakeApiClient down;
  down.SetHandler([](const client::Request&) -> StatusOr<client::Response> { return Status(StatusCode::kUnavailable, "refused"); });
  EXPECT_EQ(DisruptionBudgetPath(down, {.wait = [](std::chrono::milliseconds) { return false; }}), std::nullopt);
}

// PersistentVolumes by class: a class change moves the volume, a delete drops it, and an
// emptied class disappears.
TEST(VolumeClassIndexTest, FollowsClassChangesAndDeletes) {
  using ksched::testing::PVBuilder;
  VolumeClassIndex index;
  auto names = [&](std::string_view klass) {
    std::vector<std::string> out;
    for (const auto& pv : index.OfClass(klass)) out.push_back(pv->Name());
    return out;
  };
  auto b = PVBuilder("b").Class("fast").Ptr(), a = PVBuilder("a").Class("fast").Ptr();
  index.OnAdd(b);
  index.OnAdd(a);
  index.OnAdd(PVBuilder("c").Class("").Ptr());
  EXPECT_EQ(names("fast"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(names(""), (std::vector<std::string>{"c"}));
  auto b2 = PVBuilder("b").Class("slow").ResourceVersion("2").Ptr();
  index.OnUpdate(b, b2);
  EXPECT_EQ(names("fast"), (std::vector<std::string>{"a"}));
  EXPECT_EQ(names("slow"), (std::vector<std::string>{"b"}));
  EXPECT_EQ(index.OfClass("slow")[0]->metadata.resource_version, "2");
  index.OnDelete({.last_known = a});
  EXPECT_TRUE(names("fast").empty());
  index.OnDelete({.last_known = a});  // twice: harmless
  EXPECT_EQ(names("slow"), (std::vector<std::string>{"b"}));
}

// ---- ClusterListers over a scripted API server -------------------------------------------

std::string List(const std::string& kind, const std::string& items) {
  return R"({"kind":")" + kind + R"(","metadata":{"resourceVersion":"10"},"items":[)" + items + "]}";
}

TEST(ClusterListersTest, ListsEveryResourceAndAnswersFromThem) {
  using ksched::testing::FakeApiServer;
  using ksched::testing::HttpRequest;
  using ksched::testing::ResponseWriter;
  const std::map<std::string, std::string> lists = {
      {"/api/v1/namespaces",
       List("NamespaceList", R"({"metadata":{"name":"shop","resourceVersion":"3","labels":{"env":"prod"}}})")},
      {"/api/v1/services",
       List("ServiceList", R"({"metadata":{"name":"web","namespace":"shop"},"spec":{"selector":{"app":"web"}}})")},
      {"/api/v1/replicationcontrollers", List("ReplicationControllerList", "")},
      {"/apis/apps/v1/replicasets",
       List("ReplicaSetList",
            R"({"metadata":{"name":"web-1","namespace":"shop"},"spec":{"selector":{"matchLabels":{"app":"web"}},)"
            R"("template":{"metadata":{"labels":{"app":"web"}}}}})")},
      {"/apis/apps/v1/statefulsets", List("StatefulSetList", "")},
      // As the 1.20 test apiserver: policy/v1beta1 only.
      {"/apis/policy",
       R"({"kind":"APIGroup","name":"policy","versions":[{"groupVersion":"policy/v1beta1","version":"v1beta1"}]})"},
      {"/apis/policy/v1beta1/poddisruptionbudgets",
       List("PodDisruptionBudgetList",
            R"({"metadata":{"name":"web","namespace":"shop"},"spec":{"selector":{"matchLabels":{"app":"web"}}},)"
            R"("status":{"disruptionsAllowed":1}})")},
      // The storage objects of the volume plugins.
      {"/api/v1/persistentvolumeclaims",
       List("PersistentVolumeClaimList",
            R"({"metadata":{"name":"data","namespace":"shop","resourceVersion":"4"},"spec":{"volumeName":"pv-b"}})")},
      {"/api/v1/persistentvolumes",
       List("PersistentVolumeList", R"({"metadata":{"name":"pv-b"},"spec":{"storageClassName":"local"}},)"
                                    R"({"metadata":{"name":"pv-a"},"spec":{"storageClassName":"local"}},)"
                                    R"({"metadata":{"name":"pv-c"},"spec":{"storageClassName":"other"}})")},
      {"/apis/storage.k8s.io/v1/storageclasses",
       List("StorageClassList", R"({"metadata":{"name":"local"},"provisioner":"p","volumeBindingMode":"WaitForFirstConsumer"})")},
      {"/apis/storage.k8s.io/v1/csinodes",
       List("CSINodeList", R"({"metadata":{"name":"n1"},"spec":{"drivers":[{"name":"d","allocatable":{"count":2}}]}})")},
      {"/apis/storage.k8s.io/v1/csidrivers",
       List("CSIDriverList", R"({"metadata":{"name":"d"},"spec":{"attachRequired":false}})")},
      // resource.k8s.io/v1, found by discovery: DynamicResources' objects.
      {"/apis/resource.k8s.io",
       R"({"kind":"APIGroup","name":"resource.k8s.io","versions":[{"groupVersion":"resource.k8s.io/v1","version":"v1"}]})"},
      {"/apis/resource.k8s.io/v1/deviceclasses",
       List("DeviceClassList",
            R"({"metadata":{"name":"gpu"},"spec":{"selectors":[{"cel":{"expression":"device.driver == \"d\""}}]}})")},
      {"/apis/resource.k8s.io/v1/resourceslices",
       List("ResourceSliceList",
            R"({"metadata":{"name":"n1-d"},"spec":{"driver":"d","nodeName":"n1","pool":{"name":"n1","generation":1,)"
            R"("resourceSliceCount":1},"devices":[{"name":"gpu-0"},{"name":"gpu-1"}]}})")},
      {"/apis/resource.k8s.io/v1/resourceclaims",
       List("ResourceClaimList",
            R"({"metadata":{"name":"c","namespace":"shop","uid":"u1"},"spec":{"devices":{"requests":[{"name":"r",)"
            R"("exactly":{"deviceClassName":"gpu"}}]}},"status":{"allocation":{"devices":{"results":[{"request":"r",)"
            R"("driver":"d","pool":"n1","device":"gpu-1"}]}}}})")},
  };
  FakeApiServer server([&](const HttpRequest& req, ResponseWriter& w) {
    if (req.query.count("watch")) {
      w.StartChunked(200);  // nothing happens: hold the watch open
      server.WaitForStop(30s);
      return;
    }
    auto it = lists.find(req.path);
    if (it == lists.end()) w.Respond(404, R"({"kind":"Status","reason":"NotFound","code":404})");
    else w.Respond(200, it->second);
  });
  client::RestConfig cfg;
  cfg.server = server.url();
  cfg.qps = 0;
  auto client = client::NewCurlApiClient(cfg);
  ASSERT_TRUE(client.ok());
  InformerOptions opts;
  opts.initial_backoff = 10ms;
  opts.max_backoff = 50ms;
  ClusterListers listers(**client, opts);
  EXPECT_FALSE(listers.HasSynced());
  listers.Start();
  ASSERT_TRUE(listers.WaitForSync(10s));
  EXPECT_TRUE(listers.HasSynced());
  EXPECT_EQ(listers.NamespaceLabels("shop"), (StringMap{{"env", "prod"}}));
  LabelSelector sel = listers.DefaultSpreadSelector(MakePod("shop", {{"app", "web"}}));
  EXPECT_EQ(sel.match_labels, (StringMap{{"app", "web"}}));
  EXPECT_EQ(sel.match_expressions,
            (std::vector<api::LabelSelectorRequirement>{{"app", SelectorOperator::kIn, {"web"}}}));
  auto budgets = listers.DisruptionBudgets("shop");
  ASSERT_EQ(budgets.size(), 1u);
  EXPECT_EQ(budgets[0]->name, "web");
  EXPECT_EQ(budgets[0]->disruptions_allowed, 1);
  ASSERT_NE(listers.Claim("shop", "data"), nullptr);
  EXPECT_EQ(listers.Claim("shop", "data")->volume_name, "pv-b");
  EXPECT_EQ(listers.Claim("other", "data"), nullptr);
  ASSERT_NE(listers.Volume("pv-c"), nullptr);
  std::vector<std::string> local;
  for (const auto& pv : listers.VolumesOfClass("local")) local.push_back(pv->Name());
  EXPECT_EQ(local, (std::vector<std::string>{"pv-a", "pv-b"}));  // by name
  EXPECT_TRUE(listers.VolumesOfClass("none").empty());
  ASSERT_NE(listers.StorageClassNamed("local"), nullptr);
  EXPECT_TRUE(listers.StorageClassNamed("local")->WaitForFirstConsumer());
  ASSERT_NE(listers.CSINodeNamed("n1"), nullptr);
  EXPECT_EQ(listers.CSINodeNamed("n1")->drivers.at(0).allocatable_count, 2);
  ASSERT_NE(listers.CSIDriverNamed("d"), nullptr);
  EXPECT_FALSE(listers.CSIDriverNamed("d")->attach_required);
  EXPECT_TRUE(listers.ServesDynamicResources());
  ASSERT_NE(listers.DeviceClassNamed("gpu"), nullptr);
  ASSERT_NE(listers.ResourceClaimNamed("shop", "c"), nullptr);
  auto slices = listers.ResourceSlices();
  ASSERT_NE(slices, nullptr);
  ASSERT_EQ(slices->slices.size(), 1u);
  EXPECT_EQ(slices->slices[0]->devices.size(), 2u);
  EXPECT_TRUE(listers.DeviceAllocated({"d", "n1", "gpu-1"}));
  EXPECT_FALSE(listers.DeviceAllocated({"d", "n1", "gpu-0"}));
  listers.Stop();
  server.Stop();
  std::set<std::string> listed;
  for (const auto& r : server.requests()) {
    if (!r.query.count("watch")) listed.insert(r.path);
  }
  EXPECT_EQ(listed.size(), lists.size());
  for (const auto& [path, body] : lists) EXPECT_TRUE(listed.count(path)) << path;
}

// A server without the policy group: no budget informer, and sync does not wait for one.
TEST(ClusterListersTest, NoPolicyGroupMeansNoBudgets) {
  using ksched::testing::FakeApiServer;
  using ksched::testing::HttpRequest;
  using ksched::testing::ResponseWriter;
  FakeApiServer server([&](const HttpRequest& req, ResponseWriter& w) {
    if (req.query.count("watch")) {
      w.StartChunked(200);
      server.WaitForStop(30s);
      return;
    }
    if (req.path.starts_with("/apis/policy")) {
      w.Respond(404, R"({"kind":"Status","status":"Failure","reason":"NotFound","code":404})");
      return;
    }
    w.Respond(200, List("List", ""));
  });
  client::RestConfig cfg;
  cfg.server = server.url();
  cfg.qps = 0;
  auto client = client::NewCurlApiClient(cfg);
  ASSERT_TRUE(client.ok());
  ClusterListers listers(**client);
  listers.Start();
  ASSERT_TRUE(listers.WaitForSync(10s));
  EXPECT_TRUE(listers.HasSynced());
  EXPECT_TRUE(listers.DisruptionBudgets("default").empty());
  listers.Stop();
  server.Stop();
  for (const auto& r : server.requests()) {
    EXPECT_TRUE(r.path == "/apis/policy" || !r.path.starts_with("/apis/policy")) << r.target;
  }
}

}  // namespace
}  // namespace ksched::informers
