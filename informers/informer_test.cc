// The REST client and Informer against a scripted fake API server: the faults a real
// kube-apiserver will not produce on demand.
#include "informers/informer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>

#include "informers/curl_client.h"
#include "pkg/api/json.h"
#include "tests/fakes/event_log.h"
#include "tests/fakes/fake_api_server.h"

namespace ksched::informers {
namespace {

using namespace std::chrono_literals;
using ksched::testing::FakeApiServer;
using ksched::testing::HttpRequest;
using ksched::testing::ResponseWriter;

std::string NodeJson(const std::string& name, const std::string& rv, const std::string& uid = "") {
  api::Node n;
  n.metadata.name = name;
  n.metadata.resource_version = rv;
  n.metadata.uid = uid.empty() ? "uid-" + name : uid;
  return api::EncodeNode(n);
}

// A node whose taints are a string: well-formed JSON that cannot be decoded.
std::string BadNodeJson(const std::string& name, const std::string& rv) {
  return R"({"kind":"Node","apiVersion":"v1","metadata":{"name":")" + name + R"(","resourceVersion":")" + rv +
         R"("},"spec":{"taints":"all of them"}})";
}

std::string NodeList(const std::vector<std::pair<std::string, std::string>>& nodes, const std::string& rv,
                     const std::string& cont = "") {
  std::string items;
  for (const auto& [name, nrv] : nodes) items += (items.empty() ? "" : ",") + NodeJson(name, nrv);
  return R"({"kind":"NodeList","apiVersion":"v1","metadata":{"resourceVersion":")" + rv + R"(","continue":")" + cont +
         R"("},"items":[)" + items + "]}";
}

std::string Event(const std::string& type, const std::string& name, const std::string& rv) {
  return R"({"type":")" + type + R"(","object":)" + NodeJson(name, rv) + "}\n";
}

std::string Bookmark(const std::string& rv) {
  return R"({"type":"BOOKMARK","object":{"kind":"Node","apiVersion":"v1","metadata":{"resourceVersion":")" + rv +
         "\"}}}\n";
}

std::string ExpiredEvent() {
  return R"({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
         R"j("message":"too old resource version: 1 (5)","reason":"Expired","code":410}})j"
         "\n";
}

ApiClientPtr ClientFor(const FakeApiServer& server, RestConfig cfg = {}) {
  cfg.server = server.url();
  cfg.qps = 0;
  auto c = NewCurlApiClient(cfg);
  EXPECT_TRUE(c.ok());
  return std::move(*c);
}

// Records every notification as a line, in order.
class Recorder : public EventHandler<api::Node>, public ksched::testing::EventLog {
 public:
  void OnAdd(const api::NodePtr& n) override { Push("add " + n->Name() + "@" + n->metadata.resource_version); }
  void OnUpdate(const api::NodePtr& o, const api::NodePtr& n) override {
    Push("update " + n->Name() + "@" + o->metadata.resource_version + "->" + n->metadata.resource_version);
  }
  void OnDelete(const Deleted<api::Node>& d) override {
    Push(std::string(d.final_state_unknown ? "tombstone " : "delete ") + d.last_known->Name());
  }
};

bool Eventually(const std::function<bool()>& pred) { return ksched::testing::Eventually(pred, 10s); }

InformerOptions FastOptions() {
  InformerOptions o;
  o.initial_backoff = 10ms;
  o.max_backoff = 50ms;
  o.seed = 1;
  return o;
}

// A client for `server` (QPS unlimited) with the given client options; the test checks it.
StatusOr<ApiClientPtr> NewClientFor(const FakeApiServer& server, CurlClientOptions options) {
  RestConfig cfg;
  cfg.server = server.url();
  cfg.qps = 0;
  return NewCurlApiClient(cfg, options);
}

// A node informer on `client` whose notifications a `Rec` records, started. The members
// are built and destroyed in the order the tests' own locals were: client, informer,
// recorder.
template <typename Rec = Recorder>
struct RecordedInformer {
  explicit RecordedInformer(ApiClientPtr c, InformerOptions opts = FastOptions())
      : client(std::move(c)), inf(*client, "/api/v1/nodes", opts) {
    inf.AddHandler(&rec);
    inf.Start();
  }
  explicit RecordedInformer(const FakeApiServer& server, InformerOptions opts = FastOptions())
      : RecordedInformer(ClientFor(server), opts) {}
  ApiClientPtr client;
  NodeInformer inf;
  Rec rec;
};

// ---- client ---------------------------------------------------------------------------

TEST(CurlClientTest, RetriesTooManyRequestsAfterRetryAfter) {
  std::atomic<int> calls{0};
  FakeApiServer server([&](const HttpRequest&, ResponseWriter& w) {
    if (calls++ == 0) {
      w.Respond(429, R"({"kind":"Status","status":"Failure","reason":"TooManyRequests","code":429})",
                {{"Retry-After", "1"}});
    } else {
      w.Respond(200, "{}");
    }
  });
  auto client = ClientFor(server);
  auto start = std::chrono::steady_clock::now();
  auto r = client->Do({.path = "/api/v1/nodes"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(calls.load(), 2);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 1s);  // Retry-After honoured
}

TEST(CurlClientTest, BackgroundRequestsHaveTheirOwnBudgetAndNeverDelayForeground) {
  std::mutex mu;
  std::vector<std::string> seen;
  FakeApiServer server([&](const HttpRequest& req, ResponseWriter& w) {
    {
      std::lock_guard l(mu);
      seen.push_back(req.path);
    }
    w.Respond(200, "{}");
  });
  // The foreground lane is unlimited (qps 0).
  auto client = NewClientFor(server, {.background_qps = 2, .background_burst = 1});
  ASSERT_TRUE(client.ok());
  std::atomic<int> done{0};
  for (std::string p : {"/bg1", "/bg2", "/bg3"})
    (*client)->Send({.path = p, .background = true}, [&](StatusOr<Response>) { ++done; });
  auto fg = (*client)->Do({.path = "/fg"});
  ASSERT_TRUE(fg.ok()) << fg.status().ToString();
  ASSERT_TRUE(Eventually([&] { return done.load() == 3; }));
  std::lock_guard l(mu);
  // bg1 takes the background burst; bg2 and bg3 wait for tokens (0.5 s apart) while the
  // foreground request goes straight through (before or after bg1: same batch).
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_THAT(std::vector<std::string>(seen.begin(), seen.begin() + 2), ::testing::UnorderedElementsAre("/bg1", "/fg"));
  EXPECT_EQ(seen[2], "/bg2");
  EXPECT_EQ(seen[3], "/bg3");
}

// While an eviction (a foreground request other than a bind) is in flight, at most
// max_background_in_flight_beside_evictions background requests are; beside a bind
// alone they are not held.
TEST(CurlClientTest, FewBackgroundRequestsBesideAnEviction) {
  for (bool eviction : {true, false}) {
    std::mutex mu;
    std::condition_variable cv;
    bool release = false;
    int background_now = 0, background_max = 0;
    FakeApiServer server([&](const HttpRequest& req, ResponseWriter& w) {
      std::unique_lock l(mu);
      if (req.path == "/foreground") {
        cv.wait(l, [&] { return release; });
      } else if (req.path == "/event") {
        background_max = std::max(background_max, ++background_now);
        l.unlock();
        std::this_thread::sleep_for(50ms);
        l.lock();
        --background_now;
      }
      l.unlock();
      w.Respond(200, "{}");
    });
    auto client = NewClientFor(server, {.max_background_in_flight_beside_evictions = 2});
    ASSERT_TRUE(client.ok());
    // First an answered request: until one is, curl waits to learn whether the server
    // multiplexes before it opens a second connection.
    ASSERT_TRUE((*client)->Do({.path = "/warm-up"}).ok());
    std::atomic<bool> answered{false};
    (*client)->Send({.path = "/foreground", .first = !eviction}, [&](StatusOr<Response> r) { answered = r.ok(); });
    std::this_thread::sleep_for(50ms);  // in flight
    std::atomic<int> done{0};
    for (int i = 0; i < 6; ++i)
      (*client)->Send({.path = "/event", .background = true}, [&](StatusOr<Response>) { ++done; });
    const bool all_done = Eventually([&] { return done.load() == 6; });
    {
      std::lock_guard l(mu);
      EXPECT_TRUE(all_done);
      if (eviction) {
        EXPECT_EQ(background_max, 2);
      } else {
        EXPECT_GT(background_max, 2);
      }
      release = true;  // also when failing: the server's destructor joins the request's thread
    }
    cv.notify_all();
    EXPECT_TRUE(Eventually([&] { return answered.load(); }));
  }
}

// A bind (Request::first) waiting to start goes ahead of the other waiting foreground
// requests (a burst of evictions), binds among themselves in order.
TEST(CurlClientTest, BindsGoAheadOfWaitingForegroundRequests) {
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  std::vector<std::string> seen;
  FakeApiServer server([&](const HttpRequest& req, ResponseWriter& w) {
    std::unique_lock l(mu);
    seen.push_back(req.path);
    if (req.path == "/a") cv.wait(l, [&] { return release; });
    l.unlock();
    w.Respond(200, "{}");
  });
  auto client = NewClientFor(server, {.max_in_flight = 1});
  ASSERT_TRUE(client.ok());
  std::atomic<int> done{0};
  auto count = [&](StatusOr<Response>) { ++done; };
  (*client)->Send({.path = "/a"}, count);
  ASSERT_TRUE(Eventually([&] {
    std::lock_guard l(mu);
    return seen.size() == 1;
  }));
  for (std::string p : {"/delete1", "/delete2"}) (*client)->Send({.path = p}, count);
  for (std::string p : {"/bind1", "/bind2"}) (*client)->Send({.path = p, .first = true}, count);
  std::this_thread::sleep_for(50ms);  // all four wait behind /a
  {
    std::lock_guard l(mu);
    release = true;
  }
  cv.notify_all();
  ASSERT_TRUE(Eventually([&] { return done.load() == 5; }));
  std::lock_guard l(mu);
  EXPECT_EQ(seen, (std::vector<std::string>{"/a", "/bind1", "/bind2", "/delete1", "/delete2"}));
}

// Events and status patches pile up while the API server is slow: past
// max_queued_background the oldest waiting one is failed (dropped), never a bind.
TEST(CurlClientTest, BackgroundQueueIsBounded) {
  FakeApiServer server([&](const HttpRequest&, ResponseWriter& w) { w.Respond(200, "{}"); });
  auto client = NewClientFor(server, {.max_queued_background = 2, .background_qps = 0.001, .background_burst = 1});
  ASSERT_TRUE(client.ok());
  std::mutex mu;
  std::vector<std::string> dropped;
  std::atomic<int> ok{0};
  for (int i = 0; i < 5; ++i) {
    std::string path = "/bg" + std::to_string(i);
    (*client)->Send({.path = path, .background = true}, [&, path](StatusOr<Response> r) {
      if (r.ok()) {
        ++ok;
      } else if (r.status().code() == StatusCode::kResourceExhausted) {
        std::lock_guard l(mu);
        dropped.push_back(path);
      }
    });
    std::this_thread::sleep_for(20ms);  // in order through the I/O thread
  }
  auto fg = (*client)->Do({.path = "/bind"});  // foreground: not held by the full lane
  EXPECT_TRUE(fg.ok()) << fg.status().ToString();
  ASSERT_TRUE(Eventually([&] {
    std::lock_guard l(mu);
    return dropped.size() == 2;
  }));
  std::lock_guard l(mu);
  EXPECT_EQ(dropped, (std::vector<std::string>{"/bg1", "/bg2"}));  // the oldest waiting ones
  EXPECT_EQ(ok.load(), 1);  // bg0 took the burst; bg3 and bg4 still wait for tokens
}

TEST(CurlClientTest, RequestSentFromACallbackRuns) {
  FakeApiServer server([&](const HttpRequest& req, ResponseWriter& w) { w.Respond(200, "{\"p\":\"" + req.path + "\"}"); });
  auto client = ClientFor(server);
  std::promise<std::string> second;
  client->Send({.path = "/first"}, [&](StatusOr<Response> r) {
    ASSERT_TRUE(r.ok());
    // On the I/O thread: queued without a wake-up, started before the loop polls again.
    client->Send({.path = "/second"}, [&](StatusOr<Response> r2) { second.set_value(r2.ok() ? r2->body : "error"); });
  });
  auto f = second.get_future();
  ASSERT_EQ(f.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(f.get(), "{\"p\":\"/second\"}");
}

TEST(CurlClientTest, DoesNotRetryServerErrorWithoutRetryAfter) {
  FakeApiServer server([&](const HttpRequest&, ResponseWriter& w) {
    w.Respond(500, R"({"kind":"Status","status":"Failure","message":"etcd is sad","reason":"InternalError","code":500})");
  });
  auto client = ClientFor(server);
  auto r = client->Do({.path = "/api/v1/nodes"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(r.status().message(), "etcd is sad");
  EXPECT_EQ(server.request_count(), 1);
}

TEST(CurlClientTest, GivesUpAfterMaxRetries) {
  FakeApiServer server([&](const HttpRequest&, ResponseWriter& w) { w.Respond(503, "", {{"Retry-After", "0"}}); });
  auto client = ClientFor(server);
  auto r = client->Do({.path = "/x", .max_retries = 3});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(server.request_count(), 4);
}

TEST(CurlClientTest, RereadsTokenFileAfterUnauthorized) {
  auto file = std::filesystem::temp_directory_path() / ("ksched-token-" + std::to_string(::getpid()));
  std::ofstream(file) << "old";
  FakeApiServer server([&](const HttpRequest& req, ResponseWriter& w) {
    if (req.headers.at("authorization") == "Bearer new") w.Respond(200, "{}");
    else w.Respond(401, R"({"kind":"Status","reason":"Unauthorized","code":401})");
  });
  RestConfig cfg;
  cfg.token_file = file.string();
  auto client = ClientFor(server, cfg);
  ASSERT_FALSE(client->Do({.path = "/a"}).ok());  // file still holds the old token
  std::ofstream(file) << "new";                    // rotated
  auto r = client->Do({.path = "/a"});
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  std::filesystem::remove(file);
}

TEST(CurlClientTest, SendsMethodBodyContentTypeAndUserAgent) {
  FakeApiServer server([&](const HttpRequest&, ResponseWriter& w) { w.Respond(201, "{}"); });
  auto client = ClientFor(server);
  auto r = client->Do({.verb = Verb::kPatch, .path = "/p", .body = "{\"a\":1}",
                       .content_type = std::string(kContentStrategicMerge)});
  ASSERT_TRUE(r.ok());
  auto req = server.requests().at(0);
  EXPECT_EQ(req.method, "PATCH");
  EXPECT_EQ(req.body, "{\"a\":1}");
  EXPECT_EQ(req.headers["content-type"], "application/strategic-merge-patch+json");
  EXPECT_EQ(req.headers["user-agent"].rfind("ksched/", 0), 0u);
}

// A write marked retry_connection_errors (events, condition patches) survives a dropped
// connection; an unmarked POST (a bind) is never sent twice.
TEST(CurlClientTest, RepeatableWritesAreRetriedAfterAConnectionError) {
  std::atomic<int> events{0}, binds{0};
  FakeApiServer server([&](const HttpRequest& req, ResponseWriter& w) {
    if (req.path == "/binding") {
      ++binds;
      w.Abort();  // the connection drops before any answer
    } else if (events++ == 0) {
      w.Abort();
    } else {
      w.Respond(201, "{}");
    }
  });
  auto client = NewClientFor(server, {.connect_retry_delay = 10ms});
  ASSERT_TRUE(client.ok());
  auto event = (*client)->Do({.verb = Verb::kPost, .path = "/events", .body = "{}", .retry_connection_errors = true});
  EXPECT_TRUE(event.ok()) << event.status().ToString();
  EXPECT_EQ(events.load(), 2);
  // A fresh client, so libcurl has no kept-alive connection of its own to retry on.
  auto other = NewClientFor(server, {.connect_retry_delay = 10ms});
  ASSERT_TRUE(other.ok());
  auto bind = (*other)->Do({.verb = Verb::kPost, .path = "/binding", .body = "{}"});
  EXPECT_FALSE(bind.ok());
  EXPECT_EQ(binds.load(), 1);
}

TEST(CurlClientTest, ConnectionRefusedIsUnavailable) {
  RestConfig cfg;
  cfg.server = "http://127.0.0.1:1";
  auto client = NewCurlApiClient(cfg);
  ASSERT_TRUE(client.ok());
  auto r = (*client)->Do({.verb = Verb::kPost, .path = "/x"});  // POST: never retried
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
}

// ---- informer --------------------------------------------------------------------------

TEST(InformerTest, PaginatedListThenOrderedWatchEventsAndBookmarks) {
  FakeApiServer server([&](const HttpRequest& req, ResponseWriter& w) {
    if (!req.query.count("watch")) {
      if (req.query.count("continue") == 0) w.Respond(200, NodeList({{"a", "1"}, {"b", "2"}}, "10", "tok"));
      else w.Respond(200, NodeList({{"c", "3"}}, "10"));
      return;
    }
    if (req.query.at("resourceVersion") == "10") {
      w.StartChunked(200);
      w.Chunk(Event("ADDED", "d", "11") + Event("MODIFIED", "a", "12"));
      w.Chunk(Event("DELETED", "b", "13"));
      w.Chunk(Bookmark("20"));
      w.End();
      return;
    }
    w.StartChunked(200);  // the resumed watch: hold it open
    server.WaitForStop(30s);
  });
  auto opts = FastOptions();
  opts.page_size = 2;
  RecordedInformer t(server, opts);
  ASSERT_TRUE(t.inf.WaitForSync(10s));
  ASSERT_TRUE(t.rec.WaitFor(6));
  EXPECT_EQ(t.rec.events(), (std::vector<std::string>{"add a@1", "add b@2", "add c@3", "add d@11",
                                                      "update a@1->12", "delete b"}));
  ASSERT_TRUE(Eventually([&] { return server.request_count() >= 4; }));
  auto reqs = server.requests();
  EXPECT_EQ(reqs[0].query["limit"], "2");
  EXPECT_EQ(reqs[0].query["resourceVersion"], "0");  // the first list: the watch cache
  EXPECT_EQ(reqs[1].query["continue"], "tok");
  EXPECT_EQ(reqs[2].query["allowWatchBookmarks"], "true");
  int timeout = std::stoi(reqs[2].query["timeoutSeconds"]);
  EXPECT_GE(timeout, 300);
  EXPECT_LT(timeout, 600);
  EXPECT_EQ(reqs[3].query["resourceVersion"], "20");  // resumed from the bookmark, no relist
  EXPECT_EQ(t.inf.Stats().lists, 1);
  EXPECT_EQ(t.inf.Size(), 3u);
  EXPECT_NE(t.inf.Get("d"), nullptr);
  EXPECT_EQ(t.inf.Get("b"), nullptr);
  server.Stop();
}

TEST(InformerTest, ExpiredWatchRelistsAndDeliversTombstones) {
  std::atomic<int> lists{0};
  FakeApiServer server([&](const HttpRequest& req, ResponseWriter& w) {
    if (!req.query.count("watch")) {
      if (lists++ == 0) w.Respond(200, NodeList({{"a", "1"}, {"b", "2"}, {"keep", "3"}}, "5"));
      else w.Respond(200, NodeList({{"b", "7"}, {"c", "8"}, {"keep", "3"}}, "9"));
      return;
    }
    if (req.query.at("resourceVersion") == "5") {
      w.StartChunked(200);
      w.Chunk(ExpiredEvent());
      w.End();
      return;
    }
    w.StartChunked(200);
    server.WaitForStop(30s);
  });
  RecordedInformer t(server);
  ASSERT_TRUE(t.rec.WaitFor(6));
  auto ev = t.rec.events();
  EXPECT_EQ(std::vector<std::string>(ev.begin(), ev.begin() + 3),
            (std::vector<std::string>{"add a@1", "add b@2", "add keep@3"}));
  std::vector<std::string> after(ev.begin() + 3, ev.end());
  std::sort(after.begin(), after.end());
  EXPECT_EQ(after, (std::vector<std::string>{"add c@8", "tombstone a", "update b@2->7"}));
  EXPECT_EQ(t.inf.Stats().relists_after_gone, 1);
  ASSERT_TRUE(Eventually([&] { return server.request_count() >= 4; }));
  auto last = server.requests().back();
  EXPECT_EQ(last.query["resourceVersion"], "9");
  EXPECT_EQ(server.requests()[0].query["resourceVersion"], "0");
  EXPECT_EQ(server.requests()[2].query["resourceVersion"], "");  // the relist is a consistent read
  server.Stop();
}

// Faults that must restart the watch from the last good RV without a relist.
struct StreamFault {
  const char* name;
  std::function<void(ResponseWriter&)> script;
};

void PrintTo(const StreamFault& f, std::ostream* os) { *os << f.name; }

class InformerStreamFaultTest : public ::testing::TestWithParam<StreamFault> {};

TEST_P(InformerStreamFaultTest, ResumesFromLastResourceVersionWithoutRelist) {
  std::atomic<int> watches{0};
  FakeApiServer server([&](const HttpRequest& req, ResponseWriter& w) {
    if (!req.query.count("watch")) {
      w.Respond(200, NodeList({{"a", "1"}}, "5"));
      return;
    }
    if (watches++ == 0) {
      w.StartChunked(200);
      w.Chunk(Event("ADDED", "b", "6"));
      GetParam().script(w);
      return;
    }
    w.StartChunked(200);
    w.Chunk(Event("ADDED", "c", "7"));
    server.WaitForStop(30s);
  });
  auto opts = FastOptions();
  opts.idle_timeout = 300ms;
  RecordedInformer t(server, opts);
  ASSERT_TRUE(t.rec.WaitFor(3)) << GetParam().name;
  EXPECT_EQ(t.rec.events(), (std::vector<std::string>{"add a@1", "add b@6", "add c@7"}));
  auto reqs = server.requests();
  ASSERT_GE(reqs.size(), 3u);
  EXPECT_EQ(reqs[2].query["resourceVersion"], "6");
  EXPECT_EQ(t.inf.Stats().lists, 1);
  server.Stop();
}

INSTANTIATE_TEST_SUITE_P(
    Faults, InformerStreamFaultTest,
    ::testing::Values(
        StreamFault{"truncated_chunk",
                    [](ResponseWriter& w) {
                      w.Raw("200\r\n{\"type\":\"ADDED\",\"obj");  // promises 512 bytes, sends 20
                      w.Abort();
                    }},
        StreamFault{"malformed_json", [](ResponseWriter& w) { w.Chunk("{\"type\":\"ADDED\",\"object\":{]}\n"); }},
        StreamFault{"unknown_event_type",
                    [](ResponseWriter& w) { w.Chunk(R"({"type":"EXPLODED","object":{}})" "\n"); }},
        StreamFault{"connection_reset", [](ResponseWriter& w) { w.Abort(); }},
        // No object: an error line (it used to decode to a null object and crash).
        StreamFault{"event_without_object", [](ResponseWriter& w) { w.Chunk(R"({"type":"ADDED"})" "\n"); }},
        StreamFault{"silent_stream", [](ResponseWriter&) { std::this_thread::sleep_for(1500ms); }}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(InformerTest, TooManyRequestsOnWatchBacksOffWithoutRelist) {
  std::atomic<int> watches{0};
  FakeApiServer server([&](const HttpRequest& req, ResponseWriter& w) {
    if (!req.query.count("watch")) {
      w.Respond(200, NodeList({{"a", "1"}}, "5"));
    } else if (watches++ < 2) {
      w.Respond(429, R"({"kind":"Status","reason":"TooManyRequests","code":429})");
    } else {
      w.StartChunked(200);
      w.Chunk(Event("ADDED", "b", "6"));
      server.WaitForStop(30s);
    }
  });
  RecordedInformer t(server);
  ASSERT_TRUE(t.rec.WaitFor(2));
  EXPECT_EQ(t.inf.Stats().lists, 1);
  EXPECT_GE(t.inf.Stats().failures, 2);
  server.Stop();
}

// An event without a resourceVersion must not reset the informer's RV: the next watch
// would start from "now" and miss what happened in between.
TEST(InformerTest, EventWithoutResourceVersionKeepsTheLastOne) {
  std::atomic<int> watches{0};
  FakeApiServer server([&](const HttpRequest& req, ResponseWriter& w) {
    if (!req.query.count("watch")) {
      w.Respond(200, NodeList({{"a", "1"}}, "5"));
      return;
    }
    w.StartChunked(200);
    if (watches++ == 0) {
      w.Chunk(Event("ADDED", "b", "6") + Event("MODIFIED", "b", ""));
      w.End();
      return;
    }
    server.WaitForStop(30s);
  });
  RecordedInformer t(server);
  ASSERT_TRUE(t.rec.WaitFor(3));
  ASSERT_TRUE(Eventually([&] { return server.request_count() >= 3; }));
  EXPECT_EQ(server.requests()[2].query["resourceVersion"], "6");
  EXPECT_EQ(t.inf.LastSyncResourceVersion(), "6");
  server.Stop();
}

// After a relist, an object recreated under the same name (new UID) is a delete of the
// old one and an add of the new one, never an update (the cache would see a pod move).
TEST(InformerTest, RelistDeliversUidChangeAsDeleteAndAdd) {
  std::atomic<int> lists{0};
  FakeApiServer server([&](const HttpRequest& req, ResponseWriter& w) {
    if (!req.query.count("watch")) {
      std::string items = lists++ == 0 ? NodeJson("a", "1", "old") : NodeJson("a", "8", "new");
      w.Respond(200, R"({"kind":"NodeList","metadata":{"resourceVersion":")" + std::string(lists == 1 ? "5" : "9") +
                         R"("},"items":[)" + items + "]}");
      return;
    }
    w.StartChunked(200);
    if (req.query.at("resourceVersion") == "5") {
      w.Chunk(ExpiredEvent());
      w.End();
      return;
    }
    server.WaitForStop(30s);
  });
  RecordedInformer t(server);
  ASSERT_TRUE(t.rec.WaitFor(3));
  EXPECT_EQ(t.rec.events(), (std::vector<std::string>{"add a@1", "tombstone a", "add a@8"}));
  EXPECT_EQ(t.inf.Get("a")->metadata.uid, "new");
  server.Stop();
}

// One object that cannot be decoded (here: taints as a string) is skipped with an error,
// in a list and in a watch; it never fails the list or stalls the stream at its event.
TEST(InformerTest, OneBadObjectNeverBlocksTheOthers) {
  std::atomic<int> watches{0};
  FakeApiServer server([&](const HttpRequest& req, ResponseWriter& w) {
    if (!req.query.count("watch")) {
      w.Respond(200, R"({"kind":"NodeList","metadata":{"resourceVersion":"5"},"items":[)" + NodeJson("a", "1") + "," +
                         BadNodeJson("bad", "2") + "," + NodeJson("c", "3") + "," + NodeJson("gone", "4") + "]}");
      return;
    }
    w.StartChunked(200);
    if (watches++ == 0) {
      w.Chunk(R"({"type":"MODIFIED","object":)" + BadNodeJson("a", "6") + "}\n" + Event("ADDED", "d", "7") +
              R"({"type":"DELETED","object":)" + BadNodeJson("gone", "8") + "}\n");
      w.End();
      return;
    }
    server.WaitForStop(30s);
  });
  RecordedInformer t(server);
  ASSERT_TRUE(t.rec.WaitFor(5));
  EXPECT_EQ(t.rec.events(), (std::vector<std::string>{"add a@1", "add c@3", "add gone@4", "add d@7", "delete gone"}));
  // The skipped update left the last good copy; the stream went on past it.
  EXPECT_EQ(t.inf.Get("a")->metadata.resource_version, "1");
  EXPECT_EQ(t.inf.Get("bad"), nullptr);
  EXPECT_EQ(t.inf.Stats().skipped_objects, 3);
  EXPECT_EQ(t.inf.Stats().lists, 1);
  ASSERT_TRUE(Eventually([&] { return server.request_count() >= 3; }));
  EXPECT_EQ(server.requests()[2].query["resourceVersion"], "8");
  server.Stop();
}

// A newer server's "Too large resource version" answer to a relist at our RV: list from
// etcd (RV "") instead of retrying an RV this server may never reach.
TEST(InformerTest, TooLargeResourceVersionListsFromEtcd) {
  std::atomic<int> lists{0};
  FakeApiServer server([&](const HttpRequest& req, ResponseWriter& w) {
    if (!req.query.count("watch")) {
      int n = lists++;
      if (n == 1) {
        w.Respond(504, R"({"kind":"Status","status":"Failure","message":"Too large resource version: 20, current: 9",)"
                       R"("reason":"Timeout","details":{"causes":[{"reason":"ResourceVersionTooLarge"}]},"code":504})");
      } else {
        w.Respond(200, NodeList({{"a", n == 0 ? "1" : "9"}}, n == 0 ? "5" : "9"));
      }
      return;
    }
    w.StartChunked(200);
    if (req.query.at("resourceVersion") == "5") {
      // The watch fails in a way that needs a relist at our RV (not 410).
      w.Chunk(Bookmark("20"));
      w.Chunk(R"({"type":"ERROR","object":{"kind":"Status","status":"Failure","message":"Too large resource version: 20, current: 9","reason":"Timeout","code":504}})" "\n");
      w.End();
      return;
    }
    server.WaitForStop(30s);
  });
  RecordedInformer t(server);
  ASSERT_TRUE(t.rec.WaitFor(2));
  EXPECT_EQ(t.rec.events(), (std::vector<std::string>{"add a@1", "update a@1->9"}));
  ASSERT_TRUE(Eventually([&] { return server.request_count() >= 4; }));
  auto reqs = server.requests();
  EXPECT_EQ(reqs[2].query["resourceVersion"], "");  // straight to etcd after the watch error
  server.Stop();
}

// Handlers slower than the stream: past max_buffered_watch_bytes the stream is dropped
// and resumed from the last applied event, so memory stays bounded and nothing is lost
// or applied twice.
TEST(InformerTest, BufferedLinesAreBoundedAndNothingIsLost) {
  FakeApiServer server([&](const HttpRequest& req, ResponseWriter& w) {
    if (!req.query.count("watch")) {
      w.Respond(200, NodeList({}, "5"));
      return;
    }
    int from = std::stoi(req.query.at("resourceVersion"));
    w.StartChunked(200);
    std::string burst;
    for (int rv = from + 1; rv <= 12; ++rv) burst += Event("ADDED", "n" + std::to_string(rv), std::to_string(rv));
    if (!burst.empty()) w.Chunk(burst);
    server.WaitForStop(30s);
  });
  class SlowRecorder : public Recorder {
   public:
    void OnAdd(const api::NodePtr& n) override {
      std::this_thread::sleep_for(30ms);
      Recorder::OnAdd(n);
    }
  };
  auto opts = FastOptions();
  opts.max_buffered_watch_bytes = 1;  // one line at a time
  RecordedInformer<SlowRecorder> t(server, opts);
  ASSERT_TRUE(t.rec.WaitFor(7));
  std::vector<std::string> want;
  for (int rv = 6; rv <= 12; ++rv) want.push_back("add n" + std::to_string(rv) + "@" + std::to_string(rv));
  EXPECT_EQ(t.rec.events(), want);
  EXPECT_GE(t.inf.Stats().buffer_restarts, 1);
  EXPECT_EQ(t.inf.Stats().lists, 1);
  server.Stop();
}

// The continue token of a paginated list expires midway (410 on a page after the first):
// the informer lists again in full, without duplicates or gaps, and takes the RV from
// that list's metadata.
TEST(InformerTest, ExpiredContinueTokenFallsBackToAFullList) {
  FakeApiServer server([&](const HttpRequest& req, ResponseWriter& w) {
    if (!req.query.count("watch")) {
      if (req.query.count("continue")) {
        w.Respond(410, R"({"kind":"Status","status":"Failure","reason":"Expired","code":410,)"
                       R"("message":"The provided continue parameter is too old"})");
      } else if (req.query.count("limit")) {
        w.Respond(200, NodeList({{"a", "1"}, {"b", "2"}}, "10", "tok"));
      } else {
        w.Respond(200, NodeList({{"a", "1"}, {"b", "2"}, {"c", "3"}}, "12"));
      }
      return;
    }
    w.StartChunked(200);
    server.WaitForStop(30s);
  });
  auto opts = FastOptions();
  opts.page_size = 2;
  RecordedInformer t(server, opts);
  ASSERT_TRUE(t.inf.WaitForSync(10s));
  EXPECT_EQ(t.rec.events(), (std::vector<std::string>{"add a@1", "add b@2", "add c@3"}));
  EXPECT_EQ(t.inf.LastSyncResourceVersion(), "12");
  ASSERT_TRUE(Eventually([&] { return server.request_count() >= 4; }));
  EXPECT_EQ(server.requests()[3].query["resourceVersion"], "12");
  server.Stop();
}

// A watch event longer than the client's line limit (a 64 MB object, say) ends the stream;
// re-watching from the same RV would meet it forever, so the informer relists instead and
// goes on past it. Nothing crashes and memory stays bounded by the limits.
TEST(InformerTest, EventPastTheLineLimitIsGotPastByARelist) {
  std::atomic<int> lists{0};
  FakeApiServer server([&](const HttpRequest& req, ResponseWriter& w) {
    api::Node big;
    big.metadata.name = "big";
    big.metadata.uid = "uid-big";
    big.metadata.resource_version = "6";
    big.metadata.labels.Set("filler", std::string(60, 'x'));
    // ~70 KB: more than one read from the socket, so the line is assembled across writes.
    for (int i = 0; i < 1000; ++i) big.metadata.labels.Set("k" + std::to_string(i), std::string(60, 'y'));
    if (!req.query.count("watch")) {
      if (lists++ == 0) {
        w.Respond(200, NodeList({{"a", "1"}}, "5"));
      } else {
        w.Respond(200, R"({"kind":"NodeList","metadata":{"resourceVersion":"6"},"items":[)" + NodeJson("a", "1") +
                           "," + api::EncodeNode(big) + "]}");
      }
      return;
    }
    w.StartChunked(200);
    if (req.query.at("resourceVersion") == "5") {
      w.Chunk(R"({"type":"ADDED","object":)" + api::EncodeNode(big) + "}\n");
    }
    server.WaitForStop(30s);
  });
  auto client = NewClientFor(server, {.max_watch_line_bytes = 20000});
  ASSERT_TRUE(client.ok());
  RecordedInformer t(std::move(*client));
  ASSERT_TRUE(t.rec.WaitFor(2));
  EXPECT_EQ(t.rec.events(), (std::vector<std::string>{"add a@1", "add big@6"}));
  ASSERT_TRUE(Eventually([&] { return t.inf.LastSyncResourceVersion() == "6"; }));
  EXPECT_EQ(t.inf.Stats().lists, 2);
  server.Stop();
}

// A new leader's fresh read: RelistAndWait lists again from etcd (RV ""), not from the
// watch cache, and returns once that list is stored and delivered.
TEST(InformerTest, RelistAndWaitReadsFromEtcd) {
  std::atomic<int> lists{0};
  FakeApiServer server([&](const HttpRequest& req, ResponseWriter& w) {
    if (!req.query.count("watch")) {
      if (lists++ == 0) w.Respond(200, NodeList({{"a", "1"}}, "5"));
      else w.Respond(200, NodeList({{"a", "1"}, {"b", "8"}}, "9"));
      return;
    }
    w.StartChunked(200);
    server.WaitForStop(30s);  // a watch that never delivers what happened (a stale standby)
  });
  RecordedInformer t(server);
  ASSERT_TRUE(t.inf.WaitForSync(10s));
  ASSERT_TRUE(Eventually([&] { return t.inf.Stats().watches == 1; }));
  // The watch has reached the server: the relist request now ends the reflector's wait
  // at once (it no longer polls every 100 ms), and could otherwise cancel the watch
  // before its request went out.
  ASSERT_TRUE(Eventually([&] { return server.request_count() == 2; }));
  ASSERT_TRUE(t.inf.RelistAndWait(10s));
  EXPECT_EQ(t.rec.events(), (std::vector<std::string>{"add a@1", "add b@8"}));
  EXPECT_EQ(t.inf.LastSyncResourceVersion(), "9");
  auto reqs = server.requests();
  ASSERT_GE(reqs.size(), 3u);
  EXPECT_EQ(reqs[2].query["resourceVersion"], "");  // etcd, not the watch cache
  EXPECT_EQ(t.inf.Stats().relists_after_gone, 0);
  server.Stop();
}

// The idle deadline is kept on the injected clock: a silent watch is restarted when a
// FakeClock passes it, not after real time, and not a moment before.
TEST(InformerTest, SilentWatchRestartsWhenTheInjectedClockPassesIdleTimeout) {
  FakeApiServer server([&](const HttpRequest& req, ResponseWriter& w) {
    if (!req.query.count("watch")) {
      w.Respond(200, NodeList({{"a", "1"}}, "5"));
      return;
    }
    w.StartChunked(200);
    server.WaitForStop(30s);  // never a byte
  });
  auto client = ClientFor(server);
  FakeClock clock;
  auto opts = FastOptions();
  opts.clock = &clock;
  opts.idle_timeout = 2min;
  NodeInformer inf(*client, "/api/v1/nodes", opts);
  inf.Start();
  ASSERT_TRUE(inf.WaitForSync(10s));
  ASSERT_TRUE(Eventually([&] { return server.request_count() == 2; }));  // the watch is open
  ASSERT_TRUE(clock.WaitForSleepers(1));  // and the reflector waits on it
  clock.Advance(2min - 1s);
  ASSERT_TRUE(clock.WaitForSleepers(1));  // and still does
  EXPECT_EQ(inf.Stats().idle_restarts, 0);
  clock.Advance(1s);
  ASSERT_TRUE(Eventually([&] { return inf.Stats().idle_restarts == 1 && inf.Stats().watches == 2; }));
  ASSERT_TRUE(Eventually([&] { return server.request_count() >= 3; }));
  EXPECT_EQ(server.requests()[2].query["resourceVersion"], "5");  // resumed, not relisted
  EXPECT_EQ(inf.Stats().lists, 1);
  server.Stop();
}

// A list past the client's body limit (the watch cache answers RV "0" in one piece
// whatever the limit): the informer reads it from etcd in pages instead.
TEST(InformerTest, ListPastTheBodyLimitIsReadInPages) {
  FakeApiServer server([&](const HttpRequest& req, ResponseWriter& w) {
    if (!req.query.count("watch")) {
      if (req.query.at("resourceVersion") == "0") {
        std::vector<std::pair<std::string, std::string>> all;
        for (int i = 0; i < 40; ++i) all.push_back({"n" + std::to_string(i), std::to_string(i + 1)});
        w.Respond(200, NodeList(all, "50"));  // ~6 KB: past the limit below
      } else if (!req.query.count("continue")) {
        std::vector<std::pair<std::string, std::string>> page;
        for (int i = 0; i < 20; ++i) page.push_back({"n" + std::to_string(i), std::to_string(i + 1)});
        w.Respond(200, NodeList(page, "50", "tok"));
      } else {
        std::vector<std::pair<std::string, std::string>> page;
        for (int i = 20; i < 40; ++i) page.push_back({"n" + std::to_string(i), std::to_string(i + 1)});
        w.Respond(200, NodeList(page, "50"));
      }
      return;
    }
    w.StartChunked(200);
    server.WaitForStop(30s);
  });
  auto client = NewClientFor(server, {.max_body_bytes = 4096});
  ASSERT_TRUE(client.ok());
  auto opts = FastOptions();
  opts.page_size = 20;
  NodeInformer inf(**client, "/api/v1/nodes", opts);
  inf.Start();
  ASSERT_TRUE(inf.WaitForSync(10s));
  EXPECT_EQ(inf.Size(), 40u);
  EXPECT_EQ(inf.Stats().list_pages, 2);
  auto reqs = server.requests();
  ASSERT_GE(reqs.size(), 3u);
  EXPECT_EQ(reqs[1].query["resourceVersion"], "");
  EXPECT_EQ(reqs[1].query["limit"], "20");
  server.Stop();
}

}  // namespace
}  // namespace ksched::informers
