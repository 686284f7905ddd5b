// JSON decoding (simdjson on-demand) and encoding of the API objects in types.h.
//
// Decoding is single-pass and never builds a DOM: unknown fields (and managedFields,
// usually the largest part of an object) are skipped, `null` means "absent", and a value
// of the wrong JSON type is an error naming the object and the field path, e.g.
//   pod "ns/name": spec.containers[0].resources.requests.cpu: quantities must match ...
// All decode errors carry StatusCode::kInvalidArgument.
//
// simdjson reads up to kJsonPadding bytes past the end of the text. Callers that own
// the buffer pass JsonText::Padded(body) (or a text/capacity pair) to decode in place;
// anything else is copied into the parser's own padded buffer first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/api/resource.h"
#include "pkg/api/storage.h"
#include "pkg/api/types.h"
#include "pkg/api/workloads.h"
#include "pkg/util/status.h"

namespace ksched::api {

inline constexpr size_t kJsonPadding = 64;  // == SIMDJSON_PADDING (checked in json.cc)

// JSON text and how many bytes are allocated from text.data() onwards. When
// capacity - text.size() < kJsonPadding the decoder copies the text first.
struct JsonText {
  JsonText(std::string_view t) : text(t) {}  // NOLINT: unknown capacity, decoded from a copy
  JsonText(const char* t) : text(t) {}       // NOLINT
  // A std::string's capacity() bytes are allocated, so reserved room counts as padding.
  JsonText(const std::string& s) : text(s), capacity(s.capacity()) {}  // NOLINT
  JsonText(std::string_view t, size_t allocated) : text(t), capacity(allocated) {}

  // Reserves padding in `s` (at most one reallocation) so it decodes in place. `s` must
  // stay unmodified until decoding returns.
  static JsonText Padded(std::string& s) {
    s.reserve(s.size() + kJsonPadding);
    return JsonText(s);
  }

  std::string_view text;
  size_t capacity = 0;
};

// A reusable simdjson parser plus scratch buffer. Reusing one across decodes avoids
// reallocating its internal buffers; it keeps capacity for the largest document seen.
// Not thread-safe: use one per thread.
class JsonParser {
 public:
  JsonParser();
  ~JsonParser();
  JsonParser(JsonParser&&) noexcept;
  JsonParser& operator=(JsonParser&&) noexcept;

  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

StatusOr<PodPtr> DecodePod(JsonParser& parser, JsonText json);
StatusOr<NodePtr> DecodeNode(JsonParser& parser, JsonText json);
// A PodList / NodeList: metadata.resourceVersion, continue, remainingItemCount, items.
StatusOr<ObjectList<Pod>> DecodePodList(JsonParser& parser, JsonText json);
StatusOr<ObjectList<Node>> DecodeNodeList(JsonParser& parser, JsonText json);
// One line of a watch stream: {"type":"ADDED|MODIFIED|DELETED|BOOKMARK|ERROR","object":{}}.
// ERROR events are returned successfully with type kError and `error` set from the
// metav1.Status object; BOOKMARK events carry an object with only metadata.
StatusOr<WatchEvent<Pod>> DecodePodWatchEvent(JsonParser& parser, JsonText json);
StatusOr<WatchEvent<Node>> DecodeNodeWatchEvent(JsonParser& parser, JsonText json);
// A metav1.Status, as sent in HTTP error bodies.
StatusOr<ApiStatus> DecodeApiStatus(JsonParser& parser, JsonText json);
// The versions[].groupVersion of a discovery APIGroup document (GET /apis/<group>), e.g.
// {"policy/v1", "policy/v1beta1"}, in the server's order (preferred first).
StatusOr<std::vector<std::string>> DecodeApiGroupVersions(JsonParser& parser, JsonText json);
// Namespaces, the objects that select pods and PodDisruptionBudgets (policy/v1 or
// v1beta1), reduced to workloads.h's fields (the rest, pod templates included, is
// skipped). Errors name the object, e.g.
//   replicaset "ns/name": spec.selector.matchExpressions[0].operator: unknown operator "Foo"
StatusOr<NamespacePtr> DecodeNamespace(JsonParser& parser, JsonText json);
StatusOr<ServicePtr> DecodeService(JsonParser& parser, JsonText json);
StatusOr<ReplicationControllerPtr> DecodeReplicationController(JsonParser& parser, JsonText json);
StatusOr<ReplicaSetPtr> DecodeReplicaSet(JsonParser& parser, JsonText json);
StatusOr<StatefulSetPtr> DecodeStatefulSet(JsonParser& parser, JsonText json);
StatusOr<PodDisruptionBudgetPtr> DecodePodDisruptionBudget(JsonParser& parser, JsonText json);
StatusOr<ObjectList<Namespace>> DecodeNamespaceList(JsonParser& parser, JsonText json);
StatusOr<ObjectList<Service>> DecodeServiceList(JsonParser& parser, JsonText json);
StatusOr<ObjectList<ReplicationController>> DecodeReplicationControllerList(JsonParser& parser, JsonText json);
StatusOr<ObjectList<ReplicaSet>> DecodeReplicaSetList(JsonParser& parser, JsonText json);
StatusOr<ObjectList<StatefulSet>> DecodeStatefulSetList(JsonParser& parser, JsonText json);
StatusOr<ObjectList<PodDisruptionBudget>> DecodePodDisruptionBudgetList(JsonParser& parser, JsonText json);
StatusOr<WatchEvent<Namespace>> DecodeNamespaceWatchEvent(JsonParser& parser, JsonText json);
StatusOr<WatchEvent<Service>> DecodeServiceWatchEvent(JsonParser& parser, JsonText json);
StatusOr<WatchEvent<ReplicationController>> DecodeReplicationControllerWatchEvent(JsonParser& parser, JsonText json);
StatusOr<WatchEvent<ReplicaSet>> DecodeReplicaSetWatchEvent(JsonParser& parser, JsonText json);
StatusOr<WatchEvent<StatefulSet>> DecodeStatefulSetWatchEvent(JsonParser& parser, JsonText json);
StatusOr<WatchEvent<PodDisruptionBudget>> DecodePodDisruptionBudgetWatchEvent(JsonParser& parser, JsonText json);
// scheduling.x-k8s.io/v1alpha1 PodGroups (scheduler-plugins' Coscheduling): metadata,
// creationTimestamp and spec.
StatusOr<PodGroupPtr> DecodePodGroup(JsonParser& parser, JsonText json);
StatusOr<ObjectList<PodGroup>> DecodePodGroupList(JsonParser& parser, JsonText json);
StatusOr<WatchEvent<PodGroup>> DecodePodGroupWatchEvent(JsonParser& parser, JsonText json);
// The storage objects of the volume plugins, reduced to storage.h's fields. Errors name
// the object, e.g.  persistentvolume "pv-1": spec.capacity.storage: ...
StatusOr<PersistentVolumeClaimPtr> DecodePersistentVolumeClaim(JsonParser& parser, JsonText json);
StatusOr<PersistentVolumePtr> DecodePersistentVolume(JsonParser& parser, JsonText json);
StatusOr<StorageClassPtr> DecodeStorageClass(JsonParser& parser, JsonText json);
StatusOr<CSINodePtr> DecodeCSINode(JsonParser& parser, JsonText json);
StatusOr<CSIDriverPtr> DecodeCSIDriver(JsonParser& parser, JsonText json);
StatusOr<ObjectList<PersistentVolumeClaim>> DecodePersistentVolumeClaimList(JsonParser& parser, JsonText json);
StatusOr<ObjectList<PersistentVolume>> DecodePersistentVolumeList(JsonParser& parser, JsonText json);
StatusOr<ObjectList<StorageClass>> DecodeStorageClassList(JsonParser& parser, JsonText json);
StatusOr<ObjectList<CSINode>> DecodeCSINodeList(JsonParser& parser, JsonText json);
StatusOr<ObjectList<CSIDriver>> DecodeCSIDriverList(JsonParser& parser, JsonText json);
StatusOr<WatchEvent<PersistentVolumeClaim>> DecodePersistentVolumeClaimWatchEvent(JsonParser& parser, JsonText json);
StatusOr<WatchEvent<PersistentVolume>> DecodePersistentVolumeWatchEvent(JsonParser& parser, JsonText json);
StatusOr<WatchEvent<StorageClass>> DecodeStorageClassWatchEvent(JsonParser& parser, JsonText json);
StatusOr<WatchEvent<CSINode>> DecodeCSINodeWatchEvent(JsonParser& parser, JsonText json);
StatusOr<WatchEvent<CSIDriver>> DecodeCSIDriverWatchEvent(JsonParser& parser, JsonText json);
// The resource.k8s.io/v1 objects of dynamic resource allocation, reduced to resource.h's
// fields, with the API server's defaults applied (allocationMode ExactCount, count 1).
// A version attribute that is not semver 2.0.0, an unknown allocationMode or a quantity
// that does not parse fails the object, e.g.
//   resourceslice "s-1": spec.devices[0].attributes.driverVersion.version: "1.2" is not ...
StatusOr<DeviceClassPtr> DecodeDeviceClass(JsonParser& parser, JsonText json);
StatusOr<ResourceSlicePtr> DecodeResourceSlice(JsonParser& parser, JsonText json);
StatusOr<ResourceClaimPtr> DecodeResourceClaim(JsonParser& parser, JsonText json);
StatusOr<ResourceClaimTemplatePtr> DecodeResourceClaimTemplate(JsonParser& parser, JsonText json);
StatusOr<ObjectList<DeviceClass>> DecodeDeviceClassList(JsonParser& parser, JsonText json);
StatusOr<ObjectList<ResourceSlice>> DecodeResourceSliceList(JsonParser& parser, JsonText json);
StatusOr<ObjectList<ResourceClaim>> DecodeResourceClaimList(JsonParser& parser, JsonText json);
StatusOr<ObjectList<ResourceClaimTemplate>> DecodeResourceClaimTemplateList(JsonParser& parser, JsonText json);
StatusOr<WatchEvent<DeviceClass>> DecodeDeviceClassWatchEvent(JsonParser& parser, JsonText json);
StatusOr<WatchEvent<ResourceSlice>> DecodeResourceSliceWatchEvent(JsonParser& parser, JsonText json);
StatusOr<WatchEvent<ResourceClaim>> DecodeResourceClaimWatchEvent(JsonParser& parser, JsonText json);
StatusOr<WatchEvent<ResourceClaimTemplate>> DecodeResourceClaimTemplateWatchEvent(JsonParser& parser,
                                                                                  JsonText json);

// Annotation keys the decoders keep in ObjectMeta::annotations; all others are skipped
// (see types.h for why). Process-wide, empty by default; replaces the previous list and
// applies to objects decoded afterwards. A component that reads an annotation
// registers its key at startup, before informers start. "*" keeps every annotation
// (what HTTP extenders are sent).
void RetainAnnotationKeys(std::vector<std::string> keys);

// Conveniences that use a parser owned by the calling thread. It keeps its capacity for
// the thread's lifetime, so decode large lists with an explicit JsonParser instead.
StatusOr<PodPtr> DecodePod(JsonText json);
StatusOr<NodePtr> DecodeNode(JsonText json);
StatusOr<ObjectList<Pod>> DecodePodList(JsonText json);
StatusOr<ObjectList<Node>> DecodeNodeList(JsonText json);
StatusOr<WatchEvent<Pod>> DecodePodWatchEvent(JsonText json);
StatusOr<WatchEvent<Node>> DecodeNodeWatchEvent(JsonText json);
StatusOr<ApiStatus> DecodeApiStatus(JsonText json);

// ---- encoding -------------------------------------------------------------------------------

// Appends `s` as a quoted JSON string, escaping '"', '\\' and control characters.
void AppendJsonString(std::string& out, std::string_view s);
// Appends a quantity in a form Quantity::Parse reads back exactly: "2", "1500m".
void AppendQuantity(std::string& out, Quantity q);

// The v1 Binding body POSTed to pods/{name}/binding. An empty uid is omitted.
std::string EncodeBinding(std::string_view pod_namespace, std::string_view pod_name,
                          std::string_view pod_uid, std::string_view node_name);

// A strategic-merge patch for PATCH pods/{name}/status that merges `condition` into
// status.conditions by type (type defaults to "PodScheduled"). An empty
// last_probe_time / last_transition_time is written as null, as upstream's
// metav1.Time zero value is. nominated_node_name, when set, is written too ("" clears
// it with null).
std::string EncodePodScheduledConditionPatch(
    const PodCondition& condition,
    const std::optional<std::string>& nominated_node_name = std::nullopt,
    std::optional<int64_t> observed_generation = std::nullopt);

// A pod as an event's regarding or related object (client-go's ObjectReference).
struct PodReference {
  std::string_view namespace_;
  std::string_view name;
  std::string_view uid;
  std::string_view resource_version;  // written when not empty

  static PodReference Of(const Pod& pod, bool with_resource_version = true) {
    return {pod.metadata.namespace_, pod.metadata.name, pod.metadata.uid,
            with_resource_version ? std::string_view(pod.metadata.resource_version) : std::string_view()};
  }
};

// An events.k8s.io/v1 Event about a pod (upstream's event recorder fields). Views: the
// text must outlive the call.
struct PodEvent {
  std::string_view name;  // unique per event
  std::string_view event_time;  // metav1.MicroTime (FormatMicroTime)
  std::string_view reporting_controller;
  std::string_view reporting_instance;
  std::string_view action;
  std::string_view reason;
  std::string_view note;
  bool warning = false;
  PodReference regarding;
  std::optional<PodReference> related;  // the preemptor of a Preempted event
};
std::string EncodePodEvent(const PodEvent& event);

// DeleteOptions with a uid precondition: the DELETE fails with 409 if the name now
// belongs to another object.
std::string EncodeDeleteOptionsWithUid(std::string_view uid);

// Full objects (kind/apiVersion included), e.g. for creating test objects on an
// apiserver. Decoding the output yields an equal object.
std::string EncodePod(const Pod& pod);
std::string EncodeNode(const Node& node);

// Dynamic resource allocation (json_encode_resource.cc), with upstream's v1 field names.
// The JSON object of a claim's status.allocation: devices.results and .config (opaque
// parameters written back as their JSON text), nodeSelector {"nodeSelectorTerms": [...]}
// and allocationTimestamp.
std::string EncodeAllocationResult(const AllocationResult& allocation);
// A claim's status.reservedFor: a JSON array of consumer references.
std::string EncodeReservedFor(const std::vector<ResourceClaimConsumerReference>& reserved_for);
// A whole ResourceClaim (apiVersion resource.k8s.io/v1): metadata, spec and status.
// Decoding the output yields an equal object. A claim being deleted is written with a
// placeholder deletionTimestamp (only its presence is kept); the API server ignores
// deletionTimestamp on create and update.
std::string EncodeResourceClaim(const ResourceClaim& claim);

}  // namespace ksched::api
