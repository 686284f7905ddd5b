#include "pkg/framework/plugins/helper/resource_score.h"

namespace ksched::framework::plugins::helper {

int64_t BrokenLinearFunction::operator()(int64_t p) const {
  if (shape_.empty()) return 0;
  for (std::size_t i = 0; i < shape_.size(); ++i) {
    if (p > shape_[i].utilization) continue;
    if (i == 0) return shape_[0].score;
    const FunctionShapePoint& lo = shape_[i - 1];
    const FunctionShapePoint& hi = shape_[i];
    return lo.score + (hi.score - lo.score) * (p - lo.utilization) / (hi.utilization - lo.utilization);
  }
  return shape_.back().score;
}

}  // namespace ksched::framework::plugins::helper
