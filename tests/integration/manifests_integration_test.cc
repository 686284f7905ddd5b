// manifests/ against a real kube-apiserver: every object is accepted by a server-side dry
// run (schema, defaulting, validation and admission, nothing stored), the embedded
// KubeSchedulerConfiguration loads and validates, the pieces agree with each other
// (config path, lease name, ServiceAccount), and rbac.yaml grants exactly what ksched
// calls. A corrupted Deployment is refused, so the dry run is known to bite.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <chrono>
#include <set>
#include <thread>

#include "config/emitter.h"
#include "config/load.h"
#include "config/validate.h"
#include "pkg/client/curl_client.h"
#include "pkg/client/rest_config.h"
#include "tests/harness/api_helpers.h"
#include "tests/harness/control_plane.h"
#include "tests/integration/manifests.h"

namespace ksched::testing {
namespace {

const std::string kManifests = KSCHED_MANIFESTS_DIR;

std::vector<ManifestObject> LoadAll(const std::string& dir) {
  std::vector<ManifestObject> all;
  for (const std::string& file : ManifestFiles(dir)) {
    auto objs = LoadManifestFile(file);
    EXPECT_TRUE(objs.ok()) << objs.status().ToString();
    if (objs.ok()) all.insert(all.end(), objs->begin(), objs->end());
  }
  return all;
}

std::vector<ManifestObject> AllManifests() {
  std::vector<ManifestObject> all = LoadAll(kManifests);
  for (const char* sub : {"/examples", "/kubeadm"}) {
    std::vector<ManifestObject> more = LoadAll(kManifests + sub);
    all.insert(all.end(), more.begin(), more.end());
  }
  return all;
}

const ManifestObject* Find(const std::vector<ManifestObject>& objs, std::string_view kind, std::string_view name) {
  for (const ManifestObject& o : objs) {
    if (o.kind == kind && o.name == name) return &o;
  }
  return nullptr;
}

// Namespaces the objects live in but that no manifest creates (e.g. "monitoring" for the
// Prometheus example) are created for real first, as a cluster would already have them.
void EnsureNamespace(client::ApiClient& c, const std::string& ns) {
  if (c.Do({.path = "/api/v1/namespaces/" + ns}).ok()) return;
  auto r = c.Do({.verb = client::Verb::kPost, .path = "/api/v1/namespaces",
                 .body = R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")" + ns + R"("}})"});
  ASSERT_TRUE(r.ok() || r.status().code() == StatusCode::kAlreadyExists) << r.status().ToString();
}

TEST(ManifestsIntegrationTest, EveryObjectPassesServerSideDryRun) {
  auto c = AdminClient();
  std::vector<ManifestObject> objs = AllManifests();
  std::multiset<std::string> kinds;
  size_t configs = 0;
  for (const ManifestObject& obj : objs) {
    if (!IsApiObject(obj)) {
      // A KubeSchedulerConfiguration example (e.g. examples/demo-config.yaml).
      auto cfg = config::LoadConfigFromString(YAML::Dump(obj.yaml));
      ASSERT_TRUE(cfg.ok()) << obj.Describe() << ": " << cfg.status().ToString();
      EXPECT_TRUE(config::ValidateConfig(*cfg).ok()) << obj.Describe();
      ++configs;
      continue;
    }
    if (!obj.namespace_.empty()) EnsureNamespace(*c, obj.namespace_);
    auto r = CreateObject(*c, obj, /*dry_run=*/true);
    if (!r.ok() && r.status().code() == StatusCode::kAlreadyExists) {
      // Another test applied it for real: validate it as an update instead.
      r = c->Do({.verb = client::Verb::kPut, .path = *CollectionPath(obj) + "/" + obj.name + "?dryRun=All",
                 .body = obj.json});
    }
    ASSERT_TRUE(r.ok()) << obj.Describe() << ": " << r.status().ToString() << "\n" << obj.json;
    EXPECT_TRUE(r->http_code == 201 || r->http_code == 200) << obj.Describe() << ": HTTP " << r->http_code;
    // The server's answer is the object as it would be stored.
    EXPECT_NE(r->body.find("\"name\":\"" + obj.name + "\""), std::string::npos) << obj.Describe();
    kinds.insert(obj.kind);
  }
  // The kinds a deployment needs from manifests/; a file that vanishes fails here.
  for (const char* kind : {"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "ConfigMap",
                           "Deployment", "Pod"}) {
    EXPECT_GE(kinds.count(kind), 1u) << kind;
  }
  EXPECT_GE(configs, 1u);
  // A dry run stores nothing.
  auto get = c->Do({.path = "/apis/apps/v1/namespaces/kube-system/deployments/ksched", .max_retries = 0});
  ASSERT_FALSE(get.ok());
  EXPECT_EQ(get.status().code(), StatusCode::kNotFound);
}

TEST(ManifestsIntegrationTest, CorruptedDeploymentIsRejected) {
  auto c = AdminClient();
  auto objs = LoadManifestFile(kManifests + "/deployment.yaml");
  ASSERT_TRUE(objs.ok()) << objs.status().ToString();
  const ManifestObject* good = Find(*objs, "Deployment", "ksched");
  ASSERT_NE(good, nullptr);
  struct Case {
    std::string name;
    std::function<void(YAML::Node&)> corrupt;
    std::vector<std::string> want_in_message;
  };
  const Case cases[] = {
      {"invalid values (422)",
       [](YAML::Node& n) {
         n["spec"]["replicas"] = -1;
         n["spec"]["template"]["spec"]["containers"][0]["name"] = "Not_A_Label";
       },
       {"spec.replicas", "spec.template.spec.containers[0].name"}},
      // A quoted number stays a string through the YAML -> JSON conversion, as with kubectl.
      {"string where an int belongs (400)",
       [](YAML::Node& n) {
         n["spec"]["replicas"] = "2";
         n["spec"]["replicas"].SetTag("!");
       },
       {"replicas"}},
      {"selector does not match the template's labels (422)",
       [](YAML::Node& n) { n["spec"]["selector"]["matchLabels"]["app.kubernetes.io/name"] = "other"; },
       {"spec.template.metadata.labels", "does not match"}},
  };
  for (const Case& tc : cases) {
    // A fresh object around a deep copy (assigning to a YAML::Node that shares a tree
    // would write through to the original).
    YAML::Node doc = YAML::Clone(good->yaml);
    tc.corrupt(doc);
    auto json = config::YamlToJson(doc);
    ASSERT_TRUE(json.ok()) << tc.name;
    ManifestObject bad;
    bad.file = good->file;
    bad.api_version = good->api_version;
    bad.kind = good->kind;
    bad.name = good->name;
    bad.namespace_ = good->namespace_;
    bad.json = *json;
    auto r = CreateObject(*c, bad, /*dry_run=*/true);
    ASSERT_FALSE(r.ok()) << tc.name << ": accepted\n" << bad.json;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << tc.name << ": " << r.status().ToString();
    for (const std::string& want : tc.want_in_message) {
      EXPECT_NE(r.status().message().find(want), std::string::npos) << tc.name << ": " << r.status().message();
    }
  }
}

// The Deployment, ConfigMap and RBAC name the same things.
TEST(ManifestsIntegrationTest, PiecesAgree) {
  std::vector<ManifestObject> objs = LoadAll(kManifests);
  const ManifestObject* cm = Find(objs, "ConfigMap", "ksched-config");
  const ManifestObject* deploy = Find(objs, "Deployment", "ksched");
  const ManifestObject* sa = Find(objs, "ServiceAccount", "ksched");
  const ManifestObject* role = Find(objs, "Role", "ksched-leader-election");
  ASSERT_TRUE(cm && deploy && sa && role);

  // The embedded configuration loads and validates, names the profile, and its lease is
  // the one the Role lets ksched update.
  auto cfg = config::LoadConfigFromString(cm->yaml["data"]["config.yaml"].as<std::string>());
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  ASSERT_TRUE(config::ValidateConfig(*cfg).ok());
  ASSERT_EQ(cfg->profiles.size(), 1u);
  EXPECT_EQ(cfg->profiles[0].scheduler_name, "ksched");
  EXPECT_TRUE(cfg->leader_election.leader_elect);
  EXPECT_EQ(cfg->leader_election.resource_namespace, role->namespace_);
  bool lease_rule = false;
  for (const auto& rule : role->yaml["rules"]) {
    if (!rule["resourceNames"]) continue;
    for (const auto& n : rule["resourceNames"]) lease_rule = lease_rule || n.as<std::string>() == cfg->leader_election.resource_name;
  }
  EXPECT_TRUE(lease_rule) << "rbac.yaml's lease rule does not name " << cfg->leader_election.resource_name;

  // The Deployment runs as that ServiceAccount and reads the ConfigMap at --config.
  YAML::Node pod = deploy->yaml["spec"]["template"]["spec"];
  EXPECT_EQ(pod["serviceAccountName"].as<std::string>(), sa->name);
  EXPECT_EQ(deploy->namespace_, sa->namespace_);
  EXPECT_EQ(deploy->namespace_, cm->namespace_);
  EXPECT_GE(deploy->yaml["spec"]["replicas"].as<int>(), 2);  // HA needs leader election on
  std::string config_path;
  for (const auto& arg : pod["containers"][0]["args"]) {
    std::string a = arg.as<std::string>();
    if (a.rfind("--config=", 0) == 0) config_path = a.substr(9);
  }
  std::string config_volume;
  for (const auto& v : pod["volumes"]) {
    if (v["configMap"] && v["configMap"]["name"].as<std::string>() == cm->name) config_volume = v["name"].as<std::string>();
  }
  ASSERT_FALSE(config_volume.empty());
  std::string mount_path;
  for (const auto& m : pod["containers"][0]["volumeMounts"]) {
    if (m["name"].as<std::string>() == config_volume) mount_path = m["mountPath"].as<std::string>();
  }
  EXPECT_EQ(config_path, mount_path + "/config.yaml");
}

// Whether `user` (with `groups`) may do something, per a SubjectAccessReview as admin.
bool Allowed(client::ApiClient& c, const std::string& user, const std::string& groups_json,
             const std::string& attributes_json) {
  auto r = c.Do({.verb = client::Verb::kPost, .path = "/apis/authorization.k8s.io/v1/subjectaccessreviews",
                 .body = R"({"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"user":")" +
                         user + R"(","groups":)" + groups_json + "," + attributes_json + "}}"});
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return false;
  simdjson::padded_string text(r->body);
  simdjson::ondemand::parser parser;
  auto doc = parser.iterate(text);
  bool allowed = false;
  EXPECT_EQ(doc["status"]["allowed"].get(allowed), simdjson::SUCCESS) << r->body;
  return allowed;
}

// Allowed(), asked again for up to 5 s: the API server's RBAC authorizer learns of new
// roles and bindings through its own informers, a moment after they are created.
bool AllowedSoon(client::ApiClient& c, const std::string& user, const std::string& groups_json,
                 const std::string& attributes_json) {
  for (int i = 0; i < 50; ++i) {
    if (Allowed(c, user, groups_json, attributes_json)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

std::string Resource(std::string_view ns, std::string_view group, std::string_view resource,
                     std::string_view subresource, std::string_view verb, std::string_view name = "") {
  return R"("resourceAttributes":{"namespace":")" + std::string(ns) + R"(","group":")" + std::string(group) +
         R"(","resource":")" + std::string(resource) + R"(","subresource":")" + std::string(subresource) +
         R"(","verb":")" + std::string(verb) + R"(","name":")" + std::string(name) + R"("})";
}

// rbac.yaml grants what ksched calls (informers, binding, status patches, preemption's
// deletes, volume binding's writes, events, its own lease, token/access reviews for /metrics) and nothing around it.
TEST(ManifestsIntegrationTest, RbacGrantsExactlyWhatKschedCalls) {
  auto c = AdminClient();
  ASSERT_TRUE(ApplyManifestFile(*c, kManifests + "/rbac.yaml").ok());
  struct Case {
    std::string attributes;
    bool want;
  };
  const Case cases[] = {
      {Resource("", "", "pods", "", "list"), true},
      {Resource("", "", "pods", "", "watch"), true},
      {Resource("", "", "nodes", "", "watch"), true},
      {Resource("", "", "namespaces", "", "list"), true},
      {Resource("", "", "namespaces", "", "watch"), true},
      {Resource("", "", "services", "", "list"), true},
      {Resource("", "", "services", "", "watch"), true},
      {Resource("", "", "replicationcontrollers", "", "list"), true},
      {Resource("", "", "replicationcontrollers", "", "watch"), true},
      {Resource("", "apps", "replicasets", "", "list"), true},
      {Resource("", "apps", "replicasets", "", "watch"), true},
      {Resource("", "apps", "statefulsets", "", "list"), true},
      {Resource("", "apps", "statefulsets", "", "watch"), true},
      {Resource("", "policy", "poddisruptionbudgets", "", "list"), true},
      {Resource("", "policy", "poddisruptionbudgets", "", "watch"), true},
      {Resource("team-a", "", "pods", "", "delete"), true},
      {Resource("team-a", "", "pods", "binding", "create"), true},
      {Resource("team-a", "", "pods", "status", "patch"), true},
      {Resource("team-a", "events.k8s.io", "events", "", "create"), true},
      {Resource("team-a", "", "events", "", "patch"), true},
      {Resource("kube-system", "coordination.k8s.io", "leases", "", "create"), true},
      {Resource("kube-system", "coordination.k8s.io", "leases", "", "get", "ksched"), true},
      {Resource("kube-system", "coordination.k8s.io", "leases", "", "update", "ksched"), true},
      {Resource("", "", "persistentvolumes", "", "watch"), true},
      {Resource("", "", "persistentvolumes", "", "patch"), true},
      {Resource("team-a", "", "persistentvolumeclaims", "", "list"), true},
      {Resource("team-a", "", "persistentvolumeclaims", "", "patch"), true},
      {Resource("", "storage.k8s.io", "storageclasses", "", "watch"), true},
      {Resource("", "storage.k8s.io", "csinodes", "", "list"), true},
      {Resource("", "storage.k8s.io", "csidrivers", "", "watch"), true},
      {Resource("", "authentication.k8s.io", "tokenreviews", "", "create"), true},
      {Resource("", "authorization.k8s.io", "subjectaccessreviews", "", "create"), true},
      // Not needed, so not granted.
      {Resource("kube-system", "coordination.k8s.io", "leases", "", "update", "kube-scheduler"), false},
      {Resource("default", "coordination.k8s.io", "leases", "", "create"), false},
      {Resource("", "", "nodes", "", "delete"), false},
      {Resource("team-a", "policy", "poddisruptionbudgets", "", "update"), false},
      {Resource("team-a", "policy", "poddisruptionbudgets", "status", "update"), false},
      {Resource("team-a", "", "pods", "eviction", "create"), false},
      {Resource("team-a", "", "pods", "", "update"), false},
      {Resource("", "", "nodes", "", "update"), false},
      {Resource("team-a", "", "secrets", "", "get"), false},
      {Resource("team-a", "", "services", "", "update"), false},
      {Resource("", "", "namespaces", "", "delete"), false},
      {Resource("team-a", "apps", "replicasets", "", "patch"), false},
      {Resource("team-a", "apps", "deployments", "", "list"), false},
      {Resource("team-a", "apps", "daemonsets", "", "watch"), false},
      {Resource("", "", "persistentvolumes", "", "delete"), false},
      {Resource("team-a", "", "persistentvolumeclaims", "", "create"), false},
      {Resource("", "storage.k8s.io", "storageclasses", "", "update"), false},
      {Resource("", "storage.k8s.io", "volumeattachments", "", "create"), false},
      {R"("nonResourceAttributes":{"path":"/metrics","verb":"get"})", false},
  };
  struct Subject {
    std::string user, groups;
  };
  const Subject subjects[] = {
      {"ksched", "[]"},  // the test control plane's user
      {"system:serviceaccount:kube-system:ksched", R"(["system:serviceaccounts","system:serviceaccounts:kube-system"])"},
  };
  // Grants first (waiting for the authorizer to see them), then the denials, which would
  // pass vacuously before the grants are in.
  for (bool want : {true, false}) {
    for (const Subject& s : subjects) {
      for (const Case& tc : cases) {
        if (tc.want != want) continue;
        EXPECT_EQ(want ? AllowedSoon(*c, s.user, s.groups, tc.attributes) : Allowed(*c, s.user, s.groups, tc.attributes),
                  want)
            << s.user << " " << tc.attributes;
      }
    }
  }
}

// The Prometheus example's ClusterRole lets its ServiceAccount get /metrics (what ksched's
// SubjectAccessReview asks), and its scrape job is valid YAML naming the secure port.
TEST(ManifestsIntegrationTest, PrometheusExampleGrantsMetrics) {
  auto c = AdminClient();
  std::string path = kManifests + "/examples/prometheus-scrape.yaml";
  auto objs = LoadManifestFile(path);
  ASSERT_TRUE(objs.ok()) << objs.status().ToString();
  const ManifestObject* binding = Find(*objs, "ClusterRoleBinding", "ksched-metrics-reader");
  const ManifestObject* cm = Find(*objs, "ConfigMap", "prometheus-ksched-scrape");
  ASSERT_TRUE(binding && cm);
  EnsureNamespace(*c, cm->namespace_);
  ASSERT_TRUE(ApplyManifestFile(*c, path).ok());
  YAML::Node subject = binding->yaml["subjects"][0];
  std::string ns = subject["namespace"].as<std::string>();
  std::string user = "system:serviceaccount:" + ns + ":" + subject["name"].as<std::string>();
  std::string groups = R"(["system:serviceaccounts","system:serviceaccounts:)" + ns + R"("])";
  EXPECT_TRUE(AllowedSoon(*c, user, groups, R"("nonResourceAttributes":{"path":"/metrics","verb":"get"})"));
  EXPECT_FALSE(Allowed(*c, user, groups, R"("nonResourceAttributes":{"path":"/configz","verb":"get"})"));

  YAML::Node prom = YAML::Load(cm->yaml["data"]["prometheus.yml"].as<std::string>());
  YAML::Node job = prom["scrape_configs"][0];
  EXPECT_EQ(job["job_name"].as<std::string>(), "ksched");
  EXPECT_EQ(job["scheme"].as<std::string>(), "https");
  EXPECT_NE(YAML::Dump(job["relabel_configs"]).find("10259"), std::string::npos);
}

}  // namespace
}  // namespace ksched::testing
