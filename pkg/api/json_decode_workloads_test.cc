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

}  // namespace
}  // namespace ksched::api
