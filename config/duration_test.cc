#include "config/duration.h"

#include <gtest/gtest.h>

#include <limits>

namespace ksched::config {
namespace {

using namespace std::chrono_literals;

TEST(GoDurationTest, Parses) {
  struct Case {
    std::string_view text;
    Duration want;
  } cases[] = {
      {"15s", 15s},      {"1m30s", 90s},   {"0", 0s},          {"2h45m", 165min},  {"1.5s", 1500ms},
      {"500ms", 500ms},  {"10us", 10us},   {"10\xC2\xB5s", 10us}, {"3ns", 3ns},     {"-2s", -2s},
      {"+2s", 2s},       {".5s", 500ms},   {"1h0m0s", 1h},     {"0.000000001s", 1ns},
  };
  for (const Case& c : cases) {
    auto d = ParseGoDuration(c.text);
    ASSERT_TRUE(d.ok()) << c.text << ": " << d.status().ToString();
    EXPECT_EQ(*d, c.want) << c.text;
  }
}

TEST(GoDurationTest, RejectsLikeGo) {
  struct Case {
    std::string_view text, message;
  } cases[] = {
      {"", "time: invalid duration \"\""},
      {"15", "time: missing unit in duration \"15\""},
      {"15x", "time: unknown unit \"x\" in duration \"15x\""},
      {"s", "time: invalid duration \"s\""},
      {".s", "time: invalid duration \".s\""},
      {"99999999999h", "time: invalid duration \"99999999999h\""},
      {"1s 2s", "time: unknown unit \"s \" in duration \"1s 2s\""},
  };
  for (const Case& c : cases) {
    auto d = ParseGoDuration(c.text);
    ASSERT_FALSE(d.ok()) << c.text;
    EXPECT_EQ(d.status().message(), c.message);
  }
}

TEST(GoDurationTest, FormatsLikeGo) {
  struct Case {
    Duration d;
    std::string_view want;
  } cases[] = {
      {0s, "0s"},     {15s, "15s"},  {90s, "1m30s"},   {1h, "1h0m0s"},      {1500ms, "1.5s"},
      {500ms, "500ms"}, {1us, "1\xC2\xB5s"}, {3ns, "3ns"}, {-2s, "-2s"}, {3723s, "1h2m3s"},
      {Duration(1234567), "1.234567ms"},
  };
  for (const Case& c : cases) EXPECT_EQ(FormatGoDuration(c.d), c.want);
}

TEST(GoDurationTest, FormatThenParseRoundTrips) {
  for (int64_t ns : std::initializer_list<int64_t>{1, 999, 1000, 1001, 123456789, 60000000000, 3600000000001,
                     std::numeric_limits<int64_t>::max()}) {
    auto d = ParseGoDuration(FormatGoDuration(Duration(ns)));
    ASSERT_TRUE(d.ok()) << ns;
    EXPECT_EQ(d->count(), ns);
  }
}

}  // namespace
}  // namespace ksched::config
