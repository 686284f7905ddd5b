#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "pkg/api/json.h"

namespace ksched::api {
namespace {

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

Quantity Q(std::string_view text) { return *Quantity::Parse(text); }

TEST(ResourceEncodeTest, AllocationResult) {
  AllocationResult a;
  a.results = {{.request = "gpu",
                .driver = "gpu.nvidia.com",
                .pool = "node-1",
                .device = "gpu-0",
                .admin_access = true,
                .tolerations = {{.key = "k", .op_exists = true, .effect = TaintEffect::kNoExecute, .toleration_seconds = 60}}},
               {.request = "nic/fast",
                .driver = "nic.example.com",
                .pool = "rack-7",
                .device = "nic-0",
                .share_id = "0f1e2d3c-4b5a-4968-8776-655443322110",
                .consumed_capacity = {{"bandwidth", Q("10G")}, {"queues", Q("500m")}}}};
  a.config = {{"FromClass", {}, {"gpu.nvidia.com", R"({"kind":"GpuConfig"})"}},
              {"FromClaim", {"gpu", "nic/fast"}, {"nic.example.com", R"([1,"two"])"}}};
  a.node_selector = std::vector<NodeSelectorTerm>{
      {.match_expressions = {{"zone", SelectorOperator::kIn, {"a"}}},
       .match_fields = {{"metadata.name", SelectorOperator::kIn, {"node-1"}}}}};
  a.allocation_timestamp = "2026-03-02T12:01:05Z";
  EXPECT_EQ(EncodeAllocationResult(a),
            R"({"devices":{"results":[)"
            R"({"request":"gpu","driver":"gpu.nvidia.com","pool":"node-1","device":"gpu-0","adminAccess":true,)"
            R"("tolerations":[{"key":"k","operator":"Exists","effect":"NoExecute","tolerationSeconds":60}]},)"
            R"({"request":"nic/fast","driver":"nic.example.com","pool":"rack-7","device":"nic-0",)"
            R"("shareID":"0f1e2d3c-4b5a-4968-8776-655443322110","consumedCapacity":{"bandwidth":"10000000000","queues":"500m"}}],)"
            R"("config":[{"source":"FromClass","opaque":{"driver":"gpu.nvidia.com","parameters":{"kind":"GpuConfig"}}},)"
            R"({"source":"FromClaim","requests":["gpu","nic/fast"],)"
            R"("opaque":{"driver":"nic.example.com","parameters":[1,"two"]}}]},)"
            R"("nodeSelector":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"zone","operator":"In","values":["a"]}],)"
            R"("matchFields":[{"key":"metadata.name","operator":"In","values":["node-1"]}]}]},)"
            R"("allocationTimestamp":"2026-03-02T12:01:05Z"})");
  // Nothing allocated, available everywhere.
  EXPECT_EQ(EncodeAllocationResult(AllocationResult{}), R"({"devices":{}})");
}

TEST(ResourceEncodeTest, ReservedFor) {
  EXPECT_EQ(EncodeReservedFor({}), "[]");
  EXPECT_EQ(EncodeReservedFor({{"", "pods", "web-0", "u-1"}, {"example.com", "jobs", "j", "u-2"}}),
            R"([{"resource":"pods","name":"web-0","uid":"u-1"},)"
            R"({"apiGroup":"example.com","resource":"jobs","name":"j","uid":"u-2"}])");
}

ResourceClaim FullClaim() {
  ResourceClaim c;
  c.metadata = {.name = "c", .namespace_ = "ns", .uid = "u-c", .resource_version = "7"};
  c.being_deleted = true;
  c.owner_references = {{"v1", "Pod", "p", "u-p", true}, {"v1", "ConfigMap", "cm", "u-cm", false}};
  c.finalizers = {"resource.kubernetes.io/delete-protection", "example.com/x"};
  c.spec.requests = {
      {.name = "exact",
       .exactly = DeviceSubRequest{.device_class_name = "gpu",
                                   .selectors = {{R"(device.attributes["a"].b == "q\"uote")"}, {"true"}},
                                   .count = 3,
                                   .admin_access = true,
                                   .tolerations = {{.key = "k", .value = "v", .effect = TaintEffect::kNoSchedule},
                                                   {.op_exists = true}},
                                   .capacity_requests = {{"memory", Q("1Gi")}}}},
      {.name = "all",
       .exactly = DeviceSubRequest{.device_class_name = "gpu", .allocation_mode = "All", .count = 0}},
      {.name = "pick",
       .first_available = {{.name = "one", .device_class_name = "big"},
                           {.name = "two",
                            .device_class_name = "small",
                            .count = 2,
                            .tolerations = {{.key = "t", .op_unknown = true}},
                            .capacity_requests = {{"bw", Q("1500m")}}}}}};
  c.spec.constraints = {{.requests = {"exact", "pick"}, .match_attribute = "example.com/numa"},
                        {.distinct_attribute = "example.com/port"}};
  c.spec.config = {{{"exact"}, {"gpu.example.com", R"({"a":[1,2,{"b":null}]})"}}, {{}, {"x.example.com", ""}}};
  AllocationResult& a = c.allocation.emplace();
  a.results = {{.request = "exact", .driver = "gpu.example.com", .pool = "p", .device = "d0"},
               {.request = "pick/two",
                .driver = "gpu.example.com",
                .pool = "p",
                .device = "d1",
                .admin_access = true,
                .tolerations = {{.key = "t", .effect = TaintEffect::kUnknown}},
                .share_id = "s-1",
                .consumed_capacity = {{"bw", Q("1500m")}}}};
  a.config = {{"FromClaim", {"exact"}, {"gpu.example.com", R"({"a":[1,2,{"b":null}]})"}}};
  a.node_selector = std::vector<NodeSelectorTerm>{};  // engaged, no terms: no node
  a.allocation_timestamp = "2026-03-02T12:01:05Z";
  c.reserved_for = {{"", "pods", "p", "u-p"}, {"batch.example.com", "jobs", "j", "u-j"}};
  return c;
}

// Everything the decoder keeps round-trips through EncodeResourceClaim.
TEST(ResourceEncodeTest, ClaimRoundTrips) {
  std::vector<ResourceClaim> cases = {ResourceClaim{}, FullClaim()};
  ResourceClaim unallocated = FullClaim();
  unallocated.allocation.reset();
  unallocated.being_deleted = false;
  cases.push_back(unallocated);
  for (std::string_view fixture : {"resourceclaim-exact.json", "resourceclaim-first-available.json",
                                   "resourceclaim-constraints.json", "resourceclaim-allocated.json"}) {
    auto decoded = DecodeResourceClaim(Parser(), Fixture(fixture));
    ASSERT_TRUE(decoded.ok()) << fixture << ": " << decoded.status().ToString();
    cases.push_back(**decoded);
  }
  for (const ResourceClaim& claim : cases) {
    std::string json = EncodeResourceClaim(claim);
    auto decoded = DecodeResourceClaim(Parser(), json);
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString() << "\n" << json;
    EXPECT_TRUE(**decoded == claim) << json << "\nre-encoded:\n" << EncodeResourceClaim(**decoded);
  }
}

TEST(ResourceEncodeTest, ClaimHeader) {
  ResourceClaim c;
  c.metadata = {.name = "c", .namespace_ = "ns", .uid = "u", .resource_version = "3"};
  c.spec.requests = {{.name = "r", .exactly = DeviceSubRequest{.device_class_name = "gpu"}}};
  c.reserved_for = {{"", "pods", "p", "u-p"}};
  EXPECT_EQ(EncodeResourceClaim(c),
            R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim",)"
            R"("metadata":{"name":"c","namespace":"ns","uid":"u","resourceVersion":"3"},)"
            R"("spec":{"devices":{"requests":[{"name":"r","exactly":{"deviceClassName":"gpu",)"
            R"("allocationMode":"ExactCount","count":1}}]}},)"
            R"("status":{"reservedFor":[{"resource":"pods","name":"p","uid":"u-p"}]}})");
}

}  // namespace
}  // namespace ksched::api
