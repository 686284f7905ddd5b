#include "pkg/framework/runtime/scheduling_algorithm.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "pkg/util/log.h"

namespace ksched::framework::runtime {
namespace {

// The node index of position i of a pass over n nodes that starts at `start` (< n).
size_t VisitIndex(size_t start, size_t i, size_t n) {
  const size_t at = start + i;
  return at >= n ? at - n : at;
}

// Upstream: at least this many nodes, and at least this percentage, are searched.
constexpr int32_t kMinFeasibleNodesToFind = 100;
constexpr int32_t kMinFeasibleNodesPercentageToFind = 5;

void NotePlugin(const Status& s, FitError& fe) {
  if (s.plugin().empty()) return;
  if (s.code() == Code::kPending) {
    fe.pending_plugins.insert(s.plugin());
  } else if (s.IsRejected()) {
    fe.unschedulable_plugins.insert(s.plugin());
  }
}

}  // namespace

void RejectionSummary::Count(std::string_view plugin, const std::string& node, const std::vector<std::string>& reasons) {
  auto p = std::find_if(plugins.begin(), plugins.end(), [&](const auto& e) { return e.plugin == plugin; });
  if (p == plugins.end()) p = plugins.insert(plugins.end(), {.plugin = std::string(plugin)});
  ++p->nodes;
  static const std::vector<std::string> kNoReason = {"(no reason given)"};
  for (const std::string& r : reasons.empty() ? kNoReason : reasons) {
    auto e = std::find_if(p->reasons.begin(), p->reasons.end(), [&](const auto& x) { return x.reason == r; });
    if (e == p->reasons.end()) {
      if (p->reasons.size() >= kMaxReasonsPerPlugin) continue;
      e = p->reasons.insert(p->reasons.end(), {.reason = r});
    }
    ++e->nodes;
    if (e->sample_nodes.size() < kMaxSampleNodes) e->sample_nodes.push_back(node);
  }
}

void RejectionSummary::SortByNodes() {
  auto most_nodes = [](const auto& a, const auto& b) { return a.nodes > b.nodes; };
  std::stable_sort(plugins.begin(), plugins.end(), most_nodes);
  for (auto& p : plugins) std::stable_sort(p.reasons.begin(), p.reasons.end(), most_nodes);
}

std::string FitError::Message() const {
  // upstream FitError.Error(): a PreFilter rejection is stated once.
  std::string msg = pre_filter_message.empty()
                        ? NodesAvailableMessage(num_all_nodes, diagnosis)
                        : "0/" + std::to_string(num_all_nodes) + " nodes are available: " + pre_filter_message + ".";
  // Upstream appends PostFilter's own message (e.g. preemption's) after the nodes'.
  if (!post_filter_message.empty()) msg += " " + post_filter_message + ".";
  return msg;
}

int32_t NumFeasibleNodesToFind(std::optional<int32_t> percentage, int32_t num_all_nodes) {
  int32_t p = percentage.value_or(0);
  if (num_all_nodes < kMinFeasibleNodesToFind || p >= 100) return num_all_nodes;
  if (p <= 0) p = std::max(50 - num_all_nodes / 125, kMinFeasibleNodesPercentageToFind);
  int32_t n = static_cast<int32_t>(static_cast<int64_t>(num_all_nodes) * p / 100);
  return std::max(n, kMinFeasibleNodesToFind);
}

SchedulingAlgorithm::SchedulingAlgorithm(SchedulingAlgorithmOptions options)
    : explain_(options.explain),
      rng_(options.seed.has_value() ? *options.seed : std::random_device{}()) {}

ScheduleOutcome SchedulingAlgorithm::SchedulePod(Framework& fwk, CycleState& state, const api::Pod& pod,
                                                 const cache::Snapshot& snapshot) {
  if (snapshot.NumNodes() == 0) return Status::Constant<kNoNodesAvailable>(Code::kUnschedulableAndUnresolvable);
  const int num_all = static_cast<int>(snapshot.NumNodes());
  std::span<const cache::NodeInfoPtr> all = snapshot.List();

  auto [pre_result, pre_status] = fwk.RunPreFilterPlugins(state, pod);
  if (!pre_status.IsSuccess()) {
    if (!pre_status.IsRejected()) return pre_status;
    // Every node gets the same status, so preemption and the message see all of them.
    FitError fe;
    fe.num_all_nodes = num_all;
    for (const cache::NodeInfoPtr& n : all) fe.diagnosis.emplace(n->name(), pre_status);
    fe.pre_filter_message = pre_status.Message();
    NotePlugin(pre_status, fe);
    if (explain_) {
      RejectionSummary::PluginRejections rejection{.plugin = pre_status.plugin(), .pre_filter = true, .nodes = num_all};
      for (const std::string& r : pre_status.reasons()) rejection.reasons.push_back({.reason = r, .nodes = num_all});
      fe.summary.emplace().plugins.push_back(std::move(rejection));
    }
    return fe;
  }

  // A node nominated by an earlier preemption is likely the only one with room: try it
  // alone first.
  const std::string nominated =
      fwk.Nominator() != nullptr ? fwk.Nominator()->NominatedNodeName(pod) : pod.status.nominated_node_name;
  if (!nominated.empty() && (pre_result.AllNodes() || pre_result.node_names->contains(nominated))) {
    for (const cache::NodeInfoPtr& n : all) {
      if (n->name() != nominated) continue;
      if (!fwk.RunFilterPluginsWithNominatedPods(state, pod, *n).IsSuccess()) break;
      // The extenders have their say on it too; if they fail, the full search follows.
      if (!fwk.Extenders().empty()) {
        std::vector<cache::NodeInfoPtr> one{n};
        NodeToStatusMap ignored;
        if (Status s = FindNodesThatPassExtenders(fwk, pod, one, ignored); !s.IsSuccess()) {
          KLOG(ERROR) << "Evaluation failed on nominated node pod=\"" << pod.Key() << "\" node=\"" << nominated
                      << "\" err=\"" << s.Message() << "\"";
          break;
        }
        if (one.empty()) break;
      }
      ScheduleResult result{nominated, 1, 1};
      if (explain_) result.top_nodes.push_back({.node = nominated});
      return result;
    }
  }

  std::span<const cache::NodeInfoPtr> nodes = all;
  if (!pre_result.AllNodes()) {
    candidates_.clear();
    for (const cache::NodeInfoPtr& n : all) {
      if (pre_result.node_names->contains(n->name())) candidates_.push_back(n);
    }
    if (candidates_.size() != pre_result.node_names->size()) {
      for (const std::string& name : *pre_result.node_names) {
        if (snapshot.Get(name) == nullptr) return Status::Error("nodeinfo not found for node name \"" + name + "\"");
      }
    }
    nodes = candidates_;
  }

  int rejected = 0;
  size_t start = nodes.empty() ? 0 : next_start_node_index_ % nodes.size();
  Status filter_status = FindNodesThatPassFilters(fwk, state, pod, nodes, start, rejected);
  if (!nodes.empty()) next_start_node_index_ = (start + feasible_.size() + rejected) % nodes.size();
  if (!filter_status.IsSuccess()) return filter_status;
  const int evaluated = static_cast<int>(feasible_.size()) + rejected;

  NodeToStatusMap extender_statuses;
  bool extenders_rejected = false;
  if (!feasible_.empty() && !fwk.Extenders().empty()) {
    const size_t before = feasible_.size();
    if (Status s = FindNodesThatPassExtenders(fwk, pod, feasible_, extender_statuses); !s.IsSuccess()) return s;
    extenders_rejected = feasible_.size() != before;
  }

  if (feasible_.empty()) {
    FitError fe = MakeFitError(nodes, start, num_all);
    fe.absent_nodes_unresolvable = !pre_result.AllNodes();
    if (explain_) SummarizeRejections(fwk, state, pod, nodes, start, fe);
    // Extenders name no cluster events: a pod they turned away is retried on any
    // (upstream puts ExtenderName among its unschedulable plugins).
    if (extenders_rejected) fe.unschedulable_plugins.insert(std::string(kExtenderName));
    for (auto& [node, status] : extender_statuses) {
      if (fe.summary) fe.summary->Count(kExtenderName, node, status.reasons());
      auto [it, inserted] = fe.diagnosis.try_emplace(node, status);
      if (inserted) continue;
      // A node a plugin rejected too: the extender's reasons follow the plugin's, and an
      // unresolvable verdict from either stands.
      Status merged = it->second;
      for (const std::string& r : status.reasons()) merged.AppendReason(r);
      if (status.code() == Code::kUnschedulableAndUnresolvable) {
        merged = Status(Code::kUnschedulableAndUnresolvable, merged.reasons()).WithPlugin(it->second.plugin());
      }
      it->second = std::move(merged);
    }
    if (fe.summary && !extender_statuses.empty()) fe.summary->SortByNodes();
    return fe;
  }
  const int feasible = static_cast<int>(feasible_.size());
  if (feasible_.size() == 1) {
    ScheduleResult result{feasible_[0]->name(), evaluated, 1};
    if (explain_) result.top_nodes.push_back({.node = result.suggested_host});
    return result;
  }

  // The extenders' scores are asked for first, so they are computed while the plugins
  // score.
  std::vector<PendingPriorities> pending;
  for (Extender* e : fwk.Extenders()) {
    if (e->IsPrioritizer() && e->IsInterested(pod)) pending.push_back({e, e->Prioritize(pod, feasible_)});
  }
  std::vector<int64_t> totals;
  ScoreBreakdown breakdown;
  const bool scored = fwk.HasScorePlugins();
  if (!scored) {
    // No plugin or extender prefers any node: all tie (upstream gives each 1).
    totals.assign(feasible_.size(), fwk.Extenders().empty() ? 1 : 0);
  } else {
    Status s = fwk.RunPreScorePlugins(state, pod, feasible_);
    if (!s.IsSuccess()) return Status::Error(s.Message()).WithPlugin(s.plugin());
    auto [scores, score_status] = fwk.RunScorePlugins(state, pod, feasible_, explain_ ? &breakdown : nullptr);
    if (!score_status.IsSuccess()) return Status::Error(score_status.Message()).WithPlugin(score_status.plugin());
    totals = std::move(scores);
  }
  ExtenderParts parts;
  if (!pending.empty()) AddExtenderScores(pod, pending, totals, explain_ ? &parts : nullptr);
  const size_t chosen = SelectHost(totals);
  ScheduleResult result{feasible_[chosen]->name(), evaluated, feasible};
  if (explain_ && (scored || !parts.empty())) {
    result.top_nodes = TopNodes(feasible_, totals, breakdown, chosen);
    if (!parts.empty()) {
      std::unordered_map<std::string_view, size_t> index;
      for (size_t i = 0; i < feasible_.size(); ++i) index.emplace(feasible_[i]->name(), i);
      for (NodeScores& ns : result.top_nodes) {
        const size_t i = index.at(ns.node);
        for (const auto& [name, weighted] : parts) ns.plugins.emplace_back(name, weighted[i]);
      }
    }
  }
  return result;
}

Status SchedulingAlgorithm::FindNodesThatPassExtenders(Framework& fwk, const api::Pod& pod,
                                                       std::vector<cache::NodeInfoPtr>& feasible,
                                                       NodeToStatusMap& statuses) {
  for (Extender* e : fwk.Extenders()) {
    if (feasible.empty()) break;
    if (!e->IsFilter() || !e->IsInterested(pod)) continue;
    StatusOr<ExtenderFilterResult> r = e->Filter(pod, feasible);
    if (!r.ok()) {
      if (e->IsIgnorable()) {
        KLOG(WARNING) << "Skipping extender as it returned error and has ignorable flag set, extender=\"" << e->Name()
                      << "\" pod=\"" << pod.Key() << "\" err=\"" << r.status().message() << "\"";
        continue;
      }
      return Status::Error(r.status().message());
    }
    for (const auto& [node, msg] : r->failed_and_unresolvable) {
      std::vector<std::string> reasons;
      if (auto it = statuses.find(node); it != statuses.end()) reasons = it->second.reasons();
      reasons.push_back(msg);
      statuses[node] = Status(Code::kUnschedulableAndUnresolvable, std::move(reasons)).WithPlugin(std::string(kExtenderName));
    }
    for (const auto& [node, msg] : r->failed) {
      // The unresolvable verdict wins when an extender names a node in both.
      if (r->failed_and_unresolvable.contains(node)) continue;
      auto [it, inserted] = statuses.try_emplace(node, Code::kUnschedulable, msg);
      if (inserted) {
        it->second.WithPlugin(std::string(kExtenderName));
      } else {
        it->second.AppendReason(msg);
      }
    }
    // The passing nodes, in the order the scheduler gave them. Extenders answer in that
    // order: a walk of both lists keeps them, and a set is built only for an answer
    // that is not.
    std::vector<cache::NodeInfoPtr> kept;
    kept.reserve(r->passed.size());
    size_t j = 0;
    for (const cache::NodeInfoPtr& n : feasible) {
      if (j < r->passed.size() && n->name() == r->passed[j]) {
        kept.push_back(n);
        ++j;
      }
    }
    if (j != r->passed.size()) {
      std::unordered_set<std::string_view> passed(r->passed.begin(), r->passed.end());
      kept.clear();
      for (const cache::NodeInfoPtr& n : feasible) {
        if (passed.contains(n->name())) kept.push_back(n);
      }
    }
    feasible = std::move(kept);
  }
  return Status();
}

void SchedulingAlgorithm::AddExtenderScores(const api::Pod& pod, std::vector<PendingPriorities>& pending,
                                            std::vector<int64_t>& totals, ExtenderParts* parts) const {
  // Scores come back in the order the nodes were sent: matched by position, and looked
  // up by name only when one is out of that order.
  std::unordered_map<std::string_view, size_t> index;
  auto position = [&](std::string_view host, size_t& next) -> std::optional<size_t> {
    if (next < feasible_.size() && feasible_[next]->name() == host) return next++;
    if (index.empty()) {
      for (size_t i = 0; i < feasible_.size(); ++i) index.emplace(feasible_[i]->name(), i);
    }
    auto it = index.find(host);
    if (it == index.end()) return std::nullopt;
    next = it->second + 1;
    return it->second;
  };
  for (PendingPriorities& p : pending) {
    StatusOr<std::vector<HostPriority>> scores = p.result.get();
    if (!scores.ok()) {
      // Upstream lets the plugins and the other extenders decide.
      KLOG_V(5) << "Failed to run extender's priority function. No score given by this extender. extender=\""
                << p.extender->Name() << "\" pod=\"" << pod.Key() << "\" err=\"" << scores.status().message() << "\"";
      continue;
    }
    std::vector<int64_t>* part = nullptr;
    if (parts) part = &parts->emplace_back(p.extender->Name(), std::vector<int64_t>(feasible_.size(), 0)).second;
    const int64_t scale = p.extender->Weight() * (kMaxNodeScore / kMaxExtenderPriority);
    size_t next = 0;
    for (const HostPriority& hp : *scores) {
      std::optional<size_t> at = position(hp.host, next);
      if (!at) continue;  // not a feasible node
      const int64_t add = hp.score * scale;
      totals[*at] += add;
      if (part) (*part)[*at] += add;
    }
  }
}

Status SchedulingAlgorithm::FindNodesThatPassFilters(Framework& fwk, const CycleState& state, const api::Pod& pod,
                                                     std::span<const cache::NodeInfoPtr> nodes, size_t start,
                                                     int& rejected) {
  feasible_.clear();
  rejected = 0;
  const size_t n = nodes.size();
  if (n == 0) return Status();
  const size_t to_find = static_cast<size_t>(
      NumFeasibleNodesToFind(fwk.PercentageOfNodesToScore(), static_cast<int32_t>(n)));

  if (!fwk.HasFilterPlugins()) {
    for (size_t i = 0; i < to_find && i < n; ++i)
      feasible_.emplace_back(cache::NodeInfoPtr(), nodes[VisitIndex(start, i, n)].get());  // a view (see feasible_)
    return Status();
  }

  if (statuses_.size() < n) statuses_.resize(n);
  if (passing_.size() < n) {
    passing_.resize(n);
    passing_positions_.resize(n);
    chunk_passed_.resize(n);
  }
  outcome_.assign(n, kNotEvaluated);
  std::atomic<int> found{0};
  std::atomic<bool> stop{false};
  std::once_flag error_once;
  Status error;
  // Whole chunks, each tallied locally: a shared per-node counter would bounce between
  // the cores on every feasible node. The chunks that ran are a prefix of the visit
  // order, so the cut below keeps exactly what a sequential pass would have kept.
  fwk.parallelizer().UntilChunks(
      static_cast<int>(n),
      [&](int begin, int end) {
        int passed = 0;
        auto node_at = [&](int i) -> const cache::NodeInfo& {
          return *nodes[VisitIndex(start, static_cast<size_t>(i), n)];
        };
        // The nodes ahead of the first few are prefetched as the loop goes.
        for (int i = begin; i < end && i < begin + cache::NodeInfo::kPrefetchInfoAhead; ++i) node_at(i).PrefetchInfo();
        for (int i = begin; i < end; ++i) {
          cache::NodeInfo::PrefetchAhead(i, end, node_at);
          const cache::NodeInfo& node = node_at(i);
          Status s = fwk.RunFilterPluginsWithNominatedPods(state, pod, node);
          if (s.IsSuccess()) {
            outcome_[i] = kPassed;
            passing_[begin + passed] = cache::NodeInfoPtr(cache::NodeInfoPtr(), &node);  // a view (see feasible_)
            passing_positions_[begin + passed] = i;
            ++passed;
          } else if (s.IsRejected()) {
            statuses_[i] = std::move(s);
            outcome_[i] = kRejected;
          } else {
            std::call_once(error_once, [&] { error = std::move(s); });
            stop.store(true, std::memory_order_relaxed);
            return;
          }
        }
        chunk_passed_[begin] = passed;
        if (found.fetch_add(passed, std::memory_order_relaxed) + passed >= static_cast<int>(to_find))
          stop.store(true, std::memory_order_relaxed);
      },
      &stop);
  if (!error.IsSuccess()) return error;
  // Upstream keeps the first numFeasibleNodesToFind feasible nodes and counts as
  // evaluated only those and the rejections before the search stopped; nodes past the
  // cut are visited again from next_start_node_index_ by the next cycle. The chunks
  // are the parallelizer's, in order; one that did not run ends the prefix.
  const size_t chunk = static_cast<size_t>(Parallelizer::ChunkSize(static_cast<int>(n), fwk.parallelizer().parallelism()));
  feasible_.reserve(to_find);
  size_t i = 0;
  while (i < n && feasible_.size() < to_find && outcome_[i] != kNotEvaluated) {
    const size_t end = std::min(n, i + chunk);
    const size_t passed = static_cast<size_t>(chunk_passed_[i]);
    const size_t take = std::min(passed, to_find - feasible_.size());
    const auto first = passing_.begin() + static_cast<std::ptrdiff_t>(i);
    feasible_.insert(feasible_.end(), first, first + static_cast<std::ptrdiff_t>(take));
    if (take > 0 && feasible_.size() == to_find) {
      // The cut falls right after this chunk's take-th passing node.
      const size_t last = static_cast<size_t>(passing_positions_[i + take - 1]);
      rejected += static_cast<int>(last + 1 - i - take);
      i = last + 1;
      break;
    }
    rejected += static_cast<int>(end - i - passed);
    i = end;
  }
  std::fill(outcome_.begin() + static_cast<std::ptrdiff_t>(i), outcome_.end(), kNotEvaluated);
  return Status();
}

FitError SchedulingAlgorithm::MakeFitError(std::span<const cache::NodeInfoPtr> nodes, size_t start,
                                           int num_all_nodes) const {
  FitError fe;
  fe.num_all_nodes = num_all_nodes;
  const size_t n = nodes.size();
  fe.diagnosis.reserve(n);
  for (size_t i = 0; i < n && i < outcome_.size(); ++i) {
    if (outcome_[i] != kRejected) continue;
    const Status& s = statuses_[i];
    fe.diagnosis.emplace(nodes[VisitIndex(start, i, n)]->name(), s);
    NotePlugin(s, fe);
  }
  return fe;
}

void SchedulingAlgorithm::SummarizeRejections(Framework& fwk, const CycleState& state, const api::Pod& pod,
                                              std::span<const cache::NodeInfoPtr> nodes, size_t start,
                                              FitError& fe) const {
  const size_t n = nodes.size();
  // The rejected nodes in snapshot order (the pass itself started at `start`), so that
  // pods with the same verdict name the same sample nodes.
  std::vector<size_t> visit;  // position in the pass
  std::vector<const cache::NodeInfo*> rejected_nodes;
  for (size_t j = 0; j < n; ++j) {
    const size_t i = (j + n - start) % n;
    if (i < outcome_.size() && outcome_[i] == kRejected) {
      visit.push_back(i);
      rejected_nodes.push_back(nodes[j].get());
    }
  }
  std::vector<std::vector<Status>> per_node(rejected_nodes.size());
  fwk.parallelizer().Until(static_cast<int>(rejected_nodes.size()), [&](int k) {
    fwk.RunAllFilterPlugins(state, pod, *rejected_nodes[k], per_node[k]);
  });

  RejectionSummary& sum = fe.summary.emplace();
  sum.considered_nodes = static_cast<int>(n);
  std::vector<std::pair<size_t, size_t>> closest;  // (reasons, k)
  for (size_t k = 0; k < rejected_nodes.size(); ++k) {
    // A node that passes every plugin on its own was rejected for the nominated pods
    // that the main pass counted on it: its first status says so.
    if (per_node[k].empty()) per_node[k].push_back(statuses_[visit[k]]);
    const std::string& node = rejected_nodes[k]->name();
    for (const Status& s : per_node[k]) sum.Count(s.plugin(), node, s.reasons());
    if (per_node[k].size() == 1) closest.emplace_back(per_node[k][0].reasons().size(), k);
  }
  sum.SortByNodes();
  std::stable_sort(closest.begin(), closest.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t c = 0; c < closest.size() && c < RejectionSummary::kMaxClosestNodes; ++c) {
    const Status& s = per_node[closest[c].second][0];
    sum.closest_nodes.push_back({.node = rejected_nodes[closest[c].second]->name(), .plugin = s.plugin(), .reasons = s.reasons()});
    // The plugin's own account of this node, when it gives one (Status::detail).
    if (!s.detail().empty()) sum.closest_nodes.back().reasons.push_back(s.detail());
  }
}

std::vector<NodeScores> SchedulingAlgorithm::TopNodes(std::span<const cache::NodeInfoPtr> nodes,
                                                      std::span<const int64_t> totals,
                                                      const ScoreBreakdown& breakdown, size_t chosen_index) {
  // The chosen node first, then the best of the others (ties: snapshot order), in one
  // pass over the scores: this runs for every scheduled pod.
  constexpr size_t kMax = ScheduleResult::kMaxTopNodes;
  size_t top[kMax];
  size_t count = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (i == chosen_index) continue;
    // Insert i among the best others, keeping kMax - 1 of them.
    size_t pos = count;
    while (pos > 0 && totals[top[pos - 1]] < totals[i]) --pos;
    if (pos >= kMax - 1) continue;
    for (size_t k = std::min(count, kMax - 2); k > pos; --k) top[k] = top[k - 1];
    top[pos] = i;
    count = std::min(count + 1, kMax - 1);
  }
  std::vector<NodeScores> out;
  out.reserve(count + 1);
  auto add = [&](size_t i) {
    NodeScores& ns = out.emplace_back(NodeScores{.node = nodes[i]->name(), .total = totals[i]});
    ns.plugins.reserve(breakdown.plugins.size());
    for (size_t k = 0; k < breakdown.plugins.size(); ++k)
      ns.plugins.emplace_back(breakdown.plugins[k], breakdown.scores[k][i].score * breakdown.weights[k]);
  };
  if (chosen_index < nodes.size()) add(chosen_index);
  for (size_t k = 0; k < count; ++k) add(top[k]);
  return out;
}

size_t SchedulingAlgorithm::SelectHost(std::span<const int64_t> scores) {
  // Uniform among the nodes with the top score, as upstream's selectHost. Upstream keeps
  // each tie with probability 1/k as it meets it, one random draw per tie; counting the
  // ties first and drawing once picks with the same distribution, and pods with no
  // preferences tie on hundreds of nodes.
  const int64_t max_score = *std::max_element(scores.begin(), scores.end());
  uint64_t ties = 0;
  for (int64_t s : scores) ties += s == max_score;
  uint64_t pick = ties == 1 ? 0 : rng_() % ties;
  for (size_t i = 0; i < scores.size(); ++i) {
    if (scores[i] == max_score && pick-- == 0) return i;
  }
  return 0;  // unreachable: some score equals the maximum
}

}  // namespace ksched::framework::runtime
