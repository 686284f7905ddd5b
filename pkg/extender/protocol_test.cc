// The extender wire format: Go's field names out, Go's case-insensitive matching in.
#include "pkg/extender/protocol.h"

#include <gtest/gtest.h>

#include "tests/fakes/builders.h"

namespace ksched::extender {
namespace {

using ksched::testing::NodeBuilder;
using ksched::testing::PodBuilder;

std::vector<cache::NodeInfoPtr> Nodes(std::initializer_list<std::string> names) {
  std::vector<cache::NodeInfoPtr> out;
  for (const std::string& n : names) out.push_back(std::make_shared<cache::NodeInfo>(NodeBuilder(n).Obj()));
  return out;
}

TEST(ProtocolTest, ArgsCarryNamesOrNodeObjects) {
  auto nodes = Nodes({"a", "b"});
  std::string names = EncodeExtenderArgs("{}", nodes, true, [](size_t) { return std::string(); });
  EXPECT_EQ(names, R"({"Pod":{},"Nodes":null,"NodeNames":["a","b"]})");
  std::string objects = EncodeExtenderArgs("{}", nodes, false, [&](size_t i) { return api::EncodeNode(*nodes[i]->node()); });
  EXPECT_EQ(objects.rfind(R"({"Pod":{},"Nodes":{"metadata":{},"items":[{"apiVersion":"v1","kind":"Node","metadata":{"name":"a"})", 0), 0u)
      << objects;
  EXPECT_TRUE(objects.ends_with(R"(]},"NodeNames":null})")) << objects;
}

TEST(ProtocolTest, FilterResultDecodesEitherSpelling) {
  auto r = DecodeFilterResult(R"({"NodeNames":["a"],"FailedNodes":{"b":"busy"},
                                  "FailedAndUnresolvableNodes":{"c":"no gpu"},"Error":""})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r->node_names, std::vector<std::string>{"a"});
  EXPECT_FALSE(r->nodes.has_value());
  EXPECT_EQ(r->failed.at("b"), "busy");
  EXPECT_EQ(r->failed_and_unresolvable.at("c"), "no gpu");

  // Go's encoding/json matches keys case-insensitively: a Python extender's camelCase works.
  r = DecodeFilterResult(R"({"nodes":{"items":[{"metadata":{"name":"x"}}]},"failedNodes":{"y":"full"},"error":null,
                             "somethingElse":1})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r->nodes, std::vector<std::string>{"x"});
  EXPECT_EQ(r->failed.at("y"), "full");

  r = DecodeFilterResult(R"({"NodeNames":null,"Nodes":null,"Error":"extender is sad"})");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->node_names.has_value());
  EXPECT_EQ(r->error, "extender is sad");
}

TEST(ProtocolTest, MalformedAnswersNameWhatIsWrong) {
  EXPECT_EQ(DecodeFilterResult("not json").status().message().rfind("decoding the extender's filter result: ", 0), 0u);
  EXPECT_EQ(DecodeFilterResult(R"({"FailedNodes":{"a":1}})").status().message(),
            "decoding the extender's filter result: FailedNodes[a] is not a string");
  EXPECT_EQ(DecodeHostPriorityList(R"([{"Host":"a","Score":1.5}])").status().message(),
            "decoding the extender's host priority list: Score is not an integer");
  EXPECT_EQ(DecodeHostPriorityList(R"({"Host":"a"})").status().message(),
            "decoding the extender's host priority list: the answer is not an array");
}

TEST(ProtocolTest, HostPriorities) {
  auto r = DecodeHostPriorityList(R"([{"Host":"a","Score":7},{"host":"b","score":0}])");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].host, "a");
  EXPECT_EQ((*r)[0].score, 7);
  EXPECT_EQ((*r)[1].host, "b");
  EXPECT_TRUE(DecodeHostPriorityList("null")->empty());
}

TEST(ProtocolTest, Binding) {
  auto pod = PodBuilder("web").Namespace("ns").UID("u-1").Obj();
  EXPECT_EQ(EncodeBindingArgs(*pod, "n1"), R"({"PodName":"web","PodNamespace":"ns","PodUID":"u-1","Node":"n1"})");
  EXPECT_EQ(*DecodeBindingResult(R"({"Error":""})"), "");
  EXPECT_EQ(*DecodeBindingResult(R"({"error":"no room"})"), "no room");
}

TEST(ProtocolTest, Preemption) {
  framework::NodeVictims candidates;
  candidates["n1"] = {{PodBuilder("v1").UID("u1").Obj(), PodBuilder("v2").UID("u2").Obj()}, 1};
  EXPECT_EQ(EncodePreemptionArgs("{}", candidates, true),
            R"({"Pod":{},"NodeNameToVictims":null,"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"u1"},{"UID":"u2"}],)"
            R"("NumPDBViolations":1}}})");
  std::string full = EncodePreemptionArgs("{}", candidates, false);
  EXPECT_NE(full.find(R"("NodeNameToVictims":{"n1":{"Pods":[{"apiVersion":"v1","kind":"Pod")"), std::string::npos) << full;
  EXPECT_TRUE(full.ends_with(R"("NumPDBViolations":1}},"NodeNameToMetaVictims":null})")) << full;

  auto r = DecodePreemptionResult(R"({"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"u2"}],"NumPDBViolations":0},
                                      "n2":null}})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->at("n1").uids, std::vector<std::string>{"u2"});
  EXPECT_TRUE(r->at("n2").uids.empty());
}

}  // namespace
}  // namespace ksched::extender
