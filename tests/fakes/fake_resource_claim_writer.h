// A framework::ResourceClaimWriter for DynamicResources' tests, acting as the API server
// for ResourceClaims:
//
//   FakeClusterLister lister;  FakeResourceClaimWriter writer(lister);
//   handle.SetResourceClaimWriter(&writer);
//
// It records every request and applies the plugin's merge patches to the server's copy
// of the claim: metadata.resourceVersion and metadata.uid as preconditions (a mismatch
// is a Conflict), metadata.finalizers, status.allocation and status.reservedFor (null
// clears them); the answer is the claim at resourceVersion + 1. The patch body is read
// with the claim decoder, so only the fields above take effect. The server's copy is
// `server` when the test put one there (the server ahead of the informer), else the
// lister's; with `apply_to_lister` every write reaches the lister at once. `fail`
// scripts an error for a claim's next write. Thread-safe.
#pragma once

#include <charconv>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/api/json.h"
#include "pkg/api/resource.h"
#include "pkg/framework/interface.h"
#include "pkg/util/mutex.h"
#include "pkg/util/status.h"
#include "tests/fakes/fake_cluster_lister.h"

namespace ksched::testing {

class FakeResourceClaimWriter final : public framework::ResourceClaimWriter {
 public:
  struct Request {
    std::string verb;  // "GET", "PATCH", "PATCH status"
    std::string key;   // "ns/name"
    std::string body;
  };

  explicit FakeResourceClaimWriter(FakeClusterLister& lister) : lister_(lister) {}

  bool apply_to_lister = true;
  std::map<std::string, api::ResourceClaimPtr, std::less<>> server;
  std::map<std::string, ksched::Status, std::less<>> fail;  // by key; consumed by the write it fails

  std::vector<Request> Requests() const {
    MutexLock lock(mu_);
    return requests_;
  }

  StatusOr<api::ResourceClaimPtr> GetResourceClaim(std::string_view ns, std::string_view name) override {
    MutexLock lock(mu_);
    std::string key = std::string(ns) + "/" + std::string(name);
    requests_.push_back({"GET", key, ""});
    api::ResourceClaimPtr current = CurrentLocked(key);
    if (!current) return ksched::NotFound("resourceclaims.resource.k8s.io \"" + std::string(name) + "\" not found");
    return current;
  }

  StatusOr<api::ResourceClaimPtr> PatchResourceClaim(std::string_view ns, std::string_view name,
                                                     std::string merge_patch, bool status) override {
    MutexLock lock(mu_);
    std::string key = std::string(ns) + "/" + std::string(name);
    requests_.push_back({status ? "PATCH status" : "PATCH", key, merge_patch});
    if (auto it = fail.find(key); it != fail.end()) {
      ksched::Status s = it->second;
      fail.erase(it);
      return s;
    }
    api::ResourceClaimPtr current = CurrentLocked(key);
    if (!current) return ksched::NotFound("resourceclaims.resource.k8s.io \"" + std::string(name) + "\" not found");
    api::JsonParser parser;
    auto patch = api::DecodeResourceClaim(parser, api::JsonText(merge_patch));
    if (!patch.ok()) return ksched::InvalidArgument("unreadable patch: " + std::string(patch.status().message()));
    const api::ResourceClaim& p = **patch;
    auto conflict = [&] {
      return ksched::Status(StatusCode::kConflict, "Operation cannot be fulfilled on resourceclaims.resource.k8s.io \"" +
                                                       std::string(name) +
                                                       "\": the object has been modified; please apply your changes "
                                                       "to the latest version and try again");
    };
    if (!p.metadata.resource_version.empty() && p.metadata.resource_version != current->metadata.resource_version)
      return conflict();
    if (!p.metadata.uid.empty() && p.metadata.uid != current->metadata.uid) return conflict();
    auto next = std::make_shared<api::ResourceClaim>(*current);
    auto has = [&](std::string_view field) { return merge_patch.find(field) != std::string::npos; };
    if (status) {
      if (has("\"allocation\":")) next->allocation = p.allocation;
      if (has("\"reservedFor\":")) next->reserved_for = p.reserved_for;
    } else if (has("\"finalizers\":")) {
      next->finalizers = p.finalizers;
    }
    next->metadata.resource_version = NextVersion(current->metadata.resource_version);
    api::ResourceClaimPtr result = std::move(next);
    server[key] = result;
    if (apply_to_lister) lister_.Put(result);
    return result;
  }

 private:
  api::ResourceClaimPtr CurrentLocked(const std::string& key) const REQUIRES(mu_) {
    if (auto it = server.find(key); it != server.end()) return it->second;
    if (auto it = lister_.resource_claims.find(key); it != lister_.resource_claims.end()) return it->second;
    return nullptr;
  }

  static std::string NextVersion(const std::string& rv) {
    int64_t v = 0;
    auto [end, ec] = std::from_chars(rv.data(), rv.data() + rv.size(), v);
    if (ec != std::errc() || end != rv.data() + rv.size()) v = 0;
    return std::to_string(v + 1);
  }

  FakeClusterLister& lister_;
  mutable Mutex mu_;
  std::vector<Request> requests_ GUARDED_BY(mu_);
};

}  // namespace ksched::testing
