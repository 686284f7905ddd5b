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

std::vector<std::string_view> SplitZoneLabel(std::string_view value) {
  std::vector<std::string_view> out;
  for (size_t start = 0;;) {
    const size_t end = value.find(kMultiZoneDelimiter, start);
    out.push_back(value.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return out;
    start = end + kMultiZoneDelimiter.size();
  }
}

ksched::StatusOr<std::set<std::string, std::less<>>> LabelZonesToSet(std::string_view value) {
  std::set<std::string, std::less<>> zones;
  for (std::string_view piece : SplitZoneLabel(value)) {
    std::string_view zone = TrimSpace(piece);
    if (zone.empty()) {
      return ksched::InvalidArgument("\"__\" separated list (\"" + std::string(value) +
                                     "\") must not contain an empty string");
    }
    zones.emplace(zone);
  }
  return zones;
}

}  // namespace ksched::framework::plugins::helper
