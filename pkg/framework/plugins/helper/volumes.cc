#include "pkg/framework/plugins/helper/volumes.h"

namespace ksched::framework::plugins::helper {
namespace {

constexpr std::string_view kMultiZoneDelimiter = "__";

std::string NotFoundMessage(std::string_view resource, std::string_view name) {
  std::string out(resource);
  out += " \"";
  out += name;
  out += "\" not found";
  return out;
}

std::string_view TrimSpace(std::string_view s) {
  constexpr std::string_view kSpace = " \t\n\v\f\r";
  const size_t begin = s.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return {};
  const size_t end = s.find_last_not_of(kSpace);
  return s.substr(begin, end - begin + 1);
}

}  // namespace

std::string ClaimNotFound(std::string_view name) { return NotFoundMessage("persistentvolumeclaim", name); }
std::string VolumeNotFound(std::string_view name) { return NotFoundMessage("persistentvolume", name); }
std::string StorageClassNotFound(std::string_view name) { return NotFoundMessage("storageclass.storage.k8s.io", name); }

ksched::StatusOr<std::set<std::string, std::less<>>> LabelZonesToSet(std::string_view value) {
  std::set<std::string, std::less<>> zones;
  size_t start = 0;
  while (true) {
    const size_t end = value.find(kMultiZoneDelimiter, start);
    std::string_view zone = TrimSpace(value.substr(start, end == std::string_view::npos ? end : end - start));
    if (zone.empty()) {
      return ksched::InvalidArgument("\"__\" separated list (\"" + std::string(value) +
                                     "\") must not contain an empty string");
    }
    zones.emplace(zone);
    if (end == std::string_view::npos) break;
    start = end + kMultiZoneDelimiter.size();
  }
  return zones;
}

}  // namespace ksched::framework::plugins::helper
