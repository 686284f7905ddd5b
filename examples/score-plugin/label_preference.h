// LabelPreference: a Score plugin built outside ksched's tree. It prefers nodes by the
// value of one node label, with a score per value taken from its args:
//
//   pluginConfig:
//   - name: LabelPreference
//     args:
//       label: example.com/tier      # required
//       scores: {premium: 10, standard: 4}
//       otherScore: 0                # nodes without the label or with another value
//
// Scores are relative: NormalizeScore gives the best-scored feasible node 100 and the
// others their share of it, so the plugin's weight in the profile decides how much the
// preference counts against the default plugins. It never rejects a node: a pod goes to
// an unpreferred node when no preferred one fits.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "config/types.h"
#include "pkg/framework/interface.h"
#include "pkg/util/status.h"

namespace example {

struct LabelPreferenceArgs {
  std::string label;
  std::map<std::string, int64_t> scores;  // label value -> score
  int64_t other_score = 0;
};

class LabelPreference final : public ksched::framework::ScorePlugin {
 public:
  static constexpr std::string_view kName = "LabelPreference";

  // The factory ksched calls with the profile's pluginConfig args (and the framework's
  // handle, which this plugin does not need).
  static ksched::StatusOr<std::unique_ptr<ksched::framework::Plugin>> New(const ksched::config::PluginArgs& args,
                                                                          ksched::framework::Handle& handle);
  explicit LabelPreference(LabelPreferenceArgs args) : args_(std::move(args)) {}

  std::string_view Name() const override { return kName; }
  ksched::framework::Status Score(const ksched::framework::CycleState& state, const ksched::api::Pod& pod,
                                  const ksched::cache::NodeInfo& node, int64_t& score) const override;
  bool HasNormalizeScore() const override { return true; }
  ksched::framework::Status NormalizeScore(const ksched::framework::CycleState& state, const ksched::api::Pod& pod,
                                           std::span<ksched::framework::NodeScore> scores) const override;

 private:
  const LabelPreferenceArgs args_;
};

}  // namespace example
