// The API calls tests against the real kube-apiserver of tests/harness/control_plane.h
// share: an admin client without a rate limit, and creating objects in a cluster that
// every test of a binary shares (an object that already exists is fine).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "pkg/client/api_client.h"
#include "pkg/client/curl_client.h"
#include "pkg/client/rest_config.h"
#include "pkg/api/json.h"
#include "tests/fakes/event_log.h"
#include "tests/harness/control_plane.h"

namespace ksched::testing {

// The control plane's admin credentials, without a rate limit: tests create objects as
// fast as the server takes them.
inline client::RestConfig AdminConfig() {
  auto cfg = client::LoadKubeconfig(ControlPlane::Get().kubeconfig());
  EXPECT_TRUE(cfg.ok()) << cfg.status().ToString();
  cfg->qps = 0;
  return *cfg;
}

inline client::ApiClientPtr NewClient(const client::RestConfig& cfg) {
  auto c = client::NewCurlApiClient(cfg);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return std::move(*c);
}

inline client::ApiClientPtr AdminClient() { return NewClient(AdminConfig()); }

// POST; an existing object is fine (tests share one cluster).
inline void Post(client::ApiClient& c, const std::string& path, const std::string& body) {
  auto r = c.Do({.verb = client::Verb::kPost, .path = path, .body = body});
  ASSERT_TRUE(r.ok() || r.status().code() == StatusCode::kAlreadyExists) << path << ": " << r.status().ToString();
}

inline void CreateNamespace(client::ApiClient& c, const std::string& name) {
  Post(c, "/api/v1/namespaces", R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")" + name + "\"}}");
}

// POST the pod into its namespace.
inline void CreatePod(client::ApiClient& c, const api::Pod& p) {
  Post(c, "/api/v1/namespaces/" + p.metadata.namespace_ + "/pods", api::EncodePod(p));
}

// The node pod `key` ("namespace/name") is bound to, as the API server has it, once it
// is bound; "" if it is not within `timeout`.
inline std::string BoundNode(client::ApiClient& c, const std::string& key, std::chrono::milliseconds timeout) {
  const size_t slash = key.find('/');
  const std::string path = "/api/v1/namespaces/" + key.substr(0, slash) + "/pods/" + key.substr(slash + 1);
  std::string node;
  Eventually(
      [&] {
        auto r = c.Do({.path = path});
        if (!r.ok()) return false;
        auto p = api::DecodePod(r->body);
        if (p.ok()) node = (*p)->spec.node_name;
        return !node.empty();
      },
      timeout);
  return node;
}

}  // namespace ksched::testing
