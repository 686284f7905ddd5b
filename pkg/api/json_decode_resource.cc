// Decoders for the objects of dynamic resource allocation (resource.k8s.io/v1,
// resource.h): DeviceClasses, ResourceSlices, ResourceClaims and ResourceClaimTemplates,
// reduced to the fields the DynamicResources plugin and its allocator read. Defaults are
// applied as the API server applies them (allocationMode ExactCount, count 1), so an
// object decodes the same whether or not the server spelled them out.
#include <simdjson.h>

#include "pkg/api/json_document.h"
#include "pkg/api/resource.h"

namespace ksched::api {
namespace json_internal {
namespace {

using QuantityMap = std::map<std::string, Quantity, std::less<>>;

std::string Quoted(std::string_view s) {
  std::string q = "\"";
  q += s;
  q += '"';
  return q;
}

bool IsNull(od::value& v, bool& null, DecodeError& err) {
  od::json_type t{};
  if (!PeekType(v, t, err)) return false;
  null = t == od::json_type::null;
  return true;
}

struct ResourceMeta {
  LeanObjectMeta* meta;
  bool* being_deleted = nullptr;
  std::vector<OwnerReference>* owners = nullptr;
  std::vector<std::string>* finalizers = nullptr;
};

bool DecodeResourceMeta(od::value& v, const ResourceMeta& m, DecodeError& err) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "name") return ReadString(fv, m.meta->name, err);
    if (key == "namespace") return ReadString(fv, m.meta->namespace_, err);
    if (key == "uid") return ReadString(fv, m.meta->uid, err);
    if (key == "resourceVersion") return ReadString(fv, m.meta->resource_version, err);
    if (m.being_deleted && key == "deletionTimestamp") {
      bool null = false;
      if (!IsNull(fv, null, err)) return false;
      *m.being_deleted = !null;
      return true;
    }
    if (m.owners && key == "ownerReferences") return ReadArray(fv, *m.owners, err, DecodeOwnerReference);
    if (m.finalizers && key == "finalizers") return ReadStringList(fv, *m.finalizers, err);
    return true;
  });
}

// A resource.Quantity: a string, or a bare JSON number as Go's unmarshaller also takes;
// null leaves `out` unchanged.
bool ReadQuantity(od::value& v, Quantity& out, DecodeError& err) {
  od::json_type t{};
  if (!PeekType(v, t, err)) return false;
  if (t == od::json_type::null) return true;
  std::string_view text;
  if (t == od::json_type::string) {
    if (auto e = v.get_string().get(text)) return err.Fail(e);
  } else if (t == od::json_type::number) {
    text = v.raw_json_token();
    while (!text.empty() && (text.back() == ' ' || text.back() == '\n' || text.back() == '\r' || text.back() == '\t')) {
      text.remove_suffix(1);
    }
  } else {
    return TypeMismatch("quantity string", t, err);
  }
  auto q = Quantity::Parse(text);
  if (!q.ok()) return err.Fail(q.status().message());
  out = *q;
  return true;
}

// {"<name>": "<quantity>"}: capacity requests and consumed capacity. Null entries are
// absent.
bool ReadQuantityMap(od::value& v, QuantityMap& out, DecodeError& err) {
  out.clear();
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    bool null = false;
    if (!IsNull(fv, null, err)) return false;
    return null || ReadQuantity(fv, out[std::string(key)], err);
  });
}

// {"<name>": {"value": "<quantity>"}}: counters of counter sets and their consumption.
bool ReadCounters(od::value& v, QuantityMap& out, DecodeError& err) {
  out.clear();
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    Quantity& q = out[std::string(key)];
    return ReadObject(fv, err, [&](std::string_view ckey, od::value& cv) {
      if (ckey == "value") return ReadQuantity(cv, q, err);
      return true;
    });
  });
}

// One attribute value. An attribute with none of the scalar fields (a list-typed one of
// the alpha DRAListTypeAttributes, or one from a newer API) sets `known` false.
bool DecodeDeviceAttribute(od::value& v, DeviceAttribute& a, bool& known, DecodeError& err) {
  known = false;
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    bool null = false;
    if (!IsNull(fv, null, err)) return false;
    if (null) return true;
    if (key == "int") {
      known = true;
      return ReadInt64(fv, a.value.emplace<int64_t>(), err);
    }
    if (key == "bool") {
      known = true;
      return ReadBool(fv, a.value.emplace<bool>(), err);
    }
    if (key == "string") {
      known = true;
      return ReadString(fv, a.value.emplace<std::string>(), err);
    }
    if (key == "version") {
      std::string_view text;
      if (!ReadStringView(fv, text, err)) return false;
      std::optional<SemVersion> version = SemVersion::Parse(text);
      if (!version) return err.Fail(Quoted(text) + " is not a semantic version (semver 2.0.0)");
      known = true;
      a.value = std::move(*version);
      return true;
    }
    return true;
  });
}

bool ReadAttributes(od::value& v, DeviceAttributes& out, DecodeError& err) {
  out.clear();
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    DeviceAttribute a;
    bool known = false;
    if (!DecodeDeviceAttribute(fv, a, known, err)) return false;
    if (known) out.insert_or_assign(std::string(key), std::move(a));
    return true;
  });
}

bool ReadCapacities(od::value& v, DeviceCapacities& out, DecodeError& err) {
  out.clear();
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    DeviceCapacity& c = out[std::string(key)];
    return ReadObject(fv, err, [&](std::string_view ckey, od::value& cv) {
      if (ckey == "value") return ReadQuantity(cv, c.value, err);
      return true;
    });
  });
}

// A v1.NodeSelector: null leaves `out` empty; a present selector stays engaged even
// with no terms (it then matches no node).
bool ReadNodeSelector(od::value& v, std::optional<std::vector<NodeSelectorTerm>>& out, DecodeError& err) {
  bool null = false;
  if (!IsNull(v, null, err)) return false;
  if (null) {
    out.reset();
    return true;
  }
  auto& terms = out.emplace();
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "nodeSelectorTerms") return ReadArray(fv, terms, err, DecodeNodeSelectorTerm);
    return true;
  });
}

// Device taint effects are None, NoSchedule and NoExecute; any other (PreferNoSchedule
// included, which is not valid for devices) is kUnknown, which consumers treat as None.
bool DecodeDeviceTaintEffect(od::value& v, TaintEffect& out, DecodeError& err) {
  std::string_view s;
  if (!ReadStringView(v, s, err)) return false;
  if (s == "NoSchedule") out = TaintEffect::kNoSchedule;
  else if (s == "NoExecute") out = TaintEffect::kNoExecute;
  else if (s == "None") out = TaintEffect::kNone;
  else out = TaintEffect::kUnknown;
  return true;
}

bool DecodeDeviceTaint(od::value& v, DeviceTaint& t, DecodeError& err) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "key") return ReadString(fv, t.key, err);
    if (key == "value") return ReadString(fv, t.value, err);
    if (key == "effect") return DecodeDeviceTaintEffect(fv, t.effect, err);
    return true;
  });
}

bool DecodeCounterConsumption(od::value& v, DeviceCounterConsumption& c, DecodeError& err) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "counterSet") return ReadString(fv, c.counter_set, err);
    if (key == "counters") return ReadCounters(fv, c.counters, err);
    return true;
  });
}

bool DecodeCounterSet(od::value& v, CounterSet& c, DecodeError& err) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "name") return ReadString(fv, c.name, err);
    if (key == "counters") return ReadCounters(fv, c.counters, err);
    return true;
  });
}

// nodeName / nodeSelector / allNodes, of a slice or (per-device selection) a device.
// Sets `seen` when one of them is present and not null.
bool ReadNodeSelectionField(std::string_view key, od::value& v, DeviceNodeSelection& s, bool& seen, bool& handled,
                            DecodeError& err) {
  handled = key == "nodeName" || key == "nodeSelector" || key == "allNodes";
  if (!handled) return true;
  bool null = false;
  if (!IsNull(v, null, err)) return false;
  if (null) return true;
  seen = true;
  if (key == "nodeName") return ReadString(v, s.node_name, err);
  if (key == "nodeSelector") return ReadNodeSelector(v, s.node_selector, err);
  return ReadBool(v, s.all_nodes, err);
}

bool DecodeDevice(od::value& v, Device& d, DecodeError& err) {
  DeviceNodeSelection nodes;
  bool has_nodes = false;
  bool ok = ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    bool handled = false;
    if (!ReadNodeSelectionField(key, fv, nodes, has_nodes, handled, err)) return false;
    if (handled) return true;
    if (key == "name") return ReadString(fv, d.name, err);
    if (key == "attributes") return ReadAttributes(fv, d.attributes, err);
    if (key == "capacity") return ReadCapacities(fv, d.capacity, err);
    if (key == "consumesCounters") return ReadArray(fv, d.consumes_counters, err, DecodeCounterConsumption);
    if (key == "taints") return ReadArray(fv, d.taints, err, DecodeDeviceTaint);
    if (key == "allowMultipleAllocations") return ReadBool(fv, d.allow_multiple_allocations, err);
    return true;
  });
  if (!ok) return false;
  if (has_nodes) d.node_selection = std::move(nodes);
  return true;
}

bool DecodeDeviceSelector(od::value& v, DeviceSelector& s, DecodeError& err) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key != "cel") return true;
    return ReadObject(fv, err, [&](std::string_view ckey, od::value& cv) {
      if (ckey == "expression") return ReadString(cv, s.cel_expression, err);
      return true;
    });
  });
}

// The JSON text of a RawExtension, minified, so equal parameters compare equal however
// the server formatted them. null: "".
bool ReadRawJson(od::value& v, std::string& out, DecodeError& err) {
  od::json_type t{};
  if (!PeekType(v, t, err)) return false;
  out.clear();
  std::string_view raw;
  if (t == od::json_type::null) return true;
  if (t == od::json_type::object) {
    od::object obj;
    if (auto e = v.get_object().get(obj)) return err.Fail(e);
    if (auto e = obj.raw_json().get(raw)) return err.Fail(e);
  } else if (t == od::json_type::array) {
    od::array arr;
    if (auto e = v.get_array().get(arr)) return err.Fail(e);
    if (auto e = arr.raw_json().get(raw)) return err.Fail(e);
  } else {
    raw = v.raw_json_token();
  }
  out.resize(raw.size());
  size_t len = 0;
  if (auto e = simdjson::minify(raw.data(), raw.size(), out.data(), len)) return err.Fail(e);
  out.resize(len);
  out.shrink_to_fit();
  return true;
}

bool DecodeOpaque(od::value& v, OpaqueDeviceConfig& o, DecodeError& err) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "driver") return ReadString(fv, o.driver, err);
    if (key == "parameters") return ReadRawJson(fv, o.parameters_json, err);
    return true;
  });
}

bool DecodeClassConfig(od::value& v, OpaqueDeviceConfig& o, DecodeError& err) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "opaque") return DecodeOpaque(fv, o, err);
    return true;
  });
}

// exactly{...} (`name` absent) or one of firstAvailable[] (adminAccess absent), with the
// API server's defaults: allocationMode ExactCount, and count 1 for ExactCount.
bool DecodeSubRequest(od::value& v, DeviceSubRequest& r, DecodeError& err) {
  r.allocation_mode.clear();
  r.count = 0;
  bool ok = ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "name") return ReadString(fv, r.name, err);
    if (key == "deviceClassName") return ReadString(fv, r.device_class_name, err);
    if (key == "selectors") return ReadArray(fv, r.selectors, err, DecodeDeviceSelector);
    if (key == "allocationMode") {
      std::string_view mode;
      if (!ReadStringView(fv, mode, err)) return false;
      // Clients must refuse to handle requests with unknown modes (upstream's API doc).
      if (!mode.empty() && mode != kAllocationModeExactCount && mode != kAllocationModeAll) {
        return err.Fail("unknown allocationMode " + Quoted(mode));
      }
      r.allocation_mode = std::string(mode);
      return true;
    }
    if (key == "count") return ReadInt64(fv, r.count, err);
    if (key == "adminAccess") return ReadBool(fv, r.admin_access, err);
    if (key == "tolerations") return ReadArray(fv, r.tolerations, err, DecodeToleration);
    if (key == "capacity") {
      return ReadObject(fv, err, [&](std::string_view ckey, od::value& cv) {
        if (ckey == "requests") return ReadQuantityMap(cv, r.capacity_requests, err);
        return true;
      });
    }
    return true;
  });
  if (!ok) return false;
  if (r.allocation_mode.empty()) r.allocation_mode = std::string(kAllocationModeExactCount);
  if (r.allocation_mode == kAllocationModeExactCount && r.count == 0) r.count = 1;
  return true;
}

bool DecodeDeviceRequest(od::value& v, DeviceRequest& r, DecodeError& err) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "name") return ReadString(fv, r.name, err);
    if (key == "exactly") {
      bool null = false;
      if (!IsNull(fv, null, err)) return false;
      if (null) {
        r.exactly.reset();
        return true;
      }
      return DecodeSubRequest(fv, r.exactly.emplace(), err);
    }
    if (key == "firstAvailable") return ReadArray(fv, r.first_available, err, DecodeSubRequest);
    return true;
  });
}

bool DecodeConstraint(od::value& v, DeviceConstraint& c, DecodeError& err) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "requests") return ReadStringList(fv, c.requests, err);
    if (key == "matchAttribute") return ReadString(fv, c.match_attribute, err);
    if (key == "distinctAttribute") return ReadString(fv, c.distinct_attribute, err);
    return true;
  });
}

bool DecodeClaimConfig(od::value& v, DeviceClaimConfiguration& c, DecodeError& err) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "requests") return ReadStringList(fv, c.requests, err);
    if (key == "opaque") return DecodeOpaque(fv, c.opaque, err);
    return true;
  });
}

// A ResourceClaimSpec: {"devices": {requests, constraints, config}}.
bool DecodeClaimSpec(od::value& v, ResourceClaimSpec& s, DecodeError& err) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key != "devices") return true;
    return ReadObject(fv, err, [&](std::string_view dkey, od::value& dv) {
      if (dkey == "requests") return ReadArray(dv, s.requests, err, DecodeDeviceRequest);
      if (dkey == "constraints") return ReadArray(dv, s.constraints, err, DecodeConstraint);
      if (dkey == "config") return ReadArray(dv, s.config, err, DecodeClaimConfig);
      return true;
    });
  });
}

bool DecodeAllocationResultItem(od::value& v, DeviceRequestAllocationResult& r, DecodeError& err) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "request") return ReadString(fv, r.request, err);
    if (key == "driver") return ReadString(fv, r.driver, err);
    if (key == "pool") return ReadString(fv, r.pool, err);
    if (key == "device") return ReadString(fv, r.device, err);
    if (key == "adminAccess") return ReadBool(fv, r.admin_access, err);
    if (key == "tolerations") return ReadArray(fv, r.tolerations, err, DecodeToleration);
    if (key == "shareID") return ReadString(fv, r.share_id, err);
    if (key == "consumedCapacity") return ReadQuantityMap(fv, r.consumed_capacity, err);
    return true;
  });
}

bool DecodeAllocationConfig(od::value& v, DeviceAllocationConfiguration& c, DecodeError& err) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "source") return ReadString(fv, c.source, err);
    if (key == "requests") return ReadStringList(fv, c.requests, err);
    if (key == "opaque") return DecodeOpaque(fv, c.opaque, err);
    return true;
  });
}

bool DecodeAllocation(od::value& v, AllocationResult& a, DecodeError& err) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "devices") {
      return ReadObject(fv, err, [&](std::string_view dkey, od::value& dv) {
        if (dkey == "results") return ReadArray(dv, a.results, err, DecodeAllocationResultItem);
        if (dkey == "config") return ReadArray(dv, a.config, err, DecodeAllocationConfig);
        return true;
      });
    }
    if (key == "nodeSelector") return ReadNodeSelector(fv, a.node_selector, err);
    if (key == "allocationTimestamp") return ReadString(fv, a.allocation_timestamp, err);
    return true;
  });
}

bool DecodeConsumerRef(od::value& v, ResourceClaimConsumerReference& r, DecodeError& err) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "apiGroup") return ReadString(fv, r.api_group, err);
    if (key == "resource") return ReadString(fv, r.resource, err);
    if (key == "name") return ReadString(fv, r.name, err);
    if (key == "uid") return ReadString(fv, r.uid, err);
    return true;
  });
}

std::string NamespacedId(const LeanObjectMeta& m) {
  return m.namespace_.empty() ? m.name : m.namespace_ + "/" + m.name;
}

}  // namespace

template <>
struct Kind<DeviceClass> {
  static constexpr std::string_view kName = "deviceclass";
  static constexpr std::string_view kList = "DeviceClassList";
  static bool Decode(od::value& v, DeviceClass& c, DecodeError& err) {
    return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
      if (key == "metadata") return DecodeResourceMeta(fv, {.meta = &c.metadata}, err);
      if (key == "kind") return CheckKind(fv, "DeviceClass", err);
      if (key == "spec") {
        return ReadObject(fv, err, [&](std::string_view skey, od::value& sv) {
          if (skey == "selectors") return ReadArray(sv, c.selectors, err, DecodeDeviceSelector);
          if (skey == "config") return ReadArray(sv, c.config, err, DecodeClassConfig);
          return true;
        });
      }
      return true;
    });
  }
  static std::string Id(const DeviceClass& c) { return c.metadata.name; }
};

template <>
struct Kind<ResourceSlice> {
  static constexpr std::string_view kName = "resourceslice";
  static constexpr std::string_view kList = "ResourceSliceList";
  static bool Decode(od::value& v, ResourceSlice& s, DecodeError& err) {
    auto spec = [&](std::string_view key, od::value& fv) {
      bool handled = false, seen = false;
      if (!ReadNodeSelectionField(key, fv, s.nodes, seen, handled, err)) return false;
      if (handled) return true;
      if (key == "driver") return ReadString(fv, s.driver, err);
      if (key == "pool") {
        return ReadObject(fv, err, [&](std::string_view pkey, od::value& pv) {
          if (pkey == "name") return ReadString(pv, s.pool.name, err);
          if (pkey == "generation") return ReadInt64(pv, s.pool.generation, err);
          if (pkey == "resourceSliceCount") return ReadInt64(pv, s.pool.resource_slice_count, err);
          return true;
        });
      }
      if (key == "perDeviceNodeSelection") return ReadBool(fv, s.per_device_node_selection, err);
      if (key == "devices") return ReadArray(fv, s.devices, err, DecodeDevice);
      if (key == "sharedCounters") return ReadArray(fv, s.shared_counters, err, DecodeCounterSet);
      return true;
    };
    return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
      if (key == "metadata") return DecodeResourceMeta(fv, {.meta = &s.metadata}, err);
      if (key == "kind") return CheckKind(fv, "ResourceSlice", err);
      if (key == "spec") return ReadObject(fv, err, spec);
      return true;
    });
  }
  static std::string Id(const ResourceSlice& s) { return s.metadata.name; }
};

template <>
struct Kind<ResourceClaim> {
  static constexpr std::string_view kName = "resourceclaim";
  static constexpr std::string_view kList = "ResourceClaimList";
  static bool Decode(od::value& v, ResourceClaim& c, DecodeError& err) {
    auto status = [&](std::string_view key, od::value& fv) {
      if (key == "allocation") {
        bool null = false;
        if (!IsNull(fv, null, err)) return false;
        if (null) {
          c.allocation.reset();
          return true;
        }
        return DecodeAllocation(fv, c.allocation.emplace(), err);
      }
      if (key == "reservedFor") return ReadArray(fv, c.reserved_for, err, DecodeConsumerRef);
      return true;
    };
    return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
      if (key == "metadata") {
        return DecodeResourceMeta(fv,
                                  {.meta = &c.metadata,
                                   .being_deleted = &c.being_deleted,
                                   .owners = &c.owner_references,
                                   .finalizers = &c.finalizers},
                                  err);
      }
      if (key == "kind") return CheckKind(fv, "ResourceClaim", err);
      if (key == "spec") return DecodeClaimSpec(fv, c.spec, err);
      if (key == "status") return ReadObject(fv, err, status);
      return true;
    });
  }
  static std::string Id(const ResourceClaim& c) { return NamespacedId(c.metadata); }
};

template <>
struct Kind<ResourceClaimTemplate> {
  static constexpr std::string_view kName = "resourceclaimtemplate";
  static constexpr std::string_view kList = "ResourceClaimTemplateList";
  static bool Decode(od::value& v, ResourceClaimTemplate& t, DecodeError& err) {
    return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
      if (key == "metadata") return DecodeResourceMeta(fv, {.meta = &t.metadata}, err);
      if (key == "kind") return CheckKind(fv, "ResourceClaimTemplate", err);
      if (key == "spec") {
        // spec.metadata holds labels and annotations for the claim: not kept.
        return ReadObject(fv, err, [&](std::string_view skey, od::value& sv) {
          if (skey == "spec") return DecodeClaimSpec(sv, t.spec, err);
          return true;
        });
      }
      return true;
    });
  }
  static std::string Id(const ResourceClaimTemplate& t) { return NamespacedId(t.metadata); }
};

}  // namespace json_internal

using json_internal::DecodeEvent;
using json_internal::DecodeList;
using json_internal::DecodeOne;

#define KSCHED_RESOURCE_DECODERS(T)                                                          \
  StatusOr<std::shared_ptr<const T>> Decode##T(JsonParser& parser, JsonText json) {          \
    return DecodeOne<T>(parser, json);                                                      \
  }                                                                                          \
  StatusOr<ObjectList<T>> Decode##T##List(JsonParser& parser, JsonText json) {               \
    return DecodeList<T>(parser, json);                                                     \
  }                                                                                          \
  StatusOr<WatchEvent<T>> Decode##T##WatchEvent(JsonParser& parser, JsonText json) {         \
    return DecodeEvent<T>(parser, json);                                                    \
  }
KSCHED_RESOURCE_DECODERS(DeviceClass)
KSCHED_RESOURCE_DECODERS(ResourceSlice)
KSCHED_RESOURCE_DECODERS(ResourceClaim)
KSCHED_RESOURCE_DECODERS(ResourceClaimTemplate)
#undef KSCHED_RESOURCE_DECODERS

}  // namespace ksched::api
