// The volume plugins end to end on a real kube-apiserver with a real PV controller
// (kube-controller-manager's persistentvolume-binder, from the same source package):
// VolumeBinding's static and dynamic binding, its immediate-claim check, two pods racing
// for one volume, NodeVolumeLimits' attach limit and VolumeZone's zone check. There is
// no provisioner: the dynamic case creates the volume itself once the scheduler has
// written the claim's selected node, as an external provisioner would.
#include <gtest/gtest.h>

#include "pkg/api/json.h"
#include "pkg/api/storage.h"
#include "tests/harness/scheduler_harness.h"
#include "tests/fakes/builders.h"
#include "tests/fakes/event_log.h"
#include "tests/fakes/objects.h"

namespace ksched::scheduler {
namespace {

using namespace std::chrono_literals;
using ksched::testing::AdminClient;
using ksched::testing::ControlPlane;
using ksched::testing::CreateNamespace;
using ksched::testing::CreatePod;
using ksched::testing::Eventually;
using ksched::testing::Post;
using Harness = ksched::testing::SchedulerHarness;

class VolumeIntegrationTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    Status s = ControlPlane::Get().StartControllerManager();
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
};

// Nodes "<group>-<i>" labelled test-group=<group> and with their hostname label, plus
// `labels`.
void CreateNodes(client::ApiClient& c, const std::string& group, int n, const api::StringMap& labels = {}) {
  for (int i = 0; i < n; ++i) {
    std::string name = group + "-" + std::to_string(i);
    api::Node node = ksched::testing::TestNode(name, *api::Quantity::Parse("4"), *api::Quantity::Parse("16Gi"));
    node.metadata.labels.Set("test-group", group);
    node.metadata.labels.Set("kubernetes.io/hostname", name);
    for (const auto& [k, v] : labels) node.metadata.labels.Set(k, v);
    Post(c, "/api/v1/nodes", api::EncodeNode(node));
  }
}

void CreateStorageClass(client::ApiClient& c, const std::string& name, const std::string& provisioner,
                        bool wait_for_first_consumer) {
  Post(c, "/apis/storage.k8s.io/v1/storageclasses",
       R"({"apiVersion":"storage.k8s.io/v1","kind":"StorageClass","metadata":{"name":")" + name +
           R"("},"provisioner":")" + provisioner + R"(","volumeBindingMode":")" +
           (wait_for_first_consumer ? "WaitForFirstConsumer" : "Immediate") + R"("})");
}

// A claim of `size` in class `klass`; `volume` pre-binds it to that PV.
void CreateClaim(client::ApiClient& c, const std::string& ns, const std::string& name, const std::string& klass,
                 const std::string& size = "1Gi", const std::string& volume = "") {
  std::string spec = R"({"accessModes":["ReadWriteOnce"],"storageClassName":")" + klass +
                     R"(","resources":{"requests":{"storage":")" + size + R"("}})";
  if (!volume.empty()) spec += R"(,"volumeName":")" + volume + "\"";
  spec += "}";
  Post(c, "/api/v1/namespaces/" + ns + "/persistentvolumeclaims",
       R"({"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":")" + name + R"("},"spec":)" + spec +
           "}");
}

struct VolumeSpec {
  std::string name, klass, size = "5Gi";
  std::string node;         // required node affinity on kubernetes.io/hostname; "" for none
  std::string zone;         // topology.kubernetes.io/zone label; "" for none
  std::string csi_driver;   // a CSI volume of this driver; else a local volume (or hostPath)
  std::string claim_ns, claim_name, claim_uid;  // a claimRef, when set
};

void CreateVolume(client::ApiClient& c, const VolumeSpec& v) {
  std::string labels = v.zone.empty() ? "{}" : R"({"topology.kubernetes.io/zone":")" + v.zone + R"("})";
  std::string spec = R"({"capacity":{"storage":")" + v.size + R"("},"accessModes":["ReadWriteOnce"],)" +
                     R"("persistentVolumeReclaimPolicy":"Retain","storageClassName":")" + v.klass + "\"";
  if (!v.csi_driver.empty()) {
    spec += R"(,"csi":{"driver":")" + v.csi_driver + R"(","volumeHandle":")" + v.name + R"("})";
  } else if (!v.node.empty()) {
    spec += R"(,"local":{"path":"/mnt/)" + v.name + R"("})";
  } else {
    spec += R"(,"hostPath":{"path":"/tmp/)" + v.name + R"("})";
  }
  if (!v.node.empty()) {
    spec += R"(,"nodeAffinity":{"required":{"nodeSelectorTerms":[{"matchExpressions":[)"
            R"({"key":"kubernetes.io/hostname","operator":"In","values":[")" +
            v.node + R"("]}]}]}})";
  }
  if (!v.claim_name.empty()) {
    spec += R"(,"claimRef":{"apiVersion":"v1","kind":"PersistentVolumeClaim","namespace":")" + v.claim_ns +
            R"(","name":")" + v.claim_name + "\"";
    if (!v.claim_uid.empty()) spec += R"(,"uid":")" + v.claim_uid + "\"";
    spec += "}";
  }
  spec += "}";
  Post(c, "/api/v1/persistentvolumes",
       R"({"apiVersion":"v1","kind":"PersistentVolume","metadata":{"name":")" + v.name + R"(","labels":)" + labels +
           R"(},"spec":)" + spec + "}");
}

api::PersistentVolumeClaimPtr GetClaim(client::ApiClient& c, const std::string& ns, const std::string& name) {
  auto r = c.Do({.path = "/api/v1/namespaces/" + ns + "/persistentvolumeclaims/" + name});
  if (!r.ok()) return nullptr;
  api::JsonParser parser;
  auto claim = api::DecodePersistentVolumeClaim(parser, r->body);
  return claim.ok() ? *claim : nullptr;
}

api::PersistentVolumePtr GetVolume(client::ApiClient& c, const std::string& name) {
  auto r = c.Do({.path = "/api/v1/persistentvolumes/" + name});
  if (!r.ok()) return nullptr;
  api::JsonParser parser;
  auto pv = api::DecodePersistentVolume(parser, r->body);
  return pv.ok() ? *pv : nullptr;
}

// Waits until the claim is Bound (by the PV controller) and returns its volume's name.
std::string WaitClaimBound(client::ApiClient& c, const std::string& ns, const std::string& name,
                           std::chrono::milliseconds timeout = 30s) {
  std::string volume;
  EXPECT_TRUE(Eventually(
      [&] {
        auto claim = GetClaim(c, ns, name);
        if (claim && claim->phase == api::kClaimBound) volume = claim->volume_name;
        return !volume.empty();
      },
      timeout))
      << ns << "/" << name << " not Bound";
  return volume;
}

api::Pod PodWithClaims(const std::string& ns, const std::string& name, const std::string& group,
                       const std::vector<std::string>& claims) {
  auto b = ksched::testing::PodBuilder(name).Namespace(ns).SchedulerName("ksched").NodeSelector("test-group", group);
  b.Req({{"cpu", "100m"}});
  for (const auto& claim : claims) b.PVC(claim);
  return b.Build();
}

// The PodScheduled=False message of `key`, once it contains `want` (else "" after 30 s).
std::string WaitUnschedulable(Harness& h, const std::string& key, const std::string& want) {
  std::string message;
  EXPECT_TRUE(Eventually(
      [&] {
        auto p = h.pods().Get(key);
        const api::PodCondition* c = p ? p->FindCondition("PodScheduled") : nullptr;
        if (c && c->status == "False") message = c->message;
        return message.find(want) != std::string::npos;
      },
      30s))
      << key << ": no PodScheduled=False with \"" << want << "\"; last message: " << message;
  return message;
}

void DeletePodNow(client::ApiClient& c, const std::string& ns, const std::string& name) {
  auto r = c.Do({.verb = client::Verb::kDelete, .path = "/api/v1/namespaces/" + ns + "/pods/" + name,
                 .body = R"({"gracePeriodSeconds":0})"});
  EXPECT_TRUE(r.ok()) << r.status().ToString();
}

// A local volume pinned to one node: the pod goes to that node, and the PV controller
// then binds volume and claim (the scheduler wrote the volume's claimRef in PreBind).
TEST_F(VolumeIntegrationTest, LocalVolumeWithNodeAffinityPinsThePod) {
  auto c = AdminClient();
  CreateNamespace(*c, "vol-local");
  CreateNodes(*c, "vol-local", 3);
  CreateStorageClass(*c, "vol-local", "kubernetes.io/no-provisioner", /*wait_for_first_consumer=*/true);
  CreateVolume(*c, {.name = "vol-local-pv", .klass = "vol-local", .node = "vol-local-2"});
  CreateClaim(*c, "vol-local", "data", "vol-local");
  Harness h({"ksched"});
  CreatePod(*c, PodWithClaims("vol-local", "db", "vol-local", {"data"}));
  EXPECT_EQ(h.WaitBound("vol-local/db"), "vol-local-2");
  EXPECT_EQ(WaitClaimBound(*c, "vol-local", "data"), "vol-local-pv");
  EXPECT_TRUE(Eventually([&] {
    auto pv = GetVolume(*c, "vol-local-pv");
    return pv && pv->phase == api::kVolumeBound;
  }, 30s));
}

// WaitForFirstConsumer with no volume: the scheduler writes the chosen node on the claim
// and waits in PreBind; a stand-in provisioner (this test) creates the volume on that
// node, the PV controller binds it, and only then is the pod bound.
TEST_F(VolumeIntegrationTest, DelayedProvisioningWaitsForTheProvisioner) {
  auto c = AdminClient();
  CreateNamespace(*c, "vol-dyn");
  CreateNodes(*c, "vol-dyn", 2);
  CreateStorageClass(*c, "vol-dyn", "standin.ksched.example.com", /*wait_for_first_consumer=*/true);
  CreateClaim(*c, "vol-dyn", "scratch", "vol-dyn");
  Harness h({"ksched"});
  CreatePod(*c, PodWithClaims("vol-dyn", "job", "vol-dyn", {"scratch"}));

  std::string selected;
  api::PersistentVolumeClaimPtr claim;
  ASSERT_TRUE(Eventually([&] {
    claim = GetClaim(*c, "vol-dyn", "scratch");
    const std::string* node = claim ? claim->annotations.Get(api::kAnnSelectedNode) : nullptr;
    if (node) selected = *node;
    return !selected.empty();
  }, 30s)) << "the claim never got volume.kubernetes.io/selected-node";
  EXPECT_TRUE(selected == "vol-dyn-0" || selected == "vol-dyn-1") << selected;
  // Not bound while the volume does not exist.
  std::this_thread::sleep_for(1s);
  auto pod = h.pods().Get("vol-dyn/job");
  ASSERT_NE(pod, nullptr);
  EXPECT_FALSE(pod->IsAssigned());

  CreateVolume(*c, {.name = "vol-dyn-pv", .klass = "vol-dyn", .node = selected, .claim_ns = "vol-dyn",
                    .claim_name = "scratch", .claim_uid = claim->metadata.uid});
  EXPECT_EQ(h.WaitBound("vol-dyn/job"), selected);
  EXPECT_EQ(WaitClaimBound(*c, "vol-dyn", "scratch"), "vol-dyn-pv");
}

// An unbound claim of an Immediate class: upstream's condition text; once a volume
// appears and the PV controller binds the claim, the pod is scheduled.
TEST_F(VolumeIntegrationTest, UnboundImmediateClaimWaitsForThePVController) {
  auto c = AdminClient();
  CreateNamespace(*c, "vol-imm");
  CreateNodes(*c, "vol-imm", 2);
  CreateStorageClass(*c, "vol-imm", "kubernetes.io/no-provisioner", /*wait_for_first_consumer=*/false);
  CreateClaim(*c, "vol-imm", "logs", "vol-imm");
  Harness h({"ksched"});
  CreatePod(*c, PodWithClaims("vol-imm", "app", "vol-imm", {"logs"}));
  std::string message = WaitUnschedulable(h, "vol-imm/app", "pod has unbound immediate PersistentVolumeClaims");
  EXPECT_EQ(message.rfind("0/", 0), 0u) << message;

  CreateVolume(*c, {.name = "vol-imm-pv", .klass = "vol-imm"});
  EXPECT_EQ(WaitClaimBound(*c, "vol-imm", "logs"), "vol-imm-pv");
  EXPECT_FALSE(h.WaitBound("vol-imm/app").empty());
}

// Two pods, each with its own claim, and one volume that fits both: one gets it, the
// other stays pending with upstream's reason until a second volume appears.
TEST_F(VolumeIntegrationTest, TwoPodsRacingForOneVolume) {
  auto c = AdminClient();
  CreateNamespace(*c, "vol-race");
  CreateNodes(*c, "vol-race", 2);
  CreateStorageClass(*c, "vol-race", "kubernetes.io/no-provisioner", /*wait_for_first_consumer=*/true);
  CreateVolume(*c, {.name = "vol-race-pv-0", .klass = "vol-race", .node = "vol-race-0"});
  CreateClaim(*c, "vol-race", "c0", "vol-race");
  CreateClaim(*c, "vol-race", "c1", "vol-race");
  Harness h({"ksched"});
  CreatePod(*c, PodWithClaims("vol-race", "p0", "vol-race", {"c0"}));
  CreatePod(*c, PodWithClaims("vol-race", "p1", "vol-race", {"c1"}));

  std::string winner, loser;
  ASSERT_TRUE(Eventually([&] {
    auto p0 = h.pods().Get("vol-race/p0"), p1 = h.pods().Get("vol-race/p1");
    if (p0 && p0->IsAssigned()) winner = "p0", loser = "p1";
    if (p1 && p1->IsAssigned()) winner = "p1", loser = "p0";
    return !winner.empty();
  }, 30s)) << "neither pod was bound";
  EXPECT_EQ(h.pods().Get("vol-race/" + winner)->spec.node_name, "vol-race-0");
  WaitUnschedulable(h, "vol-race/" + loser, "didn't find available persistent volumes to bind");
  EXPECT_FALSE(h.pods().Get("vol-race/" + loser)->IsAssigned());
  const std::string winner_claim = winner == "p0" ? "c0" : "c1", loser_claim = winner == "p0" ? "c1" : "c0";
  EXPECT_EQ(WaitClaimBound(*c, "vol-race", winner_claim), "vol-race-pv-0");

  CreateVolume(*c, {.name = "vol-race-pv-1", .klass = "vol-race", .node = "vol-race-1"});
  EXPECT_EQ(h.WaitBound("vol-race/" + loser), "vol-race-1");
  EXPECT_EQ(WaitClaimBound(*c, "vol-race", loser_claim), "vol-race-pv-1");
}

// A node whose CSINode allows one volume of the driver: the second pod waits with
// upstream's reason until the first one is deleted.
TEST_F(VolumeIntegrationTest, AttachLimitOfTheNodesCSIDriver) {
  auto c = AdminClient();
  const std::string driver = "attach.csi.ksched.example.com";
  CreateNamespace(*c, "vol-limit");
  CreateNodes(*c, "vol-limit", 1);
  Post(*c, "/apis/storage.k8s.io/v1/csinodes",
       R"({"apiVersion":"storage.k8s.io/v1","kind":"CSINode","metadata":{"name":"vol-limit-0"},"spec":{"drivers":[)"
       R"({"name":")" + driver + R"(","nodeID":"vol-limit-0","allocatable":{"count":1}}]}})");
  for (const std::string name : {"a", "b"}) {
    CreateVolume(*c, {.name = "vol-limit-" + name, .klass = "", .csi_driver = driver, .claim_ns = "vol-limit",
                      .claim_name = name});
    CreateClaim(*c, "vol-limit", name, "", "1Gi", "vol-limit-" + name);
  }
  EXPECT_EQ(WaitClaimBound(*c, "vol-limit", "a"), "vol-limit-a");
  EXPECT_EQ(WaitClaimBound(*c, "vol-limit", "b"), "vol-limit-b");
  Harness h({"ksched"});
  CreatePod(*c, PodWithClaims("vol-limit", "first", "vol-limit", {"a"}));
  EXPECT_EQ(h.WaitBound("vol-limit/first"), "vol-limit-0");
  CreatePod(*c, PodWithClaims("vol-limit", "second", "vol-limit", {"b"}));
  WaitUnschedulable(h, "vol-limit/second", "node(s) exceed max volume count");
  DeletePodNow(*c, "vol-limit", "first");
  EXPECT_EQ(h.WaitBound("vol-limit/second"), "vol-limit-0");
}

// A bound volume in zone z1 and nodes only in z2: upstream's reason; a node in z1 that
// joins gets the pod.
TEST_F(VolumeIntegrationTest, VolumeZoneConflictUntilANodeInTheZoneJoins) {
  auto c = AdminClient();
  CreateNamespace(*c, "vol-zone");
  CreateNodes(*c, "vol-zone", 2, {{"topology.kubernetes.io/zone", "vz-2"}});
  CreateVolume(*c, {.name = "vol-zone-pv", .klass = "", .zone = "vz-1", .claim_ns = "vol-zone", .claim_name = "data"});
  CreateClaim(*c, "vol-zone", "data", "", "1Gi", "vol-zone-pv");
  EXPECT_EQ(WaitClaimBound(*c, "vol-zone", "data"), "vol-zone-pv");
  Harness h({"ksched"});
  CreatePod(*c, PodWithClaims("vol-zone", "app", "vol-zone", {"data"}));
  WaitUnschedulable(h, "vol-zone/app", "node(s) had no available volume zone");

  api::Node z1 = ksched::testing::TestNode("vol-zone-z1", *api::Quantity::Parse("4"), *api::Quantity::Parse("16Gi"));
  z1.metadata.labels.Set("test-group", "vol-zone");
  z1.metadata.labels.Set("topology.kubernetes.io/zone", "vz-1");
  Post(*c, "/api/v1/nodes", api::EncodeNode(z1));
  EXPECT_EQ(h.WaitBound("vol-zone/app"), "vol-zone-z1");
}

}  // namespace
}  // namespace ksched::scheduler
