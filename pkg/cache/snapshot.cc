#include "pkg/cache/snapshot.h"

#include <unordered_set>

#include "pkg/cache/node_tree.h"

namespace ksched::cache {

Snapshot Snapshot::FromObjects(const std::vector<api::NodePtr>& nodes, const std::vector<api::PodPtr>& pods) {
  // How many nodes have each image, for ImageStateSummary::num_nodes.
  std::unordered_map<std::string, std::unordered_set<std::string>> image_nodes;
  for (const auto& node : nodes) {
    for (const auto& image : node->status.images) {
      for (const auto& name : image.names) image_nodes[name].insert(node->Name());
    }
  }

  std::unordered_map<std::string, NodeInfo> infos;
  NodeTree tree;
  for (const auto& node : nodes) {
    auto [it, inserted] = infos.try_emplace(node->Name());
    if (!inserted) continue;
    ImageStates states;
    for (const auto& image : node->status.images) {
      for (const auto& name : image.names) {
        states.try_emplace(name, ImageStateSummary{image.size_bytes, static_cast<int32_t>(image_nodes[name].size())});
      }
    }
    it->second.SetImageStates(std::move(states));
    it->second.SetNode(node);
    tree.AddNode(*node);
  }
  // Pods on nodes not listed are dropped: a snapshot only holds nodes that exist.
  for (const auto& pod : pods) {
    if (auto it = infos.find(pod->spec.node_name); it != infos.end()) it->second.AddPod(pod);
  }

  Snapshot s;
  for (const std::string& name : tree.List()) {
    NodeInfoPtr ptr = std::make_shared<NodeInfo>(std::move(infos.at(name)));  // not const: see OverwriteInPlace
    s.groups_->Replace(nullptr, ptr.get());
    s.by_name_.emplace(name, Entry{ptr, s.list_.size()});
    s.list_.push_back(std::move(ptr));
  }
  s.RebuildAffinityLists();
  // generation_ stays 0: handed to a cache's UpdateSnapshot, everything is recopied.
  return s;
}

const NodeInfo* Snapshot::Get(std::string_view node_name) const {
  auto it = by_name_.find(node_name);
  if (it == by_name_.end() || it->second.info->node() == nullptr) return nullptr;
  return it->second.info.get();
}

void Snapshot::RebuildAffinityLists() {
  with_affinity_.clear();
  with_required_anti_affinity_.clear();
  for (const NodeInfoPtr& info : list_) {
    bool affinity = info->pods_with_affinity() > 0;
    bool anti = info->pods_with_required_anti_affinity() > 0;
    Entry& e = by_name_.find(info->name())->second;
    e.affinity_index = affinity ? with_affinity_.size() : kNotListed;
    e.anti_affinity_index = anti ? with_required_anti_affinity_.size() : kNotListed;
    if (affinity) with_affinity_.push_back(info);
    if (anti) with_required_anti_affinity_.push_back(info);
  }
}

void Snapshot::UpdateMembership(std::vector<NodeInfoPtr>& list, size_t Entry::*index, Entry& entry,
                                bool member) {
  size_t& at = entry.*index;
  if (member == (at != kNotListed)) return;
  if (member) {
    at = list.size();
    list.push_back(entry.info);
    return;
  }
  if (at != list.size() - 1) {
    list[at] = std::move(list.back());
    by_name_.find(list[at]->name())->second.*index = at;
  }
  list.pop_back();
  at = kNotListed;
}

void Snapshot::UpdateAffinityMembership(Entry& entry) {
  UpdateMembership(with_affinity_, &Entry::affinity_index, entry, entry.info->pods_with_affinity() > 0);
  UpdateMembership(with_required_anti_affinity_, &Entry::anti_affinity_index, entry,
                   entry.info->pods_with_required_anti_affinity() > 0);
}

void Snapshot::ReplaceInLists(Entry& entry, NodeInfoPtr info) {
  list_[entry.list_index] = info;
  if (entry.affinity_index != kNotListed) with_affinity_[entry.affinity_index] = info;
  if (entry.anti_affinity_index != kNotListed) with_required_anti_affinity_[entry.anti_affinity_index] = info;
  SetInfo(entry, std::move(info));
}

bool Snapshot::OverwriteInPlace(Entry& entry, const NodeInfo& info) {
  // The owners the snapshot itself accounts for: the entry, list_, and the affinity
  // lists the node is in. Anyone else (a plugin's state, a copy of the snapshot) keeps
  // the object as it is.
  const long owners = 2 + (entry.affinity_index != kNotListed ? 1 : 0) + (entry.anti_affinity_index != kNotListed ? 1 : 0);
  if (entry.info == nullptr || entry.info.use_count() != owners) return false;
  groups_->Replace(entry.info.get(), &info);
  // Every NodeInfo a snapshot holds is created non-const (make_shared<NodeInfo>).
  *const_cast<NodeInfo*>(entry.info.get()) = info;
  return true;
}

void Snapshot::SetInfo(Entry& entry, NodeInfoPtr info) {
  groups_->Replace(entry.info.get(), info.get());
  entry.info = std::move(info);
}

}  // namespace ksched::cache
