// Out-of-line pieces of the framework interfaces (interface.h).
#include "pkg/framework/interface.h"

#include <algorithm>
#include <iterator>
#include <map>

namespace ksched::framework {

void CycleState::DropSchedulingOnlyData() {
  std::erase_if(data_, [](const Entry& e) { return e.data != nullptr && !e.data->NeededForBinding(); });
}

std::unique_ptr<CycleState> CycleState::Clone() const {
  auto out = std::make_unique<CycleState>();
  out->data_.reserve(data_.size());
  for (const Entry& e : data_) {
    // A null entry cannot be cloned; keep the key so Read() still finds "nothing".
    out->data_.push_back({e.key, e.data ? e.data->Clone() : nullptr});
  }
  out->skip_filter_plugins = skip_filter_plugins;
  out->skip_score_plugins = skip_score_plugins;
  out->skip_filter_mask = skip_filter_mask;
  out->pre_filter_extensions_active = pre_filter_extensions_active;
  out->pre_filter_extension_mask = pre_filter_extension_mask;
  out->record_plugin_metrics = record_plugin_metrics;
  return out;
}

std::string NodesAvailableMessage(int num_all_nodes, const NodeToStatusMap& statuses) {
  std::map<std::string_view, int> counts;
  for (const auto& [node, status] : statuses) {
    for (const std::string& reason : status.reasons()) ++counts[reason];
  }
  std::vector<std::string> parts;
  parts.reserve(counts.size());
  for (const auto& [reason, n] : counts) parts.push_back(std::to_string(n) + " " + std::string(reason));
  std::sort(parts.begin(), parts.end());
  std::string msg = "0/" + std::to_string(num_all_nodes) + " nodes are available: ";
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) msg += ", ";
    msg += parts[i];
  }
  msg += ".";
  return msg;
}

namespace {
Status NoPluginRunner() { return Status::Error("this framework handle cannot run plugins"); }
}  // namespace

Status Handle::RunFilterPluginsWithNominatedPods(const CycleState&, const api::Pod&, const cache::NodeInfo&) const {
  return NoPluginRunner();
}
Status Handle::RunFilterPluginsHonoring(const CycleState&, const api::Pod&, cache::NodeInfo&,
                                        std::span<const api::PodPtr>) const {
  return NoPluginRunner();
}
Status Handle::RunPreFilterExtensionAddPod(CycleState&, const api::Pod&, const cache::PodEntry&,
                                           const cache::NodeInfo&) const {
  return NoPluginRunner();
}
Status Handle::RunPreFilterExtensionRemovePod(CycleState&, const api::Pod&, const cache::PodEntry&,
                                              const cache::NodeInfo&) const {
  return NoPluginRunner();
}
void Handle::ParallelizeUntil(int n, const std::function<void(int)>& fn, const std::atomic<bool>* stop) {
  for (int i = 0; i < n && !(stop != nullptr && stop->load()); ++i) fn(i);
}

Status ScorePlugin::ScoreNodes(const CycleState& state, const api::Pod& pod,
                               std::span<const cache::NodeInfoPtr> nodes, std::span<NodeScore> out) const {
  for (size_t j = 0; j < nodes.size(); ++j) {
    Status s = Score(state, pod, *nodes[j], out[j].score);
    if (!s.IsSuccess()) return s;
  }
  return Status();
}

Status ScorePlugin::ScoreAsRunOfOne(const CycleState& state, const api::Pod& pod, const cache::NodeInfo& node,
                                    int64_t& score) const {
  const cache::NodeInfoPtr view(cache::NodeInfoPtr(), &node);  // not owning
  NodeScore out{node.name_view(), 0};
  Status s = ScoreNodes(state, pod, std::span<const cache::NodeInfoPtr>(&view, 1), std::span<NodeScore>(&out, 1));
  score = out.score;
  return s;
}

PreFilterResult PreFilterResult::Merge(const PreFilterResult& other) const {
  if (AllNodes()) return other;
  if (other.AllNodes()) return *this;
  PreFilterResult out;
  out.node_names.emplace();
  std::set_intersection(node_names->begin(), node_names->end(), other.node_names->begin(),
                        other.node_names->end(), std::inserter(*out.node_names, out.node_names->end()),
                        std::less<>());
  return out;
}

}  // namespace ksched::framework
