// Decoding of the resource.k8s.io/v1 objects, over the fixtures in tests/data/resource/
// (objects as an API server serves them, managedFields and newer fields included).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "pkg/api/json.h"

namespace ksched::api {
namespace {

using ::testing::HasSubstr;

// One parser for the test binary, as an informer reuses one per stream.
JsonParser& Parser() {
  static JsonParser parser;
  return parser;
}

std::string Fixture(std::string_view name) {
  const std::string path = std::string(KSCHED_RESOURCE_TESTDATA) + "/" + std::string(name);
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Quantity Q(std::string_view text) {
  auto q = Quantity::Parse(text);
  EXPECT_TRUE(q.ok()) << text;
  return q.ok() ? *q : Quantity();
}

DeviceAttribute Int(int64_t v) { return {v}; }
DeviceAttribute Bool(bool v) { return {v}; }
DeviceAttribute Str(std::string v) { return {std::move(v)}; }
DeviceAttribute Ver(uint64_t major, uint64_t minor, uint64_t patch, std::vector<std::string> pre = {},
                    std::string build = "") {
  SemVersion v;
  v.major = major;
  v.minor = minor;
  v.patch = patch;
  v.pre_release = std::move(pre);
  v.build = std::move(build);
  return {std::move(v)};
}

NodeSelectorTerm FieldTerm(std::string node) {
  return {.match_fields = {{"metadata.name", SelectorOperator::kIn, {std::move(node)}}}};
}

TEST(ResourceDecodeTest, A100SliceWithAttributesCapacityAndTaints) {
  auto decoded = DecodeResourceSlice(Parser(), Fixture("resourceslice-a100.json"));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  const ResourceSlice& s = **decoded;
  EXPECT_EQ(s.metadata, (LeanObjectMeta{.name = "gpu-node-1-gpu.nvidia.com-x8k2p",
                                        .uid = "a7f3c2e1-5b6d-4c8e-9f01-23456789abcd",
                                        .resource_version = "884213"}));
  EXPECT_EQ(s.driver, "gpu.nvidia.com");
  EXPECT_EQ(s.pool, (ResourcePool{.name = "gpu-node-1", .generation = 3, .resource_slice_count = 1}));
  EXPECT_EQ(s.nodes, (DeviceNodeSelection{.node_name = "gpu-node-1"}));
  EXPECT_FALSE(s.per_device_node_selection);
  EXPECT_TRUE(s.shared_counters.empty());
  ASSERT_EQ(s.devices.size(), 4u);
  const std::string uuids[] = {"GPU-4a3c1b7e-2f5d-4e8a-9b6c-0d1e2f3a4b5c", "GPU-5b4d2c8f-3a6e-4f9b-8c7d-1e2f3a4b5c6d",
                               "GPU-6c5e3d9a-4b7f-4a0c-9d8e-2f3a4b5c6d7e", "GPU-7d6f4e0b-5c8a-4b1d-8e9f-3a4b5c6d7e8f"};
  for (int i = 0; i < 4; ++i) {
    SCOPED_TRACE(i);
    Device want{.name = "gpu-" + std::to_string(i)};
    want.attributes = {{"architecture", Str("Ampere")},
                       {"brand", Str("Nvidia")},
                       {"cudaComputeCapability", Ver(8, 0, 0)},
                       {"driverVersion", Ver(550, 54, 15)},
                       {"index", Int(i)},
                       {"migCapable", Bool(i < 2)},
                       {"productName", Str("NVIDIA A100-SXM4-40GB")},
                       {"resource.kubernetes.io/pcieRoot", Str(i < 2 ? "pci0000:00" : "pci0000:80")},
                       {"uuid", Str(uuids[i])}};
    want.capacity = {{"memory", {Q("40Gi")}}};
    if (i == 3) {
      want.taints = {{"gpu.nvidia.com/xid", "79", TaintEffect::kNoExecute},
                     {"gpu.nvidia.com/maintenance", "", TaintEffect::kNoSchedule},
                     {"gpu.nvidia.com/ecc-warning", "", TaintEffect::kNone}};
    }
    EXPECT_EQ(s.devices[i], want);
  }
  EXPECT_EQ(std::get<SemVersion>(s.devices[0].attributes.at("driverVersion").value).minor, 54u);
}

TEST(ResourceDecodeTest, NodeSelectorSlice) {
  auto decoded = DecodeResourceSlice(Parser(), Fixture("resourceslice-nodeselector.json"));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  const ResourceSlice& s = **decoded;
  EXPECT_EQ(s.metadata.name, "rack-7-nic.example.com-4kq9d");
  EXPECT_EQ(s.metadata.resource_version, "884301");
  EXPECT_EQ(s.driver, "nic.example.com");
  EXPECT_EQ(s.pool, (ResourcePool{.name = "rack-7", .generation = 5, .resource_slice_count = 2}));
  DeviceNodeSelection want_nodes;
  want_nodes.node_selector = std::vector<NodeSelectorTerm>{
      {.match_expressions = {{"topology.example.com/rack", SelectorOperator::kIn, {"rack-7"}}},
       .match_fields = {{"metadata.name", SelectorOperator::kNotIn, {"node-retired"}}}}};
  EXPECT_EQ(s.nodes, want_nodes);
  ASSERT_EQ(s.devices.size(), 1u);
  EXPECT_EQ(s.devices[0], (Device{.name = "nic-0",
                                  .attributes = {{"nic.example.com/speedGbps", Int(400)},
                                                 {"rdma", Bool(true)},
                                                 {"model", Str("CX-7")}},
                                  .capacity = {{"bandwidth", {Q("400G")}}}}));
}

TEST(ResourceDecodeTest, AllNodesSliceDropsListAttributes) {
  auto decoded = DecodeResourceSlice(Parser(), Fixture("resourceslice-allnodes.json"));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  const ResourceSlice& s = **decoded;
  EXPECT_EQ(s.metadata.name, "fabric-licenses");
  EXPECT_EQ(s.driver, "license.example.com");
  EXPECT_EQ(s.pool, (ResourcePool{.name = "cluster", .generation = 1, .resource_slice_count = 1}));
  EXPECT_EQ(s.nodes, (DeviceNodeSelection{.all_nodes = true}));
  ASSERT_EQ(s.devices.size(), 2u);
  EXPECT_EQ(s.devices[0], (Device{.name = "seat-0", .attributes = {{"tier", Str("gold")}}}));
  // "strings" (alpha DRAListTypeAttributes) has no representation: the attribute is dropped.
  EXPECT_EQ(s.devices[1], (Device{.name = "seat-1", .attributes = {{"tier", Str("silver")}}}));
}

TEST(ResourceDecodeTest, PartitionableSliceWithCountersAndPerDeviceNodes) {
  auto decoded = DecodeResourceSlice(Parser(), Fixture("resourceslice-partitionable.json"));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  const ResourceSlice& s = **decoded;
  EXPECT_EQ(s.metadata.name, "gpu-node-2-mig");
  EXPECT_EQ(s.pool, (ResourcePool{.name = "gpu-node-2", .generation = 7, .resource_slice_count = 1}));
  EXPECT_TRUE(s.per_device_node_selection);
  EXPECT_EQ(s.nodes, DeviceNodeSelection{});
  ASSERT_EQ(s.shared_counters.size(), 1u);
  EXPECT_EQ(s.shared_counters[0],
            (CounterSet{"gpu-0-counters", {{"memory", Q("80Gi")}, {"multiprocessors", Q("98")}}}));
  ASSERT_EQ(s.devices.size(), 3u);
  EXPECT_EQ(s.devices[0],
            (Device{.name = "gpu-0",
                    .attributes = {{"profile", Str("full")}, {"firmware", Ver(1, 2, 3, {"rc", "1"}, "build.5")}},
                    .capacity = {{"memory", {Q("80Gi")}}},
                    .consumes_counters = {{"gpu-0-counters", {{"memory", Q("80Gi")}, {"multiprocessors", Q("98")}}}},
                    .node_selection = DeviceNodeSelection{.node_name = "gpu-node-2"}}));
  EXPECT_EQ(s.devices[1],
            (Device{.name = "gpu-0-mig-3g",
                    .attributes = {{"profile", Str("3g.40gb")}},
                    .capacity = {{"memory", {Q("40Gi")}}},
                    .consumes_counters = {{"gpu-0-counters", {{"memory", Q("40Gi")}, {"multiprocessors", Q("42")}}}},
                    .node_selection = DeviceNodeSelection{.node_selector = std::vector{FieldTerm("gpu-node-2")}}}));
  EXPECT_EQ(s.devices[2], (Device{.name = "shared-nic",
                                  .capacity = {{"bandwidth", {Q("100G")}}},
                                  .node_selection = DeviceNodeSelection{.all_nodes = true},
                                  .allow_multiple_allocations = true}));
}

TEST(ResourceDecodeTest, DeviceClassWithSelectorAndConfig) {
  auto decoded = DecodeDeviceClass(Parser(), Fixture("deviceclass-gpu.json"));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  const DeviceClass& c = **decoded;
  EXPECT_EQ(c.metadata, (LeanObjectMeta{.name = "gpu.nvidia.com",
                                        .uid = "e1b7a6c5-9fab-4a2c-9d45-6789abcdef01",
                                        .resource_version = "1201"}));
  EXPECT_EQ(c.selectors, (std::vector<DeviceSelector>{
                             {R"(device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].type == "gpu")"}}));
  // Parameters are kept as their JSON text, minified.
  EXPECT_EQ(c.config, (std::vector<OpaqueDeviceConfig>{
                          {"gpu.nvidia.com",
                           R"({"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig",)"
                           R"("sharing":{"strategy":"TimeSlicing","timeSlicingConfig":{"interval":"Long"}}})"}}));
}

TEST(ResourceDecodeTest, ClaimWithExactRequestsAndDefaults) {
  auto decoded = DecodeResourceClaim(Parser(), Fixture("resourceclaim-exact.json"));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  const ResourceClaim& c = **decoded;
  EXPECT_EQ(c.metadata, (LeanObjectMeta{.name = "two-a100",
                                        .namespace_ = "ml",
                                        .uid = "f2c8b7d6-0abc-4b3d-8e56-789abcdef012",
                                        .resource_version = "990001"}));
  EXPECT_EQ(c.Key(), "ml/two-a100");
  EXPECT_FALSE(c.being_deleted);
  EXPECT_TRUE(c.owner_references.empty());
  EXPECT_TRUE(c.finalizers.empty());
  EXPECT_FALSE(c.allocation.has_value());
  EXPECT_TRUE(c.reserved_for.empty());
  EXPECT_TRUE(c.spec.constraints.empty());
  EXPECT_TRUE(c.spec.config.empty());
  ASSERT_EQ(c.spec.requests.size(), 3u);

  DeviceSubRequest gpus{
      .device_class_name = "gpu.nvidia.com",
      .selectors = {{R"(device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0)"}},
      .count = 2,
      .tolerations = {{.key = "gpu.nvidia.com/maintenance", .op_exists = true, .effect = TaintEffect::kNoSchedule},
                      {.key = "gpu.nvidia.com/xid",
                       .value = "79",
                       .effect = TaintEffect::kNoExecute,
                       .toleration_seconds = 300}}};
  EXPECT_EQ(c.spec.requests[0], (DeviceRequest{.name = "gpus", .exactly = gpus}));
  // All: no count default; adminAccess kept.
  DeviceSubRequest monitor{.device_class_name = "gpu.nvidia.com",
                           .allocation_mode = std::string(kAllocationModeAll),
                           .count = 0,
                           .admin_access = true};
  EXPECT_EQ(c.spec.requests[1], (DeviceRequest{.name = "monitor", .exactly = monitor}));
  // Neither mode nor count: ExactCount of one.
  DeviceSubRequest nic{.device_class_name = "nic.example.com", .capacity_requests = {{"bandwidth", Q("10G")}}};
  EXPECT_EQ(nic.allocation_mode, kAllocationModeExactCount);
  EXPECT_EQ(nic.count, 1);
  EXPECT_EQ(c.spec.requests[2], (DeviceRequest{.name = "nic", .exactly = nic}));
}

TEST(ResourceDecodeTest, ClaimWithFirstAvailable) {
  auto decoded = DecodeResourceClaim(Parser(), Fixture("resourceclaim-first-available.json"));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  const ResourceClaim& c = **decoded;
  EXPECT_EQ(c.Key(), "ml/any-gpu");
  ASSERT_EQ(c.spec.requests.size(), 1u);
  const DeviceRequest& r = c.spec.requests[0];
  EXPECT_EQ(r.name, "gpu");
  EXPECT_FALSE(r.exactly.has_value());
  ASSERT_EQ(r.first_available.size(), 3u);
  EXPECT_EQ(r.first_available[0],
            (DeviceSubRequest{
                .name = "big",
                .device_class_name = "gpu.nvidia.com",
                .selectors = {{R"(device.attributes["gpu.nvidia.com"].productName.startsWith("NVIDIA H100"))"}}}));
  EXPECT_EQ(r.first_available[1], (DeviceSubRequest{.name = "two-small",
                                                    .device_class_name = "gpu.nvidia.com",
                                                    .count = 2,
                                                    .tolerations = {{.op_exists = true}}}));
  EXPECT_EQ(r.first_available[2], (DeviceSubRequest{.name = "mig",
                                                    .device_class_name = "mig.nvidia.com",
                                                    .capacity_requests = {{"memory", Q("20Gi")}}}));
}

TEST(ResourceDecodeTest, ClaimWithConstraintsAndConfig) {
  auto decoded = DecodeResourceClaim(Parser(), Fixture("resourceclaim-constraints.json"));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  const ResourceClaimSpec& s = (*decoded)->spec;
  ASSERT_EQ(s.requests.size(), 2u);
  EXPECT_EQ(s.requests[0], (DeviceRequest{.name = "gpu", .exactly = DeviceSubRequest{.device_class_name = "gpu.nvidia.com"}}));
  EXPECT_EQ(s.requests[1],
            (DeviceRequest{.name = "nic", .exactly = DeviceSubRequest{.device_class_name = "nic.example.com", .count = 2}}));
  EXPECT_EQ(s.constraints, (std::vector<DeviceConstraint>{
                               {.requests = {"gpu", "nic"}, .match_attribute = "resource.kubernetes.io/pcieRoot"},
                               {.requests = {"nic"}, .distinct_attribute = "nic.example.com/port"},
                               {.match_attribute = "gpu.nvidia.com/driverVersion"}}));
  EXPECT_EQ(s.config, (std::vector<DeviceClaimConfiguration>{
                          {{"gpu"}, {"gpu.nvidia.com", R"({"kind":"GpuConfig","sharing":{"strategy":"MPS"}})"}},
                          {{}, {"nic.example.com", R"(["vlan",42,true,null])"}}}));
}

ResourceClaim AllocatedClaim() {
  ResourceClaim c;
  c.metadata = {.name = "trainer-0-gpu-x7k2m",
                .namespace_ = "ml",
                .uid = "c5f1e0a9-3def-4e6a-9b89-abcdef012345",
                .resource_version = "990150"};
  c.being_deleted = true;
  c.owner_references = {{"v1", "Pod", "trainer-0", "9d2e1f0a-4b5c-4d6e-8f7a-0b1c2d3e4f5a", true}};
  c.finalizers = {"resource.kubernetes.io/delete-protection"};
  const Toleration maintenance{.key = "gpu.nvidia.com/maintenance", .op_exists = true};
  c.spec.requests = {
      {.name = "gpu", .exactly = DeviceSubRequest{.device_class_name = "gpu.nvidia.com", .tolerations = {maintenance}}},
      {.name = "bw",
       .exactly = DeviceSubRequest{.device_class_name = "nic.example.com", .capacity_requests = {{"bandwidth", Q("10G")}}}}};
  AllocationResult& a = c.allocation.emplace();
  a.results = {{.request = "gpu",
                .driver = "gpu.nvidia.com",
                .pool = "gpu-node-1",
                .device = "gpu-1",
                .tolerations = {maintenance}},
               {.request = "bw",
                .driver = "nic.example.com",
                .pool = "rack-7",
                .device = "shared-nic",
                .share_id = "0f1e2d3c-4b5a-4968-8776-655443322110",
                .consumed_capacity = {{"bandwidth", Q("10G")}}}};
  a.config = {{"FromClass", {"gpu"}, {"gpu.nvidia.com", R"({"kind":"GpuConfig","sharing":{"strategy":"TimeSlicing"}})"}},
              {"FromClaim", {}, {"nic.example.com", R"({"mtu":9000})"}}};
  a.node_selector = std::vector{FieldTerm("gpu-node-1")};
  a.allocation_timestamp = "2026-03-02T12:01:05Z";
  c.reserved_for = {{"", "pods", "trainer-0", "9d2e1f0a-4b5c-4d6e-8f7a-0b1c2d3e4f5a"}};
  return c;
}

TEST(ResourceDecodeTest, AllocatedReservedClaimBeingDeleted) {
  auto decoded = DecodeResourceClaim(Parser(), Fixture("resourceclaim-allocated.json"));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  const ResourceClaim& c = **decoded;
  const ResourceClaim want = AllocatedClaim();
  EXPECT_EQ(c.metadata, want.metadata);
  EXPECT_TRUE(c.being_deleted);
  EXPECT_EQ(c.owner_references, want.owner_references);
  EXPECT_EQ(c.finalizers, want.finalizers);
  EXPECT_EQ(c.spec, want.spec);
  ASSERT_TRUE(c.allocation.has_value());
  EXPECT_EQ(c.allocation->results, want.allocation->results);
  EXPECT_EQ(c.allocation->config, want.allocation->config);
  EXPECT_EQ(c.allocation->node_selector, want.allocation->node_selector);
  EXPECT_EQ(c.allocation->allocation_timestamp, want.allocation->allocation_timestamp);
  EXPECT_EQ(c.reserved_for, want.reserved_for);
  EXPECT_TRUE(c == want);
}

TEST(ResourceDecodeTest, ClaimTemplate) {
  auto decoded = DecodeResourceClaimTemplate(Parser(), Fixture("resourceclaimtemplate.json"));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  const ResourceClaimTemplate& t = **decoded;
  EXPECT_EQ(t.metadata, (LeanObjectMeta{.name = "one-gpu",
                                        .namespace_ = "ml",
                                        .uid = "d6a2f1b0-4ef0-4f7b-8c9a-bcdef0123456",
                                        .resource_version = "77001"}));
  ResourceClaimSpec want;
  want.requests = {{.name = "gpu",
                    .exactly = DeviceSubRequest{
                        .device_class_name = "gpu.nvidia.com",
                        .selectors = {{R"(device.attributes["gpu.nvidia.com"].migCapable)"}}}}};
  want.config = {{{"gpu"}, {"gpu.nvidia.com", R"({"kind":"GpuConfig"})"}}};
  EXPECT_EQ(t.spec, want);
}

// A list keeps its metadata and skips the one item with a value it cannot use, naming it.
TEST(ResourceDecodeTest, SliceListSkipsAnInvalidVersion) {
  auto list = DecodeResourceSliceList(Parser(), Fixture("resourceslicelist.json"));
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  EXPECT_EQ(list->resource_version, "884999");
  EXPECT_EQ(list->continue_token, "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6ODg0OTk5fQ");
  EXPECT_EQ(list->remaining_item_count, 7);
  ASSERT_EQ(list->items.size(), 2u);
  EXPECT_EQ(list->items[0]->Name(), "s-1");
  EXPECT_EQ(list->items[0]->nodes.node_name, "node-1");
  EXPECT_EQ(list->items[0]->devices[0].attributes.at("index"), Int(0));
  EXPECT_EQ(list->items[1]->Name(), "s-3");
  EXPECT_TRUE(list->items[1]->nodes.all_nodes);
  EXPECT_EQ(list->items[1]->pool.generation, 2);
  ASSERT_EQ(list->skipped.size(), 1u);
  EXPECT_THAT(list->skipped[0].error,
              HasSubstr(R"(items[1]: resourceslice "s-2": spec.devices[0].attributes.driverVersion.version: "550")"));
}

TEST(ResourceDecodeTest, ClaimListSkipsAnUnknownAllocationMode) {
  auto list = DecodeResourceClaimList(Parser(), Fixture("resourceclaimlist.json"));
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  EXPECT_EQ(list->resource_version, "990999");
  ASSERT_EQ(list->items.size(), 1u);
  EXPECT_EQ(list->items[0]->Key(), "ml/c-1");
  ASSERT_EQ(list->skipped.size(), 1u);
  EXPECT_EQ(list->skipped[0].error,
            R"(items[1]: resourceclaim "ml/c-2": spec.devices.requests[0].exactly.allocationMode: )"
            R"(unknown allocationMode "Some")");
}

TEST(ResourceDecodeTest, WatchEventsOfEachKind) {
  std::istringstream lines(Fixture("watch-events.jsonl"));
  std::vector<std::string> events;
  for (std::string line; std::getline(lines, line);) events.push_back(line);
  ASSERT_EQ(events.size(), 5u);
  JsonParser parser;

  auto dc = DecodeDeviceClassWatchEvent(parser, events[0]);
  ASSERT_TRUE(dc.ok()) << dc.status().ToString();
  EXPECT_EQ(dc->type, WatchEventType::kAdded);
  EXPECT_EQ(dc->resource_version, "1300");
  ASSERT_NE(dc->object, nullptr);
  EXPECT_EQ(dc->object->Name(), "nic.example.com");
  EXPECT_EQ(dc->object->selectors, (std::vector<DeviceSelector>{{R"(device.driver == "nic.example.com")"}}));

  auto rs = DecodeResourceSliceWatchEvent(parser, events[1]);
  ASSERT_TRUE(rs.ok()) << rs.status().ToString();
  EXPECT_EQ(rs->type, WatchEventType::kModified);
  EXPECT_EQ(rs->resource_version, "884600");
  ASSERT_NE(rs->object, nullptr);
  EXPECT_EQ(rs->object->pool.generation, 4);
  EXPECT_EQ(rs->object->devices, (std::vector<Device>{{.name = "gpu-0", .capacity = {{"memory", {Q("40Gi")}}}}}));

  auto rc = DecodeResourceClaimWatchEvent(parser, events[2]);
  ASSERT_TRUE(rc.ok()) << rc.status().ToString();
  EXPECT_EQ(rc->type, WatchEventType::kDeleted);
  ASSERT_NE(rc->object, nullptr);
  EXPECT_EQ(rc->object->Key(), "ml/two-a100");
  EXPECT_EQ(rc->object->spec.requests[0].exactly->count, 2);
  EXPECT_EQ(rc->object->reserved_for, (std::vector<ResourceClaimConsumerReference>{{"", "pods", "p", "u-p"}}));

  // "object" before "type".
  auto rct = DecodeResourceClaimTemplateWatchEvent(parser, events[3]);
  ASSERT_TRUE(rct.ok()) << rct.status().ToString();
  EXPECT_EQ(rct->type, WatchEventType::kAdded);
  ASSERT_NE(rct->object, nullptr);
  EXPECT_EQ(rct->object->metadata.namespace_, "ml");
  EXPECT_EQ(rct->object->spec.requests[0].exactly->device_class_name, "gpu.nvidia.com");

  auto bookmark = DecodeResourceSliceWatchEvent(parser, events[4]);
  ASSERT_TRUE(bookmark.ok()) << bookmark.status().ToString();
  EXPECT_EQ(bookmark->type, WatchEventType::kBookmark);
  EXPECT_EQ(bookmark->resource_version, "885000");
}

// Values an informer cannot use fail the object, naming it and the field.
TEST(ResourceDecodeTest, InvalidValuesNameTheObjectAndField) {
  struct Case {
    std::string_view name, json, error;
  };
  const Case slices[] = {
      {"bad version",
       R"({"metadata":{"name":"s-1"},"spec":{"devices":[{"name":"d","attributes":{"v":{"version":"v1.0.0"}}}]}})",
       R"(resourceslice "s-1": spec.devices[0].attributes.v.version: "v1.0.0" is not a semantic version)"},
      {"bad capacity",
       R"({"metadata":{"name":"s-1"},"spec":{"devices":[{"name":"d","capacity":{"memory":{"value":"lots"}}}]}})",
       R"(resourceslice "s-1": spec.devices[0].capacity.memory.value: )"},
      {"bad counter",
       R"({"metadata":{"name":"s-1"},"spec":{"sharedCounters":[{"name":"c","counters":{"mem":{"value":"1Qi"}}}]}})",
       R"(resourceslice "s-1": spec.sharedCounters[0].counters.mem.value: )"},
      {"wrong type", R"({"metadata":{"name":"s-1"},"spec":{"pool":{"generation":"3"}}})",
       R"(resourceslice "s-1": spec.pool.generation: expected)"},
      {"wrong kind", R"({"metadata":{"name":"s-1"},"kind":"DeviceClass"})", R"(resourceslice "s-1": kind: )"},
  };
  for (const Case& c : slices) {
    SCOPED_TRACE(c.name);
    auto got = DecodeResourceSlice(Parser(), c.json);
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(got.status().message(), HasSubstr(c.error));
  }
  const Case claims[] = {
      {"unknown mode in firstAvailable",
       R"({"metadata":{"name":"c","namespace":"ns"},"spec":{"devices":{"requests":[{"name":"r","firstAvailable":[)"
       R"({"name":"a","deviceClassName":"x"},{"name":"b","deviceClassName":"x","allocationMode":"Most"}]}]}}})",
       R"(resourceclaim "ns/c": spec.devices.requests[0].firstAvailable[1].allocationMode: unknown allocationMode "Most")"},
      {"bad capacity request",
       R"({"metadata":{"name":"c","namespace":"ns"},"spec":{"devices":{"requests":[{"name":"r","exactly":{)"
       R"("deviceClassName":"x","capacity":{"requests":{"bw":"fast"}}}}]}}})",
       R"(resourceclaim "ns/c": spec.devices.requests[0].exactly.capacity.requests.bw: )"},
      {"bad consumed capacity",
       R"({"metadata":{"name":"c","namespace":"ns"},"status":{"allocation":{"devices":{"results":[)"
       R"({"request":"r","consumedCapacity":{"bw":[]}}]}}}})",
       R"(resourceclaim "ns/c": status.allocation.devices.results[0].consumedCapacity.bw: expected quantity string)"},
  };
  for (const Case& c : claims) {
    SCOPED_TRACE(c.name);
    auto got = DecodeResourceClaim(Parser(), c.json);
    ASSERT_FALSE(got.ok());
    EXPECT_THAT(got.status().message(), HasSubstr(c.error));
  }
  auto tmpl = DecodeResourceClaimTemplate(Parser(), 
      R"({"metadata":{"name":"t","namespace":"ns"},"spec":{"spec":{"devices":{"requests":[{"name":"r","exactly":{"count":"2"}}]}}}})");
  ASSERT_FALSE(tmpl.ok());
  EXPECT_THAT(tmpl.status().message(),
              HasSubstr(R"(resourceclaimtemplate "ns/t": spec.spec.devices.requests[0].exactly.count: expected)"));
  auto cls = DecodeDeviceClass(Parser(), R"({"metadata":{"name":"gpu"},"spec":{"selectors":[{"cel":{"expression":7}}]}})");
  ASSERT_FALSE(cls.ok());
  EXPECT_THAT(cls.status().message(), HasSubstr(R"(deviceclass "gpu": spec.selectors[0].cel.expression: expected)"));
}

// Nulls are absent values; unknown fields (from newer APIs) are skipped.
TEST(ResourceDecodeTest, NullsAndUnknownFields) {
  auto got = DecodeResourceClaim(Parser(), 
      R"({"metadata":{"name":"c","namespace":"ns","deletionTimestamp":null,"finalizers":null},)"
      R"("spec":{"devices":{"requests":[{"name":"r","exactly":{"deviceClassName":"x","count":null,)"
      R"("allocationMode":null,"derivedAttributes":[{"name":"a/b","expression":"1"}]},"future":{}}]}},)"
      R"("status":{"allocation":null,"reservedFor":null}})");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  const ResourceClaim& c = **got;
  EXPECT_FALSE(c.being_deleted);
  EXPECT_FALSE(c.allocation.has_value());
  ASSERT_EQ(c.spec.requests.size(), 1u);
  EXPECT_EQ(c.spec.requests[0].exactly, (DeviceSubRequest{.device_class_name = "x"}));

  // A present nodeSelector without terms stays engaged (it matches no node).
  auto alloc = DecodeResourceClaim(Parser(), R"({"metadata":{"name":"c"},"status":{"allocation":{"nodeSelector":{}}}})");
  ASSERT_TRUE(alloc.ok()) << alloc.status().ToString();
  ASSERT_TRUE((*alloc)->allocation.has_value());
  EXPECT_EQ((*alloc)->allocation->node_selector, std::vector<NodeSelectorTerm>{});
  // An unknown taint effect decodes as kUnknown (consumers treat it as None).
  auto slice = DecodeResourceSlice(Parser(), 
      R"({"metadata":{"name":"s"},"spec":{"devices":[{"name":"d","taints":[{"key":"k","effect":"Evict"}]}]}})");
  ASSERT_TRUE(slice.ok()) << slice.status().ToString();
  EXPECT_EQ((*slice)->devices[0].taints[0].effect, TaintEffect::kUnknown);
}

}  // namespace
}  // namespace ksched::api
