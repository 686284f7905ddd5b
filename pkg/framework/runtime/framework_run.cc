// The Framework's Run* methods: one loop per extension point with upstream's rules for
// Skip, rejections and errors (framework/runtime/framework.go, v1.27+ semantics).
#include <algorithm>
#include <bit>
#include <mutex>

#include "pkg/framework/runtime/framework.h"
#include "pkg/util/log.h"
#include "pkg/util/strings.h"

namespace ksched::framework::runtime {
namespace {

// PreFilter's Skip for the i-th Filter plugin: a bit in the mask for the first 64, the
// name set beyond.
bool FilterSkipped(const CycleState& state, size_t i, const FilterPlugin& pl) {
  return i < 64 ? (state.skip_filter_mask >> i) & 1
                : !state.skip_filter_plugins.empty() && state.skip_filter_plugins.contains(pl.Name());
}

// Whether what-if runs leave out the i-th PreFilter plugin's extensions (PreFilter
// skipped it): a bit in the mask for the first 64, the name set beyond.
bool PreFilterExtensionSkipped(const CycleState& state, size_t i, const PreFilterPlugin& pl) {
  return i < 64 ? !((state.pre_filter_extension_mask >> i) & 1)
                : !state.skip_filter_plugins.empty() && state.skip_filter_plugins.contains(pl.Name());
}

// An internal error from `plugin` at `point`: `running <Point> plugin "X": <message>`.
Status PluginError(std::string_view point, const Plugin& plugin, const Status& s) {
  return Status::Error("running " + std::string(point) + " plugin " + Quoted(plugin.Name()) + ": " + s.Message())
      .WithPlugin(std::string(plugin.Name()));
}

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// A plugin's non-success answer at `point`: a rejection keeps its code and names the
// plugin; anything else is the plugin's internal error.
Status RejectionOrError(std::string_view point, const Plugin& plugin, Status s) {
  if (s.IsRejected()) return std::move(s).WithPlugin(std::string(plugin.Name()));
  return PluginError(point, plugin, s);
}

}  // namespace

Clock::time_point Framework::PointStart() const {
  return metrics_enabled_ ? options_.clock->Now() : Clock::time_point{};
}

void Framework::RecordPoint(std::string_view point, Code code, Clock::time_point start) const {
  if (!metrics_enabled_) return;
  options_.metrics->ObserveExtensionPoint(point, code, profile_name_, Seconds(options_.clock->Now() - start));
}

// Runs one plugin call, timing it when the cycle is sampled. Filter and Score run once
// per node, so even in a sampled cycle only one call in kPerNodeSampleEvery (per
// thread) is timed: the distribution stays the same at a fraction of the clock reads.
template <typename F>
Status Framework::Timed(const CycleState& state, std::string_view point, const Plugin& plugin, F&& call) const {
  if (!metrics_enabled_ || !state.record_plugin_metrics) return call();
  constexpr unsigned kPerNodeSampleEvery = 8;
  thread_local unsigned per_node_calls = 0;
  if ((point == "Filter" || point == "Score") && ++per_node_calls % kPerNodeSampleEvery != 0) return call();
  Clock::time_point t0 = options_.clock->Now();
  Status s = call();
  options_.metrics->ObservePlugin(point, plugin.Name(), s.code(), Seconds(options_.clock->Now() - t0));
  return s;
}

std::pair<PreFilterResult, Status> Framework::RunPreFilterPlugins(CycleState& state, const api::Pod& pod) {
  const Clock::time_point start = PointStart();
  PreFilterResult result;
  std::vector<std::string_view> plugins_with_nodes;
  PluginSet skipped;
  auto finish = [&](Status s) {
    RecordPoint("PreFilter", s.code(), start);
    return std::make_pair(std::move(result), std::move(s));
  };
  for (PreFilterPlugin* pl : pre_filter_) {
    PreFilterResult r;
    Status s = Timed(state, "PreFilter", *pl, [&] { return pl->PreFilter(state, pod, r); });
    if (s.IsSkip()) {
      skipped.insert(std::string(pl->Name()));
      continue;
    }
    if (!s.IsSuccess()) {
      result = PreFilterResult();
      if (s.IsRejected()) return finish(std::move(s).WithPlugin(std::string(pl->Name())));
      return finish(PluginError("PreFilter", *pl, s));
    }
    if (!r.AllNodes()) plugins_with_nodes.push_back(pl->Name());
    result = result.Merge(r);
    if (!result.AllNodes() && result.node_names->empty()) {
      std::string msg;
      if (plugins_with_nodes.size() == 1) {
        msg = "node(s) didn't satisfy plugin " + std::string(plugins_with_nodes[0]);
      } else {
        msg = "node(s) didn't satisfy plugin(s) [";
        for (size_t i = 0; i < plugins_with_nodes.size(); ++i) {
          if (i > 0) msg += " ";
          msg += plugins_with_nodes[i];
        }
        msg += "] simultaneously";
      }
      // Attributed to the plugin whose result emptied the intersection.
      return finish(Status(Code::kUnschedulableAndUnresolvable, std::move(msg)).WithPlugin(std::string(pl->Name())));
    }
  }
  state.skip_filter_plugins = std::move(skipped);
  state.skip_filter_mask = 0;
  for (size_t i = 0; i < filter_.size() && i < 64; ++i) {
    if (state.skip_filter_plugins.contains(filter_[i]->Name())) state.skip_filter_mask |= uint64_t{1} << i;
  }
  state.pre_filter_extension_mask = 0;
  state.pre_filter_extensions_active = false;
  for (size_t i = 0; i < pre_filter_.size(); ++i) {
    PreFilterPlugin* pl = pre_filter_[i];
    if (pl->Extensions() == nullptr || state.skip_filter_plugins.contains(pl->Name())) continue;
    state.pre_filter_extensions_active = true;
    if (i < 64) state.pre_filter_extension_mask |= uint64_t{1} << i;
  }
  return finish(Status());
}

Status Framework::RunPreFilterExtensionAddPod(CycleState& state, const api::Pod& pod_to_schedule,
                                              const cache::PodEntry& pod_to_add, const cache::NodeInfo& node) const {
  if (!state.pre_filter_extensions_active) return Status();
  for (size_t i = 0; i < pre_filter_.size(); ++i) {
    PreFilterPlugin* pl = pre_filter_[i];
    const PreFilterExtensions* ext = pl->Extensions();
    if (ext == nullptr || PreFilterExtensionSkipped(state, i, *pl)) continue;
    Status s = ext->AddPod(state, pod_to_schedule, pod_to_add, node);
    if (!s.IsSuccess()) {
      return Status::Error("running AddPod on PreFilter plugin " + Quoted(pl->Name()) + ": " + s.Message())
          .WithPlugin(std::string(pl->Name()));
    }
  }
  return Status();
}

Status Framework::RunPreFilterExtensionRemovePod(CycleState& state, const api::Pod& pod_to_schedule,
                                                 const cache::PodEntry& pod_to_remove,
                                                 const cache::NodeInfo& node) const {
  if (!state.pre_filter_extensions_active) return Status();
  for (size_t i = 0; i < pre_filter_.size(); ++i) {
    PreFilterPlugin* pl = pre_filter_[i];
    const PreFilterExtensions* ext = pl->Extensions();
    if (ext == nullptr || PreFilterExtensionSkipped(state, i, *pl)) continue;
    Status s = ext->RemovePod(state, pod_to_schedule, pod_to_remove, node);
    if (!s.IsSuccess()) {
      return Status::Error("running RemovePod on PreFilter plugin " + Quoted(pl->Name()) + ": " + s.Message())
          .WithPlugin(std::string(pl->Name()));
    }
  }
  return Status();
}

Status Framework::RunFilterPlugins(const CycleState& state, const api::Pod& pod, const cache::NodeInfo& node) const {
  auto verdict = [&](size_t i, Status s) {
    if (!s.IsRejected()) {
      // Filters may only accept or reject; anything else is the plugin's internal error.
      return Status::Error("running " + Quoted(filter_[i]->Name()) + " filter plugin: " + s.Message())
          .WithPlugin(std::string(filter_[i]->Name()));
    }
    return std::move(s).WithPluginName(filter_names_[i]);
  };
  if (filter_.size() <= 64) {
    // This runs per node: visit the plugins PreFilter did not skip by their bits.
    const uint64_t all = filter_.size() == 64 ? ~uint64_t{0} : (uint64_t{1} << filter_.size()) - 1;
    for (uint64_t run = all & ~state.skip_filter_mask; run != 0; run &= run - 1) {
      const auto i = static_cast<size_t>(std::countr_zero(run));
      FilterPlugin* pl = filter_[i];
      Status s = Timed(state, "Filter", *pl, [&] { return pl->Filter(state, pod, node); });
      if (!s.IsSuccess()) return verdict(i, std::move(s));
    }
    return Status();
  }
  for (size_t i = 0; i < filter_.size(); ++i) {
    FilterPlugin* pl = filter_[i];
    if (FilterSkipped(state, i, *pl)) continue;
    Status s = Timed(state, "Filter", *pl, [&] { return pl->Filter(state, pod, node); });
    if (!s.IsSuccess()) return verdict(i, std::move(s));
  }
  return Status();
}

void Framework::RunAllFilterPlugins(const CycleState& state, const api::Pod& pod, const cache::NodeInfo& node,
                                    std::vector<Status>& rejections) const {
  for (size_t i = 0; i < filter_.size(); ++i) {
    FilterPlugin* pl = filter_[i];
    if (FilterSkipped(state, i, *pl)) continue;
    Status s = pl->Filter(state, pod, node);
    if (!s.IsSuccess()) rejections.push_back(std::move(s).WithPluginName(filter_names_[i]));
  }
}

Status Framework::RunFilterPluginsWithNominatedPods(const CycleState& state, const api::Pod& pod,
                                                    const cache::NodeInfo& node) const {
  // Nothing nominated anywhere (the common case): no lookup, and the node is not touched
  // before its plugins run.
  if (options_.nominator == nullptr || !options_.nominator->HasNominatedPods() || node.node() == nullptr)
    return RunFilterPlugins(state, pod, node);
  const std::vector<api::PodPtr> nominated = NominatedPodsToHonor(pod, node.name());
  if (nominated.empty()) return RunFilterPlugins(state, pod, node);
  // One copy per thread, reused: its vectors keep their capacity from node to node.
  thread_local cache::NodeInfo copy;
  copy = node;
  return RunFilterPluginsHonoring(state, pod, copy, nominated);
}

std::vector<api::PodPtr> Framework::NominatedPodsToHonor(const api::Pod& pod, std::string_view node) const {
  if (options_.nominator == nullptr || !options_.nominator->HasNominatedPods()) return {};
  std::vector<api::PodPtr> nominated = options_.nominator->NominatedPodsForNode(node);
  std::erase_if(nominated, [&](const api::PodPtr& p) { return p->Priority() < pod.Priority() || cache::SamePodKey(pod, *p); });
  return nominated;
}

Status Framework::RunFilterPluginsHonoring(const CycleState& state, const api::Pod& pod, cache::NodeInfo& node,
                                           std::span<const api::PodPtr> nominated) const {
  if (nominated.empty() || node.node() == nullptr) return RunFilterPlugins(state, pod, node);
  // First pass: with nominated pods of higher or equal priority, which the pod must not
  // displace.
  const size_t own_pods = node.pods().size();
  std::unique_ptr<CycleState> state_with;
  if (state.pre_filter_extensions_active) state_with = state.Clone();  // AddPod extensions write into it
  Status s;
  for (const api::PodPtr& p : nominated) {
    node.AddPodEntry(nominated_entries_.Get(p));
    if (!state_with) continue;
    s = RunPreFilterExtensionAddPod(*state_with, pod, node.pods().back(), node);
    if (!s.IsSuccess()) break;
  }
  if (s.IsSuccess()) s = RunFilterPlugins(state_with ? *state_with : state, pod, node);
  node.TruncatePods(own_pods);
  if (!s.IsSuccess()) return s;
  // Second pass: without them, since they may end up elsewhere (pod affinity to a
  // nominated pod must not be relied on).
  return RunFilterPlugins(state, pod, node);
}

std::pair<PostFilterResult, Status> Framework::RunPostFilterPlugins(CycleState& state, const api::Pod& pod,
                                                                    const NodeToStatusMap& filtered) {
  const Clock::time_point start = PointStart();
  PostFilterResult result;
  std::vector<std::string> reasons;
  std::string rejector;
  auto finish = [&](PostFilterResult r, Status s) {
    RecordPoint("PostFilter", s.code(), start);
    return std::make_pair(std::move(r), std::move(s));
  };
  for (PostFilterPlugin* pl : post_filter_) {
    PostFilterResult r;
    Status s = Timed(state, "PostFilter", *pl, [&] { return pl->PostFilter(state, pod, filtered, r); });
    if (s.IsSuccess()) return finish(std::move(r), std::move(s));
    if (s.code() == Code::kUnschedulableAndUnresolvable) {
      return finish(std::move(r), std::move(s).WithPlugin(std::string(pl->Name())));
    }
    if (!s.IsRejected()) {
      return finish(PostFilterResult(), Status::Error(s.Message()).WithPlugin(std::string(pl->Name())));
    }
    if (r.nominated_node_name.has_value() || r.awaiting_victims) result = std::move(r);
    for (const std::string& reason : s.reasons()) reasons.push_back(reason);
    if (rejector.empty()) rejector = pl->Name();
  }
  return finish(std::move(result), Status(Code::kUnschedulable, std::move(reasons)).WithPlugin(std::move(rejector)));
}

Status Framework::RunPreScorePlugins(CycleState& state, const api::Pod& pod,
                                     std::span<const cache::NodeInfoPtr> nodes) {
  const Clock::time_point start = PointStart();
  PluginSet skipped;
  Status result;
  for (PreScorePlugin* pl : pre_score_) {
    Status s = Timed(state, "PreScore", *pl, [&] { return pl->PreScore(state, pod, nodes); });
    if (s.IsSkip()) {
      skipped.insert(std::string(pl->Name()));
      continue;
    }
    if (!s.IsSuccess()) {
      result = PluginError("PreScore", *pl, s);
      break;
    }
  }
  if (result.IsSuccess()) state.skip_score_plugins = std::move(skipped);
  RecordPoint("PreScore", result.code(), start);
  return result;
}

std::pair<std::vector<int64_t>, Status> Framework::RunScorePlugins(const CycleState& state, const api::Pod& pod,
                                                                   std::span<const cache::NodeInfoPtr> nodes,
                                                                   ScoreBreakdown* breakdown) {
  const Clock::time_point start = PointStart();
  std::vector<int64_t> totals(nodes.size(), 0);
  auto finish = [&](Status s) {
    RecordPoint("Score", s.code(), start);
    if (!s.IsSuccess()) totals.clear();
    return std::make_pair(std::move(totals), std::move(s));
  };
  std::vector<const ScorePluginEntry*> active;
  for (const ScorePluginEntry& e : score_) {
    if (!state.skip_score_plugins.contains(e.plugin->Name())) active.push_back(&e);
  }
  if (active.empty() || nodes.empty()) return finish(Status());

  // scores[k][i]: plugin k on node i.
  std::vector<std::vector<NodeScore>>& scores = score_matrix_;
  scores.resize(active.size());
  for (std::vector<NodeScore>& row : scores) row.resize(nodes.size());
  std::atomic<bool> stop{false};
  std::once_flag error_once;
  Status error;
  const int num_nodes = static_cast<int>(nodes.size());
  // A cycle whose plugin durations are sampled times Score per node, as upstream's
  // metric is; the others score a chunk of nodes per plugin call (ScoreNodes).
  const bool per_node_calls = metrics_enabled_ && state.record_plugin_metrics;
  auto fail = [&](const ScorePlugin& pl, const Status& s) {
    std::call_once(error_once, [&] {
      error = Status::Error("running Score plugins: plugin " + Quoted(pl.Name()) + " failed with: " + s.Message())
                  .WithPlugin(std::string(pl.Name()));
    });
    stop.store(true, std::memory_order_relaxed);
  };
  parallelizer_->UntilChunks(
      num_nodes,
      [&](int begin, int end) {
        for (int i = begin; i < end; ++i) nodes[i]->PrefetchInfo();
        const std::span<const cache::NodeInfoPtr> run = nodes.subspan(begin, end - begin);
        for (size_t k = 0; k < active.size(); ++k) {
          ScorePlugin* pl = active[k]->plugin;
          std::span<NodeScore> out(scores[k].data() + begin, run.size());
          for (size_t j = 0; j < run.size(); ++j) out[j] = NodeScore{run[j]->name_view(), 0};
          if (!per_node_calls) {
            Status s = pl->ScoreNodes(state, pod, run, out);
            if (!s.IsSuccess()) return fail(*pl, s);
            continue;
          }
          for (size_t j = 0; j < run.size(); ++j) {
            Status s = Timed(state, "Score", *pl, [&] { return pl->Score(state, pod, *run[j], out[j].score); });
            if (!s.IsSuccess()) return fail(*pl, s);
          }
        }
      },
      &stop);
  if (stop.load()) return finish(std::move(error));

  for (size_t k = 0; k < active.size(); ++k) {
    ScorePlugin* pl = active[k]->plugin;
    if (!pl->HasNormalizeScore()) continue;
    Status s = Timed(state, "ScoreExtensionNormalize", *pl, [&] { return pl->NormalizeScore(state, pod, scores[k]); });
    if (!s.IsSuccess()) {
      return finish(Status::Error("running Normalize on Score plugins: plugin " + Quoted(pl->Name()) +
                                  " failed with: " + s.Message())
                        .WithPlugin(std::string(pl->Name())));
    }
  }
  for (size_t k = 0; k < active.size(); ++k) {
    for (size_t i = 0; i < nodes.size(); ++i) {
      int64_t score = scores[k][i].score;
      if (score > kMaxNodeScore || score < kMinNodeScore) {
        std::string_view name = active[k]->plugin->Name();
        return finish(Status::Error("applying score defaultWeights on Score plugins: plugin " + Quoted(name) +
                                    " returns an invalid score " + std::to_string(score) +
                                    ", it should in the range of [" + std::to_string(kMinNodeScore) + ", " +
                                    std::to_string(kMaxNodeScore) + "] after normalizing")
                          .WithPlugin(std::string(name)));
      }
      totals[i] += score * active[k]->weight;
    }
  }
  if (breakdown != nullptr) {
    breakdown->plugins.clear();
    breakdown->weights.clear();
    for (const ScorePluginEntry* e : active) {
      breakdown->plugins.push_back(e->plugin->Name());
      breakdown->weights.push_back(e->weight);
    }
    breakdown->scores = scores;  // a view; see ScoreBreakdown
  }
  return finish(Status());
}

Status Framework::RunReservePluginsReserve(CycleState& state, const api::Pod& pod, std::string_view node_name) {
  const Clock::time_point start = PointStart();
  Status result;
  for (ReservePlugin* pl : reserve_) {
    Status s = Timed(state, "Reserve", *pl, [&] { return pl->Reserve(state, pod, node_name); });
    if (s.IsSuccess()) continue;
    result = RejectionOrError("Reserve", *pl, std::move(s));
    break;
  }
  RecordPoint("Reserve", result.code(), start);
  return result;
}

void Framework::RunReservePluginsUnreserve(CycleState& state, const api::Pod& pod, std::string_view node_name) {
  const Clock::time_point start = PointStart();
  for (auto it = reserve_.rbegin(); it != reserve_.rend(); ++it) {
    ReservePlugin* pl = *it;
    Timed(state, "Unreserve", *pl, [&] {
      pl->Unreserve(state, pod, node_name);
      return Status();
    });
  }
  RecordPoint("Unreserve", Code::kSuccess, start);
}

Status Framework::RunPermitPlugins(CycleState& state, const api::Pod& pod, std::string_view node_name) {
  const Clock::time_point start = PointStart();
  std::map<std::string, std::chrono::milliseconds, std::less<>> waits;
  Status result;
  for (PermitPlugin* pl : permit_) {
    std::chrono::milliseconds timeout{0};
    Status s = Timed(state, "Permit", *pl, [&] { return pl->Permit(state, pod, node_name, timeout); });
    if (s.IsSuccess()) continue;
    if (s.IsWait()) {
      waits[std::string(pl->Name())] = std::min(timeout, kMaxPermitTimeout);
      continue;
    }
    result = RejectionOrError("Permit", *pl, std::move(s));
    break;
  }
  if (result.IsSuccess() && !waits.empty()) {
    // Only waiting pods pay for a copy of the pod (plugins may inspect it while it waits).
    auto wp = std::make_shared<WaitingPod>(std::make_shared<const api::Pod>(pod), waits, *options_.clock);
    waiting_pods_.Add(WaitingPodKey(pod), std::move(wp));
    result = Status(Code::kWait,
                    "one or more plugins asked to wait and no plugin rejected pod " + Quoted(pod.metadata.name));
  }
  RecordPoint("Permit", result.code(), start);
  return result;
}

Status Framework::WaitOnPermit(const api::Pod& pod, bool* timed_out) {
  std::string key = WaitingPodKey(pod);
  std::shared_ptr<WaitingPod> wp = waiting_pods_.Get(key);
  if (wp == nullptr) return Status();
  Clock::time_point start = options_.clock->Now();
  Status s = wp->Wait();
  if (timed_out != nullptr) *timed_out = wp->TimedOut();
  waiting_pods_.Remove(key);
  if (metrics_enabled_) options_.metrics->ObservePermitWait(s.code(), Seconds(options_.clock->Now() - start));
  if (s.IsSuccess() || s.IsRejected()) return s;
  return Status::Error("waiting on permit for pod: " + s.Message()).WithPlugin(s.plugin());
}

bool Framework::PreBindNeeded(const CycleState& state, const api::Pod& pod, std::string_view node_name) const {
  return std::any_of(pre_bind_.begin(), pre_bind_.end(), [&](const PreBindPlugin* pl) {
    return !pl->PreBindPreFlight(state, pod, node_name).IsSkip();
  });
}

Status Framework::RunPreBindPlugins(CycleState& state, const api::Pod& pod, std::string_view node_name) {
  const Clock::time_point start = PointStart();
  Status result;
  for (PreBindPlugin* pl : pre_bind_) {
    if (pl->PreBindPreFlight(state, pod, node_name).IsSkip()) continue;
    Status s = Timed(state, "PreBind", *pl, [&] { return pl->PreBind(state, pod, node_name); });
    if (s.IsSuccess()) continue;
    result = RejectionOrError("PreBind", *pl, std::move(s));
    break;
  }
  RecordPoint("PreBind", result.code(), start);
  return result;
}

// A bind plugin's final (non-Skip) answer as the Bind extension point reports it.
Status Framework::BindResult(const BindPlugin& plugin, Status s) const {
  if (s.IsSuccess()) return Status();
  return RejectionOrError("Bind", plugin, std::move(s));
}

Status Framework::RunBindPlugins(CycleState& state, const api::Pod& pod, std::string_view node_name) {
  const Clock::time_point start = PointStart();
  Status result(Code::kSkip);
  for (BindPlugin* pl : bind_) {
    Status s = Timed(state, "Bind", *pl, [&] { return pl->Bind(state, pod, node_name); });
    if (s.IsSkip()) continue;
    result = BindResult(*pl, std::move(s));
    break;
  }
  RecordPoint("Bind", result.code(), start);
  return result;
}

bool Framework::CanBindAsync() const {
  return std::all_of(bind_.begin(), bind_.end(), [](const BindPlugin* pl) { return pl->CanBindAsync(); });
}

void Framework::RunBindPluginsAsync(CycleState& state, const api::Pod& pod, std::string_view node_name,
                                    std::function<void(Status)> done) {
  const Clock::time_point start = PointStart();
  BindFrom(0, state, pod, node_name, start, std::move(done));
}

// Bind plugins from `index` on: a Skip moves to the next one from inside the previous
// plugin's completion. Plugin durations are not sampled here: the call returns before
// the bind is done.
void Framework::BindFrom(size_t index, CycleState& state, const api::Pod& pod, std::string_view node_name,
                         Clock::time_point start, std::function<void(Status)> done) {
  if (index == bind_.size()) {
    RecordPoint("Bind", Code::kSkip, start);
    done(Status(Code::kSkip));
    return;
  }
  BindPlugin* pl = bind_[index];
  pl->BindAsync(state, pod, node_name,
                [this, index, &state, &pod, node_name, start, pl, done = std::move(done)](Status s) mutable {
                  if (s.IsSkip()) {
                    BindFrom(index + 1, state, pod, node_name, start, std::move(done));
                    return;
                  }
                  Status result = BindResult(*pl, std::move(s));
                  RecordPoint("Bind", result.code(), start);
                  done(std::move(result));
                });
}

void Framework::RunPostBindPlugins(CycleState& state, const api::Pod& pod, std::string_view node_name) {
  const Clock::time_point start = PointStart();
  for (PostBindPlugin* pl : post_bind_) {
    Timed(state, "PostBind", *pl, [&] {
      pl->PostBind(state, pod, node_name);
      return Status();
    });
  }
  RecordPoint("PostBind", Code::kSuccess, start);
}

}  // namespace ksched::framework::runtime
