#include "pkg/framework/status.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

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

namespace ksched::framework {
namespace {

// Constant reasons and plugin names are shared copies: equal to what the text-taking
// forms give, the same object every time, and a text in a reused buffer gets its own.
TEST(StatusTest, ConstantReasonsAndPluginNamesAreSharedCopies) {
  constexpr std::string_view kReason = "node(s) didn't match pod topology spread constraints";
  Status a = Status::Constant(Code::kUnschedulable, kReason).WithPluginName("PodTopologySpread");
  Status b = Status(Code::kUnschedulable, std::string(kReason)).WithPlugin("PodTopologySpread");
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.plugin(), b.plugin());
  EXPECT_EQ(a.ToString(), b.ToString());
  EXPECT_EQ(&a.reasons(), &Status::Constant(Code::kUnschedulable, kReason).reasons());

  // Appending copies the shared reasons first; the shared copy is untouched.
  Status c = a;
  c.AppendReason("Insufficient cpu");
  EXPECT_EQ(c.reasons(), (std::vector<std::string>{std::string(kReason), "Insufficient cpu"}));
  EXPECT_EQ(a.reasons(), std::vector<std::string>{std::string(kReason)});
  // WithPlugin after WithPluginName replaces the name.
  Status d = Status(a).WithPlugin("Other");
  EXPECT_EQ(d.plugin(), "Other");

  // The same buffer holding another text later.
  char buffer[] = "Insufficient cpu";
  Status e = Status::Constant(Code::kUnschedulable, buffer);
  std::memcpy(buffer, "Insufficient mem", sizeof(buffer));
  Status f = Status::Constant(Code::kUnschedulable, buffer);
  EXPECT_EQ(e.Message(), "Insufficient cpu");
  EXPECT_EQ(f.Message(), "Insufficient mem");
}

constexpr std::string_view kSiteReason = "node(s) didn't match pod anti-affinity rules";

TEST(StatusTest, ConstantOfANamedReasonEqualsTheLookedUpOne) {
  Status a = Status::Constant<kSiteReason>(Code::kUnschedulable);
  Status b = Status::Constant(Code::kUnschedulable, kSiteReason);
  EXPECT_EQ(a, b);
  EXPECT_EQ(&a.reasons(), &b.reasons());  // one shared copy
  EXPECT_EQ(&Status::Constant<kSiteReason>(Code::kUnschedulable).reasons(), &a.reasons());
  EXPECT_EQ(a.code(), Code::kUnschedulable);
  const std::string* name = Status::InternedName("InterPodAffinity");
  Status c = Status::Constant<kSiteReason>(Code::kUnschedulable).WithPluginName(name);
  EXPECT_EQ(&c.plugin(), name);
  EXPECT_EQ(c.plugin(), "InterPodAffinity");
}

// Copies and moves of statuses with reasons and plugin names of their own, shared ones,
// or none keep what they carry, independently of the original.
TEST(StatusTest, CopiesAndMovesKeepOwnAndSharedText) {
  Status own = Status(Code::kError, "boom").WithPlugin("P");
  Status copy = own;
  copy.AppendReason("more");
  copy.WithPlugin("Q");
  EXPECT_EQ(own.Message(), "boom");
  EXPECT_EQ(own.plugin(), "P");
  EXPECT_EQ(copy.Message(), "boom, more");
  EXPECT_EQ(copy.plugin(), "Q");
  Status moved = std::move(copy);
  EXPECT_EQ(moved.Message(), "boom, more");
  EXPECT_EQ(moved.plugin(), "Q");
  copy = moved;  // assigning to a moved-from status
  EXPECT_EQ(copy, moved);
  const Status& self = copy;
  copy = self;  // self-assignment keeps the status
  EXPECT_EQ(copy.Message(), "boom, more");

  Status shared = Status::Constant(Code::kUnschedulable, "Insufficient cpu").WithPluginName("NodeResourcesFit");
  Status shared_copy = shared;
  EXPECT_EQ(&shared_copy.reasons(), &shared.reasons());
  EXPECT_EQ(&shared_copy.plugin(), &shared.plugin());
  // An owned plugin name replaced by a shared one.
  Status renamed = Status(own).WithPluginName("Other");
  EXPECT_EQ(renamed.plugin(), "Other");
  EXPECT_EQ(renamed.Message(), "boom");

  Status none;
  EXPECT_TRUE(Status(none).reasons().empty());
  EXPECT_TRUE(Status(none).plugin().empty());
  EXPECT_TRUE(Status(Code::kUnschedulable, std::vector<std::string>{}).reasons().empty());
}

}  // namespace
}  // namespace ksched::framework
