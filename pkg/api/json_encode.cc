// Plain string-building JSON encoders: the Binding and status patch are on the binding
// hot path, and full Pod/Node encoding serves tests and the benchmark generator.
#include <charconv>

#include "pkg/api/json.h"
#include "pkg/api/json_writer.h"
#include "pkg/api/selector.h"
#include "pkg/util/json_string.h"

namespace ksched::api {
namespace {

void WriteMeta(JsonWriter& w, const ObjectMeta& m) {
  w.Key("metadata");
  w.BeginObject();
  w.Field("name", m.name);
  w.FieldIfSet("namespace", m.namespace_);
  w.FieldIfSet("uid", m.uid);
  w.FieldIfSet("resourceVersion", m.resource_version);
  if (m.generation != 0) w.IntField("generation", m.generation);
  w.FieldIfSet("creationTimestamp", m.creation_timestamp);
  if (m.deletion_timestamp) w.Field("deletionTimestamp", *m.deletion_timestamp);
  w.StringMapField("labels", m.labels);
  w.StringMapField("annotations", m.annotations);
  w.ArrayField("ownerReferences", m.owner_references, [&](const OwnerReference& r) {
    w.BeginObject();
    w.Field("apiVersion", r.api_version);
    w.Field("kind", r.kind);
    w.Field("name", r.name);
    w.Field("uid", r.uid);
    if (r.controller) {
      w.Key("controller");
      w.Bool(true);
    }
    w.EndObject();
  });
  w.EndObject();
}

void WriteRequirements(JsonWriter& w, std::string_view key,
                       const std::vector<LabelSelectorRequirement>& reqs) {
  w.ArrayField(key, reqs, [&](const LabelSelectorRequirement& r) {
    w.BeginObject();
    w.Field("key", r.key);
    w.Field("operator", SelectorOperatorName(r.op));
    w.StringsField("values", r.values);
    w.EndObject();
  });
}

void WriteSelector(JsonWriter& w, std::string_view key, const std::optional<LabelSelector>& s) {
  if (!s) return;
  w.Key(key);
  w.BeginObject();
  w.StringMapField("matchLabels", s->match_labels);
  WriteRequirements(w, "matchExpressions", s->match_expressions);
  w.EndObject();
}

void WritePodAffinityTerm(JsonWriter& w, const PodAffinityTerm& t) {
  w.BeginObject();
  WriteSelector(w, "labelSelector", t.label_selector);
  w.StringsField("namespaces", t.namespaces);
  w.Field("topologyKey", t.topology_key);
  WriteSelector(w, "namespaceSelector", t.namespace_selector);
  w.StringsField("matchLabelKeys", t.match_label_keys);
  w.StringsField("mismatchLabelKeys", t.mismatch_label_keys);
  w.EndObject();
}

void WritePodAffinity(JsonWriter& w, std::string_view key, const std::optional<PodAffinity>& a) {
  if (!a) return;
  w.Key(key);
  w.BeginObject();
  w.ArrayField("requiredDuringSchedulingIgnoredDuringExecution", a->required,
               [&](const PodAffinityTerm& t) { WritePodAffinityTerm(w, t); });
  w.ArrayField("preferredDuringSchedulingIgnoredDuringExecution", a->preferred,
               [&](const WeightedPodAffinityTerm& t) {
                 w.BeginObject();
                 w.IntField("weight", t.weight);
                 w.Key("podAffinityTerm");
                 WritePodAffinityTerm(w, t.term);
                 w.EndObject();
               });
  w.EndObject();
}

void WriteAffinity(JsonWriter& w, const Affinity& a) {
  w.Key("affinity");
  w.BeginObject();
  if (a.node_affinity) {
    const NodeAffinity& na = *a.node_affinity;
    w.Key("nodeAffinity");
    w.BeginObject();
    if (na.required) {
      w.Key("requiredDuringSchedulingIgnoredDuringExecution");
      w.BeginObject();
      w.Key("nodeSelectorTerms");
      w.BeginArray();
      for (const NodeSelectorTerm& t : *na.required) WriteNodeSelectorTerm(w, t);
      w.EndArray();
      w.EndObject();
    }
    w.ArrayField("preferredDuringSchedulingIgnoredDuringExecution", na.preferred,
                 [&](const PreferredSchedulingTerm& p) {
                   w.BeginObject();
                   w.IntField("weight", p.weight);
                   w.Key("preference");
                   WriteNodeSelectorTerm(w, p.preference);
                   w.EndObject();
                 });
    w.EndObject();
  }
  WritePodAffinity(w, "podAffinity", a.pod_affinity);
  WritePodAffinity(w, "podAntiAffinity", a.pod_anti_affinity);
  w.EndObject();
}

// A resource list that is written even when empty (an engaged optional decodes back
// engaged only if its key is there).
void WriteResourceList(JsonWriter& w, std::string_view key, const ResourceList& list) {
  w.Key(key);
  w.BeginObject();
  for (const auto& [name, q] : list) {
    w.Key(name);
    w.QuantityValue(q);
  }
  w.EndObject();
}

// {"requests": ...}, as a ResourceRequirements.
void WriteRequestsObject(JsonWriter& w, std::string_view key, const ResourceList& requests) {
  w.Key(key);
  w.BeginObject();
  WriteResourceList(w, "requests", requests);
  w.EndObject();
}

void WriteContainer(JsonWriter& w, const Container& c) {
  w.BeginObject();
  w.Field("name", c.name);
  w.Field("image", c.image);
  if (!c.requests.empty()) WriteRequestsObject(w, "resources", c.requests);
  w.ArrayField("ports", c.ports, [&](const ContainerPort& p) {
    w.BeginObject();
    w.IntField("containerPort", p.container_port);
    if (p.host_port != 0) w.IntField("hostPort", p.host_port);
    w.Field("protocol", p.protocol);
    w.FieldIfSet("hostIP", p.host_ip);
    w.EndObject();
  });
  if (c.restart_policy_always) w.Field("restartPolicy", "Always");
  w.EndObject();
}

std::string_view PolicyName(InclusionPolicy p) {
  return p == InclusionPolicy::kHonor ? "Honor" : "Ignore";
}

void WriteSpreadConstraint(JsonWriter& w, const TopologySpreadConstraint& c) {
  w.BeginObject();
  w.IntField("maxSkew", c.max_skew);
  w.Field("topologyKey", c.topology_key);
  w.Field("whenUnsatisfiable", c.when_unsatisfiable == WhenUnsatisfiable::kDoNotSchedule
                                   ? "DoNotSchedule"
                                   : "ScheduleAnyway");
  WriteSelector(w, "labelSelector", c.label_selector);
  if (c.min_domains) w.IntField("minDomains", *c.min_domains);
  if (c.node_affinity_policy) w.Field("nodeAffinityPolicy", PolicyName(*c.node_affinity_policy));
  if (c.node_taints_policy) w.Field("nodeTaintsPolicy", PolicyName(*c.node_taints_policy));
  w.StringsField("matchLabelKeys", c.match_label_keys);
  w.EndObject();
}

// The inline volume sources the decoder keeps (pkg/api/types.h VolumeSource), one key
// each; readOnly goes with every source written (the decoder keeps one flag for all).
void WriteVolumeSource(JsonWriter& w, const VolumeSource& s) {
  bool any = false;
  auto source = [&](std::string_view key, bool present, auto&& fields) {
    if (!present) return;
    any = true;
    w.Key(key);
    w.BeginObject();
    fields();
    if (s.read_only) {
      w.Key("readOnly");
      w.Bool(true);
    }
    w.EndObject();
  };
  source("csi", !s.csi_driver.empty() || !s.csi_volume_handle.empty(), [&] {
    w.FieldIfSet("driver", s.csi_driver);
    w.FieldIfSet("volumeHandle", s.csi_volume_handle);
  });
  source("gcePersistentDisk", !s.gce_pd_name.empty(), [&] { w.Field("pdName", s.gce_pd_name); });
  source("awsElasticBlockStore", !s.aws_volume_id.empty(), [&] { w.Field("volumeID", s.aws_volume_id); });
  source("azureDisk", !s.azure_disk_uri.empty(), [&] { w.Field("diskURI", s.azure_disk_uri); });
  source("cinder", !s.cinder_volume_id.empty(), [&] { w.Field("volumeID", s.cinder_volume_id); });
  source("iscsi", !s.iscsi_iqn.empty() || s.iscsi_lun != 0 || !s.iscsi_target_portal.empty(), [&] {
    w.FieldIfSet("iqn", s.iscsi_iqn);
    if (s.iscsi_lun != 0) w.IntField("lun", s.iscsi_lun);
    w.FieldIfSet("targetPortal", s.iscsi_target_portal);
  });
  source("rbd", !s.rbd_monitors.empty() || !s.rbd_pool.empty() || !s.rbd_image.empty(), [&] {
    if (!s.rbd_monitors.empty()) w.ArrayField("monitors", s.rbd_monitors, [&](const std::string& m) { w.String(m); });
    w.Field("pool", s.rbd_pool);
    w.FieldIfSet("image", s.rbd_image);
  });
  // Only the flag is set: it needs a source to ride on.
  if (!any && s.read_only) source("csi", true, [] {});
}

void WritePodSpec(JsonWriter& w, const PodSpec& s) {
  w.Key("spec");
  w.BeginObject();
  w.Field("schedulerName", s.scheduler_name);
  w.FieldIfSet("nodeName", s.node_name);
  if (s.priority) w.IntField("priority", *s.priority);
  w.FieldIfSet("priorityClassName", s.priority_class_name);
  w.FieldIfSet("preemptionPolicy", s.preemption_policy);
  w.Key("containers");
  w.BeginArray();
  for (const Container& c : s.containers) WriteContainer(w, c);
  w.EndArray();
  w.ArrayField("initContainers", s.init_containers, [&](const Container& c) { WriteContainer(w, c); });
  w.ResourcesField("overhead", s.overhead);
  if (!s.pod_requests.empty()) WriteRequestsObject(w, "resources", s.pod_requests);
  w.ArrayField("resourceClaims", s.resource_claims, [&](const PodResourceClaim& c) {
    w.BeginObject();
    w.Field("name", c.name);
    if (c.resource_claim_name) w.Field("resourceClaimName", *c.resource_claim_name);
    if (c.resource_claim_template_name) w.Field("resourceClaimTemplateName", *c.resource_claim_template_name);
    w.EndObject();
  });
  w.StringMapField("nodeSelector", s.node_selector);
  if (s.affinity) WriteAffinity(w, *s.affinity);
  w.ArrayField("tolerations", s.tolerations, [&](const Toleration& t) { WriteToleration(w, t); });
  w.ArrayField("topologySpreadConstraints", s.topology_spread_constraints,
               [&](const TopologySpreadConstraint& c) { WriteSpreadConstraint(w, c); });
  w.ArrayField("schedulingGates", s.scheduling_gates, [&](const std::string& g) {
    w.BeginObject();
    w.Field("name", g);
    w.EndObject();
  });
  w.ArrayField("volumes", s.volumes, [&](const Volume& v) {
    w.BeginObject();
    w.Field("name", v.name);
    bool sourced = false;
    if (!v.pvc_claim_name.empty() || v.pvc_read_only) {
      w.Key("persistentVolumeClaim");
      w.BeginObject();
      w.Field("claimName", v.pvc_claim_name);
      if (v.pvc_read_only) {
        w.Key("readOnly");
        w.Bool(true);
      }
      w.EndObject();
      sourced = true;
    }
    if (v.ephemeral) {
      w.Key("ephemeral");
      w.BeginObject();
      w.Key("volumeClaimTemplate");
      w.BeginObject();
      w.Key("spec");
      w.BeginObject();
      w.EndObject();
      w.EndObject();
      w.EndObject();
      sourced = true;
    }
    if (v.source != VolumeSource{}) {
      WriteVolumeSource(w, v.source);
      sourced = true;
    }
    if (!sourced) {
      // The apiserver requires a volume source; emptyDir is the neutral one.
      w.Key("emptyDir");
      w.BeginObject();
      w.EndObject();
    }
    w.EndObject();
  });
  w.EndObject();
}

void WriteTimeOrNull(JsonWriter& w, std::string_view key, std::string_view time) {
  w.Key(key);
  if (time.empty()) {
    w.Null();
  } else {
    w.String(time);
  }
}

void WritePodCondition(JsonWriter& w, const PodCondition& c, std::optional<int64_t> generation) {
  w.BeginObject();
  w.Field("type", c.type.empty() ? std::string_view("PodScheduled") : std::string_view(c.type));
  w.Field("status", c.status);
  w.FieldIfSet("reason", c.reason);
  w.FieldIfSet("message", c.message);
  if (generation) w.IntField("observedGeneration", *generation);
  WriteTimeOrNull(w, "lastProbeTime", c.last_probe_time);
  WriteTimeOrNull(w, "lastTransitionTime", c.last_transition_time);
  w.EndObject();
}

}  // namespace

void WriteNodeSelectorTerm(JsonWriter& w, const NodeSelectorTerm& t) {
  w.BeginObject();
  WriteRequirements(w, "matchExpressions", t.match_expressions);
  WriteRequirements(w, "matchFields", t.match_fields);
  w.EndObject();
}

void WriteToleration(JsonWriter& w, const Toleration& t) {
  w.BeginObject();
  w.FieldIfSet("key", t.key);
  w.Field("operator", t.op_unknown ? "Unknown" : t.op_exists ? "Exists" : "Equal");
  w.FieldIfSet("value", t.value);
  w.FieldIfSet("effect", TaintEffectName(t.effect));
  if (t.toleration_seconds) w.IntField("tolerationSeconds", *t.toleration_seconds);
  w.EndObject();
}

void AppendJsonString(std::string& out, std::string_view s) { AppendJsonQuoted(out, s); }

void AppendQuantity(std::string& out, Quantity q) {
  const Quantity::Milli milli = q.ExactMilli();
  const bool whole = milli % 1000 == 0;
  Quantity::Milli v = whole ? milli / 1000 : milli;
  // Digits from the lowest, each taken off a non-positive value so the minimum is safe.
  char buf[48];
  char* p = buf + sizeof(buf);
  const bool negative = v < 0;
  if (!negative) v = -v;
  do {
    *--p = static_cast<char>('0' - static_cast<int>(v % 10));
    v /= 10;
  } while (v != 0);
  if (negative) *--p = '-';
  out.append(p, buf + sizeof(buf));
  if (!whole) out += 'm';
}

namespace {

// An object reference to a pod, as an event's regarding/related.
void WritePodReference(JsonWriter& w, std::string_view field, const PodReference& ref) {
  w.Key(field);
  w.BeginObject();
  w.Field("apiVersion", "v1");
  w.Field("kind", "Pod");
  w.Field("namespace", ref.namespace_);
  w.Field("name", ref.name);
  w.Field("uid", ref.uid);
  if (!ref.resource_version.empty()) w.Field("resourceVersion", ref.resource_version);
  w.EndObject();
}

}  // namespace

std::string EncodePodEvent(const PodEvent& e) {
  std::string out;
  out.reserve(512 + e.note.size());
  JsonWriter w(out);
  w.BeginObject();
  w.Field("apiVersion", "events.k8s.io/v1");
  w.Field("kind", "Event");
  w.Key("metadata");
  w.BeginObject();
  w.Field("name", e.name);
  w.Field("namespace", e.regarding.namespace_);
  w.EndObject();
  w.Field("eventTime", e.event_time);
  w.Field("reportingController", e.reporting_controller);
  w.Field("reportingInstance", e.reporting_instance);
  w.Field("action", e.action);
  w.Field("reason", e.reason);
  WritePodReference(w, "regarding", e.regarding);
  if (e.related) WritePodReference(w, "related", *e.related);
  w.Field("note", e.note);
  w.Field("type", e.warning ? "Warning" : "Normal");
  w.EndObject();
  return out;
}

std::string EncodeDeleteOptionsWithUid(std::string_view uid) {
  std::string out;
  JsonWriter w(out);
  w.BeginObject();
  w.Field("kind", "DeleteOptions");
  w.Field("apiVersion", "v1");
  w.Key("preconditions");
  w.BeginObject();
  w.Field("uid", uid);
  w.EndObject();
  w.EndObject();
  return out;
}

std::string EncodeBinding(std::string_view pod_namespace, std::string_view pod_name,
                          std::string_view pod_uid, std::string_view node_name) {
  std::string out;
  out.reserve(160 + pod_namespace.size() + pod_name.size() + node_name.size());
  JsonWriter w(out);
  w.BeginObject();
  w.Field("apiVersion", "v1");
  w.Field("kind", "Binding");
  w.Key("metadata");
  w.BeginObject();
  w.Field("name", pod_name);
  w.Field("namespace", pod_namespace);
  w.FieldIfSet("uid", pod_uid);
  w.EndObject();
  w.Key("target");
  w.BeginObject();
  w.Field("kind", "Node");
  w.Field("name", node_name);
  w.EndObject();
  w.EndObject();
  return out;
}

std::string EncodePodScheduledConditionPatch(const PodCondition& condition,
                                             const std::optional<std::string>& nominated_node_name,
                                             std::optional<int64_t> observed_generation) {
  std::string out;
  out.reserve(192 + condition.message.size());
  JsonWriter w(out);
  w.BeginObject();
  w.Key("status");
  w.BeginObject();
  w.Key("conditions");
  w.BeginArray();
  WritePodCondition(w, condition, observed_generation);
  w.EndArray();
  if (nominated_node_name) {
    w.Key("nominatedNodeName");
    if (nominated_node_name->empty()) {
      w.Null();
    } else {
      w.String(*nominated_node_name);
    }
  }
  w.EndObject();
  w.EndObject();
  return out;
}

std::string EncodePod(const Pod& pod) {
  std::string out;
  out.reserve(1024);
  JsonWriter w(out);
  w.BeginObject();
  w.Field("apiVersion", "v1");
  w.Field("kind", "Pod");
  WriteMeta(w, pod.metadata);
  WritePodSpec(w, pod.spec);
  const PodStatus& s = pod.status;
  if (!s.phase.empty() || !s.conditions.empty() || !s.nominated_node_name.empty() || !s.start_time.empty() ||
      !s.container_resources.empty() || s.pod_allocated || s.pod_actual || s.resize_infeasible ||
      !s.resource_claim_statuses.empty()) {
    w.Key("status");
    w.BeginObject();
    w.FieldIfSet("phase", s.phase);
    std::vector<PodCondition> conditions = s.conditions;
    if (s.resize_infeasible) conditions.push_back({.type = "PodResizePending", .status = "True", .reason = "Infeasible"});
    w.ArrayField("conditions", conditions, [&](const PodCondition& c) {
      w.BeginObject();
      w.Field("type", c.type);
      w.Field("status", c.status);
      w.FieldIfSet("reason", c.reason);
      w.FieldIfSet("message", c.message);
      w.FieldIfSet("lastProbeTime", c.last_probe_time);
      w.FieldIfSet("lastTransitionTime", c.last_transition_time);
      w.EndObject();
    });
    w.FieldIfSet("nominatedNodeName", s.nominated_node_name);
    w.FieldIfSet("startTime", s.start_time);
    // In-place resize: what the kubelet allocated and actuated.
    w.ArrayField("containerStatuses", s.container_resources, [&](const ContainerResourceStatus& cs) {
      w.BeginObject();
      w.Field("name", cs.name);
      if (cs.allocated) WriteResourceList(w, "allocatedResources", *cs.allocated);
      if (cs.actual) WriteRequestsObject(w, "resources", *cs.actual);
      w.EndObject();
    });
    if (s.pod_allocated) WriteResourceList(w, "allocatedResources", *s.pod_allocated);
    if (s.pod_actual) WriteRequestsObject(w, "resources", *s.pod_actual);
    w.ArrayField("resourceClaimStatuses", s.resource_claim_statuses, [&](const PodResourceClaimStatus& c) {
      w.BeginObject();
      w.Field("name", c.name);
      if (c.resource_claim_name) w.Field("resourceClaimName", *c.resource_claim_name);
      w.EndObject();
    });
    w.EndObject();
  }
  w.EndObject();
  return out;
}

std::string EncodeNode(const Node& node) {
  std::string out;
  out.reserve(1024);
  JsonWriter w(out);
  w.BeginObject();
  w.Field("apiVersion", "v1");
  w.Field("kind", "Node");
  WriteMeta(w, node.metadata);
  w.Key("spec");
  w.BeginObject();
  if (node.spec.unschedulable) {
    w.Key("unschedulable");
    w.Bool(true);
  }
  w.ArrayField("taints", node.spec.taints, [&](const Taint& t) {
    w.BeginObject();
    w.Field("key", t.key);
    w.FieldIfSet("value", t.value);
    w.Field("effect", TaintEffectName(t.effect));
    w.EndObject();
  });
  w.EndObject();
  const NodeStatus& s = node.status;
  w.Key("status");
  w.BeginObject();
  w.ResourcesField("capacity", s.capacity);
  w.ResourcesField("allocatable", s.allocatable);
  w.ArrayField("conditions", s.conditions, [&](const NodeCondition& c) {
    w.BeginObject();
    w.Field("type", c.type);
    w.Field("status", c.status);
    w.FieldIfSet("reason", c.reason);
    w.EndObject();
  });
  w.ArrayField("images", s.images, [&](const ContainerImage& img) {
    w.BeginObject();
    w.StringsField("names", img.names);
    w.IntField("sizeBytes", img.size_bytes);
    w.EndObject();
  });
  w.EndObject();
  w.EndObject();
  return out;
}

}  // namespace ksched::api
