#include "pkg/api/cluster_lister.h"

namespace ksched::api {
namespace {

class EmptyLister final : public ClusterLister {
 public:
  std::optional<StringMap> NamespaceLabels(std::string_view /*name*/) const override { return std::nullopt; }
  std::vector<std::string> NamespacesMatching(const LabelSelectorMatcher& /*selector*/) const override {
    return {};
  }
  LabelSelector DefaultSpreadSelector(const Pod& /*pod*/) const override { return {}; }
};

}  // namespace

const ClusterLister& EmptyClusterLister() {
  static const EmptyLister kEmpty;
  return kEmpty;
}

}  // namespace ksched::api
