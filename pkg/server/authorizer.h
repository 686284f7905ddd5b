// Delegated authentication and authorization for the secure port, as kube-scheduler's
// DelegatingAuthenticator/Authorizer: a TokenReview finds who holds the bearer token, then a
// SubjectAccessReview asks whether that user may `verb` the non-resource path. Both answers
// (allow and deny) are cached for 10 s, so a Prometheus scraping every few seconds costs
// the apiserver two requests per TTL, not per scrape.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "pkg/client/api_client.h"
#include "pkg/server/server.h"
#include "pkg/util/clock.h"
#include "pkg/util/mutex.h"

namespace ksched::server {

struct TokenReviewAuthorizerOptions {
  client::ApiClient* client = nullptr;  // not owned
  Clock* clock = &RealClock();
  Clock::duration authn_ttl = std::chrono::seconds(10);
  Clock::duration authz_ttl = std::chrono::seconds(10);
  std::chrono::milliseconds request_timeout{10000};
  // Bounds the caches; expired entries are dropped first, then everything.
  size_t max_cache_entries = 4096;
};

class TokenReviewAuthorizer final : public Authorizer {
 public:
  explicit TokenReviewAuthorizer(TokenReviewAuthorizerOptions options);

  // true/false from the SubjectAccessReview; kUnauthenticated when the TokenReview says the
  // token is not authenticated (the server answers 401); other errors when the apiserver
  // cannot be asked (never cached). Blocks on the ApiClient: never call it from an
  // ApiClient callback.
  StatusOr<bool> Allowed(const std::string& token, const std::string& path, const std::string& verb) override;

 private:
  struct UserInfo {
    bool authenticated = false;
    std::string username;
    std::string uid;
    std::vector<std::string> groups;
    std::map<std::string, std::vector<std::string>> extra;
  };
  template <typename V>
  struct Entry {
    V value;
    Clock::time_point expires;
  };

  StatusOr<UserInfo> Authenticate(const std::string& token);
  StatusOr<bool> Authorize(const UserInfo& user, const std::string& path, const std::string& verb);

  TokenReviewAuthorizerOptions options_;
  Mutex mu_;
  // Keyed by the token's SHA-256, so raw tokens are not kept in memory.
  std::map<std::string, Entry<UserInfo>> authn_cache_ GUARDED_BY(mu_);
  std::map<std::string, Entry<bool>> authz_cache_ GUARDED_BY(mu_);
};

}  // namespace ksched::server
