// upstream structured/internal/allocatortesting/allocator_testing.go (TestAllocator),
// as far as our allocator's features go: admin access, prioritized lists, partitionable
// devices and device taints on; consumable capacity, binding conditions and list-typed
// attributes off. Upstream's feature-disabled cases have no counterpart here.
//
// Differences from upstream's expectations, all deliberate:
//   - Claims are in namespace "default", so messages name "default/claim-0" where
//     upstream (claims without a namespace) prints "claim-0".
//   - Results are compared exactly, in our allocator's order (upstream compares them as
//     a set); the first solution is the same, so so is the order.
//   - A configuration naming every request of the claim has its `requests` cleared (the
//     newest upstream allocator does that; 1.34/1.35 kept the list).
//   - Upstream matches most errors by substring; here the whole message is compared.
#include "pkg/framework/plugins/dynamicresources/allocator.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <optional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "pkg/api/json.h"
#include "tests/fakes/builders.h"
#include "tests/fakes/resource_builders.h"

namespace ksched::framework::plugins::dynamicresources {
namespace {

using testing::AdminAccess;
using testing::AllDevices;
using testing::ClaimBuilder;
using testing::DeviceBuilder;
using testing::DeviceClassBuilder;
using testing::DeviceResult;
using testing::Exactly;
using testing::ExactRequest;
using testing::FakeDevicesInUse;
using testing::FirstAvailable;
using testing::LocalNodeSelector;
using testing::NodeBuilder;
using testing::NodeLabelSelector;
using testing::SliceBuilder;
using testing::SubRequest;
using testing::Tolerating;

// ---- upstream's fixtures ------------------------------------------------------------------

const std::string kDriverA = "driver-a", kDriverB = "driver-b";

api::NodePtr Node(const std::string& name, const std::string& region) {
  return NodeBuilder(name).Label("region", region).Label("planet", "earth").Obj();
}
api::NodePtr Node1() { return Node("node-1", "region-1"); }

api::DeviceClassPtr Class(const std::string& name, const std::string& driver) {
  return DeviceClassBuilder(name).Driver(driver).Ptr();
}
// upstream deviceConfiguration's parameters: {"<attribute>":"<attribute>Value"}.
std::string Params(const std::string& attribute) { return "{\"" + attribute + "\":\"" + attribute + "Value\"}"; }
api::DeviceClassPtr ClassWithConfig(const std::string& name, const std::string& driver, const std::string& attribute) {
  return DeviceClassBuilder(name).Driver(driver).Config(driver, Params(attribute)).Ptr();
}


// upstream sliceWithOneDevice / sliceWithMultipleDevices on a node.
SliceBuilder Slice(const std::string& name, const std::string& node, const std::string& pool, const std::string& driver,
                   int64_t slice_count = 1) {
  SliceBuilder b(name);
  if (!node.empty()) b.Node(node);
  b.Driver(driver).Pool(pool, 1, slice_count);
  return b;
}
api::ResourceSlicePtr OneDevice(const std::string& name, const std::string& node, const std::string& pool,
                                const std::string& driver) {
  return Slice(name, node, pool, driver).Device("device-1").Ptr();
}

// `device.capacity["driver-a"].memory.compareTo(quantity("<q>")) >= 0`
std::string MemoryAtLeast(const std::string& q) {
  return "device.capacity[\"driver-a\"].memory.compareTo(quantity(\"" + q + "\")) >= 0";
}

api::ResourceClaimPtr Claim(const std::string& name, std::vector<api::DeviceRequest> requests,
                            std::vector<api::DeviceConstraint> constraints = {}) {
  ClaimBuilder b(name);
  for (auto& r : requests) b.Request(std::move(r));
  for (auto& c : constraints) b.Constraint(std::move(c));
  return b.Ptr();
}
// upstream claimWithRequest: one request for one device.
api::ResourceClaimPtr SimpleClaim(const std::string& name, const std::string& request, const std::string& cls) {
  return ClaimBuilder(name).Request(request, cls).Ptr();
}

api::DeviceConstraint Match(const std::string& attribute, std::vector<std::string> requests = {}) {
  return {.requests = std::move(requests), .match_attribute = attribute, .distinct_attribute = {}};
}
api::DeviceConstraint Distinct(const std::string& attribute, std::vector<std::string> requests = {}) {
  return {.requests = std::move(requests), .match_attribute = {}, .distinct_attribute = attribute};
}

api::DeviceRequestAllocationResult Res(const std::string& request, const std::string& driver, const std::string& pool,
                                       const std::string& device, bool admin = false,
                                       std::vector<api::DeviceToleration> tolerations = {}) {
  return DeviceResult(request, driver, pool, device, admin, std::move(tolerations));
}
api::AllocationResult Local(std::vector<api::DeviceRequestAllocationResult> results,
                            std::vector<api::DeviceAllocationConfiguration> config = {}) {
  return testing::Allocation(LocalNodeSelector("node-1"), std::move(results), std::move(config));
}
std::vector<api::DeviceRequestAllocationResult> Many(const std::string& request, const std::string& driver,
                                                     const std::string& pool, int count, int first) {
  std::vector<api::DeviceRequestAllocationResult> out;
  for (int i = first; i < first + count; ++i) out.push_back(Res(request, driver, pool, "device-" + std::to_string(i)));
  return out;
}

api::DeviceId Id(const std::string& driver, const std::string& pool, const std::string& device) {
  return api::DeviceId{driver, pool, device};
}

const api::DeviceToleration kTolerateNoSchedule{
    .key = "taint-key", .op_exists = true, .value = "", .effect = api::TaintEffect::kNoSchedule};
const api::DeviceToleration kTolerateNoExecute{
    .key = "taint-key", .op_exists = false, .value = "taint-value-2", .effect = api::TaintEffect::kNoExecute};

api::Device Tainted(const std::string& name, std::vector<api::TaintEffect> effects) {
  DeviceBuilder b(name);
  for (api::TaintEffect e : effects)
    b.Taint("taint-key", e == api::TaintEffect::kNoExecute ? "taint-value-2" : "taint-value", e);
  return b.Obj();
}

// A partition consuming `memory` of counter-set-1, with that much memory as capacity
// (upstream device(name, fromCounters, nil).withDeviceCounterConsumption(...)).
DeviceBuilder Partition(const std::string& name, const std::string& memory, const std::string& set = "counter-set-1") {
  DeviceBuilder b(name);
  b.Capacity("memory", memory).ConsumesCounters(set, {{"memory", memory}});
  return b;
}

struct Case {
  std::string name;
  std::vector<api::ResourceClaimPtr> claims;
  std::vector<api::DeviceId> allocated;
  std::vector<api::DeviceClassPtr> classes;
  std::vector<api::ResourceSlicePtr> slices;
  api::NodePtr node = Node1();
  std::vector<api::AllocationResult> want;
  std::string want_error;  // the whole message; empty: no error
  bool want_node_only = false;
};

std::string Describe(const std::vector<api::AllocationResult>& results) {
  std::string out = "[";
  for (const api::AllocationResult& r : results) out += "\n  " + api::EncodeAllocationResult(r);
  return out + "]";
}

std::vector<Case> Cases() {
  std::vector<Case> cases;
  const std::vector<api::DeviceClassPtr> class_a = {Class("class-a", kDriverA)};
  const std::vector<api::DeviceClassPtr> classes_ab = {Class("class-a", kDriverA), Class("class-b", kDriverB)};
  const auto one_device_a = OneDevice("slice-1", "node-1", "pool-1", kDriverA);
  const auto two_devices_a = Slice("slice-1", "node-1", "pool-1", kDriverA).Device("device-1").Device("device-2").Ptr();

  cases.push_back({.name = "empty"});
  cases.push_back({.name = "simple",
                   .claims = {SimpleClaim("claim-0", "req-0", "class-a")},
                   .classes = class_a,
                   .slices = {one_device_a},
                   .want = {Local({Res("req-0", kDriverA, "pool-1", "device-1")})}});
  cases.push_back({.name = "other-node",
                   .claims = {SimpleClaim("claim-0", "req-0", "class-a")},
                   .classes = class_a,
                   .slices = {OneDevice("slice-1", "node-1", "pool-1", kDriverB),
                              OneDevice("slice-2", "node-2", "pool-2", kDriverA)},
                   .node = Node("node-2", "region-2"),
                   .want = {testing::Allocation(LocalNodeSelector("node-2"),
                                                {Res("req-0", kDriverA, "pool-2", "device-1")})}});
  {
    auto small_large = Claim("claim-0", {ExactRequest("req-0", "class-a", 1, {MemoryAtLeast("1Gi")}),
                                         ExactRequest("req-1", "class-a", 1, {MemoryAtLeast("2Gi")})});
    auto d1 = DeviceBuilder("device-1").Capacity("memory", "1Gi").Obj();
    auto d2 = DeviceBuilder("device-2").Capacity("memory", "2Gi").Obj();
    cases.push_back({.name = "small-and-large",
                     .claims = {small_large},
                     .classes = class_a,
                     .slices = {Slice("slice-1", "node-1", "pool-1", kDriverA).Device(d1).Device(d2).Ptr()},
                     .want = {Local({Res("req-0", kDriverA, "pool-1", "device-1"),
                                     Res("req-1", kDriverA, "pool-1", "device-2")})}});
    cases.push_back({.name = "small-and-large-backtrack-requests",
                     .claims = {small_large},
                     .classes = class_a,
                     .slices = {Slice("slice-1", "node-1", "pool-1", kDriverA).Device(d2).Device(d1).Ptr()},
                     .want = {Local({Res("req-0", kDriverA, "pool-1", "device-1"),
                                     Res("req-1", kDriverA, "pool-1", "device-2")})}});
    cases.push_back({.name = "small-and-large-backtrack-claims",
                     .claims = {Claim("claim-0", {ExactRequest("req-0", "class-a", 1, {MemoryAtLeast("1Gi")})}),
                                Claim("claim-1", {ExactRequest("req-1", "class-a", 1, {MemoryAtLeast("2Gi")})})},
                     .classes = class_a,
                     .slices = {Slice("slice-1", "node-1", "pool-1", kDriverA).Device(d2).Device(d1).Ptr()},
                     .want = {Local({Res("req-0", kDriverA, "pool-1", "device-1")}),
                              Local({Res("req-1", kDriverA, "pool-1", "device-2")})}});
  }
  cases.push_back({.name = "devices-split-across-different-slices",
                   .claims = {Claim("claim-0", {ExactRequest("req-0", "class-a", 2)})},
                   .classes = class_a,
                   .slices = {OneDevice("slice-1", "node-1", "pool-1", kDriverA),
                              OneDevice("slice-2", "node-1", "pool-2", kDriverA)},
                   .want = {Local({Res("req-0", kDriverA, "pool-1", "device-1"),
                                   Res("req-0", kDriverA, "pool-2", "device-1")})}});
  cases.push_back({.name = "obsolete-slice",
                   .claims = {SimpleClaim("claim-0", "req-0", "class-a")},
                   .classes = class_a,
                   .slices = {Slice("slice-1-obsolete", "node-1", "pool-1", kDriverA, 2).Device("device-1").Ptr(),
                              SliceBuilder("slice-1-obsolete")
                                  .Node("node-1")
                                  .Driver(kDriverA)
                                  .Pool("pool-1", 2, 2)
                                  .Device("device-2")
                                  .Ptr()}});
  {
    auto a = Slice("slice-1", "node-1", "pool-1", kDriverA, 2).Device("device-1").Obj();
    auto b = a;
    b.metadata.name += "-2";
    cases.push_back({.name = "duplicate-slice",
                     .claims = {SimpleClaim("claim-0", "req-0", "class-a")},
                     .classes = class_a,
                     .slices = {std::make_shared<const api::ResourceSlice>(a),
                                std::make_shared<const api::ResourceSlice>(b)},
                     .want_error = "invalid resource pools were encountered",
                     .want_node_only = true});
  }
  cases.push_back({.name = "no-slices", .claims = {SimpleClaim("claim-0", "req-0", "class-a")}, .classes = class_a});
  cases.push_back({.name = "not-enough-suitable-devices",
                   .claims = {SimpleClaim("claim-0", "req-0", "class-a"), SimpleClaim("claim-0", "req-1", "class-a")},
                   .classes = class_a,
                   .slices = {one_device_a}});
  cases.push_back({.name = "no-classes",
                   .claims = {SimpleClaim("claim-0", "req-0", "class-a")},
                   .slices = {one_device_a},
                   .want_error = "claim default/claim-0, request req-0: could not retrieve device class class-a: "
                                 "deviceclass.resource.k8s.io \"class-a\" not found"});
  cases.push_back({.name = "unknown-class",
                   .claims = {SimpleClaim("claim-0", "req-0", "unknown-class")},
                   .classes = class_a,
                   .slices = {one_device_a},
                   .want_error = "claim default/claim-0, request req-0: could not retrieve device class unknown-class: "
                                 "deviceclass.resource.k8s.io \"unknown-class\" not found"});
  cases.push_back({.name = "empty-class",
                   .claims = {SimpleClaim("claim-0", "req-0", "")},
                   .classes = class_a,
                   .slices = {one_device_a},
                   .want_error = "claim default/claim-0, request req-0: missing device class name (unsupported request "
                                 "type?)"});
  cases.push_back({.name = "no-claims-to-allocate", .classes = class_a, .slices = {one_device_a}});

  // ---- allocationMode All ----
  const auto all_claim = Claim("claim-0", {ExactRequest("req-0", AllDevices("class-a"))});
  cases.push_back({.name = "all-devices-single",
                   .claims = {all_claim},
                   .classes = class_a,
                   .slices = {one_device_a},
                   .want = {Local({Res("req-0", kDriverA, "pool-1", "device-1")})}});
  cases.push_back({.name = "all-devices-many",
                   .claims = {all_claim},
                   .classes = class_a,
                   .slices = {one_device_a, OneDevice("slice-1", "node-1", "pool-2", kDriverA)},
                   .want = {Local({Res("req-0", kDriverA, "pool-1", "device-1"),
                                   Res("req-0", kDriverA, "pool-2", "device-1")})}});
  cases.push_back({.name = "all-devices-of-the-incomplete-pool",
                   .claims = {all_claim},
                   .classes = class_a,
                   .slices = {Slice("slice-1", "node-1", "pool-1", kDriverA, 2).Device("device-1").Ptr()},
                   .want_error = "claim default/claim-0, request req-0: asks for all devices, but resource pool "
                                 "driver-a/pool-1 is currently being updated"});
  {
    auto one_b = Claim("claim-1", {ExactRequest("req-0", "class-b")});
    auto a_and_b = std::vector<api::ResourceSlicePtr>{one_device_a, OneDevice("slice-1", "node-1", "pool-1", kDriverB)};
    cases.push_back({.name = "all-devices-plus-another",
                     .claims = {all_claim, one_b},
                     .classes = classes_ab,
                     .slices = a_and_b,
                     .want = {Local({Res("req-0", kDriverA, "pool-1", "device-1")}),
                              Local({Res("req-0", kDriverB, "pool-1", "device-1")})}});
    cases.push_back({.name = "all-devices-plus-another-reversed",
                     .claims = {one_b, all_claim},
                     .classes = classes_ab,
                     .slices = a_and_b,
                     .want = {Local({Res("req-0", kDriverB, "pool-1", "device-1")}),
                              Local({Res("req-0", kDriverA, "pool-1", "device-1")})}});
    auto many_a = std::vector<api::ResourceSlicePtr>{two_devices_a, OneDevice("slice-1", "node-1", "pool-1", kDriverB)};
    cases.push_back({.name = "all-devices-many-plus-another",
                     .claims = {all_claim, one_b},
                     .classes = classes_ab,
                     .slices = many_a,
                     .want = {Local({Res("req-0", kDriverA, "pool-1", "device-1"),
                                     Res("req-0", kDriverA, "pool-1", "device-2")}),
                              Local({Res("req-0", kDriverB, "pool-1", "device-1")})}});
    cases.push_back({.name = "all-devices-many-plus-another-reversed",
                     .claims = {one_b, all_claim},
                     .classes = classes_ab,
                     .slices = many_a,
                     .want = {Local({Res("req-0", kDriverB, "pool-1", "device-1")}),
                              Local({Res("req-0", kDriverA, "pool-1", "device-1"),
                                     Res("req-0", kDriverA, "pool-1", "device-2")})}});
  }
  cases.push_back({.name = "all-devices-no-solution",
                   .claims = {Claim("claim-1", {ExactRequest("req-0", "class-a")}), all_claim},
                   .classes = class_a,
                   .slices = {one_device_a}});
  cases.push_back({.name = "all-devices-no-solution-reversed",
                   .claims = {all_claim, Claim("claim-1", {ExactRequest("req-0", "class-a")})},
                   .classes = class_a,
                   .slices = {one_device_a}});
  cases.push_back({.name = "all-devices-slice-without-devices",
                   .claims = {all_claim},
                   .classes = class_a,
                   .slices = {Slice("slice-1", "node-1", "pool-1", kDriverA).Ptr()}});
  cases.push_back({.name = "all-devices-no-slices", .claims = {all_claim}, .classes = class_a});
  cases.push_back({.name = "all-devices-some-allocated",
                   .claims = {all_claim},
                   .allocated = {Id(kDriverA, "pool-1", "device-1")},
                   .classes = class_a,
                   .slices = {two_devices_a}});

  // ---- admin access ----
  cases.push_back({.name = "all-devices-some-allocated-admin-access",
                   .claims = {Claim("claim-0", {ExactRequest("req-0", AdminAccess(AllDevices("class-a")))})},
                   .allocated = {Id(kDriverA, "pool-1", "device-1")},
                   .classes = class_a,
                   .slices = {two_devices_a},
                   .want = {Local({Res("req-0", kDriverA, "pool-1", "device-1", true),
                                   Res("req-0", kDriverA, "pool-1", "device-2", true)})}});
  cases.push_back({.name = "all-devices-some-allocating-admin-access",
                   .claims = {Claim("claim-0", {ExactRequest("req-0", AdminAccess(Exactly("class-a"))),
                                                ExactRequest("req-1", AdminAccess(AllDevices("class-a")))})},
                   .classes = class_a,
                   .slices = {two_devices_a}});
  cases.push_back({.name = "count-devices-some-allocated-admin-access",
                   .claims = {Claim("claim-0", {ExactRequest("req-0", AdminAccess(Exactly("class-a", 2)))})},
                   .allocated = {Id(kDriverA, "pool-1", "device-1")},
                   .classes = class_a,
                   .slices = {two_devices_a},
                   .want = {Local({Res("req-0", kDriverA, "pool-1", "device-1", true),
                                   Res("req-0", kDriverA, "pool-1", "device-2", true)})}});
  cases.push_back({.name = "separate-claims-share-device-admin-access",
                   .claims = {Claim("claim-0", {ExactRequest("req-0", AdminAccess(Exactly("class-a")))}),
                              Claim("claim-1", {ExactRequest("req-0", AdminAccess(Exactly("class-a")))})},
                   .classes = class_a,
                   .slices = {two_devices_a},
                   .want = {Local({Res("req-0", kDriverA, "pool-1", "device-1", true)}),
                            Local({Res("req-0", kDriverA, "pool-1", "device-1", true)})}});
  cases.push_back({.name = "admin-access-claims-device-allocating-for-non-admin-access",
                   .claims = {SimpleClaim("claim-0", "req-0", "class-a"),
                              Claim("claim-1", {ExactRequest("req-0", AdminAccess(Exactly("class-a")))})},
                   .classes = class_a,
                   .slices = {two_devices_a},
                   .want = {Local({Res("req-0", kDriverA, "pool-1", "device-1")}),
                            Local({Res("req-0", kDriverA, "pool-1", "device-1", true)})}});
  // admin-access-disabled: the feature is always on here.
  cases.push_back({.name = "admin-access-enabled",
                   .claims = {Claim("claim-0", {ExactRequest("req-0", AdminAccess(Exactly("class-a")))})},
                   .allocated = {Id(kDriverA, "pool-1", "device-1"), Id(kDriverA, "pool-1", "device-2")},
                   .classes = class_a,
                   .slices = {one_device_a},
                   .want = {Local({Res("req-0", kDriverA, "pool-1", "device-1", true)})}});

  // ---- prioritized list with allocationMode All ----
  {
    auto all_then_b = Claim("claim-0", {FirstAvailable("req-0", {SubRequest("subReq-0", AllDevices("class-a")),
                                                                 SubRequest("subReq-1", Exactly("class-b"))})});
    auto b_device = OneDevice("slice-2", "node-1", "pool-2", kDriverB);
    auto want = std::vector<api::AllocationResult>{Local({Res("req-0/subReq-1", kDriverB, "pool-2", "device-1")})};
    cases.push_back({.name = "all-devices-slice-without-devices-prioritized-list",
                     .claims = {all_then_b},
                     .classes = classes_ab,
                     .slices = {Slice("slice-1", "node-1", "pool-1", kDriverA).Ptr(), b_device},
                     .want = want});
    cases.push_back({.name = "all-devices-no-slices-prioritized-list",
                     .claims = {all_then_b},
                     .classes = classes_ab,
                     .slices = {b_device},
                     .want = want});
    cases.push_back({.name = "all-devices-some-allocated-prioritized-list",
                     .claims = {all_then_b},
                     .allocated = {Id(kDriverA, "pool-1", "device-1")},
                     .classes = classes_ab,
                     .slices = {two_devices_a, b_device},
                     .want = want});
  }

  // ---- node selection ----
  cases.push_back({.name = "network-attached-device",
                   .claims = {SimpleClaim("claim-0", "req-0", "class-a")},
                   .classes = class_a,
                   .slices = {SliceBuilder("slice-1")
                                  .NodeSelector(NodeLabelSelector("region", {"region-1"}))
                                  .Driver(kDriverA)
                                  .Pool("pool-1")
                                  .Device("device-1")
                                  .Ptr()},
                   .want = {testing::Allocation(NodeLabelSelector("region", {"region-1"}),
                                                {Res("req-0", kDriverA, "pool-1", "device-1")})}});
  cases.push_back({.name = "unsuccessful-allocation-network-attached-device",
                   .claims = {SimpleClaim("claim-0", "req-0", "class-a")},
                   .classes = class_a,
                   .slices = {SliceBuilder("slice-1")
                                  .NodeSelector(NodeLabelSelector("region", {"region-1"}))
                                  .Driver(kDriverA)
                                  .Pool("pool-1")
                                  .Device("device-1")
                                  .Ptr()},
                   .node = Node("node-2", "region-2")});
  {
    api::NodeSelectorTerm merged;
    merged.match_expressions = {{"region", api::SelectorOperator::kIn, {"region-1"}},
                                {"planet", api::SelectorOperator::kIn, {"earth"}}};
    merged.match_fields = {{"metadata.name", api::SelectorOperator::kIn, {"node-1"}}};
    auto with = [](const std::string& pool) { return SliceBuilder("slice-1").Driver(kDriverA).Pool(pool).Device("device-1"); };
    cases.push_back({.name = "many-network-attached-devices",
                     .claims = {Claim("claim-0", {ExactRequest("req-0", "class-a", 4)})},
                     .classes = class_a,
                     .slices = {with("pool-1").NodeSelector(NodeLabelSelector("region", {"region-1"})).Ptr(),
                                with("pool-2").AllNodes().Ptr(),
                                with("pool-3").NodeSelector(NodeLabelSelector("planet", {"earth"})).Ptr(),
                                with("pool-4").NodeSelector(LocalNodeSelector("node-1")).Ptr()},
                     .want = {testing::Allocation(std::vector<api::NodeSelectorTerm>{merged},
                                                  {Res("req-0", kDriverA, "pool-1", "device-1"),
                                                   Res("req-0", kDriverA, "pool-2", "device-1"),
                                                   Res("req-0", kDriverA, "pool-3", "device-1"),
                                                   Res("req-0", kDriverA, "pool-4", "device-1")})}});
    cases.push_back({.name = "local-and-network-attached-devices",
                     .claims = {Claim("claim-0", {ExactRequest("req-0", "class-a", 2)})},
                     .classes = class_a,
                     .slices = {with("pool-1").NodeSelector(NodeLabelSelector("region", {"region-1"})).Ptr(),
                                with("pool-2").Node("node-1").Ptr()},
                     .want = {Local({Res("req-0", kDriverA, "pool-1", "device-1"),
                                     Res("req-0", kDriverA, "pool-2", "device-1")})}});
  }
  cases.push_back({.name = "several-different-drivers",
                   .claims = {SimpleClaim("claim-0", "req-0", "class-a"), SimpleClaim("claim-0", "req-0", "class-b")},
                   .classes = classes_ab,
                   .slices = {two_devices_a, OneDevice("slice-1", "node-1", "pool-1", kDriverB)},
                   .want = {Local({Res("req-0", kDriverA, "pool-1", "device-1")}),
                            Local({Res("req-0", kDriverB, "pool-1", "device-1")})}});
  cases.push_back({.name = "already-allocated-devices",
                   .claims = {SimpleClaim("claim-0", "req-0", "class-a")},
                   .allocated = {Id(kDriverA, "pool-1", "device-1"), Id(kDriverA, "pool-1", "device-2")},
                   .classes = class_a,
                   .slices = {one_device_a}});

  // ---- constraints ----
  {
    const std::string numa = "driver-a/numa", version = "driver-a/driverVersion", str = "driver-a/stringAttribute",
                      boolean = "driver-a/boolAttribute";
    auto all_attrs = [](const std::string& name) {
      return DeviceBuilder(name)
          .Attr("driverVersion", testing::VersionAttr("1.0.0"))
          .Attr("numa", testing::IntAttr(1))
          .Attr("stringAttribute", testing::StringAttr("stringAttributeValue"))
          .Attr("boolAttribute", testing::BoolAttr(true))
          .Obj();
    };
    cases.push_back({.name = "with-constraint",
                     .claims = {Claim("claim-0", {ExactRequest("req-0", "class-a"), ExactRequest("req-1", "class-a")},
                                      {Match(numa), Match(version), Match(str), Match(boolean)})},
                     .classes = class_a,
                     .slices = {Slice("slice-1", "node-1", "pool-1", kDriverA)
                                    .Device(all_attrs("device-1"))
                                    .Device(all_attrs("device-2"))
                                    .Ptr()},
                     .want = {Local({Res("req-0", kDriverA, "pool-1", "device-1"),
                                     Res("req-1", kDriverA, "pool-1", "device-2")})}});
    cases.push_back({.name = "with-constraint-non-existent-attribute",
                     .claims = {Claim("claim-0", {ExactRequest("req-0", "class-a")}, {Match("driver-a/NonExistentAttribute")})},
                     .classes = class_a,
                     .slices = {one_device_a}});
    auto two = [](const std::string& attr, api::DeviceAttribute v1, api::DeviceAttribute v2) {
      return Slice("slice-1", "node-1", "pool-1", kDriverA)
          .Device(DeviceBuilder("device-1").Attr(attr, std::move(v1)).Obj())
          .Device(DeviceBuilder("device-2").Attr(attr, std::move(v2)).Obj())
          .Ptr();
    };
    cases.push_back({.name = "with-constraint-not-matching-int-attribute",
                     .claims = {Claim("claim-0", {ExactRequest("req-0", "class-a", 2)}, {Match(numa)})},
                     .classes = classes_ab,
                     .slices = {two("numa", testing::IntAttr(1), testing::IntAttr(2))}});
    cases.push_back({.name = "with-constraint-not-matching-int-attribute-all-devices",
                     .claims = {Claim("claim-0", {ExactRequest("req-0", AllDevices("class-a"))}, {Match(numa)})},
                     .classes = classes_ab,
                     .slices = {two("numa", testing::IntAttr(1), testing::IntAttr(2))},
                     .want_error = "claim default/claim-0, request req-0: cannot add device driver-a/pool-1/device-2 "
                                   "because a claim constraint would not be satisfied"});
    cases.push_back({.name = "with-constraint-not-matching-string-attribute",
                     .claims = {Claim("claim-0", {ExactRequest("req-0", "class-a", 2)}, {Match(str)})},
                     .classes = classes_ab,
                     .slices = {two("stringAttribute", testing::StringAttr("stringAttributeValue"),
                                    testing::StringAttr("stringAttributeValue2"))}});
    cases.push_back({.name = "with-constraint-not-matching-bool-attribute",
                     .claims = {Claim("claim-0", {ExactRequest("req-0", "class-a", 2)}, {Match(boolean)})},
                     .classes = classes_ab,
                     .slices = {two("boolAttribute", testing::BoolAttr(true), testing::BoolAttr(false))}});
    cases.push_back({.name = "with-constraint-not-matching-version-attribute",
                     .claims = {Claim("claim-0", {ExactRequest("req-0", "class-a", 2)}, {Match(version)})},
                     .classes = classes_ab,
                     .slices = {two("driverVersion", testing::VersionAttr("1.0.0"), testing::VersionAttr("2.0.0"))}});
    cases.push_back({.name = "with-constraint-for-request",
                     .claims = {Claim("claim-0", {ExactRequest("req-0", "class-a"), ExactRequest("req-1", "class-a")},
                                      {Match(version, {"req-0"})})},
                     .classes = classes_ab,
                     .slices = {two("driverVersion", testing::VersionAttr("1.0.0"), testing::VersionAttr("2.0.0"))},
                     .want = {Local({Res("req-0", kDriverA, "pool-1", "device-1"),
                                     Res("req-1", kDriverA, "pool-1", "device-2")})}});
    auto vs = [](const std::string& name, const std::string& v, const std::string& s) {
      return DeviceBuilder(name).Attr("driverVersion", testing::VersionAttr(v)).Attr("stringAttribute", testing::StringAttr(s)).Obj();
    };
    cases.push_back({.name = "with-constraint-for-request-retry",
                     .claims = {Claim("claim-0", {ExactRequest("req-0", "class-a"), ExactRequest("req-1", "class-a")},
                                      {Match(version, {"req-0"}), Match(str)})},
                     .classes = classes_ab,
                     .slices = {Slice("slice-1", "node-1", "pool-1", kDriverA)
                                    .Device(vs("device-1", "1.0.0", "a"))
                                    .Device(vs("device-2", "2.0.0", "b"))
                                    .Device(vs("device-3", "3.0.0", "b"))
                                    .Ptr()},
                     .want = {Local({Res("req-0", kDriverA, "pool-1", "device-2"),
                                     Res("req-1", kDriverA, "pool-1", "device-3")})}});
    // distinctAttribute (upstream's incubating allocator; consumable capacity there).
    cases.push_back({.name = "with-distinct-constraint",
                     .claims = {Claim("claim-0", {ExactRequest("req-0", "class-a", 2)}, {Distinct(numa)})},
                     .classes = class_a,
                     .slices = {Slice("slice-1", "node-1", "pool-1", kDriverA)
                                    .Device(DeviceBuilder("device-1").Attr("numa", testing::IntAttr(1)).Obj())
                                    .Device(DeviceBuilder("device-2").Attr("numa", testing::IntAttr(1)).Obj())
                                    .Device(DeviceBuilder("device-3").Attr("numa", testing::IntAttr(2)).Obj())
                                    .Ptr()},
                     .want = {Local({Res("req-0", kDriverA, "pool-1", "device-1"),
                                     Res("req-0", kDriverA, "pool-1", "device-3")})}});
    cases.push_back({.name = "with-distinct-constraint-not-satisfiable",
                     .claims = {Claim("claim-0", {ExactRequest("req-0", "class-a", 2)}, {Distinct(numa)})},
                     .classes = class_a,
                     .slices = {two("numa", testing::IntAttr(1), testing::IntAttr(1))}});
    cases.push_back({.name = "with-distinct-constraint-missing-attribute",
                     .claims = {Claim("claim-0", {ExactRequest("req-0", "class-a")}, {Distinct(numa)})},
                     .classes = class_a,
                     .slices = {one_device_a}});
  }

  // ---- configuration ----
  cases.push_back({.name = "with-class-device-config",
                   .claims = {SimpleClaim("claim-0", "req-0", "class-a")},
                   .classes = {ClassWithConfig("class-a", kDriverA, "classAttribute")},
                   .slices = {one_device_a},
                   // requests [req-0] names every request: cleared.
                   .want = {Local({Res("req-0", kDriverA, "pool-1", "device-1")},
                                  {{"FromClass", {}, {kDriverA, Params("classAttribute")}}})}});
  cases.push_back({.name = "with-class-device-config-with-multiple-request-and-configs",
                   .claims = {Claim("claim-0", {ExactRequest("req-0", "class-a"), ExactRequest("req-1", "class-a"),
                                                ExactRequest("req-2", "class-b")})},
                   .classes = {ClassWithConfig("class-a", kDriverA, "classAttribute-A"),
                               ClassWithConfig("class-b", kDriverB, "classAttribute-B")},
                   .slices = {Slice("slice-1", "node-1", "pool-1", kDriverA).Devices(2).Ptr(),
                              OneDevice("slice-2", "node-1", "pool-1", kDriverB)},
                   .want = {Local({Res("req-0", kDriverA, "pool-1", "device-0"), Res("req-1", kDriverA, "pool-1", "device-1"),
                                   Res("req-2", kDriverB, "pool-1", "device-1")},
                                  {{"FromClass", {"req-0", "req-1"}, {kDriverA, Params("classAttribute-A")}},
                                   {"FromClass", {"req-2"}, {kDriverB, Params("classAttribute-B")}}})}});
  cases.push_back({.name = "claim-with-device-config",
                   .claims = {ClaimBuilder("claim-0").Request("req-0", "class-a").Config({}, kDriverA, Params("deviceAttribute")).Ptr()},
                   .classes = class_a,
                   .slices = {one_device_a},
                   .want = {Local({Res("req-0", kDriverA, "pool-1", "device-1")},
                                  {{"FromClaim", {}, {kDriverA, Params("deviceAttribute")}}})}});

  // ---- broken requests ----
  {
    api::DeviceSubRequest empty_selector = Exactly("class-a");
    empty_selector.selectors.push_back({""});
    cases.push_back({.name = "unknown-selector",
                     .claims = {Claim("claim-0", {ExactRequest("req-0", empty_selector)})},
                     .classes = class_a,
                     .slices = {one_device_a},
                     .want_error = "claim default/claim-0, request req-0, selector #0: CEL expression empty "
                                   "(unsupported selector type?)"});
    api::DeviceSubRequest future = Exactly("class-a");
    future.allocation_mode = "future-mode";
    cases.push_back({.name = "unknown-allocation-mode",
                     .claims = {Claim("claim-0", {ExactRequest("req-0", future)})},
                     .classes = class_a,
                     .slices = {one_device_a},
                     .want_error = "claim default/claim-0, request req-0: unsupported count mode future-mode"});
    cases.push_back({.name = "unknown-constraint",
                     .claims = {Claim("claim-0", {ExactRequest("req-0", "class-a")}, {api::DeviceConstraint{}})},
                     .classes = class_a,
                     .slices = {one_device_a},
                     .want_error = "claim default/claim-0, constraint #0: empty constraint (unsupported constraint "
                                   "type?)"});
  }
  // invalid-CEL-*: checked by substring in InvalidCEL below (the compiler's message is
  // cel-go's text with a caret line).
  cases.push_back({.name = "too-many-devices-single-request",
                   .claims = {Claim("claim-0", {ExactRequest("req-0", "class-a", 500)})},
                   .classes = class_a,
                   .want_error = "claim default/claim-0: number of requested devices 500 exceeds the claim limit of 32"});
  cases.push_back({.name = "many-devices-okay",
                   .claims = {Claim("claim-0", {ExactRequest("req-0", "class-a", 32)})},
                   .classes = class_a});
  cases.push_back({.name = "too-many-devices-total",
                   .claims = {Claim("claim-0", {ExactRequest("req-0", "class-a", 32), ExactRequest("req-1", "class-a")})},
                   .classes = class_a,
                   .slices = {Slice("slice-1", "node-1", "pool-1", kDriverA).Devices(33).Ptr()},
                   .want_error = "claim default/claim-0: number of requested devices 33 exceeds the claim limit of 32"});
  cases.push_back({.name = "max-number-devices",
                   .claims = {Claim("claim-0", {ExactRequest("req-0", "class-a", 32)})},
                   .classes = class_a,
                   .slices = {Slice("slice-1", "node-1", "pool-1", kDriverA).Devices(32).Ptr()},
                   .want = {Local(Many("req-0", kDriverA, "pool-1", 32, 0))}});

  // ---- prioritized lists ----
  cases.push_back({.name = "prioritized-list-first-unavailable",
                   .claims = {Claim("claim-0", {FirstAvailable("req-0", {SubRequest("subReq-0", Exactly("class-b")),
                                                                         SubRequest("subReq-1", Exactly("class-a"))})})},
                   .classes = classes_ab,
                   .slices = {one_device_a},
                   .want = {Local({Res("req-0/subReq-1", kDriverA, "pool-1", "device-1")})}});
  cases.push_back({.name = "prioritized-list-non-available",
                   .claims = {Claim("claim-0", {FirstAvailable("req-0", {SubRequest("subReq-0", Exactly("class-b", 2)),
                                                                         SubRequest("subReq-1", Exactly("class-a", 2))})})},
                   .classes = classes_ab,
                   .slices = {one_device_a, OneDevice("slice-2", "node-1", "pool-2", kDriverB)}});
  cases.push_back({.name = "prioritized-list-device-config",
                   .claims = {ClaimBuilder("claim-0")
                                  .Request(FirstAvailable("req-0", {SubRequest("subReq-0", Exactly("class-a")),
                                                                    SubRequest("subReq-1", Exactly("class-b", 2))}))
                                  .Config({"req-0/subReq-0"}, kDriverA, Params("foo"))
                                  .Config({"req-0/subReq-1"}, kDriverB, Params("bar"))
                                  .Ptr()},
                   .classes = classes_ab,
                   .slices = {Slice("slice-1", "node-1", "pool-1", kDriverB).Device("device-1").Device("device-2").Ptr()},
                   // One request in the claim, one named: the list is cleared.
                   .want = {Local({Res("req-0/subReq-1", kDriverB, "pool-1", "device-1"),
                                   Res("req-0/subReq-1", kDriverB, "pool-1", "device-2")},
                                  {{"FromClaim", {}, {kDriverB, Params("bar")}}})}});
  cases.push_back({.name = "prioritized-list-class-config",
                   .claims = {Claim("claim-0", {FirstAvailable("req-0", {SubRequest("subReq-0", Exactly("class-a", 2)),
                                                                         SubRequest("subReq-1", Exactly("class-b", 2))})})},
                   .classes = {ClassWithConfig("class-a", kDriverA, "foo"), ClassWithConfig("class-b", kDriverB, "bar")},
                   .slices = {Slice("slice-1", "node-1", "pool-1", kDriverB).Device("device-1").Device("device-2").Ptr(),
                              Slice("slice-2", "node-1", "pool-2", kDriverA).Device("device-3").Ptr()},
                   .want = {Local({Res("req-0/subReq-1", kDriverB, "pool-1", "device-1"),
                                   Res("req-0/subReq-1", kDriverB, "pool-1", "device-2")},
                                  {{"FromClass", {}, {kDriverB, Params("bar")}}})}});
  {
    auto mem = [](const std::string& name, const std::string& q) { return DeviceBuilder(name).Capacity("memory", q).Obj(); };
    cases.push_back({.name = "prioritized-list-subrequests-with-expressions",
                     .claims = {Claim("claim-0", {ExactRequest("req-0", "class-a", 1, {MemoryAtLeast("1Gi")}),
                                                  FirstAvailable("req-1", {SubRequest("subReq-0", Exactly("class-a", 1, {MemoryAtLeast("4Gi")})),
                                                                           SubRequest("subReq-1", Exactly("class-a", 2, {MemoryAtLeast("2Gi")}))})})},
                     .classes = class_a,
                     .slices = {Slice("slice-1", "node-1", "pool-1", kDriverA)
                                    .Device(mem("device-1", "2Gi"))
                                    .Device(mem("device-2", "2Gi"))
                                    .Device(mem("device-3", "1Gi"))
                                    .Ptr()},
                     .want = {Local({Res("req-0", kDriverA, "pool-1", "device-3"),
                                     Res("req-1/subReq-1", kDriverA, "pool-1", "device-1"),
                                     Res("req-1/subReq-1", kDriverA, "pool-1", "device-2")})}});
    auto memv = [](const std::string& name, const std::string& q, const std::string& v) {
      return DeviceBuilder(name).Capacity("memory", q).Attr("driverVersion", testing::VersionAttr(v)).Obj();
    };
    auto two_subs = FirstAvailable("req-1", {SubRequest("subReq-0", Exactly("class-a", 1, {MemoryAtLeast("2Gi")})),
                                             SubRequest("subReq-1", Exactly("class-a", 1, {MemoryAtLeast("1Gi")}))});
    cases.push_back({.name = "prioritized-list-subrequests-with-constraints-ref-parent-request",
                     .claims = {Claim("claim-0", {ExactRequest("req-0", "class-a", 1, {MemoryAtLeast("8Gi")}), two_subs},
                                      {Match("driver-a/driverVersion", {"req-0", "req-1"})})},
                     .classes = class_a,
                     .slices = {Slice("slice-1", "node-1", "pool-1", kDriverA).Device(memv("device-1", "8Gi", "1.0.0")).Ptr(),
                                Slice("slice-2", "node-1", "pool-2", kDriverA)
                                    .Device(memv("device-2", "2Gi", "2.0.0"))
                                    .Device(memv("device-3", "1Gi", "1.0.0"))
                                    .Ptr()},
                     .want = {Local({Res("req-0", kDriverA, "pool-1", "device-1"),
                                     Res("req-1/subReq-1", kDriverA, "pool-2", "device-3")})}});
    cases.push_back({.name = "prioritized-list-subrequests-with-constraints-ref-sub-request",
                     .claims = {Claim("claim-0", {ExactRequest("req-0", "class-a", 1, {MemoryAtLeast("8Gi")}), two_subs},
                                      {Match("driver-a/driverVersion", {"req-0", "req-1/subReq-0"})})},
                     .classes = class_a,
                     .slices = {Slice("slice-1", "node-1", "pool-1", kDriverA).Device(memv("device-1", "8Gi", "1.0.0")).Ptr(),
                                Slice("slice-2", "node-1", "pool-2", kDriverA).Device(memv("device-2", "2Gi", "2.0.0")).Ptr()},
                     .want = {Local({Res("req-0", kDriverA, "pool-1", "device-1"),
                                     Res("req-1/subReq-1", kDriverA, "pool-2", "device-2")})}});
    cases.push_back({.name = "prioritized-list-multi-request",
                     .claims = {Claim("claim-0", {ExactRequest("req-1", "class-a", 1, {MemoryAtLeast("8Gi")}),
                                                  FirstAvailable("req-0", {SubRequest("subReq-0", Exactly("class-a", 1, {MemoryAtLeast("8Gi")})),
                                                                           SubRequest("subReq-1", Exactly("class-a", 1, {MemoryAtLeast("4Gi")}))})})},
                     .classes = class_a,
                     .slices = {Slice("slice-1", "node-1", "pool-1", kDriverA).Device(mem("device-1", "8Gi")).Ptr(),
                                Slice("slice-2", "node-1", "pool-2", kDriverA).Device(mem("device-2", "4Gi")).Ptr()},
                     .want = {Local({Res("req-1", kDriverA, "pool-1", "device-1"),
                                     Res("req-0/subReq-1", kDriverA, "pool-2", "device-2")})}});
    cases.push_back({.name = "prioritized-list-with-backtracking",
                     .claims = {Claim("claim-0", {FirstAvailable("req-0", {SubRequest("subReq-0", Exactly("class-a", 1, {MemoryAtLeast("8Gi")})),
                                                                           SubRequest("subReq-1", Exactly("class-a", 1, {MemoryAtLeast("4Gi")}))}),
                                                  ExactRequest("req-1", "class-a", 1, {MemoryAtLeast("8Gi")})})},
                     .classes = class_a,
                     .slices = {Slice("slice-1", "node-1", "pool-1", kDriverA).Device(mem("device-1", "8Gi")).Ptr(),
                                Slice("slice-2", "node-1", "pool-2", kDriverA).Device(mem("device-2", "4Gi")).Ptr()},
                     .want = {Local({Res("req-0/subReq-1", kDriverA, "pool-2", "device-2"),
                                     Res("req-1", kDriverA, "pool-1", "device-1")})}});
  }
  cases.push_back({.name = "prioritized-list-subrequests-with-allocation-mode-all",
                   .claims = {Claim("claim-0", {FirstAvailable("req-0", {SubRequest("subReq-0", AllDevices("class-a")),
                                                                         SubRequest("subReq-1", Exactly("class-a"))})})},
                   .allocated = {Id(kDriverA, "pool-1", "device-1")},
                   .classes = class_a,
                   .slices = {two_devices_a},
                   .want = {Local({Res("req-0/subReq-1", kDriverA, "pool-1", "device-2")})}});
  cases.push_back({.name = "prioritized-list-allocation-mode-all-multiple-requests",
                   .claims = {Claim("claim-0", {ExactRequest("req-0", "class-a"),
                                                FirstAvailable("req-1", {SubRequest("subReq-0", AllDevices("class-a")),
                                                                         SubRequest("subReq-1", Exactly("class-a"))})})},
                   .classes = class_a,
                   .slices = {two_devices_a},
                   .want = {Local({Res("req-0", kDriverA, "pool-1", "device-1"),
                                   Res("req-1/subReq-1", kDriverA, "pool-1", "device-2")})}});
  // prioritized-list-disabled: the feature is always on here.
  cases.push_back({.name = "prioritized-list-too-many-in-first-subrequest",
                   .claims = {Claim("claim-0", {FirstAvailable("req-0", {SubRequest("subReq-0", Exactly("class-b", 500)),
                                                                         SubRequest("subReq-1", Exactly("class-a"))})})},
                   .classes = classes_ab,
                   .slices = {one_device_a},
                   .want = {Local({Res("req-0/subReq-1", kDriverA, "pool-1", "device-1")})}});
  cases.push_back({.name = "prioritized-list-allocation-mode-all",
                   .claims = {Claim("claim-0", {FirstAvailable("req-0", {SubRequest("subReq-0", AllDevices("class-a")),
                                                                         SubRequest("subReq-1", Exactly("class-a"))})})},
                   .allocated = {Id(kDriverA, "pool-1", "device-2")},
                   .classes = class_a,
                   .slices = {two_devices_a},
                   .want = {Local({Res("req-0/subReq-1", kDriverA, "pool-1", "device-1")})}});
  {
    auto gen = [](const std::string& g) { return "device.attributes[\"driver-a\"].generation == \"" + g + "\""; };
    auto v6_then_v5 = Claim("claim-0", {FirstAvailable("req-0", {SubRequest("subReq-0", AllDevices("class-a", {gen("v6")})),
                                                                 SubRequest("subReq-1", AllDevices("class-a", {gen("v5")}))})});
    auto dev = [](const std::string& name, const std::string& g) {
      return DeviceBuilder(name).Attr("generation", testing::StringAttr(g)).Obj();
    };
    cases.push_back({.name = "prioritized-list-allocation-mode-all-with-selectors",
                     .claims = {v6_then_v5},
                     .classes = class_a,
                     .slices = {Slice("slice-1", "node-1", "pool-1", kDriverA).Device(dev("device-1", "v5")).Ptr()},
                     .want = {Local({Res("req-0/subReq-1", kDriverA, "pool-1", "device-1")})}});
    cases.push_back({.name = "prioritized-list-allocation-mode-all-with-selectors-multiple-pools",
                     .claims = {v6_then_v5},
                     .classes = class_a,
                     .slices = {Slice("slice-1", "node-1", "pool-1", kDriverA).Device(dev("device-1", "v5")).Ptr(),
                                Slice("slice-2", "node-1", "pool-2", kDriverA).Device(dev("device-1", "v5")).Ptr()},
                     .want = {Local({Res("req-0/subReq-1", kDriverA, "pool-1", "device-1"),
                                     Res("req-0/subReq-1", kDriverA, "pool-2", "device-1")})}});
    cases.push_back({.name = "prioritized-list-allocation-mode-all-with-selectors-multiple-pools-across-nodes",
                     .claims = {v6_then_v5},
                     .classes = class_a,
                     .slices = {Slice("slice-1", "node-1", "pool-1", kDriverA).Device(dev("device-1", "v5")).Ptr(),
                                Slice("slice-2", "node-2", "pool-2", kDriverA)
                                    .Device(dev("device-1", "v5"))
                                    .Device(dev("device-2", "v6"))
                                    .Ptr()},
                     .want = {Local({Res("req-0/subReq-1", kDriverA, "pool-1", "device-1")})}});
    auto sel = [](const std::string& name, const std::string& g, bool selected) {
      return DeviceBuilder(name).Attr("generation", testing::StringAttr(g)).Attr("selected", testing::BoolAttr(selected)).Obj();
    };
    cases.push_back({.name = "prioritized-list-allocation-mode-all-with-selectors-deviceclass-subset",
                     .claims = {v6_then_v5},
                     .classes = {DeviceClassBuilder("class-a")
                                     .Selector("device.driver == \"driver-a\" && device.attributes[\"driver-a\"].selected")
                                     .Ptr()},
                     .slices = {Slice("slice-1", "node-1", "pool-1", kDriverA)
                                    .Device(sel("device-1", "v6", false))
                                    .Device(sel("device-2", "v5", false))
                                    .Device(sel("device-3", "v5", true))
                                    .Ptr()},
                     .want = {Local({Res("req-0/subReq-1", kDriverA, "pool-1", "device-3")})}});
  }
  {
    auto half_or_all = [](const std::string& name) {
      return FirstAvailable(name, {SubRequest("subReq-0", Exactly("class-a", 32)), SubRequest("subReq-1", Exactly("class-a", 16))});
    };
    auto want = Many("req-0/subReq-1", kDriverA, "pool-1", 16, 0);
    auto second = Many("req-1/subReq-1", kDriverA, "pool-1", 16, 16);
    want.insert(want.end(), second.begin(), second.end());
    cases.push_back({.name = "prioritized-list-max-allocation-limit-request",
                     .claims = {Claim("claim-0", {half_or_all("req-0"), half_or_all("req-1")})},
                     .classes = class_a,
                     .slices = {Slice("slice-1", "node-1", "pool-1", kDriverA).Devices(64).Ptr()},
                     .want = {Local(want)}});
    cases.push_back({.name = "prioritized-list-max-allocation-allocation-mode-all",
                     .claims = {Claim("claim-0", {FirstAvailable("req-0", {SubRequest("subReq-0", AllDevices("class-a")),
                                                                           SubRequest("subReq-1", Exactly("class-a", 2))}),
                                                  ExactRequest("req-1", "class-b", 2)})},
                     .classes = classes_ab,
                     .slices = {Slice("slice-1", "node-1", "pool-1", kDriverA).Devices(31).Ptr(),
                                Slice("slice-2", "node-1", "pool-2", kDriverB).Devices(2).Ptr()},
                     .want = {Local({Res("req-0/subReq-1", kDriverA, "pool-1", "device-0"),
                                     Res("req-0/subReq-1", kDriverA, "pool-1", "device-1"),
                                     Res("req-1", kDriverB, "pool-2", "device-0"),
                                     Res("req-1", kDriverB, "pool-2", "device-1")})}});
  }

  // ---- partitionable devices ----
  {
    auto counters = [](const std::string& name, const std::string& memory, const std::string& set = "counter-set-1") {
      return Slice(name, "node-1", "pool-1", kDriverA, 2).CounterSet(set, {{"memory", memory}}).Ptr();
    };
    cases.push_back({.name = "partitionable-devices-single-device",
                     .claims = {Claim("claim-0", {ExactRequest("req-0", "class-a")})},
                     .classes = class_a,
                     .slices = {Slice("slice-1", "node-1", "pool-1", kDriverA, 2)
                                    .Device(DeviceBuilder("device-1").ConsumesCounters("counter-set-1", {{"memory", "4Gi"}}).Obj())
                                    .Ptr(),
                                counters("slice-2", "8Gi")},
                     .want = {Local({Res("req-0", kDriverA, "pool-1", "device-1")})}});
    auto three = Slice("slice-1", "node-1", "pool-1", kDriverA, 2)
                     .Device(Partition("device-1", "4Gi").Obj())
                     .Device(Partition("device-2", "6Gi").Obj())
                     .Device(Partition("device-3", "4Gi").Obj())
                     .Ptr();
    cases.push_back({.name = "partitionable-devices-prioritized-list",
                     .claims = {Claim("claim-0", {ExactRequest("req-0", "class-a"),
                                                  FirstAvailable("req-1", {SubRequest("subReq-0", Exactly("class-a", 1, {MemoryAtLeast("6Gi")})),
                                                                           SubRequest("subReq-1", Exactly("class-a", 1, {MemoryAtLeast("4Gi")}))})})},
                     .classes = class_a,
                     .slices = {three, counters("slice-2", "8Gi")},
                     .want = {Local({Res("req-0", kDriverA, "pool-1", "device-1"),
                                     Res("req-1/subReq-1", kDriverA, "pool-1", "device-3")})}});
    cases.push_back({.name = "partitionable-devices-multiple-devices",
                     .claims = {Claim("claim-0", {ExactRequest("req-0", "class-a"), ExactRequest("req-1", "class-a")})},
                     .classes = class_a,
                     .slices = {three, counters("slice-2", "8Gi")},
                     .want = {Local({Res("req-0", kDriverA, "pool-1", "device-1"),
                                     Res("req-1", kDriverA, "pool-1", "device-3")})}});
    auto two_sets = [](const std::string& name, const std::string& mem, const std::string& cpus) {
      return Partition(name, mem).ConsumesCounters("counter-set-2", {{"cpus", cpus}}).Obj();
    };
    cases.push_back({.name = "partitionable-devices-multiple-capacity-pools",
                     .claims = {Claim("claim-0", {ExactRequest("req-0", "class-a"),
                                                  FirstAvailable("req-1", {SubRequest("subReq-0", Exactly("class-a", 1, {MemoryAtLeast("6Gi")})),
                                                                           SubRequest("subReq-1", Exactly("class-a", 1, {MemoryAtLeast("4Gi")}))})})},
                     .classes = class_a,
                     .slices = {Slice("slice-1", "node-1", "pool-1", kDriverA, 2)
                                    .Device(two_sets("device-1", "4Gi", "4"))
                                    .Device(two_sets("device-2", "6Gi", "6"))
                                    .Device(two_sets("device-3", "4Gi", "4"))
                                    .Ptr(),
                                Slice("slice-2", "node-1", "pool-1", kDriverA, 2)
                                    .CounterSet("counter-set-1", {{"memory", "18Gi"}})
                                    .CounterSet("counter-set-2", {{"cpus", "8"}})
                                    .Ptr()},
                     .want = {Local({Res("req-0", kDriverA, "pool-1", "device-1"),
                                     Res("req-1/subReq-1", kDriverA, "pool-1", "device-3")})}});
    auto multi = [](const std::string& name, std::string m1, std::string c1, std::string c2, std::string m2) {
      return DeviceBuilder(name)
          .ConsumesCounters("counter-set-1", {{"memory", m1}, {"cpus", c1}})
          .ConsumesCounters("counter-set-2", {{"cpus", c2}, {"memory", m2}})
          .Obj();
    };
    cases.push_back({.name = "partitionable-devices-multiple-counters",
                     .claims = {Claim("claim-0", {ExactRequest("req-0", "class-a"), ExactRequest("req-1", "class-a")})},
                     .classes = class_a,
                     .slices = {Slice("slice-1", "node-1", "pool-1", kDriverA, 2)
                                    .Device(multi("device-1", "4Gi", "6", "4", "2Gi"))
                                    .Device(multi("device-2", "6Gi", "4", "6", "6Gi"))
                                    .Device(multi("device-3", "4Gi", "4", "4", "4Gi"))
                                    .Ptr(),
                                Slice("slice-2", "node-1", "pool-1", kDriverA, 2)
                                    .CounterSet("counter-set-1", {{"cpus", "8"}, {"memory", "18Gi"}})
                                    .CounterSet("counter-set-2", {{"cpus", "12"}, {"memory", "18Gi"}})
                                    .Ptr()},
                     .want = {Local({Res("req-0", kDriverA, "pool-1", "device-2"),
                                     Res("req-1", kDriverA, "pool-1", "device-3")})}});
    auto cm = [](const std::string& name, const std::string& cpus, const std::string& mem) {
      return DeviceBuilder(name).ConsumesCounters("counter-set-1", {{"cpus", cpus}, {"memory", mem}}).Obj();
    };
    auto set = [](const std::string& name, const std::string& pool) {
      return Slice(name, "node-1", pool, kDriverA, 2).CounterSet("counter-set-1", {{"cpus", "8"}, {"memory", "18Gi"}}).Ptr();
    };
    cases.push_back({.name = "partitionable-devices-multiple-pools",
                     .claims = {Claim("claim-0", {ExactRequest("req-0", "class-a"), ExactRequest("req-1", "class-a")})},
                     .allocated = {Id(kDriverA, "pool-1", "device-2"), Id(kDriverA, "pool-1", "device-3"),
                                   Id(kDriverA, "pool-2", "device-1")},
                     .classes = class_a,
                     .slices = {Slice("slice-1", "node-1", "pool-1", kDriverA, 2)
                                    .Device(cm("device-1", "6", "4Gi"))
                                    .Device(cm("device-2", "4", "6Gi"))
                                    .Device(cm("device-3", "4", "4Gi"))
                                    .Ptr(),
                                set("slice-2", "pool-1"),
                                Slice("slice-3", "node-1", "pool-2", kDriverA, 2)
                                    .Device(cm("device-1", "6", "4Gi"))
                                    .Device(cm("device-2", "1", "7Gi"))
                                    .Device(cm("device-3", "1", "7Gi"))
                                    .Ptr(),
                                set("slice-4", "pool-2")},
                     .want = {Local({Res("req-0", kDriverA, "pool-2", "device-2"),
                                     Res("req-1", kDriverA, "pool-2", "device-3")})}});
    auto plain = [](const std::string& name, const std::string& mem) {
      return DeviceBuilder(name).ConsumesCounters("counter-set-1", {{"memory", mem}}).Obj();
    };
    cases.push_back({.name = "partitionable-devices-unused-counters-in-counter-set",
                     .claims = {Claim("claim-0", {ExactRequest("req-0", "class-a", 2)})},
                     .classes = class_a,
                     .slices = {Slice("slice-1", "node-1", "pool-1", kDriverA, 2)
                                    .Device(plain("device-1", "5Gi"))
                                    .Device(plain("device-2", "4Gi"))
                                    .Device(plain("device-3", "4Gi"))
                                    .Ptr(),
                                Slice("slice-2", "node-1", "pool-1", kDriverA, 2)
                                    .CounterSet("counter-set-1", {{"memory", "8Gi"}, {"unused", "1Gi"}})
                                    .Ptr()},
                     .want = {Local({Res("req-0", kDriverA, "pool-1", "device-2"),
                                     Res("req-0", kDriverA, "pool-1", "device-3")})}});
    // As upstream: pool-1 announces one slice but has two, so it is incomplete anyway.
    cases.push_back({.name = "partitionable-devices-no-capacity-available",
                     .claims = {Claim("claim-0", {ExactRequest("req-0", "class-a")})},
                     .allocated = {Id(kDriverA, "pool-1", "device-2")},
                     .classes = class_a,
                     .slices = {Slice("slice-1", "node-1", "pool-1", kDriverA)
                                    .Device(Partition("device-1", "4Gi").Obj())
                                    .Device(Partition("device-2", "16Gi").Obj())
                                    .Ptr(),
                                Slice("slice-2", "node-1", "pool-1", kDriverA).CounterSet("counter-set-1", {{"memory", "18Gi"}}).Ptr()}});
    // The same with a complete pool: the allocated partition leaves 2Gi.
    cases.push_back({.name = "partitionable-devices-no-capacity-available-complete-pool",
                     .claims = {Claim("claim-0", {ExactRequest("req-0", "class-a")})},
                     .allocated = {Id(kDriverA, "pool-1", "device-2")},
                     .classes = class_a,
                     .slices = {Slice("slice-1", "node-1", "pool-1", kDriverA, 2)
                                    .Device(Partition("device-1", "4Gi").Obj())
                                    .Device(Partition("device-2", "16Gi").Obj())
                                    .Ptr(),
                                counters("slice-2", "18Gi")}});
    cases.push_back({.name = "partitionable-devices-overallocated-capacity-pool",
                     .claims = {Claim("claim-0", {ExactRequest("req-0", "class-a")})},
                     .allocated = {Id(kDriverA, "pool-1", "device-2")},
                     .classes = class_a,
                     .slices = {Slice("slice-1", "node-1", "pool-1", kDriverA, 2)
                                    .Device(Partition("device-1", "4Gi").Obj())
                                    .Device(Partition("device-2", "20Gi").Obj())
                                    .Ptr(),
                                counters("slice-2", "18Gi")}});
    // partitionable-devices-disabled-*: the feature is always on here.
    cases.push_back({.name = "partitionable-devices-per-device-node-selection-nodename",
                     .claims = {Claim("claim-0", {FirstAvailable("req-0", {SubRequest("subReq-0", Exactly("class-a", 1, {MemoryAtLeast("6Gi")})),
                                                                           SubRequest("subReq-1", Exactly("class-a", 1, {MemoryAtLeast("4Gi")}))})})},
                     .classes = class_a,
                     .slices = {SliceBuilder("slice-1")
                                    .PerDeviceNodeSelection()
                                    .Driver(kDriverA)
                                    .Pool("pool-1", 1, 2)
                                    .Device(Partition("device-1", "4Gi").NodeName("node-1").Obj())
                                    .Device(Partition("device-2", "6Gi").NodeName("node-2").Obj())
                                    .Ptr(),
                                SliceBuilder("slice-2")
                                    .PerDeviceNodeSelection()
                                    .Driver(kDriverA)
                                    .Pool("pool-1", 1, 2)
                                    .CounterSet("counter-set-1", {{"memory", "18Gi"}})
                                    .Ptr()},
                     .want = {Local({Res("req-0/subReq-1", kDriverA, "pool-1", "device-1")})}});
    cases.push_back({.name = "partitionable-devices-per-device-node-selection-node-selector",
                     .claims = {Claim("claim-0", {ExactRequest("req-0", "class-a")})},
                     .classes = class_a,
                     .slices = {SliceBuilder("slice-1")
                                    .PerDeviceNodeSelection()
                                    .Driver(kDriverA)
                                    .Pool("pool-1", 1, 2)
                                    .Device(Partition("device-1", "4Gi").NodeSelector(NodeLabelSelector("region", {"region-1"})).Obj())
                                    .Ptr(),
                                SliceBuilder("slice-2")
                                    .PerDeviceNodeSelection()
                                    .Driver(kDriverA)
                                    .Pool("pool-1", 1, 2)
                                    .CounterSet("counter-set-1", {{"memory", "18Gi"}})
                                    .Ptr()},
                     .want = {testing::Allocation(NodeLabelSelector("region", {"region-1"}),
                                                  {Res("req-0", kDriverA, "pool-1", "device-1")})}});
    cases.push_back({.name = "partitionable-devices-per-device-node-selection-node-selector-multiple-devices",
                     .claims = {Claim("claim-0", {ExactRequest("req-0", "class-a", 3), ExactRequest("req-1", "class-b", 3)})},
                     .classes = classes_ab,
                     .slices = {SliceBuilder("slice-1")
                                    .PerDeviceNodeSelection()
                                    .Driver(kDriverA)
                                    .Pool("pool-1", 1, 2)
                                    .Device(Partition("device-1", "4Gi").NodeSelector(NodeLabelSelector("region", {"region-1"})).Obj())
                                    .Device(Partition("device-2", "4Gi").NodeName("node-1").Obj())
                                    .Device(Partition("device-3", "4Gi").AllNodes().Obj())
                                    .Ptr(),
                                SliceBuilder("slice-2")
                                    .PerDeviceNodeSelection()
                                    .Driver(kDriverA)
                                    .Pool("pool-1", 1, 2)
                                    .CounterSet("counter-set-1", {{"memory", "18Gi"}})
                                    .Ptr(),
                                Slice("slice-3", "node-1", "pool-2", kDriverB, 2)
                                    .Device(Partition("device-1", "4Gi", "counter-set-2").Obj())
                                    .Device(Partition("device-2", "4Gi", "counter-set-2").Obj())
                                    .Device(Partition("device-3", "4Gi", "counter-set-2").Obj())
                                    .Ptr(),
                                Slice("slice-4", "node-1", "pool-2", kDriverB, 2).CounterSet("counter-set-2", {{"memory", "12Gi"}}).Ptr()},
                     .want = {Local({Res("req-0", kDriverA, "pool-1", "device-1"), Res("req-0", kDriverA, "pool-1", "device-2"),
                                     Res("req-0", kDriverA, "pool-1", "device-3"), Res("req-1", kDriverB, "pool-2", "device-1"),
                                     Res("req-1", kDriverB, "pool-2", "device-2"), Res("req-1", kDriverB, "pool-2", "device-3")})}});
    cases.push_back({.name = "partitionable-devices-with-attribute-selector",
                     .claims = {Claim("claim-0", {ExactRequest("req-0", "class-a", 2),
                                                  ExactRequest("req-1", "class-a", 1, {"device.attributes[\"driver-a\"].special"})})},
                     .classes = class_a,
                     .slices = {Slice("slice-1", "node-1", "pool-1", kDriverA, 2)
                                    .Device(DeviceBuilder("device-1")
                                                .Attr("special", testing::BoolAttr(true))
                                                .ConsumesCounters("counter-set-1", {{"cpu1", "1"}})
                                                .ConsumesCounters("counter-set-2", {{"mem", "10Gi"}})
                                                .Obj())
                                    .Device(DeviceBuilder("device-2")
                                                .Attr("special", testing::BoolAttr(false))
                                                .ConsumesCounters("counter-set-1", {{"cpu2", "1"}})
                                                .ConsumesCounters("counter-set-2", {{"mem", "10Gi"}})
                                                .Obj())
                                    .Device(DeviceBuilder("device-3")
                                                .Attr("special", testing::BoolAttr(false))
                                                .ConsumesCounters("counter-set-1", {{"cpu3", "1"}})
                                                .ConsumesCounters("counter-set-2", {{"mem", "10Gi"}})
                                                .Obj())
                                    .Ptr(),
                                Slice("slice-2", "node-1", "pool-1", kDriverA, 2)
                                    .CounterSet("counter-set-1", {{"cpu1", "1"}, {"cpu2", "1"}, {"cpu3", "1"}})
                                    .CounterSet("counter-set-2", {{"mem", "30Gi"}})
                                    .Ptr()},
                     .want = {Local({Res("req-0", kDriverA, "pool-1", "device-2"), Res("req-0", kDriverA, "pool-1", "device-3"),
                                     Res("req-1", kDriverA, "pool-1", "device-1")})}});
    cases.push_back({.name = "partitionable-devices-device-counter-consumption-references-unknown-counter-set",
                     .claims = {Claim("claim-0", {ExactRequest("req-0", "class-a")})},
                     .classes = class_a,
                     .slices = {Slice("slice-1", "node-1", "pool-1", kDriverA, 2)
                                    .Device(Partition("device-1", "4Gi", "counter-set-2").Obj())
                                    .Ptr(),
                                counters("slice-2", "8Gi")},
                     .want_error = "invalid resource pools were encountered",
                     .want_node_only = true});
  }

  // ---- taints ----
  {
    auto tainted = [](std::vector<api::Device> devices) {
      SliceBuilder b = Slice("slice-1", "node-1", "pool-1", kDriverA);
      for (auto& d : devices) b.Device(std::move(d));
      return b.Ptr();
    };
    using E = api::TaintEffect;
    cases.push_back({.name = "tainted-two-devices",
                     .claims = {SimpleClaim("claim-0", "req-0", "class-a")},
                     .classes = class_a,
                     .slices = {tainted({Tainted("device-1", {E::kNoSchedule}), Tainted("device-2", {E::kNoExecute})})}});
    cases.push_back({.name = "tainted-one-device-two-taints",
                     .claims = {SimpleClaim("claim-0", "req-0", "class-a")},
                     .classes = class_a,
                     .slices = {tainted({Tainted("device-1", {E::kNoSchedule, E::kNoExecute})})}});
    cases.push_back({.name = "tainted-two-devices-tolerated",
                     .claims = {Claim("claim-0", {ExactRequest("req-0", Tolerating(Exactly("class-a"), kTolerateNoExecute))})},
                     .classes = class_a,
                     .slices = {tainted({Tainted("device-1", {E::kNoSchedule}), Tainted("device-2", {E::kNoExecute})})},
                     .want = {Local({Res("req-0", kDriverA, "pool-1", "device-2", false, {kTolerateNoExecute})})}});
    cases.push_back({.name = "tainted-two-devices-prioritized-list-tolerated",
                     .claims = {Claim("claim-0", {FirstAvailable("req-0", {SubRequest("subReq-0", Exactly("class-a")),
                                                                           SubRequest("subReq-1", Tolerating(Exactly("class-a"), kTolerateNoExecute))})})},
                     .classes = class_a,
                     .slices = {tainted({Tainted("device-1", {E::kNoSchedule}), Tainted("device-2", {E::kNoExecute})})},
                     .want = {Local({Res("req-0/subReq-1", kDriverA, "pool-1", "device-2", false, {kTolerateNoExecute})})}});
    cases.push_back({.name = "tainted-no-effect",
                     .claims = {SimpleClaim("claim-0", "req-0", "class-a")},
                     .classes = class_a,
                     .slices = {tainted({Tainted("device-1", {E::kNone})})},
                     .want = {Local({Res("req-0", kDriverA, "pool-1", "device-1")})}});
    cases.push_back({.name = "tainted-one-device-two-taints-both-tolerated",
                     .claims = {Claim("claim-0", {ExactRequest("req-0", Tolerating(Tolerating(Exactly("class-a"), kTolerateNoSchedule),
                                                                                   kTolerateNoExecute))})},
                     .classes = class_a,
                     .slices = {tainted({Tainted("device-1", {E::kNoSchedule, E::kNoExecute})})},
                     .want = {Local({Res("req-0", kDriverA, "pool-1", "device-1", false, {kTolerateNoSchedule, kTolerateNoExecute})})}});
    // tainted-disabled, tainted-prioritized-list-disabled, tainted-admin-access-disabled,
    // tainted-all-devices-single-disabled: the feature is always on here.
    cases.push_back({.name = "tainted-prioritized-list",
                     .claims = {Claim("claim-0", {FirstAvailable("req-0", {SubRequest("subReq-0", Exactly("class-b")),
                                                                           SubRequest("subReq-1", Exactly("class-a"))})})},
                     .classes = classes_ab,
                     .slices = {tainted({Tainted("device-1", {E::kNoSchedule})})}});
    cases.push_back({.name = "tainted-admin-access",
                     .claims = {Claim("claim-0", {ExactRequest("req-0", AdminAccess(Exactly("class-a")))})},
                     .allocated = {Id(kDriverA, "pool-1", "device-1"), Id(kDriverA, "pool-1", "device-2")},
                     .classes = class_a,
                     .slices = {tainted({Tainted("device-1", {E::kNoSchedule})})}});
    cases.push_back({.name = "tainted-all-devices-single",
                     .claims = {all_claim},
                     .classes = class_a,
                     .slices = {tainted({Tainted("device-1", {E::kNoSchedule})})}});
  }

  // ---- pools ----
  {
    auto dup_pool = Slice("slice-1", "node-1", "pool-1", kDriverA).Device("device-1").Device("device-1").Ptr();
    cases.push_back({.name = "invalid-pool-is-ok-if-devices-can-be-allocated-from-other",
                     .claims = {SimpleClaim("claim-0", "req-0", "class-a")},
                     .classes = class_a,
                     .slices = {dup_pool, Slice("slice-2", "node-1", "pool-2", kDriverA).Device("device-2").Ptr()},
                     .want = {Local({Res("req-0", kDriverA, "pool-2", "device-2")})}});
    cases.push_back({.name = "invalid-pool-is-error-if-no-other-device-can-be-allocated",
                     .claims = {SimpleClaim("claim-0", "req-0", "class-a")},
                     .allocated = {Id(kDriverA, "pool-2", "device-2")},
                     .classes = class_a,
                     .slices = {dup_pool, Slice("slice-2", "node-1", "pool-2", kDriverA).Device("device-2").Ptr()},
                     .want_error = "invalid resource pools were encountered",
                     .want_node_only = true});
    cases.push_back({.name = "no-allocation-from-incomplete-pools",
                     .claims = {SimpleClaim("claim-0", "req-0", "class-a")},
                     .classes = class_a,
                     .slices = {Slice("slice-1", "node-1", "pool-1", kDriverA, 2).Device("device-1").Ptr()}});
    cases.push_back({.name = "different-resourceslices-in-pool-can-target-different-nodes",
                     .claims = {SimpleClaim("claim-0", "req-0", "class-a")},
                     .classes = class_a,
                     .slices = {Slice("slice-1", "node-2", "pool-1", kDriverA, 2).Device("device-1").Ptr(),
                                Slice("slice-2", "node-1", "pool-1", kDriverA, 2).Device("device-2").Ptr()},
                     .want = {Local({Res("req-0", kDriverA, "pool-1", "device-2")})}});
  }

  // ---- backtracking ----
  {
    auto typed = [](const std::string& name, const std::string& t) {
      return DeviceBuilder(name).Attr("type", testing::StringAttr(t)).Obj();
    };
    auto xyy = Slice("slice-1", "node-1", "pool-1", kDriverA)
                   .Device(typed("device-1", "X"))
                   .Device(typed("device-2", "Y"))
                   .Device(typed("device-3", "Y"))
                   .Ptr();
    auto is = [](const std::string& t) { return "device.attributes[\"driver-a\"].type == \"" + t + "\""; };
    cases.push_back({.name = "check-combinations-with-backtracking",
                     .claims = {Claim("claim-0", {ExactRequest("req-1", "class-a", 2), ExactRequest("req-2", "class-a", 1, {is("X")})})},
                     .classes = class_a,
                     .slices = {xyy},
                     .want = {Local({Res("req-1", kDriverA, "pool-1", "device-2"), Res("req-1", kDriverA, "pool-1", "device-3"),
                                     Res("req-2", kDriverA, "pool-1", "device-1")})}});
    cases.push_back({.name = "check-combinations-with-prioritized-list",
                     .claims = {Claim("claim-0", {FirstAvailable("req-1", {SubRequest("subReq-0", Exactly("class-a", 3, {is("Y")})),
                                                                           SubRequest("subReq-1", Exactly("class-a", 2))}),
                                                  FirstAvailable("req-2", {SubRequest("subReq-0", Exactly("class-a", 2)),
                                                                           SubRequest("subReq-1", Exactly("class-a", 1, {is("X")}))})})},
                     .classes = class_a,
                     .slices = {xyy},
                     .want = {Local({Res("req-1/subReq-1", kDriverA, "pool-1", "device-2"),
                                     Res("req-1/subReq-1", kDriverA, "pool-1", "device-3"),
                                     Res("req-2/subReq-1", kDriverA, "pool-1", "device-1")})}});
  }
  return cases;
}

class AllocatorTest : public ::testing::TestWithParam<Case> {};

TEST_P(AllocatorTest, Allocate) {
  const Case& c = GetParam();
  auto index = std::make_shared<const SliceIndex>(c.slices);
  FakeDevicesInUse in_use(c.allocated);
  cel::SelectorCache selectors;
  std::map<std::string, api::DeviceClassPtr, std::less<>> classes;
  for (const auto& cls : c.classes) classes[cls->metadata.name] = cls;
  AllocatorInputs inputs{
      .slices = index,
      .in_use = &in_use,
      .classes = [&classes](std::string_view name) -> api::DeviceClassPtr {
        auto it = classes.find(name);
        return it == classes.end() ? nullptr : it->second;
      },
      .selectors = &selectors,
  };
  Allocator allocator(c.claims, inputs);
  AllocateOutcome outcome = allocator.Allocate(c.node);
  if (c.want_error.empty()) {
    EXPECT_TRUE(outcome.ok()) << outcome.error.message();
  } else {
    EXPECT_EQ(outcome.error.message(), c.want_error);
    EXPECT_EQ(outcome.node_only, c.want_node_only);
  }
  EXPECT_FALSE(outcome.timed_out);
  EXPECT_EQ(outcome.results, c.want) << "got " << Describe(outcome.results) << "\nwant " << Describe(c.want);

  // A second call on the same allocator (Filter on another node, or the same node
  // again) answers the same: the selection memo must not change the outcome.
  AllocateOutcome again = allocator.Allocate(c.node);
  EXPECT_EQ(again.error.message(), outcome.error.message());
  EXPECT_EQ(again.results, outcome.results);
}

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  std::string out = info.param.name;
  for (char& ch : out)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return out;
}

INSTANTIATE_TEST_SUITE_P(Upstream, AllocatorTest, ::testing::ValuesIn(Cases()), CaseName);

// ---- the rest: errors matched by substring, interrupts, the selection memo ----------

struct Fixture {
  std::vector<api::DeviceClassPtr> classes;
  std::vector<api::ResourceSlicePtr> slices;
  FakeDevicesInUse in_use;
  cel::SelectorCache selectors;

  AllocateOutcome Allocate(std::vector<api::ResourceClaimPtr> claims, api::NodePtr node = Node1(),
                           const std::atomic<bool>* stop = nullptr,
                           std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt) {
    AllocatorInputs inputs{
        .slices = std::make_shared<const SliceIndex>(slices),
        .in_use = &in_use,
        .classes = [this](std::string_view name) -> api::DeviceClassPtr {
          for (const auto& c : classes)
            if (c->metadata.name == name) return c;
          return nullptr;
        },
        .selectors = &selectors,
    };
    return Allocator(std::move(claims), inputs).Allocate(node, stop, deadline);
  }
};

// upstream invalid-CEL-one-device, invalid-CEL-one-device-class, invalid-CEL-all-devices.
TEST(AllocatorErrors, InvalidCEL) {
  struct CelCase {
    std::string name;
    api::ResourceClaimPtr claim;
    api::DeviceClassPtr cls;
    std::string prefix;
  };
  const std::vector<CelCase> cases = {
      {"invalid-CEL-one-device", Claim("claim-0", {ExactRequest("req-0", "class-a", 1, {"noSuchVar"})}),
       Class("class-a", kDriverA), "claim default/claim-0: selector #0: CEL compile error: "},
      {"invalid-CEL-one-device-class", SimpleClaim("claim-0", "req-0", "class-a"),
       DeviceClassBuilder("class-a").Selector("noSuchVar").Ptr(), "class class-a: selector #0: CEL compile error: "},
      {"invalid-CEL-all-devices", Claim("claim-0", {ExactRequest("req-0", AllDevices("class-a", {"noSuchVar"}))}),
       Class("class-a", kDriverA), "claim default/claim-0: selector #0: CEL compile error: "},
  };
  for (const CelCase& c : cases) {
    SCOPED_TRACE(c.name);
    Fixture f;
    f.classes = {c.cls};
    f.slices = {OneDevice("slice-1", "node-1", "pool-1", kDriverA)};
    AllocateOutcome out = f.Allocate({c.claim});
    std::string message(out.error.message());
    EXPECT_EQ(message.rfind(c.prefix, 0), 0u) << message;
    EXPECT_NE(message.find("undeclared reference"), std::string::npos) << message;
    EXPECT_TRUE(out.results.empty());
    EXPECT_FALSE(out.node_only);
  }
}

// plugin test claim-parameters-CEL-runtime-error at the allocator: the device is named.
TEST(AllocatorErrors, CELRuntimeError) {
  Fixture f;
  f.classes = {Class("class-a", kDriverA)};
  f.slices = {OneDevice("slice-1", "node-1", "pool-1", kDriverA)};
  AllocateOutcome out =
      f.Allocate({Claim("claim-0", {ExactRequest("req-0", "class-a", 1, {"device.attributes[\"driver-a\"].healthy"})})});
  EXPECT_EQ(out.error.message(),
            "claim default/claim-0: selector #0 on device driver-a/pool-1/device-1: CEL runtime error: no such key: healthy");
}

// upstream interrupt/cancel and interrupt/deadline: six devices asked of five.
TEST(AllocatorErrors, Interrupted) {
  Fixture f;
  f.classes = {Class("class-a", kDriverA)};
  f.slices = {Slice("slice-1", "node-1", "pool-1", kDriverA).Devices(5).Ptr()};
  auto claim = Claim("claim-0", {ExactRequest("req-0", "class-a", 6)});

  std::atomic<bool> stop{true};
  AllocateOutcome cancelled = f.Allocate({claim}, Node1(), &stop);
  EXPECT_EQ(cancelled.error.message(), "filter operation aborted");
  EXPECT_EQ(cancelled.error.code(), StatusCode::kCancelled);
  EXPECT_FALSE(cancelled.timed_out);

  AllocateOutcome late = f.Allocate({claim}, Node1(), nullptr, std::chrono::steady_clock::now() - std::chrono::seconds(1));
  EXPECT_TRUE(late.timed_out);
  EXPECT_EQ(late.error.message(), "timed out trying to allocate devices");
  EXPECT_TRUE(late.results.empty());

  // Without either, the search ends with no solution and no error.
  AllocateOutcome done = f.Allocate({claim});
  EXPECT_TRUE(done.ok());
  EXPECT_TRUE(done.results.empty());
}

// The selection memo lives in the slice index, across allocators: a device that stops
// matching because it is in use must still be skipped, and another class with the same
// request selectors must not reuse the first class's answers.
TEST(AllocatorMemo, SharedAcrossAllocators) {
  std::vector<api::ResourceSlicePtr> slices = {
      Slice("slice-1", "node-1", "pool-1", kDriverA).Device("device-1").Ptr(),
      Slice("slice-2", "node-1", "pool-1", kDriverB).Device("device-1").Ptr()};
  auto index = std::make_shared<const SliceIndex>(slices);
  cel::SelectorCache selectors;
  FakeDevicesInUse in_use;
  std::vector<api::DeviceClassPtr> classes = {Class("class-a", kDriverA), Class("class-b", kDriverB)};
  auto lookup = [&classes](std::string_view name) -> api::DeviceClassPtr {
    for (const auto& c : classes)
      if (c->metadata.name == name) return c;
    return nullptr;
  };
  AllocatorInputs inputs{.slices = index, .in_use = &in_use, .classes = lookup, .selectors = &selectors};

  auto a = Allocator({SimpleClaim("claim-0", "req-0", "class-a")}, inputs).Allocate(Node1());
  ASSERT_TRUE(a.allocated());
  EXPECT_EQ(a.results[0].results[0].driver, kDriverA);
  auto b = Allocator({SimpleClaim("claim-1", "req-0", "class-b")}, inputs).Allocate(Node1());
  ASSERT_TRUE(b.allocated());
  EXPECT_EQ(b.results[0].results[0].driver, kDriverB);

  in_use.Add(Id(kDriverA, "pool-1", "device-1"));
  auto again = Allocator({SimpleClaim("claim-2", "req-0", "class-a")}, inputs).Allocate(Node1());
  EXPECT_TRUE(again.ok());
  EXPECT_FALSE(again.allocated());

  // A class updated in place (new resourceVersion) is evaluated anew.
  auto moved = DeviceClassBuilder("class-a").Driver(kDriverB).Obj();
  moved.metadata.resource_version = "2";
  classes[0] = std::make_shared<const api::DeviceClass>(moved);
  auto updated = Allocator({SimpleClaim("claim-3", "req-0", "class-a")}, inputs).Allocate(Node1());
  ASSERT_TRUE(updated.allocated());
  EXPECT_EQ(updated.results[0].results[0].driver, kDriverB);
}

}  // namespace
}  // namespace ksched::framework::plugins::dynamicresources
