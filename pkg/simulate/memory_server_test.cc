// MemoryApiServer answers as a kube-apiserver would for what the scheduler sends: lists,
// watches from a resourceVersion, bindings (once), deletes with a uid precondition,
// patches with a resourceVersion precondition, conditions merged by type, and the PV
// controller's binding and provisioning.
#include "pkg/simulate/memory_server.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>

#include "informers/informer.h"
#include "pkg/api/json.h"
#include "pkg/simulate/json_patch.h"

namespace ksched::simulate {
namespace {

using client::Verb;

const KindInfo& Kind(std::string_view k) { return *FindKind(k); }

std::string Str(const std::string& json, std::string_view path) {
  auto v = StringAt(json, path);
  return v.ok() && *v ? **v : "<none>";
}

TEST(MemoryApiServerTest, CreateDefaultsTheNamespaceAndUidAndStampsAVersion) {
  MemoryApiServer s;
  ASSERT_TRUE(s.Create(Kind("Pod"), R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}})").ok());
  auto p = s.Get(Kind("Pod"), "default", "p");
  ASSERT_TRUE(p);
  EXPECT_EQ(Str(*p, "metadata.namespace"), "default");
  EXPECT_NE(Str(*p, "metadata.uid"), "<none>");
  EXPECT_NE(Str(*p, "metadata.resourceVersion"), "<none>");
  EXPECT_EQ(s.Create(Kind("Pod"), R"({"metadata":{"name":"p"}})").code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(s.Create(Kind("Node"), R"({"metadata":{"uid":"x"}})").code(), StatusCode::kInvalidArgument);
}

TEST(MemoryApiServerTest, ListsAndBindsOnceAndDeletesWithAUidPrecondition) {
  MemoryApiServer s;
  ASSERT_TRUE(s.Create(Kind("Pod"), R"({"metadata":{"name":"p","namespace":"ns","uid":"u1"},"spec":{}})").ok());
  auto list = s.Do({.path = "/api/v1/pods?resourceVersion=0&limit=500"});
  ASSERT_TRUE(list.ok());
  auto pods = api::DecodePodList(list->body);
  ASSERT_TRUE(pods.ok()) << pods.status().ToString();
  ASSERT_EQ(pods->items.size(), 1u);
  EXPECT_EQ(pods->items[0]->metadata.uid, "u1");

  auto bind = s.Do({.verb = Verb::kPost, .path = "/api/v1/namespaces/ns/pods/p/binding",
                    .body = api::EncodeBinding("ns", "p", "u1", "n1")});
  ASSERT_TRUE(bind.ok()) << bind.status().ToString();
  EXPECT_EQ(Str(*s.Get(Kind("Pod"), "ns", "p"), "spec.nodeName"), "n1");
  auto again = s.Do({.verb = Verb::kPost, .path = "/api/v1/namespaces/ns/pods/p/binding",
                     .body = api::EncodeBinding("ns", "p", "u1", "n2")});
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), StatusCode::kConflict);
  EXPECT_NE(again.status().message().find("already assigned to node \"n1\""), std::string::npos);

  auto wrong = s.Do({.verb = Verb::kDelete, .path = "/api/v1/namespaces/ns/pods/p",
                     .body = api::EncodeDeleteOptionsWithUid("other")});
  EXPECT_FALSE(wrong.ok());
  EXPECT_TRUE(s.Get(Kind("Pod"), "ns", "p"));
  auto del = s.Do({.verb = Verb::kDelete, .path = "/api/v1/namespaces/ns/pods/p",
                   .body = api::EncodeDeleteOptionsWithUid("u1")});
  EXPECT_TRUE(del.ok()) << del.status().ToString();
  EXPECT_FALSE(s.Get(Kind("Pod"), "ns", "p"));
  EXPECT_EQ(s.Do({.path = "/api/v1/namespaces/ns/pods/p"}).status().code(), StatusCode::kNotFound);
}

TEST(MemoryApiServerTest, PatchesCheckTheVersionAndMergeConditionsByType) {
  MemoryApiServer s;
  ASSERT_TRUE(s.Create(Kind("Pod"), R"({"metadata":{"name":"p","namespace":"ns"},"status":{"conditions":[{"type":"Ready","status":"True"}]}})").ok());
  const std::string rv = Str(*s.Get(Kind("Pod"), "ns", "p"), "metadata.resourceVersion");
  auto stale = s.Do({.verb = Verb::kPatch, .path = "/api/v1/namespaces/ns/pods/p",
                     .body = R"({"metadata":{"resourceVersion":"1"},"spec":{"x":1}})"});
  ASSERT_FALSE(stale.ok());
  EXPECT_NE(stale.status().message().find("the object has been modified"), std::string::npos);
  auto ok = s.Do({.verb = Verb::kPatch, .path = "/api/v1/namespaces/ns/pods/p/status",
                  .body = R"({"metadata":{"resourceVersion":")" + rv +
                          R"("},"status":{"conditions":[{"type":"PodScheduled","status":"False"}]}})",
                  .content_type = std::string(client::kContentStrategicMerge)});
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_NE(ok->body.find(R"([{"type":"Ready","status":"True"},{"type":"PodScheduled","status":"False"}])"),
            std::string::npos)
      << ok->body;
  EXPECT_EQ(s.Do({.verb = Verb::kPost, .path = "/apis/events.k8s.io/v1/namespaces/ns/events", .body = "{}"}).ok(),
            true);
  EXPECT_EQ(s.EventsRecorded(), 1u);
  EXPECT_EQ(s.Do({.path = "/apis/example.com/v1/widgets"}).status().code(), StatusCode::kNotFound);
}

// Collects what a real informer hears.
class Recorder final : public informers::EventHandler<api::Pod> {
 public:
  void OnAdd(const api::PodPtr& p) override { Log("add " + p->Key() + " " + p->spec.node_name); }
  void OnUpdate(const api::PodPtr&, const api::PodPtr& p) override { Log("update " + p->Key() + " " + p->spec.node_name); }
  void OnDelete(const informers::Deleted<api::Pod>& d) override { Log("delete " + d.last_known->Key()); }
  std::vector<std::string> Seen() {
    std::lock_guard l(mu_);
    return seen_;
  }

 private:
  void Log(std::string s) {
    std::lock_guard l(mu_);
    seen_.push_back(std::move(s));
  }
  std::mutex mu_;
  std::vector<std::string> seen_;
};

TEST(MemoryApiServerTest, AnInformerListsThenWatchesEveryChange) {
  MemoryApiServer s;
  ASSERT_TRUE(s.Create(Kind("Pod"), R"({"metadata":{"name":"a","namespace":"ns"}})").ok());
  informers::PodInformer pods(s, "/api/v1/pods");
  Recorder r;
  pods.AddHandler(&r);
  pods.Start();
  ASSERT_TRUE(pods.WaitForSync(std::chrono::seconds(10)));
  ASSERT_TRUE(s.Create(Kind("Pod"), R"({"metadata":{"name":"b","namespace":"ns"}})").ok());
  ASSERT_TRUE(s.Patch(Kind("Pod"), "ns", "b", R"({"spec":{"nodeName":"n1"}})").ok());
  ASSERT_TRUE(s.Delete(Kind("Pod"), "ns", "a").ok());
  for (int i = 0; i < 1000 && r.Seen().size() < 4; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(r.Seen(), (std::vector<std::string>{"add ns/a ", "add ns/b ", "update ns/b n1", "delete ns/a"}));
  pods.Stop();
}

TEST(MemoryApiServerTest, APatchedClaimRefBindsTheClaimAndASelectedNodeProvisionsAVolume) {
  MemoryApiServer s;
  ASSERT_TRUE(s.Create(Kind("Node"), R"({"metadata":{"name":"n1","labels":{"kubernetes.io/hostname":"host-1"}}})").ok());
  ASSERT_TRUE(s.Create(Kind("PersistentVolumeClaim"),
                       R"({"metadata":{"name":"c1","namespace":"ns","uid":"cu1"},"spec":{"storageClassName":"local","accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"5Gi"}}}})")
                  .ok());
  ASSERT_TRUE(s.Create(Kind("PersistentVolume"), R"({"metadata":{"name":"pv1"},"spec":{"storageClassName":"local"}})").ok());
  ASSERT_TRUE(s.Patch(Kind("PersistentVolume"), "", "pv1",
                      R"({"spec":{"claimRef":{"namespace":"ns","name":"c1","uid":"cu1"}}})")
                  .ok());
  const std::string claim = *s.Get(Kind("PersistentVolumeClaim"), "ns", "c1");
  EXPECT_EQ(Str(claim, "spec.volumeName"), "pv1");
  EXPECT_EQ(Str(claim, "status.phase"), "Bound");
  api::JsonParser parser;
  auto decoded = api::DecodePersistentVolumeClaim(parser, api::JsonText(claim));
  ASSERT_TRUE(decoded.ok());
  EXPECT_TRUE((*decoded)->annotations.Has(api::kAnnBindCompleted));
  EXPECT_EQ(Str(*s.Get(Kind("PersistentVolume"), "", "pv1"), "status.phase"), "Bound");

  ASSERT_TRUE(s.Create(Kind("PersistentVolumeClaim"),
                       R"({"metadata":{"name":"c2","namespace":"ns","uid":"cu2"},"spec":{"storageClassName":"fast","resources":{"requests":{"storage":"5Gi"}}}})")
                  .ok());
  ASSERT_TRUE(s.Patch(Kind("PersistentVolumeClaim"), "ns", "c2",
                      R"({"metadata":{"annotations":{"volume.kubernetes.io/selected-node":"n1"}}})")
                  .ok());
  EXPECT_EQ(Str(*s.Get(Kind("PersistentVolumeClaim"), "ns", "c2"), "spec.volumeName"), "pvc-cu2");
  auto pv = s.Get(Kind("PersistentVolume"), "", "pvc-cu2");
  ASSERT_TRUE(pv);
  auto volume = api::DecodePersistentVolume(parser, api::JsonText(*pv));
  ASSERT_TRUE(volume.ok()) << volume.status().ToString();
  EXPECT_EQ((*volume)->storage_class_name, "fast");
  EXPECT_NE(pv->find("\"host-1\""), std::string::npos) << *pv;
}

}  // namespace
}  // namespace ksched::simulate
