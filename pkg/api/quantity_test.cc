#include "pkg/api/quantity.h"

#include <gtest/gtest.h>

#include <limits>

namespace ksched::api {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

struct ParseCase {
  std::string_view in;
  int64_t milli;
};

// Inputs from apimachinery's quantity_test.go plus the forms pods commonly use.
TEST(QuantityTest, ParsesLikeApimachinery) {
  const ParseCase cases[] = {
      {"0", 0},
      {"100m", 100},
      {"1", 1000},
      {"-1", -1000},
      {"+5", 5000},
      {"0.5", 500},
      {"1Gi", 1073741824000},
      {"1.5Gi", 1610612736000},
      {"500Mi", 524288000000},
      {"128974848", 128974848000},
      {"123456789Mi", 129453825982464000},
      {"2Ti", 2199023255552000},
      {"8Pi", 9007199254740992000},
      {"1Ki", 1024000},
      {"5n", 1},  // rounded up to a milli
      {"4u", 1},
      {"3m", 3},
      {"8k", 8000000},
      {"50k", 50000000},
      {"7M", 7000000000},
      {"6G", 6000000000000},
      {"5T", 5000000000000000},
      {"2P", 2000000000000000000},
      {"1e3", 1000000},
      {"1E-3", 1},
      {"1.5E2", 150000},
      {"1e+3", 1000000},
      {"1.2e3", 1200000},
      {"0.5e-2", 5},
      {"100.035k", 100035000},
      {"0.0005k", 500},
      {"0.00500", 5},
      {"10.035M", 10035000000},
      {"6.987654321G", 6987654321000},
      {"0.1m", 1},
      {"-0.1m", -1},  // away from zero, like upstream's int64 path
      {"3.001n", 1},
      {"0.9n", 1},
      {"0.0000000001", 1},
      {"100.035Ki", 102435840},
      {"0.5Mi", 524288000},
      {"0.05Gi", 53687091200},
      {"0.000000000001Ki", 1},
      {".001", 1},
      {".0001k", 100},
      {"1.", 1000},
      {"1.G", 1000000000000},
      {"007", 7000},
      // MilliValue() saturates beyond int64 milli-units (Value() stays exact: below).
      {"1E", kMax},
      {"12E", kMax},
      {"9Ei", kMax},
      {"9Pi", kMax},
      {"9223372036854775807Ki", kMax},
      {"-9Ei", std::numeric_limits<int64_t>::min()},
      {"1e1000000000000", kMax},
      {"1e-1000000000000", 1},
      // Upstream's scanner accepts a missing number as zero.
      {"Gi", 0},
      {"+", 0},
      {".", 0},
  };
  for (const auto& c : cases) {
    auto q = Quantity::Parse(c.in);
    ASSERT_TRUE(q.ok()) << c.in << ": " << q.status().ToString();
    EXPECT_EQ(q->MilliValue(), c.milli) << c.in;
  }
}

TEST(QuantityTest, RejectsMalformedText) {
  struct Case {
    std::string_view in;
    std::string_view error;
  };
  const Case cases[] = {
      {"", "quantities must match the regular expression"},
      {"1.2.3", "quantities must match the regular expression"},
      {"1iB", "quantities must match the regular expression"},
      {"1.1.M", "quantities must match the regular expression"},
      {"1+1.0M", "quantities must match the regular expression"},
      {"aoeu", "quantities must match the regular expression"},
      {" 1", "quantities must match the regular expression"},
      {"1 ", "quantities must match the regular expression"},
      {"0.1mi", "unable to parse quantity's suffix"},
      {"0.1am", "quantities must match the regular expression"},
      {".5i", "unable to parse quantity's suffix"},
      {"1i", "unable to parse quantity's suffix"},
      {"-3.01i", "unable to parse quantity's suffix"},
      {"-3.01e-", "unable to parse quantity's suffix"},
      {"1e", "unable to parse quantity's suffix"},
      {"1Ki3", "unable to parse quantity's suffix"},
      {"1e99999999999999999999", "unable to parse quantity's suffix"},
  };
  for (const auto& c : cases) {
    auto q = Quantity::Parse(c.in);
    ASSERT_FALSE(q.ok()) << "parsed unexpectedly: \"" << c.in << "\"";
    EXPECT_EQ(q.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(q.status().message().find(c.error), std::string::npos) << q.status().message();
    EXPECT_NE(q.status().message().find("\"" + std::string(c.in) + "\""), std::string::npos)
        << "error should name the text: " << q.status().message();
  }
}

TEST(QuantityTest, ValueRoundsAwayFromZero) {
  struct Case {
    std::string_view in;
    int64_t value;
  };
  const Case cases[] = {
      {"100m", 1}, {"1.5", 2}, {"-1.5", -2}, {"1Gi", 1073741824}, {"0", 0}, {"2", 2}, {"1001m", 2},
  };
  for (const auto& c : cases) {
    auto q = Quantity::Parse(c.in);
    ASSERT_TRUE(q.ok()) << c.in;
    EXPECT_EQ(q->Value(), c.value) << c.in;
  }
}

// Memory and storage are compared by Value(): it is exact over int64's whole range, as
// upstream's int64 amounts are, rather than the same number for every amount from about
// 8 PiB up (a pod asking 1E of memory fitted a node with 10P).
TEST(QuantityTest, ValueIsExactBeyondInt64MilliUnits) {
  struct Case {
    std::string_view in;
    int64_t value;
  };
  const Case cases[] = {
      {"10P", 10000000000000000},
      {"1E", 1000000000000000000},
      {"9E", 9000000000000000000},
      {"7Ei", 8070450532247928832},
      {"9223372036854775807", kMax},
      {"9223372036854775807Ki", kMax},  // beyond int64: saturated
      {"-1E", -1000000000000000000},
      {"1e100", kMax},
      {"-1e100", std::numeric_limits<int64_t>::min()},
  };
  for (const auto& c : cases) {
    auto q = Quantity::Parse(c.in);
    ASSERT_TRUE(q.ok()) << c.in;
    EXPECT_EQ(q->Value(), c.value) << c.in;
  }
  EXPECT_GT(*Quantity::Parse("1E"), *Quantity::Parse("10P"));
  EXPECT_GT(*Quantity::Parse("8Pi"), *Quantity::Parse("8P"));
  EXPECT_LT(*Quantity::Parse("9E"), *Quantity::Parse("9Ei"));
  EXPECT_EQ(*Quantity::Parse("1E"), *Quantity::Parse("1000P"));
}

TEST(QuantityTest, FromValueSaturates) {
  EXPECT_EQ(Quantity::FromValue(3).MilliValue(), 3000);
  EXPECT_EQ(Quantity::FromValue(kMax).MilliValue(), kMax);
  EXPECT_EQ(Quantity::FromValue(std::numeric_limits<int64_t>::min()).MilliValue(),
            std::numeric_limits<int64_t>::min());
  EXPECT_LT(Quantity::FromMilli(999), Quantity::FromValue(1));
}

}  // namespace
}  // namespace ksched::api
