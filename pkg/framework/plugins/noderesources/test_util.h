// Builders shared by the noderesources tests: nodes and pods with given resources, in the
// shapes upstream's tests use; and the loop the score tables share.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "pkg/api/types.h"
#include "pkg/cache/snapshot.h"
#include "pkg/framework/interface.h"
#include "tests/fakes/fake_handle.h"

namespace ksched::framework::plugins::noderesources::fixtures {

inline api::Quantity Milli(int64_t v) { return api::Quantity::FromMilli(v); }
inline api::Quantity Val(int64_t v) { return api::Quantity::FromValue(v); }

// A container requesting `requests` (explicit entries, zeros included).
inline api::Container Container(api::ResourceList requests) {
  api::Container c;
  c.requests = std::move(requests);
  return c;
}

// Upstream makeNode / makeNodeWithExtendedResource: cpu (milli) and memory allocatable,
// plus any extra resources; no pods entry unless given.
inline api::NodePtr Node(std::string name, int64_t milli_cpu, int64_t memory, api::ResourceList extra = {}) {
  auto n = std::make_shared<api::Node>();
  n->metadata.name = std::move(name);
  n->status.allocatable = {{"cpu", Milli(milli_cpu)}, {"memory", Val(memory)}};
  for (auto& e : extra) n->status.allocatable.push_back(std::move(e));
  n->status.capacity = n->status.allocatable;
  return n;
}

inline api::PodPtr Pod(std::string name, std::string node_name, std::vector<api::Container> containers) {
  auto p = std::make_shared<api::Pod>();
  p->metadata.name = std::move(name);
  p->metadata.namespace_ = "default";
  p->metadata.uid = p->metadata.name + "-uid";
  p->spec.node_name = std::move(node_name);
  p->spec.containers = std::move(containers);
  return p;
}

// Upstream's recurring pod specs.
inline std::vector<api::Container> CpuOnly() {
  return {Container({{"cpu", Milli(1000)}, {"memory", Val(0)}}), Container({{"cpu", Milli(2000)}, {"memory", Val(0)}})};
}
inline std::vector<api::Container> CpuAndMemory() {
  return {Container({{"cpu", Milli(1000)}, {"memory", Val(2000)}}),
          Container({{"cpu", Milli(2000)}, {"memory", Val(3000)}})};
}

// The one fake framework handle (tests/fakes/fake_handle.h).
using FakeHandle = ksched::testing::FakeHandle;

// A row of upstream's score tables: `pod` scored on `nodes`, with `pods` already placed;
// `want` holds the score per node, in order.
struct ScoreCase {
  std::string name;
  api::PodPtr pod;
  std::vector<api::NodePtr> nodes;
  std::vector<api::PodPtr> pods;
  std::vector<int64_t> want;
};

// For each case (traced by name): a snapshot of its nodes and pods, plugin `P` built from
// `args` on it, and PreScore run; then `score(plugin, state, handle, case)` checks the
// nodes. A fatal failure stops the remaining cases.
template <typename P, typename Args, typename ScoreFn>
void ForEachScoreCase(const Args& args, const std::vector<ScoreCase>& cases, ScoreFn score) {
  for (const ScoreCase& c : cases) {
    SCOPED_TRACE(c.name);
    FakeHandle handle(cache::Snapshot::FromObjects(c.nodes, c.pods));
    auto plugin = P::New(args, handle);
    ASSERT_TRUE(plugin.ok()) << plugin.status().ToString();
    auto& p = dynamic_cast<P&>(**plugin);
    CycleState state;
    ASSERT_TRUE(p.PreScore(state, *c.pod, handle.Snapshot().List()).IsSuccess());
    score(p, state, handle, c);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

}  // namespace ksched::framework::plugins::noderesources::fixtures
