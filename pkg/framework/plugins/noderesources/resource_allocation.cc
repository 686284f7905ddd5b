#include "pkg/framework/plugins/noderesources/resource_allocation.h"

#include <array>
#include <cmath>
#include <utility>

#include "pkg/framework/interface.h"

namespace ksched::framework::plugins::noderesources {
namespace {

// Upstream's maxUtilization: the x range of a requested-to-capacity shape.
constexpr int64_t kMaxUtilization = 100;

int64_t LeastRequested(int64_t requested, int64_t capacity) {
  if (capacity == 0 || requested > capacity) return 0;
  return (capacity - requested) * kMaxNodeScore / capacity;
}

int64_t MostRequested(int64_t requested, int64_t capacity) {
  if (capacity == 0) return 0;
  // Non-zero request defaults can push requested over capacity.
  if (requested > capacity) requested = capacity;
  return requested * kMaxNodeScore / capacity;
}

template <typename PerResource>
int64_t WeightedMean(std::span<const ResourceUse> uses, PerResource per_resource) {
  int64_t node_score = 0, weight_sum = 0;
  for (const ResourceUse& u : uses) {
    if (u.allocatable == 0) continue;
    node_score += per_resource(u.requested, u.allocatable) * u.weight;
    weight_sum += u.weight;
  }
  return weight_sum == 0 ? 0 : node_score / weight_sum;
}

int64_t ResourceValue(const cache::Resource& r, std::string_view name) {
  if (name == kResourceCpu) return r.milli_cpu;
  if (name == kResourceMemory) return r.memory;
  if (name == kResourceEphemeralStorage) return r.ephemeral_storage;
  return r.Scalar(name);
}

}  // namespace

int64_t LeastAllocatedScore(std::span<const ResourceUse> uses) { return WeightedMean(uses, LeastRequested); }

int64_t MostAllocatedScore(std::span<const ResourceUse> uses) { return WeightedMean(uses, MostRequested); }

ResourceScorerFn RequestedToCapacityRatioScorer(helper::BrokenLinearFunction shape) {
  return [shape = std::move(shape)](std::span<const ResourceUse> uses) -> int64_t {
    int64_t node_score = 0, weight_sum = 0;
    for (const ResourceUse& u : uses) {
      if (u.allocatable == 0) continue;
      int64_t s = u.requested > u.allocatable ? shape(kMaxUtilization)
                                              : shape(u.requested * kMaxUtilization / u.allocatable);
      // Upstream leaves resources scoring 0 out of the mean.
      if (s > 0) {
        node_score += s * u.weight;
        weight_sum += u.weight;
      }
    }
    if (weight_sum == 0) return 0;
    return static_cast<int64_t>(std::round(static_cast<double>(node_score) / static_cast<double>(weight_sum)));
  };
}

int64_t BalancedAllocationScore(std::span<const ResourceUse> uses) {
  double total = 0;
  size_t n = 0;
  double first = 0, second = 0;
  for (const ResourceUse& u : uses) {
    if (u.allocatable == 0) continue;
    double f = std::min(1.0, static_cast<double>(u.requested) / static_cast<double>(u.allocatable));
    if (n == 0) first = f;
    if (n == 1) second = f;
    total += f;
    ++n;
  }
  double std_dev = 0;
  if (n == 2) {
    // The common cpu+memory case: the standard deviation of two values.
    std_dev = std::abs((first - second) / 2);
  } else if (n > 2) {
    double mean = total / static_cast<double>(n);
    double sum = 0;
    for (const ResourceUse& u : uses) {
      if (u.allocatable == 0) continue;
      double f = std::min(1.0, static_cast<double>(u.requested) / static_cast<double>(u.allocatable));
      sum += (f - mean) * (f - mean);
    }
    std_dev = std::sqrt(sum / static_cast<double>(n));
  }
  return static_cast<int64_t>((1 - std_dev) * static_cast<double>(kMaxNodeScore));
}

std::vector<int64_t> ResourceAllocationScorer::PodRequests(const cache::PodRequest& request) const {
  std::vector<int64_t> out;
  out.reserve(resources.size());
  for (const config::ResourceSpec& r : resources) {
    if (!use_requested && r.name == kResourceCpu) {
      out.push_back(request.non_zero_milli_cpu);
    } else if (!use_requested && r.name == kResourceMemory) {
      out.push_back(request.non_zero_memory);
    } else {
      out.push_back(ResourceValue(request.request, r.name));
    }
  }
  return out;
}

namespace {

// How one configured resource is read from a NodeInfo: decided from its name once per
// scoring run, not per node.
enum class Column : uint8_t { kCpu, kMemory, kEphemeralStorage, kScalar, kNotScored };

Column ColumnFor(const std::string& name, int64_t pod_request) {
  // A scalar resource the pod does not ask for is not scored (extended resources would
  // otherwise pull every pod towards or away from nodes that have them).
  if (pod_request == 0 && cache::IsScalarResourceName(name)) return Column::kNotScored;
  if (name == kResourceCpu) return Column::kCpu;
  if (name == kResourceMemory) return Column::kMemory;
  if (name == kResourceEphemeralStorage) return Column::kEphemeralStorage;
  return Column::kScalar;
}

// Room for the common case on the stack: this runs for every feasible node of every pod.
template <typename T>
class SmallBuffer {
 public:
  explicit SmallBuffer(size_t n) : size_(n) {
    if (n > kInline) heap_.resize(n);
  }
  T* data() { return size_ > kInline ? heap_.data() : inline_.data(); }
  std::span<T> span() { return {data(), size_}; }

 private:
  static constexpr size_t kInline = 8;
  size_t size_;
  std::array<T, kInline> inline_{};
  std::vector<T> heap_;
};

}  // namespace

template <typename NodeAt, typename ScoreAt, typename Formula>
Status ResourceAllocationScorer::ScoreEach(size_t n, NodeAt&& node_at, ScoreAt&& score_at,
                                           std::span<const int64_t> pod_requests, Formula&& formula) const {
  if (resources.empty()) return Status::Error("resources not found");
  if (pod_requests.size() != resources.size()) return Status::Error("pod requests do not match the resources");
  const size_t m = resources.size();
  SmallBuffer<Column> columns(m);
  for (size_t i = 0; i < m; ++i) columns.data()[i] = ColumnFor(resources[i].name, pod_requests[i]);
  SmallBuffer<ResourceUse> uses(m);
  for (size_t j = 0; j < n; ++j) {
    const cache::NodeInfo& node = node_at(j);
    if (node.node() == nullptr) return Status::Error("node not found");
    const cache::Resource& allocatable = node.allocatable();
    const cache::Resource& requested = node.requested();
    const cache::Resource& cpu_mem_requested = use_requested ? requested : node.non_zero_requested();
    for (size_t i = 0; i < m; ++i) {
      ResourceUse& u = uses.data()[i];
      const int64_t pod_request = pod_requests[i];
      u = ResourceUse{.requested = 0, .allocatable = 0, .weight = resources[i].weight};
      switch (columns.data()[i]) {
        case Column::kNotScored:
          continue;
        case Column::kCpu:
          u.allocatable = allocatable.milli_cpu;
          u.requested = cpu_mem_requested.milli_cpu + pod_request;
          break;
        case Column::kMemory:
          u.allocatable = allocatable.memory;
          u.requested = cpu_mem_requested.memory + pod_request;
          break;
        case Column::kEphemeralStorage:
          u.allocatable = allocatable.ephemeral_storage;
          u.requested = requested.ephemeral_storage + pod_request;
          break;
        case Column::kScalar:
          u.allocatable = allocatable.Scalar(resources[i].name);
          u.requested = requested.Scalar(resources[i].name) + pod_request;
          break;
      }
      if (u.allocatable == 0) u.requested = 0;
    }
    *score_at(j) = formula(std::span<const ResourceUse>(uses.span()));
  }
  return Status::Success();
}

Status ResourceAllocationScorer::Score(const cache::NodeInfo& node, std::span<const int64_t> pod_requests,
                                       int64_t& score) const {
  return ScoreEach(
      1, [&](size_t) -> const cache::NodeInfo& { return node; }, [&](size_t) { return &score; }, pod_requests, scorer);
}

Status ResourceAllocationScorer::ScoreNodes(std::span<const cache::NodeInfoPtr> nodes,
                                            std::span<const int64_t> pod_requests, std::span<NodeScore> out) const {
  auto node_at = [&](size_t j) -> const cache::NodeInfo& { return *nodes[j]; };
  auto score_at = [&](size_t j) { return &out[j].score; };
  const size_t n = nodes.size();
  // The built-in formulas are called directly (and inlined) rather than through the
  // std::function.
  using Formula = int64_t (*)(std::span<const ResourceUse>);
  if (const Formula* f = scorer.target<Formula>()) {
    if (*f == &LeastAllocatedScore) {
      return ScoreEach(n, node_at, score_at, pod_requests, [](auto u) { return LeastAllocatedScore(u); });
    }
    if (*f == &BalancedAllocationScore) {
      return ScoreEach(n, node_at, score_at, pod_requests, [](auto u) { return BalancedAllocationScore(u); });
    }
    if (*f == &MostAllocatedScore) {
      return ScoreEach(n, node_at, score_at, pod_requests, [](auto u) { return MostAllocatedScore(u); });
    }
  }
  return ScoreEach(n, node_at, score_at, pod_requests, scorer);
}

}  // namespace ksched::framework::plugins::noderesources
