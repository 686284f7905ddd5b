#include "pkg/framework/plugins/helper/normalize_score.h"

#include <gtest/gtest.h>

namespace ksched::framework::plugins::helper {
namespace {

std::vector<int64_t> Normalize(std::vector<int64_t> in, bool reverse) {
  std::vector<NodeScore> scores;
  for (int64_t s : in) scores.push_back(NodeScore{"n", s});
  DefaultNormalizeScore(kMaxNodeScore, reverse, scores);
  std::vector<int64_t> out;
  for (const NodeScore& s : scores) out.push_back(s.score);
  return out;
}

// Upstream's normalize_score_test cases.
TEST(DefaultNormalizeScoreTest, UpstreamCases) {
  struct Case {
    bool reverse;
    std::vector<int64_t> in, want;
  };
  const Case cases[] = {
      {false, {10, 5, 20}, {50, 25, 100}},
      {true, {10, 5, 20}, {50, 75, 0}},
      {false, {1, 2, 3, 4}, {25, 50, 75, 100}},
      {true, {1, 2, 3, 4}, {75, 50, 25, 0}},
      {false, {1000, 10, 20, 30}, {100, 1, 2, 3}},
      {true, {1000, 10, 20, 30}, {0, 99, 98, 97}},
      {false, {1, 1, 1, 1}, {100, 100, 100, 100}},
      {true, {1, 1, 1, 1}, {0, 0, 0, 0}},
      {false, {0, 0, 0, 0}, {0, 0, 0, 0}},
      {true, {0, 0, 0, 0}, {100, 100, 100, 100}},
      {false, {2, 11, 7}, {18, 100, 63}},  // integer division truncates
      {false, {}, {}},
  };
  for (const Case& c : cases) EXPECT_EQ(Normalize(c.in, c.reverse), c.want);
}

}  // namespace
}  // namespace ksched::framework::plugins::helper
