// The normalization most counting scores share (upstream helper.DefaultNormalizeScore).
#pragma once

#include <cstdint>
#include <span>

#include "pkg/framework/interface.h"

namespace ksched::framework::plugins::helper {

// Scales scores to [0, max_priority] by the highest score, with integer division as
// upstream. `reverse` flips them (max_priority - score), so fewer counted things score
// higher. When every score is 0 they stay 0, or all become max_priority when reversed.
void DefaultNormalizeScore(int64_t max_priority, bool reverse, std::span<NodeScore> scores);

}  // namespace ksched::framework::plugins::helper
