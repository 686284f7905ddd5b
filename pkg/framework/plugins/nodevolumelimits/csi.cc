#include "pkg/framework/plugins/nodevolumelimits/csi.h"

#include <random>
#include <utility>

#include "pkg/framework/plugins/helper/volumes.h"

namespace ksched::framework::plugins::nodevolumelimits {
namespace {

constexpr InTreePlugin kAwsEbs{"kubernetes.io/aws-ebs", "ebs.csi.aws.com"};
constexpr InTreePlugin kGcePd{"kubernetes.io/gce-pd", "pd.csi.storage.gke.io"};
constexpr InTreePlugin kAzureDisk{"kubernetes.io/azure-disk", "disk.csi.azure.com"};
constexpr InTreePlugin kCinder{"kubernetes.io/cinder", "cinder.csi.openstack.org"};
constexpr InTreePlugin kPortworx{"kubernetes.io/portworx-volume", "pxd.portworx.com"};
constexpr InTreePlugin kAzureFile{"kubernetes.io/azure-file", "file.csi.azure.com"};
constexpr InTreePlugin kVsphere{"kubernetes.io/vsphere-volume", "csi.vsphere.vmware.com"};
constexpr const InTreePlugin* kMigratablePlugins[] = {&kAwsEbs,   &kGcePd,     &kAzureDisk, &kCinder,
                                                      &kPortworx, &kAzureFile, &kVsphere};

// GCE PD volume ids (upstream csi-translation-lib gce_pd.go).
constexpr std::string_view kUnspecified = "UNSPECIFIED";

std::string GceZonalId(std::string_view zone, std::string_view disk) {
  return "projects/" + std::string(kUnspecified) + "/zones/" + std::string(zone) + "/disks/" + std::string(disk);
}

// upstream getRegionFromZones: zones "{locale}-{region}-{zone}" of a single region.
ksched::StatusOr<std::string> RegionOfZones(const std::vector<std::string_view>& zones) {
  std::string region;
  for (std::string_view zone : zones) {
    const size_t first = zone.find('-');
    const size_t second = first == std::string_view::npos ? first : zone.find('-', first + 1);
    if (second == std::string_view::npos || zone.find('-', second + 1) != std::string_view::npos) {
      return ksched::InvalidArgument("zone in unexpected format, expected: {locale}-{region}-{zone}, got: " +
                                     std::string(zone));
    }
    std::string r(zone.substr(0, second));
    if (!region.empty() && r != region) return ksched::InvalidArgument("multiple regions gotten from zones");
    region = std::move(r);
  }
  return region;
}

// A GCE PD PV's handle carries the zone(s) of its labels; an inline volume has none.
ksched::StatusOr<std::string> GcePvHandle(const api::PersistentVolume& pv) {
  const std::string& disk = pv.source.gce_pd_name;
  const std::string* label = pv.metadata.labels.Get(helper::kLabelFailureDomainBetaZone);
  if (label == nullptr || label->empty()) label = pv.metadata.labels.Get(helper::kLabelTopologyZone);
  const std::string_view value = label == nullptr ? std::string_view() : std::string_view(*label);
  const std::vector<std::string_view> zones = helper::SplitZoneLabel(value);
  if (zones.size() == 1) return GceZonalId(zones[0].empty() ? kUnspecified : zones[0], disk);
  auto region = RegionOfZones(zones);
  if (!region.ok()) return region.status();
  return "projects/" + std::string(kUnspecified) + "/regions/" + *region + "/disks/" + disk;
}

// upstream KubernetesVolumeIDToEBSVolumeID: "aws://<zone>/vol-..." or a bare volume id.
ksched::StatusOr<std::string> EbsVolumeId(std::string_view id) {
  constexpr std::string_view kScheme = "aws://";
  if (!id.starts_with(kScheme)) return std::string(id);
  std::string_view rest = id.substr(kScheme.size());
  const size_t slash = rest.find('/');
  std::string_view path = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
  while (path.starts_with('/')) path.remove_prefix(1);
  while (path.ends_with('/')) path.remove_suffix(1);
  if (!path.starts_with("vol-") || path.find('/') != std::string_view::npos) {
    return ksched::InvalidArgument("Invalid format for AWS volume (" + std::string(id) + ")");
  }
  return std::string(path);
}

// The volume handle CSI migration gives an in-tree volume (upstream
// TranslateInTreePVToCSI / TranslateInTreeInlineVolumeToCSI); `pv` is null for an inline
// volume.
ksched::StatusOr<std::string> TranslatedHandle(const InTreePlugin& plugin, const api::VolumeSource& source,
                                               const api::PersistentVolume* pv) {
  if (&plugin == &kGcePd) return pv != nullptr ? GcePvHandle(*pv) : GceZonalId(kUnspecified, source.gce_pd_name);
  if (&plugin == &kAwsEbs) return EbsVolumeId(source.aws_volume_id);
  if (&plugin == &kAzureDisk) return source.azure_disk_uri;
  if (&plugin == &kCinder) return source.cinder_volume_id;
  return ksched::InvalidArgument("no translation for " + std::string(plugin.name));
}

std::string UniqueName(std::string_view driver, std::string_view handle) {
  return std::string(driver) + "/" + std::string(handle);
}

// The volumes this plugin may count: claims, generic ephemeral volumes, migratable
// in-tree disks.
bool MayCount(const api::Volume& v) {
  return !v.pvc_claim_name.empty() || v.ephemeral || InTreePluginOf(v.source) != nullptr;
}

StatusOr<QueueingHint> AssignedPodDeletedHint(const api::Pod& /*pod*/, const void* old_obj, const void* /*new_obj*/) {
  const api::Pod* deleted = ObjectAs<api::Pod>(old_obj);
  if (deleted == nullptr) return ksched::InvalidArgument("NodeVolumeLimits hint: Pod delete without old object");
  if (deleted->spec.volumes.empty()) return QueueingHint::kSkip;
  if (deleted->spec.node_name.empty() && deleted->status.nominated_node_name.empty()) return QueueingHint::kSkip;
  for (const api::Volume& v : deleted->spec.volumes) {
    if (MayCount(v)) return QueueingHint::kQueue;
  }
  return QueueingHint::kSkip;
}

StatusOr<QueueingHint> ClaimAddedHint(const api::Pod& pod, const void* /*old_obj*/, const void* new_obj) {
  const auto* claim = ObjectAs<api::PersistentVolumeClaim>(new_obj);
  if (claim == nullptr)
    return ksched::InvalidArgument("NodeVolumeLimits hint: PersistentVolumeClaim add without object");
  return api::PodUsesClaim(pod, *claim, /*ephemeral_too=*/true) ? QueueingHint::kQueue : QueueingHint::kSkip;
}

// Only a raised limit can make room (a driver without allocatable.count counts as 0).
StatusOr<QueueingHint> CSINodeUpdatedHint(const api::Pod& /*pod*/, const void* old_obj, const void* new_obj) {
  const auto* before = ObjectAs<api::CSINode>(old_obj);
  const auto* now = ObjectAs<api::CSINode>(new_obj);
  if (before == nullptr || now == nullptr)
    return ksched::InvalidArgument("NodeVolumeLimits hint: CSINode update without objects");
  for (const api::CSINodeDriver& d : now->drivers) {
    const api::CSINodeDriver* old_driver = before->FindDriver(d.name);
    const int32_t old_limit = old_driver != nullptr ? old_driver->allocatable_count.value_or(0) : 0;
    if (d.allocatable_count.value_or(0) > old_limit) return QueueingHint::kQueue;
  }
  return QueueingHint::kSkip;
}

std::string RandomPrefix() {
  static constexpr std::string_view kAlphabet = "bcdfghjklmnpqrstvwxz2456789";
  std::random_device rd;
  std::mt19937 gen(rd());
  std::uniform_int_distribution<size_t> pick(0, kAlphabet.size() - 1);
  std::string out(32, ' ');
  for (char& c : out) c = kAlphabet[pick(gen)];
  return out;
}

}  // namespace

const InTreePlugin* MigratableInTreePlugin(std::string_view provisioner) {
  for (const InTreePlugin* p : kMigratablePlugins) {
    if (p->name == provisioner) return p;
  }
  return nullptr;
}

const InTreePlugin* InTreePluginOf(const api::VolumeSource& source) {
  if (!source.csi_driver.empty()) return nullptr;
  if (!source.gce_pd_name.empty()) return &kGcePd;
  if (!source.aws_volume_id.empty()) return &kAwsEbs;
  if (!source.azure_disk_uri.empty()) return &kAzureDisk;
  if (!source.cinder_volume_id.empty()) return &kCinder;
  return nullptr;
}

bool IsCSIMigrationOn(const api::CSINode* csi_node, const InTreePlugin& plugin) {
  if (csi_node == nullptr) return false;
  // Upstream's migration of these plugins is GA and can no longer be turned off, so
  // it no longer reads the CSINode's migrated-plugins annotation; Azure File and
  // vSphere volumes are not counted here at all.
  return &plugin == &kAwsEbs || &plugin == &kGcePd || &plugin == &kAzureDisk || &plugin == &kCinder ||
         &plugin == &kPortworx;
}

StatusOr<std::unique_ptr<Plugin>> CSILimits::New(const config::PluginArgs& /*args*/, Handle& handle) {
  return std::unique_ptr<Plugin>(std::make_unique<CSILimits>(handle, RandomPrefix()));
}

Status CSILimits::PreFilter(CycleState& /*state*/, const api::Pod& pod, PreFilterResult& /*result*/) {
  for (const api::Volume& v : pod.spec.volumes) {
    if (MayCount(v)) return Status::Success();
  }
  return Status(Code::kSkip);
}

ksched::Status CSILimits::AttachableVolumes(const api::Pod& pod, const api::CSINode* csi_node, bool new_pod,
                                            VolumeMap& out) const {
  const api::ClusterLister& lister = handle_.Lister();
  for (const api::Volume& v : pod.spec.volumes) {
    if (v.pvc_claim_name.empty() && !v.ephemeral) {
      // An inline volume counts only as a migrated in-tree disk (upstream
      // checkAttachableInlineVolume); inline CSI volumes are not counted.
      const InTreePlugin* plugin = InTreePluginOf(v.source);
      if (plugin == nullptr || !IsCSIMigrationOn(csi_node, *plugin)) continue;
      auto handle = TranslatedHandle(*plugin, v.source, nullptr);
      if (!handle.ok()) {
        return ksched::Internal("converting volume(" + v.name + ") from inline to csi: " + handle.status().message());
      }
      out[UniqueName(plugin->csi_driver, *handle)] = std::string(plugin->csi_driver);
      continue;
    }
    const std::string claim_name = api::ClaimName(pod, v);
    api::PersistentVolumeClaimPtr claim = lister.Claim(pod.metadata.namespace_, claim_name);
    if (claim == nullptr) {
      // The new pod cannot run without it; an existing pod's volume is not counted.
      if (new_pod) {
        return ksched::NotFound("looking up PVC " + api::ClaimKey(pod.metadata.namespace_, claim_name) + ": " +
                                helper::ClaimNotFound(claim_name));
      }
      continue;
    }
    if (v.ephemeral && !api::ClaimIsForPod(pod, *claim)) {
      return ksched::Internal(api::NotOwnedClaimMessage(pod, *claim));
    }
    auto [driver, handle] = DriverInfo(csi_node, *claim);
    if (driver.empty() || handle.empty()) continue;
    std::string unique = UniqueName(driver, handle);
    out[std::move(unique)] = std::move(driver);
  }
  return ksched::Status::OK();
}

std::pair<std::string, std::string> CSILimits::DriverInfo(const api::CSINode* csi_node,
                                                          const api::PersistentVolumeClaim& claim) const {
  if (claim.volume_name.empty()) return DriverInfoFromClass(csi_node, claim);
  api::PersistentVolumePtr pv = handle_.Lister().Volume(claim.volume_name);
  // A deleted volume, or one the claim was pre-bound to that does not exist yet: count
  // by the class, as an unbound claim.
  if (pv == nullptr) return DriverInfoFromClass(csi_node, claim);
  if (!pv->source.csi_driver.empty()) return {pv->source.csi_driver, pv->source.csi_volume_handle};
  const InTreePlugin* plugin = InTreePluginOf(pv->source);
  if (plugin == nullptr || !IsCSIMigrationOn(csi_node, *plugin)) return {};
  auto handle = TranslatedHandle(*plugin, pv->source, pv.get());
  if (!handle.ok()) return {};
  return {std::string(plugin->csi_driver), std::move(*handle)};
}

std::pair<std::string, std::string> CSILimits::DriverInfoFromClass(const api::CSINode* csi_node,
                                                                   const api::PersistentVolumeClaim& claim) const {
  // Without a class the claim binds immediately, so it is bound before scheduling.
  const std::string_view class_name = claim.StorageClass();
  if (class_name.empty()) return {};
  api::StorageClassPtr sc = handle_.Lister().StorageClassNamed(class_name);
  if (sc == nullptr) return {};
  // A made-up handle, unique per claim: a claim bound meanwhile and used by another pod
  // of the node is counted twice rather than not at all.
  std::string handle = volume_id_prefix_ + "-" + claim.Key();
  if (const InTreePlugin* plugin = MigratableInTreePlugin(sc->provisioner)) {
    if (!IsCSIMigrationOn(csi_node, *plugin)) return {};
    return {std::string(plugin->csi_driver), std::move(handle)};
  }
  return {sc->provisioner, std::move(handle)};
}

Status CSILimits::Filter(const CycleState& /*state*/, const api::Pod& pod, const cache::NodeInfo& node) const {
  if (pod.spec.volumes.empty()) return Status::Success();
  const api::Node* n = node.node();
  if (n == nullptr) return Status::Error("node not found");
  // No CSINode yet: nothing migrates and no driver has a limit.
  api::CSINodePtr csi_node = handle_.Lister().CSINodeNamed(n->metadata.name);

  VolumeMap new_volumes;
  if (ksched::Status s = AttachableVolumes(pod, csi_node.get(), true, new_volumes); !s.ok()) {
    if (s.code() == StatusCode::kNotFound) return Status(Code::kUnschedulableAndUnresolvable, s.message());
    return Status::Error(s.message());
  }
  if (new_volumes.empty()) return Status::Success();

  std::map<std::string, int64_t, std::less<>> limits;
  if (csi_node != nullptr) {
    for (const api::CSINodeDriver& d : csi_node->drivers) {
      if (d.allocatable_count) limits[d.name] = *d.allocatable_count;
    }
  }
  if (limits.empty()) return Status::Success();

  VolumeMap attached;
  for (const cache::PodEntry& e : node.pods()) {
    if (ksched::Status s = AttachableVolumes(*e.pod, csi_node.get(), false, attached); !s.ok()) {
      return Status::Error(s.message());
    }
  }
  std::map<std::string, int64_t, std::less<>> attached_count;
  for (const auto& [unique, driver] : attached) {
    new_volumes.erase(unique);  // a volume already on the node is not attached again
    ++attached_count[driver];
  }
  std::map<std::string, int64_t, std::less<>> new_count;
  for (const auto& [unique, driver] : new_volumes) ++new_count[driver];

  for (const auto& [driver, count] : new_count) {
    auto limit = limits.find(driver);
    if (limit == limits.end()) continue;
    auto used = attached_count.find(driver);
    if ((used == attached_count.end() ? 0 : used->second) + count > limit->second) {
      return Status::Constant<kErrReasonMaxVolumeCountExceeded>(Code::kUnschedulable);
    }
  }
  return Status::Success();
}

std::vector<ClusterEventWithHint> CSILimits::EventsToRegister() const {
  return {
      // Any new CSINode may lift a limit.
      {ClusterEvent{EventResource::kCSINode, kAdd, ""}, nullptr},
      {ClusterEvent{EventResource::kCSINode, kUpdate, ""}, CSINodeUpdatedHint},
      {ClusterEvent{EventResource::kPod, kDelete, ""}, AssignedPodDeletedHint},
      {ClusterEvent{EventResource::kPersistentVolumeClaim, kAdd, ""}, ClaimAddedHint},
  };
}

}  // namespace ksched::framework::plugins::nodevolumelimits
