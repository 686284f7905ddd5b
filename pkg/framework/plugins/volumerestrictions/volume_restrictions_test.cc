// Table tests ported from upstream volume_restrictions_test.go (1.20.2 and current):
// TestGCEDiskConflicts, TestAWSDiskConflicts, TestRBDDiskConflicts,
// TestISCSIDiskConflicts, TestAccessModeConflicts, Test_isSchedulableAfterAssignedPodDeleted,
// Test_isSchedulableAfterPersistentVolumeClaimChange; plus read-only, preemption
// (AddPod/RemovePod) and namespace cases of our own.
#include "pkg/framework/plugins/volumerestrictions/volume_restrictions.h"

#include <gtest/gtest.h>

#include "tests/fakes/builders.h"
#include "tests/fakes/fake_cluster_lister.h"
#include "tests/fakes/fake_handle.h"
#include "tests/fakes/registrations.h"
#include "tests/fakes/storage_builders.h"

namespace ksched::framework::plugins::volumerestrictions {
namespace {

using ksched::testing::FindRegistration;
using ksched::testing::RunHint;

using ksched::testing::FakeClusterLister;
using ksched::testing::FakeHandle;
using ksched::testing::NodeBuilder;
using ksched::testing::PodBuilder;
using ksched::testing::PVCBuilder;

const Status kSkip(Code::kSkip);
const Status kDiskConflict(Code::kUnschedulable, std::string(kErrReasonDiskConflict));
const Status kRwopConflict(Code::kUnschedulable, std::string(kErrReasonReadWriteOncePodConflict));

api::VolumeSource Gce(std::string pd, bool read_only = false) {
  return {.gce_pd_name = std::move(pd), .read_only = read_only};
}
api::VolumeSource Aws(std::string id) { return {.aws_volume_id = std::move(id)}; }
api::VolumeSource Rbd(std::vector<std::string> monitors, bool read_only = false) {
  return {.rbd_monitors = std::move(monitors), .rbd_pool = "foo", .rbd_image = "bar", .read_only = read_only};
}
api::VolumeSource Iscsi(std::string iqn, bool read_only = false) {
  return {.iscsi_iqn = std::move(iqn), .iscsi_lun = 0, .iscsi_target_portal = "127.0.0.1:3260", .read_only = read_only};
}

api::PodPtr PodWith(const api::VolumeSource& source, std::string name = "pod") {
  return PodBuilder(std::move(name)).Volume("v", source).Obj();
}

cache::NodeInfo NodeWith(const std::vector<api::PodPtr>& pods) {
  cache::NodeInfo info(NodeBuilder("node-1").Obj());
  for (const auto& p : pods) info.AddPod(p);
  return info;
}

// A plugin over a snapshot of `pods` on node-1 and the claims of `lister`.
struct Env {
  explicit Env(const std::vector<api::PodPtr>& pods = {})
      : handle(cache::Snapshot::FromObjects({NodeBuilder("node-1").Obj()}, pods)), pl(handle) {
    handle.SetLister(&lister);
  }
  FakeClusterLister lister;
  FakeHandle handle;
  VolumeRestrictions pl;
};

struct DiskCase {
  std::string name;
  api::PodPtr pod;
  std::vector<api::PodPtr> on_node;
  Status want_prefilter;
  Status want_filter;
};

// PreFilter, then Filter when PreFilter succeeded (as the framework runs them).
void RunDiskCases(const std::vector<DiskCase>& cases) {
  for (const DiskCase& c : cases) {
    Env env;
    CycleState state;
    PreFilterResult result;
    EXPECT_EQ(env.pl.PreFilter(state, *c.pod, result), c.want_prefilter) << c.name;
    if (!c.want_prefilter.IsSuccess()) continue;
    EXPECT_EQ(env.pl.Filter(state, *c.pod, NodeWith(c.on_node)), c.want_filter) << c.name;
  }
}

TEST(VolumeRestrictionsTest, GCEDiskConflicts) {
  const api::VolumeSource foo = Gce("foo"), bar = Gce("bar");
  RunDiskCases({
      {"nothing", PodBuilder().Obj(), {}, kSkip, {}},
      {"one state", PodBuilder().Obj(), {PodWith(foo)}, kSkip, {}},
      {"same state", PodWith(foo), {PodWith(foo)}, {}, kDiskConflict},
      {"different state", PodWith(bar), {PodWith(foo)}, {}, {}},
      {"pod with a volume that doesn't have restrictions",
       PodBuilder().Volume("no restriction", {}).Obj(),
       {},
       kSkip,
       {}},
      // Ours: GCE PDs may be shared read-only, by every pod.
      {"both read-only", PodWith(Gce("foo", true)), {PodWith(Gce("foo", true))}, {}, {}},
      {"only the new pod read-only", PodWith(Gce("foo", true)), {PodWith(foo)}, {}, kDiskConflict},
      {"only the existing pod read-only", PodWith(foo), {PodWith(Gce("foo", true))}, {}, kDiskConflict},
  });
}

TEST(VolumeRestrictionsTest, AWSDiskConflicts) {
  RunDiskCases({
      {"nothing", PodBuilder().Obj(), {}, kSkip, {}},
      {"one state", PodBuilder().Obj(), {PodWith(Aws("foo"))}, kSkip, {}},
      {"same state", PodWith(Aws("foo")), {PodWith(Aws("foo"))}, {}, kDiskConflict},
      {"different state", PodWith(Aws("bar")), {PodWith(Aws("foo"))}, {}, {}},
      // Ours: read-only does not help an EBS volume.
      {"same volume read-only",
       PodWith({.aws_volume_id = "foo", .read_only = true}),
       {PodWith({.aws_volume_id = "foo", .read_only = true})},
       {},
       kDiskConflict},
  });
}

TEST(VolumeRestrictionsTest, RBDDiskConflicts) {
  RunDiskCases({
      {"nothing", PodBuilder().Obj(), {}, kSkip, {}},
      {"one state", PodBuilder().Obj(), {PodWith(Rbd({"a", "b"}))}, kSkip, {}},
      {"same state", PodWith(Rbd({"a", "b"})), {PodWith(Rbd({"a", "b"}))}, {}, kDiskConflict},
      {"different state", PodWith(Rbd({"c", "d"})), {PodWith(Rbd({"a", "b"}))}, {}, {}},
      // Ours: one shared monitor is enough; read-only on both sides is allowed; another
      // image or pool is another disk.
      {"one monitor shared", PodWith(Rbd({"b", "c"})), {PodWith(Rbd({"a", "b"}))}, {}, kDiskConflict},
      {"both read-only", PodWith(Rbd({"a"}, true)), {PodWith(Rbd({"a"}, true))}, {}, {}},
      {"other image",
       PodWith({.rbd_monitors = {"a"}, .rbd_pool = "foo", .rbd_image = "baz"}),
       {PodWith(Rbd({"a"}))},
       {},
       {}},
      {"other pool",
       PodWith({.rbd_monitors = {"a"}, .rbd_pool = "rbd", .rbd_image = "bar"}),
       {PodWith(Rbd({"a"}))},
       {},
       {}},
  });
}

TEST(VolumeRestrictionsTest, ISCSIDiskConflicts) {
  const std::string iqn1 = "iqn.2016-12.server:storage.target01", iqn2 = "iqn.2017-12.server:storage.target01";
  RunDiskCases({
      {"nothing", PodBuilder().Obj(), {}, kSkip, {}},
      {"one state", PodBuilder().Obj(), {PodWith(Iscsi(iqn1))}, kSkip, {}},
      {"same state", PodWith(Iscsi(iqn1)), {PodWith(Iscsi(iqn1))}, {}, kDiskConflict},
      {"different state", PodWith(Iscsi(iqn2)), {PodWith(Iscsi(iqn1))}, {}, {}},
      // Ours.
      {"both read-only", PodWith(Iscsi(iqn1, true)), {PodWith(Iscsi(iqn1, true))}, {}, {}},
      {"one read-only", PodWith(Iscsi(iqn1, true)), {PodWith(Iscsi(iqn1))}, {}, kDiskConflict},
  });
}

TEST(VolumeRestrictionsTest, DiskKindsDoNotConflictWithEachOther) {
  // A GCE PD and an EBS volume with the same id are different disks.
  RunDiskCases({{"gce vs aws", PodWith(Gce("foo")), {PodWith(Aws("foo"))}, {}, {}}});
}

TEST(VolumeRestrictionsTest, AccessModeConflicts) {
  auto pod_with_one_pvc = PodBuilder("pod-with-one-pvc").PVC("claim-with-rwop-1").Node("node-1").Obj();
  auto pod_with_two_pvcs =
      PodBuilder("pod-with-two-pvcs").PVC("claim-with-rwop-1").PVC("claim-with-rwop-2").Node("node-1").Obj();
  auto pod_with_one_conflict = PodBuilder("pod-with-one-conflict").PVC("claim-with-rwop-1").Node("node-1").Obj();
  auto pod_with_two_conflicts =
      PodBuilder("pod-with-two-conflicts").PVC("claim-with-rwop-1").PVC("claim-with-rwop-2").Node("node-1").Obj();
  auto pod_with_rwx = PodBuilder("pod-with-rwx").PVC("claim-with-rwx").Node("node-1").Obj();

  const auto rwop1 = PVCBuilder("claim-with-rwop-1").AccessModes({std::string(api::kReadWriteOncePod)}).Obj();
  const auto rwop2 = PVCBuilder("claim-with-rwop-2").AccessModes({std::string(api::kReadWriteOncePod)}).Obj();
  const auto rwx = PVCBuilder("claim-with-rwx").AccessModes({std::string(api::kReadWriteMany)}).Obj();

  struct Case {
    std::string name;
    api::PodPtr pod;
    std::vector<api::PodPtr> existing;
    std::vector<api::PersistentVolumeClaim> claims;
    Status want_prefilter;
    Status want_filter;
  };
  const Case cases[] = {
      {"nothing", PodBuilder().Obj(), {}, {}, kSkip, {}},
      {"failed to get PVC",
       pod_with_one_pvc,
       {},
       {},
       Status(Code::kUnschedulableAndUnresolvable, "persistentvolumeclaim \"claim-with-rwop-1\" not found"),
       {}},
      {"no access mode conflict", pod_with_one_pvc, {pod_with_rwx}, {rwop1, rwx}, kSkip, {}},
      {"access mode conflict, unschedulable",
       pod_with_one_conflict,
       {pod_with_one_pvc, pod_with_rwx},
       {rwop1, rwx},
       {},
       kRwopConflict},
      {"two conflicts, unschedulable",
       pod_with_two_conflicts,
       {pod_with_two_pvcs, pod_with_rwx},
       {rwop1, rwop2, rwx},
       {},
       kRwopConflict},
      // Ours: a claim of the same name in another namespace is another claim.
      {"same claim name in another namespace",
       pod_with_one_conflict,
       {PodBuilder("other").Namespace("other").PVC("claim-with-rwop-1").Node("node-1").Obj()},
       {rwop1},
       kSkip,
       {}},
  };
  for (const Case& c : cases) {
    Env env(c.existing);
    for (const auto& claim : c.claims) env.lister.Add(claim);
    CycleState state;
    PreFilterResult result;
    EXPECT_EQ(env.pl.PreFilter(state, *c.pod, result), c.want_prefilter) << c.name;
    if (!c.want_prefilter.IsSuccess()) continue;
    EXPECT_EQ(env.pl.Filter(state, *c.pod, NodeWith(c.existing)), c.want_filter) << c.name;
  }
}

TEST(VolumeRestrictionsTest, ReadWriteOncePodClaimUsedOnAnotherNode) {
  // The claim's user runs elsewhere: every node is rejected, not only its own.
  auto user = PodBuilder("user").PVC("rwop").Node("node-2").Obj();
  cache::NodeInfo node2(NodeBuilder("node-2").Obj());
  node2.AddPod(user);
  FakeClusterLister lister;
  lister.Add(PVCBuilder("rwop").AccessModes({std::string(api::kReadWriteOncePod)}).Obj());
  FakeHandle handle(cache::Snapshot::FromObjects({NodeBuilder("node-1").Obj(), NodeBuilder("node-2").Obj()}, {user}));
  handle.SetLister(&lister);
  VolumeRestrictions pl(handle);
  auto pod = PodBuilder("new").PVC("rwop").Obj();
  CycleState state;
  PreFilterResult result;
  ASSERT_TRUE(pl.PreFilter(state, *pod, result).IsSuccess());
  EXPECT_EQ(pl.Filter(state, *pod, NodeWith({})), kRwopConflict);
}

TEST(VolumeRestrictionsTest, PreemptingTheClaimUserMakesRoom) {
  auto user = PodBuilder("user").UID("u1").PVC("rwop").Node("node-1").Obj();
  Env env({user});
  env.lister.Add(PVCBuilder("rwop").AccessModes({std::string(api::kReadWriteOncePod)}).Obj());
  auto pod = PodBuilder("new").PVC("rwop").Obj();
  CycleState state;
  PreFilterResult result;
  ASSERT_TRUE(env.pl.PreFilter(state, *pod, result).IsSuccess());
  cache::NodeInfo node = NodeWith({user});
  ASSERT_EQ(env.pl.Filter(state, *pod, node), kRwopConflict);

  const PreFilterExtensions* ext = env.pl.Extensions();
  ASSERT_NE(ext, nullptr);
  cache::PodEntry entry{.pod = user};
  // A clone taken before the removal keeps its own count.
  std::unique_ptr<CycleState> before = state.Clone();
  ASSERT_TRUE(ext->RemovePod(state, *pod, entry, node).IsSuccess());
  EXPECT_TRUE(env.pl.Filter(state, *pod, node).IsSuccess());
  EXPECT_EQ(env.pl.Filter(*before, *pod, node), kRwopConflict);
  ASSERT_TRUE(ext->AddPod(state, *pod, entry, node).IsSuccess());
  EXPECT_EQ(env.pl.Filter(state, *pod, node), kRwopConflict);
  // A pod without the claim changes nothing.
  cache::PodEntry other{.pod = PodBuilder("other").PVC("something-else").Obj()};
  ASSERT_TRUE(ext->RemovePod(state, *pod, other, node).IsSuccess());
  EXPECT_EQ(env.pl.Filter(state, *pod, node), kRwopConflict);
}

TEST(VolumeRestrictionsTest, FilterWithoutPreFilterState) {
  Env env;
  CycleState state;
  auto pod = PodWith(Gce("foo"));
  EXPECT_EQ(env.pl.Filter(state, *pod, NodeWith({})).code(), Code::kError);
  // A disk conflict is found before the state is needed.
  EXPECT_EQ(env.pl.Filter(state, *pod, NodeWith({PodWith(Gce("foo"))})), kDiskConflict);
}

TEST(VolumeRestrictionsTest, EventsToRegister) {
  Env env;
  auto events = env.pl.EventsToRegister();
  ASSERT_EQ(events.size(), 3u);
  const auto* pod = FindRegistration(events, EventResource::kPod);
  ASSERT_NE(pod, nullptr);
  EXPECT_EQ(pod->event.action_type, kDelete);
  EXPECT_TRUE(pod->hint_fn);
  const auto* node = FindRegistration(events, EventResource::kNode);
  ASSERT_NE(node, nullptr);
  EXPECT_EQ(node->event.action_type, kAdd);
  EXPECT_FALSE(node->hint_fn);
  const auto* pvc = FindRegistration(events, EventResource::kPersistentVolumeClaim);
  ASSERT_NE(pvc, nullptr);
  EXPECT_EQ(pvc->event.action_type, kAdd);
  EXPECT_TRUE(pvc->hint_fn);
}

TEST(VolumeRestrictionsTest, AssignedPodDeletedHint) {
  const std::string iqn1 = "iqn.2016-12.server:storage.target01", iqn2 = "iqn.2017-12.server:storage.target01";
  struct Case {
    std::string name;
    api::PodPtr pod, deleted;
    QueueingHint want;
  };
  const Case cases[] = {
      {"queue-new-object-gcedisk-conflict", PodWith(Gce("foo")), PodWith(Gce("foo")), QueueingHint::kQueue},
      {"skip-new-object-gcedisk-no-conflict", PodWith(Gce("foo")), PodWith(Gce("bar")), QueueingHint::kSkip},
      {"queue-new-object-awsdisk-conflict", PodWith(Aws("foo")), PodWith(Aws("foo")), QueueingHint::kQueue},
      {"skip-new-object-awsdisk-no-conflict", PodWith(Aws("foo")), PodWith(Aws("bar")), QueueingHint::kSkip},
      {"queue-new-object-rbddisk-conflict", PodWith(Rbd({"a", "b"})), PodWith(Rbd({"a", "b"})), QueueingHint::kQueue},
      {"skip-new-object-rbddisk-no-conflict", PodWith(Rbd({"a", "b"})), PodWith(Rbd({"c", "d"})), QueueingHint::kSkip},
      {"queue-new-object-iscsidisk-conflict", PodWith(Iscsi(iqn1)), PodWith(Iscsi(iqn1)), QueueingHint::kQueue},
      {"skip-new-object-iscsidisk-no-conflict", PodWith(Iscsi(iqn1)), PodWith(Iscsi(iqn2)), QueueingHint::kSkip},
      {"queue-has-same-claim", PodBuilder("pod1").PVC("claim-rwop").Obj(), PodBuilder("pod2").PVC("claim-rwop").Obj(),
       QueueingHint::kQueue},
      {"skip-no-same-claim", PodBuilder("pod1").PVC("claim-1-rwop").Obj(), PodBuilder("pod2").PVC("claim-2-rwop").Obj(),
       QueueingHint::kSkip},
      // Ours: upstream skips pods of other namespaces.
      {"skip-other-namespace", PodWith(Gce("foo")), PodBuilder("p").Namespace("other").Volume("v", Gce("foo")).Obj(),
       QueueingHint::kSkip},
  };
  Env env;
  const auto events = env.pl.EventsToRegister();
  const auto* e = FindRegistration(events, EventResource::kPod);
  ASSERT_NE(e, nullptr);
  for (const Case& c : cases) EXPECT_EQ(RunHint(*e, *c.pod, c.deleted.get(), nullptr), c.want) << c.name;
  EXPECT_FALSE(e->hint_fn(*cases[0].pod, nullptr, nullptr).ok());
}

TEST(VolumeRestrictionsTest, ClaimAddedHint) {
  auto pod_with_one_pvc = PodBuilder("pod-with-one-pvc").PVC("claim-with-rwx-1").Node("node-1").Obj();
  auto pod_with_two_pvcs =
      PodBuilder("pod-with-two-pvcs").PVC("claim-with-rwx-1").PVC("claim-with-rwx-2").Node("node-1").Obj();
  auto pod_other_namespace =
      PodBuilder("pod-with-one-pvc").Namespace("kube-system").PVC("claim-with-rwx-1").Node("claim-with-rwx-2").Obj();
  const auto pvc1 = PVCBuilder("claim-with-rwx-1").AccessModes({std::string(api::kReadWriteMany)}).Obj();
  const auto pvc2 = PVCBuilder("claim-with-rwx-2").AccessModes({std::string(api::kReadWriteMany)}).Obj();
  struct Case {
    std::string name;
    api::PodPtr pod;
    const api::PersistentVolumeClaim* added;
    QueueingHint want;
  };
  const Case cases[] = {
      {"queue-new-object-pvc-belong-pod", pod_with_two_pvcs, &pvc1, QueueingHint::kQueue},
      {"skip-new-object-unused", pod_with_one_pvc, &pvc2, QueueingHint::kSkip},
      {"skip-nil-old-object", pod_with_one_pvc, &pvc2, QueueingHint::kSkip},
      {"skip-new-object-not-belong-pod", pod_with_one_pvc, &pvc2, QueueingHint::kSkip},
      {"skip-new-object-namespace-not-equal-pod", pod_other_namespace, &pvc1, QueueingHint::kSkip},
  };
  Env env;
  const auto events = env.pl.EventsToRegister();
  const auto* e = FindRegistration(events, EventResource::kPersistentVolumeClaim);
  ASSERT_NE(e, nullptr);
  for (const Case& c : cases) EXPECT_EQ(RunHint(*e, *c.pod, nullptr, c.added), c.want) << c.name;
  EXPECT_FALSE(e->hint_fn(*pod_with_one_pvc, nullptr, nullptr).ok());
}

}  // namespace
}  // namespace ksched::framework::plugins::volumerestrictions
