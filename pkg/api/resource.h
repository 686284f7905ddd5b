// The objects of dynamic resource allocation (resource.k8s.io/v1): DeviceClasses,
// ResourceSlices, ResourceClaims and ResourceClaimTemplates, reduced to the fields the
// DynamicResources plugin and its allocator read and the fields a claim's status
// update writes back. As with the storage objects (storage.h), the decoders keep
// nothing else: opaque driver parameters are kept as raw JSON, since the allocation
// result carries them over unchanged.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "pkg/api/quantity.h"
#include "pkg/api/types.h"
#include "pkg/api/workloads.h"

namespace ksched::api {

inline constexpr std::string_view kResourceGroup = "resource.k8s.io";
inline constexpr std::string_view kResourceVersionV1 = "resource.k8s.io/v1";

// Limits of the API (upstream k8s.io/api/resource/v1 constants).
inline constexpr size_t kResourceClaimReservedForMaxSize = 256;
inline constexpr size_t kAllocationResultsMaxSize = 32;

// allocationMode of a request.
inline constexpr std::string_view kAllocationModeExactCount = "ExactCount";
inline constexpr std::string_view kAllocationModeAll = "All";

// A semantic version (semver 2.0.0) as device attributes hold it: "1.2.3-rc.1+build".
struct SemVersion {
  uint64_t major = 0, minor = 0, patch = 0;
  std::vector<std::string> pre_release;  // dot-separated identifiers
  std::string build;                     // ignored when comparing
  // Parses strict semver 2.0.0 (no leading "v", no leading zeros). nullopt when invalid.
  static std::optional<SemVersion> Parse(std::string_view text);
  // <0, 0, >0 by semver precedence (build metadata ignored).
  int Compare(const SemVersion& other) const;
  std::string String() const;
  bool operator==(const SemVersion&) const = default;
};

// One attribute of a device: exactly one of int, bool, string, version (the decoder
// rejects a version that is not semver 2.0.0, as the API server's validation does, and
// drops list-typed attributes of the alpha DRAListTypeAttributes).
struct DeviceAttribute {
  std::variant<int64_t, bool, std::string, SemVersion> value;
  bool operator==(const DeviceAttribute&) const = default;
};

// A device's capacity entry (spec.devices[].capacity[name].value).
struct DeviceCapacity {
  Quantity value;
  bool operator==(const DeviceCapacity&) const = default;
};

// Attribute and capacity names: "domain/id" or "id" (the domain then is the driver's).
// Kept as given; the allocator and CEL resolve the domain.
using DeviceAttributes = std::map<std::string, DeviceAttribute, std::less<>>;
using DeviceCapacities = std::map<std::string, DeviceCapacity, std::less<>>;

// Splits a qualified name into domain and id; an unqualified name is in `driver`'s
// domain (upstream draapi's attribute lookup).
std::pair<std::string_view, std::string_view> SplitQualifiedName(std::string_view name, std::string_view driver);

// spec.devices[].taints[]: a taint with effect NoSchedule or NoExecute keeps the device
// from being allocated unless the request tolerates it. Effect "None" (informational)
// decodes as kNone, an effect this build does not know as kUnknown (treated as None).
struct DeviceTaint {
  std::string key, value;
  TaintEffect effect = TaintEffect::kNoSchedule;
  bool operator==(const DeviceTaint&) const = default;
};

// spec.devices[].consumesCounters[]: what allocating a partition of a partitionable
// device takes from its slice's shared counter sets.
struct DeviceCounterConsumption {
  std::string counter_set;
  std::map<std::string, Quantity, std::less<>> counters;
  bool operator==(const DeviceCounterConsumption&) const = default;
};

struct CounterSet {
  std::string name;
  std::map<std::string, Quantity, std::less<>> counters;
  bool operator==(const CounterSet&) const = default;
};

// Where a slice's (or, with perDeviceNodeSelection, a device's) devices are reachable:
// exactly one of a node name, a node selector or all nodes.
struct DeviceNodeSelection {
  std::string node_name;
  std::optional<std::vector<NodeSelectorTerm>> node_selector;
  bool all_nodes = false;
  bool operator==(const DeviceNodeSelection&) const = default;
};

struct Device {
  std::string name;
  DeviceAttributes attributes;
  DeviceCapacities capacity;
  std::vector<DeviceCounterConsumption> consumes_counters;
  // Only with the slice's perDeviceNodeSelection.
  std::optional<DeviceNodeSelection> node_selection;
  std::vector<DeviceTaint> taints;
  // allowMultipleAllocations: several claims may share the device (consumable capacity).
  bool allow_multiple_allocations = false;
  bool operator==(const Device&) const = default;
};

struct ResourcePool {
  std::string name;
  int64_t generation = 0;
  int64_t resource_slice_count = 0;
  bool operator==(const ResourcePool&) const = default;
};

// A resource.k8s.io/v1 ResourceSlice.
struct ResourceSlice {
  LeanObjectMeta metadata;  // cluster-scoped
  std::string driver;
  ResourcePool pool;
  DeviceNodeSelection nodes;  // ignored with per_device_node_selection
  bool per_device_node_selection = false;
  std::vector<Device> devices;
  std::vector<CounterSet> shared_counters;

  const std::string& Name() const { return metadata.name; }
  bool operator==(const ResourceSlice&) const = default;
};

// A CEL selector (selectors[].cel.expression).
struct DeviceSelector {
  std::string cel_expression;
  bool operator==(const DeviceSelector&) const = default;
};

// Opaque configuration for a driver: parameters kept as their JSON text.
struct OpaqueDeviceConfig {
  std::string driver;
  std::string parameters_json;
  bool operator==(const OpaqueDeviceConfig&) const = default;
};

// A resource.k8s.io/v1 DeviceClass.
struct DeviceClass {
  LeanObjectMeta metadata;
  std::vector<DeviceSelector> selectors;
  std::vector<OpaqueDeviceConfig> config;

  const std::string& Name() const { return metadata.name; }
  bool operator==(const DeviceClass&) const = default;
};

// A toleration of device taints (same matching as pod tolerations of node taints).
using DeviceToleration = Toleration;

// The part of a request that picks devices: exactly{...} or one of firstAvailable[].
struct DeviceSubRequest {
  std::string name;  // the subrequest's own name; "" for exactly
  std::string device_class_name;
  std::vector<DeviceSelector> selectors;
  std::string allocation_mode = std::string(kAllocationModeExactCount);
  int64_t count = 1;
  bool admin_access = false;
  std::vector<DeviceToleration> tolerations;
  // capacity.requests: how much of a shared device's capacity each allocation consumes.
  std::map<std::string, Quantity, std::less<>> capacity_requests;
  bool operator==(const DeviceSubRequest&) const = default;
};

struct DeviceRequest {
  std::string name;
  std::optional<DeviceSubRequest> exactly;
  std::vector<DeviceSubRequest> first_available;
  bool operator==(const DeviceRequest&) const = default;
};

struct DeviceConstraint {
  std::vector<std::string> requests;  // empty: all requests
  std::string match_attribute;        // fully qualified, "" when unset
  std::string distinct_attribute;
  bool operator==(const DeviceConstraint&) const = default;
};

struct DeviceClaimConfiguration {
  std::vector<std::string> requests;
  OpaqueDeviceConfig opaque;
  bool operator==(const DeviceClaimConfiguration&) const = default;
};

struct ResourceClaimSpec {
  std::vector<DeviceRequest> requests;
  std::vector<DeviceConstraint> constraints;
  std::vector<DeviceClaimConfiguration> config;
  bool operator==(const ResourceClaimSpec&) const = default;
};

// status.allocation.devices.results[].
struct DeviceRequestAllocationResult {
  std::string request;  // "request" or "request/subrequest"
  std::string driver, pool, device;
  bool admin_access = false;
  std::vector<DeviceToleration> tolerations;
  std::string share_id;
  std::map<std::string, Quantity, std::less<>> consumed_capacity;
  bool operator==(const DeviceRequestAllocationResult&) const = default;
};

// status.allocation.devices.config[]: source "FromClass" or "FromClaim".
struct DeviceAllocationConfiguration {
  std::string source;
  std::vector<std::string> requests;
  OpaqueDeviceConfig opaque;
  bool operator==(const DeviceAllocationConfiguration&) const = default;
};

struct AllocationResult {
  std::vector<DeviceRequestAllocationResult> results;
  std::vector<DeviceAllocationConfiguration> config;
  // Where the allocated devices are reachable; nullopt: every node.
  std::optional<std::vector<NodeSelectorTerm>> node_selector;
  std::string allocation_timestamp;
  bool operator==(const AllocationResult&) const = default;
};

// status.reservedFor[]: the consumers (pods) a claim is reserved for.
struct ResourceClaimConsumerReference {
  std::string api_group;  // "" for pods
  std::string resource;   // "pods"
  std::string name, uid;
  bool operator==(const ResourceClaimConsumerReference&) const = default;
};

// A resource.k8s.io/v1 ResourceClaim.
struct ResourceClaim {
  LeanObjectMeta metadata;
  bool being_deleted = false;
  // A template's claim is owned by its pod (controller reference).
  std::vector<OwnerReference> owner_references;
  std::vector<std::string> finalizers;
  ResourceClaimSpec spec;
  std::optional<AllocationResult> allocation;
  std::vector<ResourceClaimConsumerReference> reserved_for;

  const std::string& Name() const { return metadata.name; }
  const std::string& Namespace() const { return metadata.namespace_; }
  std::string Key() const { return metadata.namespace_ + "/" + metadata.name; }
  bool operator==(const ResourceClaim&) const = default;
};

// A resource.k8s.io/v1 ResourceClaimTemplate: the claim spec a pod's claim is made from.
struct ResourceClaimTemplate {
  LeanObjectMeta metadata;
  ResourceClaimSpec spec;

  const std::string& Name() const { return metadata.name; }
  bool operator==(const ResourceClaimTemplate&) const = default;
};

// A device by driver, pool and name: what allocation results and the allocator's
// in-use set name (upstream structured.DeviceID).
struct DeviceId {
  std::string driver, pool, device;
  // "driver/pool/device", as upstream prints a DeviceID.
  std::string String() const { return driver + "/" + pool + "/" + device; }
  auto operator<=>(const DeviceId&) const = default;
};
struct DeviceIdHash {
  size_t operator()(const DeviceId& id) const noexcept {
    std::hash<std::string_view> h;
    return h(id.driver) * 31 * 31 + h(id.pool) * 31 + h(id.device);
  }
};

using ResourceSlicePtr = std::shared_ptr<const ResourceSlice>;

// Every ResourceSlice of the cluster at one moment, with a version that changes
// whenever the set does (so a consumer can index the slices once per change).
struct ResourceSliceList {
  uint64_t version = 0;
  std::vector<ResourceSlicePtr> slices;
};
using DeviceClassPtr = std::shared_ptr<const DeviceClass>;
using ResourceClaimPtr = std::shared_ptr<const ResourceClaim>;
using ResourceClaimTemplatePtr = std::shared_ptr<const ResourceClaimTemplate>;

}  // namespace ksched::api
