// Piecewise-linear scoring shapes (upstream helper.FunctionShape / BuildBrokenLinearFunction),
// used by NodeResourcesFit's RequestedToCapacityRatio strategy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace ksched::framework::plugins::helper {

struct FunctionShapePoint {
  int64_t utilization = 0;  // x, 0..100, strictly increasing along a shape
  int64_t score = 0;        // y
};

// A broken linear function through the points of `shape` (validated by config: at least
// one point, utilizations strictly increasing). Below the first point it is the first
// score, above the last point the last score; in between it interpolates with integer
// division, exactly as upstream, so scores match to the unit.
class BrokenLinearFunction {
 public:
  explicit BrokenLinearFunction(std::vector<FunctionShapePoint> shape) : shape_(std::move(shape)) {}
  int64_t operator()(int64_t p) const;

 private:
  std::vector<FunctionShapePoint> shape_;
};

}  // namespace ksched::framework::plugins::helper
