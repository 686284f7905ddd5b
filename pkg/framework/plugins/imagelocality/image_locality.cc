#include "pkg/framework/plugins/imagelocality/image_locality.h"

#include <variant>

namespace ksched::framework::plugins::imagelocality {
namespace {

int64_t ScaledImageScore(const cache::ImageStateSummary& state, int64_t total_num_nodes) {
  double spread = static_cast<double>(state.num_nodes) / static_cast<double>(total_num_nodes);
  return static_cast<int64_t>(static_cast<double>(state.size) * spread);
}

}  // namespace

namespace {

bool HasTag(std::string_view image) {
  size_t colon = image.rfind(':');
  size_t slash = image.rfind('/');
  // npos compares as "before everything", like Go's LastIndex returning -1.
  return colon != std::string_view::npos && (slash == std::string_view::npos || colon > slash);
}

}  // namespace

std::string NormalizedImageName(std::string_view image) {
  std::string out(image);
  if (!HasTag(image)) out += ":latest";
  return out;
}

namespace {

// The pod's images as nodes report them (a tag added where none is given), init
// containers first, into `out`: a buffer reused per thread, so scoring allocates
// nothing once warm.
void PodImageNames(const api::Pod& pod, std::vector<std::string>& out) {
  size_t k = 0;
  auto add = [&](const std::vector<api::Container>& containers) {
    for (const api::Container& c : containers) {
      if (k == out.size()) out.emplace_back();
      std::string& name = out[k++];
      name.assign(c.image);
      if (!HasTag(c.image)) name.append(":latest");
    }
  };
  add(pod.spec.init_containers);
  add(pod.spec.containers);
  out.resize(k);
}

int64_t SumScores(const cache::NodeInfo& node, std::span<const std::string> images, int64_t total_num_nodes) {
  const auto& states = node.image_states();
  if (total_num_nodes <= 0 || states.empty()) return 0;
  int64_t sum = 0;
  for (const std::string& image : images) {
    auto it = states.find(image);
    if (it != states.end()) sum += ScaledImageScore(it->second, total_num_nodes);
  }
  return sum;
}

std::vector<std::string>& ImageNamesBuffer() {
  thread_local std::vector<std::string> names;
  return names;
}

}  // namespace

int64_t SumImageScores(const cache::NodeInfo& node, const api::Pod& pod, int64_t total_num_nodes) {
  if (total_num_nodes <= 0 || node.image_states().empty()) return 0;
  std::vector<std::string>& images = ImageNamesBuffer();
  PodImageNames(pod, images);
  return SumScores(node, images, total_num_nodes);
}

int64_t CalculatePriority(int64_t sum_scores, int64_t num_containers) {
  const int64_t max_threshold = kMaxContainerThreshold * num_containers;
  if (sum_scores < kMinThreshold) {
    sum_scores = kMinThreshold;
  } else if (sum_scores > max_threshold) {
    sum_scores = max_threshold;
  }
  // With no containers max_threshold is 0 and sum_scores is kMinThreshold: the result is 0.
  return kMaxNodeScore * (sum_scores - kMinThreshold) / (max_threshold - kMinThreshold);
}

StatusOr<std::unique_ptr<Plugin>> ImageLocality::New(const config::PluginArgs& args, Handle& handle) {
  if (!std::holds_alternative<std::monostate>(args)) return InvalidArgument("ImageLocality takes no args");
  return std::unique_ptr<Plugin>(std::make_unique<ImageLocality>(handle));
}

Status ImageLocality::Score(const CycleState& state, const api::Pod& pod, const cache::NodeInfo& node,
                            int64_t& score) const {
  return ScoreAsRunOfOne(state, pod, node, score);  // ScoreNodes holds the formula
}

Status ImageLocality::ScoreNodes(const CycleState& /*state*/, const api::Pod& pod,
                                 std::span<const cache::NodeInfoPtr> nodes, std::span<NodeScore> out) const {
  const int64_t total = static_cast<int64_t>(handle_.Snapshot().NumNodes());
  const int64_t containers =
      static_cast<int64_t>(pod.spec.init_containers.size() + pod.spec.containers.size());
  std::vector<std::string>& images = ImageNamesBuffer();
  PodImageNames(pod, images);
  for (size_t j = 0; j < nodes.size(); ++j) {
    out[j].score = CalculatePriority(SumScores(*nodes[j], images, total), containers);
  }
  return Status::Success();
}

}  // namespace ksched::framework::plugins::imagelocality
