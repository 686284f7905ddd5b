// PreBind end to end: upstream binder_test.go's TestBindPodVolumes, the PV controller's
// side played by the test while PreBind waits on a fake clock.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "pkg/framework/plugins/volumebinding/test_util.h"
#include "pkg/framework/plugins/volumebinding/volume_binding.h"
#include "pkg/util/clock.h"
#include "tests/fakes/fake_handle.h"
#include "tests/fakes/fake_volume_writer.h"

namespace ksched::framework::plugins::volumebinding {
namespace {

using namespace testutil;  // NOLINT
using testing::FakeHandle;
using testing::FakeVolumeWriter;

constexpr auto kPoll = std::chrono::milliseconds(100);

// ---- PreBind end to end ----------------------------------------------------------------------

// A FakeClock that counts the sleeps begun, so a test can tell PreBind's next wait
// from the one it just ended, and only touch the lister while PreBind is parked.
class SteppedClock final : public Clock {
 public:
  time_point Now() const override { return fake_.Now(); }
  wall_time WallNow() const override { return fake_.WallNow(); }
  bool SleepUntil(time_point deadline, std::stop_token stop) override {
    {
      std::lock_guard<std::mutex> l(mu_);
      ++sleeps_;
    }
    cv_.notify_all();
    return fake_.SleepUntil(deadline, std::move(stop));
  }
  void Finish() {
    {
      std::lock_guard<std::mutex> l(mu_);
      done_ = true;
    }
    cv_.notify_all();
  }
  // Blocks until a sleep after the `seen`-th has begun and parked; false once the
  // sleeper has finished instead.
  bool WaitForNextSleep(int& seen) {
    {
      std::unique_lock<std::mutex> l(mu_);
      cv_.wait(l, [&] { return done_ || sleeps_ > seen; });
      if (sleeps_ <= seen) return false;
      seen = sleeps_;
    }
    while (!fake_.WaitForSleepers(1, std::chrono::milliseconds(10))) {
      std::lock_guard<std::mutex> l(mu_);
      if (done_) return false;
    }
    return true;
  }
  FakeClock& fake() { return fake_; }

 private:
  FakeClock fake_;
  std::mutex mu_;
  std::condition_variable cv_;
  int sleeps_ = 0;
  bool done_ = false;
};

struct BindEnv {
  Fixtures x;
  FakeClusterLister lister;
  FakeHandle handle;
  FakeVolumeWriter writer{lister};
  SteppedClock clock;
  std::unique_ptr<VolumeBinding> plugin;
  int waits = 0;  // how often PreBind looked before it returned

  explicit BindEnv(int64_t timeout_seconds = 10) {
    AddClasses(lister);
    handle.SetLister(&lister);
    handle.SetVolumeWriter(&writer);
    plugin = std::make_unique<VolumeBinding>(handle, config::VolumeBindingArgs{.bind_timeout_seconds = timeout_seconds},
                                             VolumeBindingOptions{.clock = &clock, .poll_interval = kPoll});
  }

  // The cycle state Reserve leaves: `volumes` assumed on `node`.
  std::unique_ptr<CycleState> Reserved(PodVolumes volumes, api::NodePtr node = nullptr) {
    auto state = std::make_unique<CycleState>();
    Assume(plugin->assume_cache(), lister, volumes);
    auto b = std::make_unique<BindingState>();
    b->all_bound = false;
    b->node = node != nullptr ? node : x.node1;
    b->volumes = std::move(volumes);
    state->Write(std::string(kBindingStateKey), std::move(b));
    return state;
  }

  // Runs PreBind on another thread, calling `on_wait(n)` while it is parked in its n-th
  // wait and then moving the clock on by one poll interval, until it returns.
  Status PreBind(CycleState& state, std::function<void(int)> on_wait = {}) {
    Status result;
    api::Pod pod = MakePod({});
    std::thread t([&] {
      result = plugin->PreBind(state, pod, "node1");
      clock.Finish();
    });
    int seen = 0;
    waits = 0;
    while (clock.WaitForNextSleep(seen)) {
      if (on_wait) on_wait(waits);
      ++waits;
      clock.fake().Advance(kPoll);
    }
    t.join();
    return result;
  }

  // The PV controller completing a static binding: the claim bound to the volume.
  void BindClaim(const api::PersistentVolumeClaimPtr& claim, const std::string& volume, const std::string& rv = "2") {
    api::PersistentVolumeClaim c = *claim;
    c.volume_name = volume;
    c.annotations.Set(std::string(api::kAnnBindCompleted), "yes");
    c.metadata.resource_version = rv;
    lister.Add(c);
  }
};

TEST(PreBind, NothingToBind) {
  BindEnv env;
  auto state = env.Reserved(PodVolumes{});
  EXPECT_TRUE(env.PreBind(*state).IsSuccess());
  EXPECT_EQ(env.waits, 1);  // the first look comes after one interval, as upstream's
  EXPECT_TRUE(env.writer.Patches().empty());
}

TEST(PreBind, AlreadyBound) {
  BindEnv env;
  AddAll(env.lister, {env.x.bound_node1a}, {env.x.pv_node1a_bound});
  auto state = env.Reserved(Volumes({{env.x.unbound, env.x.pv_node1a_bound}}, {}));
  EXPECT_TRUE(env.PreBind(*state).IsSuccess());
}

TEST(PreBind, StaticBindingSucceedsAfterTime) {
  BindEnv env;
  AddAll(env.lister, {env.x.unbound}, {env.x.pv_node1a});
  auto state = env.Reserved(Volumes({{env.x.unbound, env.x.pv_node1a_bound}}, {}));
  Status s = env.PreBind(*state, [&](int n) {
    if (n == 3) env.BindClaim(env.x.unbound, "pv-node1a");
  });
  EXPECT_TRUE(s.IsSuccess()) << s.ToString();
  EXPECT_EQ(env.waits, 4);
  ASSERT_EQ(env.writer.Patches().size(), 1u);
}

TEST(PreBind, DynamicProvisioningSucceedsAfterTime) {
  BindEnv env;
  AddAll(env.lister, {env.x.provisioned}, {});
  auto state = env.Reserved(Volumes({}, {WithProvisionAnn(env.x.provisioned)}));
  Status s = env.PreBind(*state, [&](int n) {
    if (n != 2) return;
    // The provisioner creates a volume on node1 and the PV controller binds the claim.
    api::PersistentVolumeClaimPtr claim = env.lister.Claim(kNs, "provisioned-pvc");
    env.lister.Add(*MakeVolume("dynamic-pv", "node1", "1G", "1", claim));
    env.BindClaim(claim, "dynamic-pv", "3");
  });
  EXPECT_TRUE(s.IsSuccess()) << s.ToString();
}

TEST(PreBind, BoundByPVControllerBeforeBind) {
  BindEnv env;
  AddAll(env.lister, {env.x.unbound}, {env.x.pv_node1a});
  auto state = env.Reserved(Volumes({{env.x.unbound, env.x.pv_node1a_bound}}, {}));
  // The PV controller got there first: the server has moved on.
  env.writer.server_volumes["pv-node1a"] = WithVersion(env.x.pv_node1a_bound, "2");
  Status s = env.PreBind(*state);
  EXPECT_EQ(s, Status::Error("Operation cannot be fulfilled on persistentvolumes \"pv-node1a\": the object has been "
                             "modified; please apply your changes to the latest version and try again"));
  EXPECT_EQ(env.waits, 0);
  EXPECT_EQ(env.plugin->assume_cache().NumAssumed(), 0u);  // the unwritten volume is no longer assumed
}

TEST(PreBind, TimesOut) {
  BindEnv env(/*timeout_seconds=*/3);
  AddAll(env.lister, {env.x.unbound}, {env.x.pv_node1a});
  auto state = env.Reserved(Volumes({{env.x.unbound, env.x.pv_node1a_bound}}, {}));
  EXPECT_EQ(env.PreBind(*state), Status::Error("binding volumes: context deadline exceeded"));
  EXPECT_EQ(env.waits, 30);  // 29 looks, then the wait for the deadline
}

// A shutdown while PreBind waits for the PV controller ends the wait at once, failing
// the pod (whose bindings the binding cycle then reverts), instead of holding the exit
// for up to bindTimeoutSeconds.
TEST(PreBind, ShutdownEndsTheWait) {
  BindEnv env(/*timeout_seconds=*/600);
  AddAll(env.lister, {env.x.unbound}, {env.x.pv_node1a});
  auto state = env.Reserved(Volumes({{env.x.unbound, env.x.pv_node1a_bound}}, {}));
  EXPECT_EQ(env.PreBind(*state, [&](int n) {
    if (n == 3) env.handle.stopping.request_stop();
  }), Status::Error("binding volumes: the scheduler is shutting down"));
  EXPECT_EQ(env.waits, 4);  // the fourth wait was cut short
}

TEST(PreBind, ZeroTimeout) {
  BindEnv env(/*timeout_seconds=*/0);
  AddAll(env.lister, {env.x.bound_node1a}, {env.x.pv_node1a_bound});
  auto state = env.Reserved(Volumes({{env.x.unbound, env.x.pv_node1a_bound}}, {}));
  EXPECT_EQ(env.PreBind(*state), Status::Error("binding volumes: context deadline exceeded"));
}

TEST(PreBind, WriteFails) {
  BindEnv env;
  AddAll(env.lister, {env.x.unbound2, env.x.provisioned}, {env.x.pv_node1b});
  auto state = env.Reserved(Volumes({{env.x.unbound2, env.x.pv_node1b_bound}}, {WithProvisionAnn(env.x.provisioned)}));
  env.writer.fail["pv-node1b"] = ksched::Unavailable("connection refused");
  EXPECT_EQ(env.PreBind(*state), Status::Error("connection refused"));
  EXPECT_EQ(env.plugin->assume_cache().NumAssumed(), 0u);
  // Unreserve after the failure is harmless.
  env.plugin->Unreserve(*state, MakePod({}), "node1");
}

TEST(PreBind, NoWriter) {
  BindEnv env;
  env.handle.SetVolumeWriter(nullptr);
  AddAll(env.lister, {env.x.unbound}, {env.x.pv_node1a});
  auto state = env.Reserved(Volumes({{env.x.unbound, env.x.pv_node1a_bound}}, {}));
  Status s = env.PreBind(*state);
  EXPECT_EQ(s.code(), Code::kError);
  EXPECT_EQ(env.plugin->assume_cache().NumAssumed(), 0u);
}

TEST(PreBind, ClaimDeletedWhileWaiting) {
  BindEnv env;
  AddAll(env.lister, {env.x.unbound}, {env.x.pv_node1a});
  auto state = env.Reserved(Volumes({{env.x.unbound, env.x.pv_node1a_bound}}, {}));
  Status s = env.PreBind(*state, [&](int n) {
    if (n == 1) env.lister.claims.clear();
  });
  EXPECT_EQ(s, Status::Error("binding volumes: failed to check binding: could not find v1.PersistentVolumeClaim "
                             "\"testns/unbound-pvc\""));
}

TEST(PreBind, VolumeDeletedWhileWaiting) {
  BindEnv env;
  AddAll(env.lister, {env.x.unbound}, {env.x.pv_node1a});
  auto state = env.Reserved(Volumes({{env.x.unbound, env.x.pv_node1a_bound}}, {}));
  Status s = env.PreBind(*state, [&](int n) {
    if (n == 1) env.lister.volumes.clear();
  });
  EXPECT_EQ(s, Status::Error("binding volumes: failed to check binding: could not find v1.PersistentVolume "
                             "\"pv-node1a\""));
}

TEST(PreBind, ClaimRefResetWhileWaiting) {
  BindEnv env;
  AddAll(env.lister, {env.x.unbound}, {env.x.pv_node1a});
  auto state = env.Reserved(Volumes({{env.x.unbound, env.x.pv_node1a_bound}}, {}));
  Status s = env.PreBind(*state, [&](int n) {
    if (n == 1) env.lister.Add(*WithVersion(env.x.pv_node1a, "3"));  // the PV controller unbound it
  });
  EXPECT_EQ(s, Status::Error("binding volumes: ClaimRef got reset for pv \"pv-node1a\""));
}

TEST(PreBind, SelectedNodeRemovedWhileWaiting) {
  BindEnv env;
  AddAll(env.lister, {env.x.provisioned}, {});
  auto state = env.Reserved(Volumes({}, {WithProvisionAnn(env.x.provisioned)}));
  Status s = env.PreBind(*state, [&](int n) {
    if (n != 2) return;
    // The provisioner gives up and hands the claim back.
    env.lister.Add(PVCBuilder("provisioned-pvc", kNs)
                       .Class(kWaitClassWithProvisioner)
                       .ResourceVersion("3")
                       .Annotation(api::kAnnStorageProvisioner, kProvisioner)
                       .Obj());
  });
  EXPECT_EQ(s, Status::Error("binding volumes: provisioning failed for PVC \"provisioned-pvc\""));
}

TEST(PreBind, NodeAffinityFails) {
  BindEnv env;
  AddAll(env.lister, {env.x.bound_node1a}, {env.x.pv_node1a_bound});
  auto state = env.Reserved(Volumes({{env.x.unbound, env.x.pv_node1a_bound}}, {}), env.x.node1_no_labels);
  EXPECT_EQ(env.PreBind(*state), Status::Error("binding volumes: pv \"pv-node1a\" node affinity doesn't match node "
                                               "\"node1\": no matching NodeSelectorTerms"));
}

TEST(PreBind, NodeAffinityFailsDynamicProvisioning) {
  BindEnv env;
  AddAll(env.lister, {env.x.selected_node}, {env.x.pv_node1a, env.x.pv_node2});
  auto state = env.Reserved(Volumes({}, {env.x.selected_node}));
  Status s = env.PreBind(*state, [&](int n) {
    if (n == 1) env.BindClaim(env.lister.Claim(kNs, "provisioned-pvc"), "pv-node2", "5");
  });
  EXPECT_EQ(s, Status::Error("binding volumes: pv \"pv-node2\" node affinity doesn't match node \"node1\": no "
                             "matching NodeSelectorTerms"));
}

// The informer may deliver our own write late: until the lister has it, PreBind waits
// even when the claim already reads bound.
TEST(PreBind, WaitsForTheListerToSeeTheWrite) {
  BindEnv env;
  env.writer.apply_to_lister = false;
  AddAll(env.lister, {env.x.unbound}, {env.x.pv_node1a});
  auto state = env.Reserved(Volumes({{env.x.unbound, env.x.pv_node1a_bound}}, {}));
  Status s = env.PreBind(*state, [&](int n) {
    if (n == 0) {
      env.BindClaim(env.x.unbound, "pv-node1a");
      // The informer still shows a claimRef (from the assumption's view) at the old
      // version: an update we already know about does not count.
      env.lister.Add(*env.x.pv_node1a_bound);
    }
    if (n == 4) env.lister.volumes["pv-node1a"] = env.writer.server_volumes["pv-node1a"];
  });
  EXPECT_TRUE(s.IsSuccess()) << s.ToString();
  EXPECT_EQ(env.waits, 5);
}

// The whole path: PreFilter, Filter, Reserve, PreBind, with the PV controller's part
// played while PreBind waits.
TEST(PreBind, FullCycle) {
  BindEnv env;
  env.handle.SetSnapshot(cache::Snapshot::FromObjects({env.x.node1, env.x.node2}, {}));
  AddAll(env.lister, {env.x.unbound, env.x.provisioned}, {env.x.pv_node2, env.x.pv_node1a, env.x.pv_node1b});
  api::Pod pod = MakePod({env.x.unbound, env.x.provisioned});
  CycleState state;
  PreFilterResult result;
  ASSERT_TRUE(env.plugin->PreFilter(state, pod, result).IsSuccess());
  EXPECT_EQ(env.plugin->Filter(state, pod, *env.handle.Snapshot().Get("node2")),
            Status(Code::kUnschedulableAndUnresolvable, std::string(kErrReasonBindConflict)));
  ASSERT_TRUE(env.plugin->Filter(state, pod, *env.handle.Snapshot().Get("node1")).IsSuccess());
  ASSERT_TRUE(env.plugin->Reserve(state, pod, "node1").IsSuccess());
  state.DropSchedulingOnlyData();

  Status s = env.PreBind(state, [&](int n) {
    if (n != 1) return;
    env.BindClaim(env.lister.Claim(kNs, "unbound-pvc"), "pv-node1a", "10");
    api::PersistentVolumeClaimPtr provisioned = env.lister.Claim(kNs, "provisioned-pvc");
    env.lister.Add(*MakeVolume("dynamic-pv", "node1", "1Gi", "1", provisioned, kWaitClassWithProvisioner));
    env.BindClaim(provisioned, "dynamic-pv", "11");
  });
  EXPECT_TRUE(s.IsSuccess()) << s.ToString();
  std::vector<FakeVolumeWriter::Patch> patches = env.writer.Patches();
  ASSERT_EQ(patches.size(), 2u);
  EXPECT_EQ(patches[0].key, "pv-node1a");
  EXPECT_EQ(patches[1].key, "testns/provisioned-pvc");
  // The lister now holds what was written, so nothing stays assumed past the next Reserve.
  env.plugin->assume_cache().Prune(env.lister);
  EXPECT_EQ(env.plugin->assume_cache().NumAssumed(), 0u);
}

}  // namespace
}  // namespace ksched::framework::plugins::volumebinding
