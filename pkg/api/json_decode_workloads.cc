// Decoders for namespaces and the objects that select pods (workloads.h): metadata and
// spec.selector only (and a PodDisruptionBudget's status); pod templates, workload status
// and everything else are skipped unread.
#include "pkg/api/json_document.h"
#include "pkg/api/time_format.h"
#include "pkg/util/strings.h"

namespace ksched::api {
namespace json_internal {
namespace {

enum class MetaFields { kNamespace, kNamespaced };

// The LeanObjectMeta subset of metadata: a namespace keeps its labels, namespaced
// objects their namespace and uid.
bool DecodeLeanMeta(od::value& v, LeanObjectMeta& m, MetaFields which, DecodeError& err) {
  const bool ns = which == MetaFields::kNamespace;
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "name") return ReadString(fv, m.name, err);
    if (key == "resourceVersion") return ReadString(fv, m.resource_version, err);
    if (ns && key == "labels") return ReadStringMap(fv, m.labels, err);
    if (!ns && key == "namespace") return ReadString(fv, m.namespace_, err);
    if (!ns && key == "uid") return ReadString(fv, m.uid, err);
    return true;
  });
}

// A selector map that may be null (nullopt) or an object (possibly empty).
bool ReadOptStringMap(od::value& v, std::optional<StringMap>& out, DecodeError& err) {
  od::json_type t{};
  if (!PeekType(v, t, err)) return false;
  if (t == od::json_type::null) {
    out.reset();
    return true;
  }
  return ReadStringMap(v, out.emplace(), err);
}

bool ReadOptLabelSelector(od::value& v, std::optional<LabelSelector>& out, DecodeError& err) {
  od::json_type t{};
  if (!PeekType(v, t, err)) return false;
  if (t == od::json_type::null) {
    out.reset();
    return true;
  }
  if (t != od::json_type::object) return TypeMismatch("object", t, err);
  return DecodeLabelSelector(v, out.emplace(), err);
}

// Reads metadata and, from spec, only "selector" with `read_selector`.
template <typename T, typename F>
bool DecodeSelectorOwner(od::value& v, T& obj, DecodeError& err, std::string_view kind, F&& read_selector) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "metadata") return DecodeLeanMeta(fv, obj.metadata, MetaFields::kNamespaced, err);
    if (key == "kind") return CheckKind(fv, kind, err);
    if (key == "spec") {
      return ReadObject(fv, err, [&](std::string_view skey, od::value& sv) {
        if (skey == "selector") return read_selector(sv, obj.selector, err);
        return true;
      });
    }
    return true;
  });
}

// PodDisruptionBudgets come as policy/v1 or (before Kubernetes 1.21, and until 1.25)
// policy/v1beta1, whichever discovery chose; both have the fields read here.
bool CheckPolicyApiVersion(od::value& v, DecodeError& err) {
  std::string_view version;
  if (!ReadStringView(v, version, err)) return false;
  if (version.empty() || version == "policy/v1" || version == "policy/v1beta1") return true;
  return err.Fail(Quoted(version) + ", expected \"policy/v1\" or \"policy/v1beta1\"");
}

std::string NamespacedId(const LeanObjectMeta& m) {
  return m.namespace_.empty() ? m.name : m.namespace_ + "/" + m.name;
}

}  // namespace

template <>
struct Kind<Namespace> {
  static constexpr std::string_view kName = "namespace";
  static constexpr std::string_view kList = "NamespaceList";
  static bool Decode(od::value& v, Namespace& n, DecodeError& err) {
    return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
      if (key == "metadata") return DecodeLeanMeta(fv, n.metadata, MetaFields::kNamespace, err);
      if (key == "kind") return CheckKind(fv, "Namespace", err);
      return true;
    });
  }
  static std::string Id(const Namespace& n) { return n.metadata.name; }
};

template <>
struct Kind<Service> {
  static constexpr std::string_view kName = "service";
  static constexpr std::string_view kList = "ServiceList";
  static bool Decode(od::value& v, Service& s, DecodeError& err) {
    return DecodeSelectorOwner(v, s, err, "Service", ReadOptStringMap);
  }
  static std::string Id(const Service& s) { return NamespacedId(s.metadata); }
};

template <>
struct Kind<ReplicationController> {
  static constexpr std::string_view kName = "replicationcontroller";
  static constexpr std::string_view kList = "ReplicationControllerList";
  static bool Decode(od::value& v, ReplicationController& rc, DecodeError& err) {
    return DecodeSelectorOwner(v, rc, err, "ReplicationController", ReadStringMap);
  }
  static std::string Id(const ReplicationController& rc) { return NamespacedId(rc.metadata); }
};

template <>
struct Kind<ReplicaSet> {
  static constexpr std::string_view kName = "replicaset";
  static constexpr std::string_view kList = "ReplicaSetList";
  static bool Decode(od::value& v, ReplicaSet& rs, DecodeError& err) {
    return DecodeSelectorOwner(v, rs, err, "ReplicaSet", ReadOptLabelSelector);
  }
  static std::string Id(const ReplicaSet& rs) { return NamespacedId(rs.metadata); }
};

template <>
struct Kind<StatefulSet> {
  static constexpr std::string_view kName = "statefulset";
  static constexpr std::string_view kList = "StatefulSetList";
  static bool Decode(od::value& v, StatefulSet& ss, DecodeError& err) {
    return DecodeSelectorOwner(v, ss, err, "StatefulSet", ReadOptLabelSelector);
  }
  static std::string Id(const StatefulSet& ss) { return NamespacedId(ss.metadata); }
};

template <>
struct Kind<PodDisruptionBudget> {
  static constexpr std::string_view kName = "poddisruptionbudget";
  static constexpr std::string_view kList = "PodDisruptionBudgetList";
  static bool Decode(od::value& v, PodDisruptionBudget& pdb, DecodeError& err) {
    auto status = [&](std::string_view key, od::value& fv) {
      if (key == "disruptionsAllowed") return ReadInt32(fv, pdb.disruptions_allowed, err);
      if (key != "disruptedPods") return true;
      pdb.disrupted_pods.clear();
      return ReadObject(fv, err, [&](std::string_view pod, od::value&) {  // pod name -> eviction time
        pdb.disrupted_pods.emplace_back(pod);
        return true;
      });
    };
    return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
      if (key == "metadata") return DecodeLeanMeta(fv, pdb.metadata, MetaFields::kNamespaced, err);
      if (key == "kind") return CheckKind(fv, "PodDisruptionBudget", err);
      if (key == "apiVersion") return CheckPolicyApiVersion(fv, err);
      if (key == "spec") {
        return ReadObject(fv, err, [&](std::string_view skey, od::value& sv) {
          if (skey == "selector") return ReadOptLabelSelector(sv, pdb.selector, err);
          return true;
        });
      }
      if (key == "status") return ReadObject(fv, err, status);
      return true;
    });
  }
  static std::string Id(const PodDisruptionBudget& pdb) { return NamespacedId(pdb.metadata); }
};

template <>
struct Kind<PodGroup> {
  static constexpr std::string_view kName = "podgroup";
  static constexpr std::string_view kList = "PodGroupList";
  static bool Decode(od::value& v, PodGroup& pg, DecodeError& err) {
    auto meta = [&](std::string_view key, od::value& fv) {
      if (key == "name") return ReadString(fv, pg.metadata.name, err);
      if (key == "namespace") return ReadString(fv, pg.metadata.namespace_, err);
      if (key == "uid") return ReadString(fv, pg.metadata.uid, err);
      if (key == "resourceVersion") return ReadString(fv, pg.metadata.resource_version, err);
      if (key == "creationTimestamp") {
        std::string_view t;
        if (!ReadStringView(fv, t, err)) return false;
        pg.creation_time = ParseTime(t);
        return true;
      }
      return true;
    };
    auto spec = [&](std::string_view key, od::value& fv) {
      if (key == "minMember") return ReadInt32(fv, pg.min_member, err);
      if (key == "minResources") return ReadResourceList(fv, pg.min_resources, err);
      if (key == "scheduleTimeoutSeconds") return ReadOptInt32(fv, pg.schedule_timeout_seconds, err);
      return true;
    };
    return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
      if (key == "metadata") return ReadObject(fv, err, meta);  // the lean fields and the creation time
      if (key == "kind") return CheckKind(fv, "PodGroup", err);
      if (key == "spec") return ReadObject(fv, err, spec);
      return true;
    });
  }
  static std::string Id(const PodGroup& pg) { return NamespacedId(pg.metadata); }
};

}  // namespace json_internal

using json_internal::DecodeEvent;
using json_internal::DecodeList;
using json_internal::DecodeOne;

StatusOr<NamespacePtr> DecodeNamespace(JsonParser& parser, JsonText json) {
  return DecodeOne<Namespace>(parser, json);
}
StatusOr<ServicePtr> DecodeService(JsonParser& parser, JsonText json) { return DecodeOne<Service>(parser, json); }
StatusOr<ReplicationControllerPtr> DecodeReplicationController(JsonParser& parser, JsonText json) {
  return DecodeOne<ReplicationController>(parser, json);
}
StatusOr<ReplicaSetPtr> DecodeReplicaSet(JsonParser& parser, JsonText json) {
  return DecodeOne<ReplicaSet>(parser, json);
}
StatusOr<StatefulSetPtr> DecodeStatefulSet(JsonParser& parser, JsonText json) {
  return DecodeOne<StatefulSet>(parser, json);
}
StatusOr<PodDisruptionBudgetPtr> DecodePodDisruptionBudget(JsonParser& parser, JsonText json) {
  return DecodeOne<PodDisruptionBudget>(parser, json);
}

StatusOr<PodGroupPtr> DecodePodGroup(JsonParser& parser, JsonText json) { return DecodeOne<PodGroup>(parser, json); }
StatusOr<ObjectList<PodGroup>> DecodePodGroupList(JsonParser& parser, JsonText json) {
  return DecodeList<PodGroup>(parser, json);
}
StatusOr<WatchEvent<PodGroup>> DecodePodGroupWatchEvent(JsonParser& parser, JsonText json) {
  return DecodeEvent<PodGroup>(parser, json);
}

StatusOr<ObjectList<Namespace>> DecodeNamespaceList(JsonParser& parser, JsonText json) {
  return DecodeList<Namespace>(parser, json);
}
StatusOr<ObjectList<Service>> DecodeServiceList(JsonParser& parser, JsonText json) {
  return DecodeList<Service>(parser, json);
}
StatusOr<ObjectList<ReplicationController>> DecodeReplicationControllerList(JsonParser& parser, JsonText json) {
  return DecodeList<ReplicationController>(parser, json);
}
StatusOr<ObjectList<ReplicaSet>> DecodeReplicaSetList(JsonParser& parser, JsonText json) {
  return DecodeList<ReplicaSet>(parser, json);
}
StatusOr<ObjectList<StatefulSet>> DecodeStatefulSetList(JsonParser& parser, JsonText json) {
  return DecodeList<StatefulSet>(parser, json);
}
StatusOr<ObjectList<PodDisruptionBudget>> DecodePodDisruptionBudgetList(JsonParser& parser, JsonText json) {
  return DecodeList<PodDisruptionBudget>(parser, json);
}

StatusOr<WatchEvent<Namespace>> DecodeNamespaceWatchEvent(JsonParser& parser, JsonText json) {
  return DecodeEvent<Namespace>(parser, json);
}
StatusOr<WatchEvent<Service>> DecodeServiceWatchEvent(JsonParser& parser, JsonText json) {
  return DecodeEvent<Service>(parser, json);
}
StatusOr<WatchEvent<ReplicationController>> DecodeReplicationControllerWatchEvent(JsonParser& parser,
                                                                                  JsonText json) {
  return DecodeEvent<ReplicationController>(parser, json);
}
StatusOr<WatchEvent<ReplicaSet>> DecodeReplicaSetWatchEvent(JsonParser& parser, JsonText json) {
  return DecodeEvent<ReplicaSet>(parser, json);
}
StatusOr<WatchEvent<StatefulSet>> DecodeStatefulSetWatchEvent(JsonParser& parser, JsonText json) {
  return DecodeEvent<StatefulSet>(parser, json);
}
StatusOr<WatchEvent<PodDisruptionBudget>> DecodePodDisruptionBudgetWatchEvent(JsonParser& parser, JsonText json) {
  return DecodeEvent<PodDisruptionBudget>(parser, json);
}

}  // namespace ksched::api
