// The REST client against a scripted fake API server: the faults a real kube-apiserver
// will not produce on demand.
#include "pkg/client/curl_client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>

#include "pkg/api/json.h"
#include "tests/fakes/event_log.h"
#include "tests/fakes/fake_api_server.h"

namespace ksched::client {
namespace {

using namespace std::chrono_literals;
using ksched::testing::FakeApiServer;
using ksched::testing::HttpRequest;
using ksched::testing::ResponseWriter;

ApiClientPtr ClientFor(const FakeApiServer& server, RestConfig cfg = {}) {
  cfg.server = server.url();
  cfg.qps = 0;
  auto c = NewCurlApiClient(cfg);
  EXPECT_TRUE(c.ok());
  return std::move(*c);
}

bool Eventually(const std::function<bool()>& pred) { return ksched::testing::Eventually(pred, 10s); }

// A client for `server` (QPS unlimited) with the given client options; the test checks it.
StatusOr<ApiClientPtr> NewClientFor(const FakeApiServer& server, CurlClientOptions options) {
  RestConfig cfg;
  cfg.server = server.url();
  cfg.qps = 0;
  return NewCurlApiClient(cfg, options);
}


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


}  // namespace
}  // namespace ksched::client
