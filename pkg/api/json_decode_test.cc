#include <gtest/gtest.h>

#include "pkg/api/json.h"

namespace ksched::api {
namespace {

// A pod as `kubectl get pod -o json` prints it, managedFields included.
constexpr std::string_view kKubectlPod = R"({
  "apiVersion": "v1",
  "kind": "Pod",
  "metadata": {
    "annotations": {"kubectl.kubernetes.io/restartedAt": "2024-05-01T10:00:00Z"},
    "creationTimestamp": "2024-05-01T10:00:01Z",
    "generateName": "web-7d4b9c8f6d-",
    "generation": 2,
    "labels": {"app": "web", "pod-template-hash": "7d4b9c8f6d"},
    "managedFields": [
      {"apiVersion": "v1", "fieldsType": "FieldsV1",
       "fieldsV1": {"f:metadata": {"f:generateName": {}, "f:labels": {".": {}, "f:app": {}}},
                    "f:spec": {"f:containers": {"k:{\"name\":\"web\"}": {".": {}, "f:image": {},
                    "f:resources": {".": {}, "f:requests": {"f:cpu": {"bogus": [1, 2.5, null]}}}}}}},
       "manager": "kube-controller-manager", "operation": "Update", "time": "2024-05-01T10:00:01Z"}
    ],
    "name": "web-7d4b9c8f6d-x2x9k",
    "namespace": "prod",
    "ownerReferences": [
      {"apiVersion": "apps/v1", "blockOwnerDeletion": true, "controller": true,
       "kind": "ReplicaSet", "name": "web-7d4b9c8f6d", "uid": "1f9c2b3e-0000-4000-8000-000000000001"}
    ],
    "resourceVersion": "123456",
    "uid": "8e2d9a6c-1111-4222-8333-444455556666"
  },
  "spec": {
    "affinity": {
      "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
          "nodeSelectorTerms": [
            {"matchExpressions": [{"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}]},
            {"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["n1", "n2"]}]}
          ]
        },
        "preferredDuringSchedulingIgnoredDuringExecution": [
          {"weight": 10, "preference": {"matchExpressions": [{"key": "disk", "operator": "Exists"}]}}
        ]
      },
      "podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
          {"labelSelector": {"matchLabels": {"app": "cache"}}, "topologyKey": "kubernetes.io/hostname",
           "namespaceSelector": {}}
        ]
      },
      "podAntiAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
          {"weight": 100, "podAffinityTerm": {
            "labelSelector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}]},
            "namespaces": ["prod", "staging"], "topologyKey": "topology.kubernetes.io/zone",
            "namespaceSelector": {"matchLabels": {"team": "a"}}}}
        ]
      }
    },
    "containers": [
      {"image": "nginx:1.25", "imagePullPolicy": "IfNotPresent", "name": "web",
       "ports": [{"containerPort": 80, "hostPort": 8080, "protocol": "TCP"},
                 {"containerPort": 9090, "name": "metrics"},
                 {"containerPort": 53, "hostPort": 53, "protocol": "UDP", "hostIP": "10.0.0.1"}],
       "resources": {"limits": {"cpu": "1", "memory": "512Mi"},
                     "requests": {"cpu": "250m", "memory": "1.5Gi", "nvidia.com/gpu": 1}},
       "terminationMessagePath": "/dev/termination-log",
       "volumeMounts": [{"mountPath": "/data", "name": "data"}]},
      {"image": "busybox", "name": "side", "resources": {}}
    ],
    "dnsPolicy": "ClusterFirst",
    "enableServiceLinks": true,
    "initContainers": [
      {"image": "init", "name": "setup", "resources": {"requests": {"cpu": "2"}}},
      {"image": "proxy", "name": "mesh", "restartPolicy": "Always",
       "resources": {"requests": {"cpu": "100m"}}}
    ],
    "nodeSelector": {"kubernetes.io/os": "linux"},
    "overhead": {"cpu": "10m"},
    "preemptionPolicy": "Never",
    "priority": 1000,
    "priorityClassName": "high",
    "restartPolicy": "Always",
    "schedulerName": "my-scheduler",
    "schedulingGates": [{"name": "example.com/quota"}],
    "securityContext": {},
    "terminationGracePeriodSeconds": 30,
    "tolerations": [
      {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists",
       "tolerationSeconds": 300},
      {"key": "dedicated", "operator": "Equal", "value": "web", "effect": "NoSchedule"},
      {"operator": "Exists"}
    ],
    "topologySpreadConstraints": [
      {"maxSkew": 2, "topologyKey": "topology.kubernetes.io/zone",
       "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {"matchLabels": {"app": "web"}},
       "minDomains": 3, "nodeAffinityPolicy": "Honor", "nodeTaintsPolicy": "Ignore",
       "matchLabelKeys": ["pod-template-hash"]}
    ],
    "volumes": [
      {"name": "data", "persistentVolumeClaim": {"claimName": "web-data"}},
      {"name": "cfg", "configMap": {"name": "web-cfg", "defaultMode": 420}}
    ]
  },
  "status": {
    "conditions": [
      {"lastProbeTime": null, "lastTransitionTime": "2024-05-01T10:00:02Z", "status": "True",
       "type": "Initialized"},
      {"lastProbeTime": null, "lastTransitionTime": "2024-05-01T10:00:01Z",
       "message": "0/3 nodes are available", "reason": "Unschedulable", "status": "False",
       "type": "PodScheduled"}
    ],
    "nominatedNodeName": "node-2",
    "phase": "Pending",
    "qosClass": "Burstable"
  }
})";

TEST(JsonDecodeTest, DecodesKubectlPod) {
  auto result = DecodePod(kKubectlPod);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  const Pod& pod = **result;
  EXPECT_EQ(pod.Key(), "prod/web-7d4b9c8f6d-x2x9k");
  EXPECT_EQ(pod.metadata.uid, "8e2d9a6c-1111-4222-8333-444455556666");
  EXPECT_EQ(pod.metadata.resource_version, "123456");
  EXPECT_EQ(pod.metadata.generation, 2);
  EXPECT_EQ(pod.metadata.creation_timestamp, "2024-05-01T10:00:01Z");
  EXPECT_FALSE(pod.IsBeingDeleted());
  EXPECT_EQ(pod.metadata.labels, (StringMap{{"app", "web"}, {"pod-template-hash", "7d4b9c8f6d"}}));
  EXPECT_TRUE(pod.metadata.annotations.empty());  // none retained by default
  ASSERT_EQ(pod.metadata.owner_references.size(), 1u);
  EXPECT_EQ(pod.metadata.owner_references[0],
            (OwnerReference{"apps/v1", "ReplicaSet", "web-7d4b9c8f6d",
                            "1f9c2b3e-0000-4000-8000-000000000001", true}));

  const PodSpec& s = pod.spec;
  EXPECT_EQ(s.scheduler_name, "my-scheduler");
  EXPECT_EQ(pod.Priority(), 1000);
  EXPECT_EQ(s.priority_class_name, "high");
  EXPECT_EQ(s.preemption_policy, "Never");
  ASSERT_EQ(s.containers.size(), 2u);
  const Container& web = s.containers[0];
  EXPECT_EQ(web.name, "web");
  EXPECT_EQ(web.image, "nginx:1.25");
  ASSERT_EQ(web.requests.size(), 3u);
  EXPECT_EQ(FindResource(web.requests, "cpu")->MilliValue(), 250);
  EXPECT_EQ(FindResource(web.requests, "memory")->Value(), 1610612736);
  EXPECT_EQ(FindResource(web.requests, "nvidia.com/gpu")->Value(), 1);
  ASSERT_EQ(web.ports.size(), 2u);  // host ports only
  EXPECT_EQ(web.ports[0], (ContainerPort{80, 8080, "TCP", ""}));
  EXPECT_EQ(web.ports[1], (ContainerPort{53, 53, "UDP", "10.0.0.1"}));
  EXPECT_TRUE(s.containers[1].requests.empty());
  ASSERT_EQ(s.init_containers.size(), 2u);
  EXPECT_FALSE(s.init_containers[0].restart_policy_always);
  EXPECT_TRUE(s.init_containers[1].restart_policy_always);
  EXPECT_EQ(FindResource(s.overhead, "cpu")->MilliValue(), 10);
  EXPECT_EQ(s.node_selector, (StringMap{{"kubernetes.io/os", "linux"}}));

  ASSERT_TRUE(s.affinity.has_value());
  const NodeAffinity& na = *s.affinity->node_affinity;
  ASSERT_TRUE(na.required.has_value());
  ASSERT_EQ(na.required->size(), 2u);
  EXPECT_EQ((*na.required)[0].match_expressions[0],
            (LabelSelectorRequirement{"kubernetes.io/os", SelectorOperator::kIn, {"linux"}}));
  EXPECT_EQ((*na.required)[1].match_fields[0].op, SelectorOperator::kNotIn);
  ASSERT_EQ(na.preferred.size(), 1u);
  EXPECT_EQ(na.preferred[0].weight, 10);
  EXPECT_EQ(na.preferred[0].preference.match_expressions[0].op, SelectorOperator::kExists);
  const PodAffinity& pa = *s.affinity->pod_affinity;
  ASSERT_EQ(pa.required.size(), 1u);
  EXPECT_EQ(*pa.required[0].label_selector->match_labels.Get("app"), "cache");
  ASSERT_TRUE(pa.required[0].namespace_selector.has_value());  // {} = all namespaces
  EXPECT_TRUE(pa.required[0].namespace_selector->match_labels.empty());
  const PodAffinity& anti = *s.affinity->pod_anti_affinity;
  ASSERT_EQ(anti.preferred.size(), 1u);
  EXPECT_EQ(anti.preferred[0].weight, 100);
  EXPECT_EQ(anti.preferred[0].term.namespaces, (std::vector<std::string>{"prod", "staging"}));
  EXPECT_EQ(anti.preferred[0].term.topology_key, "topology.kubernetes.io/zone");
  EXPECT_EQ(*anti.preferred[0].term.namespace_selector->match_labels.Get("team"), "a");

  ASSERT_EQ(s.tolerations.size(), 3u);
  EXPECT_EQ(s.tolerations[0], (Toleration{"node.kubernetes.io/not-ready", true, "",
                                          TaintEffect::kNoExecute, 300}));
  EXPECT_EQ(s.tolerations[1],
            (Toleration{"dedicated", false, "web", TaintEffect::kNoSchedule, std::nullopt}));
  EXPECT_EQ(s.tolerations[2], (Toleration{"", true, "", TaintEffect::kNone, std::nullopt}));
  ASSERT_EQ(s.topology_spread_constraints.size(), 1u);
  const TopologySpreadConstraint& tsc = s.topology_spread_constraints[0];
  EXPECT_EQ(tsc.max_skew, 2);
  EXPECT_EQ(tsc.when_unsatisfiable, WhenUnsatisfiable::kScheduleAnyway);
  EXPECT_EQ(tsc.min_domains, 3);
  EXPECT_EQ(tsc.node_affinity_policy, InclusionPolicy::kHonor);
  EXPECT_EQ(tsc.node_taints_policy, InclusionPolicy::kIgnore);
  EXPECT_EQ(tsc.match_label_keys, (std::vector<std::string>{"pod-template-hash"}));
  EXPECT_EQ(s.scheduling_gates, (std::vector<std::string>{"example.com/quota"}));
  ASSERT_EQ(s.volumes.size(), 1u);  // PVC volumes only
  EXPECT_EQ(s.volumes[0], (Volume{"data", "web-data"}));

  EXPECT_EQ(pod.status.phase, "Pending");
  EXPECT_EQ(pod.status.nominated_node_name, "node-2");
  ASSERT_EQ(pod.status.conditions.size(), 1u);  // PodScheduled only
  const PodCondition* cond = pod.FindCondition("PodScheduled");
  ASSERT_NE(cond, nullptr);
  EXPECT_EQ(cond->reason, "Unschedulable");
  EXPECT_EQ(cond->last_probe_time, "");
  EXPECT_EQ(cond->last_transition_time, "2024-05-01T10:00:01Z");
}

// A pod as a 1.36 API server serves it, with the fields added since 1.20 (pod-level
// resources, resource claims, resize policy and status, user namespaces, OS, sidecar
// restart rules, host-network ports, image volumes...): the ones the scheduler counts are
// read, every other one is tolerated.
constexpr char kPod136[] = R"({
  "kind": "Pod", "apiVersion": "v1",
  "metadata": {"name": "trainer-0", "namespace": "ml", "uid": "u-136", "resourceVersion": "9",
               "generation": 3, "creationTimestamp": "2026-05-01T10:00:00Z",
               "managedFields": [{"manager": "kubectl", "operation": "Apply", "apiVersion": "v1",
                                  "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {}}}]},
  "spec": {
    "schedulerName": "ksched",
    "hostUsers": false, "os": {"name": "linux"}, "hostnameOverride": "t0",
    "resources": {"requests": {"cpu": "2", "memory": "4Gi", "ephemeral-storage": "1Gi"},
                  "limits": {"cpu": "4", "memory": "8Gi"}},
    "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"},
                       {"name": "shared", "resourceClaimName": "shared-nic"}],
    "schedulingGates": [],
    "containers": [{"name": "main", "image": "trainer:1",
                    "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "claims": [{"name": "gpu", "request": "r0"}]},
                    "resizePolicy": [{"resourceName": "cpu", "restartPolicy": "NotRequired"}],
                    "restartPolicyRules": [{"action": "Restart", "exitCodes": {"operator": "In", "values": [42]}}],
                    "stopSignal": "SIGTERM"}],
    "initContainers": [{"name": "log", "image": "log:1", "restartPolicy": "Always",
                        "resources": {"requests": {"cpu": "100m"}}}],
    "volumes": [{"name": "model", "image": {"reference": "models:v1", "pullPolicy": "IfNotPresent"}}]
  },
  "status": {
    "phase": "Running",
    "observedGeneration": 3,
    "conditions": [{"type": "PodResizePending", "status": "True", "reason": "Infeasible",
                    "message": "Node didn't have enough capacity", "observedGeneration": 3},
                   {"type": "PodResizeInProgress", "status": "False"},
                   {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-05-01T10:00:01Z"}],
    "resources": {"requests": {"cpu": "1500m", "memory": "4Gi"}},
    "allocatedResources": {"cpu": "1500m", "memory": "4Gi"},
    "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "trainer-0-gpu-x7k"}],
    "containerStatuses": [{"name": "main", "ready": true, "restartCount": 0, "image": "trainer:1",
                           "imageID": "", "started": true, "state": {"running": {}},
                           "allocatedResources": {"cpu": "1", "memory": "1Gi"},
                           "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "2"}},
                           "user": {"linux": {"uid": 1000, "gid": 1000}},
                           "allocatedResourcesStatus": [{"name": "claim:gpu/r0", "resources": []}]},
                          {"name": "plain", "ready": true, "restartCount": 0, "image": "x", "imageID": ""}],
    "initContainerStatuses": [{"name": "log", "ready": true, "restartCount": 0, "image": "log:1", "imageID": "",
                               "allocatedResources": {"cpu": "100m"}}]
  }
})";

TEST(JsonDecodeTest, DecodesThe136PodFields) {
  auto result = DecodePod(kPod136);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  const Pod& pod = **result;
  EXPECT_EQ(pod.spec.pod_requests, (ResourceList{{"cpu", *Quantity::Parse("2")},
                                                 {"memory", *Quantity::Parse("4Gi")},
                                                 {"ephemeral-storage", *Quantity::Parse("1Gi")}}));
  EXPECT_EQ(pod.spec.resource_claims,
            (std::vector<PodResourceClaim>{{.name = "gpu", .resource_claim_template_name = "one-gpu"},
                                           {.name = "shared", .resource_claim_name = "shared-nic"}}));
  EXPECT_EQ(pod.status.resource_claim_statuses,
            (std::vector<PodResourceClaimStatus>{{.name = "gpu", .resource_claim_name = "trainer-0-gpu-x7k"}}));
  EXPECT_TRUE(pod.status.resize_infeasible);
  ASSERT_EQ(pod.status.conditions.size(), 1u);  // only PodScheduled is kept
  EXPECT_EQ(pod.status.conditions[0].type, "PodScheduled");
  ASSERT_EQ(pod.status.container_resources.size(), 2u);  // "plain" reports neither list
  EXPECT_EQ(pod.status.container_resources[0].name, "main");
  EXPECT_EQ(pod.status.container_resources[0].allocated,
            (ResourceList{{"cpu", *Quantity::Parse("1")}, {"memory", *Quantity::Parse("1Gi")}}));
  EXPECT_EQ(pod.status.container_resources[0].actual,
            (ResourceList{{"cpu", *Quantity::Parse("1")}, {"memory", *Quantity::Parse("1Gi")}}));
  EXPECT_EQ(pod.status.container_resources[1].name, "log");
  EXPECT_FALSE(pod.status.container_resources[1].actual.has_value());
  EXPECT_EQ(pod.status.pod_allocated,
            (ResourceList{{"cpu", *Quantity::Parse("1500m")}, {"memory", *Quantity::Parse("4Gi")}}));
  EXPECT_EQ(pod.status.pod_actual, pod.status.pod_allocated);
  ASSERT_EQ(pod.spec.init_containers.size(), 1u);
  EXPECT_TRUE(pod.spec.init_containers[0].restart_policy_always);

  // A 1.20 pod has none of them.
  auto old = DecodePod(kKubectlPod);
  ASSERT_TRUE(old.ok());
  EXPECT_TRUE((*old)->spec.pod_requests.empty());
  EXPECT_TRUE((*old)->spec.resource_claims.empty());
  EXPECT_TRUE((*old)->status.resource_claim_statuses.empty());
  EXPECT_TRUE((*old)->status.container_resources.empty());
  EXPECT_FALSE((*old)->status.pod_allocated.has_value());
  EXPECT_FALSE((*old)->status.resize_infeasible);
}

// spec.resourceClaims names a claim or a template; status.resourceClaimStatuses gives the
// claim made from a template, and a null resourceClaimName means no claim is needed.
TEST(JsonDecodeTest, PodResourceClaimsAndStatuses) {
  auto pod = DecodePod(R"({"metadata":{"name":"p","namespace":"ns"},
    "spec":{"resourceClaims":[{"name":"a","resourceClaimName":"claim-a"},
                              {"name":"b","resourceClaimTemplateName":"tmpl-b","future":1},
                              {"name":"c","resourceClaimName":null}]},
    "status":{"resourceClaimStatuses":[{"name":"b","resourceClaimName":"p-b-x1"},
                                       {"name":"c","resourceClaimName":null},
                                       {"name":"d"}]}})");
  ASSERT_TRUE(pod.ok()) << pod.status().ToString();
  EXPECT_EQ((*pod)->spec.resource_claims,
            (std::vector<PodResourceClaim>{{.name = "a", .resource_claim_name = "claim-a"},
                                           {.name = "b", .resource_claim_template_name = "tmpl-b"},
                                           {.name = "c"}}));
  EXPECT_EQ((*pod)->status.resource_claim_statuses,
            (std::vector<PodResourceClaimStatus>{{"b", "p-b-x1"}, {"c", std::nullopt}, {"d", std::nullopt}}));
  auto bad = DecodePod(R"({"metadata":{"name":"p","namespace":"ns"},"status":{"resourceClaimStatuses":[{"name":1}]}})");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find(R"(pod "ns/p": status.resourceClaimStatuses[0].name: expected string)"),
            std::string::npos)
      << bad.status().message();
}

TEST(JsonDecodeTest, RetainsOnlyRegisteredAnnotations) {
  constexpr std::string_view kJson = R"({"metadata":{"name":"p","namespace":"d",
    "annotations":{"a.example.com/keep":"1","b.example.com/drop":"2"}}})";
  RetainAnnotationKeys({"a.example.com/keep"});
  auto kept = DecodePod(kJson);
  RetainAnnotationKeys({"*"});
  auto all = DecodePod(kJson);
  RetainAnnotationKeys({});
  auto none = DecodePod(kJson);
  ASSERT_TRUE(kept.ok() && all.ok() && none.ok());
  EXPECT_EQ((*kept)->metadata.annotations, (StringMap{{"a.example.com/keep", "1"}}));
  EXPECT_EQ((*all)->metadata.annotations, (StringMap{{"a.example.com/keep", "1"}, {"b.example.com/drop", "2"}}));
  EXPECT_TRUE((*none)->metadata.annotations.empty());
}

// A key given twice takes its last value, as Go's decoder does: an unknown operator
// followed by "Exists" is "Exists" (found by the pod fuzz target's round trip).
TEST(JsonDecodeTest, TolerationOperatorGivenTwiceTakesTheLast) {
  auto pod = DecodePod(R"({"metadata":{"name":"p","namespace":"d"},"spec":{"tolerations":[
    {"key":"a","operator":"Newer","operator":"Exists"},
    {"key":"b","operator":"Exists","operator":"Newer"},
    {"key":"c","operator":"Newer","operator":"Equal","value":"v"}]}})");
  ASSERT_TRUE(pod.ok());
  const auto& t = (*pod)->spec.tolerations;
  ASSERT_EQ(t.size(), 3u);
  EXPECT_TRUE(t[0].op_exists && !t[0].op_unknown);
  EXPECT_TRUE(!t[1].op_exists && t[1].op_unknown);
  EXPECT_TRUE(!t[2].op_exists && !t[2].op_unknown);
}

TEST(JsonDecodeTest, ReplicasShareTemplateParts) {
  auto make = [](std::string_view name, std::string_view cpu) {
    std::string json = R"({"metadata":{"name":")" + std::string(name) + R"(","namespace":"d"},"spec":{
      "containers":[{"name":"c","image":"i","resources":{"requests":{"cpu":")" + std::string(cpu) + R"("}}}],
      "affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
        {"matchExpressions":[{"key":"arch","operator":"In","values":["amd64"]}]}]}}},
      "tolerations":[{"key":"k","operator":"Exists"}],
      "preemptionPolicy":"PreemptLowerPriority"}})";
    auto pod = DecodePod(json);
    EXPECT_TRUE(pod.ok()) << pod.status().ToString();
    return *pod;
  };
  PodPtr a = make("a", "100m"), b = make("b", "100m"), c = make("c", "200m");
  EXPECT_TRUE(a->spec.containers.SameInstance(b->spec.containers));
  EXPECT_FALSE(a->spec.containers.SameInstance(c->spec.containers));
  EXPECT_EQ(&*a->spec.affinity, &*c->spec.affinity);
  EXPECT_EQ(&a->spec.tolerations[0], &c->spec.tolerations[0]);
  EXPECT_EQ(a->spec.preemption_policy, "");  // the default is kept as ""

  // Changing a copy leaves the shared instance (and the other pods) alone.
  Pod copy = *a;
  copy.spec.containers[0].image = "j";
  copy.spec.affinity.mutable_value().pod_affinity.emplace();
  EXPECT_EQ(a->spec.containers[0].image, "i");
  EXPECT_EQ(b->spec.containers[0].image, "i");
  EXPECT_FALSE(a->spec.affinity->pod_affinity.has_value());
  EXPECT_FALSE(copy == *a);
}

TEST(JsonDecodeTest, DefaultsAndNulls) {
  auto pod = DecodePod(R"({"metadata":{"name":"p","namespace":"d","deletionTimestamp":"2024-01-01T00:00:00Z",
    "labels":null},"spec":{"containers":[{"name":"c","image":"i","ports":[{"containerPort":1,"hostPort":1}]}],
    "affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{}}},"priority":null}})");
  ASSERT_TRUE(pod.ok()) << pod.status().ToString();
  EXPECT_EQ((*pod)->spec.scheduler_name, "default-scheduler");
  EXPECT_FALSE((*pod)->spec.priority.has_value());
  EXPECT_TRUE((*pod)->IsBeingDeleted());
  EXPECT_EQ((*pod)->spec.containers[0].ports[0].protocol, "TCP");
  // A present required node selector with no terms matches nothing; keep it engaged.
  const auto& required = (*pod)->spec.affinity->node_affinity->required;
  ASSERT_TRUE(required.has_value());
  EXPECT_TRUE(required->empty());
}

TEST(JsonDecodeTest, ErrorsNameObjectAndField) {
  struct Case {
    std::string_view name;
    std::string_view json;
    std::string_view error;
  };
  const Case cases[] = {
      {"bad quantity",
       R"({"metadata":{"name":"p","namespace":"ns"},"spec":{"containers":[{"name":"c",
          "resources":{"requests":{"cpu":"1.2.3"}}}]}})",
       "pod \"ns/p\": spec.containers[0].resources.requests.cpu: quantities must match the regular "
       "expression"},
      {"wrong type string",
       R"({"metadata":{"name":"p","namespace":"ns"},"spec":{"nodeName":5}})",
       "pod \"ns/p\": spec.nodeName: expected string, got number"},
      {"wrong type array",
       R"({"metadata":{"name":"p","namespace":"ns"},"spec":{"tolerations":{}}})",
       "pod \"ns/p\": spec.tolerations: expected array, got object"},
      {"float priority",
       R"({"metadata":{"name":"p","namespace":"ns"},"spec":{"priority":1.5}})",
       "pod \"ns/p\": spec.priority: expected integer, got 1.5"},
      {"int32 overflow",
       R"({"metadata":{"name":"p","namespace":"ns"},"spec":{"priority":3000000000}})",
       "spec.priority: value 3000000000 overflows int32"},
      {"label value type",
       R"({"metadata":{"name":"p","labels":{"app":true}}})", "pod \"p\": metadata.labels.app: expected string, got boolean"},
      {"not an object", R"([1,2])", "pod: expected object, got array"},
      {"malformed", R"({"metadata":{"name":"p",)", "pod \"p\": metadata: invalid JSON"},
      {"empty", "", "pod: invalid JSON"},
      {"trailing content", R"({"metadata":{"name":"p"}}, {"x":1})", "unexpected content after the JSON value"},
  };
  for (const auto& c : cases) {
    auto pod = DecodePod(c.json);
    ASSERT_FALSE(pod.ok()) << c.name;
    EXPECT_EQ(pod.status().code(), StatusCode::kInvalidArgument) << c.name;
    EXPECT_NE(pod.status().message().find(c.error), std::string::npos)
        << c.name << ": " << pod.status().message();
  }
}

TEST(JsonDecodeTest, DecodesNode) {
  auto node = DecodeNode(R"({"kind":"Node","apiVersion":"v1","metadata":{"name":"n1",
    "labels":{"kubernetes.io/hostname":"n1","topology.kubernetes.io/zone":"z1"},"managedFields":[{"x":1}]},
    "spec":{"unschedulable":true,"podCIDR":"10.0.0.0/24","taints":[
      {"key":"node-role.kubernetes.io/control-plane","effect":"NoSchedule"},
      {"key":"k","value":"v","effect":"PreferNoSchedule","timeAdded":null}]},
    "status":{"capacity":{"cpu":"4","memory":"16393216Ki","pods":"110"},
      "allocatable":{"cpu":"3800m","memory":"15Gi","pods":"110","ephemeral-storage":"100G"},
      "conditions":[{"type":"Ready","status":"True","reason":"KubeletReady","message":"ok"}],
      "images":[{"names":["registry/app@sha256:abc","registry/app:1"],"sizeBytes":123456789}],
      "nodeInfo":{"kubeletVersion":"v1.30.0"}}})");
  ASSERT_TRUE(node.ok()) << node.status().ToString();
  const Node& n = **node;
  EXPECT_EQ(n.Name(), "n1");
  EXPECT_TRUE(n.spec.unschedulable);
  ASSERT_EQ(n.spec.taints.size(), 2u);
  EXPECT_EQ(n.spec.taints[0],
            (Taint{"node-role.kubernetes.io/control-plane", "", TaintEffect::kNoSchedule}));
  EXPECT_EQ(n.spec.taints[1], (Taint{"k", "v", TaintEffect::kPreferNoSchedule}));
  EXPECT_EQ(FindResource(n.status.capacity, "memory")->Value(), 16393216LL * 1024);
  EXPECT_EQ(FindResource(n.status.allocatable, "cpu")->MilliValue(), 3800);
  EXPECT_EQ(FindResource(n.status.allocatable, "pods")->Value(), 110);
  EXPECT_EQ(FindResource(n.status.allocatable, "ephemeral-storage")->Value(), 100000000000);
  EXPECT_EQ(n.status.conditions[0], (NodeCondition{"Ready", "True", "KubeletReady"}));
  ASSERT_EQ(n.status.images.size(), 1u);
  EXPECT_EQ(n.status.images[0].size_bytes, 123456789);
  EXPECT_EQ(n.status.images[0].names.size(), 2u);

  auto bad = DecodeNode(R"({"metadata":{"name":"n1"},"status":{"allocatable":{"cpu":"x"}}})");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("node \"n1\": status.allocatable.cpu: quantities must match"),
            std::string::npos)
      << bad.status().message();
}

TEST(JsonDecodeTest, PodListWithContinueToken) {
  JsonParser parser;
  std::string body = R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"987",
    "continue":"eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6OTg3fQ","remainingItemCount":1200},
    "items":[{"metadata":{"name":"a","namespace":"x"},"spec":{"containers":[]}},
             {"metadata":{"name":"b","namespace":"x"},"spec":{"nodeName":"n1"}}]})";
  auto list = DecodePodList(parser, JsonText::Padded(body));
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  EXPECT_EQ(list->resource_version, "987");
  EXPECT_EQ(list->continue_token, "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6OTg3fQ");
  EXPECT_EQ(list->remaining_item_count, 1200);
  ASSERT_EQ(list->items.size(), 2u);
  EXPECT_EQ(list->items[0]->Key(), "x/a");
  EXPECT_TRUE(list->items[1]->IsAssigned());

  auto last = DecodePodList(parser, R"({"metadata":{"resourceVersion":"988"},"items":[]})");
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->continue_token, "");
  EXPECT_FALSE(last->remaining_item_count.has_value());
  EXPECT_TRUE(last->items.empty());

  // One item that cannot be decoded is skipped with its error; the others still arrive.
  auto bad = DecodePodList(parser, R"({"metadata":{},"items":[{"metadata":{"name":"a","namespace":"x"}},
    {"metadata":{"name":"b","namespace":"x"},"spec":{"containers":[{"resources":{"requests":{"memory":"1Gk"}}}]}},
    {"metadata":{"name":"c","namespace":"x"}}]})");
  ASSERT_TRUE(bad.ok()) << bad.status().ToString();
  ASSERT_EQ(bad->items.size(), 2u);
  EXPECT_EQ(bad->items[1]->Key(), "x/c");
  ASSERT_EQ(bad->skipped.size(), 1u);
  EXPECT_EQ(bad->skipped[0].partial->Key(), "x/b");
  EXPECT_EQ(bad->skipped[0].error,
            "items[1]: pod \"x/b\": spec.containers[0].resources.requests.memory: unable to parse "
            "quantity's suffix (got \"1Gk\")");

  // Broken JSON inside an item still fails the list: the rest cannot be read.
  auto broken = DecodePodList(parser, R"({"metadata":{},"items":[{"metadata":{"name":"a","namespace":"x"}},
    {"metadata":{"name":"b","namespace":"x"},"spec":{"priority" 12}}]})");
  EXPECT_FALSE(broken.ok());
}

// Enum values from a newer apiserver decode to kUnknown instead of failing the object;
// they then behave as upstream treats unknown values (see the selector tests).
TEST(JsonDecodeTest, UnknownEnumValuesDecode) {
  auto pod = DecodePod(R"({"metadata":{"name":"p","namespace":"ns"},"spec":{
      "affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
        {"matchExpressions":[{"key":"k","operator":"Like"}]}]}}},
      "tolerations":[{"effect":"Sometimes"},{"key":"k","operator":"Resembles","value":"v"}]}})");
  ASSERT_TRUE(pod.ok()) << pod.status().ToString();
  const auto& term = (*(*pod)->spec.affinity->node_affinity->required)[0];
  EXPECT_EQ(term.match_expressions[0].op, SelectorOperator::kUnknown);
  ASSERT_EQ((*pod)->spec.tolerations.size(), 2u);
  EXPECT_EQ((*pod)->spec.tolerations[0].effect, TaintEffect::kUnknown);
  EXPECT_TRUE((*pod)->spec.tolerations[1].op_unknown);

  auto node = DecodeNode(R"({"metadata":{"name":"n"},"spec":{"taints":[{"key":"k","effect":"NoScheduleSoon"}]}})");
  ASSERT_TRUE(node.ok()) << node.status().ToString();
  EXPECT_EQ((*node)->spec.taints[0].effect, TaintEffect::kUnknown);
}

TEST(JsonDecodeTest, NodeListAndApiStatus) {
  auto list = DecodeNodeList(R"({"kind":"NodeList","metadata":{"resourceVersion":"5"},
    "items":[{"metadata":{"name":"n1"}},{"metadata":{"name":"n2"}}]})");
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  ASSERT_EQ(list->items.size(), 2u);
  EXPECT_EQ(list->items[1]->Name(), "n2");

  auto status = DecodeApiStatus(R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
    "message":"pods \"x\" not found","reason":"NotFound","details":{"name":"x","kind":"pods"},"code":404})");
  ASSERT_TRUE(status.ok()) << status.status().ToString();
  EXPECT_EQ(*status, (ApiStatus{"Failure", "pods \"x\" not found", "NotFound", 404}));
  EXPECT_FALSE(DecodeApiStatus("not json").ok());
}

TEST(JsonDecodeTest, ApiGroupVersions) {
  JsonParser parser;
  // GET /apis/policy on a 1.21-1.24 server.
  auto versions = DecodeApiGroupVersions(parser, R"({"kind":"APIGroup","apiVersion":"v1","name":"policy",
    "versions":[{"groupVersion":"policy/v1","version":"v1"},{"groupVersion":"policy/v1beta1","version":"v1beta1"}],
    "preferredVersion":{"groupVersion":"policy/v1","version":"v1"}})");
  ASSERT_TRUE(versions.ok()) << versions.status().ToString();
  EXPECT_EQ(*versions, (std::vector<std::string>{"policy/v1", "policy/v1beta1"}));
  versions = DecodeApiGroupVersions(parser, R"({"kind":"APIGroup","name":"policy"})");
  ASSERT_TRUE(versions.ok()) << versions.status().ToString();
  EXPECT_TRUE(versions->empty());
  versions = DecodeApiGroupVersions(parser, R"({"kind":"Status","code":404})");
  ASSERT_FALSE(versions.ok());
  EXPECT_EQ(versions.status().message(), R"(APIGroup: kind: "Status", expected "APIGroup")");
  EXPECT_FALSE(DecodeApiGroupVersions(parser, R"({"versions":[{"groupVersion":1}]})").ok());
}

TEST(JsonDecodeTest, PaddedBufferDecodesInPlace) {
  std::string body = R"({"metadata":{"name":"p","namespace":"d"}})";
  JsonText text = JsonText::Padded(body);
  EXPECT_GE(text.capacity, body.size() + kJsonPadding);
  EXPECT_EQ(text.text.data(), body.data());
  auto pod = DecodePod(text);
  ASSERT_TRUE(pod.ok());
  EXPECT_EQ((*pod)->Key(), "d/p");
  // A short std::string in its inline buffer lacks padding and is copied instead.
  std::string small = R"({"metadata":{}})";
  EXPECT_TRUE(DecodePod(small).ok());
}

}  // namespace
}  // namespace ksched::api
