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
      {R"({"object":{"metadata":{"name":"a"}}})", "watch event: missing \"type\""},
      {R"({"type":"ERROR","object":{"code":"410"}})", "watch event: object.code: expected integer"},
      {R"({"type":"ADDED","object":{)", "watch event: "},
      {R"({"type":"ADDED","object":{"metadata":{"name":"a","namespace":"x"},"spec":{"priority" 12}}})",
       "watch event: "},
      // No object where one is required: an error, never a null object.
      {R"({"type":"ADDED"})", "watch event: missing \"object\""},
      {R"({"type":"DELETED"})", "watch event: missing \"object\""},
      // Text after the root value is broken input, never silently ignored.
      {R"({"type":"ADDED","object":{"metadata":{"name":"a","namespace":"x"}}} {"type":"DELETED"})",
       "unexpected content after the JSON value"},
  };
  for (const auto& c : cases) {
    auto ev = DecodePodWatchEvent(c.line);
    ASSERT_FALSE(ev.ok()) << c.line;
    EXPECT_NE(ev.status().message().find(c.error), std::string::npos) << ev.status().message();
  }
}

// Readable events the informer skips rather than restarting the stream at the same event:
// an unknown type, and an object that is valid JSON but has a value we cannot use (its
// key and RV are still returned so a delete can be applied and the RV advanced).
// A wrong GVK (a node in a pod watch) is skipped like any undecodable object, instead
// of becoming a pod with a node's name and nothing else.
TEST(JsonWatchTest, WrongKindIsASkippableObjectError) {
  auto ev = DecodePodWatchEvent(R"({"type":"ADDED","object":{"kind":"Node","apiVersion":"v1",
      "metadata":{"name":"n1","resourceVersion":"7"}}})");
  ASSERT_TRUE(ev.ok()) << ev.status().ToString();
  EXPECT_EQ(ev->object_error, "pod: kind: \"Node\", expected \"Pod\"");
  auto ok = DecodePodWatchEvent(R"({"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"p","namespace":"x"}}})");
  ASSERT_TRUE(ok.ok());
  EXPECT_TRUE(ok->object_error.empty());
}

// A 10,000-deep value inside an event never overflows the stack: the decoders only
// recurse along the API's own (shallow) structure and step over anything else
// iteratively. In a field we do not read it is skipped; in one we read it is a wrong type.
TEST(JsonWatchTest, DeepNestingIsNeverACrash) {
  const std::string deep = std::string(10000, '[') + std::string(10000, ']');
  auto skipped =
      DecodePodWatchEvent(R"({"type":"ADDED","object":{"metadata":{"name":"a","namespace":"x"},"spec":{"x":)" + deep +
                          "}}}");
  ASSERT_TRUE(skipped.ok()) << skipped.status().ToString();
  EXPECT_TRUE(skipped->object_error.empty());
  EXPECT_EQ(skipped->object->Key(), "x/a");
  auto wrong = DecodePodWatchEvent(R"({"type":"ADDED","object":{"metadata":{"name":"a","namespace":"x","labels":)" +
                                   deep + "}}}");
  ASSERT_TRUE(wrong.ok()) << wrong.status().ToString();
  EXPECT_NE(wrong->object_error.find("metadata.labels"), std::string::npos) << wrong->object_error;
}

TEST(JsonWatchTest, SkippableEvents) {
  auto unknown = DecodePodWatchEvent(R"({"type":"RENAMED","object":{}})");
  ASSERT_TRUE(unknown.ok()) << unknown.status().ToString();
  EXPECT_EQ(unknown->type, WatchEventType::kUnknown);

  for (std::string_view line :
       {R"({"type":"MODIFIED","object":{"metadata":{"name":"a","namespace":"x","resourceVersion":"9"},
            "spec":{"priority":"high"}}})",
        R"({"object":{"metadata":{"name":"a","namespace":"x","resourceVersion":"9"},"spec":{"priority":"high"}},
            "type":"MODIFIED"})"}) {
    auto ev = DecodePodWatchEvent(line);
    ASSERT_TRUE(ev.ok()) << ev.status().ToString();
    EXPECT_EQ(ev->type, WatchEventType::kModified);
    EXPECT_EQ(ev->object_error, "pod \"x/a\": spec.priority: expected integer, got string");
    ASSERT_NE(ev->object, nullptr);
    EXPECT_EQ(ev->object->Key(), "x/a");
    EXPECT_EQ(ev->resource_version, "9");
  }
}

}  // namespace
}  // namespace ksched::api
