#include "pkg/framework/plugins/volumebinding/assume_cache.h"

#include <charconv>
#include <optional>
#include <utility>

namespace ksched::framework::plugins::volumebinding {
namespace {

std::optional<int64_t> ParseVersion(std::string_view s) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// Whether an assumed object still stands over the lister's version of it.
template <typename T>
bool Stands(const std::shared_ptr<const T>& assumed, const std::shared_ptr<const T>& listed) {
  return listed != nullptr &&
         !ResourceVersionNewer(listed->metadata.resource_version, assumed->metadata.resource_version);
}

// upstream AssumeCache.Assume's checks: `description` is upstream's type name.
template <typename T>
ksched::Status CheckAssumable(std::string_view description, const std::string& key,
                              const std::shared_ptr<const T>& latest, const T& obj) {
  if (latest == nullptr) {
    return ksched::NotFound("could not find " + std::string(description) + " \"" + key + "\"");
  }
  if (ResourceVersionNewer(latest->metadata.resource_version, obj.metadata.resource_version)) {
    return ksched::Internal(std::string(description) + " \"" + key + "\" is out of sync (stored: " +
                            latest->metadata.resource_version + ", assume: " + obj.metadata.resource_version + ")");
  }
  return ksched::Status::OK();
}

}  // namespace

bool ResourceVersionNewer(std::string_view a, std::string_view b) {
  std::optional<int64_t> va = ParseVersion(a), vb = ParseVersion(b);
  if (va && vb) return *va > *vb;
  return a != b;
}

api::PersistentVolumePtr AssumeCache::Volume(const api::ClusterLister& lister, std::string_view name) {
  api::PersistentVolumePtr listed = lister.Volume(name);
  MutexLock lock(mu_);
  auto it = volumes_.find(name);
  if (it == volumes_.end()) return listed;
  if (Stands(it->second, listed)) return it->second;
  volumes_.erase(it);
  return listed;
}

api::PersistentVolumeClaimPtr AssumeCache::Claim(const api::ClusterLister& lister, std::string_view ns,
                                                 std::string_view name) {
  api::PersistentVolumeClaimPtr listed = lister.Claim(ns, name);
  std::string key = api::ClaimKey(ns, name);
  MutexLock lock(mu_);
  auto it = claims_.find(key);
  if (it == claims_.end()) return listed;
  if (Stands(it->second, listed)) return it->second;
  claims_.erase(it);
  return listed;
}

std::vector<api::PersistentVolumePtr> AssumeCache::VolumesOfClass(const api::ClusterLister& lister,
                                                                  std::string_view class_name) {
  std::vector<api::PersistentVolumePtr> out = lister.VolumesOfClass(class_name);
  MutexLock lock(mu_);
  if (volumes_.empty()) return out;
  for (api::PersistentVolumePtr& pv : out) {
    auto it = volumes_.find(pv->Name());
    if (it == volumes_.end()) continue;
    if (Stands(it->second, pv)) {
      pv = it->second;
    } else {
      volumes_.erase(it);
    }
  }
  return out;
}

ksched::Status AssumeCache::AssumeVolume(const api::ClusterLister& lister, api::PersistentVolumePtr pv) {
  const std::string& name = pv->Name();
  api::PersistentVolumePtr latest = Volume(lister, name);
  if (auto s = CheckAssumable("v1.PersistentVolume", name, latest, *pv); !s.ok()) return s;
  MutexLock lock(mu_);
  volumes_[name] = std::move(pv);
  return ksched::Status::OK();
}

ksched::Status AssumeCache::AssumeClaim(const api::ClusterLister& lister, api::PersistentVolumeClaimPtr claim) {
  std::string key = claim->Key();
  api::PersistentVolumeClaimPtr latest = Claim(lister, claim->Namespace(), claim->Name());
  if (auto s = CheckAssumable("v1.PersistentVolumeClaim", key, latest, *claim); !s.ok()) return s;
  MutexLock lock(mu_);
  claims_[std::move(key)] = std::move(claim);
  return ksched::Status::OK();
}

void AssumeCache::RestoreVolume(std::string_view name) {
  MutexLock lock(mu_);
  if (auto it = volumes_.find(name); it != volumes_.end()) volumes_.erase(it);
}

void AssumeCache::RestoreClaim(std::string_view ns, std::string_view name) {
  std::string key = api::ClaimKey(ns, name);
  MutexLock lock(mu_);
  claims_.erase(key);
}

void AssumeCache::Prune(const api::ClusterLister& lister) {
  // Read the keys under the lock, the lister outside it, then drop what was overtaken
  // (unless it was re-assumed meanwhile).
  std::vector<std::pair<std::string, api::PersistentVolumePtr>> volumes;
  std::vector<std::pair<std::string, api::PersistentVolumeClaimPtr>> claims;
  {
    MutexLock lock(mu_);
    volumes.assign(volumes_.begin(), volumes_.end());
    claims.assign(claims_.begin(), claims_.end());
  }
  std::vector<bool> drop_volume(volumes.size()), drop_claim(claims.size());
  for (size_t i = 0; i < volumes.size(); ++i) {
    drop_volume[i] = !Stands(volumes[i].second, lister.Volume(volumes[i].first));
  }
  for (size_t i = 0; i < claims.size(); ++i) {
    const api::PersistentVolumeClaim& c = *claims[i].second;
    drop_claim[i] = !Stands(claims[i].second, lister.Claim(c.Namespace(), c.Name()));
  }
  MutexLock lock(mu_);
  for (size_t i = 0; i < volumes.size(); ++i) {
    auto it = volumes_.find(volumes[i].first);
    if (drop_volume[i] && it != volumes_.end() && it->second == volumes[i].second) volumes_.erase(it);
  }
  for (size_t i = 0; i < claims.size(); ++i) {
    auto it = claims_.find(claims[i].first);
    if (drop_claim[i] && it != claims_.end() && it->second == claims[i].second) claims_.erase(it);
  }
}

size_t AssumeCache::NumAssumed() const {
  MutexLock lock(mu_);
  return volumes_.size() + claims_.size();
}

}  // namespace ksched::framework::plugins::volumebinding
