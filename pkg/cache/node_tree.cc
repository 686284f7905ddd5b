#include "pkg/cache/node_tree.h"

#include <algorithm>

#include "pkg/util/log.h"

namespace ksched::cache {
namespace {

std::string LabelOr(const api::StringMap& labels, std::string_view preferred, std::string_view fallback) {
  if (const std::string* v = labels.Get(preferred)) return *v;
  if (const std::string* v = labels.Get(fallback)) return *v;
  return "";
}

}  // namespace

std::string ZoneKey(const api::Node& node) {
  const api::StringMap& labels = node.metadata.labels;
  std::string zone = LabelOr(labels, api::kLabelTopologyZone, api::kLabelFailureDomainBetaZone);
  std::string region = LabelOr(labels, api::kLabelTopologyRegion, api::kLabelFailureDomainBetaRegion);
  if (region.empty() && zone.empty()) return "";
  // A NUL between the parts keeps "a:" + "b" and "a" + ":b" apart, as upstream does.
  std::string key = std::move(region);
  key.append(":\0:", 3);
  key += zone;
  return key;
}

void NodeTree::AddNode(const api::Node& node) {
  std::string zone = ZoneKey(node);
  auto it = tree_.find(zone);
  if (it == tree_.end()) {
    zones_.push_back(zone);
    it = tree_.emplace(std::move(zone), std::vector<std::string>{}).first;
  } else if (std::find(it->second.begin(), it->second.end(), node.Name()) != it->second.end()) {
    KLOG(WARNING) << "\"Did not add to the NodeTree because it already exists\" node=\"" << node.Name() << "\"";
    return;
  }
  it->second.push_back(node.Name());
  ++num_nodes_;
}

bool NodeTree::RemoveNode(const api::Node& node) {
  std::string zone = ZoneKey(node);
  auto it = tree_.find(zone);
  if (it != tree_.end()) {
    auto& names = it->second;
    if (auto pos = std::find(names.begin(), names.end(), node.Name()); pos != names.end()) {
      names.erase(pos);
      if (names.empty()) {
        tree_.erase(it);
        zones_.erase(std::find(zones_.begin(), zones_.end(), zone));
      }
      --num_nodes_;
      return true;
    }
  }
  KLOG(ERROR) << "\"Did not remove Node in NodeTree because it was not found\" node=\"" << node.Name() << "\"";
  return false;
}

bool NodeTree::UpdateNode(const api::Node& old_node, const api::Node& new_node) {
  if (ZoneKey(old_node) == ZoneKey(new_node)) return false;
  RemoveNode(old_node);  // may be absent; the new zone is what matters
  AddNode(new_node);
  return true;
}

std::vector<std::string> NodeTree::List() const {
  std::vector<std::string> out;
  out.reserve(num_nodes_);
  for (size_t index = 0; out.size() < num_nodes_; ++index) {
    bool any = false;
    for (const std::string& zone : zones_) {
      const auto& names = tree_.at(zone);
      if (index < names.size()) {
        out.push_back(names[index]);
        any = true;
      }
    }
    if (!any) break;  // every zone exhausted: num_nodes_ is off, return what exists
  }
  return out;
}

}  // namespace ksched::cache
