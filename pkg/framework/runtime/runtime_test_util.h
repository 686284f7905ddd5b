// What the runtime tests share beyond the common fakes: pods and nodes with a "uid-"
// UID (the framework keys some state by UID) and a snapshot of numbered nodes. The fake
// plugins and registry helpers are in tests/fakes/fake_plugins.h; `using namespace
// testing` in a runtime test brings in both.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "pkg/api/types.h"
#include "pkg/cache/snapshot.h"
#include "tests/fakes/builders.h"
#include "tests/fakes/fake_plugins.h"

namespace ksched::framework::runtime::testing {

using namespace ::ksched::testing;  // NOLINT: the fakes, as if declared here

inline api::NodePtr MakeNode(std::string name) {
  std::string uid = "uid-" + name;
  return ksched::testing::NodeBuilder(std::move(name)).UID(std::move(uid)).Obj();
}

inline api::PodPtr MakePod(std::string name, int32_t priority = 0, std::string node = "") {
  std::string uid = "uid-" + name;
  return ksched::testing::PodBuilder(std::move(name)).UID(std::move(uid)).Priority(priority).Node(std::move(node)).Obj();
}

inline cache::Snapshot MakeSnapshot(int num_nodes, std::vector<api::PodPtr> pods = {}) {
  std::vector<api::NodePtr> nodes;
  for (int i = 0; i < num_nodes; ++i) nodes.push_back(MakeNode("node-" + std::to_string(i)));
  return cache::Snapshot::FromObjects(nodes, pods);
}

}  // namespace ksched::framework::runtime::testing
