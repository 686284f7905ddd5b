// The JSON log format (--logging-format=json) as component-base's JSON logger writes it.
#include "pkg/util/log.h"

#include <gtest/gtest.h>

namespace ksched::log {
namespace {

TEST(LogJsonTest, StructuredTailBecomesFields) {
  EXPECT_EQ(FormatJsonLine(1700000000123.25, "schedule_one.cc:212", 2,
                           "Successfully bound pod to node, pod=\"ns/p\" node=\"n-1\""),
            R"({"ts":1700000000123.250,"caller":"schedule_one.cc:212","msg":"Successfully bound pod to node",)"
            R"("v":2,"pod":"ns/p","node":"n-1"})");
}

TEST(LogJsonTest, QuotedMessageAndBareValues) {
  EXPECT_EQ(FormatJsonLine(1.0, "a.cc:1", 0, "\"Attempting to bind pod to node\" pod=\"a/b\" attempts=3"),
            R"({"ts":1.000,"caller":"a.cc:1","msg":"Attempting to bind pod to node","v":0,"pod":"a/b","attempts":"3"})");
}

TEST(LogJsonTest, PlainTextIsTheMessageAndErrorsCarryNoV) {
  EXPECT_EQ(FormatJsonLine(2.5, "b.cc:9", -1, "failed to list pods (/api/v1/pods): Unavailable: refused"),
            R"({"ts":2.500,"caller":"b.cc:9","msg":"failed to list pods (/api/v1/pods): Unavailable: refused"})");
}

TEST(LogJsonTest, EscapesQuotesControlsAndNewlines) {
  EXPECT_EQ(FormatJsonLine(0, "c.cc:2", 1, "say \"hi\"\n\tnow\x01"),
            R"({"ts":0.000,"caller":"c.cc:2","msg":"say \"hi\"\n\tnow\u0001","v":1})");
  // An escaped quote inside a value.
  EXPECT_EQ(FormatJsonLine(0, "c.cc:3", 0, "done, err=\"x \\\"y\\\"\""),
            R"({"ts":0.000,"caller":"c.cc:3","msg":"done","v":0,"err":"x \"y\""})");
}

TEST(LogVmoduleTest, PatternsByFileBaseNameThenTheGlobalLevel) {
  SetVerbosity(1);
  SetVmodule({{"schedule_*", 4}, {"api_writer", 0}});
  EXPECT_TRUE(VEnabled(4, "pkg/scheduler/schedule_one.cc"));
  EXPECT_FALSE(VEnabled(5, "pkg/scheduler/schedule_one.cc"));
  EXPECT_FALSE(VEnabled(1, "/src/pkg/scheduler/api_writer.cc"));
  EXPECT_TRUE(VEnabled(1, "informer.cc"));
  EXPECT_FALSE(VEnabled(2, "informer.cc"));
  SetVmodule({});
  EXPECT_TRUE(VEnabled(1, "pkg/scheduler/api_writer.cc"));
  SetVerbosity(0);
}

}  // namespace
}  // namespace ksched::log
