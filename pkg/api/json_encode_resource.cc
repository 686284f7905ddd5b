// Encoders for dynamic resource allocation: what the DynamicResources plugin writes back
// to a claim's status (allocation, reservedFor), and whole claims for tests and tools.
#include "pkg/api/json.h"
#include "pkg/api/json_writer.h"
#include "pkg/api/resource.h"

namespace ksched::api {
namespace {

using QuantityMap = std::map<std::string, Quantity, std::less<>>;

void WriteQuantityMap(JsonWriter& w, std::string_view key, const QuantityMap& m) {
  if (m.empty()) return;
  w.Key(key);
  w.BeginObject();
  for (const auto& [name, q] : m) {
    w.Key(name);
    w.QuantityValue(q);
  }
  w.EndObject();
}

void WriteTrueField(JsonWriter& w, std::string_view key, bool value) {
  if (!value) return;
  w.Key(key);
  w.Bool(true);
}

// {"nodeSelectorTerms": [...]}; an engaged selector without terms is written as {}.
void WriteNodeSelector(JsonWriter& w, std::string_view key, const std::optional<std::vector<NodeSelectorTerm>>& s) {
  if (!s) return;
  w.Key(key);
  w.BeginObject();
  w.ArrayField("nodeSelectorTerms", *s, [&](const NodeSelectorTerm& t) { WriteNodeSelectorTerm(w, t); });
  w.EndObject();
}

void WriteOpaque(JsonWriter& w, const OpaqueDeviceConfig& o) {
  w.Key("opaque");
  w.BeginObject();
  w.Field("driver", o.driver);
  if (!o.parameters_json.empty()) {
    w.Key("parameters");
    w.Raw(o.parameters_json);
  }
  w.EndObject();
}

void WriteTolerations(JsonWriter& w, const std::vector<DeviceToleration>& tolerations) {
  w.ArrayField("tolerations", tolerations, [&](const DeviceToleration& t) { WriteToleration(w, t); });
}

void WriteSubRequest(JsonWriter& w, const DeviceSubRequest& r) {
  w.BeginObject();
  w.FieldIfSet("name", r.name);
  w.Field("deviceClassName", r.device_class_name);
  w.ArrayField("selectors", r.selectors, [&](const DeviceSelector& s) {
    w.BeginObject();
    w.Key("cel");
    w.BeginObject();
    w.Field("expression", s.cel_expression);
    w.EndObject();
    w.EndObject();
  });
  w.Field("allocationMode", r.allocation_mode);
  if (r.count != 0) w.IntField("count", r.count);
  WriteTrueField(w, "adminAccess", r.admin_access);
  WriteTolerations(w, r.tolerations);
  if (!r.capacity_requests.empty()) {
    w.Key("capacity");
    w.BeginObject();
    WriteQuantityMap(w, "requests", r.capacity_requests);
    w.EndObject();
  }
  w.EndObject();
}

void WriteClaimSpec(JsonWriter& w, const ResourceClaimSpec& s) {
  w.Key("spec");
  w.BeginObject();
  w.Key("devices");
  w.BeginObject();
  w.ArrayField("requests", s.requests, [&](const DeviceRequest& r) {
    w.BeginObject();
    w.Field("name", r.name);
    if (r.exactly) {
      w.Key("exactly");
      WriteSubRequest(w, *r.exactly);
    }
    w.ArrayField("firstAvailable", r.first_available, [&](const DeviceSubRequest& sub) { WriteSubRequest(w, sub); });
    w.EndObject();
  });
  w.ArrayField("constraints", s.constraints, [&](const DeviceConstraint& c) {
    w.BeginObject();
    w.StringsField("requests", c.requests);
    w.FieldIfSet("matchAttribute", c.match_attribute);
    w.FieldIfSet("distinctAttribute", c.distinct_attribute);
    w.EndObject();
  });
  w.ArrayField("config", s.config, [&](const DeviceClaimConfiguration& c) {
    w.BeginObject();
    w.StringsField("requests", c.requests);
    WriteOpaque(w, c.opaque);
    w.EndObject();
  });
  w.EndObject();
  w.EndObject();
}

void WriteAllocation(JsonWriter& w, const AllocationResult& a) {
  w.BeginObject();
  w.Key("devices");
  w.BeginObject();
  w.ArrayField("results", a.results, [&](const DeviceRequestAllocationResult& r) {
    w.BeginObject();
    w.Field("request", r.request);
    w.Field("driver", r.driver);
    w.Field("pool", r.pool);
    w.Field("device", r.device);
    WriteTrueField(w, "adminAccess", r.admin_access);
    WriteTolerations(w, r.tolerations);
    w.FieldIfSet("shareID", r.share_id);
    WriteQuantityMap(w, "consumedCapacity", r.consumed_capacity);
    w.EndObject();
  });
  w.ArrayField("config", a.config, [&](const DeviceAllocationConfiguration& c) {
    w.BeginObject();
    w.Field("source", c.source);
    w.StringsField("requests", c.requests);
    WriteOpaque(w, c.opaque);
    w.EndObject();
  });
  w.EndObject();
  WriteNodeSelector(w, "nodeSelector", a.node_selector);
  w.FieldIfSet("allocationTimestamp", a.allocation_timestamp);
  w.EndObject();
}

void WriteReservedFor(JsonWriter& w, const std::vector<ResourceClaimConsumerReference>& refs) {
  w.BeginArray();
  for (const ResourceClaimConsumerReference& r : refs) {
    w.BeginObject();
    w.FieldIfSet("apiGroup", r.api_group);
    w.Field("resource", r.resource);
    w.Field("name", r.name);
    w.Field("uid", r.uid);
    w.EndObject();
  }
  w.EndArray();
}

}  // namespace

std::string EncodeAllocationResult(const AllocationResult& allocation) {
  std::string out;
  out.reserve(256 + 160 * allocation.results.size());
  JsonWriter w(out);
  WriteAllocation(w, allocation);
  return out;
}

std::string EncodeReservedFor(const std::vector<ResourceClaimConsumerReference>& reserved_for) {
  std::string out;
  out.reserve(2 + 128 * reserved_for.size());
  JsonWriter w(out);
  WriteReservedFor(w, reserved_for);
  return out;
}

std::string EncodeResourceClaim(const ResourceClaim& claim) {
  std::string out;
  out.reserve(1024);
  JsonWriter w(out);
  w.BeginObject();
  w.Field("apiVersion", kResourceVersionV1);
  w.Field("kind", "ResourceClaim");
  const LeanObjectMeta& m = claim.metadata;
  w.Key("metadata");
  w.BeginObject();
  w.Field("name", m.name);
  w.FieldIfSet("namespace", m.namespace_);
  w.FieldIfSet("uid", m.uid);
  w.FieldIfSet("resourceVersion", m.resource_version);
  if (claim.being_deleted) w.Field("deletionTimestamp", "1970-01-01T00:00:00Z");
  w.StringsField("finalizers", claim.finalizers);
  w.ArrayField("ownerReferences", claim.owner_references, [&](const OwnerReference& r) {
    w.BeginObject();
    w.Field("apiVersion", r.api_version);
    w.Field("kind", r.kind);
    w.Field("name", r.name);
    w.Field("uid", r.uid);
    WriteTrueField(w, "controller", r.controller);
    w.EndObject();
  });
  w.EndObject();
  WriteClaimSpec(w, claim.spec);
  if (claim.allocation || !claim.reserved_for.empty()) {
    w.Key("status");
    w.BeginObject();
    if (claim.allocation) {
      w.Key("allocation");
      WriteAllocation(w, *claim.allocation);
    }
    if (!claim.reserved_for.empty()) {
      w.Key("reservedFor");
      WriteReservedFor(w, claim.reserved_for);
    }
    w.EndObject();
  }
  w.EndObject();
  return out;
}

}  // namespace ksched::api
