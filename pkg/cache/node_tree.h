// NodeTree: node names grouped by zone, listed round-robin across zones (upstream
// internal/cache/node_tree.go), so that a scan that stops early (percentageOfNodesToScore)
// still sees every zone. Not thread-safe; the cache guards it with its own lock.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "pkg/api/types.h"

namespace ksched::cache {

// The zone a node belongs to for spreading: region and zone labels, preferring
// topology.kubernetes.io/* over failure-domain.beta.kubernetes.io/*. Empty when the node
// has neither (all such nodes form one group).
std::string ZoneKey(const api::Node& node);

class NodeTree {
 public:
  // Appends the node to its zone; a name already in that zone is ignored (logged).
  void AddNode(const api::Node& node);
  // False when the node is not in the zone its labels name.
  bool RemoveNode(const api::Node& node);
  // Moves the node if its zone changed; returns whether it moved.
  bool UpdateNode(const api::Node& old_node, const api::Node& new_node);

  // All names: the first node of each zone (zones in the order first seen), then the
  // second of each, and so on.
  std::vector<std::string> List() const;
  size_t num_nodes() const { return num_nodes_; }

 private:
  std::unordered_map<std::string, std::vector<std::string>> tree_;
  std::vector<std::string> zones_;
  size_t num_nodes_ = 0;
};

}  // namespace ksched::cache
