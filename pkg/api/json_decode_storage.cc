// Decoders for the storage objects of the volume plugins (storage.h): claims, volumes,
// storage classes, CSINodes and CSIDrivers, reduced to the fields those plugins read.
// Everything else (status messages, conditions, parameters, mount options) is skipped
// unread.
#include "pkg/api/json_document.h"
#include "pkg/api/storage.h"

namespace ksched::api {
namespace json_internal {
namespace {

bool IsVolumeBindingAnnotation(std::string_view key) {
  return key == kAnnSelectedNode || key == kAnnBindCompleted || key == kAnnBoundByController ||
         key == kAnnStorageProvisioner || key == kAnnBetaStorageProvisioner || key == kAnnBetaStorageClass ||
         key == kAnnMigratedPlugins;
}

// Only the annotations of the volume-binding protocol (see storage.h).
bool ReadStorageAnnotations(od::value& v, StringMap& out, DecodeError& err) {
  out = StringMap();
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (!IsVolumeBindingAnnotation(key)) return true;
    std::string value;
    if (!ReadString(fv, value, err)) return false;
    out.Set(std::string(key), std::move(value));
    return true;
  });
}

bool ReadPresent(od::value& v, bool& out, DecodeError& err) {
  od::json_type t{};
  if (!PeekType(v, t, err)) return false;
  out = t != od::json_type::null;
  return true;
}

struct StorageMeta {
  LeanObjectMeta* meta;
  StringMap* annotations = nullptr;  // null: not kept
  bool* being_deleted = nullptr;
  std::vector<OwnerReference>* owners = nullptr;
  bool labels = false;
};

bool DecodeStorageMeta(od::value& v, const StorageMeta& m, DecodeError& err) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "name") return ReadString(fv, m.meta->name, err);
    if (key == "namespace") return ReadString(fv, m.meta->namespace_, err);
    if (key == "uid") return ReadString(fv, m.meta->uid, err);
    if (key == "resourceVersion") return ReadString(fv, m.meta->resource_version, err);
    if (m.labels && key == "labels") return ReadStringMap(fv, m.meta->labels, err);
    if (m.annotations && key == "annotations") return ReadStorageAnnotations(fv, *m.annotations, err);
    if (m.being_deleted && key == "deletionTimestamp") return ReadPresent(fv, *m.being_deleted, err);
    if (m.owners && key == "ownerReferences") return ReadArray(fv, *m.owners, err, DecodeOwnerReference);
    return true;
  });
}

// A resource list of which only "storage" is kept.
bool ReadStorageQuantity(od::value& v, std::optional<Quantity>& out, DecodeError& err) {
  out.reset();
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key != "storage") return true;
    std::string_view text;
    if (!ReadStringView(fv, text, err)) return false;
    auto q = Quantity::Parse(text);
    if (!q.ok()) return err.Fail(q.status().message());
    out = *q;
    return true;
  });
}

bool DecodeClaimRef(od::value& v, ClaimReference& r, DecodeError& err) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "namespace") return ReadString(fv, r.namespace_, err);
    if (key == "name") return ReadString(fv, r.name, err);
    if (key == "uid") return ReadString(fv, r.uid, err);
    return true;
  });
}

bool DecodeTopologyRequirement(od::value& v, TopologySelectorRequirement& r, DecodeError& err) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "key") return ReadString(fv, r.key, err);
    if (key == "values") return ReadStringList(fv, r.values, err);
    return true;
  });
}

bool DecodeTopologyTerm(od::value& v, TopologySelectorTerm& t, DecodeError& err) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "matchLabelExpressions") return ReadArray(fv, t, err, DecodeTopologyRequirement);
    return true;
  });
}

bool DecodeCSINodeDriver(od::value& v, CSINodeDriver& d, DecodeError& err) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "name") return ReadString(fv, d.name, err);
    if (key == "nodeID") return ReadString(fv, d.node_id, err);
    if (key == "topologyKeys") return ReadStringList(fv, d.topology_keys, err);
    if (key == "allocatable") {
      od::json_type t{};
      if (!PeekType(fv, t, err)) return false;
      if (t == od::json_type::null) return true;
      return ReadObject(fv, err, [&](std::string_view akey, od::value& av) {
        if (akey == "count") return ReadOptInt32(av, d.allocatable_count, err);
        return true;
      });
    }
    return true;
  });
}

std::string NamespacedId(const LeanObjectMeta& m) {
  return m.namespace_.empty() ? m.name : m.namespace_ + "/" + m.name;
}

}  // namespace

template <>
struct Kind<PersistentVolumeClaim> {
  static constexpr std::string_view kName = "persistentvolumeclaim";
  static constexpr std::string_view kList = "PersistentVolumeClaimList";
  static bool Decode(od::value& v, PersistentVolumeClaim& c, DecodeError& err) {
    auto spec = [&](std::string_view key, od::value& fv) {
      if (key == "accessModes") return ReadStringList(fv, c.access_modes, err);
      if (key == "selector") {
        od::json_type t{};
        if (!PeekType(fv, t, err)) return false;
        if (t == od::json_type::null) return true;
        return DecodeLabelSelector(fv, c.selector.emplace(), err);
      }
      if (key == "resources") {
        return ReadObject(fv, err, [&](std::string_view rkey, od::value& rv) {
          if (rkey == "requests") return ReadStorageQuantity(rv, c.storage_request, err);
          return true;
        });
      }
      if (key == "volumeName") return ReadString(fv, c.volume_name, err);
      if (key == "storageClassName") return ReadOptString(fv, c.storage_class_name, err);
      if (key == "volumeMode") return ReadString(fv, c.volume_mode, err);
      return true;
    };
    return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
      if (key == "metadata") {
        return DecodeStorageMeta(fv,
                                 {.meta = &c.metadata,
                                  .annotations = &c.annotations,
                                  .being_deleted = &c.being_deleted,
                                  .owners = &c.owner_references},
                                 err);
      }
      if (key == "kind") return CheckKind(fv, "PersistentVolumeClaim", err);
      if (key == "spec") return ReadObject(fv, err, spec);
      if (key == "status") {
        return ReadObject(fv, err, [&](std::string_view skey, od::value& sv) {
          if (skey == "phase") return ReadString(sv, c.phase, err);
          return true;
        });
      }
      return true;
    });
  }
  static std::string Id(const PersistentVolumeClaim& c) { return NamespacedId(c.metadata); }
};

template <>
struct Kind<PersistentVolume> {
  static constexpr std::string_view kName = "persistentvolume";
  static constexpr std::string_view kList = "PersistentVolumeList";
  static bool Decode(od::value& v, PersistentVolume& pv, DecodeError& err) {
    std::string spec_class;
    auto spec = [&](std::string_view key, od::value& fv) {
      if (key == "capacity") return ReadStorageQuantity(fv, pv.capacity, err);
      if (key == "accessModes") return ReadStringList(fv, pv.access_modes, err);
      if (key == "storageClassName") return ReadString(fv, spec_class, err);
      if (key == "volumeMode") return ReadString(fv, pv.volume_mode, err);
      if (key == "claimRef") {
        od::json_type t{};
        if (!PeekType(fv, t, err)) return false;
        if (t == od::json_type::null) return true;
        return DecodeClaimRef(fv, pv.claim_ref.emplace(), err);
      }
      if (key == "nodeAffinity") {
        od::json_type t{};
        if (!PeekType(fv, t, err)) return false;
        if (t == od::json_type::null) return true;
        return ReadObject(fv, err, [&](std::string_view akey, od::value& av) {
          if (akey != "required") return true;
          if (!PeekType(av, t, err)) return false;
          if (t == od::json_type::null) return true;
          // A present selector with no terms matches no node: keep it engaged.
          auto& terms = pv.node_affinity.emplace();
          return ReadObject(av, err, [&](std::string_view nkey, od::value& nv) {
            if (nkey == "nodeSelectorTerms") return ReadArray(nv, terms, err, DecodeNodeSelectorTerm);
            return true;
          });
        });
      }
      bool known = false;
      return ReadVolumeSourceField(key, fv, pv.source, known, err);
    };
    bool ok = ReadObject(v, err, [&](std::string_view key, od::value& fv) {
      if (key == "metadata") {
        return DecodeStorageMeta(
            fv, {.meta = &pv.metadata, .annotations = &pv.annotations, .being_deleted = &pv.being_deleted, .labels = true},
            err);
      }
      if (key == "kind") return CheckKind(fv, "PersistentVolume", err);
      if (key == "spec") return ReadObject(fv, err, spec);
      if (key == "status") {
        return ReadObject(fv, err, [&](std::string_view skey, od::value& sv) {
          if (skey == "phase") return ReadString(sv, pv.phase, err);
          return true;
        });
      }
      return true;
    });
    if (!ok) return false;
    // upstream storagehelpers.GetPersistentVolumeClass: the beta annotation wins.
    const std::string* beta = pv.annotations.Get(kAnnBetaStorageClass);
    pv.storage_class_name = beta != nullptr ? *beta : std::move(spec_class);
    return true;
  }
  static std::string Id(const PersistentVolume& pv) { return pv.metadata.name; }
};

template <>
struct Kind<StorageClass> {
  static constexpr std::string_view kName = "storageclass";
  static constexpr std::string_view kList = "StorageClassList";
  static bool Decode(od::value& v, StorageClass& sc, DecodeError& err) {
    return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
      if (key == "metadata") return DecodeStorageMeta(fv, {.meta = &sc.metadata}, err);
      if (key == "kind") return CheckKind(fv, "StorageClass", err);
      if (key == "provisioner") return ReadString(fv, sc.provisioner, err);
      if (key == "volumeBindingMode") return ReadString(fv, sc.volume_binding_mode, err);
      if (key == "allowedTopologies") return ReadArray(fv, sc.allowed_topologies, err, DecodeTopologyTerm);
      return true;
    });
  }
  static std::string Id(const StorageClass& sc) { return sc.metadata.name; }
};

template <>
struct Kind<CSINode> {
  static constexpr std::string_view kName = "csinode";
  static constexpr std::string_view kList = "CSINodeList";
  static bool Decode(od::value& v, CSINode& n, DecodeError& err) {
    return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
      if (key == "metadata") return DecodeStorageMeta(fv, {.meta = &n.metadata, .annotations = &n.annotations}, err);
      if (key == "kind") return CheckKind(fv, "CSINode", err);
      if (key == "spec") {
        return ReadObject(fv, err, [&](std::string_view skey, od::value& sv) {
          if (skey == "drivers") return ReadArray(sv, n.drivers, err, DecodeCSINodeDriver);
          return true;
        });
      }
      return true;
    });
  }
  static std::string Id(const CSINode& n) { return n.metadata.name; }
};

template <>
struct Kind<CSIDriver> {
  static constexpr std::string_view kName = "csidriver";
  static constexpr std::string_view kList = "CSIDriverList";
  static bool Decode(od::value& v, CSIDriver& d, DecodeError& err) {
    return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
      if (key == "metadata") return DecodeStorageMeta(fv, {.meta = &d.metadata}, err);
      if (key == "kind") return CheckKind(fv, "CSIDriver", err);
      if (key == "spec") {
        return ReadObject(fv, err, [&](std::string_view skey, od::value& sv) {
          if (skey != "attachRequired") return true;
          od::json_type t{};
          if (!PeekType(sv, t, err)) return false;
          if (t == od::json_type::null) return true;  // absent: the API default, true
          return ReadBool(sv, d.attach_required, err);
        });
      }
      return true;
    });
  }
  static std::string Id(const CSIDriver& d) { return d.metadata.name; }
};

}  // namespace json_internal

using json_internal::DecodeEvent;
using json_internal::DecodeList;
using json_internal::DecodeOne;

#define KSCHED_STORAGE_DECODERS(T)                                                            \
  StatusOr<std::shared_ptr<const T>> Decode##T(JsonParser& parser, JsonText json) {           \
    return DecodeOne<T>(parser, json);                                                       \
  }                                                                                           \
  StatusOr<ObjectList<T>> Decode##T##List(JsonParser& parser, JsonText json) {                \
    return DecodeList<T>(parser, json);                                                      \
  }                                                                                           \
  StatusOr<WatchEvent<T>> Decode##T##WatchEvent(JsonParser& parser, JsonText json) {          \
    return DecodeEvent<T>(parser, json);                                                     \
  }
KSCHED_STORAGE_DECODERS(PersistentVolumeClaim)
KSCHED_STORAGE_DECODERS(PersistentVolume)
KSCHED_STORAGE_DECODERS(StorageClass)
KSCHED_STORAGE_DECODERS(CSINode)
KSCHED_STORAGE_DECODERS(CSIDriver)
#undef KSCHED_STORAGE_DECODERS

}  // namespace ksched::api
