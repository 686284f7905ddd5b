#include <gtest/gtest.h>

#include "pkg/api/json.h"

namespace ksched::api {
namespace {

TEST(JsonWatchTest, DecodesEachEventType) {
  struct Case {
    std::string_view line;
    WatchEventType type;
    std::string_view resource_version;
    std::string_view pod_key;  // empty: no object expected
  };
  const Case cases[] = {
      {R"({"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"a","namespace":"x","resourceVersion":"10"}}})",
       WatchEventType::kAdded, "10", "x/a"},
      {R"({"type":"MODIFIED","object":{"metadata":{"name":"a","namespace":"x","resourceVersion":"11"},
         "spec":{"nodeName":"n1"}}})",
       WatchEventType::kModified, "11", "x/a"},
      {R"({"type":"DELETED","object":{"metadata":{"name":"a","namespace":"x","resourceVersion":"12"}}})",
       WatchEventType::kDeleted, "12", "x/a"},
      {R"({"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"13",
         "annotations":{"k8s.io/initial-events-end":"true"}},"spec":{"containers":null}}})",
       WatchEventType::kBookmark, "13", "/"},
      // Field order is not guaranteed by JSON; "object" first still decodes.
      {R"({"object":{"metadata":{"name":"b","namespace":"y","resourceVersion":"14"}},"type":"ADDED"})",
       WatchEventType::kAdded, "14", "y/b"},
  };
  JsonParser parser;
  for (const auto& c : cases) {
    auto ev = DecodePodWatchEvent(parser, c.line);
    ASSERT_TRUE(ev.ok()) << c.line << ": " << ev.status().ToString();
    EXPECT_EQ(ev->type, c.type) << c.line;
    EXPECT_EQ(ev->resource_version, c.resource_version) << c.line;
    ASSERT_NE(ev->object, nullptr) << c.line;
    EXPECT_EQ(ev->object->Key(), c.pod_key);
  }
}

TEST(JsonWatchTest, ErrorEventCarriesStatus) {
  const std::string_view lines[] = {
      R"json({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
         "message":"too old resource version: 1 (2)","reason":"Expired","code":410}})json",
      R"json({"object":{"kind":"Status","status":"Failure","message":"too old resource version: 1 (2)",
         "reason":"Expired","code":410},"type":"ERROR"})json",
  };
  for (std::string_view line : lines) {
    auto ev = DecodePodWatchEvent(line);
    ASSERT_TRUE(ev.ok()) << ev.status().ToString();
    EXPECT_EQ(ev->type, WatchEventType::kError);
    EXPECT_EQ(ev->object, nullptr);
    EXPECT_EQ(ev->error, (ApiStatus{"Failure", "too old resource version: 1 (2)", "Expired", 410}));
  }
}

TEST(JsonWatchTest, NodeEvents) {
  auto ev = DecodeNodeWatchEvent(
      R"({"type":"MODIFIED","object":{"metadata":{"name":"n1","resourceVersion":"77"},
        "spec":{"taints":[{"key":"k","effect":"NoExecute"}]}}})");
  ASSERT_TRUE(ev.ok()) << ev.status().ToString();
  EXPECT_EQ(ev->type, WatchEventType::kModified);
  EXPECT_EQ(ev->resource_version, "77");
  EXPECT_EQ(ev->object->spec.taints[0].effect, TaintEffect::kNoExecute);
}

TEST(JsonWatchTest, RejectsBadEvents) {
  struct Case {
    std::string_view line;
    std::string_view error;
  };
  const Case cases[] = {
      {R"({"type":"RENAMED","object":{}})", "watch event: type: unknown watch event type \"RENAMED\""},
      {R"({"object":{"metadata":{"name":"a"}}})", "watch event: missing \"type\""},
      {R"({"type":"ADDED","object":{"metadata":{"name":"a","namespace":"x"},"spec":{"priority":"high"}}})",
       "watch event: object: pod \"x/a\": spec.priority: expected integer, got string"},
      {R"({"object":{"metadata":{"name":"a","namespace":"x"},"spec":{"priority":"high"}},"type":"ADDED"})",
       "watch event: object: pod \"x/a\": spec.priority: expected integer, got string"},
      {R"({"type":"ERROR","object":{"code":"410"}})", "watch event: object.code: expected integer"},
      {R"({"type":"ADDED","object":{)", "watch event: "},
  };
  for (const auto& c : cases) {
    auto ev = DecodePodWatchEvent(c.line);
    ASSERT_FALSE(ev.ok()) << c.line;
    EXPECT_NE(ev.status().message().find(c.error), std::string::npos) << ev.status().message();
  }
}

}  // namespace
}  // namespace ksched::api
