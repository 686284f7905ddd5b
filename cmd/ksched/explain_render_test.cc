// The text of `ksched explain` for canned /debug/pods answers: every section a pending or
// scheduled pod can show, the list, and the errors for answers that are not the schema.
#include "cmd/ksched/explain_render.h"

#include <gtest/gtest.h>

#include <string>

#include "pkg/api/time_format.h"

namespace ksched::cmd {
namespace {

// The day of the canned timestamps: they print as times of day.
RenderOptions OnTheDay() { return {.now = api::ParseTime("2026-11-25T12:00:00Z")}; }

std::string Text(std::string_view json, const RenderOptions& options = OnTheDay()) {
  auto text = RenderPodText(json, options);
  return text.ok() ? *text : "error: " + text.status().message();
}

std::string ListText(std::string_view json, const RenderOptions& options = OnTheDay()) {
  auto text = RenderPodListText(json, options);
  return text.ok() ? *text : "error: " + text.status().message();
}

TEST(ExplainRenderTest, PendingPodWithTwoPluginsAndClosestNodes) {
  constexpr char kJson[] = R"({
    "namespace": "default", "name": "big", "uid": "5f0c", "profile": "ksched", "status": "Pending",
    "attempts": 3, "pendingSince": "2026-11-25T10:04:11Z", "firstAttempt": "2026-11-25T10:04:11Z",
    "lastAttempt": "2026-11-25T10:05:31Z",
    "queue": {"name": "unschedulablePods", "since": "2026-11-25T10:05:31Z"},
    "stuck": false, "stuckReason": "",
    "lastFailure": {
      "time": "2026-11-25T10:05:31Z",
      "message": "0/8 nodes are available: 1 node(s) had untolerated taint {gpu: true}, 7 Insufficient cpu.",
      "error": false, "nodes": 8, "rejectedBy": ["NodeResourcesFit", "TaintToleration"],
      "plugins": [
        {"plugin": "NodeResourcesFit", "stage": "Filter", "nodes": 8,
         "reasons": [{"reason": "Insufficient cpu", "nodes": 7,
                      "sampleNodes": ["node-1", "node-2", "node-3", "node-4", "node-5"]},
                     {"reason": "Insufficient memory", "nodes": 2, "sampleNodes": ["node-6", "gpu-1"]}]},
        {"plugin": "TaintToleration", "stage": "Filter", "nodes": 1,
         "reasons": [{"reason": "node(s) had untolerated taint {gpu: true}", "nodes": 1,
                      "sampleNodes": ["gpu-1"]}]}],
      "closestNodes": [{"node": "node-1", "plugin": "NodeResourcesFit", "reasons": ["Insufficient cpu"]},
                       {"node": "node-6", "plugin": "NodeResourcesFit",
                        "reasons": ["Insufficient cpu", "Insufficient memory"]}],
      "sameVerdictAttempts": 3},
    "wakeUpEvents": [
      {"event": "Node/Add|UpdateNodeAllocatable", "plugins": ["NodeResourcesFit"]},
      {"event": "Node/UpdateNodeTaint", "plugins": ["TaintToleration"]},
      {"event": "Pod/Delete", "plugins": ["NodeResourcesFit"]}],
    "retryAfter": "5m0s"})";
  EXPECT_EQ(Text(kJson),
            "Pod default/big (profile ksched): Pending since 10:04:11, 3 attempts; in unschedulablePods since "
            "10:05:31\n"
            "Last attempt 10:05:31 (the same verdict 3 times in a row): 0/8 nodes are available: 1 node(s) had "
            "untolerated taint {gpu: true}, 7 Insufficient cpu.\n"
            "\n"
            "PLUGIN            STAGE   REASON                                     NODES  SAMPLE NODES\n"
            "NodeResourcesFit  Filter  Insufficient cpu                           7      "
            "node-1, node-2, node-3, node-4, node-5 and 2 more\n"
            "NodeResourcesFit  Filter  Insufficient memory                        2      node-6, gpu-1\n"
            "TaintToleration   Filter  node(s) had untolerated taint {gpu: true}  1      gpu-1\n"
            "\n"
            "Closest nodes (rejected by one plugin only):\n"
            "  node-1  NodeResourcesFit: Insufficient cpu\n"
            "  node-6  NodeResourcesFit: Insufficient cpu; Insufficient memory\n"
            "\n"
            "Would be retried on: Node/Add|UpdateNodeAllocatable (NodeResourcesFit), Node/UpdateNodeTaint "
            "(TaintToleration), Pod/Delete (NodeResourcesFit);\n"
            "  and in any case after 5m0s in unschedulablePods\n");
}

TEST(ExplainRenderTest, PreFilterRejectionNamesNoNodes) {
  constexpr char kJson[] = R"({
    "namespace": "default", "name": "pvc", "profile": "ksched", "status": "Pending", "attempts": 1,
    "pendingSince": "2026-11-25T10:00:00Z",
    "queue": {"name": "unschedulablePods", "since": "2026-11-25T10:00:01Z"},
    "lastFailure": {
      "time": "2026-11-25T10:00:01Z",
      "message": "0/5 nodes are available: pod has unbound immediate PersistentVolumeClaims.",
      "nodes": 5, "rejectedBy": ["VolumeBinding"],
      "plugins": [{"plugin": "VolumeBinding", "stage": "PreFilter", "nodes": 5,
                   "reasons": [{"reason": "pod has unbound immediate PersistentVolumeClaims", "nodes": 5}]}],
      "closestNodes": [], "sameVerdictAttempts": 1},
    "wakeUpEvents": [{"event": "PersistentVolumeClaim/Add|Update", "plugins": ["VolumeBinding"]}],
    "retryAfter": "5m0s"})";
  EXPECT_EQ(Text(kJson),
            "Pod default/pvc (profile ksched): Pending since 10:00:00, 1 attempt; in unschedulablePods since "
            "10:00:01\n"
            "Last attempt 10:00:01: 0/5 nodes are available: pod has unbound immediate PersistentVolumeClaims.\n"
            "\n"
            "PLUGIN         STAGE      REASON                                            NODES  SAMPLE NODES\n"
            "VolumeBinding  PreFilter  pod has unbound immediate PersistentVolumeClaims  5      (every node)\n"
            "\n"
            "Would be retried on: PersistentVolumeClaim/Add|Update (VolumeBinding);\n"
            "  and in any case after 5m0s in unschedulablePods\n");
}

TEST(ExplainRenderTest, GatedPodNotAttemptedYet) {
  constexpr char kJson[] = R"({
    "namespace": "batch", "name": "job-1", "profile": "ksched", "status": "Pending", "attempts": 0,
    "pendingSince": "2026-11-25T09:00:00Z",
    "queue": {"name": "gated", "since": "2026-11-25T09:00:00Z", "gatedBy": "SchedulingGates"},
    "stuck": false, "stuckReason": "", "wakeUpEvents": [], "retryAfter": "5m0s"})";
  EXPECT_EQ(Text(kJson),
            "Pod batch/job-1 (profile ksched): Pending since 09:00:00, 0 attempts; gated by SchedulingGates since "
            "09:00:00\n"
            "Not attempted while the PreEnqueue plugin SchedulingGates holds it back (until the pod's "
            "schedulingGates are removed).\n"
            "Not attempted yet.\n");
}

TEST(ExplainRenderTest, StuckPodWithNoWakeUpEvent) {
  constexpr char kJson[] = R"({
    "namespace": "default", "name": "pinned", "profile": "ksched", "status": "Pending", "attempts": 7,
    "pendingSince": "2026-11-24T23:50:00Z", "lastAttempt": "2026-11-25T00:10:00Z",
    "queue": {"name": "unschedulablePods", "since": "2026-11-25T00:10:00Z"},
    "stuck": true, "stuckReason": "no registered cluster event can move it",
    "lastFailure": {
      "message": "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.",
      "error": false, "nodes": 3, "rejectedBy": ["Custom"],
      "plugins": [{"plugin": "Custom", "stage": "Filter", "nodes": 3,
                   "reasons": [{"reason": "node(s) didn't match Pod's node affinity/selector", "nodes": 3,
                                "sampleNodes": ["a", "b", "c"]}]}],
      "closestNodes": [{"node": "a", "plugin": "Custom"}], "sameVerdictAttempts": 7},
    "wakeUpEvents": [], "retryAfter": "5m0s"})";
  // The pod was pending since the day before: that time shows its date.
  EXPECT_EQ(Text(kJson),
            "Pod default/pinned (profile ksched): Pending since 2026-11-24 23:50:00, 7 attempts; in "
            "unschedulablePods since 00:10:00\n"
            "Stuck: no registered cluster event can move it\n"
            "Last attempt 00:10:00 (the same verdict 7 times in a row): 0/3 nodes are available: 3 node(s) "
            "didn't match Pod's node affinity/selector.\n"
            "\n"
            "PLUGIN  STAGE   REASON                                             NODES  SAMPLE NODES\n"
            "Custom  Filter  node(s) didn't match Pod's node affinity/selector  3      a, b, c\n"
            "\n"
            "Closest nodes (rejected by one plugin only):\n"
            "  a  Custom\n"
            "\n"
            "No registered cluster event can move it; only the unschedulable timeout will (after 5m0s in "
            "unschedulablePods).\n");
}

TEST(ExplainRenderTest, PreemptionAndNoClosestNode) {
  constexpr char kJson[] = R"({
    "namespace": "default", "name": "high", "profile": "ksched", "status": "Pending", "attempts": 1,
    "pendingSince": "2026-11-25T10:00:00Z",
    "queue": {"name": "backoffQ", "since": "2026-11-25T10:00:01Z", "backoffUntil": "2026-11-25T10:00:02Z"},
    "lastFailure": {
      "time": "2026-11-25T10:00:01Z", "message": "0/2 nodes are available: 2 Insufficient cpu.",
      "plugins": [{"plugin": "NodeResourcesFit", "stage": "Filter", "nodes": 2,
                   "reasons": [{"reason": "Insufficient cpu", "nodes": 2, "sampleNodes": ["n1", "n2"]}]},
                  {"plugin": "NodePorts", "stage": "Filter", "nodes": 2, "reasons": []}],
      "closestNodes": [],
      "preemption": {"nominatedNode": "n2", "victims": ["default/low-1", "default/low-2"]}},
    "wakeUpEvents": [{"event": "Pod/Delete", "plugins": ["NodeResourcesFit", "NodePorts"]}]})";
  EXPECT_EQ(Text(kJson),
            "Pod default/high (profile ksched): Pending since 10:00:00, 1 attempt; in backoffQ since 10:00:01 "
            "(backoff until 10:00:02)\n"
            "Last attempt 10:00:01: 0/2 nodes are available: 2 Insufficient cpu.\n"
            "\n"
            "PLUGIN            STAGE   REASON            NODES  SAMPLE NODES\n"
            "NodeResourcesFit  Filter  Insufficient cpu  2      n1, n2\n"
            "NodePorts         Filter  -                 2      -\n"
            "\n"
            "No node is rejected by one plugin only: each needs two or more fixes.\n"
            "\n"
            "Preemption: nominated node n2, victims: default/low-1, default/low-2\n"
            "\n"
            "Would be retried on: Pod/Delete (NodeResourcesFit, NodePorts)\n");

  constexpr char kNoVictims[] = R"({"name": "p", "status": "Pending",
    "lastFailure": {"message": "m", "preemption": {}}})";
  EXPECT_NE(Text(kNoVictims).find("\nPreemption: no nominated node, no victims\n"), std::string::npos)
      << Text(kNoVictims);
}

TEST(ExplainRenderTest, InternalErrorIsRetriedAfterBackoff) {
  constexpr char kJson[] = R"({
    "namespace": "default", "name": "p", "status": "Pending", "attempts": 2,
    "queue": {"name": "scheduling", "since": "2026-11-25T10:00:00Z"},
    "lastFailure": {"time": "2026-11-25T09:59:00Z", "message": "binding rejected: etcd timeout", "error": true},
    "wakeUpEvents": [], "retryAfter": "5m0s"})";
  EXPECT_EQ(Text(kJson),
            "Pod default/p: Pending, 2 attempts; in a scheduling or binding cycle since 10:00:00\n"
            "Last attempt 09:59:00 failed with an internal error (no plugin rejected the pod; it is retried after "
            "backoff): binding rejected: etcd timeout\n");
}

TEST(ExplainRenderTest, ScheduledPodScoreTable) {
  constexpr char kJson[] = R"({
    "namespace": "default", "name": "web", "profile": "ksched", "status": "Scheduled", "attempts": 2,
    "scheduled": {
      "node": "node-3", "time": "2026-11-25T10:06:02Z", "nodes": 4, "feasibleNodes": 3, "evaluatedNodes": 4,
      "topNodes": [
        {"node": "node-3", "score": 150,
         "plugins": [{"plugin": "NodeResourcesBalancedAllocation", "score": 97},
                     {"plugin": "ImageLocality", "score": 53}]},
        {"node": "node-1", "score": 120,
         "plugins": [{"plugin": "NodeResourcesBalancedAllocation", "score": 90},
                     {"plugin": "ImageLocality", "score": 30}]},
        {"node": "node-2", "score": 88,
         "plugins": [{"plugin": "NodeResourcesBalancedAllocation", "score": 80},
                     {"plugin": "TaintToleration", "score": 8}]}]}})";
  EXPECT_EQ(Text(kJson),
            "Pod default/web (profile ksched): Scheduled to node-3 at 10:06:02 after 2 attempts: 3 of 4 nodes "
            "feasible, 4 evaluated\n"
            "\n"
            "PLUGIN                           node-3  node-1  node-2\n"
            "NodeResourcesBalancedAllocation  97      90      80\n"
            "ImageLocality                    53      30      -\n"
            "TaintToleration                  -       -       8\n"
            "TOTAL                            150     120     88\n");

  constexpr char kOneNode[] = R"({
    "namespace": "default", "name": "web", "status": "Scheduled", "attempts": 1,
    "scheduled": {"node": "only", "time": "2026-11-25T10:06:02Z", "nodes": 1, "feasibleNodes": 1,
                  "evaluatedNodes": 1, "topNodes": [{"node": "only", "score": 0, "plugins": []}]}})";
  EXPECT_EQ(Text(kOneNode),
            "Pod default/web: Scheduled to only at 10:06:02 after 1 attempt: 1 of 1 node feasible, 1 evaluated\n"
            "\n"
            "Only one feasible node: no Score plugin ran.\n");
}

TEST(ExplainRenderTest, TimesShowTheirDateOffTheDay) {
  constexpr char kJson[] = R"({"namespace": "a", "name": "b", "status": "Pending",
    "pendingSince": "2026-11-25T10:04:11.250Z", "lastAttempt": "2026-11-25T12:04:11+02:00"})";
  EXPECT_EQ(Text(kJson, {}),
            "Pod a/b: Pending since 2026-11-25 10:04:11, 0 attempts\nLast attempt 2026-11-25 10:04:11.\n");
  EXPECT_EQ(Text(kJson), "Pod a/b: Pending since 10:04:11, 0 attempts\nLast attempt 10:04:11.\n");
  // Not RFC 3339: shown as sent.
  EXPECT_EQ(Text(R"({"name": "b", "status": "Pending", "pendingSince": "yesterday"})"),
            "Pod /b: Pending since yesterday, 0 attempts\nNot attempted yet.\n");
}

TEST(ExplainRenderTest, ListKeepsTheServersOrder) {
  const std::string long_reason = "0/100 nodes are available: " + std::string(100, 'x');
  const std::string json = R"({"pods": [
      {"namespace": "default", "name": "stuck-one", "profile": "ksched", "queue": "unschedulablePods",
       "attempts": 9, "pendingSince": "2026-11-24T08:00:00Z", "lastAttempt": "2026-11-25T10:00:00Z",
       "reason": ")" + long_reason + R"(", "stuck": true, "stuckReason": "same verdict for 10m"},
      {"namespace": "default", "name": "a-new-one", "profile": "other", "queue": "activeQ", "attempts": 0,
       "pendingSince": "2026-11-25T11:59:00Z", "reason": "", "stuck": false, "stuckReason": ""},
      {"namespace": "kube-system", "name": "gated", "profile": "ksched", "queue": "gated", "attempts": 0,
       "stuck": false}],
    "stuckPods": 1})";
  const std::string cut = long_reason.substr(0, 79) + "…";
  EXPECT_EQ(ListText(json),
            "NAMESPACE/NAME     PROFILE  QUEUE              ATTEMPTS  PENDING SINCE        STUCK  REASON\n"
            "default/stuck-one  ksched   unschedulablePods  9         2026-11-24 08:00:00  yes    " + cut + "\n"
            "default/a-new-one  other    activeQ            0         11:59:00             no     -\n"
            "kube-system/gated  ksched   gated              0         -                    no     -\n"
            "3 pending, 1 stuck\n");
  EXPECT_EQ(ListText(R"({"pods": [], "stuckPods": 0})"), "0 pending, 0 stuck\n");
  // Without the server's count, the stuck rows are counted.
  const std::string counted = ListText(R"({"pods": [{"namespace": "a", "name": "b", "stuck": true}]})");
  EXPECT_TRUE(counted.ends_with("\n1 pending, 1 stuck\n")) << counted;
}

TEST(ExplainRenderTest, MalformedAnswersNameTheProblem) {
  struct Case {
    const char* json;
    bool list;
    std::string want;
  } cases[] = {
      {R"({"name": "p", "status": "Pending")", false, "error: invalid JSON: "},
      {"", false, "error: invalid JSON: "},
      {"[]", false, "error: want a JSON object, got array"},
      {R"({"status": "Pending"})", false, "error: missing \"name\": not a /debug/pods/{namespace}/{name} answer"},
      {R"({"name": "p", "attempts": "3"})", false, "error: attempts: want a number, got string"},
      {R"({"name": "p", "queue": "activeQ"})", false, "error: queue: want an object, got string"},
      {R"({"name": "p", "lastFailure": {"plugins": [{"plugin": "X", "reasons": [{"nodes": true}]}]}})", false,
       "error: lastFailure.plugins[0].reasons[0].nodes: want a number, got boolean"},
      {R"({"name": "p", "lastFailure": {"plugins": [{"reasons": [{"sampleNodes": ["a", 1]}]}]}})", false,
       "error: lastFailure.plugins[0].reasons[0].sampleNodes[1]: want a string, got number"},
      {R"({"name": "p", "status": "Scheduled", "scheduled": {"topNodes": {}}})", false,
       "error: scheduled.topNodes: want an array, got object"},
      {R"({"items": []})", true, "error: missing \"pods\": not a /debug/pods answer"},
      {R"({"pods": [{"name": "a"}, 3]})", true, "error: pods[1]: want an object, got number"},
      {R"({"pods": [{"name": "a", "stuck": "no"}]})", true, "error: pods[0].stuck: want a boolean, got string"},
  };
  for (const auto& c : cases) {
    std::string got = c.list ? ListText(c.json) : Text(c.json);
    EXPECT_EQ(got.rfind(c.want, 0), 0u) << c.json << "\n" << got;
  }
}

TEST(ExplainRenderTest, NullAndUnknownFieldsAreTolerated) {
  constexpr char kJson[] = R"({"namespace": "a", "name": "b", "profile": null, "status": "Pending",
    "attempts": 1, "queue": null, "lastFailure": {"message": "m", "plugins": null, "newField": [1, {}]},
    "somethingNew": {"x": 1}})";
  EXPECT_EQ(Text(kJson), "Pod a/b: Pending, 1 attempt\nLast attempt: m\n");
}

}  // namespace
}  // namespace ksched::cmd
