// Informers against a real kube-apiserver + etcd: pagination, ordered watch events,
// apiserver restarts, 410 after etcd compaction, token rotation.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "pkg/client/curl_client.h"
#include "informers/informer.h"
#include "pkg/client/rest_config.h"
#include "pkg/api/json.h"
#include "tests/harness/api_helpers.h"
#include "tests/harness/control_plane.h"
#include "tests/fakes/event_log.h"
#include "tests/fakes/objects.h"

namespace ksched::informers {
namespace {

using namespace std::chrono_literals;
using ksched::testing::ControlPlane;

using ksched::testing::AdminConfig;
using ksched::testing::CreateNamespace;

client::ApiClientPtr Client(const client::RestConfig& cfg = AdminConfig()) { return ksched::testing::NewClient(cfg); }

std::string PodJson(const std::string& ns, const std::string& name, const std::string& label = "v1") {
  api::Pod p = ksched::testing::TestPod(ns, name, "ksched", {{"cpu", api::Quantity::FromMilli(100)}});
  p.metadata.labels.Set("rev", label);
  return api::EncodePod(p);
}

// Creates n pods concurrently; returns how many succeeded.
int CreatePods(client::ApiClient& c, const std::string& ns, int n, const std::string& prefix = "p") {
  std::mutex mu;
  std::condition_variable cv;
  int done = 0, ok = 0;
  for (int i = 0; i < n; ++i) {
    c.Send({.verb = client::Verb::kPost, .path = "/api/v1/namespaces/" + ns + "/pods",
            .body = PodJson(ns, prefix + std::to_string(i))},
           [&](StatusOr<client::Response> r) {
             std::lock_guard l(mu);
             ++done;
             ok += r.ok();
             if (!r.ok() && ok + 1 == done) ADD_FAILURE() << "first create failure: " << r.status().ToString();
             cv.notify_all();
           });
  }
  std::unique_lock l(mu);
  cv.wait_for(l, 300s, [&] { return done == n; });
  return ok;
}

Status DeletePod(client::ApiClient& c, const std::string& ns, const std::string& name) {
  return c.Do({.verb = client::Verb::kDelete, .path = "/api/v1/namespaces/" + ns + "/pods/" + name}).status();
}

class Recorder : public EventHandler<api::Pod>, public ksched::testing::EventLog {
 public:
  void OnAdd(const api::PodPtr& p) override { Push("add " + p->metadata.name); }
  void OnUpdate(const api::PodPtr&, const api::PodPtr& n) override {
    Push("update " + n->metadata.name + " " + *n->metadata.labels.Get("rev"));
  }
  void OnDelete(const Deleted<api::Pod>& d) override {
    Push((d.final_state_unknown ? "tombstone " : "delete ") + d.last_known->metadata.name);
  }
};

InformerOptions Opts() {
  InformerOptions o;
  o.field_selector = kNonTerminalPodsSelector;
  o.initial_backoff = 100ms;
  o.max_backoff = 1s;
  return o;
}

TEST(InformerIntegrationTest, ListsFiveThousandPodsFromTheWatchCache) {
  auto c = Client();
  CreateNamespace(*c, "inf-list");
  ASSERT_EQ(CreatePods(*c, "inf-list", 5000), 5000);
  PodInformer inf(*c, "/api/v1/namespaces/inf-list/pods", Opts());
  inf.Start();
  ASSERT_TRUE(inf.WaitForSync(120s));
  // The first list asks for RV "0", as client-go does: the watch cache answers in one
  // piece, whatever the limit (pagination against etcd: CompactionForcesRelist...).
  // The cache may trail the last creates by a moment; the watch brings the rest.
  EXPECT_EQ(inf.Stats().list_pages, 1);
  for (int i = 0; i < 100 && inf.Size() < 5000u; ++i) std::this_thread::sleep_for(50ms);
  EXPECT_EQ(inf.Size(), 5000u);
  EXPECT_EQ(inf.Stats().lists, 1);
  auto p = inf.Get("inf-list/p4999");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->spec.scheduler_name, "ksched");
}

TEST(InformerIntegrationTest, WatchDeliversAddUpdateDeleteInOrder) {
  auto c = Client();
  CreateNamespace(*c, "inf-watch");
  PodInformer inf(*c, "/api/v1/namespaces/inf-watch/pods", Opts());
  Recorder rec;
  inf.AddHandler(&rec);
  inf.Start();
  ASSERT_TRUE(inf.WaitForSync(30s));
  ASSERT_TRUE(c->Do({.verb = client::Verb::kPost, .path = "/api/v1/namespaces/inf-watch/pods", .body = PodJson("inf-watch", "a")}).ok());
  auto patched = c->Do({.verb = client::Verb::kPatch, .path = "/api/v1/namespaces/inf-watch/pods/a",
                        .body = R"({"metadata":{"labels":{"rev":"v2"}}})", .content_type = std::string(client::kContentMergePatch)});
  ASSERT_TRUE(patched.ok()) << patched.status().ToString();
  ASSERT_TRUE(DeletePod(*c, "inf-watch", "a").ok());
  ASSERT_TRUE(rec.Saw("delete a"));
  // Deletion with a grace period first marks the pod (an update), then removes it.
  auto ev = rec.events();
  ASSERT_GE(ev.size(), 3u);
  EXPECT_EQ(ev[0], "add a");
  EXPECT_EQ(ev[1], "update a v2");
  EXPECT_EQ(ev.back(), "delete a");
  EXPECT_EQ(inf.Get("inf-watch/a"), nullptr);
}

TEST(InformerIntegrationTest, ResumesAfterApiserverRestartWithoutRelist) {
  auto c = Client();
  CreateNamespace(*c, "inf-restart");
  ASSERT_EQ(CreatePods(*c, "inf-restart", 3, "before"), 3);
  PodInformer inf(*c, "/api/v1/namespaces/inf-restart/pods", Opts());
  Recorder rec;
  inf.AddHandler(&rec);
  inf.Start();
  ASSERT_TRUE(inf.WaitForSync(30s));
  ASSERT_TRUE(ControlPlane::Get().StopApiserver().ok());
  ASSERT_TRUE(ControlPlane::Get().StartApiserver().ok());
  ASSERT_EQ(CreatePods(*c, "inf-restart", 3, "after"), 3);
  ASSERT_TRUE(rec.Saw("add after0") && rec.Saw("add after1") && rec.Saw("add after2"));
  EXPECT_EQ(inf.Stats().lists, 1);
  EXPECT_EQ(inf.Stats().relists_after_gone, 0);
  EXPECT_GE(inf.Stats().watches, 2);
  EXPECT_EQ(inf.Size(), 6u);
}

TEST(InformerIntegrationTest, CompactionForcesRelistWithTombstones) {
  auto c = Client();
  CreateNamespace(*c, "inf-gone");
  ASSERT_EQ(CreatePods(*c, "inf-gone", 5, "g"), 5);
  InformerOptions opts = Opts();
  opts.page_size = 2;
  PodInformer inf(*c, "/api/v1/namespaces/inf-gone/pods", opts);
  Recorder rec;
  inf.AddHandler(&rec);
  inf.Start();
  ASSERT_TRUE(inf.WaitForSync(30s));
  // While the apiserver is down, g1 disappears from etcd directly and history is
  // compacted: the informer's RV is now too old, so it must relist and learn of g1's
  // deletion only as a tombstone.
  ASSERT_TRUE(ControlPlane::Get().StopApiserver().ok());
  ASSERT_TRUE(ksched::testing::RunCommand("ETCDCTL_API=3 etcdctl --endpoints=" + ControlPlane::Get().etcd_endpoint() +
                                          " del /registry/pods/inf-gone/g1 >&2")
                  .ok());
  ASSERT_TRUE(ControlPlane::Get().CompactEtcd().ok());
  ASSERT_TRUE(ControlPlane::Get().StartApiserver().ok());
  ASSERT_TRUE(rec.Saw("tombstone g1"));
  EXPECT_EQ(inf.Stats().lists, 2);
  // The first list came from the watch cache in one piece; the relist after 410 is a
  // consistent read from etcd, in pages of 2 for the 4 pods left.
  EXPECT_EQ(inf.Stats().list_pages, 1 + 2);
  EXPECT_EQ(inf.Get("inf-gone/g1"), nullptr);
  EXPECT_NE(inf.Get("inf-gone/g0"), nullptr);
  // Watching works again afterwards.
  ASSERT_EQ(CreatePods(*c, "inf-gone", 1, "later"), 1);
  ASSERT_TRUE(rec.Saw("add later0"));
}

TEST(InformerIntegrationTest, RotatedTokenFileIsPickedUp) {
  auto token = std::filesystem::path(ControlPlane::Get().dir()) / "rotating-token";
  std::ofstream(token) << "expired-token";
  client::RestConfig cfg = AdminConfig();
  cfg.bearer_token.clear();
  cfg.token_file = token.string();
  auto c = Client(cfg);
  auto before = c->Do({.path = "/api/v1/nodes?limit=1"});
  ASSERT_FALSE(before.ok());
  EXPECT_EQ(before.status().code(), StatusCode::kUnauthenticated);
  std::ofstream(token) << "admintoken\n";  // the kubelet rotated the projected token
  auto after = c->Do({.path = "/api/v1/nodes?limit=1"});
  EXPECT_TRUE(after.ok()) << after.status().ToString();
}

}  // namespace
}  // namespace ksched::informers
