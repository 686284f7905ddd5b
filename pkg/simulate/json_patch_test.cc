// MergePatch is RFC 7386 plus the API server's merge of conditions by type; StringAt
// reads a dotted path.
#include "pkg/simulate/json_patch.h"

#include <gtest/gtest.h>

namespace ksched::simulate {
namespace {

std::string Merge(std::string_view target, std::string_view patch) {
  auto r = MergePatch(target, patch);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : "";
}

TEST(MergePatchTest, ObjectsMergeKeyByKeyNullDeletesOtherValuesReplace) {
  EXPECT_EQ(Merge(R"({"a":1,"b":{"c":2,"d":3},"e":[1,2]})", R"({"b":{"c":null,"x":"y"},"e":[3],"f":true})"),
            R"({"a":1,"b":{"d":3,"x":"y"},"e":[3],"f":true})");
  EXPECT_EQ(Merge(R"({"a":{"b":1}})", R"({"a":"flat"})"), R"({"a":"flat"})");
  EXPECT_EQ(Merge(R"({"a":1})", R"({"a":null,"missing":null})"), "{}");
}

TEST(MergePatchTest, AddedObjectsLoseTheirNulls) {
  EXPECT_EQ(Merge("{}", R"({"spec":{"nodeName":"n1","gone":null,"deep":{"x":null,"y":2}}})"),
            R"({"spec":{"nodeName":"n1","deep":{"y":2}}})");
}

TEST(MergePatchTest, ConditionsMergeByType) {
  const std::string pod =
      R"({"status":{"conditions":[{"type":"Ready","status":"True"},{"type":"PodScheduled","status":"True","reason":"x"}]}})";
  EXPECT_EQ(Merge(pod, R"({"status":{"conditions":[{"type":"PodScheduled","status":"False","reason":null}]}})"),
            R"({"status":{"conditions":[{"type":"Ready","status":"True"},{"type":"PodScheduled","status":"False"}]}})");
  EXPECT_EQ(Merge(pod, R"({"status":{"conditions":[{"type":"DisruptionTarget","status":"True"}]}})"),
            R"({"status":{"conditions":[{"type":"Ready","status":"True"},{"type":"PodScheduled","status":"True","reason":"x"},{"type":"DisruptionTarget","status":"True"}]}})");
  // Other lists are replaced whole.
  EXPECT_EQ(Merge(R"({"items":[{"type":"a"}]})", R"({"items":[{"type":"b"}]})"), R"({"items":[{"type":"b"}]})");
}

TEST(MergePatchTest, StringsKeepTheirEscapes) {
  EXPECT_EQ(Merge(R"({"a":"q\"uote\n"})", R"({"b":"tab\t"})"), R"({"a":"q\"uote\n","b":"tab\t"})");
}

TEST(MergePatchTest, NotJsonIsAnError) {
  EXPECT_FALSE(MergePatch("{", "{}").ok());
  EXPECT_FALSE(MergePatch("{}", "nope").ok());
}

TEST(StringAtTest, ReadsADottedPath) {
  const std::string o = R"({"metadata":{"name":"a","uid":null,"n":3},"spec":{"x":{"y":"z"}}})";
  EXPECT_EQ(**StringAt(o, "metadata.name"), "a");
  EXPECT_EQ(**StringAt(o, "spec.x.y"), "z");
  EXPECT_FALSE(StringAt(o, "metadata.uid")->has_value());
  EXPECT_FALSE(StringAt(o, "metadata.n")->has_value());
  EXPECT_FALSE(StringAt(o, "metadata.name.deeper")->has_value());
  EXPECT_FALSE(StringAt("[", "a").ok());
}

}  // namespace
}  // namespace ksched::simulate
