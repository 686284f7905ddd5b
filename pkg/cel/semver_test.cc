// api::SemVersion (pkg/api/resource.cc): semver 2.0.0 parsing and precedence
// (https://semver.org §11 examples).
#include <gtest/gtest.h>

#include "pkg/api/resource.h"

namespace ksched::api {
namespace {

TEST(SemVersion, ParsesAndPrints) {
  auto v = SemVersion::Parse("1.2.3-rc.1+build.5");
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->major, 1u);
  EXPECT_EQ(v->minor, 2u);
  EXPECT_EQ(v->patch, 3u);
  EXPECT_EQ(v->pre_release, (std::vector<std::string>{"rc", "1"}));
  EXPECT_EQ(v->build, "build.5");
  EXPECT_EQ(v->String(), "1.2.3-rc.1+build.5");
  EXPECT_EQ(SemVersion::Parse("0.0.0")->String(), "0.0.0");
  EXPECT_EQ(SemVersion::Parse("18446744073709551615.0.0")->major, 18446744073709551615u);
  EXPECT_EQ(SemVersion::Parse("1.0.0-x-y-z.--")->pre_release, (std::vector<std::string>{"x-y-z", "--"}));
  EXPECT_EQ(SemVersion::Parse("1.0.0+001")->build, "001");  // build identifiers may have leading zeros
}

TEST(SemVersion, RejectsInvalid) {
  for (const char* bad : {"", "1", "1.2", "v1.2.3", "01.2.3", "1.02.3", "1.2.03", "1.2.3-", "1.2.3-01", "1.2.3+",
                          "1.2.3-a..b", "1.2.3+a..b", "1.2.3-a_b", "a.b.c", "1.2.3.4", " 1.2.3",
                          "18446744073709551616.0.0", "1.2.3-18446744073709551616"}) {
    EXPECT_FALSE(SemVersion::Parse(bad).has_value()) << bad;
  }
}

TEST(SemVersion, Precedence) {
  // semver.org §11: 1.0.0-alpha < 1.0.0-alpha.1 < 1.0.0-alpha.beta < 1.0.0-beta <
  // 1.0.0-beta.2 < 1.0.0-beta.11 < 1.0.0-rc.1 < 1.0.0 < 2.0.0 < 2.1.0 < 2.1.1.
  const char* ordered[] = {"1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2",
                           "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "2.0.0", "2.1.0", "2.1.1"};
  for (size_t i = 0; i < std::size(ordered); ++i) {
    for (size_t j = 0; j < std::size(ordered); ++j) {
      int want = i < j ? -1 : i > j ? 1 : 0;
      int got = SemVersion::Parse(ordered[i])->Compare(*SemVersion::Parse(ordered[j]));
      EXPECT_EQ(got < 0 ? -1 : got > 0 ? 1 : 0, want) << ordered[i] << " vs " << ordered[j];
    }
  }
  EXPECT_EQ(SemVersion::Parse("1.0.0+a")->Compare(*SemVersion::Parse("1.0.0+b")), 0);
}

TEST(SplitQualifiedName, UsesTheDriversDomainForUnqualifiedNames) {
  EXPECT_EQ(SplitQualifiedName("model", "gpu.example.com"),
            (std::pair<std::string_view, std::string_view>{"gpu.example.com", "model"}));
  EXPECT_EQ(SplitQualifiedName("other.example.com/zone", "gpu.example.com"),
            (std::pair<std::string_view, std::string_view>{"other.example.com", "zone"}));
}

}  // namespace
}  // namespace ksched::api
