// An in-memory ApiClient that serves one namespace's Leases the way kube-apiserver
// does: GET (404 when absent), POST (409 AlreadyExists), PUT with a resourceVersion
// precondition (409 Conflict when stale). Requests complete synchronously inside Send().
// Tests inject errors, hang requests, or run code just before a chosen request to
// interleave two electors deterministically.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "informers/api_client.h"
#include "pkg/leaderelection/lease.h"

namespace ksched::leaderelection::testing {

class FakeLeaseClient : public informers::ApiClient {
 public:
  struct Stored {
    LeaseRecord record;
    int64_t resource_version = 0;
    // Extra metadata fields the server keeps, e.g. R"("labels":{"a":"b"})".
    std::string extra_metadata;
  };

  explicit FakeLeaseClient(std::string ns = "kube-system") : ns_(std::move(ns)) {}

  // Answers `request` with this status instead of serving it when it is not OK.
  void SetFault(std::function<Status(const informers::Request&)> fault) {
    std::lock_guard l(mu_);
    fault_ = std::move(fault);
  }
  // Runs `hook` once, just before the next request with `verb` is served (outside the
  // client's lock, so the hook may drive another elector on this client).
  void BeforeNext(informers::Verb verb, std::function<void()> hook) {
    std::lock_guard l(mu_);
    hooks_[verb] = std::move(hook);
  }
  // While set, requests are kept unanswered (as a hung connection); clearing answers them
  // with Unavailable.
  void SetHang(bool hang) {
    std::vector<informers::ResponseCallback> hung;
    {
      std::lock_guard l(mu_);
      hang_ = hang;
      if (!hang) hung.swap(hung_);
    }
    for (auto& done : hung) done(Unavailable("connection reset"));
  }

  // Writes a lease directly, as another client would (bumps the resourceVersion).
  void Put(const std::string& name, LeaseRecord record, std::string extra_metadata = "") {
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
  int Count(informers::Verb verb) const {
    std::lock_guard l(mu_);
    auto it = counts_.find(verb);
    return it == counts_.end() ? 0 : it->second;
  }
  std::vector<std::string> Bodies(informers::Verb verb) const {
    std::lock_guard l(mu_);
    std::vector<std::string> out;
    for (const auto& [v, body] : bodies_)
      if (v == verb) out.push_back(body);
    return out;
  }

  void Send(informers::Request request, informers::ResponseCallback done) override {
    std::function<void()> hook;
    {
      std::lock_guard l(mu_);
      if (auto it = hooks_.find(request.verb); it != hooks_.end()) {
        hook = std::move(it->second);
        hooks_.erase(it);
      }
    }
    if (hook) hook();
    std::lock_guard l(mu_);
    ++counts_[request.verb];
    bodies_.emplace_back(request.verb, request.body);
    if (fault_) {
      if (Status s = fault_(request); !s.ok()) return done(s);
    }
    if (hang_) {
      hung_.push_back(std::move(done));
      return;
    }
    done(Serve(request));
  }

  std::unique_ptr<informers::WatchStream> Watch(informers::Request, informers::WatchCallbacks) override {
    return nullptr;
  }

 private:
  StatusOr<informers::Response> Serve(const informers::Request& r) {
    const std::string collection = LeaseCollectionPath(ns_);
    if (r.verb == informers::Verb::kPost) {
      if (r.path != collection) return NotFound("the server could not find the requested resource");
      auto lease = DecodeLease(r.body);
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
    if (r.verb == informers::Verb::kGet) return Ok(name, 200);
    if (r.verb != informers::Verb::kPut) return InvalidArgument("unsupported verb");
    auto lease = DecodeLease(r.body);
    if (!lease.ok()) return InvalidArgument(lease.status().message());
    if (lease->resource_version != std::to_string(it->second.resource_version))
      return Status(StatusCode::kConflict, "Operation cannot be fulfilled on leases.coordination.k8s.io \"" + name +
                                               "\": the object has been modified; please apply your changes to "
                                               "the latest version and try again");
    it->second.record = lease->record;
    it->second.resource_version = ++rv_;
    return Ok(name, 200);
  }

  informers::Response Ok(const std::string& name, long code) {
    const Stored& s = leases_.at(name);
    std::string meta = R"({"name":")" + name + R"(","namespace":")" + ns_ + R"(","resourceVersion":")" +
                       std::to_string(s.resource_version) + "\"";
    if (!s.extra_metadata.empty()) meta += "," + s.extra_metadata;
    meta += "}";
    return {code, EncodeLeaseUpdate(meta, s.record)};
  }

  static std::string NameOf(const std::string& raw_metadata) {
    auto at = raw_metadata.find("\"name\":\"");
    if (at == std::string::npos) return "";
    at += 8;
    return raw_metadata.substr(at, raw_metadata.find('"', at) - at);
  }

  const std::string ns_;
  mutable std::mutex mu_;
  std::map<std::string, Stored> leases_;
  int64_t rv_ = 100;
  std::function<Status(const informers::Request&)> fault_;
  std::map<informers::Verb, std::function<void()>> hooks_;
  bool hang_ = false;
  std::vector<informers::ResponseCallback> hung_;
  std::map<informers::Verb, int> counts_;
  std::vector<std::pair<informers::Verb, std::string>> bodies_;
};

}  // namespace ksched::leaderelection::testing
