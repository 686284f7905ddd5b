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

Status ResourceAllocationScorer::Score(const cache::NodeInfo& node, std::span<const int64_t> pod_requests,
                                       int64_t& score) const {
  if (node.node() == nullptr) return Status::Error("node not found");
  if (resources.empty()) return Status::Error("resources not found");
  if (pod_requests.size() != resources.size()) return Status::Error("pod requests do not match the resources");

  // Scored on every feasible node of every pod: keep the common case off the heap.
  constexpr size_t kInline = 8;
  std::array<ResourceUse, kInline> inline_buf;
  std::vector<ResourceUse> heap_buf;
  std::span<ResourceUse> uses;
  if (resources.size() <= kInline) {
    uses = std::span<ResourceUse>(inline_buf.data(), resources.size());
  } else {
    heap_buf.resize(resources.size());
    uses = heap_buf;
  }

  const cache::Resource& cpu_mem_requested = use_requested ? node.requested() : node.non_zero_requested();
  for (size_t i = 0; i < resources.size(); ++i) {
    const std::string& name = resources[i].name;
    const int64_t pod_request = pod_requests[i];
    ResourceUse& u = uses[i];
    u = ResourceUse{.requested = 0, .allocatable = 0, .weight = resources[i].weight};
    // A scalar resource the pod does not ask for is not scored (extended resources would
    // otherwise pull every pod towards or away from nodes that have them).
    if (pod_request == 0 && cache::IsScalarResourceName(name)) continue;
    if (name == kResourceCpu) {
      u.allocatable = node.allocatable().milli_cpu;
      u.requested = cpu_mem_requested.milli_cpu + pod_request;
    } else if (name == kResourceMemory) {
      u.allocatable = node.allocatable().memory;
      u.requested = cpu_mem_requested.memory + pod_request;
    } else if (name == kResourceEphemeralStorage) {
      u.allocatable = node.allocatable().ephemeral_storage;
      u.requested = node.requested().ephemeral_storage + pod_request;
    } else {
      u.allocatable = node.allocatable().Scalar(name);
      u.requested = node.requested().Scalar(name) + pod_request;
    }
    if (u.allocatable == 0) u.requested = 0;
  }
  score = scorer(uses);
  return Status::Success();
}

}  // namespace ksched::framework::plugins::noderesources
