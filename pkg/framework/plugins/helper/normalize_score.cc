#include "pkg/framework/plugins/helper/normalize_score.h"

#include <algorithm>

namespace ksched::framework::plugins::helper {

void DefaultNormalizeScore(int64_t max_priority, bool reverse, std::span<NodeScore> scores) {
  int64_t max_count = 0;
  for (const NodeScore& s : scores) max_count = std::max(max_count, s.score);
  if (max_count == 0) {
    if (reverse) {
      for (NodeScore& s : scores) s.score = max_priority;
    }
    return;
  }
  for (NodeScore& s : scores) {
    int64_t score = max_priority * s.score / max_count;
    s.score = reverse ? max_priority - score : score;
  }
}

}  // namespace ksched::framework::plugins::helper
