// Decoding of v1.Pod into the compact model.
#include "pkg/api/json_reader.h"

namespace ksched::api::json_internal {
namespace {

bool DecodeContainerPort(od::value& v, ContainerPort& p, DecodeError& err) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "containerPort") return ReadInt32(fv, p.container_port, err);
    if (key == "hostPort") return ReadInt32(fv, p.host_port, err);
    if (key == "protocol") return ReadString(fv, p.protocol, err);
    if (key == "hostIP") return ReadString(fv, p.host_ip, err);
    return true;
  });
}

bool DecodeContainer(od::value& v, Container& c, DecodeError& err) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "name") return ReadString(fv, c.name, err);
    if (key == "image") return ReadString(fv, c.image, err);
    if (key == "resources") {
      return ReadObject(fv, err, [&](std::string_view rkey, od::value& rv) {
        if (rkey == "requests") return ReadResourceList(rv, c.requests, err);
        return true;
      });
    }
    if (key == "ports") {
      return ReadArrayIf(fv, c.ports, err, DecodeContainerPort,
                         [](const ContainerPort& p) { return p.host_port > 0; });
    }
    if (key == "restartPolicy") {
      std::string_view policy;
      if (!ReadStringView(fv, policy, err)) return false;
      c.restart_policy_always = policy == "Always";
      return true;
    }
    return true;
  });
}

bool DecodeNodeAffinity(od::value& v, NodeAffinity& a, DecodeError& err) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "requiredDuringSchedulingIgnoredDuringExecution") {
      od::json_type t{};
      if (!PeekType(fv, t, err)) return false;
      if (t == od::json_type::null) return true;
      // A present selector with no terms matches no node, so keep it engaged.
      auto& terms = a.required.emplace();
      return ReadObject(fv, err, [&](std::string_view nkey, od::value& nv) {
        if (nkey == "nodeSelectorTerms") return ReadArray(nv, terms, err, DecodeNodeSelectorTerm);
        return true;
      });
    }
    if (key == "preferredDuringSchedulingIgnoredDuringExecution") {
      return ReadArray(fv, a.preferred, err,
                       [](od::value& ev, PreferredSchedulingTerm& p, DecodeError& e) {
                         return ReadObject(ev, e, [&](std::string_view pkey, od::value& pv) {
                           if (pkey == "weight") return ReadInt32(pv, p.weight, e);
                           if (pkey == "preference") {
                             return DecodeNodeSelectorTerm(pv, p.preference, e);
                           }
                           return true;
                         });
                       });
    }
    return true;
  });
}

// Reads an optional LabelSelector: null stays nullopt, {} is an engaged empty selector
// (for namespaceSelector that means "all namespaces").
bool ReadOptSelector(od::value& v, std::optional<LabelSelector>& out, DecodeError& err) {
  od::json_type t{};
  if (!PeekType(v, t, err)) return false;
  if (t == od::json_type::null) {
    out.reset();
    return true;
  }
  return DecodeLabelSelector(v, out.emplace(), err);
}

bool DecodePodAffinityTerm(od::value& v, PodAffinityTerm& t, DecodeError& err) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "labelSelector") return ReadOptSelector(fv, t.label_selector, err);
    if (key == "namespaces") return ReadStringList(fv, t.namespaces, err);
    if (key == "topologyKey") return ReadString(fv, t.topology_key, err);
    if (key == "namespaceSelector") return ReadOptSelector(fv, t.namespace_selector, err);
    if (key == "matchLabelKeys") return ReadStringList(fv, t.match_label_keys, err);
    if (key == "mismatchLabelKeys") return ReadStringList(fv, t.mismatch_label_keys, err);
    return true;
  });
}

bool DecodeWeightedPodAffinityTerm(od::value& v, WeightedPodAffinityTerm& w, DecodeError& err) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "weight") return ReadInt32(fv, w.weight, err);
    if (key == "podAffinityTerm") return DecodePodAffinityTerm(fv, w.term, err);
    return true;
  });
}

bool DecodePodAffinity(od::value& v, PodAffinity& a, DecodeError& err) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "requiredDuringSchedulingIgnoredDuringExecution") {
      return ReadArray(fv, a.required, err, DecodePodAffinityTerm);
    }
    if (key == "preferredDuringSchedulingIgnoredDuringExecution") {
      return ReadArray(fv, a.preferred, err, DecodeWeightedPodAffinityTerm);
    }
    return true;
  });
}

template <typename T, typename F>
bool ReadOptStruct(od::value& v, std::optional<T>& out, DecodeError& err, F&& decode) {
  od::json_type t{};
  if (!PeekType(v, t, err)) return false;
  if (t == od::json_type::null) {
    out.reset();
    return true;
  }
  return decode(v, out.emplace(), err);
}

bool DecodeAffinity(od::object& obj, Affinity& a, DecodeError& err) {
  return ReadFields(obj, err, [&](std::string_view key, od::value& fv) {
    if (key == "nodeAffinity") return ReadOptStruct(fv, a.node_affinity, err, DecodeNodeAffinity);
    if (key == "podAffinity") return ReadOptStruct(fv, a.pod_affinity, err, DecodePodAffinity);
    if (key == "podAntiAffinity") {
      return ReadOptStruct(fv, a.pod_anti_affinity, err, DecodePodAffinity);
    }
    return true;
  });
}

bool ReadInclusionPolicy(od::value& v, std::optional<InclusionPolicy>& out, DecodeError& err) {
  std::string_view s;
  if (!ReadStringView(v, s, err)) return false;
  if (s.empty()) out.reset();
  else if (s == "Honor") out = InclusionPolicy::kHonor;
  else if (s == "Ignore") out = InclusionPolicy::kIgnore;
  else return err.Fail("unknown inclusion policy \"" + std::string(s) + "\"");
  return true;
}

bool DecodeSpreadConstraint(od::value& v, TopologySpreadConstraint& c, DecodeError& err) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "maxSkew") return ReadInt32(fv, c.max_skew, err);
    if (key == "topologyKey") return ReadString(fv, c.topology_key, err);
    if (key == "whenUnsatisfiable") {
      std::string_view s;
      if (!ReadStringView(fv, s, err)) return false;
      if (s == "DoNotSchedule") c.when_unsatisfiable = WhenUnsatisfiable::kDoNotSchedule;
      else if (s == "ScheduleAnyway") c.when_unsatisfiable = WhenUnsatisfiable::kScheduleAnyway;
      else return err.Fail("unknown whenUnsatisfiable \"" + std::string(s) + "\"");
      return true;
    }
    if (key == "labelSelector") return ReadOptSelector(fv, c.label_selector, err);
    if (key == "minDomains") return ReadOptInt32(fv, c.min_domains, err);
    if (key == "nodeAffinityPolicy") return ReadInclusionPolicy(fv, c.node_affinity_policy, err);
    if (key == "nodeTaintsPolicy") return ReadInclusionPolicy(fv, c.node_taints_policy, err);
    if (key == "matchLabelKeys") return ReadStringList(fv, c.match_label_keys, err);
    return true;
  });
}

// Process-wide sharing of template-derived values between pods (see dedup.h).
DedupTable<std::vector<Container>>& ContainerTable() {
  return Immortal<DedupTable<std::vector<Container>>>();
}
DedupTable<Affinity>& AffinityTable() {
  return Immortal<DedupTable<Affinity>>();
}
DedupTable<std::vector<Toleration>>& TolerationTable() {
  return Immortal<DedupTable<std::vector<Toleration>>>();
}
DedupTable<std::vector<TopologySpreadConstraint>>& SpreadTable() {
  return Immortal<DedupTable<std::vector<TopologySpreadConstraint>>>();
}

bool DecodeVolume(od::value& v, Volume& vol, DecodeError& err) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "name") return ReadString(fv, vol.name, err);
    if (key == "persistentVolumeClaim") {
      return ReadObject(fv, err, [&](std::string_view pkey, od::value& pv) {
        if (pkey == "claimName") return ReadString(pv, vol.pvc_claim_name, err);
        if (pkey == "readOnly") return ReadBool(pv, vol.pvc_read_only, err);
        return true;
      });
    }
    if (key == "ephemeral") {
      od::json_type t{};
      if (!PeekType(fv, t, err)) return false;
      vol.ephemeral = t == od::json_type::object;
      return true;  // the claim template is the ephemeral controller's, not ours
    }
    bool known = false;
    return ReadVolumeSourceField(key, fv, vol.source, known, err);
  });
}

// The volumes the volume plugins read; the rest (configMaps, secrets, projected tokens,
// emptyDirs...) are dropped.
bool KeepVolume(const Volume& vol) {
  return !vol.pvc_claim_name.empty() || vol.ephemeral || vol.source != VolumeSource{};
}

bool DecodePodResourceClaim(od::value& v, PodResourceClaim& c, DecodeError& err) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "name") return ReadString(fv, c.name, err);
    if (key == "resourceClaimName") return ReadOptString(fv, c.resource_claim_name, err);
    if (key == "resourceClaimTemplateName") return ReadOptString(fv, c.resource_claim_template_name, err);
    return true;
  });
}

bool DecodePodResourceClaimStatus(od::value& v, PodResourceClaimStatus& c, DecodeError& err) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "name") return ReadString(fv, c.name, err);
    if (key == "resourceClaimName") return ReadOptString(fv, c.resource_claim_name, err);
    return true;
  });
}

// A ResourceRequirements object's requests (limits and claims are not scheduled on).
bool ReadRequests(od::value& v, ResourceList& out, DecodeError& err) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "requests") return ReadResourceList(fv, out, err);
    return true;
  });
}

// Same, into an optional that is set only when `requests` is present.
bool ReadOptionalRequests(od::value& v, std::optional<ResourceList>& out, DecodeError& err) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key != "requests") return true;
    out.emplace();
    return ReadResourceList(fv, *out, err);
  });
}

bool DecodeContainerResourceStatus(od::value& v, ContainerResourceStatus& cs, DecodeError& err) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "name") return ReadString(fv, cs.name, err);
    if (key == "allocatedResources") {
      cs.allocated.emplace();
      return ReadResourceList(fv, *cs.allocated, err);
    }
    if (key == "resources") return ReadOptionalRequests(fv, cs.actual, err);
    return true;
  });
}

// Appends: containerStatuses and initContainerStatuses go to the same list.
bool ReadContainerResourceStatuses(od::value& v, std::vector<ContainerResourceStatus>& out, DecodeError& err) {
  std::vector<ContainerResourceStatus> got;
  if (!ReadArrayIf(v, got, err, DecodeContainerResourceStatus,
                   [](const ContainerResourceStatus& cs) { return cs.allocated || cs.actual; }))
    return false;
  for (ContainerResourceStatus& cs : got) out.push_back(std::move(cs));
  return true;
}

bool DecodeSchedulingGate(od::value& v, std::string& name, DecodeError& err) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "name") return ReadString(fv, name, err);
    return true;
  });
}

bool DecodePodSpec(od::value& v, PodSpec& s, DecodeError& err) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "containers") return ReadSharedArray(fv, s.containers, ContainerTable(), err, DecodeContainer);
    if (key == "initContainers") {
      return ReadSharedArray(fv, s.init_containers, ContainerTable(), err, DecodeContainer);
    }
    if (key == "schedulerName") return ReadString(fv, s.scheduler_name, err);
    if (key == "nodeName") return ReadString(fv, s.node_name, err);
    if (key == "priority") return ReadOptInt32(fv, s.priority, err);
    if (key == "priorityClassName") return ReadString(fv, s.priority_class_name, err);
    if (key == "preemptionPolicy") {
      std::string_view policy;
      if (!ReadStringView(fv, policy, err)) return false;
      // The default, spelled out by the apiserver on every pod, is kept as "" (no heap).
      if (policy == "PreemptLowerPriority") s.preemption_policy = std::string();
      else s.preemption_policy = std::string(policy);
      return true;
    }
    if (key == "overhead") return ReadResourceList(fv, s.overhead, err);
    if (key == "nodeSelector") return ReadStringMap(fv, s.node_selector, err);
    if (key == "affinity") return ReadSharedObject(fv, s.affinity, AffinityTable(), err, DecodeAffinity);
    if (key == "tolerations") {
      return ReadSharedArray(fv, s.tolerations, TolerationTable(), err, DecodeToleration);
    }
    if (key == "topologySpreadConstraints") {
      return ReadSharedArray(fv, s.topology_spread_constraints, SpreadTable(), err, DecodeSpreadConstraint);
    }
    if (key == "schedulingGates") return ReadArray(fv, s.scheduling_gates, err, DecodeSchedulingGate);
    if (key == "volumes") {
      return ReadArrayIf(fv, s.volumes, err, DecodeVolume, KeepVolume);
    }
    if (key == "resources") return ReadRequests(fv, s.pod_requests, err);
    if (key == "resourceClaims") return ReadArray(fv, s.resource_claims, err, DecodePodResourceClaim);
    return true;
  });
}

// A condition read as views into the parser's buffer, so the ones we drop cost no
// allocation.
struct ConditionView {
  std::string_view type, status, reason, message, last_transition_time, last_probe_time;
};

bool DecodeConditionView(od::value& v, ConditionView& c, DecodeError& err) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "type") return ReadStringView(fv, c.type, err);
    if (key == "status") return ReadStringView(fv, c.status, err);
    if (key == "reason") return ReadStringView(fv, c.reason, err);
    if (key == "message") return ReadStringView(fv, c.message, err);
    if (key == "lastTransitionTime") return ReadStringView(fv, c.last_transition_time, err);
    if (key == "lastProbeTime") return ReadStringView(fv, c.last_probe_time, err);
    return true;
  });
}

// status.conditions, keeping only PodScheduled (see types.h); PodResizePending's reason
// sets `resize_infeasible`.
bool ReadPodScheduledCondition(od::value& v, std::vector<PodCondition>& out, bool& resize_infeasible,
                               DecodeError& err) {
  std::vector<ConditionView> kept;
  resize_infeasible = false;
  if (!ReadArrayIf(v, kept, err, DecodeConditionView, [&](const ConditionView& c) {
        if (c.type == "PodResizePending") resize_infeasible = c.reason == "Infeasible";
        return c.type == "PodScheduled";
      })) {
    return false;
  }
  out.clear();
  out.reserve(kept.size());
  for (const ConditionView& c : kept) {
    out.push_back(PodCondition{std::string(c.type), std::string(c.status), std::string(c.reason),
                               std::string(c.message), std::string(c.last_transition_time),
                               std::string(c.last_probe_time)});
  }
  return true;
}

bool DecodePodStatus(od::value& v, PodStatus& s, DecodeError& err) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "phase") return ReadString(fv, s.phase, err);
    if (key == "conditions") {
      return ReadPodScheduledCondition(fv, s.conditions, s.resize_infeasible, err);
    }
    if (key == "nominatedNodeName") return ReadString(fv, s.nominated_node_name, err);
    if (key == "startTime") return ReadString(fv, s.start_time, err);
    if (key == "containerStatuses" || key == "initContainerStatuses")
      return ReadContainerResourceStatuses(fv, s.container_resources, err);
    if (key == "allocatedResources") {
      s.pod_allocated.emplace();
      return ReadResourceList(fv, *s.pod_allocated, err);
    }
    if (key == "resources") return ReadOptionalRequests(fv, s.pod_actual, err);
    if (key == "resourceClaimStatuses") {
      return ReadArray(fv, s.resource_claim_statuses, err, DecodePodResourceClaimStatus);
    }
    return true;
  });
}

}  // namespace

bool DecodePodObject(od::value& v, Pod& pod, DecodeError& err) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "metadata") return DecodeObjectMeta(fv, pod.metadata, err);
    if (key == "kind") return CheckKind(fv, "Pod", err);
    if (key == "spec") return DecodePodSpec(fv, pod.spec, err);
    if (key == "status") return DecodePodStatus(fv, pod.status, err);
    return true;
  });
}


bool DecodeToleration(od::value& v, Toleration& t, DecodeError& err) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "key") return ReadString(fv, t.key, err);
    if (key == "operator") {
      std::string_view op;
      if (!ReadStringView(fv, op, err)) return false;
      // The last "operator" wins, as in Go's decoder: both flags are set from it.
      t.op_exists = op == "Exists";
      t.op_unknown = !t.op_exists && op != "Equal" && !op.empty();  // from a newer API: tolerates nothing
      return true;
    }
    if (key == "value") return ReadString(fv, t.value, err);
    if (key == "effect") return DecodeTaintEffect(fv, t.effect, err);
    if (key == "tolerationSeconds") return ReadOptInt64(fv, t.toleration_seconds, err);
    return true;
  });
}

bool DecodeNodeSelectorTerm(od::value& v, NodeSelectorTerm& t, DecodeError& err) {
  return ReadObject(v, err, [&](std::string_view key, od::value& fv) {
    if (key == "matchExpressions") {
      return ReadArray(fv, t.match_expressions, err, DecodeSelectorRequirement);
    }
    if (key == "matchFields") return ReadArray(fv, t.match_fields, err, DecodeSelectorRequirement);
    return true;
  });
}

bool ReadVolumeSourceField(std::string_view key, od::value& v, VolumeSource& s, bool& known, DecodeError& err) {
  known = true;
  if (key == "csi") {
    return ReadObject(v, err, [&](std::string_view k, od::value& fv) {
      if (k == "driver") return ReadString(fv, s.csi_driver, err);
      if (k == "volumeHandle") return ReadString(fv, s.csi_volume_handle, err);
      if (k == "readOnly") return ReadBool(fv, s.read_only, err);
      return true;
    });
  }
  if (key == "gcePersistentDisk") {
    return ReadObject(v, err, [&](std::string_view k, od::value& fv) {
      if (k == "pdName") return ReadString(fv, s.gce_pd_name, err);
      if (k == "readOnly") return ReadBool(fv, s.read_only, err);
      return true;
    });
  }
  if (key == "awsElasticBlockStore") {
    return ReadObject(v, err, [&](std::string_view k, od::value& fv) {
      if (k == "volumeID") return ReadString(fv, s.aws_volume_id, err);
      if (k == "readOnly") return ReadBool(fv, s.read_only, err);
      return true;
    });
  }
  if (key == "azureDisk") {
    return ReadObject(v, err, [&](std::string_view k, od::value& fv) {
      if (k == "diskURI") return ReadString(fv, s.azure_disk_uri, err);
      if (k == "readOnly") return ReadBool(fv, s.read_only, err);
      return true;
    });
  }
  if (key == "cinder") {
    return ReadObject(v, err, [&](std::string_view k, od::value& fv) {
      if (k == "volumeID") return ReadString(fv, s.cinder_volume_id, err);
      if (k == "readOnly") return ReadBool(fv, s.read_only, err);
      return true;
    });
  }
  if (key == "iscsi") {
    return ReadObject(v, err, [&](std::string_view k, od::value& fv) {
      if (k == "iqn") return ReadString(fv, s.iscsi_iqn, err);
      if (k == "lun") return ReadInt32(fv, s.iscsi_lun, err);
      if (k == "targetPortal") return ReadString(fv, s.iscsi_target_portal, err);
      if (k == "readOnly") return ReadBool(fv, s.read_only, err);
      return true;
    });
  }
  if (key == "rbd") {
    s.rbd_pool = "rbd";  // the API's default for an absent pool
    return ReadObject(v, err, [&](std::string_view k, od::value& fv) {
      if (k == "monitors") return ReadStringList(fv, s.rbd_monitors, err);
      if (k == "pool") return ReadString(fv, s.rbd_pool, err);
      if (k == "image") return ReadString(fv, s.rbd_image, err);
      if (k == "readOnly") return ReadBool(fv, s.read_only, err);
      return true;
    });
  }
  known = false;
  return true;
}

}  // namespace ksched::api::json_internal
