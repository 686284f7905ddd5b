#include "pkg/cache/cache.h"

#include <algorithm>
#include <functional>
#include <list>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "pkg/cache/node_tree.h"
#include "pkg/util/log.h"
#include "pkg/util/mutex.h"
#include "pkg/util/strings.h"

namespace ksched::cache {

class CacheImpl final : public Cache {
 public:
  explicit CacheImpl(CacheOptions options) : options_(std::move(options)) {}

  Status AssumePod(api::PodPtr pod) override;
  Status FinishBinding(const api::Pod& pod) override;
  Status ForgetPod(const api::Pod& pod) override;
  Status AddPod(api::PodPtr pod) override;
  Status UpdatePod(const api::Pod& old_pod, api::PodPtr new_pod) override;
  Status RemovePod(const api::Pod& pod) override;
  bool IsAssumedPod(const api::Pod& pod) const override;
  StatusOr<api::PodPtr> GetPod(const api::Pod& pod) const override;

  Status AddNode(api::NodePtr node) override;
  Status UpdateNode(const api::Node& old_node, api::NodePtr new_node) override;
  Status RemoveNode(const api::Node& node) override;

  Status UpdateSnapshot(Snapshot& snapshot) override;

  bool HasTerminatingPodBelow(std::string_view node, int32_t priority) const override;
  size_t NodeCount() const override;
  size_t PodCount() const override;
  size_t AssumedPodCount() const override;
  CacheDump Dump() const override;

 private:
  struct PodState {
    api::PodPtr pod;
    bool assumed = false;
    bool binding_finished = false;
  };
  // Most recently updated first (upstream's headNode list): UpdateSnapshot walks from
  // the front and stops at the first NodeInfo not newer than the snapshot.
  using NodeList = std::list<NodeInfo>;

  struct ImageState {
    int64_t size = 0;
    std::unordered_set<std::string> nodes;
  };

  void AddPodLocked(api::PodPtr pod, bool assumed) REQUIRES(mu_);
  void RemovePodLocked(const api::PodPtr& cached) REQUIRES(mu_);
  void MoveToFrontLocked(NodeList::iterator it) REQUIRES(mu_);
  Status SetNodeLocked(api::NodePtr node) REQUIRES(mu_);
  void AddNodeImageStatesLocked(const api::Node& node, NodeInfo& info) REQUIRES(mu_);
  void RemoveNodeImageStatesLocked(const api::Node& node) REQUIRES(mu_);
  void RefreshImageCountsLocked(NodeInfo& info) const REQUIRES(mu_);
  void RebuildSnapshotListsLocked(Snapshot& snapshot) const REQUIRES(mu_);
  void RebuildSnapshotFullyLocked(Snapshot& snapshot) const REQUIRES(mu_);
  Status CorruptedLocked(const std::string& message) const REQUIRES(mu_);

  const CacheOptions options_;

  mutable Mutex mu_;
  NodeList recent_ GUARDED_BY(mu_);
  std::unordered_map<std::string, NodeList::iterator, StringViewHash, std::equal_to<>> nodes_ GUARDED_BY(mu_);
  // Nodes that exist (not ghosts), grouped by zone for the snapshot order.
  NodeTree tree_ GUARDED_BY(mu_);
  // Changes whenever tree_'s membership or order changes.
  int64_t tree_version_ GUARDED_BY(mu_) = NextGeneration();
  std::unordered_map<std::string, PodState> pod_states_ GUARDED_BY(mu_);
  std::unordered_set<std::string> assumed_ GUARDED_BY(mu_);
  std::unordered_map<std::string, ImageState> image_states_ GUARDED_BY(mu_);
};

std::unique_ptr<Cache> NewCache(CacheOptions options) { return std::make_unique<CacheImpl>(std::move(options)); }

// ---- pods ----------------------------------------------------------------------------

Status CacheImpl::AssumePod(api::PodPtr pod) {
  if (pod->spec.node_name.empty()) {
    return InvalidArgument("pod " + pod->Key() + " has no node name, so can't be assumed");
  }
  std::string key = PodCacheKey(*pod);
  MutexLock lock(mu_);
  if (pod_states_.contains(key)) {
    return Status(StatusCode::kAlreadyExists, "pod " + pod->Key() + " is in the cache, so can't be assumed");
  }
  AddPodLocked(std::move(pod), /*assumed=*/true);
  return Status::OK();
}

Status CacheImpl::FinishBinding(const api::Pod& pod) {
  MutexLock lock(mu_);
  if (auto it = pod_states_.find(PodCacheKey(pod)); it != pod_states_.end() && it->second.assumed) {
    it->second.binding_finished = true;
    KLOG_V(5) << "\"Finished binding for pod\" pod=\"" << pod.Key() << "\"";
  }
  return Status::OK();
}

Status CacheImpl::ForgetPod(const api::Pod& pod) {
  MutexLock lock(mu_);
  auto it = pod_states_.find(PodCacheKey(pod));
  if (it == pod_states_.end()) return Status::OK();  // already gone (e.g. deleted meanwhile)
  const PodState& state = it->second;
  if (state.pod->spec.node_name != pod.spec.node_name) {
    return Status(StatusCode::kFailedPrecondition, "pod " + pod.Key() + " was assumed on " + pod.spec.node_name +
                                                       " but assigned to " + state.pod->spec.node_name);
  }
  if (!state.assumed) {
    return Status(StatusCode::kFailedPrecondition, "pod " + pod.Key() + " wasn't assumed so cannot be forgotten");
  }
  api::PodPtr cached = state.pod;  // RemovePodLocked erases `state`
  RemovePodLocked(cached);
  return Status::OK();
}

Status CacheImpl::AddPod(api::PodPtr pod) {
  std::string key = PodCacheKey(*pod);
  MutexLock lock(mu_);
  auto it = pod_states_.find(key);
  if (it == pod_states_.end()) {
    AddPodLocked(std::move(pod), /*assumed=*/false);
    return Status::OK();
  }
  if (!it->second.assumed) {
    return Status(StatusCode::kAlreadyExists, "pod " + pod->Key() + " was already in added state");
  }
  // Confirmation: the watch's copy replaces the assumed one, on whichever node the
  // apiserver says, because that is where the kubelet will run it.
  api::PodPtr assumed = it->second.pod;
  if (assumed->spec.node_name != pod->spec.node_name) {
    KLOG(INFO) << "\"Pod was added to a different node than it was assumed\" pod=\"" << pod->Key()
               << "\" assumedNode=\"" << assumed->spec.node_name << "\" currentNode=\"" << pod->spec.node_name
               << "\"";
  }
  RemovePodLocked(assumed);
  AddPodLocked(std::move(pod), /*assumed=*/false);
  return Status::OK();
}

Status CacheImpl::UpdatePod(const api::Pod& old_pod, api::PodPtr new_pod) {
  MutexLock lock(mu_);
  auto it = pod_states_.find(PodCacheKey(old_pod));
  if (it == pod_states_.end()) {
    return NotFound("pod " + old_pod.Key() + " is not added to scheduler cache, so cannot be updated");
  }
  if (it->second.assumed) {
    return Status(StatusCode::kFailedPrecondition, "assumed pod " + old_pod.Key() + " should not be updated");
  }
  if (it->second.pod->spec.node_name != new_pod->spec.node_name) {
    return CorruptedLocked("pod " + old_pod.Key() + " updated on node " + new_pod->spec.node_name +
                           ", different from the node it was added to (" + it->second.pod->spec.node_name + ")");
  }
  api::PodPtr cached = it->second.pod;
  RemovePodLocked(cached);
  AddPodLocked(std::move(new_pod), /*assumed=*/false);
  return Status::OK();
}

Status CacheImpl::RemovePod(const api::Pod& pod) {
  MutexLock lock(mu_);
  auto it = pod_states_.find(PodCacheKey(pod));
  if (it == pod_states_.end()) {
    return NotFound("pod " + pod.Key() + " is not found in scheduler cache, so cannot be removed from it");
  }
  api::PodPtr cached = it->second.pod;
  if (cached->spec.node_name != pod.spec.node_name) {
    // An empty node name is a tombstone carrying the informer's last known state after
    // a missed delete; any other mismatch means the cache lost track of the pod.
    if (!pod.spec.node_name.empty()) {
      return CorruptedLocked("pod " + pod.Key() + " removed from node " + pod.spec.node_name +
                             " but it was added to " + cached->spec.node_name);
    }
    KLOG(ERROR) << "\"Pod was added to a different node than it was assumed\" pod=\"" << pod.Key()
                << "\" currentNode=\"" << cached->spec.node_name << "\"";
  }
  RemovePodLocked(cached);
  return Status::OK();
}

bool CacheImpl::IsAssumedPod(const api::Pod& pod) const {
  MutexLock lock(mu_);
  return assumed_.contains(PodCacheKey(pod));
}

StatusOr<api::PodPtr> CacheImpl::GetPod(const api::Pod& pod) const {
  MutexLock lock(mu_);
  auto it = pod_states_.find(PodCacheKey(pod));
  if (it == pod_states_.end()) return NotFound("pod " + pod.Key() + " does not exist in scheduler cache");
  return it->second.pod;
}

void CacheImpl::AddPodLocked(api::PodPtr pod, bool assumed) {
  const std::string& node_name = pod->spec.node_name;
  auto it = nodes_.find(node_name);
  if (it == nodes_.end()) {
    // The pod's node has not arrived yet (separate watch); count the pod anyway.
    recent_.emplace_front();
    it = nodes_.emplace(node_name, recent_.begin()).first;
  } else {
    MoveToFrontLocked(it->second);
  }
  std::string key = PodCacheKey(*pod);
  it->second->AddPod(pod);
  if (assumed) assumed_.insert(key);
  pod_states_[std::move(key)] = PodState{std::move(pod), assumed, false};
}

void CacheImpl::RemovePodLocked(const api::PodPtr& cached) {
  const std::string& node_name = cached->spec.node_name;
  std::string key = PodCacheKey(*cached);
  if (auto it = nodes_.find(node_name); it == nodes_.end()) {
    KLOG(ERROR) << "\"Node not found when trying to remove pod\" node=\"" << node_name << "\" pod=\""
                << cached->Key() << "\"";
  } else {
    NodeList::iterator info = it->second;
    if (!info->RemovePod(*cached)) {
      KLOG(ERROR) << "\"Pod not found on its node when removing it\" node=\"" << node_name << "\" pod=\""
                  << cached->Key() << "\"";
    }
    if (info->pods().empty() && info->node() == nullptr) {
      recent_.erase(info);  // a ghost (or never-seen node) whose last pod left
      nodes_.erase(it);
    } else {
      MoveToFrontLocked(info);
    }
  }
  assumed_.erase(key);
  pod_states_.erase(key);
}

void CacheImpl::MoveToFrontLocked(NodeList::iterator it) { recent_.splice(recent_.begin(), recent_, it); }

// ---- nodes ---------------------------------------------------------------------------

Status CacheImpl::AddNode(api::NodePtr node) {
  MutexLock lock(mu_);
  return SetNodeLocked(std::move(node));
}

Status CacheImpl::UpdateNode(const api::Node& /*old_node*/, api::NodePtr new_node) {
  MutexLock lock(mu_);
  return SetNodeLocked(std::move(new_node));
}

Status CacheImpl::SetNodeLocked(api::NodePtr node) {
  auto it = nodes_.find(node->Name());
  if (it == nodes_.end()) {
    recent_.emplace_front();
    it = nodes_.emplace(node->Name(), recent_.begin()).first;
    tree_.AddNode(*node);
    tree_version_ = NextGeneration();
  } else {
    NodeInfo& info = *it->second;
    if (const api::Node* old = info.node()) {
      RemoveNodeImageStatesLocked(*old);
      if (tree_.UpdateNode(*old, *node)) tree_version_ = NextGeneration();
    } else {
      // Its pods arrived first, or it is a ghost coming back.
      tree_.AddNode(*node);
      tree_version_ = NextGeneration();
    }
    MoveToFrontLocked(it->second);
  }
  AddNodeImageStatesLocked(*node, *it->second);
  it->second->SetNode(std::move(node));
  return Status::OK();
}

Status CacheImpl::RemoveNode(const api::Node& node) {
  MutexLock lock(mu_);
  auto it = nodes_.find(node.Name());
  if (it == nodes_.end() || it->second->node() == nullptr) {
    return NotFound("node " + node.Name() + " is not found");
  }
  NodeList::iterator info = it->second;
  // The cached object, not the caller's: it is what tree_ and image_states_ recorded.
  api::NodePtr cached = info->node_ptr();
  tree_.RemoveNode(*cached);
  tree_version_ = NextGeneration();
  RemoveNodeImageStatesLocked(*cached);
  info->RemoveNode();
  if (info->pods().empty()) {
    recent_.erase(info);
    nodes_.erase(it);
  } else {
    MoveToFrontLocked(info);  // a ghost until its pods' delete events arrive
  }
  return Status::OK();
}

// Each NodeInfo gets the image summaries as of this moment; their num_nodes are brought
// up to date whenever the NodeInfo is copied into a snapshot (RefreshImageCountsLocked).
void CacheImpl::AddNodeImageStatesLocked(const api::Node& node, NodeInfo& info) {
  ImageStates summaries;
  for (const auto& image : node.status.images) {
    for (const auto& name : image.names) {
      auto [it, inserted] = image_states_.try_emplace(name);
      if (inserted) it->second.size = image.size_bytes;
      it->second.nodes.insert(node.Name());
      summaries.try_emplace(name, ImageStateSummary{it->second.size, static_cast<int32_t>(it->second.nodes.size())});
    }
  }
  info.SetImageStates(std::move(summaries));
}

// As today's upstream (NodeInfo.Snapshot() counts the nodes of the cache's shared image
// state when it clones a changed NodeInfo): the number of nodes having each image is
// the count at the time of the copy, not at the time the node was added, so it does not
// depend on the order in which the informer delivered the nodes. (kube-scheduler 1.20
// kept the count as of the node's add.)
void CacheImpl::RefreshImageCountsLocked(NodeInfo& info) const {
  const ImageStates& current = info.image_states();
  if (current.empty()) return;
  std::optional<ImageStates> refreshed;
  for (const auto& [name, summary] : current) {
    auto it = image_states_.find(name);
    const int32_t count = it == image_states_.end() ? 0 : static_cast<int32_t>(it->second.nodes.size());
    if (count == summary.num_nodes) continue;
    if (!refreshed) refreshed = current;
    (*refreshed)[name].num_nodes = count;
  }
  if (refreshed) info.SetImageStates(std::move(*refreshed));
}

void CacheImpl::RemoveNodeImageStatesLocked(const api::Node& node) {
  for (const auto& image : node.status.images) {
    for (const auto& name : image.names) {
      auto it = image_states_.find(name);
      if (it == image_states_.end()) continue;
      it->second.nodes.erase(node.Name());
      if (it->second.nodes.empty()) image_states_.erase(it);
    }
  }
}

// ---- snapshots -----------------------------------------------------------------------

Status CacheImpl::UpdateSnapshot(Snapshot& snapshot) {
  MutexLock lock(mu_);
  const int64_t since = snapshot.generation_;
  bool rebuild_lists = snapshot.tree_version_ != tree_version_;

  for (NodeInfo& info : recent_) {
    if (info.generation() <= since) break;  // the rest is older than the snapshot
    if (info.node() == nullptr) continue;   // ghosts and not-yet-seen nodes stay out
    RefreshImageCountsLocked(info);
    auto [it, inserted] = snapshot.by_name_.try_emplace(info.name());
    if (inserted || rebuild_lists) {
      rebuild_lists = true;
      snapshot.SetInfo(it->second, std::make_shared<NodeInfo>(info));  // not const: see OverwriteInPlace
      continue;
    }
    if (!snapshot.OverwriteInPlace(it->second, info)) snapshot.ReplaceInLists(it->second, std::make_shared<NodeInfo>(info));
    snapshot.UpdateAffinityMembership(it->second);
  }
  if (!recent_.empty()) snapshot.generation_ = std::max(snapshot.generation_, recent_.front().generation());

  if (rebuild_lists) RebuildSnapshotListsLocked(snapshot);

  if (snapshot.list_.size() != tree_.num_nodes() || snapshot.by_name_.size() != tree_.num_nodes()) {
    std::string message = "snapshot state is not consistent, length of NodeInfoList=" +
                          std::to_string(snapshot.list_.size()) +
                          " not equal to length of nodes in tree=" + std::to_string(tree_.num_nodes()) +
                          ", length of NodeInfoMap=" + std::to_string(snapshot.by_name_.size()) +
                          ", length of nodes in cache=" + std::to_string(nodes_.size()) + ", trying to recover";
    KLOG(ERROR) << "\"" << message << "\"";
    RebuildSnapshotFullyLocked(snapshot);
    return Internal(message);
  }
  return Status::OK();
}

// Orders list_ by the node tree and drops entries for nodes no longer in it; the
// NodeInfo copies already in the snapshot are reused.
void CacheImpl::RebuildSnapshotListsLocked(Snapshot& snapshot) const {
  decltype(snapshot.by_name_) by_name;
  by_name.reserve(tree_.num_nodes());
  snapshot.list_.clear();
  snapshot.list_.reserve(tree_.num_nodes());
  for (std::string& name : tree_.List()) {
    auto it = snapshot.by_name_.find(name);
    if (it == snapshot.by_name_.end()) {
      KLOG(ERROR) << "\"Node exists in nodeTree but not in NodeInfoMap, this should not happen\" node=\"" << name
                  << "\"";
      continue;
    }
    // Each node gets a fresh copy, made in list order: a Filter pass walks the list, and
    // NodeInfos that lie one after another in memory in that order stream in through
    // the hardware prefetcher instead of each waiting on a cache miss of its own (at
    // 15,000 nodes that wait was the largest cost of a scheduling cycle). Updates then
    // keep these addresses (Snapshot::OverwriteInPlace). Same contents: the pod groups
    // do not change. Whoever holds the old copy keeps it.
    NodeInfoPtr info = std::make_shared<NodeInfo>(*it->second.info);
    it->second.info.reset();  // taken: not among the nodes left behind below
    snapshot.list_.push_back(info);
    by_name.emplace(std::move(name), Snapshot::Entry{.info = std::move(info), .list_index = snapshot.list_.size() - 1});
  }
  // What is left behind are nodes no longer in the tree: their pods leave the groups.
  for (auto& [name, entry] : snapshot.by_name_) {
    if (entry.info != nullptr) snapshot.groups_->Replace(entry.info.get(), nullptr);
  }
  snapshot.by_name_ = std::move(by_name);
  snapshot.RebuildAffinityLists();
  snapshot.tree_version_ = tree_version_;
}

void CacheImpl::RebuildSnapshotFullyLocked(Snapshot& snapshot) const {
  snapshot.by_name_.clear();
  snapshot.groups_->Clear();
  for (const NodeInfo& info : recent_) {
    if (info.node() != nullptr) snapshot.SetInfo(snapshot.by_name_[info.name()], std::make_shared<NodeInfo>(info));
  }
  RebuildSnapshotListsLocked(snapshot);
  snapshot.generation_ = recent_.empty() ? snapshot.generation_ : recent_.front().generation();
}

Status CacheImpl::CorruptedLocked(const std::string& message) const {
  KLOG(ERROR) << "\"" << message << "\"";
  if (options_.on_corruption) {
    options_.on_corruption(message);
  } else {
    KLOG(FATAL) << "\"SchedulerCache is corrupted and can badly affect scheduling decisions\"";
  }
  return Internal("scheduler cache is corrupted: " + message);
}

// ---- introspection -------------------------------------------------------------------

bool CacheImpl::HasTerminatingPodBelow(std::string_view node, int32_t priority) const {
  MutexLock lock(mu_);
  auto it = nodes_.find(node);
  return it != nodes_.end() && it->second->HasTerminatingPodBelow(priority);
}

size_t CacheImpl::NodeCount() const {
  MutexLock lock(mu_);
  return nodes_.size();
}

size_t CacheImpl::PodCount() const {
  MutexLock lock(mu_);
  return pod_states_.size();
}

size_t CacheImpl::AssumedPodCount() const {
  MutexLock lock(mu_);
  return assumed_.size();
}

CacheDump CacheImpl::Dump() const {
  MutexLock lock(mu_);
  CacheDump dump;
  for (const auto& [name, it] : nodes_) dump.nodes.emplace(name, *it);
  for (const std::string& key : assumed_) dump.assumed_pods.push_back(pod_states_.at(key).pod->Key());
  std::sort(dump.assumed_pods.begin(), dump.assumed_pods.end());
  return dump;
}

}  // namespace ksched::cache
