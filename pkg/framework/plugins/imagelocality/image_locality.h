// ImageLocality: favours nodes that already have the pod's container images, weighted by
// image size and by how widely the image is spread over the cluster, so pods are not all
// drawn to the one node that happens to have a big image (upstream imagelocality).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "config/types.h"
#include "pkg/framework/interface.h"
#include "pkg/util/status.h"

namespace ksched::framework::plugins::imagelocality {

inline constexpr int64_t kMB = 1024 * 1024;
// Below this summed score a node gets 0: small images are cheap to pull anyway.
inline constexpr int64_t kMinThreshold = 23 * kMB;
// Per container: above this the node gets 100.
inline constexpr int64_t kMaxContainerThreshold = 1000 * kMB;

// Upstream normalizedImageName: an image without a tag gets ":latest" (a ':' before the
// last '/' is a registry port, not a tag). Digests ("@sha256:...") are kept as they are.
// Registry prefixes are not added: node status names are matched exactly, as upstream does.
std::string NormalizedImageName(std::string_view image);

// Sum over the pod's init and regular containers of size * (nodes with the image / all nodes).
int64_t SumImageScores(const cache::NodeInfo& node, const api::Pod& pod, int64_t total_num_nodes);
// The summed score clamped to [23MB, 1000MB * containers] and scaled to 0..100.
int64_t CalculatePriority(int64_t sum_scores, int64_t num_containers);

class ImageLocality final : public ScorePlugin {
 public:
  static constexpr std::string_view kName = "ImageLocality";

  static StatusOr<std::unique_ptr<Plugin>> New(const config::PluginArgs& args, Handle& handle);
  explicit ImageLocality(Handle& handle) : handle_(handle) {}

  std::string_view Name() const override { return kName; }
  Status Score(const CycleState& state, const api::Pod& pod, const cache::NodeInfo& node,
               int64_t& score) const override;
  Status ScoreNodes(const CycleState& state, const api::Pod& pod, std::span<const cache::NodeInfoPtr> nodes,
                    std::span<NodeScore> out) const override;

 private:
  Handle& handle_;
};

}  // namespace ksched::framework::plugins::imagelocality
