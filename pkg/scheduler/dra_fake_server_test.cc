// DynamicResources end to end over HTTP: ksched wired as cmd/ksched wires it (informers,
// ClusterListers, the default profile, a curl client) against a scripted API server
// that serves resource.k8s.io/v1, which the 1.20 test apiserver does not. It proves the
// writes a real server would see: the finalizer, then the allocation and reservation
// (both guarded by the claim's resourceVersion), a conflict retried on a fresh read, and
// only then the binding; and the PodScheduled=False messages when a pod cannot run.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <chrono>
#include <condition_variable>
#include <initializer_list>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/defaults.h"
#include "informers/cluster_lister.h"
#include "informers/informer.h"
#include "pkg/api/json.h"
#include "pkg/api/resource.h"
#include "pkg/client/api_client.h"
#include "pkg/client/curl_client.h"
#include "pkg/client/rest_config.h"
#include "pkg/framework/registry.h"
#include "pkg/scheduler/scheduler.h"
#include "pkg/simulate/json_patch.h"
#include "pkg/util/mutex.h"
#include "tests/fakes/fake_api_server.h"
#include "tests/fakes/resource_builders.h"

namespace ksched::scheduler {
namespace {

using namespace std::chrono_literals;
using ksched::testing::FakeApiServer;
using ksched::testing::HttpRequest;
using ksched::testing::ResponseWriter;

constexpr std::string_view kClaimPath = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/gpu-claim";
constexpr std::string_view kBindingPath = "/api/v1/namespaces/default/pods/trainer/binding";
constexpr std::string_view kPodStatusPath = "/api/v1/namespaces/default/pods/trainer/status";

std::string NotFound() {
  return R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","reason":"NotFound","code":404})";
}

std::string List(std::string_view kind, std::string_view api_version, const std::string& items) {
  return R"({"kind":")" + std::string(kind) + R"(","apiVersion":")" + std::string(api_version) +
         R"(","metadata":{"resourceVersion":"1"},"items":[)" + items + "]}";
}

std::string NodeJson(std::string_view name) {
  const std::string n(name);
  return R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")" + n + R"(","uid":"uid-)" + n +
         R"(","resourceVersion":"2","labels":{"kubernetes.io/hostname":")" + n +
         R"("}},"status":{"capacity":{"cpu":"8","memory":"32Gi","pods":"110"},)"
         R"("allocatable":{"cpu":"8","memory":"32Gi","pods":"110"}}})";
}

constexpr std::string_view kPodJson =
    R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"trainer","namespace":"default","uid":"pod-uid-1",)"
    R"("resourceVersion":"3"},"spec":{"schedulerName":"default-scheduler","containers":[{"name":"train",)"
    R"("image":"trainer","resources":{"requests":{"cpu":"1"},"claims":[{"name":"gpu"}]}}],)"
    R"("resourceClaims":[{"name":"gpu","resourceClaimName":"gpu-claim"}]},"status":{"phase":"Pending"}})";

constexpr std::string_view kDeviceClassJson =
    R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":"gpu.example.com",)"
    R"("uid":"class-uid-1","resourceVersion":"2"},"spec":{"selectors":[{"cel":{"expression":)"
    R"("device.driver == \"gpu.example.com\""}}]}})";

constexpr std::string_view kSliceJson =
    R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{"name":"gpu-node-gpu.example.com",)"
    R"("uid":"slice-uid-1","resourceVersion":"3"},"spec":{"driver":"gpu.example.com","nodeName":"gpu-node",)"
    R"("pool":{"name":"gpu-node","generation":1,"resourceSliceCount":1},"devices":[)"
    R"({"name":"gpu-0","attributes":{"model":{"string":"A100"}}},)"
    R"({"name":"gpu-1","attributes":{"model":{"string":"A100"}}}]}})";

// The claim default/gpu-claim, one request "gpu" for a device of `model`.
std::string ClaimJson(std::string_view model) {
  return R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"gpu-claim",)"
         R"("namespace":"default","uid":"claim-uid-1","resourceVersion":"5"},"spec":{"devices":{"requests":[)"
         R"({"name":"gpu","exactly":{"deviceClassName":"gpu.example.com","selectors":[{"cel":{"expression":)"
         R"("device.attributes[\"gpu.example.com\"].model == \")" +
         std::string(model) + R"(\""}}]}}]}},"status":{}})";
}

// ---- reading JSON in assertions ---------------------------------------------------------

simdjson::dom::element Parse(simdjson::dom::parser& parser, const std::string& json) {
  auto doc = parser.parse(json);
  EXPECT_EQ(doc.error(), simdjson::SUCCESS) << json;
  return doc.value_unsafe();
}

// The string at `path` (object keys) in `e`; nullopt when absent or not a string.
std::optional<std::string> StringAt(simdjson::dom::element e, std::initializer_list<std::string_view> path) {
  for (std::string_view key : path) {
    auto next = e[key];
    if (next.error()) return std::nullopt;
    e = next.value_unsafe();
  }
  std::string_view s;
  if (e.get_string().get(s)) return std::nullopt;
  return std::string(s);
}

// The keys of the object `e` (empty when it is not an object).
std::set<std::string> Keys(simdjson::dom::element e) {
  std::set<std::string> keys;
  simdjson::dom::object obj;
  if (e.get_object().get(obj)) return keys;
  for (auto field : obj) keys.emplace(field.key);
  return keys;
}

std::vector<std::string> Strings(simdjson::dom::element e) {
  std::vector<std::string> out;
  simdjson::dom::array arr;
  if (e.get_array().get(arr)) return out;
  for (simdjson::dom::element item : arr) {
    std::string_view s;
    out.emplace_back(item.get_string().get(s) ? "<not a string>" : std::string(s));
  }
  return out;
}

struct Condition {
  std::string status, reason, message;
};

// The PodScheduled condition of a pod status patch; nullopt when it has none.
std::optional<Condition> PodScheduledIn(const std::string& patch) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc = Parse(parser, patch);
  simdjson::dom::array conditions;
  if (doc["status"]["conditions"].get_array().get(conditions)) return std::nullopt;
  for (simdjson::dom::element c : conditions) {
    if (StringAt(c, {"type"}) != "PodScheduled") continue;
    return Condition{StringAt(c, {"status"}).value_or(""), StringAt(c, {"reason"}).value_or(""),
                     StringAt(c, {"message"}).value_or("")};
  }
  return std::nullopt;
}

// ---- the API server ---------------------------------------------------------------------

struct ClusterOptions {
  // false: discovery and every resource.k8s.io path answer 404 (a server before 1.34).
  bool serves_resources = true;
  std::string claim_model = "A100";  // what the claim's selector asks for
  // The first status patch of the claim loses a race: someone else changed the claim
  // (a label) and the server answers 409.
  bool conflict_on_first_status_patch = false;
};

// A two-node cluster ("gpu-node" with two A100 devices, "plain-node" with none), one
// pending pod default/trainer and its claim default/gpu-claim. Lists are served from
// these objects, watches stay silent, claim patches are applied to the stored claim
// after checking their resourceVersion precondition, binds and status patches succeed.
class DraApiServer {
 public:
  explicit DraApiServer(ClusterOptions options)
      : options_(std::move(options)),
        claim_(ClaimJson(options_.claim_model)),
        server_([this](const HttpRequest& req, ResponseWriter& w) { Handle(req, w); }) {}

  std::string url() const { return server_.url(); }
  // Every request, in arrival order.
  std::vector<HttpRequest> Requests() const { return server_.requests(); }
  std::string StoredClaim() const {
    MutexLock l(mu_);
    return claim_;
  }
  // Requests the server had no answer for (404s outside the scripted ones).
  std::vector<std::string> Unexpected() const {
    MutexLock l(mu_);
    return unexpected_;
  }

  // Blocks until a request matching `pred` has been answered, or `timeout` passes.
  template <typename Pred>
  bool WaitForRequest(Pred pred, std::chrono::milliseconds timeout) const {
    MutexLock l(mu_);
    return cv_.wait_for(l, timeout, [&]() REQUIRES(mu_) {
      for (const HttpRequest& r : answered_)
        if (pred(r)) return true;
      return false;
    });
  }
  bool WaitForBinding(std::chrono::milliseconds timeout) const {
    return WaitForRequest([](const HttpRequest& r) { return r.method == "POST" && r.path == kBindingPath; },
                          timeout);
  }
  // The newest PodScheduled condition a pod status patch carried, once one has arrived
  // within `timeout`.
  std::optional<Condition> WaitForPodScheduled(std::chrono::milliseconds timeout) const {
    std::optional<Condition> last;
    WaitForRequest(
        [&](const HttpRequest& r) {
          if (r.method != "PATCH" || r.path != kPodStatusPath) return false;
          if (auto c = PodScheduledIn(r.body)) last = std::move(c);
          return last.has_value();
        },
        timeout);
    return last;
  }

 private:
  void Handle(const HttpRequest& req, ResponseWriter& w) {
    Answer(req, w);
    MutexLock l(mu_);
    answered_.push_back(req);
    cv_.notify_all();
  }

  void Answer(const HttpRequest& req, ResponseWriter& w) {
    auto watch = req.query.find("watch");
    if (watch != req.query.end() && (watch->second == "1" || watch->second == "true")) {
      w.StartChunked(200);  // nothing ever changes: hold the watch open
      server_.WaitForStop(30s);
      return;
    }
    const std::string& path = req.path;
    const bool resource_path = path.starts_with("/apis/resource.k8s.io");
    if (resource_path && !options_.serves_resources) {
      w.Respond(404, NotFound());
      return;
    }
    if (req.method == "GET") {
      AnswerGet(req, w);
    } else if (req.method == "PATCH" && (path == kClaimPath || path == std::string(kClaimPath) + "/status")) {
      PatchClaim(req, w);
    } else if (req.method == "POST" && path == kBindingPath) {
      w.Respond(201, R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":201})");
    } else if (req.method == "PATCH" && path == kPodStatusPath) {
      w.Respond(200, std::string(kPodJson));
    } else if (path.ends_with("/events") && req.method == "POST") {
      w.Respond(201, req.body);
    } else if (path.find("/events/") != std::string::npos && req.method == "PATCH") {
      w.Respond(200, req.body);
    } else {
      Unanswered(req, w);
    }
  }

  void AnswerGet(const HttpRequest& req, ResponseWriter& w) {
    const std::string& path = req.path;
    if (path == "/apis/resource.k8s.io") {
      w.Respond(200, R"({"kind":"APIGroup","apiVersion":"v1","name":"resource.k8s.io","versions":[)"
                     R"({"groupVersion":"resource.k8s.io/v1","version":"v1"}],)"
                     R"("preferredVersion":{"groupVersion":"resource.k8s.io/v1","version":"v1"}})");
    } else if (path == "/apis/policy") {
      w.Respond(404, NotFound());
    } else if (path == "/api/v1/nodes") {
      w.Respond(200, List("NodeList", "v1", NodeJson("gpu-node") + "," + NodeJson("plain-node")));
    } else if (path == "/api/v1/pods") {
      w.Respond(200, List("PodList", "v1", std::string(kPodJson)));
    } else if (path == "/apis/resource.k8s.io/v1/deviceclasses") {
      w.Respond(200, List("DeviceClassList", "resource.k8s.io/v1", std::string(kDeviceClassJson)));
    } else if (path == "/apis/resource.k8s.io/v1/resourceslices") {
      w.Respond(200, List("ResourceSliceList", "resource.k8s.io/v1", std::string(kSliceJson)));
    } else if (path == "/apis/resource.k8s.io/v1/resourceclaims") {
      w.Respond(200, List("ResourceClaimList", "resource.k8s.io/v1", StoredClaim()));
    } else if (path == kClaimPath) {
      w.Respond(200, StoredClaim());
    } else if (auto empty = EmptyList(path)) {
      w.Respond(200, *empty);
    } else {
      Unanswered(req, w);
    }
  }

  // The collections of the other informers: nothing in them.
  static std::optional<std::string> EmptyList(std::string_view path) {
    struct Collection {
      std::string_view path, kind, api_version;
    };
    static constexpr Collection kCollections[] = {
        {"/api/v1/namespaces", "NamespaceList", "v1"},
        {"/api/v1/services", "ServiceList", "v1"},
        {"/api/v1/replicationcontrollers", "ReplicationControllerList", "v1"},
        {"/api/v1/persistentvolumeclaims", "PersistentVolumeClaimList", "v1"},
        {"/api/v1/persistentvolumes", "PersistentVolumeList", "v1"},
        {"/apis/apps/v1/replicasets", "ReplicaSetList", "apps/v1"},
        {"/apis/apps/v1/statefulsets", "StatefulSetList", "apps/v1"},
        {"/apis/storage.k8s.io/v1/storageclasses", "StorageClassList", "storage.k8s.io/v1"},
        {"/apis/storage.k8s.io/v1/csinodes", "CSINodeList", "storage.k8s.io/v1"},
        {"/apis/storage.k8s.io/v1/csidrivers", "CSIDriverList", "storage.k8s.io/v1"},
    };
    for (const Collection& c : kCollections)
      if (c.path == path) return List(c.kind, c.api_version, "");
    return std::nullopt;
  }

  // As the API server: the patch's metadata.resourceVersion (and uid, when given) must
  // match the stored claim, else 409; the answer is the whole claim after the patch.
  void PatchClaim(const HttpRequest& req, ResponseWriter& w) {
    const bool status = req.path.ends_with("/status");
    MutexLock l(mu_);
    auto rv = simulate::StringAt(req.body, "metadata.resourceVersion");
    auto uid = simulate::StringAt(req.body, "metadata.uid");
    auto stored_rv = simulate::StringAt(claim_, "metadata.resourceVersion");
    if (!rv.ok() || !uid.ok()) {
      w.Respond(400, R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":"BadRequest","code":400})");
      return;
    }
    const bool rv_matches = !rv->has_value() || *rv == *stored_rv;
    const bool uid_matches = !uid->has_value() || **uid == "claim-uid-1";
    if (status && rv_matches && options_.conflict_on_first_status_patch && !conflict_sent_) {
      // Someone else's update lands first.
      conflict_sent_ = true;
      claim_ = *simulate::MergePatch(claim_, R"({"metadata":{"labels":{"touched-by":"someone-else"}}})");
      BumpResourceVersionLocked();
      Conflict(w);
      return;
    }
    if (!rv_matches || !uid_matches) {
      Conflict(w);
      return;
    }
    auto patched = simulate::MergePatch(claim_, req.body);
    if (!patched.ok()) {
      w.Respond(400, R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":"BadRequest","code":400})");
      return;
    }
    claim_ = std::move(*patched);
    BumpResourceVersionLocked();
    w.Respond(200, claim_);
  }

  void BumpResourceVersionLocked() REQUIRES(mu_) {
    claim_ = *simulate::MergePatch(
        claim_, R"({"metadata":{"resourceVersion":")" + std::to_string(++resource_version_) + "\"}}");
  }

  static void Conflict(ResponseWriter& w) {
    w.Respond(409, R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":)"
                   R"("Operation cannot be fulfilled on resourceclaims.resource.k8s.io \"gpu-claim\": the object )"
                   R"(has been modified; please apply your changes to the latest version and try again",)"
                   R"("reason":"Conflict","details":{"name":"gpu-claim","group":"resource.k8s.io",)"
                   R"("kind":"resourceclaims"},"code":409})");
  }

  void Unanswered(const HttpRequest& req, ResponseWriter& w) {
    {
      MutexLock l(mu_);
      unexpected_.push_back(req.method + " " + req.target);
    }
    w.Respond(404, NotFound());
  }

  const ClusterOptions options_;
  mutable Mutex mu_;
  mutable std::condition_variable_any cv_;
  std::string claim_ GUARDED_BY(mu_);
  int resource_version_ GUARDED_BY(mu_) = 5;  // the stored claim's
  bool conflict_sent_ GUARDED_BY(mu_) = false;
  std::vector<HttpRequest> answered_ GUARDED_BY(mu_);
  std::vector<std::string> unexpected_ GUARDED_BY(mu_);
  FakeApiServer server_;  // last: its threads use the members above
};

// ---- ksched -----------------------------------------------------------------------------

client::ApiClientPtr ClientFor(const std::string& url) {
  client::RestConfig cfg;
  cfg.server = url;
  cfg.qps = 0;
  auto c = client::NewCurlApiClient(cfg);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? std::move(*c) : nullptr;
}

// ksched as tests/harness/scheduler_harness.h wires it (the default profile), against
// `url`: running once the constructor returns.
class Ksched {
 public:
  explicit Ksched(const std::string& url) : bind_(ClientFor(url)), status_(ClientFor(url)), watch_(ClientFor(url)) {
    config::KubeSchedulerConfiguration cfg;
    config::SetDefaults(cfg);
    pods_ = std::make_unique<informers::PodInformer>(
        *watch_, "/api/v1/pods", informers::InformerOptions{.field_selector = informers::kNonTerminalPodsSelector});
    nodes_ = std::make_unique<informers::NodeInformer>(*watch_, "/api/v1/nodes");
    listers_ = std::make_unique<informers::ClusterListers>(*watch_);
    SchedulerOptions o;
    o.config = cfg;
    o.registry = framework::InTreeRegistry();
    o.bind_client = bind_.get();
    o.status_client = status_.get();
    o.pod_lister = [this](const std::string& key) { return pods_->Get(key); };
    o.cluster_lister = listers_.get();
    auto s = Scheduler::New(std::move(o));
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    sched_ = std::move(*s);
    pods_->AddHandler(&sched_->pod_handler());
    nodes_->AddHandler(&sched_->node_handler());
    sched_->WatchStorage(listers_->storage());
    sched_->WatchResources(listers_->resources());
    listers_->Start();
    nodes_->Start();
    pods_->Start();
    EXPECT_TRUE(listers_->WaitForSync(10s)) << listers_->SyncStatus().ToString();
    EXPECT_TRUE(nodes_->WaitForSync(10s));
    EXPECT_TRUE(pods_->WaitForSync(10s));
    sched_->Run();
  }
  ~Ksched() {
    sched_->Stop(5s);
    pods_->Stop();
    nodes_->Stop();
    listers_->Stop();
  }
  informers::ClusterListers& listers() { return *listers_; }

 private:
  client::ApiClientPtr bind_, status_, watch_;
  std::unique_ptr<informers::PodInformer> pods_;
  std::unique_ptr<informers::NodeInformer> nodes_;
  std::unique_ptr<informers::ClusterListers> listers_;
  std::unique_ptr<Scheduler> sched_;
};

// The requests that touch the claim or bind the pod, as "METHOD path".
std::vector<std::string> ClaimAndBindRequests(const std::vector<HttpRequest>& requests) {
  std::vector<std::string> out;
  for (const HttpRequest& r : requests) {
    if (r.path.starts_with(kClaimPath) || r.path == kBindingPath) out.push_back(r.method + " " + r.path);
  }
  return out;
}

std::vector<HttpRequest> ClaimPatches(const std::vector<HttpRequest>& requests) {
  std::vector<HttpRequest> out;
  for (const HttpRequest& r : requests)
    if (r.method == "PATCH" && r.path.starts_with(kClaimPath)) out.push_back(r);
  return out;
}

std::string BindingTarget(const std::vector<HttpRequest>& requests) {
  for (const HttpRequest& r : requests) {
    if (r.method != "POST" || r.path != kBindingPath) continue;
    simdjson::dom::parser parser;
    return StringAt(Parse(parser, r.body), {"target", "name"}).value_or("<no target.name>");
  }
  return "";
}

const std::string kFinalizerPatch = "PATCH " + std::string(kClaimPath);
const std::string kStatusPatch = "PATCH " + std::string(kClaimPath) + "/status";
const std::string kClaimGet = "GET " + std::string(kClaimPath);
const std::string kBind = "POST " + std::string(kBindingPath);

// What PreBind must write: gpu-0 of gpu-node's pool, pinned to gpu-node, reserved for the pod.
void ExpectAllocationAndReservation(const HttpRequest& patch, std::string_view want_resource_version) {
  SCOPED_TRACE(patch.body);
  EXPECT_EQ(patch.headers.at("content-type"), client::kContentMergePatch);
  simdjson::dom::parser parser;
  simdjson::dom::element doc = Parse(parser, patch.body);
  EXPECT_EQ(Keys(doc), (std::set<std::string>{"metadata", "status"}));
  EXPECT_EQ(Keys(doc["metadata"].value_unsafe()), (std::set<std::string>{"uid", "resourceVersion"}));
  EXPECT_EQ(Keys(doc["status"].value_unsafe()), (std::set<std::string>{"allocation", "reservedFor"}));
  // The patch reads as a partial claim: decode it as ksched decodes claims.
  api::JsonParser claim_parser;
  auto claim = api::DecodeResourceClaim(claim_parser, api::JsonText(patch.body));
  ASSERT_TRUE(claim.ok()) << claim.status().ToString();
  EXPECT_EQ((*claim)->metadata.uid, "claim-uid-1");
  EXPECT_EQ((*claim)->metadata.resource_version, want_resource_version);
  ASSERT_TRUE((*claim)->allocation.has_value());
  const api::AllocationResult& a = *(*claim)->allocation;
  EXPECT_EQ(a.results, (std::vector<api::DeviceRequestAllocationResult>{
                           {.request = "gpu", .driver = "gpu.example.com", .pool = "gpu-node", .device = "gpu-0"}}));
  EXPECT_TRUE(a.config.empty());
  EXPECT_EQ(a.node_selector, std::optional(ksched::testing::LocalNodeSelector("gpu-node")));
  EXPECT_EQ((*claim)->reserved_for, (std::vector<api::ResourceClaimConsumerReference>{
                                        {.api_group = "", .resource = "pods", .name = "trainer", .uid = "pod-uid-1"}}));
}

void ExpectFinalizerPatch(const HttpRequest& patch, std::string_view want_resource_version) {
  SCOPED_TRACE(patch.body);
  EXPECT_EQ(patch.headers.at("content-type"), client::kContentMergePatch);
  simdjson::dom::parser parser;
  simdjson::dom::element doc = Parse(parser, patch.body);
  EXPECT_EQ(Keys(doc), (std::set<std::string>{"metadata"}));
  EXPECT_EQ(Keys(doc["metadata"].value_unsafe()), (std::set<std::string>{"resourceVersion", "finalizers"}));
  EXPECT_EQ(StringAt(doc, {"metadata", "resourceVersion"}), want_resource_version);
  EXPECT_EQ(Strings(doc["metadata"]["finalizers"].value_unsafe()),
            (std::vector<std::string>{"resource.kubernetes.io/delete-protection"}));
}

// ---- tests ------------------------------------------------------------------------------

TEST(DraFakeServerTest, TheClaimIsAllocatedReservedThenThePodBound) {
  DraApiServer server(ClusterOptions{});
  {
    Ksched ksched(server.url());
    ASSERT_TRUE(ksched.listers().ServesDynamicResources());
    ASSERT_TRUE(server.WaitForBinding(10s)) << "trainer was not bound";
  }
  const std::vector<HttpRequest> requests = server.Requests();
  EXPECT_EQ(BindingTarget(requests), "gpu-node");
  // The finalizer first, then allocation and reservation, and the bind only after both.
  EXPECT_EQ(ClaimAndBindRequests(requests), (std::vector<std::string>{kFinalizerPatch, kStatusPatch, kBind}));
  const std::vector<HttpRequest> patches = ClaimPatches(requests);
  ASSERT_EQ(patches.size(), 2u);
  ExpectFinalizerPatch(patches[0], "5");
  ExpectAllocationAndReservation(patches[1], "6");  // the version the finalizer patch returned

  // The server now holds what the plugin meant to write.
  api::JsonParser parser;
  auto stored = api::DecodeResourceClaim(parser, api::JsonText(server.StoredClaim()));
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  EXPECT_EQ((*stored)->metadata.resource_version, "7");
  EXPECT_EQ((*stored)->finalizers, (std::vector<std::string>{"resource.kubernetes.io/delete-protection"}));
  ASSERT_TRUE((*stored)->allocation.has_value());
  EXPECT_EQ((*stored)->allocation->results.size(), 1u);
  EXPECT_EQ((*stored)->reserved_for.size(), 1u);
  EXPECT_EQ(server.Unexpected(), std::vector<std::string>{});
}

TEST(DraFakeServerTest, AConflictIsRetriedOnAFreshRead) {
  DraApiServer server({.conflict_on_first_status_patch = true});
  {
    Ksched ksched(server.url());
    ASSERT_TRUE(server.WaitForBinding(10s)) << "trainer was not bound";
  }
  const std::vector<HttpRequest> requests = server.Requests();
  EXPECT_EQ(BindingTarget(requests), "gpu-node");
  // The finalizer (rv 5 -> 6); the status patch at 6 loses to someone else's label (-> 7);
  // a fresh GET; the status patch again at 7; then the bind. The finalizer is on the
  // fresh copy already, so it is not patched again.
  EXPECT_EQ(ClaimAndBindRequests(requests),
            (std::vector<std::string>{kFinalizerPatch, kStatusPatch, kClaimGet, kStatusPatch, kBind}));
  const std::vector<HttpRequest> patches = ClaimPatches(requests);
  ASSERT_EQ(patches.size(), 3u);
  ExpectFinalizerPatch(patches[0], "5");
  ExpectAllocationAndReservation(patches[1], "6");
  ExpectAllocationAndReservation(patches[2], "7");

  // Both writes survive: the other writer's label and ours.
  simdjson::dom::parser parser;
  const std::string stored = server.StoredClaim();
  simdjson::dom::element doc = Parse(parser, stored);
  EXPECT_EQ(StringAt(doc, {"metadata", "labels", "touched-by"}), "someone-else");
  EXPECT_EQ(StringAt(doc, {"metadata", "resourceVersion"}), "8");
  api::JsonParser claim_parser;
  auto claim = api::DecodeResourceClaim(claim_parser, api::JsonText(stored));
  ASSERT_TRUE(claim.ok()) << claim.status().ToString();
  EXPECT_TRUE((*claim)->allocation.has_value());
  EXPECT_EQ((*claim)->reserved_for.size(), 1u);
  EXPECT_EQ(server.Unexpected(), std::vector<std::string>{});
}

TEST(DraFakeServerTest, WithoutTheResourceGroupThePodIsNeverBound) {
  DraApiServer server({.serves_resources = false});
  Ksched ksched(server.url());
  EXPECT_FALSE(ksched.listers().ServesDynamicResources());
  std::optional<Condition> cond = server.WaitForPodScheduled(10s);
  ASSERT_TRUE(cond.has_value()) << "no PodScheduled condition patched";
  EXPECT_EQ(cond->status, "False");
  EXPECT_EQ(cond->reason, "Unschedulable");
  // A PreFilter rejection is stated once (upstream's Diagnosis.PreFilterMsg), then the
  // PostFilter reasons: DynamicResources has nothing to deallocate, preemption no node.
  EXPECT_EQ(cond->message,
            "0/2 nodes are available: the API server does not serve resource.k8s.io/v1: ResourceClaims cannot be "
            "allocated. no new claims to deallocate, preemption: 0/2 nodes are available: 2 Preemption is not "
            "helpful for scheduling..");
  EXPECT_FALSE(server.WaitForBinding(2s)) << "bound without an allocation";
  for (const HttpRequest& r : server.Requests())
    EXPECT_FALSE(r.path.starts_with("/apis/resource.k8s.io/v1")) << r.method << " " << r.target;
  EXPECT_EQ(server.Unexpected(), std::vector<std::string>{});
}

TEST(DraFakeServerTest, AClaimNoDeviceSatisfiesKeepsThePodPending) {
  DraApiServer server({.claim_model = "H100"});
  Ksched ksched(server.url());
  std::optional<Condition> cond = server.WaitForPodScheduled(10s);
  ASSERT_TRUE(cond.has_value()) << "no PodScheduled condition patched";
  EXPECT_EQ(cond->status, "False");
  EXPECT_EQ(cond->reason, "Unschedulable");
  // Upstream's FitError text: both nodes fail DynamicResources' Filter; then the reasons
  // of every PostFilter plugin that rejected, joined by ", " (RunPostFilterPlugins):
  // DynamicResources has no allocated claim to free ("still not schedulable"), and
  // preemption cannot help where a node is UnschedulableAndUnresolvable. Each part ends
  // in " %v." (SeparatorFormat), hence the final "..".
  EXPECT_EQ(cond->message,
            "0/2 nodes are available: 2 cannot allocate all claims. still not schedulable, preemption: 0/2 nodes "
            "are available: 2 Preemption is not helpful for scheduling..");
  EXPECT_FALSE(server.WaitForBinding(2s)) << "bound without an allocation";
  EXPECT_TRUE(ClaimPatches(server.Requests()).empty());
  EXPECT_EQ(server.Unexpected(), std::vector<std::string>{});
}

}  // namespace
}  // namespace ksched::scheduler
