// NodeInfo: one node plus the pods the scheduler counts on it (bound, and assumed ones),
// with the aggregates filters and scores need precomputed (upstream framework.NodeInfo).
// Snapshots hold immutable copies; the cache mutates its own copies under its lock.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "pkg/api/pod_affinity.h"
#include "pkg/api/types.h"

namespace ksched::cache {

// Resource amounts as the scheduler counts them (upstream framework.Resource).
struct Resource {
  int64_t milli_cpu = 0;
  int64_t memory = 0;             // bytes
  int64_t ephemeral_storage = 0;  // bytes
  int64_t allowed_pod_number = 0;
  // Extended and hugepages resources: name -> value (Value(), not milli).
  std::vector<std::pair<std::string, int64_t>> scalar;

  // From a node's allocatable (or any ResourceList): cpu/memory/ephemeral-storage/pods and
  // the scalar resources (extended "domain/name", "hugepages-*", "attachable-volumes-*").
  static Resource FromList(const api::ResourceList& list);
  void Add(const Resource& other);
  void Sub(const Resource& other);
  // Elementwise max (used for init containers).
  void SetMax(const Resource& other);
  int64_t Scalar(std::string_view name) const;
  void AddScalar(std::string_view name, int64_t value);
  bool operator==(const Resource&) const = default;
};

// True for names counted in Resource::scalar: extended resources ("example.com/gpu"),
// hugepages-*, attachable-volumes-*.
bool IsScalarResourceName(std::string_view name);

// Defaults the scheduler uses for a container that requests no cpu / memory when
// spreading load (upstream schedutil.DefaultMilliCPURequest / DefaultMemoryRequest).
inline constexpr int64_t kDefaultMilliCpuRequest = 100;
inline constexpr int64_t kDefaultMemoryRequest = 200 * 1024 * 1024;

// What a pod asks for, computed once per pod (upstream computePodResourceRequest):
// max(sum of regular containers + sidecars, each init container with the sidecars
// started before it) + overhead.
struct PodRequest {
  Resource request;
  // The same, but cpu and memory of 0 count as the defaults above (for scoring).
  int64_t non_zero_milli_cpu = 0;
  int64_t non_zero_memory = 0;
};
PodRequest ComputePodRequest(const api::Pod& pod);

// A host port in use: (ip, protocol, port). ip "0.0.0.0" means every address.
struct HostPort {
  std::string ip;
  std::string protocol;
  int32_t port = 0;
  auto operator<=>(const HostPort&) const = default;
};

// Host ports used on a node, with upstream's conflict rule: the same protocol and port
// conflict if either ip is 0.0.0.0 or both ips are equal.
class HostPortInfo {
 public:
  void Add(const HostPort& p);
  void Remove(const HostPort& p);
  bool CheckConflict(const HostPort& p) const;
  size_t size() const { return ports_.size(); }

 private:
  std::multiset<HostPort> ports_;
};

// The host ports a pod wants (containers' ports with hostPort > 0); an empty ip is 0.0.0.0.
std::vector<HostPort> PodHostPorts(const api::Pod& pod);

// A pod counted on a node, with its request computed once.
struct PodEntry {
  api::PodPtr pod;
  PodRequest request;
  bool has_affinity = false;                // pod affinity or anti-affinity (any)
  bool has_required_anti_affinity = false;  // required pod anti-affinity
  // Whether the pod holds host ports (PodHostPorts non-empty); kUnknown for an entry
  // not made by MakePodEntry, which NodeInfo then works out from the pod.
  enum class HostPorts : uint8_t { kUnknown, kNone, kSome };
  HostPorts host_ports = HostPorts::kUnknown;
  // The pod's affinity terms, parsed once when the pod is added (null without any);
  // shared by every copy of the entry (snapshots).
  std::shared_ptr<const api::PodAffinityTerms> affinity_terms;
};

// The entry of a pod: its request, host ports and affinity terms computed once.
PodEntry MakePodEntry(api::PodPtr pod);

struct ImageStateSummary {
  int64_t size = 0;       // bytes
  int32_t num_nodes = 0;  // nodes that have the image
};

using ImageStates = std::map<std::string, ImageStateSummary, std::less<>>;

// The next value of the process-wide generation counter (upstream nextGeneration()).
// One counter for all NodeInfos, so a node deleted and re-added under the same name
// never reuses a generation a snapshot has already seen.
int64_t NextGeneration();

// The identity of a pod in the cache and in NodeInfo: its uid, or "namespace/name"
// when the uid is empty (objects built by hand in tests and what-if snapshots).
std::string PodCacheKey(const api::Pod& pod);
// PodCacheKey(a) == PodCacheKey(b), without building the keys.
bool SamePodKey(const api::Pod& a, const api::Pod& b);

using api::kLabelHostname;
using api::kLabelTopologyZone;

// A topology.kubernetes.io/zone value's id in this process: dense from 0 in the order
// values are first seen, never reused (a cluster has few zones). A plugin that numbers
// the zones of a cycle maps a node's zone_id() to its own number with an array instead of
// hashing the value. Thread-safe.
int32_t ZoneId(std::string_view zone);

class NodeInfo {
 public:
  NodeInfo() = default;
  explicit NodeInfo(api::NodePtr node) { SetNode(std::move(node)); }

  // Sets or replaces the node object; recomputes allocatable.
  void SetNode(api::NodePtr node);
  // Drops the node object but keeps the pods (a ghost); bumps the generation.
  void RemoveNode();
  const api::NodePtr& node_ptr() const { return node_; }
  // Null for a "ghost" NodeInfo whose node was deleted before its pods.
  const api::Node* node() const { return node_.get(); }
  // The node's spec.unschedulable, and whether it has any taint, kept here so that the
  // Filter and Score passes read no more than the NodeInfo for a node without taints.
  bool unschedulable() const { return unschedulable_; }
  bool has_taints() const { return has_taints_; }
  const std::string& name() const;
  // The same name, read without touching the Node object (the Score pass's results).
  std::string_view name_view() const { return name_view_; }
  // The node's kubernetes.io/hostname and topology.kubernetes.io/zone labels (null
  // without them), found once per Node object: the spreading and affinity plugins read
  // them for every node in every cycle. zone_id(): the zone's ZoneId, -1 without one.
  const std::string* hostname_label() const { return hostname_label_; }
  const std::string* zone_label() const { return zone_label_; }
  int32_t zone_id() const { return zone_id_; }

  // Adds MakePodEntry(pod).
  void AddPod(api::PodPtr pod);
  // Adds an entry computed earlier (e.g. one taken off a copy of this node).
  void AddPodEntry(PodEntry entry);
  // Removes the pod with this pod's uid (or namespace/name when uids are empty).
  // Returns false if it was not on this node.
  bool RemovePod(const api::Pod& pod);
  // Removes every pod after the first n (those added last), e.g. to undo AddPodEntry
  // calls on a what-if copy.
  void TruncatePods(size_t n);

  const std::vector<PodEntry>& pods() const { return pods_; }
  size_t pods_with_affinity() const { return pods_with_affinity_; }
  size_t pods_with_required_anti_affinity() const { return pods_with_required_anti_affinity_; }
  // Whether a pod of priority below `priority` is being deleted here: the victims a
  // preemptor nominated to this node waits for (upstream PodEligibleToPreemptOthers).
  bool HasTerminatingPodBelow(int32_t priority) const;
  const Resource& requested() const { return requested_; }
  // Requested cpu/memory with zero requests counted as the defaults (for scoring).
  const Resource& non_zero_requested() const { return non_zero_requested_; }
  const Resource& allocatable() const { return allocatable_; }
  const HostPortInfo& used_ports() const { return used_ports_; }
  // Image name -> size and how many nodes in the cluster have it (filled by the cache).
  const ImageStates& image_states() const { return image_states_ ? *image_states_ : EmptyImageStates(); }
  // Does not bump the generation: the cache calls it right before SetNode. A node
  // without images keeps a null map, so scoring it reads nothing outside the NodeInfo.
  void SetImageStates(ImageStates states) {
    image_states_ = states.empty() ? nullptr : std::make_shared<const ImageStates>(std::move(states));
  }

  // A pass over hundreds of nodes per cycle (Filter, Score) waits on memory more than it
  // computes: each node is a NodeInfo plus, for a node with taints, its Node object,
  // apart in the heap (what else the default plugins read of a plain pod's node is kept
  // in the NodeInfo). These start loading them ahead of use, in two steps because the
  // Node's address is read from the NodeInfo: PrefetchInfo a few nodes ahead,
  // PrefetchNode on a nearer one.
  // PrefetchAhead does both for a pass about to visit position i of [.., end), where
  // at(j) is the NodeInfo at position j.
  static constexpr int kPrefetchInfoAhead = 16;
  static constexpr int kPrefetchNodeAhead = 8;
  template <typename At>
  static void PrefetchAhead(int i, int end, At&& at) {
    if (i + kPrefetchInfoAhead < end) at(i + kPrefetchInfoAhead).PrefetchInfo();
    if (i + kPrefetchNodeAhead < end) at(i + kPrefetchNodeAhead).PrefetchNode();
  }
  void PrefetchInfo() const {
    const char* p = reinterpret_cast<const char*>(this);
    for (size_t off = 0; off < sizeof(NodeInfo); off += 64) __builtin_prefetch(p + off);
    KeepPrefetches(p);
  }
  void PrefetchNode() const {
    if (!has_taints_) return;  // nothing the basic passes read is outside the NodeInfo
    if (const api::Node* n = node_.get()) {
      __builtin_prefetch(&n->spec);
      KeepPrefetches(n);
    }
  }
  // GCC 12 at -O2 deleted the prefetches of PrefetchAhead as dead code (a prefetch is
  // no side effect to its dead-code pass): the Filter pass ran with none ahead of it.
  // An empty asm statement that takes the address is one; it emits no instruction.
  static void KeepPrefetches(const void* p) { asm volatile("" : : "r"(p)); }

  // Bumped on every change; snapshots copy only NodeInfos newer than their own.
  int64_t generation() const { return generation_; }
  void set_generation(int64_t g) { generation_ = g; }

 private:
  // Removes pods_[i] and what it counted for.
  void RemoveAt(size_t i);

  api::NodePtr node_;
  bool unschedulable_ = false;
  bool has_taints_ = false;
  std::string_view name_view_;  // into *node_
  const std::string* hostname_label_ = nullptr;  // into *node_
  const std::string* zone_label_ = nullptr;      // into *node_
  int32_t zone_id_ = -1;
  std::vector<PodEntry> pods_;
  size_t pods_with_affinity_ = 0;
  size_t pods_with_required_anti_affinity_ = 0;
  Resource requested_;
  Resource non_zero_requested_;
  Resource allocatable_;
  HostPortInfo used_ports_;
  static const ImageStates& EmptyImageStates();

  // Shared between copies: the cache replaces it wholesale and never edits it, so a
  // snapshot copy of a node with many images does not copy the map.
  std::shared_ptr<const ImageStates> image_states_;
  int64_t generation_ = 0;
};

using NodeInfoPtr = std::shared_ptr<const NodeInfo>;

}  // namespace ksched::cache
