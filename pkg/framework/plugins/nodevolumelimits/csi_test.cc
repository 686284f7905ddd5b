// Table tests ported from upstream csi_test.go (1.20.2 and current): TestCSILimits,
// TestCSILimitsQHint, TestCSILimitsAddedPVCQHint, TestCSILimitsAfterCSINodeUpdatedQHint;
// plus in-tree translation cases of our own. Not ported: the VolumeAttachment cases
// (ksched has no VolumeAttachment informer), the VolumeLimitScaling gate (alpha), and
// 1.20.2's "migration is disabled" cases (upstream can no longer disable the migration).
// 1.20.2's node-allocatable limits ("attachable-volumes-csi-*") are gone upstream: those
// cases run with CSINode limits, as the current test does.
#include "pkg/framework/plugins/nodevolumelimits/csi.h"

#include <gtest/gtest.h>

#include "pkg/framework/plugins/helper/volumes.h"
#include "tests/fakes/builders.h"
#include "tests/fakes/fake_cluster_lister.h"
#include "tests/fakes/fake_handle.h"
#include "tests/fakes/registrations.h"
#include "tests/fakes/storage_builders.h"

namespace ksched::framework::plugins::nodevolumelimits {
namespace {

using ksched::testing::FindRegistration;

using ksched::testing::CSINodeBuilder;
using ksched::testing::FakeClusterLister;
using ksched::testing::FakeHandle;
using ksched::testing::NodeBuilder;
using ksched::testing::PodBuilder;
using ksched::testing::PVBuilder;
using ksched::testing::PVCBuilder;
using ksched::testing::StorageClassBuilder;

const std::string kEbsCsi = "ebs.csi.aws.com";
const std::string kGceCsi = "pd.csi.storage.gke.io";
const std::string kEbsInTree = "kubernetes.io/aws-ebs";
const std::string kHostpathInTree = "kubernetes.io/hostpath";
const std::string kScName = "csi-sc";
const std::string kNodeName = "node-for-max-pd-test-1";

const Status kSkip(Code::kSkip);
const Status kExceeded(Code::kUnschedulable, std::string(kErrReasonMaxVolumeCountExceeded));

// upstream getFakeCSIPVLister / getFakeCSIPVCLister / getFakeCSIStorageClassLister: per
// driver, claims "csi-<driver>-<0..3>" bound to volumes of the same name (in-tree EBS
// volumes for the EBS plugin, hostPath ones, which we do not decode, for hostpath);
// "csi-4" unbound with the class, "csi-5" without a class, "csi-6" bound to a missing
// volume but with the class. The class's provisioner is the first driver.
void AddVolumes(FakeClusterLister& lister, const std::vector<std::string>& drivers) {
  for (const std::string& driver : drivers) {
    for (int j = 0; j < 4; ++j) {
      const std::string name = "csi-" + driver + "-" + std::to_string(j);
      PVBuilder pv(name);
      if (driver == kEbsInTree) {
        pv.Source({.aws_volume_id = name});
      } else if (driver != kHostpathInTree) {
        pv.CSI(driver, name);
      }
      lister.Add(pv.Obj());
      lister.Add(PVCBuilder(name).VolumeName(name).Obj());
    }
  }
  lister.Add(PVCBuilder("csi-4").Class(kScName).Obj());
  lister.Add(PVCBuilder("csi-5").Obj());
  lister.Add(PVCBuilder("csi-6").Class(kScName).VolumeName("missing-in-action").Obj());
  lister.Add(StorageClassBuilder(kScName).Provisioner(drivers.front()).Obj());
}

enum class LimitSource { kNone, kCSINode, kCSINodeWithNoLimit };

// upstream getNodeWithPodAndVolumeLimits: the CSINode lists every driver, with `limit`
// or without allocatable.
void AddCSINode(FakeClusterLister& lister, LimitSource source, int32_t limit, const std::vector<std::string>& drivers) {
  if (source == LimitSource::kNone) return;
  CSINodeBuilder n(kNodeName);
  for (const std::string& d : drivers) {
    n.Driver(d, source == LimitSource::kCSINode ? std::optional<int32_t>(limit) : std::nullopt);
  }
  lister.Add(n.Obj());
}

cache::NodeInfo NodeWith(const std::vector<api::PodPtr>& pods) {
  cache::NodeInfo info(NodeBuilder(kNodeName).Obj());
  for (const auto& p : pods) info.AddPod(p);
  return info;
}

api::PersistentVolumeClaim EphemeralClaim(const std::string& pod, const std::string& uid, const std::string& volume,
                                          bool owned = true) {
  PVCBuilder b(pod + "-" + volume, "test");
  b.Class(kScName);
  if (owned) b.OwnedBy("Pod", pod, uid);
  return b.Obj();
}

struct Case {
  std::string name;
  api::PodPtr new_pod;
  std::vector<api::PodPtr> existing;
  std::vector<api::PersistentVolumeClaim> extra_claims;
  int32_t max_vols = 0;
  std::vector<std::string> drivers;
  LimitSource limit_source = LimitSource::kNone;
  Status want_prefilter;
  Status want_filter;
};

void RunCase(const Case& c) {
  FakeClusterLister lister;
  AddVolumes(lister, c.drivers);
  for (const auto& claim : c.extra_claims) lister.Add(claim);
  AddCSINode(lister, c.limit_source, c.max_vols, c.drivers);
  FakeHandle handle;
  handle.SetLister(&lister);
  auto plugin = CSILimits::New(std::monostate{}, handle);
  ASSERT_TRUE(plugin.ok());
  auto& pl = dynamic_cast<CSILimits&>(**plugin);
  CycleState state;
  PreFilterResult result;
  const Status pre = pl.PreFilter(state, *c.new_pod, result);
  EXPECT_EQ(pre, c.want_prefilter) << c.name;
  if (pre.IsSkip()) return;
  EXPECT_EQ(pl.Filter(state, *c.new_pod, NodeWith(c.existing)), c.want_filter) << c.name;
}

TEST(CSILimitsTest, Filter) {
  auto running_pod = PodBuilder("running").PVC("csi-ebs.csi.aws.com-3").Obj();
  auto pending_volume_pod = PodBuilder("pending").PVC("csi-4").Obj();
  // Another pod than pending_volume_pod, with the same unbound claim.
  auto unbound_pvc_pod2 = PodBuilder("unbound2").PVC("csi-4").Obj();
  auto missing_pv_pod = PodBuilder("missing-pv").PVC("csi-6").Obj();
  auto no_sc_pvc_pod = PodBuilder("no-sc").PVC("csi-5").Obj();
  auto gce_two_vol_pod = PodBuilder("gce2").PVC("csi-pd.csi.storage.gke.io-1").PVC("csi-pd.csi.storage.gke.io-2").Obj();
  auto in_tree_one_vol_pod = PodBuilder("intree1").PVC("csi-kubernetes.io/aws-ebs-0").Obj();
  auto in_tree_two_vol_pod =
      PodBuilder("intree2").PVC("csi-kubernetes.io/aws-ebs-1").PVC("csi-kubernetes.io/aws-ebs-2").Obj();
  auto csi_ebs_one_vol_pod = PodBuilder("ebs1").PVC("csi-ebs.csi.aws.com-0").Obj();
  auto csi_ebs_two_vol_pod = PodBuilder("ebs2").PVC("csi-ebs.csi.aws.com-1").PVC("csi-ebs.csi.aws.com-2").Obj();
  auto in_tree_non_migratable_one_vol_pod = PodBuilder("hostpath").PVC("csi-kubernetes.io/hostpath-0").Obj();

  auto ephemeral_volume_pod = PodBuilder("abc").Namespace("test").UID("12345").EphemeralVolume("xyz").Obj();
  const auto ephemeral_claim = EphemeralClaim("abc", "12345", "xyz");
  const auto conflicting_claim = EphemeralClaim("abc", "12345", "xyz", /*owned=*/false);
  auto ephemeral_two_volume_pod =
      PodBuilder("abc").Namespace("test").UID("12345II").EphemeralVolume("x").EphemeralVolume("y").Obj();
  const auto ephemeral_claim_x = EphemeralClaim("abc", "12345II", "x");
  const auto ephemeral_claim_y = EphemeralClaim("abc", "12345II", "y");

  auto in_tree_inline_vol_pod = PodBuilder("inline").Volume("v", {.aws_volume_id = "aws-inline1"}).Obj();
  auto in_tree_inline_vol_pod_with_same_csi_volume_id =
      PodBuilder("inline-same").Volume("v", {.aws_volume_id = "csi-ebs.csi.aws.com-1"}).Obj();
  // Config maps and secrets are not decoded; volumes without a source stand for them.
  auto only_configmap_and_secret_vol_pod = PodBuilder("cm").Volume("configmap", {}).Volume("secret", {}).Obj();
  auto pvc_pod_with_configmap_and_secret =
      PodBuilder("cm-pvc").Volume("configmap", {}).Volume("secret", {}).PVC("csi-ebs.csi.aws.com-0").Obj();
  auto ephemeral_pod_with_configmap_and_secret =
      PodBuilder("abc").Namespace("test").Volume("configmap", {}).Volume("secret", {}).EphemeralVolume("xyz").Obj();
  auto inline_migratable_pod_with_configmap_and_secret = PodBuilder("cm-inline")
                                                             .Volume("configmap", {})
                                                             .Volume("secret", {})
                                                             .Volume("v", {.aws_volume_id = "aws-inline1"})
                                                             .Obj();

  const std::vector<std::string> ebs = {kEbsCsi};
  const std::vector<std::string> in_tree_and_ebs = {kEbsInTree, kEbsCsi};
  const auto csinode = LimitSource::kCSINode;
  const auto no_limit = LimitSource::kCSINodeWithNoLimit;
  const Status ephemeral_missing(Code::kUnschedulableAndUnresolvable,
                                 "looking up PVC test/abc-xyz: persistentvolumeclaim \"abc-xyz\" not found");
  const Status not_owned = Status::Error("PVC test/abc-xyz was not created for pod test/abc (pod is not owner)");

  const Case cases[] = {
      {.name = "fits when node volume limit >= new pods CSI volume", .new_pod = csi_ebs_one_vol_pod,
       .existing = {running_pod, csi_ebs_two_vol_pod}, .max_vols = 4, .drivers = ebs, .limit_source = csinode},
      {.name = "doesn't when node volume limit <= pods CSI volume", .new_pod = csi_ebs_one_vol_pod,
       .existing = {running_pod, csi_ebs_two_vol_pod}, .max_vols = 2, .drivers = ebs, .limit_source = csinode,
       .want_filter = kExceeded},
      {.name = "should when driver does not support volume limits", .new_pod = csi_ebs_one_vol_pod,
       .existing = {running_pod, csi_ebs_two_vol_pod}, .max_vols = 2, .drivers = ebs, .limit_source = no_limit},
      {.name = "count pending PVCs towards volume limit <= pods CSI volume", .new_pod = csi_ebs_one_vol_pod,
       .existing = {pending_volume_pod, csi_ebs_two_vol_pod}, .max_vols = 2, .drivers = ebs, .limit_source = csinode,
       .want_filter = kExceeded},
      {.name = "count multiple pending pvcs towards volume limit >= pods CSI volume", .new_pod = csi_ebs_one_vol_pod,
       .existing = {pending_volume_pod, unbound_pvc_pod2, csi_ebs_two_vol_pod}, .max_vols = 4, .drivers = ebs,
       .limit_source = csinode},
      {.name = "should count PVCs with invalid PV name but valid SC", .new_pod = csi_ebs_one_vol_pod,
       .existing = {missing_pv_pod, csi_ebs_two_vol_pod}, .max_vols = 2, .drivers = ebs, .limit_source = csinode,
       .want_filter = kExceeded},
      {.name = "don't count pvcs with missing SC towards volume limit", .new_pod = csi_ebs_one_vol_pod,
       .existing = {running_pod, no_sc_pvc_pod}, .max_vols = 2, .drivers = ebs, .limit_source = csinode},
      {.name = "count pvcs with the same type towards volume limit", .new_pod = csi_ebs_one_vol_pod,
       .existing = {gce_two_vol_pod, csi_ebs_two_vol_pod}, .max_vols = 2, .drivers = {kEbsCsi, kGceCsi},
       .limit_source = csinode, .want_filter = kExceeded},
      {.name = "don't count pvcs with different type towards volume limit", .new_pod = gce_two_vol_pod,
       .existing = {csi_ebs_two_vol_pod, running_pod}, .max_vols = 2, .drivers = {kEbsCsi, kGceCsi},
       .limit_source = csinode},
      // In-tree volume migration.
      {.name = "should count in-tree volumes if migration is enabled", .new_pod = in_tree_one_vol_pod,
       .existing = {in_tree_two_vol_pod}, .max_vols = 2, .drivers = in_tree_and_ebs, .limit_source = csinode,
       .want_filter = kExceeded},
      {.name = "nil csi node", .new_pod = in_tree_inline_vol_pod, .existing = {in_tree_two_vol_pod},
       .drivers = in_tree_and_ebs, .limit_source = LimitSource::kNone},
      {.name = "should count unbound in-tree volumes if migration is enabled", .new_pod = pending_volume_pod,
       .existing = {in_tree_two_vol_pod}, .max_vols = 2, .drivers = in_tree_and_ebs, .limit_source = csinode,
       .want_filter = kExceeded},
      {.name = "should not limit pod if volume used does not report limits", .new_pod = in_tree_one_vol_pod,
       .existing = {in_tree_two_vol_pod}, .max_vols = 2, .drivers = in_tree_and_ebs, .limit_source = no_limit},
      {.name = "should not count non-migratable in-tree volumes", .new_pod = in_tree_non_migratable_one_vol_pod,
       .existing = {csi_ebs_two_vol_pod}, .max_vols = 2, .drivers = {kHostpathInTree, kEbsCsi},
       .limit_source = csinode},
      {.name = "should count in-tree inline volumes if migration is enabled", .new_pod = in_tree_inline_vol_pod,
       .existing = {in_tree_two_vol_pod}, .max_vols = 2, .drivers = in_tree_and_ebs, .limit_source = csinode,
       .want_filter = kExceeded},
      // Mixed volumes.
      {.name = "should count in-tree and csi volumes if migration is enabled (when scheduling in-tree volumes)",
       .new_pod = in_tree_one_vol_pod, .existing = {csi_ebs_two_vol_pod}, .max_vols = 2, .drivers = in_tree_and_ebs,
       .limit_source = csinode, .want_filter = kExceeded},
      {.name = "should count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree volumes)",
       .new_pod = in_tree_inline_vol_pod, .existing = {csi_ebs_two_vol_pod, in_tree_one_vol_pod}, .max_vols = 3,
       .drivers = in_tree_and_ebs, .limit_source = csinode, .want_filter = kExceeded},
      {.name = "should not count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree "
               "volumes)",
       .new_pod = in_tree_inline_vol_pod_with_same_csi_volume_id,
       .existing = {csi_ebs_two_vol_pod, in_tree_one_vol_pod}, .max_vols = 3, .drivers = in_tree_and_ebs,
       .limit_source = csinode},
      {.name = "should count in-tree and csi volumes if migration is enabled (when scheduling csi volumes)",
       .new_pod = csi_ebs_one_vol_pod, .existing = {in_tree_two_vol_pod}, .max_vols = 2, .drivers = in_tree_and_ebs,
       .limit_source = csinode, .want_filter = kExceeded},
      // Generic ephemeral volumes. Upstream's fake lister says "persistentvolumeclaims";
      // the informer's lister it stands for says "persistentvolumeclaim".
      {.name = "ephemeral volume missing", .new_pod = ephemeral_volume_pod, .drivers = ebs, .limit_source = no_limit,
       .want_filter = ephemeral_missing},
      {.name = "ephemeral volume not owned", .new_pod = ephemeral_volume_pod, .extra_claims = {conflicting_claim},
       .drivers = ebs, .limit_source = no_limit, .want_filter = not_owned},
      {.name = "ephemeral volume unbound", .new_pod = ephemeral_volume_pod, .extra_claims = {ephemeral_claim},
       .drivers = ebs, .limit_source = no_limit},
      {.name = "ephemeral doesn't when node volume limit <= pods CSI volume", .new_pod = ephemeral_volume_pod,
       .existing = {running_pod, csi_ebs_two_vol_pod}, .extra_claims = {ephemeral_claim}, .max_vols = 2,
       .drivers = ebs, .limit_source = csinode, .want_filter = kExceeded},
      {.name = "ephemeral doesn't when node volume limit <= pods ephemeral CSI volume", .new_pod = csi_ebs_one_vol_pod,
       .existing = {running_pod, ephemeral_two_volume_pod}, .extra_claims = {ephemeral_claim_x, ephemeral_claim_y},
       .max_vols = 2, .drivers = ebs, .limit_source = csinode, .want_filter = kExceeded},
      // Upstream runs this one with the (since removed) ephemeral gate off and on.
      {.name = "persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume, "
               "ephemeral disabled",
       .new_pod = csi_ebs_one_vol_pod, .existing = {running_pod, ephemeral_volume_pod, csi_ebs_two_vol_pod},
       .extra_claims = {ephemeral_claim}, .max_vols = 3, .drivers = ebs, .limit_source = csinode,
       .want_filter = kExceeded},
      {.name = "persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume",
       .new_pod = csi_ebs_one_vol_pod, .existing = {running_pod, ephemeral_volume_pod, csi_ebs_two_vol_pod},
       .extra_claims = {ephemeral_claim}, .max_vols = 3, .drivers = ebs, .limit_source = csinode,
       .want_filter = kExceeded},
      {.name = "persistent okay when node volume limit > pods ephemeral CSI volume + persistent volume",
       .new_pod = csi_ebs_one_vol_pod, .existing = {running_pod, ephemeral_volume_pod, csi_ebs_two_vol_pod},
       .extra_claims = {ephemeral_claim}, .max_vols = 5, .drivers = ebs, .limit_source = csinode},
      {.name = "skip Filter when the pod only uses secrets and configmaps",
       .new_pod = only_configmap_and_secret_vol_pod, .max_vols = 2, .drivers = ebs, .limit_source = csinode,
       .want_prefilter = kSkip},
      {.name = "don't skip Filter when the pod has pvcs", .new_pod = pvc_pod_with_configmap_and_secret, .max_vols = 2,
       .drivers = ebs, .limit_source = csinode},
      {.name = "don't skip Filter when the pod has ephemeral volumes",
       .new_pod = ephemeral_pod_with_configmap_and_secret, .drivers = ebs, .limit_source = no_limit,
       .want_filter = ephemeral_missing},
      {.name = "don't skip Filter when the pod has inline migratable volumes",
       .new_pod = inline_migratable_pod_with_configmap_and_secret, .existing = {in_tree_two_vol_pod}, .max_vols = 2,
       .drivers = in_tree_and_ebs, .limit_source = csinode, .want_filter = kExceeded},
      // Ours.
      {.name = "new pod's claim missing", .new_pod = PodBuilder("p").PVC("nope").Obj(), .max_vols = 2, .drivers = ebs,
       .limit_source = csinode,
       .want_filter = Status(Code::kUnschedulableAndUnresolvable,
                             "looking up PVC default/nope: persistentvolumeclaim \"nope\" not found")},
      {.name = "existing pod's missing claim is not counted", .new_pod = csi_ebs_one_vol_pod,
       .existing = {running_pod, PodBuilder("gone").PVC("nope").Obj()}, .max_vols = 2, .drivers = ebs,
       .limit_source = csinode},
      {.name = "a volume used twice on the node counts once", .new_pod = csi_ebs_one_vol_pod,
       .existing = {running_pod, PodBuilder("again").PVC("csi-ebs.csi.aws.com-3").Obj()}, .max_vols = 2,
       .drivers = ebs, .limit_source = csinode},
      {.name = "the new pod's volume already on the node is free", .new_pod = csi_ebs_one_vol_pod,
       .existing = {PodBuilder("same").PVC("csi-ebs.csi.aws.com-0").Obj(), running_pod}, .max_vols = 2,
       .drivers = ebs, .limit_source = csinode},
      {.name = "existing pod's ephemeral claim not owned", .new_pod = csi_ebs_one_vol_pod,
       .existing = {ephemeral_volume_pod}, .extra_claims = {conflicting_claim}, .max_vols = 2, .drivers = ebs,
       .limit_source = csinode, .want_filter = not_owned},
      {.name = "inline CSI volumes are not counted",
       .new_pod = PodBuilder("inline-csi").Volume("v", {.csi_driver = kEbsCsi}).Obj(),
       .existing = {running_pod, csi_ebs_two_vol_pod}, .max_vols = 2, .drivers = ebs, .limit_source = csinode,
       .want_prefilter = kSkip},
  };
  for (const Case& c : cases) RunCase(c);
}

// In-tree volumes get the volume handles CSI migration gives them, so an in-tree and a
// CSI view of one disk count once, and a zonal GCE PV differs from an inline PD.
TEST(CSILimitsTest, InTreeTranslation) {
  const api::VolumeSource gce_inline{.gce_pd_name = "disk-1"};
  auto gce_pv = [](std::string name, std::string zone_label) {
    PVBuilder b(std::move(name));
    b.Source({.gce_pd_name = "disk-1"});
    if (!zone_label.empty()) b.Label(std::string(helper::kLabelTopologyZone), std::move(zone_label));
    return b.Obj();
  };
  struct TranslationCase {
    std::string name;
    std::vector<api::PersistentVolume> volumes;  // each bound to a claim of the same name
    api::PodPtr new_pod;
    std::vector<api::PodPtr> existing;
    int32_t limit = 0;
    std::string driver;
    Status want;
  };
  const TranslationCase cases[] = {
      {.name = "inline and PV GCE PD without zone are one disk", .volumes = {gce_pv("pv", "")},
       .new_pod = PodBuilder("new").Volume("v", gce_inline).Obj(), .existing = {PodBuilder("old").PVC("pv").Obj()},
       .limit = 1, .driver = kGceCsi},
      {.name = "a zonal GCE PV is another volume than the inline PD", .volumes = {gce_pv("pv", "us-central1-a")},
       .new_pod = PodBuilder("new").Volume("v", gce_inline).Obj(), .existing = {PodBuilder("old").PVC("pv").Obj()},
       .limit = 1, .driver = kGceCsi, .want = kExceeded},
      {.name = "two PVs of one regional GCE PD are one disk",
       .volumes = {gce_pv("pv1", "us-central1-a__us-central1-b"), gce_pv("pv2", "us-central1-b__us-central1-a")},
       .new_pod = PodBuilder("new").PVC("pv1").Obj(), .existing = {PodBuilder("old").PVC("pv2").Obj()}, .limit = 1,
       .driver = kGceCsi},
      {.name = "a GCE PV over several regions is not counted",
       .volumes = {gce_pv("pv1", "us-central1-a__europe-west1-b")}, .new_pod = PodBuilder("new").PVC("pv1").Obj(),
       .existing = {PodBuilder("old").Volume("v", {.gce_pd_name = "other"}).Obj()}, .limit = 1, .driver = kGceCsi},
      {.name = "aws:// volume ids name the EBS volume", .volumes = {PVBuilder("csi").CSI(kEbsCsi, "vol-123").Obj()},
       .new_pod = PodBuilder("new").Volume("v", {.aws_volume_id = "aws://us-east-1a/vol-123"}).Obj(),
       .existing = {PodBuilder("old").PVC("csi").Obj()}, .limit = 1, .driver = kEbsCsi},
      {.name = "an invalid aws:// id fails",
       .new_pod = PodBuilder("new").Volume("v", {.aws_volume_id = "aws://us-east-1a/bad"}).Obj(), .limit = 1,
       .driver = kEbsCsi,
       .want = Status::Error("converting volume(v) from inline to csi: Invalid format for AWS volume "
                             "(aws://us-east-1a/bad)")},
      {.name = "azure disks by URI", .volumes = {PVBuilder("az").Source({.azure_disk_uri = "uri-1"}).Obj()},
       .new_pod = PodBuilder("new").Volume("v", {.azure_disk_uri = "uri-2"}).Obj(),
       .existing = {PodBuilder("old").PVC("az").Obj()}, .limit = 1, .driver = "disk.csi.azure.com", .want = kExceeded},
      {.name = "cinder volumes by id", .volumes = {PVBuilder("ci").Source({.cinder_volume_id = "id-1"}).Obj()},
       .new_pod = PodBuilder("new").Volume("v", {.cinder_volume_id = "id-1"}).Obj(),
       .existing = {PodBuilder("old").PVC("ci").Obj()}, .limit = 1, .driver = "cinder.csi.openstack.org"},
  };
  for (const TranslationCase& c : cases) {
    FakeClusterLister lister;
    for (const auto& v : c.volumes) {
      lister.Add(v);
      lister.Add(PVCBuilder(v.Name()).VolumeName(v.Name()).Obj());
    }
    lister.Add(CSINodeBuilder(kNodeName).Driver(c.driver, c.limit).Obj());
    FakeHandle handle;
    handle.SetLister(&lister);
    CSILimits pl(handle, "prefix");
    CycleState state;
    PreFilterResult result;
    ASSERT_TRUE(pl.PreFilter(state, *c.new_pod, result).IsSuccess()) << c.name;
    EXPECT_EQ(pl.Filter(state, *c.new_pod, NodeWith(c.existing)), c.want) << c.name;
  }
}

TEST(CSILimitsTest, UnboundClaimsCountByProvisioner) {
  struct ProvisionerCase {
    std::string provisioner;
    std::string limited_driver;
    bool counted;
  };
  const ProvisionerCase cases[] = {
      {"ebs.csi.aws.com", "ebs.csi.aws.com", true},
      {"kubernetes.io/aws-ebs", "ebs.csi.aws.com", true},  // migrated to its CSI driver
      {"kubernetes.io/gce-pd", "pd.csi.storage.gke.io", true},
      {"kubernetes.io/portworx-volume", "pxd.portworx.com", true},
      // Migratable by name but not migrated: not counted at all.
      {"kubernetes.io/azure-file", "file.csi.azure.com", false},
      {"kubernetes.io/azure-file", "kubernetes.io/azure-file", false},
  };
  for (const ProvisionerCase& c : cases) {
    FakeClusterLister lister;
    lister.Add(StorageClassBuilder("sc").Provisioner(c.provisioner).Obj());
    lister.Add(PVCBuilder("a").Class("sc").Obj());
    lister.Add(PVCBuilder("b").Class("sc").Obj());
    lister.Add(CSINodeBuilder(kNodeName).Driver(c.limited_driver, 1).Obj());
    FakeHandle handle;
    handle.SetLister(&lister);
    CSILimits pl(handle, "prefix");
    auto pod = PodBuilder("new").PVC("a").Obj();
    CycleState state;
    EXPECT_EQ(pl.Filter(state, *pod, NodeWith({PodBuilder("old").PVC("b").Obj()})), c.counted ? kExceeded : Status())
        << c.provisioner << " limited as " << c.limited_driver;
  }
}

struct HintEnv : ksched::testing::RegisteredPlugin<CSILimits> {
  HintEnv() : RegisteredPlugin("prefix") {}
};

TEST(CSILimitsTest, EventsToRegister) {
  HintEnv env;
  ASSERT_EQ(env.events.size(), 4u);
  const auto* add = FindRegistration(env.events, EventResource::kCSINode, kAdd);
  ASSERT_NE(add, nullptr);
  EXPECT_FALSE(add->hint_fn);
  EXPECT_NE(FindRegistration(env.events, EventResource::kCSINode, kUpdate), nullptr);
  EXPECT_NE(FindRegistration(env.events, EventResource::kPod, kDelete), nullptr);
  EXPECT_NE(FindRegistration(env.events, EventResource::kPersistentVolumeClaim, kAdd), nullptr);
}

TEST(CSILimitsTest, AssignedPodDeletedHint) {
  auto pod = PodBuilder("p").PVC("csi-ebs.csi.aws.com-2").Obj();
  struct DeletedCase {
    std::string name;
    api::PodPtr deleted;
    QueueingHint want;
  };
  const DeletedCase cases[] = {
      {"return a Queue when a deleted pod has a PVC", PodBuilder("d").PVC("placeholder").Node(kNodeName).Obj(),
       QueueingHint::kQueue},
      {"return a Queue when a deleted pod has a inline migratable volume",
       PodBuilder("d").Volume("v", {.aws_volume_id = "vol-1"}).Node(kNodeName).Obj(), QueueingHint::kQueue},
      {"return a QueueSkip when a deleted pod doesn't have any volume", PodBuilder("d").Node(kNodeName).Obj(),
       QueueingHint::kSkip},
      {"return a QueueSkip when a deleted pod is not scheduled.", PodBuilder("d").PVC("csi-ebs.csi.aws.com-0").Obj(),
       QueueingHint::kSkip},
      // Ours.
      {"queue for a nominated pod", PodBuilder("d").PVC("x").NominatedNodeName(kNodeName).Obj(), QueueingHint::kQueue},
      {"queue for an ephemeral volume", PodBuilder("d").EphemeralVolume("x").Node(kNodeName).Obj(),
       QueueingHint::kQueue},
      {"skip for volumes never counted", PodBuilder("d").Volume("cm", {}).Node(kNodeName).Obj(), QueueingHint::kSkip},
  };
  HintEnv env;
  for (const DeletedCase& c : cases) {
    EXPECT_EQ(env.Hint(EventResource::kPod, kDelete, *pod, c.deleted.get(), nullptr), c.want) << c.name;
  }
}

TEST(CSILimitsTest, ClaimAddedHint) {
  struct ClaimCase {
    std::string name;
    api::PodPtr pod;
    api::PersistentVolumeClaim added;
    QueueingHint want;
  };
  const ClaimCase cases[] = {
      {"a pod isn't in the same namespace as an added PVC", PodBuilder("p").Namespace("ns1").Obj(),
       PVCBuilder("pvc", "ns2").Obj(), QueueingHint::kSkip},
      {"a pod is in the same namespace as an added PVC", PodBuilder("p").Namespace("ns1").PVC("pvc1").Obj(),
       PVCBuilder("pvc1", "ns1").Obj(), QueueingHint::kQueue},
      {"a pod has an ephemeral volume related to an added PVC",
       PodBuilder("pod1").Namespace("ns1").EphemeralVolume("ephemeral").Obj(),
       PVCBuilder("pod1-ephemeral", "ns1").Obj(), QueueingHint::kQueue},
      {"a pod doesn't have the same PVC as an added PVC", PodBuilder("p").Namespace("ns1").PVC("pvc1").Obj(),
       PVCBuilder("pvc2", "ns1").Obj(), QueueingHint::kSkip},
      {"a pod doesn't have any PVC attached", PodBuilder("p").Namespace("ns1").Obj(), PVCBuilder("pvc2", "ns1").Obj(),
       QueueingHint::kSkip},
  };
  HintEnv env;
  for (const ClaimCase& c : cases) {
    EXPECT_EQ(env.Hint(EventResource::kPersistentVolumeClaim, kAdd, *c.pod, nullptr, &c.added), c.want) << c.name;
  }
}

TEST(CSILimitsTest, CSINodeUpdatedHint) {
  auto pod = PodBuilder("test-pod").Namespace("ns1").PVC("csi-ebs.csi.aws.com-0").Obj();
  struct NodeCase {
    std::string name;
    api::CSINode old_node, new_node;
    QueueingHint want;
  };
  const NodeCase cases[] = {
      {"limit raised, queue", CSINodeBuilder("test-node").Driver(kEbsCsi, 1).Obj(),
       CSINodeBuilder("test-node").Driver(kEbsCsi, 2).Obj(), QueueingHint::kQueue},
      {"limit decreased, skip queueing", CSINodeBuilder("test-node").Driver(kEbsCsi, 2).Obj(),
       CSINodeBuilder("test-node").Driver(kEbsCsi, 1).Obj(), QueueingHint::kSkip},
      {"limit unchanged, skip queueing", CSINodeBuilder("test-node").Driver(kEbsCsi, 1).Obj(),
       CSINodeBuilder("test-node").Driver(kEbsCsi, 1).Obj(), QueueingHint::kSkip},
      // Ours: a new driver with a limit counts as raised from 0; one without, not.
      {"driver added with a limit", CSINodeBuilder("test-node").Obj(),
       CSINodeBuilder("test-node").Driver(kEbsCsi, 1).Obj(), QueueingHint::kQueue},
      {"driver added without a limit", CSINodeBuilder("test-node").Obj(),
       CSINodeBuilder("test-node").Driver(kEbsCsi).Obj(), QueueingHint::kSkip},
  };
  HintEnv env;
  for (const NodeCase& c : cases) {
    EXPECT_EQ(env.Hint(EventResource::kCSINode, kUpdate, *pod, &c.old_node, &c.new_node), c.want) << c.name;
  }
}

}  // namespace
}  // namespace ksched::framework::plugins::nodevolumelimits
