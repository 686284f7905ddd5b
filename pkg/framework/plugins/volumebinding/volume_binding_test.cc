// upstream volumebinding/volume_binding_test.go (TestVolumeBinding, the queueing hint
// tests) plus the plugin's Reserve / Unreserve and two pods racing for one volume.
#include "pkg/framework/plugins/volumebinding/volume_binding.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "pkg/framework/plugins/volumebinding/test_util.h"
#include "tests/fakes/fake_handle.h"

namespace ksched::framework::plugins::volumebinding {
namespace {

using namespace testutil;  // NOLINT
using testing::FakeHandle;

const std::string kHostname = "kubernetes.io/hostname";

// upstream volume_binding_test.go's fixtures: claims in "default" without access modes,
// volumes without capacity, nodes labelled with their hostname.
api::PersistentVolumeClaimPtr PVC(const std::string& name, const std::string& cls) {
  return PVCBuilder(name).Class(cls).AccessModes({}).Ptr();
}
api::PersistentVolumeClaimPtr BoundPVC(const std::string& name, const std::string& cls, const std::string& pv) {
  return PVCBuilder(name).Class(cls).AccessModes({}).BoundTo(pv).Ptr();
}
api::NodePtr HostNode(const std::string& name) { return NodeBuilder(name).Hostname().Obj(); }
api::Pod PodWith(const std::vector<std::string>& claims) {
  PodBuilder b("pod-a");
  b.UID("pod-a-uid");
  for (const std::string& c : claims) b.PVC(c);
  return b.Build();
}

struct Env {
  FakeClusterLister lister;
  FakeHandle handle;
  std::unique_ptr<VolumeBinding> plugin;

  explicit Env(std::vector<api::NodePtr> nodes = {}) {
    lister.Add(StorageClassBuilder("immediate-sc").Obj());
    lister.Add(StorageClassBuilder("wait-sc").WaitForFirstConsumer().Provisioner("").Obj());
    lister.Add(StorageClassBuilder("wait-hdd-sc").WaitForFirstConsumer().Provisioner("").Obj());
    handle.SetLister(&lister);
    handle.SetSnapshot(cache::Snapshot::FromObjects(nodes, {}));
    plugin = std::make_unique<VolumeBinding>(handle, config::VolumeBindingArgs{.bind_timeout_seconds = 300});
  }

  const cache::NodeInfo& Node(const std::string& name) const { return *handle.Snapshot().Get(name); }
};

const Status kBindConflict(Code::kUnschedulableAndUnresolvable, std::string(kErrReasonBindConflict));

// upstream TestVolumeBinding, less the capacity-scoring expectations (the feature gate
// behind them is off by default) and the PreFilterResult of GetEligibleNodes (removed
// upstream, since node names and hostname labels may differ).
TEST(VolumeBinding, PreFilterAndFilter) {
  struct Case {
    std::string name;
    api::Pod pod;
    std::vector<api::NodePtr> nodes;
    std::vector<api::PersistentVolumeClaimPtr> pvcs;
    std::vector<api::PersistentVolumePtr> pvs;
    Status want_prefilter;
    std::vector<Status> want_filter;
  };
  auto local = [](std::string name, std::string cls, std::string capacity, std::string node) {
    return PVBuilder(std::move(name)).Class(std::move(cls)).Capacity(capacity).NodeAffinityIn(kHostname, {node}).Ptr();
  };
  auto zonal = [](std::string name, std::string capacity, std::string region, std::string zone) {
    PVBuilder b(std::move(name));
    b.Class("wait-sc").Capacity(capacity);
    api::PersistentVolume pv = b.Obj();
    api::NodeSelectorTerm term;
    term.match_expressions.push_back({"topology.kubernetes.io/region", api::SelectorOperator::kIn, {region}});
    term.match_expressions.push_back({"topology.kubernetes.io/zone", api::SelectorOperator::kIn, {zone}});
    pv.node_affinity = std::vector<api::NodeSelectorTerm>{term};
    return std::make_shared<const api::PersistentVolume>(pv);
  };
  auto zone_node = [](std::string name, std::string region, std::string zone) {
    return NodeBuilder(name)
        .Hostname()
        .Label("topology.kubernetes.io/region", region)
        .Label("topology.kubernetes.io/zone", zone)
        .Obj();
  };
  const std::vector<Case> cases = {
      {"pod has not pvcs", PodBuilder("pod-a").Build(), {HostNode("node-a")}, {}, {}, Status(Code::kSkip), {}},
      {"all bound",
       PodWith({"pvc-a"}),
       {HostNode("node-a")},
       {BoundPVC("pvc-a", "wait-sc", "pv-a")},
       {PVBuilder("pv-a").Class("wait-sc").Ptr()},
       Status(),
       {Status()}},
      {"all bound with local volumes",
       PodWith({"pvc-a", "pvc-b"}),
       {HostNode("node-a")},
       {BoundPVC("pvc-a", "wait-sc", "pv-a"), BoundPVC("pvc-b", "wait-sc", "pv-b")},
       {PVBuilder("pv-a").Class("wait-sc").Phase(api::kVolumeBound).NodeAffinityIn(kHostname, {"node-a"}).Ptr(),
        PVBuilder("pv-b").Class("wait-sc").Phase(api::kVolumeBound).NodeAffinityIn(kHostname, {"node-a"}).Ptr()},
       Status(),
       {Status()}},
      {"PVC does not exist",
       PodWith({"pvc-a"}),
       {HostNode("node-a")},
       {},
       {},
       Status(Code::kUnschedulableAndUnresolvable, "persistentvolumeclaim \"pvc-a\" not found"),
       {}},
      {"Part of PVCs do not exist",
       PodWith({"pvc-a", "pvc-b"}),
       {HostNode("node-a")},
       {BoundPVC("pvc-a", "wait-sc", "pv-a")},
       {},
       Status(Code::kUnschedulableAndUnresolvable, "persistentvolumeclaim \"pvc-b\" not found"),
       {}},
      {"immediate claims not bound",
       PodWith({"pvc-a"}),
       {HostNode("node-a")},
       {PVC("pvc-a", "immediate-sc")},
       {},
       Status(Code::kUnschedulableAndUnresolvable, "pod has unbound immediate PersistentVolumeClaims"),
       {}},
      {"unbound claims no matches",
       PodWith({"pvc-a"}),
       {HostNode("node-a")},
       {PVC("pvc-a", "wait-sc")},
       {},
       Status(),
       {kBindConflict}},
      {"bound and unbound unsatisfied",
       PodWith({"pvc-a", "pvc-b"}),
       {NodeBuilder("node-a").Hostname().Label("foo", "barbar").Obj()},
       {BoundPVC("pvc-a", "wait-sc", "pv-a"), PVC("pvc-b", "wait-sc")},
       {PVBuilder("pv-a").Class("wait-sc").NodeAffinityIn("foo", {"bar"}).Ptr()},
       Status(),
       {Status(Code::kUnschedulableAndUnresolvable,
               std::vector<std::string>{std::string(kErrReasonNodeConflict), std::string(kErrReasonBindConflict)})}},
      {"pv not found",
       PodWith({"pvc-a"}),
       {HostNode("node-a")},
       {BoundPVC("pvc-a", "wait-sc", "pv-a")},
       {},
       Status(),
       {Status(Code::kUnschedulableAndUnresolvable,
               "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)")}},
      {"pv not found claim lost",
       PodWith({"pvc-a"}),
       {HostNode("node-a")},
       {PVCBuilder("pvc-a").Class("wait-sc").AccessModes({}).BoundTo("pv-a").Phase(api::kClaimLost).Ptr()},
       {},
       Status(Code::kUnschedulableAndUnresolvable,
              "persistentvolumeclaim \"pvc-a\" bound to non-existent persistentvolume \"pv-a\""),
       {}},
      {"local volumes with close capacity are preferred",
       PodWith({"pvc-a"}),
       {HostNode("node-a"), HostNode("node-b"), HostNode("node-c")},
       {PVCBuilder("pvc-a").Class("wait-sc").AccessModes({}).Request("50Gi").Ptr()},
       {local("pv-a-0", "wait-sc", "200Gi", "node-a"), local("pv-a-1", "wait-sc", "200Gi", "node-a"),
        local("pv-b-0", "wait-sc", "100Gi", "node-b"), local("pv-b-1", "wait-sc", "100Gi", "node-b")},
       Status(),
       {Status(), Status(), kBindConflict}},
      {"local volumes with close capacity are preferred (multiple pvcs)",
       PodWith({"pvc-0", "pvc-1"}),
       {HostNode("node-a"), HostNode("node-b"), HostNode("node-c")},
       {PVCBuilder("pvc-0").Class("wait-sc").AccessModes({}).Request("50Gi").Ptr(),
        PVCBuilder("pvc-1").Class("wait-hdd-sc").AccessModes({}).Request("100Gi").Ptr()},
       {local("pv-a-0", "wait-sc", "200Gi", "node-a"), local("pv-a-1", "wait-sc", "200Gi", "node-a"),
        local("pv-a-2", "wait-hdd-sc", "200Gi", "node-a"), local("pv-a-3", "wait-hdd-sc", "200Gi", "node-a"),
        local("pv-b-0", "wait-sc", "100Gi", "node-b"), local("pv-b-1", "wait-sc", "100Gi", "node-b"),
        local("pv-b-2", "wait-hdd-sc", "100Gi", "node-b"), local("pv-b-3", "wait-hdd-sc", "100Gi", "node-b")},
       Status(),
       {Status(), Status(), kBindConflict}},
      {"zonal volumes with close capacity are preferred",
       PodWith({"pvc-a"}),
       {zone_node("zone-a-node-a", "region-a", "zone-a"), zone_node("zone-a-node-b", "region-a", "zone-a"),
        zone_node("zone-b-node-a", "region-b", "zone-b"), zone_node("zone-b-node-b", "region-b", "zone-b"),
        zone_node("zone-c-node-a", "region-c", "zone-c"), zone_node("zone-c-node-b", "region-c", "zone-c")},
       {PVCBuilder("pvc-a").Class("wait-sc").AccessModes({}).Request("50Gi").Ptr()},
       {zonal("pv-a-0", "200Gi", "region-a", "zone-a"), zonal("pv-a-1", "200Gi", "region-a", "zone-a"),
        zonal("pv-b-0", "100Gi", "region-b", "zone-b"), zonal("pv-b-1", "100Gi", "region-b", "zone-b")},
       Status(),
       {Status(), Status(), Status(), Status(), kBindConflict, kBindConflict}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Env env(c.nodes);
    AddAll(env.lister, c.pvcs, c.pvs);
    CycleState state;
    PreFilterResult result;
    Status got = env.plugin->PreFilter(state, c.pod, result);
    EXPECT_EQ(got, c.want_prefilter) << got.ToString();
    EXPECT_TRUE(result.AllNodes());
    if (!got.IsSuccess()) continue;
    ASSERT_EQ(c.want_filter.size(), c.nodes.size());
    for (size_t i = 0; i < c.nodes.size(); ++i) {
      Status f = env.plugin->Filter(state, c.pod, env.Node(c.nodes[i]->Name()));
      EXPECT_EQ(f, c.want_filter[i]) << c.nodes[i]->Name() << ": " << f.ToString();
    }
    // Capacity scoring is off: PreScore skips, Score is 0.
    EXPECT_TRUE(env.plugin->PreScore(state, c.pod, env.handle.Snapshot().List()).IsSkip());
    int64_t score = -1;
    EXPECT_TRUE(env.plugin->Score(state, c.pod, env.Node(c.nodes[0]->Name()), score).IsSuccess());
    EXPECT_EQ(score, 0);
  }
}

TEST(VolumeBinding, PreFilterState) {
  Env env({HostNode("node-a")});
  AddAll(env.lister, {BoundPVC("pvc-a", "wait-sc", "pv-a"), PVC("pvc-b", "wait-sc")},
         {PVBuilder("pv-a").Class("wait-sc").ClaimRef("default", "pvc-a").Ptr(),
          PVBuilder("pv-b").Class("wait-sc").Capacity("1Gi").Ptr()});
  CycleState state;
  PreFilterResult result;
  ASSERT_TRUE(env.plugin->PreFilter(state, PodWith({"pvc-a", "pvc-b"}), result).IsSuccess());
  const PreFilterState* s = state.Read<PreFilterState>(kStateKey);
  ASSERT_NE(s, nullptr);
  EXPECT_FALSE(s->NeededForBinding());
  ASSERT_EQ(s->claims->bound.size(), 1u);
  EXPECT_EQ(s->claims->bound[0].claim->Name(), "pvc-a");
  ASSERT_NE(s->claims->bound[0].volume, nullptr);
  ASSERT_EQ(s->claims->unbound.size(), 1u);
  EXPECT_EQ(s->claims->unbound[0].claim->Name(), "pvc-b");
  ASSERT_EQ(s->claims->unbound[0].candidates.size(), 1u);
  EXPECT_EQ(s->claims->unbound[0].candidates[0]->pv->Name(), "pv-b");

  // Clones (preemption's what-if runs) share the immutable claims.
  std::unique_ptr<CycleState> clone = state.Clone();
  EXPECT_EQ(clone->Read<PreFilterState>(kStateKey)->claims, s->claims);
  // Only Reserve's bindings outlive the scheduling cycle.
  state.DropSchedulingOnlyData();
  EXPECT_EQ(state.Read<PreFilterState>(kStateKey), nullptr);
}

TEST(VolumeBinding, PreFilterClaimProblems) {
  struct Case {
    std::string name;
    api::Pod pod;
    std::vector<api::PersistentVolumeClaimPtr> pvcs;
    std::string want;
  };
  api::Pod ephemeral = PodBuilder("pod-a").UID("pod-a-uid").EphemeralVolume("scratch").Build();
  const std::vector<Case> cases = {
      {"claim being deleted",
       PodWith({"pvc-a"}),
       {PVCBuilder("pvc-a").Class("wait-sc").BeingDeleted().Ptr()},
       "persistentvolumeclaim \"pvc-a\" is being deleted"},
      {"ephemeral claim not created yet",
       ephemeral,
       {},
       "waiting for ephemeral volume controller to create the persistentvolumeclaim \"pod-a-scratch\""},
      {"ephemeral claim of another pod",
       ephemeral,
       {PVCBuilder("pod-a-scratch").Class("wait-sc").OwnedBy("Pod", "pod-a", "older-pod-a-uid").Ptr()},
       "PVC default/pod-a-scratch was not created for pod default/pod-a (pod is not owner)"},
      {"ephemeral claim without owner",
       ephemeral,
       {PVCBuilder("pod-a-scratch").Class("wait-sc").Ptr()},
       "PVC default/pod-a-scratch was not created for pod default/pod-a (pod is not owner)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Env env({HostNode("node-a")});
    AddAll(env.lister, c.pvcs, {});
    CycleState state;
    PreFilterResult result;
    EXPECT_EQ(env.plugin->PreFilter(state, c.pod, result), Status(Code::kUnschedulableAndUnresolvable, c.want));
  }

  // The pod's own ephemeral claim is fine.
  Env env({HostNode("node-a")});
  env.lister.Add(
      PVCBuilder("pod-a-scratch").Class("wait-sc").OwnedBy("Pod", "pod-a", "pod-a-uid").AccessModes({}).Obj());
  env.lister.Add(PVBuilder("pv").Class("wait-sc").Obj());
  CycleState state;
  PreFilterResult result;
  EXPECT_TRUE(env.plugin->PreFilter(state, ephemeral, result).IsSuccess());
  EXPECT_TRUE(env.plugin->Filter(state, ephemeral, env.Node("node-a")).IsSuccess());
}

// ---- Reserve / Unreserve ---------------------------------------------------------------------

struct Cycle {
  Status prefilter, filter, reserve;
  std::unique_ptr<CycleState> state = std::make_unique<CycleState>();
  const BindingState* bindings() const { return state->Read<BindingState>(kBindingStateKey); }
  std::string chosen_volume() const {
    const BindingState* b = bindings();
    return b != nullptr && b->volumes.static_bindings.size() == 1 ? b->volumes.static_bindings[0].pv->Name() : "";
  }
};

Cycle ScheduleOn(VolumeBinding& plugin, const cache::NodeInfo& node, const api::Pod& pod) {
  Cycle c;
  PreFilterResult result;
  c.prefilter = plugin.PreFilter(*c.state, pod, result);
  if (!c.prefilter.IsSuccess()) return c;
  c.filter = plugin.Filter(*c.state, pod, node);
  if (!c.filter.IsSuccess()) return c;
  c.reserve = plugin.Reserve(*c.state, pod, node.node()->Name());
  return c;
}

TEST(VolumeBinding, ReserveAssumesAndUnreserveForgets) {
  Env env({HostNode("node-a")});
  AddAll(env.lister, {PVC("pvc-a", "wait-sc"), PVC("pvc-b", "wait-sc")},
         {PVBuilder("pv-1").Class("wait-sc").Capacity("1Gi").Ptr()});
  api::Pod a = PodWith({"pvc-a"});
  api::Pod b = PodBuilder("pod-b").UID("pod-b-uid").PVC("pvc-b").Build();

  Cycle first = ScheduleOn(*env.plugin, env.Node("node-a"), a);
  ASSERT_TRUE(first.reserve.IsSuccess()) << first.reserve.ToString();
  ASSERT_NE(first.bindings(), nullptr);
  EXPECT_TRUE(first.bindings()->NeededForBinding());
  EXPECT_FALSE(first.bindings()->all_bound);
  EXPECT_EQ(first.chosen_volume(), "pv-1");
  EXPECT_TRUE(env.plugin->PreBindPreFlight(*first.state, a, "node-a").IsSuccess());
  api::PersistentVolumePtr assumed = env.plugin->assume_cache().Volume(env.lister, "pv-1");
  ASSERT_TRUE(assumed->claim_ref.has_value());
  EXPECT_EQ(assumed->claim_ref->name, "pvc-a");
  EXPECT_EQ(*assumed->annotations.Get(api::kAnnBoundByController), "yes");
  EXPECT_EQ(env.lister.Volume("pv-1")->claim_ref, std::nullopt);  // nothing written yet

  // The next pod must not take the volume the first one assumed.
  Cycle second = ScheduleOn(*env.plugin, env.Node("node-a"), b);
  EXPECT_EQ(second.filter, kBindConflict);

  // Once the first pod's binding is undone, the volume is free again.
  env.plugin->Unreserve(*first.state, a, "node-a");
  env.plugin->Unreserve(*first.state, a, "node-a");  // idempotent
  Cycle third = ScheduleOn(*env.plugin, env.Node("node-a"), b);
  ASSERT_TRUE(third.reserve.IsSuccess());
  EXPECT_EQ(third.chosen_volume(), "pv-1");
}

TEST(VolumeBinding, AssumedVolumeFreedWhenListerMovesOn) {
  Env env({HostNode("node-a")});
  AddAll(env.lister, {PVC("pvc-a", "wait-sc"), PVC("pvc-b", "wait-sc")},
         {PVBuilder("pv-1").Class("wait-sc").Capacity("1Gi").ResourceVersion("7").Ptr()});
  Cycle first = ScheduleOn(*env.plugin, env.Node("node-a"), PodWith({"pvc-a"}));
  ASSERT_TRUE(first.reserve.IsSuccess());
  api::Pod b = PodBuilder("pod-b").UID("pod-b-uid").PVC("pvc-b").Build();

  // An informer resync at the same version keeps the assumption.
  env.lister.Add(PVBuilder("pv-1").Class("wait-sc").Capacity("1Gi").ResourceVersion("7").Obj());
  EXPECT_EQ(ScheduleOn(*env.plugin, env.Node("node-a"), b).filter, kBindConflict);
  // A newer version from the server replaces it (upstream AssumeCache semantics), here
  // one that shows the volume still free.
  env.lister.Add(PVBuilder("pv-1").Class("wait-sc").Capacity("1Gi").ResourceVersion("8").Obj());
  Cycle again = ScheduleOn(*env.plugin, env.Node("node-a"), b);
  ASSERT_TRUE(again.reserve.IsSuccess());
  EXPECT_EQ(again.chosen_volume(), "pv-1");
}

TEST(VolumeBinding, ReserveProvisioningAnnotatesClaim) {
  Env env({HostNode("node-a")});
  env.lister.Add(StorageClassBuilder("fast").WaitForFirstConsumer().Provisioner("csi.example.com").Obj());
  AddAll(env.lister, {PVC("pvc-a", "fast")}, {});
  api::Pod pod = PodWith({"pvc-a"});
  Cycle c = ScheduleOn(*env.plugin, env.Node("node-a"), pod);
  ASSERT_TRUE(c.reserve.IsSuccess());
  ASSERT_EQ(c.bindings()->volumes.dynamic_provisions.size(), 1u);
  api::PersistentVolumeClaimPtr assumed = env.plugin->assume_cache().Claim(env.lister, "default", "pvc-a");
  EXPECT_EQ(*assumed->annotations.Get(api::kAnnSelectedNode), "node-a");

  // Another pod sharing the claim is now tied to node-a.
  api::Pod sharer = PodBuilder("pod-b").UID("pod-b-uid").PVC("pvc-a").Build();
  CycleState state;
  PreFilterResult result;
  ASSERT_TRUE(env.plugin->PreFilter(state, sharer, result).IsSuccess());
  EXPECT_TRUE(env.plugin->Filter(state, sharer, env.Node("node-a")).IsSuccess());
  env.handle.SetSnapshot(cache::Snapshot::FromObjects({HostNode("node-a"), HostNode("node-b")}, {}));
  EXPECT_EQ(env.plugin->Filter(state, sharer, env.Node("node-b")), kBindConflict);

  env.plugin->Unreserve(*c.state, pod, "node-a");
  EXPECT_FALSE(
      env.plugin->assume_cache().Claim(env.lister, "default", "pvc-a")->annotations.Has(api::kAnnSelectedNode));
}

TEST(VolumeBinding, ReserveWithEverythingBound) {
  Env env({HostNode("node-a")});
  AddAll(env.lister, {BoundPVC("pvc-a", "wait-sc", "pv-a")}, {PVBuilder("pv-a").Class("wait-sc").Ptr()});
  Cycle c = ScheduleOn(*env.plugin, env.Node("node-a"), PodWith({"pvc-a"}));
  ASSERT_TRUE(c.reserve.IsSuccess());
  ASSERT_NE(c.bindings(), nullptr);
  EXPECT_TRUE(c.bindings()->all_bound);
  EXPECT_EQ(env.plugin->assume_cache().NumAssumed(), 0u);
  // Nothing to write: PreBind returns at once, even without a writer.
  EXPECT_TRUE(env.plugin->PreBindPreFlight(*c.state, PodWith({"pvc-a"}), "node-a").IsSkip());
  EXPECT_TRUE(env.plugin->PreBind(*c.state, PodWith({"pvc-a"}), "node-a").IsSuccess());
}

TEST(VolumeBinding, PodWithoutClaims) {
  Env env({HostNode("node-a")});
  api::Pod pod = PodBuilder("pod-a").Build();
  CycleState state;
  PreFilterResult result;
  EXPECT_TRUE(env.plugin->PreFilter(state, pod, result).IsSkip());
  EXPECT_TRUE(env.plugin->Reserve(state, pod, "node-a").IsSuccess());
  EXPECT_EQ(state.Read<BindingState>(kBindingStateKey), nullptr);
  EXPECT_TRUE(env.plugin->PreBindPreFlight(state, pod, "node-a").IsSkip());
  EXPECT_TRUE(env.plugin->PreBind(state, pod, "node-a").IsSuccess());
  env.plugin->Unreserve(state, pod, "node-a");
}

TEST(VolumeBinding, ReserveFailsWhenTheVolumeChangedMeanwhile) {
  Env env({HostNode("node-a")});
  AddAll(env.lister, {PVC("pvc-a", "wait-sc")}, {PVBuilder("pv-1").Class("wait-sc").ResourceVersion("3").Ptr()});
  api::Pod pod = PodWith({"pvc-a"});
  CycleState state;
  PreFilterResult result;
  ASSERT_TRUE(env.plugin->PreFilter(state, pod, result).IsSuccess());
  ASSERT_TRUE(env.plugin->Filter(state, pod, env.Node("node-a")).IsSuccess());
  // The informer delivers a newer version between Filter and Reserve.
  env.lister.Add(PVBuilder("pv-1").Class("wait-sc").ResourceVersion("4").Obj());
  Status s = env.plugin->Reserve(state, pod, "node-a");
  EXPECT_EQ(s, Status::Error("v1.PersistentVolume \"pv-1\" is out of sync (stored: 4, assume: 3)"));
  EXPECT_EQ(env.plugin->assume_cache().NumAssumed(), 0u);
}

// Pods race for fewer volumes than there are pods while binding workers unreserve
// concurrently: a volume is never held by two reserved pods at once.
TEST(VolumeBinding, PodsRacingForVolumes) {
  constexpr int kVolumes = 8, kPods = 64;
  Env env({HostNode("node-a")});
  for (int i = 0; i < kVolumes; ++i) {
    env.lister.Add(PVBuilder("pv-" + std::to_string(i)).Class("wait-sc").Capacity("1Gi").Obj());
  }
  for (int i = 0; i < kPods; ++i) env.lister.Add(*PVC("pvc-" + std::to_string(i), "wait-sc"));

  std::mutex mu;
  std::set<std::string> held;                      // volumes of reserved pods
  std::vector<std::unique_ptr<Cycle>> to_release;  // handed to the "binding worker"
  std::atomic<bool> done{false};
  std::atomic<int> violations{0};
  std::thread worker([&] {
    for (;;) {
      std::unique_ptr<Cycle> c;
      {
        std::lock_guard<std::mutex> l(mu);
        if (!to_release.empty()) {
          c = std::move(to_release.back());
          to_release.pop_back();
          held.erase(c->chosen_volume());
        }
      }
      if (c != nullptr) {
        env.plugin->Unreserve(*c->state, api::Pod(), "node-a");
      } else if (done.load()) {
        return;
      } else {
        std::this_thread::yield();
      }
    }
  });
  int reserved = 0;
  for (int i = 0; i < kPods; ++i) {
    api::Pod pod =
        PodBuilder("pod-" + std::to_string(i)).UID("uid-" + std::to_string(i)).PVC("pvc-" + std::to_string(i)).Build();
    auto c = std::make_unique<Cycle>(ScheduleOn(*env.plugin, env.Node("node-a"), pod));
    if (!c->prefilter.IsSuccess() || !c->filter.IsSuccess() || !c->reserve.IsSuccess()) continue;
    ++reserved;
    std::lock_guard<std::mutex> l(mu);
    if (!held.insert(c->chosen_volume()).second) ++violations;
    if (i % 2 == 0) to_release.push_back(std::move(c));  // every other pod fails to bind
  }
  done = true;
  worker.join();
  EXPECT_EQ(violations.load(), 0);
  EXPECT_GE(reserved, kVolumes);
}

// ---- events and hints --------------------------------------------------------------------

TEST(VolumeBindingHints, EventsToRegister) {
  Env env;
  std::vector<ClusterEventWithHint> events = env.plugin->EventsToRegister();
  ASSERT_EQ(events.size(), 5u);
  auto registered = [&](const ClusterEvent& e) {
    for (const auto& r : events) {
      if (r.event.Match(e)) return true;
    }
    return false;
  };
  for (const ClusterEvent& e : {kStorageClassAdd, kStorageClassUpdate, kPvcAdd, kPvcUpdate, kPvAdd, kPvUpdate, kNodeAdd,
                                kNodeLabelChange, kCSINodeAdd, kCSINodeUpdate}) {
    EXPECT_TRUE(registered(e)) << e.label;
  }
  for (const ClusterEvent& e : {kNodeTaintChange, kNodeAllocatableChange, kNodeDelete, kAssignedPodDelete,
                                kCSIDriverUpdate, kCSIStorageCapacityAdd}) {
    EXPECT_FALSE(registered(e)) << e.label;
  }
  EXPECT_EQ(events[2].hint_fn, nullptr);  // PersistentVolume: always queue
}

QueueingHintFn HintFor(const VolumeBinding& plugin, EventResource resource) {
  for (const auto& r : plugin.EventsToRegister()) {
    if (r.event.resource == resource) return r.hint_fn;
  }
  return nullptr;
}

// upstream TestIsSchedulableAfterStorageClassChange, as the hint now decides: every new
// class queues; an update queues only when allowedTopologies changed.
TEST(VolumeBindingHints, StorageClass) {
  Env env;
  QueueingHintFn hint = HintFor(*env.plugin, EventResource::kStorageClass);
  ASSERT_TRUE(hint);
  api::StorageClass plain = StorageClassBuilder("sc-a").Obj();
  api::StorageClass topo12 = StorageClassBuilder("sc-a").AllowedTopology(kHostname, {"node1", "node2"}).Obj();
  api::StorageClass topo13 = StorageClassBuilder("sc-a").AllowedTopology(kHostname, {"node1", "node3"}).Obj();
  api::StorageClass relabelled = topo12;
  relabelled.provisioner = "other";
  struct Case {
    std::string name;
    api::Pod pod;
    const api::StorageClass* old_sc;
    const api::StorageClass* new_sc;
    QueueingHint want;
  };
  const std::vector<Case> cases = {
      {"pod has no pvcs, nothing changed", PodBuilder("pod-a").Build(), &plain, &plain, QueueingHint::kSkip},
      {"new storage class", PodWith({"pvc-a", "pvc-b"}), nullptr, &plain, QueueingHint::kQueue},
      {"allowedTopologies changed", PodWith({"pvc-a"}), &topo12, &topo13, QueueingHint::kQueue},
      {"allowedTopologies removed", PodWith({"pvc-a"}), &topo12, &plain, QueueingHint::kQueue},
      {"ephemeral volume, allowedTopologies changed", PodBuilder("pod-a").EphemeralVolume("e").Build(), &topo12,
       &topo13, QueueingHint::kQueue},
      {"another field changed", PodWith({"pvc-a"}), &topo12, &relabelled, QueueingHint::kSkip},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto got = hint(c.pod, c.old_sc, c.new_sc);
    ASSERT_TRUE(got.ok());
    EXPECT_EQ(*got, c.want);
  }
  EXPECT_FALSE(hint(PodWith({"pvc-a"}), &plain, nullptr).ok());
}

// upstream TestIsSchedulableAfterPersistentVolumeClaimChange.
TEST(VolumeBindingHints, PersistentVolumeClaim) {
  Env env;
  QueueingHintFn hint = HintFor(*env.plugin, EventResource::kPersistentVolumeClaim);
  ASSERT_TRUE(hint);
  api::PersistentVolumeClaim pvc_b = *PVC("pvc-b", "sc-a");
  api::PersistentVolumeClaim pvc_b_bound = *BoundPVC("pvc-b", "sc-a", "pv");
  api::PersistentVolumeClaim pvc_b_other_ns = *PVCBuilder("pvc-b", "other").Class("sc-a").Ptr();
  api::PersistentVolumeClaim ephemeral_claim = *PVC("pod-a-ephemeral-a", "sc-a");
  api::Pod with_claims = PodWith({"pvc-a", "pvc-b"});
  api::Pod with_ephemeral = PodBuilder("pod-a").EphemeralVolume("ephemeral-a").Build();
  struct Case {
    std::string name;
    api::Pod pod;
    const api::PersistentVolumeClaim* old_pvc;
    const api::PersistentVolumeClaim* new_pvc;
    QueueingHint want;
  };
  const std::vector<Case> cases = {
      {"pod has no pvcs", PodBuilder("pod-a").Build(), nullptr, &pvc_b, QueueingHint::kSkip},
      {"pod has no pvc or ephemeral volumes", PodBuilder("pod-a").Volume("empty", {}).Build(), &pvc_b, &pvc_b,
       QueueingHint::kSkip},
      {"pod's pvc added", with_claims, nullptr, &pvc_b, QueueingHint::kQueue},
      {"pod's pvc updated", with_claims, &pvc_b, &pvc_b_bound, QueueingHint::kQueue},
      {"pvc of another namespace", with_claims, nullptr, &pvc_b_other_ns, QueueingHint::kSkip},
      {"pvc the pod does not use", PodWith({"pvc-a"}), nullptr, &pvc_b, QueueingHint::kSkip},
      {"pod's ephemeral claim updated", with_ephemeral, &ephemeral_claim, &ephemeral_claim, QueueingHint::kQueue},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto got = hint(c.pod, c.old_pvc, c.new_pvc);
    ASSERT_TRUE(got.ok());
    EXPECT_EQ(*got, c.want);
  }
  EXPECT_FALSE(hint(with_claims, &pvc_b, nullptr).ok());
}

// upstream isSchedulableAfterCSINodeChange.
TEST(VolumeBindingHints, CSINode) {
  Env env;
  QueueingHintFn hint = HintFor(*env.plugin, EventResource::kCSINode);
  ASSERT_TRUE(hint);
  api::CSINode plain = testing::CSINodeBuilder("node1").Obj();
  api::CSINode migrated = testing::CSINodeBuilder("node1").MigratedPlugins("kubernetes.io/gce-pd").Obj();
  api::CSINode more_drivers = testing::CSINodeBuilder("node1").Driver("csi.example.com").Obj();
  api::Pod pod = PodWith({"pvc-a"});
  EXPECT_EQ(*hint(pod, nullptr, &plain), QueueingHint::kQueue);
  EXPECT_EQ(*hint(pod, &plain, &migrated), QueueingHint::kQueue);
  EXPECT_EQ(*hint(pod, &migrated, &plain), QueueingHint::kQueue);
  EXPECT_EQ(*hint(pod, &plain, &more_drivers), QueueingHint::kSkip);
  EXPECT_EQ(*hint(pod, &migrated, &migrated), QueueingHint::kSkip);
}

TEST(VolumeBinding, New) {
  FakeHandle handle;
  auto plugin = VolumeBinding::New(config::VolumeBindingArgs{.bind_timeout_seconds = 30}, handle);
  ASSERT_TRUE(plugin.ok());
  EXPECT_EQ((*plugin)->Name(), "VolumeBinding");
  EXPECT_TRUE(VolumeBinding::New(std::monostate{}, handle).ok());
  auto wrong = VolumeBinding::New(config::NodeAffinityArgs{}, handle);
  EXPECT_EQ(wrong.status().message(), "want args to be of type VolumeBindingArgs");
}

}  // namespace
}  // namespace ksched::framework::plugins::volumebinding
