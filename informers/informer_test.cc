// Informers against a scripted fake API server: the faults a real kube-apiserver will
// not produce on demand.
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

#include "pkg/client/curl_client.h"
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

client::ApiClientPtr ClientFor(const FakeApiServer& server, client::RestConfig cfg = {}) {
  cfg.server = server.url();
  cfg.qps = 0;
  auto c = client::NewCurlApiClient(cfg);
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
StatusOr<client::ApiClientPtr> NewClientFor(const FakeApiServer& server, client::CurlClientOptions options) {
  client::RestConfig cfg;
  cfg.server = server.url();
  cfg.qps = 0;
  return client::NewCurlApiClient(cfg, options);
}

// A node informer on `client` whose notifications a `Rec` records, started. The members
// are built and destroyed in the order the tests' own locals were: client, informer,
// recorder.
template <typename Rec = Recorder>
struct RecordedInformer {
  explicit RecordedInformer(client::ApiClientPtr c, InformerOptions opts = FastOptions())
      : client(std::move(c)), inf(*client, "/api/v1/nodes", opts) {
    inf.AddHandler(&rec);
    inf.Start();
  }
  explicit RecordedInformer(const FakeApiServer& server, InformerOptions opts = FastOptions())
      : RecordedInformer(ClientFor(server), opts) {}
  client::ApiClientPtr client;
  NodeInformer inf;
  Rec rec;
};

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
