// NodeAffinity: a node must match the pod's .spec.nodeSelector and required node affinity
// (and the profile's addedAffinity); among feasible nodes, those matching more preferred
// terms (by weight) score higher.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "config/types.h"
#include "pkg/api/selector.h"
#include "pkg/framework/interface.h"
#include "pkg/util/status.h"

namespace ksched::framework::plugins::nodeaffinity {

inline constexpr std::string_view kErrReasonPod = "node(s) didn't match Pod's node affinity/selector";
inline constexpr std::string_view kErrReasonEnforced = "node(s) didn't match scheduler-enforced node affinity";
inline constexpr std::string_view kErrReasonConflict = "pod affinity terms conflict";

// The config form of a node affinity (operators as strings) in the object model's types;
// InvalidArgument for an unknown operator.
StatusOr<api::NodeAffinity> ConvertAffinity(const config::NodeAffinity& in);

class NodeAffinity final : public PreFilterPlugin,
                           public FilterPlugin,
                           public PreScorePlugin,
                           public ScorePlugin,
                           public EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "NodeAffinity";
  // `args`: NodeAffinityArgs or monostate. An addedAffinity with an invalid term is an
  // InvalidArgument error.
  static StatusOr<std::unique_ptr<Plugin>> New(const config::PluginArgs& args, Handle& handle);
  static StatusOr<std::unique_ptr<NodeAffinity>> Create(const config::NodeAffinityArgs& args);

  std::string_view Name() const override { return kName; }

  // Skip when neither the pod nor addedAffinity constrains nodes. Narrows the nodes to
  // those named by metadata.name matchFields when every required term names some;
  // UnschedulableAndUnresolvable kErrReasonConflict when the terms name none.
  Status PreFilter(CycleState& state, const api::Pod& pod, PreFilterResult& result) override;
  Status Filter(const CycleState& state, const api::Pod& pod, const cache::NodeInfo& node) const override;
  // Skip when there are no preferred terms (pod or addedAffinity).
  Status PreScore(CycleState& state, const api::Pod& pod, std::span<const cache::NodeInfoPtr> nodes) override;
  // Sum of the weights of matching preferred terms.
  Status Score(const CycleState& state, const api::Pod& pod, const cache::NodeInfo& node,
               int64_t& score) const override;
  bool HasNormalizeScore() const override { return true; }
  Status NormalizeScore(const CycleState& state, const api::Pod& pod, std::span<NodeScore> scores) const override;
  // Node Add / label change, queued only when the node now matches the pod's required
  // affinity (and addedAffinity) and did not before. The hint refers to this plugin, so
  // the plugin must outlive the queue holding it.
  std::vector<ClusterEventWithHint> EventsToRegister() const override;

 private:
  StatusOr<QueueingHint> NodeChangeHint(const api::Pod& pod, const api::Node* old_node,
                                        const api::Node& new_node) const;

  std::optional<api::NodeSelectorMatcher> added_node_selector_;
  std::optional<api::PreferredTermsMatcher> added_preferred_;
};

}  // namespace ksched::framework::plugins::nodeaffinity
