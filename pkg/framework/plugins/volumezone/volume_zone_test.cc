// Table tests ported from upstream volume_zone_test.go (1.20.2 and current): TestSingleZone,
// TestMultiZone, TestWithBinding, TestIsSchedulableAfterPersistentVolumeClaimAdded,
// TestIsSchedulableAfterStorageClassAdded, TestIsSchedulableAfterPersistentVolumeChange.
// As upstream's tests, Filter also runs after a failed or skipped PreFilter: it then
// reads the volumes itself.
#include "pkg/framework/plugins/volumezone/volume_zone.h"

#include <gtest/gtest.h>

#include "pkg/framework/plugins/helper/volumes.h"
#include "tests/fakes/builders.h"
#include "tests/fakes/fake_cluster_lister.h"
#include "tests/fakes/fake_handle.h"
#include "tests/fakes/registrations.h"
#include "tests/fakes/storage_builders.h"

namespace ksched::framework::plugins::volumezone {
namespace {

using ksched::testing::FindRegistration;

using helper::kLabelFailureDomainBetaRegion;
using helper::kLabelFailureDomainBetaZone;
using helper::kLabelTopologyRegion;
using helper::kLabelTopologyZone;
using ksched::testing::FakeClusterLister;
using ksched::testing::FakeHandle;
using ksched::testing::NodeBuilder;
using ksched::testing::PodBuilder;
using ksched::testing::PVBuilder;
using ksched::testing::PVCBuilder;
using ksched::testing::StorageClassBuilder;

const Status kSkip(Code::kSkip);
const Status kConflict(Code::kUnschedulableAndUnresolvable, std::string(kErrReasonConflict));

api::PodPtr PodWithVolume(std::string pod, std::string pvc) {
  return PodBuilder(std::move(pod)).PVC(std::move(pvc)).Obj();
}

api::PersistentVolume Volume(std::string name, std::vector<std::pair<std::string_view, std::string>> labels) {
  PVBuilder b(std::move(name));
  for (auto& [k, v] : labels) b.Label(std::string(k), std::move(v));
  return b.Obj();
}

cache::NodeInfo Node(std::vector<std::pair<std::string_view, std::string>> labels) {
  NodeBuilder b("host1");
  for (auto& [k, v] : labels) b.Label(std::string(k), std::move(v));
  return cache::NodeInfo(b.Obj());
}

struct Case {
  std::string name;
  api::PodPtr pod;
  cache::NodeInfo node;
  Status want_prefilter;
  Status want_filter;
};

void RunCases(FakeClusterLister& lister, const std::vector<Case>& cases) {
  FakeHandle handle;
  handle.SetLister(&lister);
  VolumeZone pl(handle);
  for (const Case& c : cases) {
    CycleState state;
    PreFilterResult result;
    EXPECT_EQ(pl.PreFilter(state, *c.pod, result), c.want_prefilter) << c.name;
    EXPECT_EQ(pl.Filter(state, *c.pod, c.node), c.want_filter) << c.name;
  }
}

TEST(VolumeZoneTest, SingleZone) {
  FakeClusterLister lister;
  lister.Add(Volume("Vol_1", {{kLabelFailureDomainBetaZone, "us-west1-a"}}));
  lister.Add(Volume("Vol_2", {{kLabelFailureDomainBetaRegion, "us-west1"}, {"uselessLabel", "none"}}));
  lister.Add(Volume("Vol_3", {{kLabelFailureDomainBetaRegion, "us-west1"}}));
  lister.Add(Volume("Vol_Stable_1", {{kLabelTopologyZone, "us-west1-a"}}));
  lister.Add(Volume("Vol_Stable_2", {{kLabelTopologyRegion, "us-west1"}, {"uselessLabel", "none"}}));
  lister.Add(Volume("Vol_Stable_3", {{kLabelTopologyZone, "us-west1-a"}, {kLabelTopologyRegion, "us-west1-a"}}));
  for (const auto& [claim, volume] :
       std::vector<std::pair<std::string, std::string>>{{"PVC_1", "Vol_1"},
                                                        {"PVC_2", "Vol_2"},
                                                        {"PVC_3", "Vol_3"},
                                                        {"PVC_4", "Vol_not_exist"},
                                                        {"PVC_Stable_1", "Vol_Stable_1"},
                                                        {"PVC_Stable_2", "Vol_Stable_2"},
                                                        {"PVC_Stable_3", "Vol_Stable_3"}}) {
    lister.Add(PVCBuilder(claim).VolumeName(volume).Obj());
  }
  RunCases(lister,
           {
               {"pod without volume",
                PodBuilder("pod_1").Obj(),
                Node({{kLabelFailureDomainBetaZone, "us-west1-a"}}),
                kSkip,
                {}},
               {"node without labels", PodWithVolume("pod_1", "PVC_1"), Node({}), {}, {}},
               {"beta zone label matched",
                PodWithVolume("pod_1", "PVC_1"),
                Node({{kLabelFailureDomainBetaZone, "us-west1-a"}, {"uselessLabel", "none"}}),
                {},
                {}},
               {"beta region label matched",
                PodWithVolume("pod_1", "PVC_2"),
                Node({{kLabelFailureDomainBetaRegion, "us-west1"}, {"uselessLabel", "none"}}),
                {},
                {}},
               {"beta region label doesn't match",
                PodWithVolume("pod_1", "PVC_2"),
                Node({{kLabelFailureDomainBetaRegion, "no_us-west1"}, {"uselessLabel", "none"}}),
                {},
                kConflict},
               {"beta zone label doesn't match",
                PodWithVolume("pod_1", "PVC_1"),
                Node({{kLabelFailureDomainBetaZone, "no_us-west1-a"}, {"uselessLabel", "none"}}),
                {},
                kConflict},
               {"zone label matched",
                PodWithVolume("pod_1", "PVC_Stable_1"),
                Node({{kLabelTopologyZone, "us-west1-a"}, {"uselessLabel", "none"}}),
                {},
                {}},
               {"region label matched",
                PodWithVolume("pod_1", "PVC_Stable_2"),
                Node({{kLabelTopologyRegion, "us-west1"}, {"uselessLabel", "none"}}),
                {},
                {}},
               {"region label doesn't match",
                PodWithVolume("pod_1", "PVC_Stable_2"),
                Node({{kLabelTopologyRegion, "no_us-west1"}, {"uselessLabel", "none"}}),
                {},
                kConflict},
               {"zone label doesn't match",
                PodWithVolume("pod_1", "PVC_Stable_1"),
                Node({{kLabelTopologyZone, "no_us-west1-a"}, {"uselessLabel", "none"}}),
                {},
                kConflict},
               {"pv with zone and region, node with only zone",
                PodWithVolume("pod_1", "PVC_Stable_3"),
                Node({{kLabelTopologyZone, "us-west1-a"}}),
                {},
                kConflict},
               {"pv with zone,node with beta zone",
                PodWithVolume("pod_1", "PVC_Stable_1"),
                Node({{kLabelFailureDomainBetaZone, "us-west1-a"}}),
                {},
                kConflict},
               {"pv with beta label,node with ga label, matched",
                PodWithVolume("pod_1", "PVC_1"),
                Node({{kLabelTopologyZone, "us-west1-a"}}),
                {},
                {}},
               {"pv with beta label,node with ga label, don't match",
                PodWithVolume("pod_1", "PVC_1"),
                Node({{kLabelTopologyZone, "us-west1-b"}}),
                {},
                kConflict},
               // Ours: the missing objects.
               {"volume not found", PodWithVolume("pod_1", "PVC_4"), Node({{kLabelTopologyZone, "us-west1-a"}}),
                Status(Code::kUnschedulableAndUnresolvable, "persistentvolume \"Vol_not_exist\" not found"),
                Status(Code::kUnschedulableAndUnresolvable, "persistentvolume \"Vol_not_exist\" not found")},
               {"claim not found", PodWithVolume("pod_1", "PVC_missing"), Node({{kLabelTopologyZone, "us-west1-a"}}),
                Status(Code::kUnschedulableAndUnresolvable, "persistentvolumeclaim \"PVC_missing\" not found"),
                Status(Code::kUnschedulableAndUnresolvable, "persistentvolumeclaim \"PVC_missing\" not found")},
           });
}

TEST(VolumeZoneTest, MultiZone) {
  FakeClusterLister lister;
  lister.Add(Volume("Vol_1", {{kLabelFailureDomainBetaZone, "us-west1-a"}}));
  lister.Add(Volume("Vol_2", {{kLabelFailureDomainBetaZone, "us-west1-b"}, {"uselessLabel", "none"}}));
  lister.Add(Volume("Vol_3", {{kLabelFailureDomainBetaZone, "us-west1-c__us-west1-a"}}));
  lister.Add(Volume("Vol_Stable_1", {{kLabelTopologyZone, "us-west1-a"}}));
  lister.Add(Volume("Vol_Stable_2", {{kLabelTopologyZone, "us-west1-c__us-west1-a"}}));
  // Ours: a label that does not parse is ignored.
  lister.Add(Volume("Vol_Bad", {{kLabelTopologyZone, "us-west1-c__"}}));
  for (const auto& [claim, volume] : std::vector<std::pair<std::string, std::string>>{{"PVC_1", "Vol_1"},
                                                                                      {"PVC_2", "Vol_2"},
                                                                                      {"PVC_3", "Vol_3"},
                                                                                      {"PVC_4", "Vol_not_exist"},
                                                                                      {"PVC_Stable_1", "Vol_Stable_1"},
                                                                                      {"PVC_Stable_2", "Vol_Stable_2"},
                                                                                      {"PVC_Bad", "Vol_Bad"}}) {
    lister.Add(PVCBuilder(claim).VolumeName(volume).Obj());
  }
  RunCases(lister, {
                       {"node without labels", PodWithVolume("pod_1", "PVC_3"), Node({}), {}, {}},
                       {"beta zone label matched",
                        PodWithVolume("pod_1", "PVC_3"),
                        Node({{kLabelFailureDomainBetaZone, "us-west1-a"}, {"uselessLabel", "none"}}),
                        {},
                        {}},
                       {"beta zone label doesn't match",
                        PodWithVolume("pod_1", "PVC_1"),
                        Node({{kLabelFailureDomainBetaZone, "us-west1-b"}, {"uselessLabel", "none"}}),
                        {},
                        kConflict},
                       {"zone label matched",
                        PodWithVolume("pod_1", "PVC_Stable_2"),
                        Node({{kLabelTopologyZone, "us-west1-a"}, {"uselessLabel", "none"}}),
                        {},
                        {}},
                       {"zone label doesn't match",
                        PodWithVolume("pod_1", "PVC_Stable_1"),
                        Node({{kLabelTopologyZone, "us-west1-b"}, {"uselessLabel", "none"}}),
                        {},
                        kConflict},
                       {"unparsable volume label is ignored",
                        PodWithVolume("pod_1", "PVC_Bad"),
                        Node({{kLabelTopologyZone, "us-west1-b"}}),
                        kSkip,
                        {}},
                       // Ours: every volume of the pod must fit.
                       {"second volume doesn't match",
                        PodBuilder("pod_1").PVC("PVC_Stable_2").PVC("PVC_2").Obj(),
                        Node({{kLabelTopologyZone, "us-west1-a"}}),
                        {},
                        kConflict},
                   });
}

TEST(VolumeZoneTest, WithBinding) {
  FakeClusterLister lister;
  lister.Add(StorageClassBuilder("Class_Immediate").Obj());
  lister.Add(StorageClassBuilder("Class_Wait").WaitForFirstConsumer().Obj());
  // Upstream's class without volumeBindingMode (the API server always sets one).
  api::StorageClass unset = StorageClassBuilder("Class_Unset").Obj();
  unset.volume_binding_mode.clear();
  lister.Add(unset);
  lister.Add(Volume("Vol_1", {{kLabelFailureDomainBetaZone, "us-west1-a"}}));
  lister.Add(PVCBuilder("PVC_1").VolumeName("Vol_1").Obj());
  lister.Add(PVCBuilder("PVC_NoSC").Class("Class_0").Obj());
  lister.Add(PVCBuilder("PVC_EmptySC").Obj());
  lister.Add(PVCBuilder("PVC_WaitSC").Class("Class_Wait").Obj());
  lister.Add(PVCBuilder("PVC_ImmediateSC").Class("Class_Immediate").Obj());
  lister.Add(PVCBuilder("PVC_UnsetSC").Class("Class_Unset").Obj());
  lister.Add(PVCBuilder("PVC_BetaWaitSC").Annotation(api::kAnnBetaStorageClass, "Class_Wait").Obj());

  const cache::NodeInfo node = Node({{kLabelFailureDomainBetaZone, "us-west1-a"}, {"uselessLabel", "none"}});
  auto uu = [](std::string m) { return Status(Code::kUnschedulableAndUnresolvable, std::move(m)); };
  RunCases(lister, {
                       {"label zone failure domain matched", PodWithVolume("pod_1", "PVC_1"), node, {}, {}},
                       {"unbound volume empty storage class", PodWithVolume("pod_1", "PVC_EmptySC"), node,
                        uu("PersistentVolumeClaim had no pv name and storageClass name"),
                        uu("PersistentVolumeClaim had no pv name and storageClass name")},
                       {"unbound volume no storage class", PodWithVolume("pod_1", "PVC_NoSC"), node,
                        uu("storageclass.storage.k8s.io \"Class_0\" not found"),
                        uu("storageclass.storage.k8s.io \"Class_0\" not found")},
                       {"unbound volume unset binding mode", PodWithVolume("pod_1", "PVC_UnsetSC"), node,
                        uu("VolumeBindingMode not set for StorageClass \"Class_Unset\""),
                        uu("VolumeBindingMode not set for StorageClass \"Class_Unset\"")},
                       // Upstream's "immediate binding mode" case names a class without a mode; a class
                       // that binds immediately fails as the claim should have been bound already.
                       {"unbound volume immediate binding mode", PodWithVolume("pod_1", "PVC_ImmediateSC"), node,
                        uu("PersistentVolume had no name"), uu("PersistentVolume had no name")},
                       {"unbound volume wait binding mode", PodWithVolume("pod_1", "PVC_WaitSC"), node, kSkip, {}},
                       {"beta class annotation wins", PodWithVolume("pod_1", "PVC_BetaWaitSC"), node, kSkip, {}},
                   });
}

TEST(VolumeZoneTest, GenericEphemeralVolumesAreNotChecked) {
  FakeClusterLister lister;  // no claim at all
  RunCases(lister,
           {{"ephemeral", PodBuilder("p").EphemeralVolume("v").Obj(), Node({{kLabelTopologyZone, "a"}}), kSkip, {}}});
}

using HintEnv = ksched::testing::RegisteredPlugin<VolumeZone>;

TEST(VolumeZoneTest, EventsToRegister) {
  HintEnv env;
  ASSERT_EQ(env.events.size(), 4u);
  EXPECT_EQ(FindRegistration(env.events, EventResource::kStorageClass)->event.action_type, kAdd);
  EXPECT_EQ(FindRegistration(env.events, EventResource::kNode)->event.action_type, kAdd | kUpdateNodeLabel);
  EXPECT_FALSE(FindRegistration(env.events, EventResource::kNode)->hint_fn);
  EXPECT_EQ(FindRegistration(env.events, EventResource::kPersistentVolumeClaim)->event.action_type, kAdd | kUpdate);
  EXPECT_EQ(FindRegistration(env.events, EventResource::kPersistentVolume)->event.action_type, kAdd | kUpdate);
}

TEST(VolumeZoneTest, ClaimChangedHint) {
  const auto pvc1 = PVCBuilder("PVC_1").VolumeName("Vol_1").Obj();
  const auto pvc1_unbound = PVCBuilder("PVC_1").Obj();
  const auto pvc1_ns1 = PVCBuilder("PVC_1", "ns1").VolumeName("Vol_1").Obj();
  struct Case {
    std::string name;
    api::PodPtr pod;
    const api::PersistentVolumeClaim *old_obj, *new_obj;
    QueueingHint want;
  };
  const Case cases[] = {
      {"pvc-was-added-but-pod-refers-no-pvc", PodBuilder("pod_1").Obj(), nullptr, &pvc1, QueueingHint::kSkip},
      {"pvc-was-added-and-pod-was-bound-to-different-pvc", PodWithVolume("pod_1", "PVC_2"), nullptr, &pvc1,
       QueueingHint::kSkip},
      {"pvc-was-added-and-pod-was-bound-to-pvc-but-different-ns", PodWithVolume("pod_1", "PVC_1"), nullptr, &pvc1_ns1,
       QueueingHint::kSkip},
      {"pvc-was-added-and-pod-was-bound-to-the-pvc", PodWithVolume("pod_1", "PVC_1"), nullptr, &pvc1,
       QueueingHint::kQueue},
      {"pvc-was-updated-and-pod-was-bound-to-the-pvc", PodWithVolume("pod_1", "PVC_1"), &pvc1_unbound, &pvc1,
       QueueingHint::kQueue},
      {"pvc-was-updated-but-pod-refers-no-pvc", PodBuilder("pod_1").Obj(), &pvc1_unbound, &pvc1, QueueingHint::kSkip},
  };
  HintEnv env;
  for (const Case& c : cases) {
    auto got = env.HintOrError(EventResource::kPersistentVolumeClaim, *c.pod, c.old_obj, c.new_obj);
    ASSERT_TRUE(got.ok()) << c.name;
    EXPECT_EQ(*got, c.want) << c.name;
  }
  // "error-wrong-new-object": no claim at all.
  EXPECT_FALSE(
      env.HintOrError(EventResource::kPersistentVolumeClaim, *PodWithVolume("pod_1", "PVC_1"), nullptr, nullptr).ok());
}

TEST(VolumeZoneTest, StorageClassAddedHint) {
  HintEnv env;
  auto pod = PodWithVolume("pod_1", "PVC_1");
  api::StorageClass no_mode = StorageClassBuilder("SC_1").Obj();
  no_mode.volume_binding_mode.clear();
  const api::StorageClass immediate = StorageClassBuilder("SC_1").Obj();
  const api::StorageClass wait = StorageClassBuilder("SC_1").WaitForFirstConsumer().Obj();
  EXPECT_EQ(*env.HintOrError(EventResource::kStorageClass, *pod, nullptr, &no_mode), QueueingHint::kSkip);
  EXPECT_EQ(*env.HintOrError(EventResource::kStorageClass, *pod, nullptr, &immediate), QueueingHint::kSkip);
  EXPECT_EQ(*env.HintOrError(EventResource::kStorageClass, *pod, nullptr, &wait), QueueingHint::kQueue);
  EXPECT_FALSE(env.HintOrError(EventResource::kStorageClass, *pod, nullptr, nullptr).ok());
}

TEST(VolumeZoneTest, VolumeChangedHint) {
  auto pod = PodWithVolume("pod_1", "PVC_1");
  const auto zone_a = Volume("Vol_1", {{kLabelFailureDomainBetaZone, "us-west1-a"}});
  const auto zone_b = Volume("Vol_1", {{kLabelFailureDomainBetaZone, "us-west1-b"}});
  const auto zone_a_and_ga =
      Volume("Vol_1", {{kLabelFailureDomainBetaZone, "us-west1-a"}, {kLabelTopologyZone, "zone"}});
  auto zone_a_and_ga_relabeled = zone_a_and_ga;
  zone_a_and_ga_relabeled.metadata.labels.Set("unrelated", "x");
  struct Case {
    std::string name;
    const api::PersistentVolume *old_obj, *new_obj;
    QueueingHint want;
  };
  const Case cases[] = {
      {"new-pv-was-added", nullptr, &zone_b, QueueingHint::kQueue},
      {"pv-was-updated-and-changed-topology", &zone_a, &zone_b, QueueingHint::kQueue},
      {"pv-was-updated-and-added-topology-label", &zone_a, &zone_a_and_ga, QueueingHint::kQueue},
      {"pv-was-updated-but-no-topology-is-changed", &zone_a_and_ga, &zone_a_and_ga, QueueingHint::kSkip},
      {"pv-was-updated-with-another-label", &zone_a_and_ga, &zone_a_and_ga_relabeled, QueueingHint::kSkip},
  };
  HintEnv env;
  for (const Case& c : cases) {
    auto got = env.HintOrError(EventResource::kPersistentVolume, *pod, c.old_obj, c.new_obj);
    ASSERT_TRUE(got.ok()) << c.name;
    EXPECT_EQ(*got, c.want) << c.name;
  }
  // "error-wrong-new-object".
  EXPECT_FALSE(env.HintOrError(EventResource::kPersistentVolume, *pod, nullptr, nullptr).ok());
}

}  // namespace
}  // namespace ksched::framework::plugins::volumezone
