// The compact object model: Pod and Node with exactly the fields scheduling needs.
// Objects decoded from the API are immutable and shared as std::shared_ptr<const Pod>
// between the informer store, the queue and the cache.
//
// Memory: the informer store keeps every pod of the cluster, so the decoder keeps only
// what a scheduler reads (bench_decode: <= 2 KB retained per realistic pod). What it
// leaves out on purpose, and why, is noted at each field:
//   - annotations: only keys registered with RetainAnnotationKeys (none by default);
//   - status.conditions: only PodScheduled (the one condition the scheduler reads and
//     patches);
//   - container ports: only those with a hostPort (all NodePorts looks at); no limits;
//   - volumes: only claims, generic ephemeral volumes, inline CSI volumes and the
//     in-tree disks VolumeRestrictions compares;
//   - containers, affinity, tolerations and spread constraints are shared between pods
//     with identical JSON for them (replicas of one template), see shared.h.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pkg/api/quantity.h"
#include "pkg/api/shared.h"

namespace ksched::api {

// A small string->string map kept as a vector sorted by key: labels, annotations and
// nodeSelector hold a handful of entries, so this is smaller and faster than std::map.
class StringMap {
 public:
  using Entry = std::pair<std::string, std::string>;

  StringMap() = default;
  StringMap(std::initializer_list<Entry> entries);

  // Inserts or replaces; keeps the vector sorted.
  void Set(std::string key, std::string value);
  const std::string* Get(std::string_view key) const;
  // Capacity hint for decoders that know the entry count up front.
  void Reserve(size_t n);
  bool Has(std::string_view key) const { return Get(key) != nullptr; }
  bool empty() const { return entries_.empty(); }
  size_t size() const { return entries_.size(); }
  auto begin() const { return entries_.begin(); }
  auto end() const { return entries_.end(); }
  bool operator==(const StringMap&) const = default;

 private:
  static constexpr size_t kLinearScanMax = 8;
  std::vector<Entry> entries_;
};

// ---- metadata ---------------------------------------------------------------------------

// Well-known node (and PersistentVolume) labels (upstream v1.LabelHostname,
// v1.LabelTopologyZone, ...).
inline constexpr std::string_view kLabelHostname = "kubernetes.io/hostname";
inline constexpr std::string_view kLabelTopologyZone = "topology.kubernetes.io/zone";
inline constexpr std::string_view kLabelTopologyRegion = "topology.kubernetes.io/region";
inline constexpr std::string_view kLabelFailureDomainBetaZone = "failure-domain.beta.kubernetes.io/zone";
inline constexpr std::string_view kLabelFailureDomainBetaRegion = "failure-domain.beta.kubernetes.io/region";

struct OwnerReference {
  std::string api_version, kind, name, uid;
  bool controller = false;
  bool operator==(const OwnerReference&) const = default;
};

struct ObjectMeta {
  std::string name;
  std::string namespace_;
  std::string uid;
  std::string resource_version;
  int64_t generation = 0;
  std::string creation_timestamp;                 // RFC 3339, as sent by the server
  std::optional<std::string> deletion_timestamp;  // set when the object is being deleted
  StringMap labels;
  // Decoded only for keys registered with RetainAnnotationKeys (json.h): no plugin of
  // ours reads annotations, and they are often the largest part of a pod's metadata
  // (last-applied-configuration, checksums, tooling state).
  StringMap annotations;
  std::vector<OwnerReference> owner_references;
  bool operator==(const ObjectMeta&) const = default;
};

// ---- selectors and affinity ---------------------------------------------------------------

// kUnknown: an operator this build does not know (sent by a newer apiserver). It decodes
// rather than failing the object; selectors that use it fail to parse, as upstream's
// LabelSelectorAsSelector and NodeSelectorRequirementsAsSelector reject it.
enum class SelectorOperator { kIn, kNotIn, kExists, kDoesNotExist, kGt, kLt, kUnknown };

struct LabelSelectorRequirement {  // also used for node selector requirements
  std::string key;
  SelectorOperator op = SelectorOperator::kIn;
  std::vector<std::string> values;
  bool operator==(const LabelSelectorRequirement&) const = default;
};

struct LabelSelector {
  StringMap match_labels;
  std::vector<LabelSelectorRequirement> match_expressions;
  bool operator==(const LabelSelector&) const = default;
};

struct NodeSelectorTerm {
  std::vector<LabelSelectorRequirement> match_expressions;  // against node labels
  std::vector<LabelSelectorRequirement> match_fields;       // only metadata.name is supported upstream
  bool operator==(const NodeSelectorTerm&) const = default;
};

struct PreferredSchedulingTerm {
  int32_t weight = 0;
  NodeSelectorTerm preference;
  bool operator==(const PreferredSchedulingTerm&) const = default;
};

struct NodeAffinity {
  // requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms; nullopt when absent
  // (an empty list of terms matches no node).
  std::optional<std::vector<NodeSelectorTerm>> required;
  std::vector<PreferredSchedulingTerm> preferred;
  bool operator==(const NodeAffinity&) const = default;
};

struct PodAffinityTerm {
  std::optional<LabelSelector> label_selector;
  std::vector<std::string> namespaces;
  std::string topology_key;
  std::optional<LabelSelector> namespace_selector;
  // Keys whose values on the pod itself are added to label_selector as `key In (value)`
  // (match) or `key NotIn (value)` (mismatch). Newer API servers fold them into the
  // selector at creation; folding again is harmless (see pod_affinity.h).
  std::vector<std::string> match_label_keys;
  std::vector<std::string> mismatch_label_keys;
  bool operator==(const PodAffinityTerm&) const = default;
};

struct WeightedPodAffinityTerm {
  int32_t weight = 0;
  PodAffinityTerm term;
  bool operator==(const WeightedPodAffinityTerm&) const = default;
};

struct PodAffinity {  // used for both podAffinity and podAntiAffinity
  std::vector<PodAffinityTerm> required;
  std::vector<WeightedPodAffinityTerm> preferred;
  bool operator==(const PodAffinity&) const = default;
};

struct Affinity {
  std::optional<NodeAffinity> node_affinity;
  std::optional<PodAffinity> pod_affinity;
  std::optional<PodAffinity> pod_anti_affinity;
  bool operator==(const Affinity&) const = default;
};

// ---- taints and tolerations --------------------------------------------------------------

// kUnknown: an effect this build does not know. Upstream's filters look only at
// NoSchedule/NoExecute and its scorer only at PreferNoSchedule, so such a taint is ignored;
// a toleration with it tolerates no known taint (v1 Toleration.ToleratesTaint).
enum class TaintEffect { kNone, kNoSchedule, kPreferNoSchedule, kNoExecute, kUnknown };
std::string_view TaintEffectName(TaintEffect e);

struct Taint {
  std::string key, value;
  TaintEffect effect = TaintEffect::kNoSchedule;
  bool operator==(const Taint&) const = default;
};

struct Toleration {
  std::string key;
  bool op_exists = false;  // operator: Exists (true) or Equal (false, the default)
  std::string value;
  TaintEffect effect = TaintEffect::kNone;  // kNone: all effects
  std::optional<int64_t> toleration_seconds;
  // An operator this build does not know: the toleration tolerates nothing, as the
  // default case of upstream's v1 Toleration.ToleratesTaint.
  bool op_unknown = false;
  bool operator==(const Toleration&) const = default;
};

// ---- pods ------------------------------------------------------------------------------

// A resource name and amount, e.g. {"cpu", 100m}. Lists are short; a vector beats a map.
using ResourceList = std::vector<std::pair<std::string, Quantity>>;
const Quantity* FindResource(const ResourceList& list, std::string_view name);

struct ContainerPort {
  int32_t container_port = 0;
  int32_t host_port = 0;  // 0: no host port
  std::string protocol = "TCP";
  std::string host_ip;
  bool operator==(const ContainerPort&) const = default;
};

struct Container {
  std::string name;
  std::string image;
  // Requests only: the apiserver defaults missing requests from limits, and nothing
  // here schedules by limits.
  ResourceList requests;
  // Only ports with a hostPort (NodePorts ignores the rest, as upstream does).
  std::vector<ContainerPort> ports;
  // For init containers: restartPolicy Always makes it a sidecar (counted like a container).
  bool restart_policy_always = false;
  bool operator==(const Container&) const = default;
};

enum class WhenUnsatisfiable { kDoNotSchedule, kScheduleAnyway };
enum class InclusionPolicy { kHonor, kIgnore };

struct TopologySpreadConstraint {
  int32_t max_skew = 1;
  std::string topology_key;
  WhenUnsatisfiable when_unsatisfiable = WhenUnsatisfiable::kDoNotSchedule;
  std::optional<LabelSelector> label_selector;
  std::optional<int32_t> min_domains;
  std::optional<InclusionPolicy> node_affinity_policy;
  std::optional<InclusionPolicy> node_taints_policy;
  std::vector<std::string> match_label_keys;
  bool operator==(const TopologySpreadConstraint&) const = default;
};

// The volume source of a PersistentVolume or of a pod's inline volume, as far as the
// volume plugins tell sources apart: the CSI driver (NodeVolumeLimits counts per driver)
// and the in-tree disks whose concurrent use VolumeRestrictions rejects.
struct VolumeSource {
  std::string csi_driver;         // csi.driver
  std::string csi_volume_handle;  // csi.volumeHandle (PVs only; inline CSI volumes have none)
  std::string gce_pd_name;        // gcePersistentDisk.pdName
  std::string aws_volume_id;      // awsElasticBlockStore.volumeID
  std::string azure_disk_uri;     // azureDisk.diskURI
  std::string cinder_volume_id;   // cinder.volumeID
  std::string iscsi_iqn;          // iscsi.iqn
  int32_t iscsi_lun = 0;          // iscsi.lun
  std::string iscsi_target_portal;  // iscsi.targetPortal
  std::vector<std::string> rbd_monitors;  // rbd.monitors
  std::string rbd_pool;           // rbd.pool ("rbd" when absent)
  std::string rbd_image;          // rbd.image
  bool read_only = false;         // the source's readOnly
  bool operator==(const VolumeSource&) const = default;
};

// A pod's volume, as the volume plugins read it. Volumes of other kinds (projected
// tokens, configMaps, emptyDirs and the like) are not decoded: nothing in scheduling
// reads them.
struct Volume {
  std::string name;
  std::string pvc_claim_name;  // persistentVolumeClaim.claimName
  bool pvc_read_only = false;  // persistentVolumeClaim.readOnly
  // spec.volumes[].ephemeral: a generic ephemeral volume, whose claim is named
  // "<pod name>-<volume name>" and owned by the pod (upstream ephemeral.VolumeClaimName).
  bool ephemeral = false;
  VolumeSource source;  // inline disks and CSI volumes
  bool operator==(const Volume&) const = default;
};

struct PodCondition {
  std::string type, status, reason, message;
  std::string last_transition_time;
  std::string last_probe_time;
  bool operator==(const PodCondition&) const = default;
};

// spec.resourceClaims[]: a DRA claim the pod needs allocated before it can run, named
// directly or made from a template (exactly one of the two is set in a valid pod).
struct PodResourceClaim {
  std::string name;
  std::optional<std::string> resource_claim_name;
  std::optional<std::string> resource_claim_template_name;
  bool operator==(const PodResourceClaim&) const = default;
};

// status.resourceClaimStatuses[]: the claim the ResourceClaim controller made for a
// template claim. resource_claim_name nullopt: no claim is needed.
struct PodResourceClaimStatus {
  std::string name;
  std::optional<std::string> resource_claim_name;
  bool operator==(const PodResourceClaimStatus&) const = default;
};

struct PodSpec {
  std::string scheduler_name = "default-scheduler";
  std::string node_name;
  std::optional<int32_t> priority;
  std::string priority_class_name;
  std::string preemption_policy;  // "" (PreemptLowerPriority, decoded as "") or "Never"
  SharedVector<Container> containers;
  SharedVector<Container> init_containers;
  ResourceList overhead;
  StringMap node_selector;
  SharedOptional<Affinity> affinity;
  SharedVector<Toleration> tolerations;
  SharedVector<TopologySpreadConstraint> topology_spread_constraints;
  std::vector<std::string> scheduling_gates;
  std::vector<Volume> volumes;
  // spec.resources.requests: pod-level resources (on by default since 1.34). For cpu,
  // memory and hugepages-* they replace the containers' sum (upstream PodRequests).
  ResourceList pod_requests;
  std::vector<PodResourceClaim> resource_claims;
  bool operator==(const PodSpec&) const = default;
};

// A container's resources as the kubelet reports them during an in-place resize:
// status.(init)containerStatuses[].allocatedResources and .resources.requests. Kept only
// for containers that report either.
struct ContainerResourceStatus {
  std::string name;
  std::optional<ResourceList> allocated;
  std::optional<ResourceList> actual;
  bool operator==(const ContainerResourceStatus&) const = default;
};

struct PodStatus {
  std::string phase;  // Pending, Running, Succeeded, Failed, Unknown
  // Decoded: only the PodScheduled condition, the one the scheduler reads and patches
  // (the kubelet's Ready/Initialized/... would cost ~200 bytes each per pod).
  std::vector<PodCondition> conditions;
  std::string nominated_node_name;
  std::string start_time;  // RFC 3339; empty until the kubelet starts the pod
  // In-place resize (GA in 1.35): what the kubelet allocated and actuated, per container
  // and, where it reports them, for the pod (status.allocatedResources,
  // status.resources.requests); and whether a pending resize is Infeasible (the
  // PodResizePending condition's reason). The scheduler counts the larger of spec,
  // allocated and actual (upstream resourcehelper.PodRequests with UseStatusResources).
  std::vector<ContainerResourceStatus> container_resources;
  std::optional<ResourceList> pod_allocated;
  std::optional<ResourceList> pod_actual;
  bool resize_infeasible = false;
  std::vector<PodResourceClaimStatus> resource_claim_statuses;
  bool operator==(const PodStatus&) const = default;
};

struct Pod {
  ObjectMeta metadata;
  PodSpec spec;
  PodStatus status;

  // "namespace/name": the key of the queue, the cache and the informer store.
  std::string Key() const { return metadata.namespace_ + "/" + metadata.name; }
  int32_t Priority() const { return spec.priority.value_or(0); }
  bool IsAssigned() const { return !spec.node_name.empty(); }
  bool IsTerminal() const { return status.phase == "Succeeded" || status.phase == "Failed"; }
  bool IsBeingDeleted() const { return metadata.deletion_timestamp.has_value(); }
  const PodCondition* FindCondition(std::string_view type) const;
  bool operator==(const Pod&) const = default;
};

using PodPtr = std::shared_ptr<const Pod>;

// ---- nodes -------------------------------------------------------------------------------

struct NodeCondition {
  std::string type, status, reason;
  bool operator==(const NodeCondition&) const = default;
};

struct ContainerImage {
  std::vector<std::string> names;
  int64_t size_bytes = 0;
  bool operator==(const ContainerImage&) const = default;
};

struct NodeSpec {
  bool unschedulable = false;
  std::vector<Taint> taints;
  bool operator==(const NodeSpec&) const = default;
};

struct NodeStatus {
  ResourceList capacity;
  ResourceList allocatable;
  std::vector<NodeCondition> conditions;
  std::vector<ContainerImage> images;
  bool operator==(const NodeStatus&) const = default;
};

struct Node {
  ObjectMeta metadata;
  NodeSpec spec;
  NodeStatus status;

  const std::string& Name() const { return metadata.name; }
  bool operator==(const Node&) const = default;
};

using NodePtr = std::shared_ptr<const Node>;

// ---- lists and watch events ---------------------------------------------------------------

template <typename T>
struct ObjectList {
  std::string resource_version;
  std::string continue_token;
  std::optional<int64_t> remaining_item_count;
  std::vector<std::shared_ptr<const T>> items;
  // Items that are well-formed JSON but could not be decoded (a wrong type in a field):
  // what was read of them (at least the metadata when it came first) and why. One bad
  // object must not fail the whole list; the informer keeps its previous copy of them.
  struct Skipped {
    std::shared_ptr<const T> partial;
    std::string error;
  };
  std::vector<Skipped> skipped;
};

// kUnknown: a type this build does not know; client-go's reflector logs and skips it.
enum class WatchEventType { kAdded, kModified, kDeleted, kBookmark, kError, kUnknown };

// An Error event carries a Status object instead of T.
struct ApiStatus {
  std::string status;  // "Failure" / "Success"
  std::string message;
  std::string reason;  // NotFound, Conflict, Expired, Gone, ...
  int32_t code = 0;
  bool operator==(const ApiStatus&) const = default;
};

template <typename T>
struct WatchEvent {
  WatchEventType type = WatchEventType::kAdded;
  std::shared_ptr<const T> object;  // Added/Modified/Deleted; Bookmark has only metadata
  std::string resource_version;     // the object's metadata.resourceVersion (all kinds)
  ApiStatus error;                  // kError only
  // Set when the line was well-formed JSON but its object could not be decoded; `object`
  // then holds what was read of it (its metadata when that came first), for the informer
  // to skip the event (or apply a delete) without restarting the stream.
  std::string object_error;
};

}  // namespace ksched::api
