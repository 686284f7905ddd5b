// Builders shared by the noderesources tests: nodes and pods with given resources, in the
// shapes upstream's tests use.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "pkg/api/types.h"
#include "pkg/cache/snapshot.h"
#include "pkg/framework/interface.h"

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

// A Handle over a fixed snapshot; binds are recorded or failed on demand.
class FakeHandle final : public Handle, public PodBinder {
 public:
  FakeHandle() = default;
  explicit FakeHandle(cache::Snapshot snapshot) : snapshot_(std::move(snapshot)) {}
  const cache::Snapshot& Snapshot() const override { return snapshot_; }
  const PodNominator* Nominator() const override { return nullptr; }
  PodBinder& Binder() override { return *this; }
  int Parallelism() const override { return 1; }

  ksched::Status Bind(const api::Pod& pod, std::string_view node_name) override {
    binds.emplace_back(pod.Key(), std::string(node_name));
    return bind_result;
  }

  std::vector<std::pair<std::string, std::string>> binds;
  ksched::Status bind_result;

 private:
  cache::Snapshot snapshot_;
};

}  // namespace ksched::framework::plugins::noderesources::fixtures
