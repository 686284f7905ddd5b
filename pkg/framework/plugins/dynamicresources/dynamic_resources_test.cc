// upstream dynamicresources_test.go (1.35): the plugin's extension points driven one by
// one, with the lister as the informers and the claim writer as the API server. Not
// ported: feature-gate-off cases (every feature this plugin has is on), binding
// conditions, extended resources, SignPod, and "canceled" (Filter takes no context to
// cancel here).
#include "pkg/framework/plugins/dynamicresources/dynamic_resources.h"

#include <algorithm>
#include <gtest/gtest.h>

#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "pkg/cache/node_info.h"
#include "tests/fakes/builders.h"
#include "tests/fakes/fake_cluster_lister.h"
#include "tests/fakes/fake_handle.h"
#include "tests/fakes/fake_resource_claim_writer.h"
#include "tests/fakes/resource_builders.h"

namespace ksched::framework::plugins::dynamicresources {
namespace {

using testing::ClaimBuilder;
using testing::DeviceBuilder;
using testing::DeviceClassBuilder;
using testing::DeviceResult;
using testing::Exactly;
using testing::FakeClusterLister;
using testing::FakeHandle;
using testing::FakeResourceClaimWriter;
using testing::FirstAvailable;
using testing::LocalNodeSelector;
using testing::NodeBuilder;
using testing::PodBuilder;
using testing::SliceBuilder;
using testing::SubRequest;

// ---- upstream's fixtures ------------------------------------------------------------------

const std::string kDriver = "some-driver";
const std::string kClass = "my-resource-class";
const std::string kClaimName = "my-pod-my-resource";
const std::string kClaimKey = "default/my-pod-my-resource";
const std::string kPodUID = "1234";

api::NodePtr Worker(const std::string& name = "worker") { return NodeBuilder(name).Hostname().Obj(); }

// Slice `node` of driver some-driver, pool <node>, with the devices given.
api::ResourceSlice WorkerSlice(const std::string& node = "worker", std::vector<api::Device> devices = {}) {
  SliceBuilder b(node);
  b.Node(node).Driver(kDriver).Pool(node);
  if (devices.empty()) devices.push_back(DeviceBuilder("instance-1").Obj());
  for (auto& d : devices) b.Device(std::move(d));
  return b.Obj();
}

// The pod with claim `my-resource` by name.
api::Pod PodWithClaim(const std::string& claim = kClaimName, const std::string& name = "my-pod",
                      const std::string& uid = kPodUID) {
  api::Pod pod = PodBuilder(name).UID(uid).Build();
  pod.spec.resource_claims.push_back({.name = "my-resource", .resource_claim_name = claim, .resource_claim_template_name = {}});
  return pod;
}
// The pod with claim `my-resource` from a template, the claim made (or not) as given.
api::Pod PodWithTemplate(std::optional<std::string> made) {
  api::Pod pod = PodBuilder("my-pod").UID(kPodUID).Build();
  pod.spec.resource_claims.push_back(
      {.name = "my-resource", .resource_claim_name = std::nullopt, .resource_claim_template_name = "my-template"});
  if (made) pod.status.resource_claim_statuses.push_back({.name = "my-resource", .resource_claim_name = *made});
  return pod;
}

// The pending claim: one device of my-resource-class, owned by the pod.
ClaimBuilder PendingClaim(const std::string& name = kClaimName) {
  ClaimBuilder b(name);
  b.UID("claim-uid-" + name).Request("req-1", kClass).OwnedBy("my-pod", kPodUID);
  return b;
}

api::AllocationResult WorkerAllocation(const std::string& request = "req-1", const std::string& device = "instance-1") {
  return testing::Allocation(LocalNodeSelector("worker"), {DeviceResult(request, kDriver, "worker", device)});
}
// An allocation restricted to nodes with label `key` in `values`.
api::AllocationResult LabelAllocation(std::string key, std::string value) {
  return testing::Allocation(testing::NodeLabelSelector(std::move(key), {std::move(value)}),
                             {DeviceResult("req-1", kDriver, "worker", "instance-1")});
}

const api::ResourceClaimConsumerReference kReservedForPod{.api_group = "", .resource = "pods", .name = "my-pod", .uid = kPodUID};

Status Unresolvable(std::string m) { return Status(Code::kUnschedulableAndUnresolvable, std::move(m)); }

struct Env {
  FakeClusterLister lister;
  FakeResourceClaimWriter writer{lister};
  FakeHandle handle;
  std::unique_ptr<DynamicResources> plugin;

  explicit Env(config::DynamicResourcesArgs args = {}) {
    handle.SetLister(&lister);
    handle.SetResourceClaimWriter(&writer);
    plugin = std::make_unique<DynamicResources>(handle, args);
  }
  // The usual world: the class and the worker's slice with instance-1.
  Env& Standard() {
    lister.Add(DeviceClassBuilder(kClass).Obj());
    lister.Add(WorkerSlice());
    return *this;
  }
  // The snapshot's nodes: every node a Filter saw.
  void Know(const api::NodePtr& node) {
    if (std::find(nodes.begin(), nodes.end(), node) != nodes.end()) return;
    nodes.push_back(node);
    handle.SetSnapshot(cache::Snapshot::FromObjects(nodes, {}));
  }
  std::vector<api::NodePtr> nodes;
  api::ResourceClaimPtr Claim(const std::string& key = kClaimKey) const {
    auto it = lister.resource_claims.find(key);
    return it == lister.resource_claims.end() ? nullptr : it->second;
  }
};

// One pod's scheduling cycle, step by step.
struct Cycle {
  Env& env;
  api::Pod pod;
  CycleState state;

  Status PreFilter() {
    PreFilterResult result;
    return env.plugin->PreFilter(state, pod, result);
  }
  // Also puts the node into the handle's snapshot, where Reserve looks it up.
  Status Filter(const api::NodePtr& node) const {
    env.Know(node);
    return env.plugin->Filter(state, pod, cache::NodeInfo(node));
  }
  Status PostFilter() {
    PostFilterResult result;
    return env.plugin->PostFilter(state, pod, {}, result);
  }
  Status Reserve(const std::string& node = "worker") { return env.plugin->Reserve(state, pod, node); }
  void Unreserve(const std::string& node = "worker") { env.plugin->Unreserve(state, pod, node); }
  Status PreBindPreFlight(const std::string& node = "worker") const { return env.plugin->PreBindPreFlight(state, pod, node); }
  Status PreBind(const std::string& node = "worker") { return env.plugin->PreBind(state, pod, node); }
  int64_t Score(const api::NodePtr& node) const {
    int64_t score = -1;
    Status s = env.plugin->Score(state, pod, cache::NodeInfo(node), score);
    EXPECT_TRUE(s.IsSuccess()) << s.ToString();
    return score;
  }
  // PreFilter, Filter on the worker, Reserve and PreBind, each expected to succeed.
  void Schedule(const api::NodePtr& node = Worker()) {
    ASSERT_EQ(PreFilter(), Status());
    ASSERT_EQ(Filter(node), Status());
    ASSERT_EQ(Reserve(node->metadata.name), Status());
    ASSERT_EQ(PreBindPreFlight(node->metadata.name), Status());
    ASSERT_EQ(PreBind(node->metadata.name), Status());
  }
};

std::vector<std::string> Verbs(const FakeResourceClaimWriter& writer) {
  std::vector<std::string> out;
  for (const auto& r : writer.Requests()) out.push_back(r.verb + " " + r.key);
  return out;
}

// ---- PreEnqueue ---------------------------------------------------------------------------

TEST(DynamicResourcesPreEnqueue, ClaimsMustExist) {
  struct Case {
    std::string name;
    api::Pod pod;
    std::vector<api::ResourceClaim> claims;
    Status want;
  };
  const std::vector<Case> cases = {
      {"no claims", PodBuilder("my-pod").UID(kPodUID).Build(), {}, Status()},
      {"claim-reference", PodWithClaim(), {PendingClaim().Obj()}, Status()},
      {"claim-template", PodWithTemplate(kClaimName), {PendingClaim().Obj()}, Status()},
      {"missing-claim", PodWithTemplate(std::nullopt), {}, Unresolvable("pod \"default/my-pod\": ResourceClaim not created yet")},
      {"claim not in the informer", PodWithClaim(), {}, Unresolvable("could not find ResourceClaim \"default/my-pod-my-resource\"")},
      {"deleted-claim", PodWithClaim(), {PendingClaim().BeingDeleted().Obj()},
       Unresolvable("resourceclaim \"my-pod-my-resource\" is being deleted")},
      {"wrong-claim", PodWithTemplate(kClaimName), {ClaimBuilder(kClaimName).Request("req-1", kClass).OwnedBy("my-pod", "other").Obj()},
       Unresolvable("ResourceClaim default/my-pod-my-resource was not created for pod default/my-pod (pod is not owner)")},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Env env;
    env.Standard();
    for (const auto& claim : c.claims) env.lister.Add(claim);
    EXPECT_EQ(env.plugin->PreEnqueue(c.pod), c.want) << env.plugin->PreEnqueue(c.pod).ToString();
  }
  // A template entry the controller decided needs no claim is skipped.
  Env env;
  api::Pod pod = PodWithTemplate(std::nullopt);
  pod.status.resource_claim_statuses.push_back({.name = "my-resource", .resource_claim_name = std::nullopt});
  EXPECT_EQ(env.plugin->PreEnqueue(pod), Status());
  Cycle cycle{env, pod, {}};
  EXPECT_EQ(cycle.PreFilter().code(), Code::kSkip);
}

// ---- the cycle ----------------------------------------------------------------------------

// upstream "empty": a pod without claims.
TEST(DynamicResources, PodWithoutClaims) {
  Env env;
  env.Standard();
  Cycle cycle{env, PodBuilder("my-pod").UID(kPodUID).Build(), {}};
  EXPECT_EQ(cycle.PreFilter().code(), Code::kSkip);
  EXPECT_EQ(cycle.Filter(Worker()), Status());
  EXPECT_EQ(cycle.PostFilter().code(), Code::kUnschedulable);
  EXPECT_EQ(cycle.Reserve(), Status());
  EXPECT_EQ(cycle.PreBindPreFlight().code(), Code::kSkip);
  EXPECT_EQ(cycle.PreBind(), Status());
  EXPECT_TRUE(env.writer.Requests().empty());
}

// upstream "claim-reference", "claim-template", "good-topology": an allocated claim is
// only reserved for the pod, and the written claim is assumed.
TEST(DynamicResources, AllocatedClaimIsReserved) {
  struct Case {
    std::string name;
    api::Pod pod;
    api::AllocationResult allocation;
  };
  const std::vector<Case> cases = {
      {"claim-reference", PodWithClaim(), WorkerAllocation()},
      {"claim-template", PodWithTemplate(kClaimName), WorkerAllocation()},
      {"good-topology", PodWithClaim(), LabelAllocation("kubernetes.io/hostname", "worker")},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Env env;
    env.Standard();
    env.lister.Add(PendingClaim().Allocation(c.allocation).Obj());
    Cycle cycle{env, c.pod, {}};
    cycle.Schedule();
    api::ResourceClaimPtr claim = env.Claim();
    ASSERT_NE(claim, nullptr);
    EXPECT_EQ(claim->allocation, c.allocation);
    EXPECT_EQ(claim->reserved_for, std::vector<api::ResourceClaimConsumerReference>{kReservedForPod});
    EXPECT_EQ(Verbs(env.writer), std::vector<std::string>{"PATCH status " + kClaimKey});
    EXPECT_EQ(env.plugin->tracker().NumAssumed(), 1u);
    EXPECT_EQ(env.plugin->tracker().NumPending(), 0u);
  }
}

// upstream "reserved-okay": nothing to write.
TEST(DynamicResources, ClaimAlreadyReservedForThePod) {
  Env env;
  env.Standard();
  env.lister.Add(PendingClaim().Allocation(WorkerAllocation()).ReservedFor("my-pod", kPodUID).Obj());
  Cycle cycle{env, PodWithClaim(), {}};
  cycle.Schedule();
  EXPECT_TRUE(env.writer.Requests().empty());
}

// upstream "with-resources" and "with-resources-has-finalizer".
TEST(DynamicResources, PendingClaimIsAllocated) {
  for (bool has_finalizer : {false, true}) {
    SCOPED_TRACE(has_finalizer ? "with finalizer" : "without finalizer");
    Env env;
    env.Standard();
    ClaimBuilder b = PendingClaim();
    if (has_finalizer) b.Finalizer(std::string(kClaimFinalizer));
    env.lister.Add(b.Obj());
    Cycle cycle{env, PodWithClaim(), {}};
    ASSERT_EQ(cycle.PreFilter(), Status());
    ASSERT_EQ(cycle.Filter(Worker()), Status());
    ASSERT_EQ(cycle.Reserve(), Status());
    EXPECT_EQ(env.plugin->tracker().NumPending(), 1u);
    EXPECT_TRUE(env.writer.Requests().empty());  // Reserve writes nothing
    ASSERT_EQ(cycle.PreBind(), Status());
    EXPECT_EQ(env.plugin->tracker().NumPending(), 0u);
    EXPECT_EQ(env.plugin->tracker().NumAssumed(), 1u);

    api::ResourceClaimPtr claim = env.Claim();
    ASSERT_NE(claim, nullptr);
    EXPECT_EQ(claim->allocation, WorkerAllocation());
    EXPECT_EQ(claim->reserved_for, std::vector<api::ResourceClaimConsumerReference>{kReservedForPod});
    EXPECT_EQ(claim->finalizers, std::vector<std::string>{std::string(kClaimFinalizer)});
    std::vector<std::string> want = {"PATCH " + kClaimKey, "PATCH status " + kClaimKey};
    if (has_finalizer) want = {"PATCH status " + kClaimKey};
    EXPECT_EQ(Verbs(env.writer), want);
  }
}

// upstream "with-resources-finalizer-gets-removed": the server's copy lost the finalizer
// after the informer's was read; the conflict is retried on a fresh read.
TEST(DynamicResources, FinalizerRemovedBeforePreBind) {
  Env env;
  env.Standard();
  env.lister.Add(PendingClaim().Finalizer(std::string(kClaimFinalizer)).Obj());
  env.writer.server[kClaimKey] = PendingClaim().ResourceVersion("2").Ptr();
  Cycle cycle{env, PodWithClaim(), {}};
  cycle.Schedule();
  api::ResourceClaimPtr claim = env.Claim();
  ASSERT_NE(claim, nullptr);
  EXPECT_EQ(claim->finalizers, std::vector<std::string>{std::string(kClaimFinalizer)});
  EXPECT_EQ(claim->allocation, WorkerAllocation());
  EXPECT_EQ(claim->reserved_for, std::vector<api::ResourceClaimConsumerReference>{kReservedForPod});
  EXPECT_EQ(Verbs(env.writer), (std::vector<std::string>{"PATCH status " + kClaimKey, "GET " + kClaimKey,
                                                         "PATCH " + kClaimKey, "PATCH status " + kClaimKey}));
}

// Conflicts are retried; other errors fail PreBind at once, and the allocation is no
// longer in flight either way.
TEST(DynamicResources, PreBindWriteErrors) {
  {
    Env env;
    env.Standard();
    env.lister.Add(PendingClaim().Finalizer(std::string(kClaimFinalizer)).Obj());
    env.writer.fail[kClaimKey] = ksched::Status(StatusCode::kConflict, "conflict");
    Cycle cycle{env, PodWithClaim(), {}};
    cycle.Schedule();
    EXPECT_EQ(env.Claim()->allocation, WorkerAllocation());
    EXPECT_EQ(Verbs(env.writer), (std::vector<std::string>{"PATCH status " + kClaimKey, "GET " + kClaimKey,
                                                           "PATCH status " + kClaimKey}));
  }
  {
    Env env;
    env.Standard();
    env.lister.Add(PendingClaim().Finalizer(std::string(kClaimFinalizer)).Obj());
    env.writer.fail[kClaimKey] = ksched::Status(StatusCode::kUnavailable, "connection refused");
    Cycle cycle{env, PodWithClaim(), {}};
    ASSERT_EQ(cycle.PreFilter(), Status());
    ASSERT_EQ(cycle.Filter(Worker()), Status());
    ASSERT_EQ(cycle.Reserve(), Status());
    EXPECT_EQ(cycle.PreBind(),
              Status::Error("add allocation and reservation to claim default/my-pod-my-resource: connection refused"));
    EXPECT_EQ(env.plugin->tracker().NumPending(), 0u);
    EXPECT_EQ(env.plugin->tracker().NumAssumed(), 0u);
    EXPECT_FALSE(env.Claim()->allocation.has_value());
  }
  {
    // Allocated elsewhere in the meantime.
    Env env;
    env.Standard();
    env.lister.Add(PendingClaim().Finalizer(std::string(kClaimFinalizer)).Obj());
    env.writer.server[kClaimKey] =
        PendingClaim().Finalizer(std::string(kClaimFinalizer)).ResourceVersion("2").Allocation(WorkerAllocation()).Ptr();
    Cycle cycle{env, PodWithClaim(), {}};
    ASSERT_EQ(cycle.PreFilter(), Status());
    ASSERT_EQ(cycle.Filter(Worker()), Status());
    ASSERT_EQ(cycle.Reserve(), Status());
    EXPECT_EQ(cycle.PreBind(), Status::Error("claim default/my-pod-my-resource got allocated elsewhere in the meantime"));
    EXPECT_EQ(env.plugin->tracker().NumPending(), 0u);
  }
}

// The written claim is assumed until the informer has caught up.
TEST(DynamicResources, AssumedUntilTheInformerCatchesUp) {
  Env env;
  env.Standard();
  env.writer.apply_to_lister = false;
  env.lister.Add(PendingClaim().Obj());
  Cycle cycle{env, PodWithClaim(), {}};
  cycle.Schedule();
  EXPECT_EQ(env.plugin->tracker().NumAssumed(), 1u);
  EXPECT_FALSE(env.Claim()->allocation.has_value());  // the informer is behind
  // The tracker serves the written claim, and its device is taken.
  api::ResourceClaimPtr seen = env.plugin->tracker().Get("default", kClaimName);
  ASSERT_NE(seen, nullptr);
  EXPECT_EQ(seen->allocation, WorkerAllocation());
  EXPECT_TRUE(env.plugin->tracker().Contains(api::DeviceId{kDriver, "worker", "instance-1"}));

  // Another pod wanting the device finds it taken.
  env.lister.Add(PendingClaim("other-claim").OwnedBy("other-pod", "5678").Obj());
  Cycle other{env, PodWithClaim("other-claim", "other-pod", "5678"), {}};
  ASSERT_EQ(other.PreFilter(), Status());
  EXPECT_EQ(other.Filter(Worker()), Unresolvable("cannot allocate all claims"));
  EXPECT_EQ(env.plugin->tracker().NumAssumed(), 1u);

  // The informer catches up: the next PreFilter prunes the assumed copy.
  env.lister.Put(env.writer.server.at(kClaimKey));
  Cycle later{env, PodWithClaim("other-claim", "other-pod", "5678"), {}};
  ASSERT_EQ(later.PreFilter(), Status());
  EXPECT_EQ(env.plugin->tracker().NumAssumed(), 0u);
  EXPECT_EQ(later.Filter(Worker()), Unresolvable("cannot allocate all claims"));
}

// upstream "skip-bind": Unreserve before PreBind forgets the allocation in flight.
TEST(DynamicResources, UnreserveBeforePreBind) {
  Env env;
  env.Standard();
  env.lister.Add(PendingClaim().Obj());
  Cycle cycle{env, PodWithClaim(), {}};
  ASSERT_EQ(cycle.PreFilter(), Status());
  ASSERT_EQ(cycle.Filter(Worker()), Status());
  ASSERT_EQ(cycle.Reserve(), Status());
  EXPECT_EQ(env.plugin->tracker().NumPending(), 1u);
  cycle.Unreserve();
  EXPECT_EQ(env.plugin->tracker().NumPending(), 0u);
  EXPECT_FALSE(env.plugin->tracker().Contains(api::DeviceId{kDriver, "worker", "instance-1"}));
  EXPECT_TRUE(env.writer.Requests().empty());
}

// upstream "bind-failure": Unreserve after PreBind takes the pod out of reservedFor and
// keeps the allocation.
TEST(DynamicResources, UnreserveAfterPreBind) {
  for (bool allocated : {true, false}) {
    SCOPED_TRACE(allocated ? "allocated before" : "allocated by this cycle");
    Env env;
    env.Standard();
    ClaimBuilder b = PendingClaim();
    if (allocated) b.Allocation(LabelAllocation("kubernetes.io/hostname", "worker"));
    env.lister.Add(b.Obj());
    Cycle cycle{env, PodWithClaim(), {}};
    cycle.Schedule();
    ASSERT_EQ(env.Claim()->reserved_for.size(), 1u);
    cycle.Unreserve();
    api::ResourceClaimPtr claim = env.Claim();
    EXPECT_TRUE(claim->reserved_for.empty());
    EXPECT_TRUE(claim->allocation.has_value());
    EXPECT_EQ(env.plugin->tracker().NumPending(), 0u);
  }
}

// Two pods racing for one device: while the first is reserved, its device is taken,
// and a pod sharing its claim waits.
TEST(DynamicResources, InFlightAllocations) {
  Env env;
  env.Standard();
  env.lister.Add(PendingClaim().Obj());
  env.lister.Add(PendingClaim("other-claim").OwnedBy("other-pod", "5678").Obj());
  Cycle first{env, PodWithClaim(), {}};
  ASSERT_EQ(first.PreFilter(), Status());
  ASSERT_EQ(first.Filter(Worker()), Status());
  ASSERT_EQ(first.Reserve(), Status());

  Cycle second{env, PodWithClaim("other-claim", "other-pod", "5678"), {}};
  ASSERT_EQ(second.PreFilter(), Status());
  EXPECT_EQ(second.Filter(Worker()), Unresolvable("cannot allocate all claims"));

  Cycle sharing{env, PodWithClaim(kClaimName, "sharing-pod", "9999"), {}};
  EXPECT_EQ(sharing.PreFilter(),
            Unresolvable("resource claim default/my-pod-my-resource is in the process of being allocated"));

  // Once the first pod gives up, the device is free again.
  first.Unreserve();
  Cycle retry{env, PodWithClaim("other-claim", "other-pod", "5678"), {}};
  ASSERT_EQ(retry.PreFilter(), Status());
  EXPECT_EQ(retry.Filter(Worker()), Status());
}

// ---- Filter and PostFilter ----------------------------------------------------------------

TEST(DynamicResources, FilterRejections) {
  struct Case {
    std::string name;
    std::vector<api::ResourceClaim> claims;
    std::vector<api::ResourceSlice> slices;  // default: the worker's
    Status want_filter;
    Status want_postfilter;
    std::string want_detail;  // what explain shows for the node
  };
  const std::vector<Case> cases = {
      {"no-resources", {PendingClaim().Obj()}, {SliceBuilder("elsewhere").Node("other").Driver(kDriver).Obj()},
       Unresolvable("cannot allocate all claims"), Status(Code::kUnschedulable, "still not schedulable"),
       "claim default/my-pod-my-resource, request req-1: 0 devices on the node match its selectors, 0 available, 1 "
       "needed"},
      {"exhausted-resources",
       {PendingClaim().Obj(), ClaimBuilder("other").Request("req-1", kClass).Allocation(WorkerAllocation()).Obj()},
       {},
       Unresolvable("cannot allocate all claims"),
       Status(Code::kUnschedulable, "still not schedulable"),
       "claim default/my-pod-my-resource, request req-1: 1 device on the node matches its selectors, 0 available, 1 "
       "needed"},
      {"tainted-device-enabled",
       {PendingClaim().Obj()},
       {WorkerSlice("worker", {DeviceBuilder("instance-1").Taint("key", "value", api::TaintEffect::kNoSchedule).Obj()})},
       Unresolvable("cannot allocate all claims"),
       Status(Code::kUnschedulable, "still not schedulable"),
       // A tainted device is not available.
       "claim default/my-pod-my-resource, request req-1: 1 device on the node matches its selectors, 0 available, 1 "
       "needed"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Env env;
    env.lister.Add(DeviceClassBuilder(kClass).Obj());
    for (const auto& s : c.slices.empty() ? std::vector<api::ResourceSlice>{WorkerSlice()} : c.slices) env.lister.Add(s);
    for (const auto& claim : c.claims) env.lister.Add(claim);
    Cycle cycle{env, PodWithClaim(), {}};
    ASSERT_EQ(cycle.PreFilter(), Status());
    Status filter = cycle.Filter(Worker());
    EXPECT_EQ(filter, c.want_filter) << filter.ToString();
    EXPECT_EQ(filter.detail(), c.want_detail);
    Status post = cycle.PostFilter();
    EXPECT_EQ(post, c.want_postfilter) << post.ToString();
    EXPECT_TRUE(env.writer.Requests().empty());
  }
}

// upstream "request-admin-access-with-DRAAdminAccess-featuregate" and
// "structured-ignore-allocated-admin-access".
TEST(DynamicResources, AdminAccess) {
  {
    Env env;
    env.Standard();
    env.lister.Add(ClaimBuilder("other").Request("req-1", kClass).Allocation(WorkerAllocation()).Obj());
    api::ResourceClaim claim = PendingClaim().Obj();
    claim.spec.requests[0].exactly->admin_access = true;
    env.lister.Add(claim);
    Cycle cycle{env, PodWithClaim(), {}};
    cycle.Schedule();
    auto want = WorkerAllocation();
    want.results[0].admin_access = true;
    EXPECT_EQ(env.Claim()->allocation, want);
  }
  {
    Env env;
    env.Standard();
    auto admin = WorkerAllocation();
    admin.results[0].admin_access = true;
    env.lister.Add(ClaimBuilder("other").Request("req-1", kClass).Allocation(admin).Obj());
    env.lister.Add(PendingClaim().Obj());
    Cycle cycle{env, PodWithClaim(), {}};
    cycle.Schedule();
    EXPECT_EQ(env.Claim()->allocation, WorkerAllocation());
  }
}

// upstream "claim-parameters-CEL-runtime-error", "class-parameters-CEL-runtime-error",
// "CEL-runtime-error-for-one-of-two-nodes": an error, not a rejection, and the
// newest upstream's message naming the device.
TEST(DynamicResources, CELRuntimeErrors) {
  const std::string healthy = "device.attributes[\"some-driver\"].healthy";
  {
    Env env;
    env.Standard();
    env.lister.Add(ClaimBuilder(kClaimName).Request("req-1", kClass, 1, {healthy}).Obj());
    Cycle cycle{env, PodWithClaim(), {}};
    ASSERT_EQ(cycle.PreFilter(), Status());
    EXPECT_EQ(cycle.Filter(Worker()),
              Status::Error("claim default/my-pod-my-resource: selector #0 on device some-driver/worker/instance-1: CEL "
                            "runtime error: no such key: healthy"));
  }
  {
    Env env;
    env.lister.Add(DeviceClassBuilder(kClass).Selector(healthy).Obj());
    env.lister.Add(WorkerSlice());
    env.lister.Add(PendingClaim().Obj());
    Cycle cycle{env, PodWithClaim(), {}};
    ASSERT_EQ(cycle.PreFilter(), Status());
    EXPECT_EQ(cycle.Filter(Worker()),
              Status::Error("class my-resource-class: selector #0 on device some-driver/worker/instance-1: CEL runtime "
                            "error: no such key: healthy"));
  }
  {
    Env env;
    env.lister.Add(DeviceClassBuilder(kClass).Obj());
    env.lister.Add(WorkerSlice());
    env.lister.Add(WorkerSlice("worker-2", {DeviceBuilder("instance-1").Attr("healthy", testing::BoolAttr(true)).Obj()}));
    env.lister.Add(ClaimBuilder(kClaimName).Request("req-1", kClass, 1, {healthy}).Obj());
    Cycle cycle{env, PodWithClaim(), {}};
    ASSERT_EQ(cycle.PreFilter(), Status());
    EXPECT_EQ(cycle.Filter(Worker()).code(), Code::kError);
    EXPECT_EQ(cycle.Filter(Worker("worker-2")), Status());
  }
}

TEST(DynamicResources, PreFilterRejections) {
  struct Case {
    std::string name;
    api::ResourceClaim claim;
    Status want;
  };
  const std::vector<Case> cases = {
      {"missing-class", PendingClaim().Obj(), Unresolvable("request req-1: device class my-resource-class does not exist")},
      {"claim-with-request-with-unknown-device-class", ClaimBuilder(kClaimName).Request("req-1", "does-not-exist").Obj(),
       Unresolvable("request req-1: device class does-not-exist does not exist")},
      {"claim-with-prioritized-list-unknown-device-class",
       ClaimBuilder(kClaimName).Request(FirstAvailable("req-1", {SubRequest("subreq-1", Exactly("does-not-exist"))})).Obj(),
       Unresolvable("request req-1/subreq-1: device class does-not-exist does not exist")},
      {"empty class name", ClaimBuilder(kClaimName).Request("req-1", "").Obj(),
       Status::Error("request req-1: unsupported request type")},
      {"unknown request type", ClaimBuilder(kClaimName).Request(api::DeviceRequest{.name = "req-1", .exactly = {}, .first_available = {}}).Obj(),
       Unresolvable("resource claim default/my-pod-my-resource, request req-1: unknown request type")},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Env env;
    env.lister.Add(WorkerSlice());
    env.lister.Add(c.claim);
    Cycle cycle{env, PodWithClaim(), {}};
    Status s = cycle.PreFilter();
    EXPECT_EQ(s, c.want) << s.ToString();
    EXPECT_EQ(cycle.PostFilter(), Status(Code::kUnschedulable, "no new claims to deallocate"));
  }
}

// A server without resource.k8s.io/v1 cannot allocate: the pod is rejected, never
// bound without its devices.
TEST(DynamicResources, ServerWithoutDynamicResources) {
  Env env;
  env.Standard();
  env.lister.serves_dynamic_resources = false;
  env.lister.Add(PendingClaim().Obj());
  Cycle cycle{env, PodWithClaim(), {}};
  EXPECT_EQ(cycle.PreFilter(),
            Unresolvable("the API server does not serve resource.k8s.io/v1: ResourceClaims cannot be allocated"));
  Cycle none{env, PodBuilder("plain").Build(), {}};
  EXPECT_EQ(none.PreFilter().code(), Code::kSkip);
}

// upstream "wrong-topology": an allocated claim out of reach of every node, reserved for
// nobody, is deallocated by PostFilter.
TEST(DynamicResources, WrongTopologyDeallocates) {
  Env env;
  env.Standard();
  env.lister.Add(PendingClaim().Allocation(LabelAllocation("no-such-label", "no-such-value")).Obj());
  Cycle cycle{env, PodWithClaim(), {}};
  ASSERT_EQ(cycle.PreFilter(), Status());
  EXPECT_EQ(cycle.Filter(Worker()), Unresolvable("resourceclaim not available on the node"));
  EXPECT_EQ(cycle.PostFilter(), Status(Code::kUnschedulable, "deallocation of ResourceClaim completed"));
  api::ResourceClaimPtr claim = env.Claim();
  EXPECT_FALSE(claim->allocation.has_value());
  EXPECT_TRUE(claim->reserved_for.empty());
  EXPECT_EQ(Verbs(env.writer), std::vector<std::string>{"PATCH status " + kClaimKey});

  // A claim another pod uses stays allocated.
  Env shared;
  shared.Standard();
  shared.lister.Add(PendingClaim()
                        .Allocation(LabelAllocation("no-such-label", "no-such-value"))
                        .ReservedFor("someone-else", "4321")
                        .Obj());
  Cycle other{shared, PodWithClaim(), {}};
  ASSERT_EQ(other.PreFilter(), Status());
  EXPECT_EQ(other.Filter(Worker()), Unresolvable("resourceclaim not available on the node"));
  EXPECT_EQ(other.PostFilter(), Status(Code::kUnschedulable, "still not schedulable"));
  EXPECT_TRUE(shared.writer.Requests().empty());
}

// upstream "timeout" and "timeout_zero": a large claim the allocator cannot satisfy.
TEST(DynamicResources, FilterTimeout) {
  auto setup = [](Env& env) {
    env.lister.Add(DeviceClassBuilder(kClass).Obj());
    std::vector<api::Device> devices;
    for (int i = 0; i < 4; ++i) devices.push_back(DeviceBuilder("instance-" + std::to_string(i)).Obj());
    env.lister.Add(WorkerSlice("worker", devices));
    ClaimBuilder claim(kClaimName);
    for (int i = 0; i < 5; ++i) claim.Request("req-" + std::to_string(i), kClass);
    env.lister.Add(claim.Obj());
  };
  {
    Env env(config::DynamicResourcesArgs{.filter_timeout = std::chrono::nanoseconds(1)});
    setup(env);
    Cycle cycle{env, PodWithClaim(), {}};
    ASSERT_EQ(cycle.PreFilter(), Status());
    EXPECT_EQ(cycle.Filter(Worker()), Unresolvable("timed out trying to allocate devices"));
    EXPECT_EQ(cycle.PostFilter(), Status(Code::kUnschedulable, "still not schedulable"));
  }
  {
    Env env(config::DynamicResourcesArgs{.filter_timeout = std::chrono::nanoseconds(0)});
    setup(env);
    Cycle cycle{env, PodWithClaim(), {}};
    ASSERT_EQ(cycle.PreFilter(), Status());
    EXPECT_EQ(cycle.Filter(Worker()), Unresolvable("cannot allocate all claims"));
  }
}

// upstream "claim-with-prioritized-list".
TEST(DynamicResources, PrioritizedList) {
  Env env;
  env.Standard();
  env.lister.Add(ClaimBuilder(kClaimName).Request(FirstAvailable("req-1", {SubRequest("subreq-1", Exactly(kClass))})).Obj());
  Cycle cycle{env, PodWithClaim(), {}};
  cycle.Schedule();
  EXPECT_EQ(env.Claim()->allocation, WorkerAllocation("req-1/subreq-1"));
}

// ---- Score --------------------------------------------------------------------------------

// upstream single-/multiple-claims-/multiple-requests-prioritized-list-scoring.
TEST(DynamicResourcesScore, PrioritizedListScoring) {
  auto devices = [](int n, std::optional<bool> healthy = std::nullopt) {
    std::vector<api::Device> out;
    for (int i = 1; i <= n; ++i) {
      DeviceBuilder d("instance-" + std::to_string(i));
      if (healthy) d.Attr("healthy", testing::BoolAttr(*healthy));
      out.push_back(d.Obj());
    }
    return out;
  };
  auto counts = [](const std::string& name, std::vector<int64_t> counts) {
    std::vector<api::DeviceSubRequest> subs;
    for (size_t i = 0; i < counts.size(); ++i) subs.push_back(SubRequest("subreq-" + std::to_string(i + 1), Exactly(kClass, counts[i])));
    return FirstAvailable(name, subs);
  };
  auto run = [](Env& env, const api::Pod& pod, const std::vector<std::string>& nodes, std::vector<int64_t> want_raw,
                std::vector<int64_t> want_normalized, const std::vector<std::string>& rejected = {}) {
    Cycle cycle{env, pod, {}};
    ASSERT_EQ(cycle.PreFilter(), Status());
    for (const std::string& n : rejected) EXPECT_EQ(cycle.Filter(Worker(n)), Unresolvable("cannot allocate all claims"));
    std::vector<NodeScore> scores;
    for (const std::string& n : nodes) {
      ASSERT_EQ(cycle.Filter(Worker(n)), Status()) << n;
      scores.push_back({n, cycle.Score(Worker(n))});
    }
    std::vector<int64_t> raw;
    for (const auto& s : scores) raw.push_back(s.score);
    EXPECT_EQ(raw, want_raw);
    ASSERT_EQ(env.plugin->NormalizeScore(cycle.state, cycle.pod, scores), Status());
    std::vector<int64_t> normalized;
    for (const auto& s : scores) normalized.push_back(s.score);
    EXPECT_EQ(normalized, want_normalized);
  };
  {
    SCOPED_TRACE("single-claim-prioritized-list-scoring");
    Env env;
    env.lister.Add(DeviceClassBuilder(kClass).Obj());
    env.lister.Add(WorkerSlice("worker", devices(1, true)));
    env.lister.Add(WorkerSlice("worker-2", devices(1, false)));
    env.lister.Add(ClaimBuilder(kClaimName)
                       .Request(FirstAvailable("req-1", {SubRequest("subreq-1", Exactly(kClass, 1, {"device.attributes[\"some-driver\"].healthy"})),
                                                         SubRequest("subreq-2", Exactly(kClass))}))
                       .Obj());
    run(env, PodWithClaim(), {"worker", "worker-2"}, {8, 7}, {100, 87});
  }
  {
    SCOPED_TRACE("multiple-claims-prioritized-list-scoring");
    Env env;
    env.lister.Add(DeviceClassBuilder(kClass).Obj());
    env.lister.Add(WorkerSlice("worker", devices(4)));
    env.lister.Add(WorkerSlice("worker-2", devices(2)));
    env.lister.Add(WorkerSlice("worker-3", devices(1)));
    env.lister.Add(ClaimBuilder("claim-1").Request(counts("req-1", {1})).Obj());
    env.lister.Add(ClaimBuilder("claim-2").Request(counts("req-1", {4, 3, 2, 1})).Obj());
    api::Pod pod = PodBuilder("my-pod").UID(kPodUID).Build();
    pod.spec.resource_claims = {{.name = "a", .resource_claim_name = "claim-1", .resource_claim_template_name = {}},
                                {.name = "b", .resource_claim_name = "claim-2", .resource_claim_template_name = {}}};
    run(env, pod, {"worker", "worker-2"}, {15, 13}, {100, 86}, {"worker-3"});
  }
  {
    SCOPED_TRACE("multiple-requests-prioritized-list-scoring");
    Env env;
    env.lister.Add(DeviceClassBuilder(kClass).Obj());
    env.lister.Add(WorkerSlice("worker", devices(4)));
    env.lister.Add(WorkerSlice("worker-2", devices(3)));
    env.lister.Add(WorkerSlice("worker-3", devices(2)));
    env.lister.Add(ClaimBuilder(kClaimName).Request(counts("req-1", {2, 1})).Request(counts("req-2", {2, 1})).Obj());
    run(env, PodWithClaim(), {"worker", "worker-2", "worker-3"}, {16, 15, 14}, {100, 93, 87});
  }
}

// A node Filter did not allocate for scores 0; exact requests score nothing.
TEST(DynamicResourcesScore, NoAlternatives) {
  Env env;
  env.Standard();
  env.lister.Add(PendingClaim().Obj());
  Cycle cycle{env, PodWithClaim(), {}};
  ASSERT_EQ(cycle.PreFilter(), Status());
  EXPECT_EQ(cycle.Score(Worker("unfiltered")), 0);
  ASSERT_EQ(cycle.Filter(Worker()), Status());
  EXPECT_EQ(cycle.Score(Worker()), 0);
}

// upstream TestNormalizeScore.
TEST(DynamicResourcesScore, NormalizeScore) {
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases = {
      {{}, {}},
      {{42}, {100}},
      {{8, 8}, {100, 100}},
      {{kMax, kMax}, {100, 100}},
      {{kMax, 0}, {100, 0}},
      {{99, 98, 97}, {100, 98, 97}},
      {{kMax, kMax - 1, 1, 0}, {100, 99, 0, 0}},
      {{0, 0}, {0, 0}},
  };
  Env env;
  CycleState state;
  api::Pod pod = PodWithClaim();
  for (const auto& [in, want] : cases) {
    std::vector<std::string> names;  // NodeScore only points at its name
    for (size_t i = 0; i < in.size(); ++i) names.push_back("node-" + std::to_string(i));
    std::vector<NodeScore> scores;
    for (size_t i = 0; i < in.size(); ++i) scores.push_back({names[i], in[i]});
    ASSERT_EQ(env.plugin->NormalizeScore(state, pod, scores), Status());
    std::vector<int64_t> got;
    for (const auto& s : scores) got.push_back(s.score);
    EXPECT_EQ(got, want);
  }
}

// ---- queueing hints -----------------------------------------------------------------------

const ClusterEventWithHint* Registration(const std::vector<ClusterEventWithHint>& events, EventResource resource) {
  for (const auto& e : events)
    if (e.event.resource == resource) return &e;
  return nullptr;
}

TEST(DynamicResourcesEvents, Registrations) {
  Env env;
  auto events = env.plugin->EventsToRegister();
  ASSERT_EQ(events.size(), 5u);
  const auto* node = Registration(events, EventResource::kNode);
  ASSERT_NE(node, nullptr);
  EXPECT_EQ(node->event.action_type, kAdd | kUpdateNodeLabel | kUpdateNodeAllocatable);
  EXPECT_FALSE(node->hint_fn);
  for (EventResource r : {EventResource::kResourceClaim, EventResource::kPod}) {
    const auto* e = Registration(events, r);
    ASSERT_NE(e, nullptr);
    EXPECT_TRUE(e->hint_fn);
  }
  for (EventResource r : {EventResource::kDeviceClass, EventResource::kResourceSlice}) {
    const auto* e = Registration(events, r);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->event.action_type, kAdd | kUpdate);
    EXPECT_FALSE(e->hint_fn);
  }
}

// upstream Test_isSchedulableAfterClaimChange.
TEST(DynamicResourcesEvents, ClaimChange) {
  Env env;
  env.Standard();
  api::ResourceClaim pending = PendingClaim().Obj();
  env.lister.Add(pending);
  auto events = env.plugin->EventsToRegister();
  const auto& hint = Registration(events, EventResource::kResourceClaim)->hint_fn;
  api::Pod pod = PodWithTemplate(kClaimName);

  api::ResourceClaim finalized = pending;
  finalized.finalizers.push_back(std::string(kClaimFinalizer));
  api::ResourceClaim allocated = pending;
  allocated.allocation = WorkerAllocation();
  api::ResourceClaim unrelated = ClaimBuilder("unrelated").Request("req-1", kClass).Obj();
  api::ResourceClaim other_allocated = ClaimBuilder("other").Request("req-1", kClass).Allocation(WorkerAllocation()).Obj();
  api::ResourceClaim other_deallocated = ClaimBuilder("other").Request("req-1", kClass).Obj();

  struct Case {
    std::string name;
    const api::ResourceClaim* old_claim;
    const api::ResourceClaim* new_claim;
    StatusOr<QueueingHint> want;
  };
  const std::vector<Case> cases = {
      {"backoff-wrong-new-object", nullptr, nullptr, InvalidArgument("unexpected object in isSchedulableAfterClaimChange")},
      {"skip-unrelated-claim", nullptr, &unrelated, QueueingHint::kSkip},
      {"queue-on-add", nullptr, &pending, QueueingHint::kQueue},
      {"skip-adding-finalizer", &pending, &finalized, QueueingHint::kSkip},
      {"queue-on-status-change", &pending, &allocated, QueueingHint::kQueue},
      {"claim-deallocate", &other_allocated, &other_deallocated, QueueingHint::kQueue},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    StatusOr<QueueingHint> got = hint(pod, c.old_claim, c.new_claim);
    ASSERT_EQ(got.ok(), c.want.ok()) << got.status().message();
    if (got.ok()) {
      EXPECT_EQ(*got, *c.want);
    } else {
      EXPECT_EQ(got.status().message(), c.want.status().message());
    }
  }
  // skip-wrong-claim: the pod's claim belongs to another pod.
  Env wrong;
  wrong.Standard();
  api::ResourceClaim foreign = ClaimBuilder(kClaimName).Request("req-1", kClass).OwnedBy("my-pod", "other-uid").Obj();
  wrong.lister.Add(foreign);
  auto wrong_events = wrong.plugin->EventsToRegister();
  auto got = Registration(wrong_events, EventResource::kResourceClaim)->hint_fn(pod, nullptr, &foreign);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, QueueingHint::kSkip);
}

// upstream Test_isSchedulableAfterPodChange.
TEST(DynamicResourcesEvents, PodChange) {
  Env env;
  env.Standard();
  env.lister.Add(PendingClaim().Obj());
  auto events = env.plugin->EventsToRegister();
  const auto& hint = Registration(events, EventResource::kPod)->hint_fn;
  api::Pod waiting = PodWithTemplate(std::nullopt);

  api::Pod complete = PodWithTemplate(kClaimName);
  auto got = hint(waiting, &waiting, &complete);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, QueueingHint::kQueue);

  api::Pod other = complete;
  other.metadata.uid = "other";
  got = hint(waiting, &waiting, &other);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, QueueingHint::kSkip);

  api::Pod missing = PodWithTemplate("no-such-claim");
  got = hint(waiting, &waiting, &missing);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, QueueingHint::kSkip);

  // incomplete: one of two template claims made.
  api::Pod incomplete = PodWithTemplate(kClaimName);
  incomplete.spec.resource_claims.push_back(
      {.name = "second", .resource_claim_name = std::nullopt, .resource_claim_template_name = "my-template"});
  got = hint(waiting, &waiting, &incomplete);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, QueueingHint::kSkip);
}

}  // namespace
}  // namespace ksched::framework::plugins::dynamicresources
