// The coordination.k8s.io/v1 Lease endpoints of one namespace, scripted on a
// FakeApiClient the way kube-apiserver serves them: GET (404 when absent), POST (409
// AlreadyExists), PUT with a resourceVersion precondition (409 Conflict when stale).
// Leader-election tests talk to the FakeApiClient (which records every request, and
// holds requests to play a hung connection); this keeps the leases behind it.
//
//   FakeApiClient client;
//   FakeLeases leases(client);
//   leases.Put("ksched", record);  // as another client would write it
//   ... elector on `client` ...
//   EXPECT_EQ(leases.Get("ksched")->record.holder_identity, "a");
//
// Tests inject errors (SetFault) or run code just before a chosen request is served
// (BeforeNext) to interleave two electors deterministically.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pkg/client/api_client.h"
#include "pkg/leaderelection/lease.h"
#include "pkg/util/status.h"
#include "tests/fakes/fake_api_client.h"

namespace ksched::testing {

class FakeLeases {
 public:
  struct Stored {
    leaderelection::LeaseRecord record;
    int64_t resource_version = 0;
    // Extra metadata fields the server keeps, e.g. R"("labels":{"a":"b"})".
    std::string extra_metadata;
  };

  // Becomes `api`'s handler until destroyed; `api` must outlive this.
  explicit FakeLeases(FakeApiClient& api, std::string ns = "kube-system") : api_(api), ns_(std::move(ns)) {
    api_.SetHandler([this](const client::Request& r) { return Answer(r); });
  }
  ~FakeLeases() { api_.SetHandler(nullptr); }
  FakeLeases(const FakeLeases&) = delete;
  FakeLeases& operator=(const FakeLeases&) = delete;

  // Answers a request with this status instead of serving it when it is not OK.
  void SetFault(std::function<Status(const client::Request&)> fault) {
    std::lock_guard l(mu_);
    fault_ = std::move(fault);
  }
  // Runs `hook` once, just before the next request with `verb` is served. It runs
  // without any lock held (FakeApiClient's handler does), so it may drive another
  // elector on the same client.
  void BeforeNext(client::Verb verb, std::function<void()> hook) {
    std::lock_guard l(mu_);
    hooks_[verb] = std::move(hook);
  }

  // Writes a lease directly, as another client would (bumps the resourceVersion).
  void Put(const std::string& name, leaderelection::LeaseRecord record, std::string extra_metadata = "") {
    std::lock_guard l(mu_);
    auto& s = leases_[name];
    s.record = std::move(record);
    s.resource_version = ++rv_;
    if (!extra_metadata.empty()) s.extra_metadata = std::move(extra_metadata);
  }
  std::optional<Stored> Get(const std::string& name) const {
    std::lock_guard l(mu_);
    auto it = leases_.find(name);
    if (it == leases_.end()) return std::nullopt;
    return it->second;
  }

 private:
  StatusOr<client::Response> Answer(const client::Request& r) {
    std::function<void()> hook;
    {
      std::lock_guard l(mu_);
      if (auto it = hooks_.find(r.verb); it != hooks_.end()) {
        hook = std::move(it->second);
        hooks_.erase(it);
      }
    }
    if (hook) hook();
    std::lock_guard l(mu_);
    if (fault_) {
      if (Status s = fault_(r); !s.ok()) return s;
    }
    return Serve(r);
  }

  StatusOr<client::Response> Serve(const client::Request& r) {
    const std::string collection = leaderelection::LeaseCollectionPath(ns_);
    if (r.verb == client::Verb::kPost) {
      if (r.path != collection) return NotFound("the server could not find the requested resource");
      auto lease = leaderelection::DecodeLease(r.body);
      if (!lease.ok()) return InvalidArgument(lease.status().message());
      std::string name = NameOf(lease->raw_metadata);
      if (leases_.count(name))
        return Status(StatusCode::kAlreadyExists, "leases.coordination.k8s.io \"" + name + "\" already exists");
      leases_[name] = Stored{lease->record, ++rv_, ""};
      return Ok(name, 201);
    }
    if (r.path.rfind(collection + "/", 0) != 0) return NotFound("the server could not find the requested resource");
    std::string name = r.path.substr(collection.size() + 1);
    auto it = leases_.find(name);
    if (it == leases_.end()) return NotFound("leases.coordination.k8s.io \"" + name + "\" not found");
    if (r.verb == client::Verb::kGet) return Ok(name, 200);
    if (r.verb != client::Verb::kPut) return InvalidArgument("unsupported verb");
    auto lease = leaderelection::DecodeLease(r.body);
    if (!lease.ok()) return InvalidArgument(lease.status().message());
    if (lease->resource_version != std::to_string(it->second.resource_version))
      return Status(StatusCode::kConflict, "Operation cannot be fulfilled on leases.coordination.k8s.io \"" + name +
                                               "\": the object has been modified; please apply your changes to "
                                               "the latest version and try again");
    it->second.record = lease->record;
    it->second.resource_version = ++rv_;
    return Ok(name, 200);
  }

  client::Response Ok(const std::string& name, long code) const {
    const Stored& s = leases_.at(name);
    std::string meta = R"({"name":")" + name + R"(","namespace":")" + ns_ + R"(","resourceVersion":")" +
                       std::to_string(s.resource_version) + "\"";
    if (!s.extra_metadata.empty()) meta += "," + s.extra_metadata;
    meta += "}";
    return {code, leaderelection::EncodeLeaseUpdate(meta, s.record)};
  }

  static std::string NameOf(const std::string& raw_metadata) {
    auto at = raw_metadata.find("\"name\":\"");
    if (at == std::string::npos) return "";
    at += 8;
    return raw_metadata.substr(at, raw_metadata.find('"', at) - at);
  }

  FakeApiClient& api_;
  const std::string ns_;
  mutable std::mutex mu_;
  std::map<std::string, Stored> leases_;
  int64_t rv_ = 100;
  std::function<Status(const client::Request&)> fault_;
  std::map<client::Verb, std::function<void()>> hooks_;
};

}  // namespace ksched::testing
