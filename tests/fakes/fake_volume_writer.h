// A framework::VolumeWriter for VolumeBinding's tests, acting as the API server for
// PersistentVolumes and claims:
//
//   FakeClusterLister lister;  FakeVolumeWriter writer(lister);  handle.SetVolumeWriter(&writer);
//
// It records every patch, applies the JSON merge patch to the server's copy of the
// object (metadata.resourceVersion as a precondition, metadata.annotations with null
// deleting a key, spec.claimRef) and answers with the result at resourceVersion + 1.
// The server's copy is `server_volumes` / `server_claims` when the test put one there
// (the server ahead of the informer), else the lister's. With `apply_to_lister` each
// write reaches the lister at once, as if the informer delivered it; without, the
// lister lags until the test updates it. `fail` scripts an error for an object's next
// write. Thread-safe, so PreBind can run on another thread.
#pragma once

#include <cpprest/json.h>

#include <charconv>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pkg/api/storage.h"
#include "pkg/framework/interface.h"
#include "pkg/util/mutex.h"
#include "pkg/util/status.h"
#include "tests/fakes/fake_cluster_lister.h"

namespace ksched::testing {

class FakeVolumeWriter final : public framework::VolumeWriter {
 public:
  struct Patch {
    std::string resource;  // "persistentvolumes" or "persistentvolumeclaims"
    std::string key;       // name, or "ns/name" for claims
    std::string body;
  };

  explicit FakeVolumeWriter(FakeClusterLister& lister) : lister_(lister) {}

  // Set these before the writer is used (or while no write is in flight).
  bool apply_to_lister = true;
  std::map<std::string, api::PersistentVolumePtr, std::less<>> server_volumes;
  std::map<std::string, api::PersistentVolumeClaimPtr, std::less<>> server_claims;
  std::map<std::string, ksched::Status, std::less<>> fail;  // by key; consumed by the write it fails

  std::vector<Patch> Patches() const {
    MutexLock lock(mu_);
    return patches_;
  }

  StatusOr<api::PersistentVolumePtr> PatchVolume(std::string_view name, std::string merge_patch) override {
    MutexLock lock(mu_);
    std::string key(name);
    patches_.push_back({"persistentvolumes", key, merge_patch});
    if (auto it = fail.find(key); it != fail.end()) {
      ksched::Status s = it->second;
      fail.erase(it);
      return s;
    }
    api::PersistentVolumePtr current = Current(server_volumes, lister_.volumes, key);
    if (current == nullptr) return ksched::NotFound("persistentvolumes \"" + key + "\" not found");
    auto next = std::make_shared<api::PersistentVolume>(*current);
    ksched::Status s = Apply(merge_patch, "persistentvolumes", key, next->metadata.resource_version, next->annotations,
                             [&](const web::json::value& spec) { ApplyVolumeSpec(spec, *next); });
    if (!s.ok()) return s;
    api::PersistentVolumePtr result = std::move(next);
    server_volumes[key] = result;
    if (apply_to_lister) lister_.volumes[key] = result;
    return result;
  }

  StatusOr<api::PersistentVolumeClaimPtr> PatchClaim(std::string_view ns, std::string_view name,
                                                     std::string merge_patch) override {
    MutexLock lock(mu_);
    std::string key = std::string(ns) + "/" + std::string(name);
    patches_.push_back({"persistentvolumeclaims", key, merge_patch});
    if (auto it = fail.find(key); it != fail.end()) {
      ksched::Status s = it->second;
      fail.erase(it);
      return s;
    }
    api::PersistentVolumeClaimPtr current = Current(server_claims, lister_.claims, key);
    if (current == nullptr) return ksched::NotFound("persistentvolumeclaims \"" + std::string(name) + "\" not found");
    auto next = std::make_shared<api::PersistentVolumeClaim>(*current);
    ksched::Status s = Apply(merge_patch, "persistentvolumeclaims", std::string(name), next->metadata.resource_version,
                             next->annotations, [](const web::json::value&) {});
    if (!s.ok()) return s;
    api::PersistentVolumeClaimPtr result = std::move(next);
    server_claims[key] = result;
    if (apply_to_lister) lister_.claims[key] = result;
    return result;
  }

 private:
  template <typename M, typename L>
  static typename M::mapped_type Current(const M& server, const L& listed, const std::string& key) {
    if (auto it = server.find(key); it != server.end()) return it->second;
    if (auto it = listed.find(key); it != listed.end()) return it->second;
    return nullptr;
  }

  static std::string NextVersion(const std::string& rv) {
    int64_t v = 0;
    auto [end, ec] = std::from_chars(rv.data(), rv.data() + rv.size(), v);
    if (ec != std::errc() || end != rv.data() + rv.size()) v = 0;
    return std::to_string(v + 1);
  }

  // metadata.resourceVersion (precondition), metadata.annotations, then `spec` by the
  // caller; bumps the resourceVersion.
  template <typename SpecFn>
  static ksched::Status Apply(const std::string& patch, std::string_view resource, const std::string& name,
                              std::string& resource_version, api::StringMap& annotations, SpecFn&& spec) {
    try {
      web::json::value v = web::json::value::parse(patch);
      if (v.has_field("metadata")) {
        const web::json::value& m = v.at("metadata");
        if (m.has_field("resourceVersion") && m.at("resourceVersion").as_string() != resource_version) {
          return ksched::Status(ksched::StatusCode::kConflict,
                                "Operation cannot be fulfilled on " + std::string(resource) + " \"" + name +
                                    "\": the object has been modified; please apply your changes to the latest "
                                    "version and try again");
        }
        if (m.has_field("annotations")) {
          for (const auto& [k, val] : m.at("annotations").as_object()) {
            if (val.is_null()) {
              api::StringMap kept;
              for (const auto& [ak, av] : annotations) {
                if (ak != k) kept.Set(ak, av);
              }
              annotations = std::move(kept);
            } else {
              annotations.Set(k, val.as_string());
            }
          }
        }
      }
      if (v.has_field("spec")) spec(v.at("spec"));
    } catch (const std::exception& e) {
      return ksched::InvalidArgument(std::string("bad merge patch: ") + e.what());
    }
    resource_version = NextVersion(resource_version);
    return ksched::Status::OK();
  }

  static void ApplyVolumeSpec(const web::json::value& spec, api::PersistentVolume& pv) {
    if (!spec.has_field("claimRef")) return;
    const web::json::value& ref = spec.at("claimRef");
    if (ref.is_null()) {
      pv.claim_ref.reset();
      return;
    }
    if (!pv.claim_ref) pv.claim_ref.emplace();
    if (ref.has_field("namespace")) pv.claim_ref->namespace_ = ref.at("namespace").as_string();
    if (ref.has_field("name")) pv.claim_ref->name = ref.at("name").as_string();
    if (ref.has_field("uid")) pv.claim_ref->uid = ref.at("uid").as_string();
  }

  FakeClusterLister& lister_;
  mutable Mutex mu_;
  std::vector<Patch> patches_ GUARDED_BY(mu_);
};

}  // namespace ksched::testing
