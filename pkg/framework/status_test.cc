#include "pkg/framework/status.h"

#include <gtest/gtest.h>

namespace ksched::framework {
namespace {

TEST(StatusTest, CodesAndPredicates) {
  struct Case {
    Code code;
    std::string_view name;
    bool success, rejected;
  };
  const Case cases[] = {
      {Code::kSuccess, "Success", true, false},
      {Code::kError, "Error", false, false},
      {Code::kUnschedulable, "Unschedulable", false, true},
      {Code::kUnschedulableAndUnresolvable, "UnschedulableAndUnresolvable", false, true},
      {Code::kWait, "Wait", false, false},
      {Code::kSkip, "Skip", false, false},
      {Code::kPending, "Pending", false, true},
  };
  for (const Case& c : cases) {
    Status s(c.code);
    EXPECT_EQ(CodeName(c.code), c.name);
    EXPECT_EQ(s.IsSuccess(), c.success) << c.name;
    EXPECT_EQ(s.IsRejected(), c.rejected) << c.name;
  }
}

TEST(StatusTest, MessageJoinsReasons) {
  Status s(Code::kUnschedulable, std::vector<std::string>{"Insufficient cpu", "Insufficient memory"});
  EXPECT_EQ(s.Message(), "Insufficient cpu, Insufficient memory");
  EXPECT_EQ(s.ToString(), "Unschedulable: Insufficient cpu, Insufficient memory");
  EXPECT_EQ(Status().ToString(), "Success");
  EXPECT_TRUE(Status().AsStatus().ok());
  EXPECT_EQ(Status::Error("boom").AsStatus().code(), StatusCode::kInternal);
  EXPECT_EQ(Status::FromError(NotFound("node x")).code(), Code::kError);
}

TEST(StatusTest, MergeKeepsMostSevereAndFirstRejectingPlugin) {
  struct Case {
    std::string name;
    std::vector<Status> in;
    Code code;
    std::string plugin;
    std::string message;
  };
  const Case cases[] = {
      {"empty", {}, Code::kSuccess, "", ""},
      {"first of equal rejections wins",
       {Status(Code::kUnschedulable, "a").WithPlugin("A"), Status(Code::kUnschedulable, "b").WithPlugin("B")},
       Code::kUnschedulable, "A", "a, b"},
      {"unresolvable beats unschedulable",
       {Status(Code::kUnschedulable, "a").WithPlugin("A"),
        Status(Code::kUnschedulableAndUnresolvable, "b").WithPlugin("B")},
       Code::kUnschedulableAndUnresolvable, "B", "a, b"},
      {"error beats everything",
       {Status(Code::kUnschedulableAndUnresolvable, "a").WithPlugin("A"), Status::Error("e").WithPlugin("E")},
       Code::kError, "E", "a, e"},
      {"successes ignored", {Status(), Status(Code::kUnschedulable, "x").WithPlugin("X")}, Code::kUnschedulable, "X",
       "x"},
  };
  for (const Case& c : cases) {
    Status m = MergeStatuses(c.in);
    EXPECT_EQ(m.code(), c.code) << c.name;
    EXPECT_EQ(m.plugin(), c.plugin) << c.name;
    EXPECT_EQ(m.Message(), c.message) << c.name;
  }
}

}  // namespace
}  // namespace ksched::framework
