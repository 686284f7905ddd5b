#include "pkg/server/authorizer.h"

#include <cpprest/json.h>
#include <openssl/sha.h>

#include <exception>

namespace ksched::server {
namespace {

std::string Sha256Hex(const std::string& data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * SHA256_DIGEST_LENGTH);
  for (unsigned char b : digest) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 0xf]);
  }
  return out;
}

web::json::value StringArray(const std::vector<std::string>& values) {
  web::json::value array = web::json::value::array(values.size());
  for (size_t i = 0; i < values.size(); ++i) array[i] = web::json::value::string(values[i]);
  return array;
}

std::vector<std::string> ReadStringArray(const web::json::value& v) {
  std::vector<std::string> out;
  if (!v.is_array()) return out;
  for (const auto& item : v.as_array()) {
    if (item.is_string()) out.push_back(item.as_string());
  }
  return out;
}

StatusOr<web::json::value> PostReview(client::ApiClient& client, const std::string& path,
                                      const web::json::value& body, std::chrono::milliseconds timeout) {
  client::Request request;
  request.verb = client::Verb::kPost;
  request.path = path;
  request.body = body.serialize();
  request.timeout = timeout;
  request.max_retries = 2;  // a probe must not hang for minutes behind retries
  StatusOr<client::Response> response = client.Do(std::move(request));
  if (!response.ok()) return response.status();
  try {
    return web::json::value::parse(response->body);
  } catch (const std::exception& e) {
    return Internal("decoding the " + path + " response: " + e.what());
  }
}

template <typename Map>
void Prune(Map& cache, Clock::time_point now, size_t max_entries) {
  if (cache.size() < max_entries) return;
  std::erase_if(cache, [now](const auto& kv) { return kv.second.expires <= now; });
  if (cache.size() >= max_entries) cache.clear();
}

}  // namespace

TokenReviewAuthorizer::TokenReviewAuthorizer(TokenReviewAuthorizerOptions options) : options_(std::move(options)) {}

StatusOr<bool> TokenReviewAuthorizer::Allowed(const std::string& token, const std::string& path,
                                              const std::string& verb) {
  StatusOr<UserInfo> user = Authenticate(token);
  if (!user.ok()) return user.status();
  if (!user->authenticated) return Status(StatusCode::kUnauthenticated, "Unauthorized");
  return Authorize(*user, path, verb);
}

StatusOr<TokenReviewAuthorizer::UserInfo> TokenReviewAuthorizer::Authenticate(const std::string& token) {
  const std::string key = Sha256Hex(token);
  {
    MutexLock lock(mu_);
    auto it = authn_cache_.find(key);
    if (it != authn_cache_.end() && options_.clock->Now() < it->second.expires) return it->second.value;
  }
  if (options_.client == nullptr) return Internal("no API client for TokenReview");
  web::json::value body;
  body["apiVersion"] = web::json::value::string("authentication.k8s.io/v1");
  body["kind"] = web::json::value::string("TokenReview");
  body["spec"]["token"] = web::json::value::string(token);
  auto review = PostReview(*options_.client, "/apis/authentication.k8s.io/v1/tokenreviews", body,
                           options_.request_timeout);
  if (!review.ok()) return review.status().WithContext("TokenReview");
  UserInfo user;
  try {
    const auto& obj = review->as_object();
    auto status = obj.find("status");
    if (status != obj.end() && status->second.is_object()) {
      const auto& st = status->second.as_object();
      auto authenticated = st.find("authenticated");
      user.authenticated = authenticated != st.end() && authenticated->second.is_boolean() &&
                           authenticated->second.as_bool();
      auto u = st.find("user");
      if (user.authenticated && u != st.end() && u->second.is_object()) {
        const auto& uo = u->second.as_object();
        if (auto f = uo.find("username"); f != uo.end() && f->second.is_string()) user.username = f->second.as_string();
        if (auto f = uo.find("uid"); f != uo.end() && f->second.is_string()) user.uid = f->second.as_string();
        if (auto f = uo.find("groups"); f != uo.end()) user.groups = ReadStringArray(f->second);
        if (auto f = uo.find("extra"); f != uo.end() && f->second.is_object()) {
          for (const auto& [k, v] : f->second.as_object()) user.extra[k] = ReadStringArray(v);
        }
      }
    }
  } catch (const std::exception& e) {
    return Internal(std::string("decoding TokenReview: ") + e.what());
  }
  MutexLock lock(mu_);
  const auto now = options_.clock->Now();
  Prune(authn_cache_, now, options_.max_cache_entries);
  authn_cache_[key] = {user, now + options_.authn_ttl};
  return user;
}

StatusOr<bool> TokenReviewAuthorizer::Authorize(const UserInfo& user, const std::string& path,
                                               const std::string& verb) {
  // The decision depends on everything the SubjectAccessReview carries.
  std::string key = user.username + '\0' + user.uid + '\0' + path + '\0' + verb;
  for (const auto& g : user.groups) key += '\0' + g;
  for (const auto& [k, values] : user.extra) {
    key += '\x01' + k;
    for (const auto& v : values) key += '\0' + v;
  }
  {
    MutexLock lock(mu_);
    auto it = authz_cache_.find(key);
    if (it != authz_cache_.end() && options_.clock->Now() < it->second.expires) return it->second.value;
  }
  if (options_.client == nullptr) return Internal("no API client for SubjectAccessReview");
  web::json::value body;
  body["apiVersion"] = web::json::value::string("authorization.k8s.io/v1");
  body["kind"] = web::json::value::string("SubjectAccessReview");
  web::json::value& spec = body["spec"];
  spec["user"] = web::json::value::string(user.username);
  if (!user.uid.empty()) spec["uid"] = web::json::value::string(user.uid);
  spec["groups"] = StringArray(user.groups);
  if (!user.extra.empty()) {
    for (const auto& [k, values] : user.extra) spec["extra"][k] = StringArray(values);
  }
  spec["nonResourceAttributes"]["path"] = web::json::value::string(path);
  spec["nonResourceAttributes"]["verb"] = web::json::value::string(verb);
  auto review = PostReview(*options_.client, "/apis/authorization.k8s.io/v1/subjectaccessreviews", body,
                           options_.request_timeout);
  if (!review.ok()) return review.status().WithContext("SubjectAccessReview");
  bool allowed = false;
  try {
    const auto& obj = review->as_object();
    auto status = obj.find("status");
    if (status != obj.end() && status->second.is_object()) {
      const auto& st = status->second.as_object();
      auto a = st.find("allowed");
      allowed = a != st.end() && a->second.is_boolean() && a->second.as_bool();
    }
  } catch (const std::exception& e) {
    return Internal(std::string("decoding SubjectAccessReview: ") + e.what());
  }
  MutexLock lock(mu_);
  const auto now = options_.clock->Now();
  Prune(authz_cache_, now, options_.max_cache_entries);
  authz_cache_[key] = {allowed, now + options_.authz_ttl};
  return allowed;
}

}  // namespace ksched::server
