#include <gtest/gtest.h>

#include "pkg/api/json.h"

namespace ksched::api {
namespace {

TEST(JsonEncodeTest, AppendJsonStringEscapes) {
  struct Case {
    std::string_view in, out;
  };
  const Case cases[] = {
      {"plain", R"("plain")"},
      {"", R"("")"},
      {"say \"hi\"", R"("say \"hi\"")"},
      {"back\\slash", R"("back\\slash")"},
      {"line\nbreak\ttab\r", R"("line\nbreak\ttab\r")"},
      {std::string_view("\x01\x1f\b\f", 4), R"("\u0001\u001f\b\f")"},
      {"utf-8 \xc3\xa9", "\"utf-8 \xc3\xa9\""},
  };
  for (const auto& c : cases) {
    std::string out = "x";
    AppendJsonString(out, c.in);
    EXPECT_EQ(out, "x" + std::string(c.out));
  }
}

TEST(JsonEncodeTest, Binding) {
  EXPECT_EQ(EncodeBinding("ns", "web-1", "uid-1", "node-a"),
            R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":"web-1","namespace":"ns",)"
            R"("uid":"uid-1"},"target":{"kind":"Node","name":"node-a"}})");
  EXPECT_EQ(EncodeBinding("ns", "p\"q", "", "n"),
            R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":"p\"q","namespace":"ns"},)"
            R"("target":{"kind":"Node","name":"n"}})");
}

TEST(JsonEncodeTest, PodEventWithRegardingAndRelated) {
  Pod victim, preemptor;
  victim.metadata = {.name = "low", .namespace_ = "ns", .uid = "u-low", .resource_version = "42"};
  preemptor.metadata = {.name = "high", .namespace_ = "ns", .uid = "u-high"};
  EXPECT_EQ(EncodePodEvent({.name = "low.1a",
                            .event_time = "2026-11-25T10:00:00.000001Z",
                            .reporting_controller = "ksched",
                            .reporting_instance = "ksched-host",
                            .action = "Preempting",
                            .reason = "Preempted",
                            .note = "Preempted by ns/high on node \"n1\"",
                            .regarding = PodReference::Of(victim),
                            .related = PodReference::Of(preemptor, /*with_resource_version=*/false)}),
            R"({"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"low.1a","namespace":"ns"},)"
            R"("eventTime":"2026-11-25T10:00:00.000001Z","reportingController":"ksched",)"
            R"("reportingInstance":"ksched-host","action":"Preempting","reason":"Preempted",)"
            R"("regarding":{"apiVersion":"v1","kind":"Pod","namespace":"ns","name":"low","uid":"u-low",)"
            R"("resourceVersion":"42"},"related":{"apiVersion":"v1","kind":"Pod","namespace":"ns","name":"high",)"
            R"("uid":"u-high"},"note":"Preempted by ns/high on node \"n1\"","type":"Normal"})");
  EXPECT_NE(EncodePodEvent({.name = "e", .reason = "FailedScheduling", .warning = true, .regarding = PodReference::Of(victim)})
                .find(R"("type":"Warning")"),
            std::string::npos);
}

TEST(JsonEncodeTest, DeleteOptionsWithUidPrecondition) {
  EXPECT_EQ(EncodeDeleteOptionsWithUid("u-1"),
            R"({"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"uid":"u-1"}})");
}

TEST(JsonEncodeTest, PodScheduledConditionPatch) {
  PodCondition c{.type = "PodScheduled",
                 .status = "False",
                 .reason = "Unschedulable",
                 .message = "0/3 nodes are available: 3 Insufficient cpu.",
                 .last_transition_time = "2024-05-01T10:00:00Z"};
  EXPECT_EQ(EncodePodScheduledConditionPatch(c),
            R"({"status":{"conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable",)"
            R"("message":"0/3 nodes are available: 3 Insufficient cpu.","lastProbeTime":null,)"
            R"("lastTransitionTime":"2024-05-01T10:00:00Z"}]}})");
  EXPECT_EQ(EncodePodScheduledConditionPatch(c, std::string("node-2"), 4),
            R"({"status":{"conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable",)"
            R"("message":"0/3 nodes are available: 3 Insufficient cpu.","observedGeneration":4,)"
            R"("lastProbeTime":null,"lastTransitionTime":"2024-05-01T10:00:00Z"}],)"
            R"("nominatedNodeName":"node-2"}})");
  // Clearing the nomination writes null; the patch still decodes as a pod status.
  std::string clear = EncodePodScheduledConditionPatch(c, std::string());
  EXPECT_NE(clear.find(R"("nominatedNodeName":null)"), std::string::npos);
  auto decoded = DecodePod(clear);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ((*decoded)->FindCondition("PodScheduled")->message, c.message);
}

TEST(JsonEncodeTest, QuantityText) {
  struct Case {
    int64_t milli;
    std::string_view text;
  };
  const Case cases[] = {{0, "0"}, {2000, "2"}, {1500, "1500m"}, {-250, "-250m"}, {1073741824000, "1073741824"}};
  for (const auto& c : cases) {
    std::string out;
    AppendQuantity(out, Quantity::FromMilli(c.milli));
    EXPECT_EQ(out, c.text);
    EXPECT_EQ(Quantity::Parse(out)->MilliValue(), c.milli);
  }
}

Pod FullPod() {
  Pod p;
  p.metadata.name = "web-0";
  p.metadata.namespace_ = "prod";
  p.metadata.uid = "u-1";
  p.metadata.resource_version = "42";
  p.metadata.generation = 3;
  p.metadata.creation_timestamp = "2024-05-01T10:00:00Z";
  p.metadata.deletion_timestamp = "2024-05-02T10:00:00Z";
  p.metadata.labels = {{"app", "web"}, {"tier", "front\"end"}};
  p.metadata.annotations = {{"note", "line1\nline2"}};  // retained by PodRoundTrips
  p.metadata.owner_references = {{"apps/v1", "StatefulSet", "web", "u-0", true},
                                 {"v1", "Node", "n", "u-9", false}};
  PodSpec& s = p.spec;
  s.scheduler_name = "custom";
  s.node_name = "n1";
  s.priority = -5;
  s.priority_class_name = "low";
  s.preemption_policy = "Never";
  Container c{.name = "app", .image = "img:1"};
  c.requests = {{"cpu", Quantity::FromMilli(250)}, {"memory", Quantity::FromValue(1LL << 30)}};
  c.ports = {{8080, 80, "TCP", ""}, {53, 53, "UDP", "1.2.3.4"}};
  s.containers = {c, Container{.name = "side", .image = "img:2"}};
  s.init_containers = {Container{.name = "init", .image = "i", .restart_policy_always = true}};
  s.overhead = {{"cpu", Quantity::FromMilli(10)}};
  s.node_selector = {{"disk", "ssd"}};
  Affinity a;
  NodeAffinity na;
  na.required = std::vector<NodeSelectorTerm>{
      {.match_expressions = {{"zone", SelectorOperator::kIn, {"a", "b"}}},
       .match_fields = {{"metadata.name", SelectorOperator::kNotIn, {"n9"}}}},
      {.match_expressions = {{"gen", SelectorOperator::kGt, {"3"}}}}};
  na.preferred = {{7, {.match_expressions = {{"ssd", SelectorOperator::kExists, {}}}}}};
  a.node_affinity = na;
  PodAffinity pa;
  pa.required = {{.label_selector = LabelSelector{.match_labels = {{"app", "db"}}},
                  .namespaces = {"x"},
                  .topology_key = "kubernetes.io/hostname",
                  .namespace_selector = LabelSelector{}}};
  a.pod_affinity = pa;
  PodAffinity anti;
  anti.preferred = {{50, {.label_selector = LabelSelector{.match_expressions = {
                                 {"app", SelectorOperator::kDoesNotExist, {}}}},
                          .topology_key = "zone"}}};
  a.pod_anti_affinity = anti;
  s.affinity = a;
  s.tolerations = {{"k", false, "v", TaintEffect::kNoSchedule, std::nullopt},
                   {"", true, "", TaintEffect::kNone, std::nullopt},
                   {"t", true, "", TaintEffect::kNoExecute, 30}};
  TopologySpreadConstraint tsc;
  tsc.max_skew = 2;
  tsc.topology_key = "zone";
  tsc.when_unsatisfiable = WhenUnsatisfiable::kScheduleAnyway;
  tsc.label_selector = LabelSelector{.match_labels = {{"app", "web"}}};
  tsc.min_domains = 2;
  tsc.node_affinity_policy = InclusionPolicy::kIgnore;
  tsc.node_taints_policy = InclusionPolicy::kHonor;
  tsc.match_label_keys = {"pod-template-hash"};
  s.topology_spread_constraints = {tsc, TopologySpreadConstraint{.topology_key = "host"}};
  s.scheduling_gates = {"gate-a", "gate-b"};
  s.volumes = {{"data", "claim-1"}, {"data-2", "claim-2"}};
  p.status.phase = "Pending";
  p.status.nominated_node_name = "n2";
  p.status.conditions = {{"PodScheduled", "False", "Unschedulable", "msg", "2024-05-01T10:00:00Z", ""}};
  // Pod-level resources, DRA claims and in-place resize (a fuzz input once lost the
  // pod's actual resources in the round trip).
  s.pod_requests = {{"cpu", Quantity::FromValue(2)}};
  s.resource_claims = {{.name = "gpu", .resource_claim_template_name = "one-gpu"},
                       {.name = "nic", .resource_claim_name = "shared-nic"},
                       {.name = "neither"}};
  p.status.resource_claim_statuses = {{.name = "gpu", .resource_claim_name = "web-0-gpu-x7k"},
                                      {.name = "unneeded"}};
  p.status.container_resources = {
      {.name = "app", .allocated = ResourceList{{"cpu", Quantity::FromValue(1)}}, .actual = ResourceList{}},
      {.name = "side", .actual = ResourceList{{"memory", Quantity::FromValue(1LL << 20)}}}};
  p.status.pod_allocated = ResourceList{};
  p.status.pod_actual = ResourceList{{"cpu", Quantity::FromMilli(1500)}};
  p.status.resize_infeasible = true;
  return p;
}

// Everything the decoder keeps round-trips (it drops fields the scheduler does not read;
// see types.h).
TEST(JsonEncodeTest, PodRoundTrips) {
  RetainAnnotationKeys({"note"});
  const Pod cases[] = {Pod{}, FullPod()};
  for (const Pod& pod : cases) {
    std::string json = EncodePod(pod);
    auto decoded = DecodePod(json);
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString() << "\n" << json;
    EXPECT_TRUE(**decoded == pod) << json << "\nre-encoded:\n" << EncodePod(**decoded);
  }
  RetainAnnotationKeys({});
}

// Every kind of volume the decoder keeps comes back from an encode: a claim (read-only
// too), a generic ephemeral volume, and inline sources (a fuzz input once lost an
// ephemeral volume, written back as an emptyDir the decoder drops).
TEST(JsonEncodeTest, PodVolumesRoundTrip) {
  Pod pod;
  pod.metadata.name = "p";
  Volume claim{.name = "data", .pvc_claim_name = "web-data", .pvc_read_only = true};
  Volume ephemeral{.name = "cfg", .ephemeral = true};
  Volume disks{.name = "disks"};
  disks.source = {.csi_driver = "ebs.csi.aws.com",
                  .gce_pd_name = "pd",
                  .aws_volume_id = "vol-1",
                  .azure_disk_uri = "uri",
                  .cinder_volume_id = "c1",
                  .iscsi_iqn = "iqn",
                  .iscsi_lun = 3,
                  .iscsi_target_portal = "portal",
                  .rbd_monitors = {"m1", "m2"},
                  .rbd_pool = "rbd",
                  .rbd_image = "img",
                  .read_only = true};
  Volume read_only_flag{.name = "flag"};
  read_only_flag.source.read_only = true;
  Volume rbd_default_pool{.name = "rbd"};
  rbd_default_pool.source.rbd_pool = "rbd";
  pod.spec.volumes = {claim, ephemeral, disks, read_only_flag, rbd_default_pool};
  std::string json = EncodePod(pod);
  auto decoded = DecodePod(json);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString() << "\n" << json;
  EXPECT_TRUE((*decoded)->spec.volumes == pod.spec.volumes) << json;
}

TEST(JsonEncodeTest, NodeRoundTrips) {
  Node n;
  n.metadata.name = "n1";
  n.metadata.labels = {{"kubernetes.io/hostname", "n1"}};
  n.spec.unschedulable = true;
  n.spec.taints = {{"a", "", TaintEffect::kNoSchedule}, {"b", "v", TaintEffect::kPreferNoSchedule}};
  n.status.capacity = {{"cpu", Quantity::FromValue(4)}, {"pods", Quantity::FromValue(110)}};
  n.status.allocatable = {{"cpu", Quantity::FromMilli(3800)}};
  n.status.conditions = {{"Ready", "True", "KubeletReady"}};
  n.status.images = {{{"img:1", "img@sha256:x"}, 1234}};
  for (const Node& node : {Node{}, n}) {
    std::string json = EncodeNode(node);
    auto decoded = DecodeNode(json);
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString() << "\n" << json;
    EXPECT_TRUE(**decoded == node) << json;
  }
}

}  // namespace
}  // namespace ksched::api
