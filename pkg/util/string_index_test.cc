#include "pkg/util/string_index.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace ksched {
namespace {

TEST(StringIndexTest, InternsDenselyAndFinds) {
  StringIndex idx;
  EXPECT_EQ(idx.Find("a"), StringIndex::kNone);
  EXPECT_EQ(idx.Intern("a"), 0);
  EXPECT_EQ(idx.Intern("b"), 1);
  EXPECT_EQ(idx.Intern("a"), 0);
  EXPECT_EQ(idx.Intern(""), 2);  // the empty string is a value like any other
  EXPECT_EQ(idx.Find(""), 2);
  EXPECT_EQ(idx.Find("b"), 1);
  EXPECT_EQ(idx.Find("c"), StringIndex::kNone);
  EXPECT_EQ(idx.size(), 3u);
  EXPECT_EQ(idx.at(1), "b");
}

TEST(StringIndexTest, GrowsAndKeepsViewsOfLongAndShortStringsValid) {
  StringIndex idx;
  for (int i = 0; i < 10000; ++i) {
    std::string s = (i % 2 ? "a-rather-long-node-name-that-allocates-" : "n") + std::to_string(i);
    ASSERT_EQ(idx.Intern(s), i);
  }
  for (int i = 0; i < 10000; ++i) {
    std::string s = (i % 2 ? "a-rather-long-node-name-that-allocates-" : "n") + std::to_string(i);
    ASSERT_EQ(idx.Find(s), i);
    ASSERT_EQ(idx.at(i), s);
  }
}

TEST(StringIndexTest, CopiesOwnTheirStrings) {
  auto original = std::make_unique<StringIndex>();
  original->Intern("zone-a");
  original->Intern("a-value-longer-than-the-inline-buffer");
  StringIndex copy = *original;
  original.reset();
  EXPECT_EQ(copy.Find("zone-a"), 0);
  EXPECT_EQ(copy.at(1), "a-value-longer-than-the-inline-buffer");
  EXPECT_EQ(copy.Intern("zone-b"), 2);
  StringIndex assigned;
  assigned.Intern("x");
  assigned = copy;
  EXPECT_EQ(assigned.size(), 3u);
  EXPECT_EQ(assigned.Find("x"), StringIndex::kNone);
}

}  // namespace
}  // namespace ksched
