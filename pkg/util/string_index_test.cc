#include "pkg/util/string_index.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

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

// Strings of every length from 0 to 40 that differ from each other in one byte at any
// position (the hash and the comparison read 8, 4 or single bytes at a time) are told
// apart, and each is found again.
TEST(StringIndexTest, TellsApartStringsDifferingInAnyOneByte) {
  StringIndex idx;
  std::vector<std::string> all;
  for (size_t len = 0; len <= 40; ++len) {
    const std::string base(len, 'a');
    all.push_back(base);
    for (size_t at = 0; at < len; ++at) {
      std::string s = base;
      s[at] = 'b';
      all.push_back(s);
      s[at] = static_cast<char>(0x80 | at);  // a high byte
      all.push_back(s);
    }
  }
  for (size_t i = 0; i < all.size(); ++i) ASSERT_EQ(idx.Intern(all[i]), static_cast<int32_t>(i)) << i;
  for (size_t i = 0; i < all.size(); ++i) {
    ASSERT_EQ(idx.Find(all[i]), static_cast<int32_t>(i)) << i;
    ASSERT_EQ(idx.Find(all[i] + "x"), StringIndex::kNone) << i;  // no string has an x
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
