#include "label_preference.h"

#include <algorithm>
#include <utility>

#include "pkg/framework/runtime/plugin_args.h"

namespace example {

namespace fw = ksched::framework;

ksched::StatusOr<std::unique_ptr<fw::Plugin>> LabelPreference::New(const ksched::config::PluginArgs& args,
                                                                   fw::Handle& /*handle*/) {
  LabelPreferenceArgs a;
  fw::runtime::PluginArgsReader r(kName, args);
  r.Required("label", &a.label).Required("scores", &a.scores).Optional("otherScore", &a.other_score);
  for (const auto& [value, score] : a.scores) {
    if (score < 0) r.Invalid("scores." + value, score, "must not be negative");
  }
  if (a.other_score < 0) r.Invalid("otherScore", a.other_score, "must not be negative");
  if (ksched::Status s = r.Done(); !s.ok()) return s;
  return std::unique_ptr<fw::Plugin>(std::make_unique<LabelPreference>(std::move(a)));
}

// Called for many nodes at once, from several threads: it reads only the node and args_.
fw::Status LabelPreference::Score(const fw::CycleState& /*state*/, const ksched::api::Pod& /*pod*/,
                                  const ksched::cache::NodeInfo& node, int64_t& score) const {
  score = args_.other_score;
  if (const std::string* value = node.node()->metadata.labels.Get(args_.label)) {
    if (auto it = args_.scores.find(*value); it != args_.scores.end()) score = it->second;
  }
  return fw::Status();
}

// The best node gets kMaxNodeScore, the others their share of it (as upstream's
// helper.DefaultNormalizeScore); all zero stays all zero.
fw::Status LabelPreference::NormalizeScore(const fw::CycleState& /*state*/, const ksched::api::Pod& /*pod*/,
                                           std::span<fw::NodeScore> scores) const {
  int64_t best = 0;
  for (const fw::NodeScore& s : scores) best = std::max(best, s.score);
  if (best == 0) return fw::Status();
  for (fw::NodeScore& s : scores) s.score = s.score * fw::kMaxNodeScore / best;
  return fw::Status();
}

}  // namespace example
