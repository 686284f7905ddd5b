// TokenReviewAuthorizer against a scripted apiserver: the review bodies it sends, how it
// reads the answers, and the 10 s cache on an injected clock.
#include "pkg/server/authorizer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cpprest/json.h>

#include "pkg/client/curl_client.h"
#include "tests/fakes/fake_api_server.h"

namespace ksched::server {
namespace {

using namespace std::chrono_literals;
using ksched::testing::FakeApiServer;
using ksched::testing::HttpRequest;
using ksched::testing::ResponseWriter;

// Tokens: "good" -> user prom (allowed on /metrics only), "nosar" -> user bob (never
// allowed), anything else unauthenticated.
class ReviewServer {
 public:
  ReviewServer()
      : server_([this](const HttpRequest& req, ResponseWriter& w) { Handle(req, w); }) {
    client::RestConfig cfg;
    cfg.server = server_.url();
    cfg.qps = 0;
    auto client = client::NewCurlApiClient(cfg);
    EXPECT_TRUE(client.ok());
    client_ = std::move(*client);
  }
  client::ApiClient* client() { return client_.get(); }
  FakeApiServer& server() { return server_; }
  int token_reviews() const { return token_reviews_; }
  int access_reviews() const { return access_reviews_; }
  std::atomic<bool> fail{false};

 private:
  void Handle(const HttpRequest& req, ResponseWriter& w) {
    if (fail) {
      w.Respond(500, R"({"kind":"Status","status":"Failure","message":"boom","code":500})", {{"Retry-After", "0"}});
      return;
    }
    auto body = web::json::value::parse(req.body);
    if (req.method == "POST" && req.path == "/apis/authentication.k8s.io/v1/tokenreviews") {
      ++token_reviews_;
      EXPECT_EQ(body["kind"].as_string(), "TokenReview");
      const std::string token = body["spec"]["token"].as_string();
      std::string status = R"({"authenticated":false})";
      if (token == "good") {
        status = R"({"authenticated":true,"user":{"username":"prom","uid":"u1","groups":["system:authenticated"]}})";
      } else if (token == "nosar") {
        status = R"({"authenticated":true,"user":{"username":"bob","groups":["system:authenticated"]}})";
      }
      w.Respond(201, R"({"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","status":)" + status + "}");
      return;
    }
    if (req.method == "POST" && req.path == "/apis/authorization.k8s.io/v1/subjectaccessreviews") {
      ++access_reviews_;
      EXPECT_EQ(body["kind"].as_string(), "SubjectAccessReview");
      EXPECT_EQ(body["spec"]["groups"][0].as_string(), "system:authenticated");
      EXPECT_EQ(body["spec"]["nonResourceAttributes"]["verb"].as_string(), "get");
      const bool allowed = body["spec"]["user"].as_string() == "prom" &&
                           body["spec"]["nonResourceAttributes"]["path"].as_string() == "/metrics";
      w.Respond(201, std::string(R"({"kind":"SubjectAccessReview","status":{"allowed":)") +
                         (allowed ? "true" : "false") + "}}");
      return;
    }
    w.Respond(404, R"({"kind":"Status","status":"Failure","reason":"NotFound","code":404})");
  }

  std::atomic<int> token_reviews_{0};
  std::atomic<int> access_reviews_{0};
  FakeApiServer server_;
  client::ApiClientPtr client_;
};

TEST(TokenReviewAuthorizerTest, DecisionsFromTheReviews) {
  ReviewServer api;
  FakeClock clock;
  TokenReviewAuthorizer authz({.client = api.client(), .clock = &clock});

  struct Case {
    std::string token, path;
    StatusCode code;
    bool allowed;
  };
  for (const Case& c : std::vector<Case>{
           {"good", "/metrics", StatusCode::kOk, true},
           {"good", "/configz", StatusCode::kOk, false},
           {"nosar", "/metrics", StatusCode::kOk, false},
           {"bogus", "/metrics", StatusCode::kUnauthenticated, false},
       }) {
    SCOPED_TRACE(c.token + " " + c.path);
    StatusOr<bool> got = authz.Allowed(c.token, c.path, "get");
    EXPECT_EQ(got.status().code(), c.code) << got.status().message();
    if (got.ok()) {
      EXPECT_EQ(*got, c.allowed);
    }
  }
}

TEST(TokenReviewAuthorizerTest, CachesBothAnswersForTenSeconds) {
  ReviewServer api;
  FakeClock clock;
  TokenReviewAuthorizer authz({.client = api.client(), .clock = &clock});

  ASSERT_TRUE(*authz.Allowed("good", "/metrics", "get"));
  ASSERT_FALSE(*authz.Allowed("nosar", "/metrics", "get"));
  EXPECT_EQ(api.token_reviews(), 2);
  EXPECT_EQ(api.access_reviews(), 2);

  clock.Advance(9s);
  EXPECT_TRUE(*authz.Allowed("good", "/metrics", "get"));
  EXPECT_FALSE(*authz.Allowed("nosar", "/metrics", "get"));
  EXPECT_EQ(api.token_reviews(), 2);
  EXPECT_EQ(api.access_reviews(), 2);

  // Same user, another path: the token is cached, the decision is not.
  EXPECT_FALSE(*authz.Allowed("good", "/configz", "get"));
  EXPECT_EQ(api.token_reviews(), 2);
  EXPECT_EQ(api.access_reviews(), 3);

  clock.Advance(1s);  // 10 s after the first answers: expired
  EXPECT_TRUE(*authz.Allowed("good", "/metrics", "get"));
  EXPECT_EQ(api.token_reviews(), 3);
  EXPECT_EQ(api.access_reviews(), 4);
}

TEST(TokenReviewAuthorizerTest, ApiErrorsAreReturnedAndNotCached) {
  ReviewServer api;
  FakeClock clock;
  TokenReviewAuthorizer authz({.client = api.client(), .clock = &clock});
  api.fail = true;
  StatusOr<bool> got = authz.Allowed("good", "/metrics", "get");
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().code(), StatusCode::kUnauthenticated);
  EXPECT_NE(got.status().message().find("TokenReview"), std::string::npos) << got.status().message();
  api.fail = false;
  EXPECT_TRUE(*authz.Allowed("good", "/metrics", "get"));
}

}  // namespace
}  // namespace ksched::server
