#include "pkg/leaderelection/lease.h"

#include <simdjson.h>

#include <cctype>
#include <cstdio>

#include "pkg/api/json.h"
#include "pkg/api/json_writer.h"

namespace ksched::leaderelection {
namespace {

namespace od = simdjson::ondemand;

Status JsonError(std::string_view where, simdjson::error_code e) {
  return InvalidArgument("lease: " + std::string(where) + ": " + simdjson::error_message(e));
}

// Reads a string that may be null (null reads as "").
Status ReadString(od::value v, std::string_view field, std::string& out) {
  bool is_null = false;
  if (auto e = v.is_null().get(is_null)) return JsonError(field, e);
  if (is_null) {
    out.clear();
    return Status::OK();
  }
  std::string_view s;
  if (auto e = v.get_string().get(s)) return JsonError(field, e);
  out.assign(s);
  return Status::OK();
}

Status ReadInt32(od::value v, std::string_view field, int32_t& out) {
  bool is_null = false;
  if (auto e = v.is_null().get(is_null)) return JsonError(field, e);
  if (is_null) {
    out = 0;
    return Status::OK();
  }
  int64_t n = 0;
  if (auto e = v.get_int64().get(n)) return JsonError(field, e);
  out = static_cast<int32_t>(n);
  return Status::OK();
}

Status DecodeSpec(od::value v, LeaseRecord& r) {
  od::object spec;
  bool is_null = false;
  if (auto e = v.is_null().get(is_null)) return JsonError("spec", e);
  if (is_null) return Status::OK();
  if (auto e = v.get_object().get(spec)) return JsonError("spec", e);
  for (auto field : spec) {
    std::string_view key;
    if (auto e = field.unescaped_key().get(key)) return JsonError("spec", e);
    od::value val;
    if (auto e = field.value().get(val)) return JsonError(key, e);
    Status s;
    if (key == "holderIdentity") s = ReadString(val, "spec.holderIdentity", r.holder_identity);
    else if (key == "leaseDurationSeconds") s = ReadInt32(val, "spec.leaseDurationSeconds", r.lease_duration_seconds);
    else if (key == "acquireTime") s = ReadString(val, "spec.acquireTime", r.acquire_time);
    else if (key == "renewTime") s = ReadString(val, "spec.renewTime", r.renew_time);
    else if (key == "leaseTransitions") s = ReadInt32(val, "spec.leaseTransitions", r.lease_transitions);
    if (!s.ok()) return s;
  }
  return Status::OK();
}

// metadata.resourceVersion, from the metadata object (rewound after its text was kept).
Status ReadResourceVersion(od::object& meta, std::string& out) {
  for (auto field : meta) {
    std::string_view key;
    if (auto e = field.unescaped_key().get(key)) return JsonError("metadata", e);
    if (key != "resourceVersion") continue;
    od::value val;
    if (auto e = field.value().get(val)) return JsonError("metadata.resourceVersion", e);
    return ReadString(val, "metadata.resourceVersion", out);
  }
  return Status::OK();
}

void WriteSpec(api::JsonWriter& w, const LeaseRecord& r) {
  auto time_or_null = [&w](std::string_view key, const std::string& t) {
    w.Key(key);
    if (t.empty()) {
      w.Null();
    } else {
      w.String(t);
    }
  };
  w.Key("spec");
  w.BeginObject();
  w.Field("holderIdentity", r.holder_identity);
  w.IntField("leaseDurationSeconds", r.lease_duration_seconds);
  time_or_null("acquireTime", r.acquire_time);
  time_or_null("renewTime", r.renew_time);
  w.IntField("leaseTransitions", r.lease_transitions);
  w.EndObject();
}

}  // namespace

std::string LeaseCollectionPath(std::string_view ns) {
  std::string p = "/apis/coordination.k8s.io/v1/namespaces/";
  p += ns;
  p += "/leases";
  return p;
}

std::string LeasePath(std::string_view ns, std::string_view name) {
  std::string p = LeaseCollectionPath(ns);
  p += '/';
  p += name;
  return p;
}

StatusOr<LeaseObject> DecodeLease(std::string_view json) {
  od::parser parser;
  simdjson::padded_string padded(json);
  od::document doc;
  if (auto e = parser.iterate(padded).get(doc)) return JsonError("document", e);
  od::object obj;
  if (auto e = doc.get_object().get(obj)) return JsonError("document", e);
  LeaseObject lease;
  for (auto field : obj) {
    std::string_view key;
    if (auto e = field.unescaped_key().get(key)) return JsonError("document", e);
    od::value val;
    if (auto e = field.value().get(val)) return JsonError(key, e);
    if (key == "metadata") {
      od::object meta;
      std::string_view raw;
      if (auto e = val.get_object().get(meta)) return JsonError("metadata", e);
      if (auto e = meta.raw_json().get(raw)) return JsonError("metadata", e);
      lease.raw_metadata.assign(raw);
      if (auto e = meta.reset().error()) return JsonError("metadata", e);
      // A repeated "metadata" key: the last one wins for the text we echo back, so it must
      // for the resourceVersion too (found by fuzz_lease).
      lease.resource_version.clear();
      if (Status s = ReadResourceVersion(meta, lease.resource_version); !s.ok()) return s;
    } else if (key == "spec") {
      if (Status s = DecodeSpec(val, lease.record); !s.ok()) return s;
    }
  }
  // Text after the root object is broken input (and the metadata we echo back must come
  // from a document that was read whole).
  const char* at = nullptr;
  if (auto e = doc.current_location().get(at); e != simdjson::OUT_OF_BOUNDS) {
    return e ? JsonError("document", e) : InvalidArgument("lease: unexpected content after the JSON value");
  }
  // raw_json() keeps trailing whitespace; trim it so the echoed text is tidy.
  while (!lease.raw_metadata.empty() && std::isspace(static_cast<unsigned char>(lease.raw_metadata.back())))
    lease.raw_metadata.pop_back();
  if (lease.raw_metadata.empty()) return InvalidArgument("lease: metadata is missing");
  return lease;
}

namespace {

// The Lease object up to its metadata's value, which the caller writes next.
void OpenLease(api::JsonWriter& w) {
  w.BeginObject();
  w.Field("apiVersion", "coordination.k8s.io/v1");
  w.Field("kind", "Lease");
  w.Key("metadata");
}

}  // namespace

std::string EncodeNewLease(std::string_view ns, std::string_view name, const LeaseRecord& record) {
  std::string out;
  api::JsonWriter w(out);
  OpenLease(w);
  w.BeginObject();
  w.Field("name", name);
  w.Field("namespace", ns);
  w.EndObject();
  WriteSpec(w, record);
  w.EndObject();
  return out;
}

std::string EncodeLeaseUpdate(std::string_view raw_metadata, const LeaseRecord& record) {
  std::string out;
  api::JsonWriter w(out);
  OpenLease(w);
  w.Raw(raw_metadata);  // echoed as read, so the update carries its resourceVersion
  WriteSpec(w, record);
  w.EndObject();
  return out;
}

}  // namespace ksched::leaderelection
