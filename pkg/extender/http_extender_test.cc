// HttpExtender against a scripted client: what each call sends, how answers and
// failures come back, and which pods it is interested in.
#include "pkg/extender/http_extender.h"

#include <gtest/gtest.h>

#include "pkg/cache/snapshot.h"
#include "tests/fakes/builders.h"
#include "tests/fakes/fake_api_client.h"

namespace ksched::extender {
namespace {

using ksched::testing::FakeApiClient;
using ksched::testing::NodeBuilder;
using ksched::testing::PodBuilder;

std::vector<cache::NodeInfoPtr> Nodes(std::initializer_list<std::string> names) {
  std::vector<cache::NodeInfoPtr> out;
  for (const std::string& n : names) {
    out.push_back(std::make_shared<cache::NodeInfo>(NodeBuilder(n).Label("zone", "z1").Obj()));
  }
  return out;
}

config::Extender Config() {
  config::Extender c;
  c.url_prefix = "http://127.0.0.1:9/scheduler/";
  c.filter_verb = "filter";
  c.prioritize_verb = "prioritize";
  c.weight = 2;
  c.bind_verb = "bind";
  c.preempt_verb = "preempt";
  return c;
}

std::unique_ptr<HttpExtender> Make(const config::Extender& c, FakeApiClient& api) {
  auto e = HttpExtender::New(c, {.client = &api});
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  return e.ok() ? std::move(*e) : nullptr;
}

TEST(HttpExtenderTest, ConfigurationErrorsNameTheField) {
  config::Extender c = Config();
  c.url_prefix = "127.0.0.1:9";
  EXPECT_EQ(HttpExtender::New(c, {.field_path = "extenders[1]"}).status().message(),
            "extenders[1].urlPrefix: \"127.0.0.1:9\" has no scheme (http:// or https://)");
  c.url_prefix = "ftp://x";
  EXPECT_EQ(HttpExtender::New(c).status().message(),
            "extenders[0].urlPrefix: invalid server URL \"ftp://x\": scheme must be https or http");
  c = Config();
  c.tls_config.emplace().ca_data = "not base64!";
  EXPECT_NE(HttpExtender::New(c).status().message().find("extenders[0].tlsConfig.caData"), std::string::npos)
      << HttpExtender::New(c).status().message();
  c.tls_config->ca_data = "";
  c.tls_config->ca_file = "/nonexistent/ca.crt";
  EXPECT_NE(HttpExtender::New(c).status().message().find("extenders[0].tlsConfig.caFile"), std::string::npos);
  c.tls_config->ca_file = "";
  c.tls_config->cert_data = "Y2VydA==";
  EXPECT_EQ(HttpExtender::New(c).status().message(),
            "extenders[0].tlsConfig.certData/certFile and keyData/keyFile: both or neither must be given");
}

TEST(HttpExtenderTest, ManagedResourcesDecideInterest) {
  FakeApiClient api;
  config::Extender c = Config();
  auto all = Make(c, api);
  EXPECT_TRUE(all->IsInterested(*PodBuilder("p").Obj()));
  c.managed_resources = {{"example.com/gpu", true}};
  auto gpu = Make(c, api);
  EXPECT_FALSE(gpu->IsInterested(*PodBuilder("p").Req({{"cpu", "1"}}).Obj()));
  EXPECT_TRUE(gpu->IsInterested(*PodBuilder("p").Req({{"cpu", "1"}}).Req({{"example.com/gpu", "1"}}).Obj()));
  api::Pod init = *PodBuilder("p").Req({{"cpu", "1"}}).Obj();
  api::Container ic;
  ic.requests.emplace_back("example.com/gpu", *api::Quantity::Parse("1"));
  init.spec.init_containers.push_back(ic);
  EXPECT_TRUE(gpu->IsInterested(init));
}

TEST(HttpExtenderTest, FilterSendsNamesOrNodesAndReadsTheVerdict) {
  FakeApiClient api;
  api.SetHandler([](const client::Request& r) -> StatusOr<client::Response> {
    return client::Response{200, R"({"NodeNames":["b"],"Nodes":{"items":[{"metadata":{"name":"a"}}]},)"
                                 R"("FailedNodes":{"c":"busy"},"FailedAndUnresolvableNodes":{"d":"no gpu"}})"};
  });
  auto nodes = Nodes({"a", "b", "c", "d"});
  auto pod = PodBuilder("p").Namespace("ns").Obj();

  config::Extender c = Config();
  auto full = Make(c, api);
  auto r = full->Filter(*pod, nodes);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // Not node cache capable: the Node objects' names count.
  EXPECT_EQ(r->passed, std::vector<std::string>{"a"});
  EXPECT_EQ(r->failed.at("c"), "busy");
  EXPECT_EQ(r->failed_and_unresolvable.at("d"), "no gpu");
  auto sent = api.Requests();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].verb, client::Verb::kPost);
  EXPECT_EQ(sent[0].path, "/scheduler/filter");
  EXPECT_EQ(sent[0].max_retries, 0);
  EXPECT_NE(sent[0].body.find(R"("Nodes":{"metadata":{},"items":[{"apiVersion":"v1","kind":"Node")"), std::string::npos);
  EXPECT_NE(sent[0].body.find(R"("labels":{"zone":"z1"})"), std::string::npos) << sent[0].body;
  EXPECT_NE(sent[0].body.find(R"("NodeNames":null)"), std::string::npos);
  EXPECT_EQ(sent[0].body.rfind(R"({"Pod":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns"})", 0), 0u);

  api.ClearRequests();
  c.node_cache_capable = true;
  auto names = Make(c, api);
  r = names->Filter(*pod, nodes);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->passed, std::vector<std::string>{"b"});
  EXPECT_NE(api.Requests()[0].body.find(R"("Nodes":null,"NodeNames":["a","b","c","d"])"), std::string::npos);
}

TEST(HttpExtenderTest, FilterAnswersOutOfOrderOrRepeatedAreMatchedByName) {
  FakeApiClient api;
  api.SetHandler([](const client::Request&) -> StatusOr<client::Response> {
    return client::Response{200, R"({"NodeNames":["d","b","d","a"]})"};
  });
  config::Extender c = Config();
  c.node_cache_capable = true;
  auto e = Make(c, api);
  auto r = e->Filter(*PodBuilder("p").Obj(), Nodes({"a", "b", "c", "d"}));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->passed, (std::vector<std::string>{"d", "b", "a"}));
}

TEST(HttpExtenderTest, FilterFailures) {
  FakeApiClient api;
  auto e = Make(Config(), api);
  auto pod = PodBuilder("p").Obj();
  auto nodes = Nodes({"a"});
  api.SetHandler([](const client::Request&) -> StatusOr<client::Response> {
    return client::Response{200, R"({"Nodes":{"items":[{"metadata":{"name":"zz"}}]}})"};
  });
  EXPECT_EQ(e->Filter(*pod, nodes).status().message(),
            "extender \"http://127.0.0.1:9/scheduler/\" claims a filtered node \"zz\" which is not found in the input "
            "node list");
  api.SetHandler([](const client::Request&) -> StatusOr<client::Response> {
    return client::Response{200, R"({"Error":"cannot decide"})"};
  });
  EXPECT_EQ(e->Filter(*pod, nodes).status().message(), "cannot decide");
  api.SetHandler([](const client::Request&) -> StatusOr<client::Response> { return client::Response{204, ""}; });
  EXPECT_EQ(e->Filter(*pod, nodes).status().message(),
            "failed filter with extender at URL http://127.0.0.1:9/scheduler/filter, code 204");
  api.SetHandler([](const client::Request&) -> StatusOr<client::Response> {
    return Status(StatusCode::kDeadlineExceeded, "timed out");
  });
  auto s = e->Filter(*pod, nodes).status();
  EXPECT_EQ(s.code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(s.message(), "failed filter with extender at URL http://127.0.0.1:9/scheduler/filter: timed out");
}

TEST(HttpExtenderTest, WithoutAFilterVerbEveryNodePasses) {
  FakeApiClient api;
  config::Extender c = Config();
  c.filter_verb.clear();
  auto e = Make(c, api);
  auto r = e->Filter(*PodBuilder("p").Obj(), Nodes({"a", "b"}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->passed, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(api.Requests().empty());
}

TEST(HttpExtenderTest, PrioritizeAnswersThroughTheFuture) {
  FakeApiClient api({.async = true});
  api.SetHandler([](const client::Request& r) -> StatusOr<client::Response> {
    EXPECT_EQ(r.path, "/scheduler/prioritize");
    return client::Response{200, R"([{"Host":"a","Score":3},{"Host":"b","Score":10}])"};
  });
  auto e = Make(Config(), api);
  auto future = e->Prioritize(*PodBuilder("p").Obj(), Nodes({"a", "b"}));
  auto r = future.get();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[1].host, "b");
  EXPECT_EQ((*r)[1].score, 10);
  EXPECT_EQ(PrioritizeCallsInFlight(), 0);
}

TEST(HttpExtenderTest, BindAndItsError) {
  FakeApiClient api;
  api.SetHandler([](const client::Request&) -> StatusOr<client::Response> { return client::Response{200, "{}"}; });
  auto e = Make(Config(), api);
  auto pod = PodBuilder("web").Namespace("ns").UID("u1").Obj();
  EXPECT_TRUE(e->Bind(*pod, "n1").ok());
  EXPECT_EQ(api.Requests()[0].path, "/scheduler/bind");
  EXPECT_EQ(api.Requests()[0].body, R"({"PodName":"web","PodNamespace":"ns","PodUID":"u1","Node":"n1"})");
  api.SetHandler([](const client::Request&) -> StatusOr<client::Response> {
    return client::Response{200, R"({"Error":"node is full"})"};
  });
  EXPECT_EQ(e->Bind(*pod, "n1").message(), "node is full");
}

TEST(HttpExtenderTest, PreemptionVictimsAreTheSnapshotsPods) {
  FakeApiClient api;
  api.SetHandler([](const client::Request&) -> StatusOr<client::Response> {
    return client::Response{200, R"({"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"u2"}],"NumPDBViolations":1}}})"};
  });
  config::Extender c = Config();
  c.node_cache_capable = true;
  auto e = Make(c, api);
  auto v1 = PodBuilder("v1").UID("u1").Node("n1").Obj();
  auto v2 = PodBuilder("v2").UID("u2").Node("n1").Obj();
  cache::Snapshot snapshot = cache::Snapshot::FromObjects({NodeBuilder("n1").Obj()}, {v1, v2});
  framework::NodeVictims candidates;
  candidates["n1"] = {{v1, v2}, 0};
  auto r = e->ProcessPreemption(*PodBuilder("p").Obj(), candidates, snapshot);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->at("n1").pods.size(), 1u);
  EXPECT_EQ(r->at("n1").pods[0]->metadata.name, "v2");
  EXPECT_EQ(r->at("n1").num_pdb_violations, 1);
  EXPECT_NE(api.Requests()[0].body.find(R"("NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"u1"},{"UID":"u2"}])"),
            std::string::npos);

  api.SetHandler([](const client::Request&) -> StatusOr<client::Response> {
    return client::Response{200, R"({"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"u9"}]}}})"};
  });
  EXPECT_EQ(e->ProcessPreemption(*PodBuilder("p").Obj(), candidates, snapshot).status().message(),
            "extender: http://127.0.0.1:9/scheduler/ claims to preempt pod (UID: u9) on node: n1, but the pod is not "
            "found on that node");
}

}  // namespace
}  // namespace ksched::extender
