#include "pkg/framework/plugins/helper/resource_score.h"

#include <gtest/gtest.h>

namespace ksched::framework::plugins::helper {
namespace {

// Upstream TestBrokenLinearFunction.
TEST(BrokenLinearFunctionTest, MatchesUpstream) {
  struct Case {
    std::vector<FunctionShapePoint> points;
    std::vector<std::pair<int64_t, int64_t>> p_want;
  };
  const Case cases[] = {
      {{{10, 1}, {90, 9}},
       {{-10, 1}, {0, 1}, {9, 1}, {10, 1}, {15, 1}, {19, 1}, {20, 2}, {89, 8}, {90, 9}, {99, 9}, {100, 9}, {110, 9}}},
      {{{0, 2}, {40, 10}, {100, 0}},
       {{-10, 2}, {0, 2}, {20, 6}, {30, 8}, {40, 10}, {70, 5}, {100, 0}, {110, 0}}},
      {{{0, 2}, {40, 2}, {100, 2}},
       {{-10, 2}, {0, 2}, {20, 2}, {30, 2}, {40, 2}, {70, 2}, {100, 2}, {110, 2}}},
  };
  for (const Case& c : cases) {
    BrokenLinearFunction f(c.points);
    for (auto [p, want] : c.p_want) EXPECT_EQ(f(p), want) << "p=" << p;
  }
}

}  // namespace
}  // namespace ksched::framework::plugins::helper
