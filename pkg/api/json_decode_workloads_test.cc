#include <gtest/gtest.h>

#include "pkg/api/json.h"

namespace ksched::api {
namespace {

// A ReplicaSet as the API server sends it: the pod template, status and managedFields
// are skipped; only metadata and spec.selector are kept.
constexpr std::string_view kReplicaSet = R"({
  "apiVersion": "apps/v1",
  "kind": "ReplicaSet",
  "metadata": {
    "labels": {"app": "web", "pod-template-hash": "7d4b9c8f6d"},
    "managedFields": [{"manager": "kube-controller-manager", "fieldsV1": {"f:spec": {}}}],
    "name": "web-7d4b9c8f6d",
    "namespace": "prod",
    "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "d-1", "controller": true}],
    "resourceVersion": "4711",
    "uid": "1f9c2b3e-0000-4000-8000-000000000001"
  },
  "spec": {
    "replicas": 3,
    "selector": {
      "matchLabels": {"app": "web", "pod-template-hash": "7d4b9c8f6d"},
      "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["batch"]}]
    },
    "template": {
      "metadata": {"labels": {"app": "web"}},
      "spec": {"containers": [{"name": "web", "image": "nginx", "resources": {"requests": {"cpu": "100m"}}}]}
    }
  },
  "status": {"replicas": 3, "readyReplicas": 3}
})";

TEST(JsonDecodeWorkloadsTest, ReplicaSetKeepsMetadataAndSelectorOnly) {
  JsonParser parser;
  auto rs = DecodeReplicaSet(parser, kReplicaSet);
  ASSERT_TRUE(rs.ok()) << rs.status().ToString();
  EXPECT_EQ((*rs)->metadata.name, "web-7d4b9c8f6d");
  EXPECT_EQ((*rs)->metadata.namespace_, "prod");
  EXPECT_EQ((*rs)->metadata.uid, "1f9c2b3e-0000-4000-8000-000000000001");
  EXPECT_EQ((*rs)->metadata.resource_version, "4711");
  EXPECT_TRUE((*rs)->metadata.labels.empty());  // not read by any lookup
  ASSERT_TRUE((*rs)->selector.has_value());
  LabelSelector want;
  want.match_labels = {{"app", "web"}, {"pod-template-hash", "7d4b9c8f6d"}};
  want.match_expressions = {{"tier", SelectorOperator::kNotIn, {"batch"}}};
  EXPECT_EQ(*(*rs)->selector, want);
}

TEST(JsonDecodeWorkloadsTest, NamespaceKeepsLabels) {
  JsonParser parser;
  auto ns = DecodeNamespace(parser, R"({"kind":"Namespace","metadata":{"name":"team-a","uid":"u1",
      "resourceVersion":"9","labels":{"env":"prod","kubernetes.io/metadata.name":"team-a"}},
      "spec":{"finalizers":["kubernetes"]},"status":{"phase":"Active"}})");
  ASSERT_TRUE(ns.ok()) << ns.status().ToString();
  EXPECT_EQ((*ns)->Name(), "team-a");
  EXPECT_EQ((*ns)->metadata.resource_version, "9");
  EXPECT_EQ((*ns)->metadata.labels, (StringMap{{"env", "prod"}, {"kubernetes.io/metadata.name", "team-a"}}));
  EXPECT_TRUE((*ns)->metadata.uid.empty());
  EXPECT_TRUE((*ns)->metadata.namespace_.empty());
}

TEST(JsonDecodeWorkloadsTest, SelectorsAbsentNullAndEmpty) {
  JsonParser parser;
  struct Case {
    std::string json;
    std::optional<StringMap> want;
  };
  const Case service_cases[] = {
      {R"({"metadata":{"name":"s","namespace":"a"},"spec":{"ports":[{"port":80}]}})", std::nullopt},
      {R"({"metadata":{"name":"s","namespace":"a"},"spec":{"selector":null}})", std::nullopt},
      {R"({"metadata":{"name":"s","namespace":"a"},"spec":{"selector":{}}})", StringMap{}},
      {R"({"metadata":{"name":"s","namespace":"a"},"spec":{"selector":{"app":"web"}}})", StringMap{{"app", "web"}}},
  };
  for (const Case& tc : service_cases) {
    auto svc = DecodeService(parser, tc.json);
    ASSERT_TRUE(svc.ok()) << tc.json << ": " << svc.status().ToString();
    EXPECT_EQ((*svc)->selector, tc.want) << tc.json;
    EXPECT_EQ((*svc)->metadata.namespace_, "a");
  }

  auto rc = DecodeReplicationController(parser, R"({"metadata":{"name":"r","namespace":"a"},
      "spec":{"replicas":1,"selector":{"app":"db"},"template":{"metadata":{"labels":{"app":"db"}}}}})");
  ASSERT_TRUE(rc.ok()) << rc.status().ToString();
  EXPECT_EQ((*rc)->selector, (StringMap{{"app", "db"}}));

  auto ss = DecodeStatefulSet(parser, R"({"metadata":{"name":"s","namespace":"a"},"spec":{"serviceName":"x"}})");
  ASSERT_TRUE(ss.ok()) << ss.status().ToString();
  EXPECT_FALSE((*ss)->selector.has_value());
  ss = DecodeStatefulSet(parser, R"({"metadata":{"name":"s","namespace":"a"},"spec":{"selector":{}}})");
  ASSERT_TRUE(ss.ok()) << ss.status().ToString();
  ASSERT_TRUE((*ss)->selector.has_value());
  EXPECT_EQ(*(*ss)->selector, LabelSelector{});
}

TEST(JsonDecodeWorkloadsTest, ErrorsNameObjectAndField) {
  JsonParser parser;
  struct Case {
    std::string json;
    std::string want;
  };
  const Case cases[] = {
      {R"({"metadata":{"name":"web","namespace":"prod"},"spec":{"selector":["app"]}})",
       R"(statefulset "prod/web": spec.selector: expected object, got array)"},
  };
  for (const Case& tc : cases) {
    auto ss = DecodeStatefulSet(parser, tc.json);
    ASSERT_FALSE(ss.ok());
    EXPECT_EQ(ss.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(ss.status().message(), tc.want);
  }
  auto svc = DecodeService(parser, R"({"metadata":{"name":"s","namespace":"a"},"spec":{"selector":{"app":1}}})");
  ASSERT_FALSE(svc.ok());
  EXPECT_EQ(svc.status().message(), R"(service "a/s": spec.selector.app: expected string, got number)");
  auto ns = DecodeNamespace(parser, R"({"metadata":{"name":"n","labels":[]}})");
  ASSERT_FALSE(ns.ok());
  EXPECT_EQ(ns.status().message(), R"(namespace "n": metadata.labels: expected object, got array)");
}

TEST(JsonDecodeWorkloadsTest, ListsAndWatchEvents) {
  JsonParser parser;
  auto list = DecodeServiceList(parser, R"({"kind":"ServiceList","metadata":{"resourceVersion":"77","continue":"c1"},
      "items":[{"metadata":{"name":"a","namespace":"x"},"spec":{"selector":{"app":"a"}}},
               {"metadata":{"name":"b","namespace":"x"},"spec":{"type":"ExternalName"}}]})");
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  EXPECT_EQ(list->resource_version, "77");
  EXPECT_EQ(list->continue_token, "c1");
  ASSERT_EQ(list->items.size(), 2u);
  EXPECT_EQ(list->items[1]->metadata.name, "b");
  EXPECT_FALSE(list->items[1]->selector.has_value());

  auto bad = DecodeReplicaSetList(parser, R"({"items":[{"metadata":{"name":"r","namespace":"x"},
      "spec":{"selector":{"matchLabels":{"a":false}}}}]})");
  ASSERT_TRUE(bad.ok());
  EXPECT_TRUE(bad->items.empty());
  ASSERT_EQ(bad->skipped.size(), 1u);
  EXPECT_EQ(bad->skipped[0].error,
            R"(items[0]: replicaset "x/r": spec.selector.matchLabels.a: expected string, got boolean)");

  // An operator from a newer API decodes; the selector using it then fails to parse.
  auto ss = DecodeStatefulSet(parser, R"({"metadata":{"name":"web","namespace":"prod"},"spec":{"selector":{
      "matchExpressions":[{"key":"a","operator":"Sometimes"}]}}})");
  ASSERT_TRUE(ss.ok()) << ss.status().ToString();
  EXPECT_EQ((*ss)->selector->match_expressions[0].op, SelectorOperator::kUnknown);

  // "object" before "type" is decoded once the type is known.
  auto ev = DecodeNamespaceWatchEvent(
      parser, R"({"object":{"metadata":{"name":"n","resourceVersion":"12","labels":{"k":"v"}}},"type":"MODIFIED"})");
  ASSERT_TRUE(ev.ok()) << ev.status().ToString();
  EXPECT_EQ(ev->type, WatchEventType::kModified);
  EXPECT_EQ(ev->resource_version, "12");
  EXPECT_EQ(ev->object->metadata.labels, (StringMap{{"k", "v"}}));

  auto rc_ev = DecodeReplicationControllerWatchEvent(
      parser, R"({"type":"BOOKMARK","object":{"kind":"ReplicationController","metadata":{"resourceVersion":"99"}}})");
  ASSERT_TRUE(rc_ev.ok()) << rc_ev.status().ToString();
  EXPECT_EQ(rc_ev->type, WatchEventType::kBookmark);
  EXPECT_EQ(rc_ev->resource_version, "99");

  auto err_ev = DecodeStatefulSetWatchEvent(
      parser, R"({"type":"ERROR","object":{"kind":"Status","status":"Failure","reason":"Expired","code":410}})");
  ASSERT_TRUE(err_ev.ok()) << err_ev.status().ToString();
  EXPECT_EQ(err_ev->type, WatchEventType::kError);
  EXPECT_EQ(err_ev->error.code, 410);

  auto ss_list = DecodeStatefulSetList(parser, R"({"metadata":{"resourceVersion":"5"},"items":null})");
  ASSERT_TRUE(ss_list.ok()) << ss_list.status().ToString();
  EXPECT_TRUE(ss_list->items.empty());
  auto ns_list = DecodeNamespaceList(parser, R"({"metadata":{"resourceVersion":"5"},"items":[{"metadata":{"name":"a"}}]})");
  ASSERT_TRUE(ns_list.ok()) << ns_list.status().ToString();
  EXPECT_EQ(ns_list->items.at(0)->Name(), "a");
  auto rc_list = DecodeReplicationControllerList(parser, R"({"metadata":{"resourceVersion":"5"},"items":[]})");
  ASSERT_TRUE(rc_list.ok()) << rc_list.status().ToString();
  auto svc_ev = DecodeServiceWatchEvent(parser, R"({"type":"DELETED","object":{"metadata":{"name":"s","namespace":"x"}}})");
  ASSERT_TRUE(svc_ev.ok()) << svc_ev.status().ToString();
  EXPECT_EQ(svc_ev->type, WatchEventType::kDeleted);
  auto rs_ev = DecodeReplicaSetWatchEvent(parser, R"({"type":"ADDED","object":{"metadata":{"name":"r","namespace":"x"}}})");
  ASSERT_TRUE(rs_ev.ok()) << rs_ev.status().ToString();
  EXPECT_EQ(rs_ev->object->metadata.name, "r");
}

// A policy/v1 PodDisruptionBudget as the disruption controller leaves it: of the status
// only disruptionsAllowed and the names of disruptedPods are kept.
constexpr std::string_view kPdb = R"({
  "apiVersion": "policy/v1",
  "kind": "PodDisruptionBudget",
  "metadata": {"name": "web", "namespace": "prod", "uid": "u-7", "resourceVersion": "88", "generation": 2,
               "labels": {"team": "shop"}, "annotations": {"a": "b"}},
  "spec": {"minAvailable": "50%", "selector": {"matchLabels": {"app": "web"}},
           "unhealthyPodEvictionPolicy": "AlwaysAllow"},
  "status": {
    "observedGeneration": 2,
    "disruptedPods": {"web-1": "2024-05-01T10:00:00Z", "web-0": "2024-05-01T10:00:01Z"},
    "disruptionsAllowed": 1,
    "currentHealthy": 3, "desiredHealthy": 2, "expectedPods": 4,
    "conditions": [{"type": "DisruptionAllowed", "status": "True", "reason": "SufficientPods"}]
  }
})";

TEST(JsonDecodeWorkloadsTest, PodDisruptionBudgetKeepsSelectorAndAllowance) {
  JsonParser parser;
  auto pdb = DecodePodDisruptionBudget(parser, kPdb);
  ASSERT_TRUE(pdb.ok()) << pdb.status().ToString();
  PodDisruptionBudget want;
  want.metadata = {.name = "web", .namespace_ = "prod", .uid = "u-7", .resource_version = "88"};
  want.selector = LabelSelector{{{"app", "web"}}, {}};
  want.disruptions_allowed = 1;
  want.disrupted_pods = {"web-1", "web-0"};
  EXPECT_EQ(**pdb, want);

  // policy/v1beta1 (the only version before 1.21) has the same fields; an absent status
  // allows nothing.
  auto beta = DecodePodDisruptionBudget(parser, R"({"apiVersion":"policy/v1beta1","kind":"PodDisruptionBudget",
      "metadata":{"name":"db","namespace":"prod"},"spec":{"maxUnavailable":1,"selector":{"matchExpressions":[
      {"key":"app","operator":"In","values":["db"]}]}}})");
  ASSERT_TRUE(beta.ok()) << beta.status().ToString();
  EXPECT_EQ((*beta)->selector->match_expressions,
            (std::vector<LabelSelectorRequirement>{{"app", SelectorOperator::kIn, {"db"}}}));
  EXPECT_EQ((*beta)->disruptions_allowed, 0);
  EXPECT_TRUE((*beta)->disrupted_pods.empty());
  beta = DecodePodDisruptionBudget(parser, R"({"metadata":{"name":"x","namespace":"a"},"spec":{},
      "status":{"disruptedPods":null,"disruptionsAllowed":0}})");
  ASSERT_TRUE(beta.ok()) << beta.status().ToString();
  EXPECT_FALSE((*beta)->selector.has_value());

  struct Case {
    std::string json;
    std::string want;
  };
  const Case bad[] = {
      {R"({"metadata":{"name":"x","namespace":"a"},"apiVersion":"apps/v1"})",
       R"(poddisruptionbudget "a/x": apiVersion: "apps/v1", expected "policy/v1" or "policy/v1beta1")"},
      {R"({"metadata":{"name":"x","namespace":"a"},"kind":"ReplicaSet"})",
       R"(poddisruptionbudget "a/x": kind: "ReplicaSet", expected "PodDisruptionBudget")"},
      {R"({"metadata":{"name":"x","namespace":"a"},"status":{"disruptionsAllowed":"1"}})",
       R"(poddisruptionbudget "a/x": status.disruptionsAllowed: expected integer, got string)"},
      {R"({"metadata":{"name":"x","namespace":"a"},"status":{"disruptedPods":["p"]}})",
       R"(poddisruptionbudget "a/x": status.disruptedPods: expected object, got array)"},
  };
  for (const Case& tc : bad) {
    auto got = DecodePodDisruptionBudget(parser, tc.json);
    ASSERT_FALSE(got.ok()) << tc.json;
    EXPECT_EQ(got.status().message(), tc.want);
  }
}

TEST(JsonDecodeWorkloadsTest, PodDisruptionBudgetListAndWatchEvent) {
  JsonParser parser;
  auto list = DecodePodDisruptionBudgetList(parser, R"({"apiVersion":"policy/v1beta1","kind":"PodDisruptionBudgetList",
      "metadata":{"resourceVersion":"40"},"items":[
      {"metadata":{"name":"a","namespace":"x"},"spec":{"selector":{"matchLabels":{"app":"a"}}},
       "status":{"disruptionsAllowed":2}},
      {"metadata":{"name":"b","namespace":"x"},"apiVersion":"policy/v2"}]})");
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  EXPECT_EQ(list->resource_version, "40");
  ASSERT_EQ(list->items.size(), 1u);
  EXPECT_EQ(list->items[0]->disruptions_allowed, 2);
  ASSERT_EQ(list->skipped.size(), 1u);  // an unknown version is skipped, not misread
  EXPECT_EQ(list->skipped[0].error, R"(items[1]: poddisruptionbudget "x/b": apiVersion: "policy/v2", )"
                                    R"(expected "policy/v1" or "policy/v1beta1")");

  auto ev = DecodePodDisruptionBudgetWatchEvent(parser, R"({"type":"MODIFIED","object":{"apiVersion":"policy/v1",
      "kind":"PodDisruptionBudget","metadata":{"name":"a","namespace":"x","resourceVersion":"41"},
      "status":{"disruptedPods":{"a-0":"2024-05-01T10:00:00Z"},"disruptionsAllowed":0}}})");
  ASSERT_TRUE(ev.ok()) << ev.status().ToString();
  EXPECT_EQ(ev->type, WatchEventType::kModified);
  EXPECT_EQ(ev->resource_version, "41");
  EXPECT_EQ(ev->object->disrupted_pods, std::vector<std::string>{"a-0"});
}

}  // namespace
}  // namespace ksched::api
