#include "pkg/leaderelection/identity.h"

#include <gtest/gtest.h>

#include <regex>
#include <set>

namespace ksched::leaderelection {
namespace {

TEST(IdentityTest, UuidIsRandomVersion4) {
  const std::regex v4("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}");
  std::set<std::string> seen;
  for (int i = 0; i < 100; ++i) {
    std::string u = NewUuid();
    EXPECT_TRUE(std::regex_match(u, v4)) << u;
    seen.insert(u);
  }
  EXPECT_EQ(seen.size(), 100u);
}

TEST(IdentityTest, HostnameUnderscoreUuid) {
  std::string id = UniqueIdentity("node-1");
  EXPECT_EQ(id.rfind("node-1_", 0), 0u) << id;
  EXPECT_EQ(id.size(), std::string("node-1_").size() + 36);
}

}  // namespace
}  // namespace ksched::leaderelection
