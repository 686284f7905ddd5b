// What the volume plugins (VolumeRestrictions, VolumeZone, NodeVolumeLimits) share: the
// messages of upstream's listers when an object is missing, and the topology labels a
// PersistentVolume's zone is read from.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/api/types.h"
#include "pkg/util/status.h"

namespace ksched::framework::plugins::helper {

// The NotFound errors of client-go's listers, as upstream plugins return them verbatim:
// `persistentvolumeclaim "x" not found`, `persistentvolume "x" not found`,
// `storageclass.storage.k8s.io "x" not found`.
std::string ClaimNotFound(std::string_view name);
std::string VolumeNotFound(std::string_view name);
std::string StorageClassNotFound(std::string_view name);

// Node and PersistentVolume topology labels (pkg/api/types.h).
using api::kLabelFailureDomainBetaRegion;
using api::kLabelFailureDomainBetaZone;
using api::kLabelTopologyRegion;
using api::kLabelTopologyZone;

// The pieces of a multi-zone label value split at "__", as they are (upstream
// strings.Split with volumehelpers' delimiter): "a__b" -> {"a", "b"}, "" -> {""}.
std::vector<std::string_view> SplitZoneLabel(std::string_view value);

// A zone label value of a volume that spans zones: "us-west1-a__us-west1-b" (upstream
// volumehelpers.LabelZonesToSet). Each zone is trimmed of spaces; an empty one is an
// error.
ksched::StatusOr<std::set<std::string, std::less<>>> LabelZonesToSet(std::string_view value);

}  // namespace ksched::framework::plugins::helper
