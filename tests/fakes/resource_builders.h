// Fluent builders for the resource.k8s.io objects of DynamicResources' tests and
// benchmarks, shaped after upstream's allocator test helpers (class(), slice(),
// device(), claimWithRequests(), request()):
//
//   DeviceClassBuilder("class-a").Driver("driver-a").Obj()
//   SliceBuilder("slice-1").Node("node-1").Driver("driver-a").Pool("pool-1")
//       .Device(DeviceBuilder("device-1").Capacity("memory", "1Gi").Obj()).Ptr()
//   ClaimBuilder("claim-0").Request(ExactRequest("req-0", "class-a")).Ptr()
//
// Nodes with labels come from NodeBuilder (builders.h). FakeDevicesInUse is the
// allocator's in-use set as a plain set of device ids.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pkg/api/quantity.h"
#include "pkg/api/resource.h"
#include "pkg/api/types.h"
#include "pkg/framework/plugins/dynamicresources/allocator.h"

namespace ksched::testing {

namespace resource_builders_internal {
inline api::Quantity Q(std::string_view s) {
  auto q = api::Quantity::Parse(s);
  return q.ok() ? *q : api::Quantity();
}
}  // namespace resource_builders_internal

// ---- attributes --------------------------------------------------------------------------

inline api::DeviceAttribute IntAttr(int64_t v) { return api::DeviceAttribute{v}; }
inline api::DeviceAttribute BoolAttr(bool v) { return api::DeviceAttribute{v}; }
inline api::DeviceAttribute StringAttr(std::string v) { return api::DeviceAttribute{std::move(v)}; }
// A version attribute; `v` must be valid semver.
inline api::DeviceAttribute VersionAttr(std::string_view v) {
  auto parsed = api::SemVersion::Parse(v);
  return api::DeviceAttribute{parsed ? *parsed : api::SemVersion{}};
}

// `key In values` as a one-term node selector (upstream nodeLabelSelector).
inline std::vector<api::NodeSelectorTerm> NodeLabelSelector(std::string key, std::vector<std::string> values) {
  api::NodeSelectorTerm term;
  term.match_expressions.push_back({std::move(key), api::SelectorOperator::kIn, std::move(values)});
  return {std::move(term)};
}
// metadata.name In [node] as a one-term node selector (upstream localNodeSelector): what
// an allocation of a node-local device is pinned with.
inline std::vector<api::NodeSelectorTerm> LocalNodeSelector(std::string node) {
  api::NodeSelectorTerm term;
  term.match_fields.push_back({"metadata.name", api::SelectorOperator::kIn, {std::move(node)}});
  return {std::move(term)};
}

// ---- DeviceClass -------------------------------------------------------------------------

class DeviceClassBuilder {
 public:
  explicit DeviceClassBuilder(std::string name) {
    c_.metadata.name = std::move(name);
    c_.metadata.uid = "uid-" + c_.metadata.name;
    c_.metadata.resource_version = "1";
  }
  // The selector `device.driver == "<driver>"` (upstream class(name, driver)).
  DeviceClassBuilder& Driver(std::string_view driver) {
    return Selector("device.driver == \"" + std::string(driver) + "\"");
  }
  DeviceClassBuilder& Selector(std::string expression) {
    c_.selectors.push_back({std::move(expression)});
    return *this;
  }
  // Opaque configuration for `driver` with `parameters_json` (upstream classWithConfig).
  DeviceClassBuilder& Config(std::string driver, std::string parameters_json) {
    c_.config.push_back({std::move(driver), std::move(parameters_json)});
    return *this;
  }
  api::DeviceClass Obj() const { return c_; }
  api::DeviceClassPtr Ptr() const { return std::make_shared<const api::DeviceClass>(c_); }

 private:
  api::DeviceClass c_;
};

// ---- Device and ResourceSlice ------------------------------------------------------------

class DeviceBuilder {
 public:
  explicit DeviceBuilder(std::string name) { d_.name = std::move(name); }
  DeviceBuilder& Attr(std::string name, api::DeviceAttribute value) {
    d_.attributes[std::move(name)] = std::move(value);
    return *this;
  }
  DeviceBuilder& Capacity(std::string name, std::string_view quantity) {
    d_.capacity[std::move(name)] = api::DeviceCapacity{resource_builders_internal::Q(quantity)};
    return *this;
  }
  DeviceBuilder& Taint(std::string key, std::string value, api::TaintEffect effect) {
    d_.taints.push_back({std::move(key), std::move(value), effect});
    return *this;
  }
  // consumesCounters: `counters` (name, quantity) of counter set `set`.
  DeviceBuilder& ConsumesCounters(std::string set, const std::vector<std::pair<std::string, std::string>>& counters) {
    api::DeviceCounterConsumption use;
    use.counter_set = std::move(set);
    for (const auto& [name, q] : counters) use.counters[name] = resource_builders_internal::Q(q);
    d_.consumes_counters.push_back(std::move(use));
    return *this;
  }
  // Per-device node selection (the slice must have PerDeviceNodeSelection()).
  DeviceBuilder& NodeName(std::string node) {
    d_.node_selection = api::DeviceNodeSelection{.node_name = std::move(node)};
    return *this;
  }
  DeviceBuilder& AllNodes() {
    d_.node_selection = api::DeviceNodeSelection{.all_nodes = true};
    return *this;
  }
  DeviceBuilder& NodeSelector(std::vector<api::NodeSelectorTerm> terms) {
    d_.node_selection = api::DeviceNodeSelection{.node_selector = std::move(terms)};
    return *this;
  }
  api::Device Obj() const { return d_; }

 private:
  api::Device d_;
};

class SliceBuilder {
 public:
  // Pool "pool-1" of driver "driver-a", generation 1, one slice; no node selection yet.
  explicit SliceBuilder(std::string name) {
    s_.metadata.name = std::move(name);
    s_.metadata.uid = "uid-" + s_.metadata.name;
    s_.metadata.resource_version = "1";
    s_.driver = "driver-a";
    s_.pool = {.name = "pool-1", .generation = 1, .resource_slice_count = 1};
  }
  SliceBuilder& Node(std::string node) {
    s_.nodes = api::DeviceNodeSelection{.node_name = std::move(node)};
    return *this;
  }
  SliceBuilder& AllNodes() {
    s_.nodes = api::DeviceNodeSelection{.all_nodes = true};
    return *this;
  }
  SliceBuilder& NodeSelector(std::vector<api::NodeSelectorTerm> terms) {
    s_.nodes = api::DeviceNodeSelection{.node_selector = std::move(terms)};
    return *this;
  }
  SliceBuilder& PerDeviceNodeSelection() {
    s_.nodes = {};
    s_.per_device_node_selection = true;
    return *this;
  }
  SliceBuilder& Driver(std::string driver) {
    s_.driver = std::move(driver);
    return *this;
  }
  SliceBuilder& Pool(std::string name, int64_t generation = 1, int64_t slice_count = 1) {
    s_.pool = {.name = std::move(name), .generation = generation, .resource_slice_count = slice_count};
    return *this;
  }
  SliceBuilder& Device(api::Device d) {
    s_.devices.push_back(std::move(d));
    return *this;
  }
  // A device with nothing but its name.
  SliceBuilder& Device(std::string name) { return Device(DeviceBuilder(std::move(name)).Obj()); }
  // Devices "device-<first>" .. "device-<first + n - 1>" (upstream sliceWithMultipleDevices).
  SliceBuilder& Devices(int n, int first = 0) {
    for (int i = first; i < first + n; ++i) Device("device-" + std::to_string(i));
    return *this;
  }
  SliceBuilder& CounterSet(std::string name, const std::vector<std::pair<std::string, std::string>>& counters) {
    api::CounterSet set;
    set.name = std::move(name);
    for (const auto& [counter, q] : counters) set.counters[counter] = resource_builders_internal::Q(q);
    s_.shared_counters.push_back(std::move(set));
    return *this;
  }
  api::ResourceSlice Obj() const { return s_; }
  api::ResourceSlicePtr Ptr() const { return std::make_shared<const api::ResourceSlice>(s_); }

 private:
  api::ResourceSlice s_;
};

// ---- requests ----------------------------------------------------------------------------

// exactly: `count` devices of `device_class`, matching `selectors` (upstream request()).
inline api::DeviceSubRequest Exactly(std::string device_class, int64_t count = 1, std::vector<std::string> selectors = {}) {
  api::DeviceSubRequest r;
  r.device_class_name = std::move(device_class);
  r.count = count;
  for (std::string& s : selectors) r.selectors.push_back({std::move(s)});
  return r;
}
// exactly with allocationMode All.
inline api::DeviceSubRequest AllDevices(std::string device_class, std::vector<std::string> selectors = {}) {
  api::DeviceSubRequest r = Exactly(std::move(device_class), 0, std::move(selectors));
  r.allocation_mode = std::string(api::kAllocationModeAll);
  return r;
}
inline api::DeviceSubRequest AdminAccess(api::DeviceSubRequest r) {
  r.admin_access = true;
  return r;
}
inline api::DeviceSubRequest Tolerating(api::DeviceSubRequest r, api::DeviceToleration t) {
  r.tolerations.push_back(std::move(t));
  return r;
}
// One entry of firstAvailable.
inline api::DeviceSubRequest SubRequest(std::string name, api::DeviceSubRequest r) {
  r.name = std::move(name);
  return r;
}

inline api::DeviceRequest ExactRequest(std::string name, api::DeviceSubRequest exactly) {
  return api::DeviceRequest{.name = std::move(name), .exactly = std::move(exactly), .first_available = {}};
}
inline api::DeviceRequest ExactRequest(std::string name, std::string device_class, int64_t count = 1,
                                       std::vector<std::string> selectors = {}) {
  return ExactRequest(std::move(name), Exactly(std::move(device_class), count, std::move(selectors)));
}
inline api::DeviceRequest FirstAvailable(std::string name, std::vector<api::DeviceSubRequest> subrequests) {
  return api::DeviceRequest{.name = std::move(name), .exactly = std::nullopt, .first_available = std::move(subrequests)};
}

// ---- ResourceClaim -----------------------------------------------------------------------

class ClaimBuilder {
 public:
  explicit ClaimBuilder(std::string name, std::string ns = "default") {
    c_.metadata.name = std::move(name);
    c_.metadata.namespace_ = std::move(ns);
    c_.metadata.uid = "uid-" + c_.metadata.namespace_ + "-" + c_.metadata.name;
    c_.metadata.resource_version = "1";
  }
  ClaimBuilder& UID(std::string v) {
    c_.metadata.uid = std::move(v);
    return *this;
  }
  ClaimBuilder& ResourceVersion(std::string v) {
    c_.metadata.resource_version = std::move(v);
    return *this;
  }
  ClaimBuilder& Request(api::DeviceRequest r) {
    c_.spec.requests.push_back(std::move(r));
    return *this;
  }
  // exactly `count` devices of `device_class`.
  ClaimBuilder& Request(std::string name, std::string device_class, int64_t count = 1,
                        std::vector<std::string> selectors = {}) {
    return Request(ExactRequest(std::move(name), std::move(device_class), count, std::move(selectors)));
  }
  ClaimBuilder& MatchAttribute(std::string attribute, std::vector<std::string> requests = {}) {
    c_.spec.constraints.push_back({.requests = std::move(requests), .match_attribute = std::move(attribute),
                                   .distinct_attribute = {}});
    return *this;
  }
  ClaimBuilder& DistinctAttribute(std::string attribute, std::vector<std::string> requests = {}) {
    c_.spec.constraints.push_back({.requests = std::move(requests), .match_attribute = {},
                                   .distinct_attribute = std::move(attribute)});
    return *this;
  }
  ClaimBuilder& Constraint(api::DeviceConstraint c) {
    c_.spec.constraints.push_back(std::move(c));
    return *this;
  }
  ClaimBuilder& Config(std::vector<std::string> requests, std::string driver, std::string parameters_json) {
    c_.spec.config.push_back({std::move(requests), {std::move(driver), std::move(parameters_json)}});
    return *this;
  }
  ClaimBuilder& Allocation(api::AllocationResult a) {
    c_.allocation = std::move(a);
    return *this;
  }
  // status.reservedFor gets the pod, as the scheduler writes it.
  ClaimBuilder& ReservedFor(std::string pod_name, std::string pod_uid) {
    c_.reserved_for.push_back({.api_group = "", .resource = "pods", .name = std::move(pod_name), .uid = std::move(pod_uid)});
    return *this;
  }
  ClaimBuilder& Finalizer(std::string f) {
    c_.finalizers.push_back(std::move(f));
    return *this;
  }
  // A template's claim: controlled by the pod.
  ClaimBuilder& OwnedBy(std::string pod_name, std::string pod_uid) {
    c_.owner_references.push_back({.api_version = "v1", .kind = "Pod", .name = std::move(pod_name),
                                   .uid = std::move(pod_uid), .controller = true});
    return *this;
  }
  ClaimBuilder& BeingDeleted() {
    c_.being_deleted = true;
    return *this;
  }
  api::ResourceClaim Obj() const { return c_; }
  api::ResourceClaimPtr Ptr() const { return std::make_shared<const api::ResourceClaim>(c_); }

 private:
  api::ResourceClaim c_;
};

// ---- allocation results ------------------------------------------------------------------

inline api::DeviceRequestAllocationResult DeviceResult(std::string request, std::string driver, std::string pool,
                                                       std::string device, bool admin_access = false,
                                                       std::vector<api::DeviceToleration> tolerations = {}) {
  api::DeviceRequestAllocationResult r;
  r.request = std::move(request);
  r.driver = std::move(driver);
  r.pool = std::move(pool);
  r.device = std::move(device);
  r.admin_access = admin_access;
  r.tolerations = std::move(tolerations);
  return r;
}

inline api::AllocationResult Allocation(std::optional<std::vector<api::NodeSelectorTerm>> node_selector,
                                        std::vector<api::DeviceRequestAllocationResult> results,
                                        std::vector<api::DeviceAllocationConfiguration> config = {}) {
  api::AllocationResult a;
  a.node_selector = std::move(node_selector);
  a.results = std::move(results);
  a.config = std::move(config);
  return a;
}

// ---- the allocator's in-use set -----------------------------------------------------------

class FakeDevicesInUse final : public framework::plugins::dynamicresources::DevicesInUse {
 public:
  FakeDevicesInUse() = default;
  explicit FakeDevicesInUse(std::vector<api::DeviceId> ids) : ids_(ids.begin(), ids.end()) {}
  void Add(api::DeviceId id) { ids_.insert(std::move(id)); }
  bool Contains(const api::DeviceId& id) const override { return ids_.contains(id); }

 private:
  std::set<api::DeviceId> ids_;
};

}  // namespace ksched::testing
