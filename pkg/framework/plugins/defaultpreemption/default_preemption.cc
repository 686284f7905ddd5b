#include "pkg/framework/plugins/defaultpreemption/default_preemption.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <random>

#include "pkg/api/time_format.h"
#include "pkg/util/log.h"

namespace ksched::framework::plugins::defaultpreemption {
namespace {

using TimePoint = std::chrono::system_clock::time_point;

constexpr std::string_view kNoVictims = "No preemption victims found for incoming pod";
constexpr std::string_view kNotHelpful = "Preemption is not helpful for scheduling";
constexpr std::string_view kTerminatingOnNominatedNode = "not eligible due to a terminating pod on the nominated node.";

// upstream util.GetPodStartTime: status.startTime, or "now" for a pod not started yet
// (later than any real start).
TimePoint StartTime(const api::Pod& pod) {
  if (auto t = api::ParseTime(pod.status.start_time)) return *t;
  return TimePoint::max();
}

// upstream util.GetEarliestPodStartTime: the earliest start among the highest-priority
// victims.
TimePoint EarliestStartOfHighestPriority(const Victims& v) {
  int32_t highest = std::numeric_limits<int32_t>::min();
  for (const api::PodPtr& p : v.pods) highest = std::max(highest, p->Priority());
  TimePoint earliest = TimePoint::max();
  for (const api::PodPtr& p : v.pods) {
    if (p->Priority() == highest) earliest = std::min(earliest, StartTime(*p));
  }
  return earliest;
}

}  // namespace

bool MoreImportantPod(const api::Pod& a, const api::Pod& b) {
  if (a.Priority() != b.Priority()) return a.Priority() > b.Priority();
  return StartTime(a) < StartTime(b);
}

std::string PickOneNodeForPreemption(std::span<const Candidate> candidates) {
  if (candidates.empty()) return "";
  for (const Candidate& c : candidates) {
    if (c.victims.pods.empty()) return c.node;
  }
  // Each criterion scores the remaining candidates (higher is better) and keeps the
  // best; the next one only breaks ties.
  using Score = std::function<int64_t(const Candidate&)>;
  const Score criteria[] = {
      [](const Candidate& c) { return -c.victims.num_pdb_violations; },
      [](const Candidate& c) {
        int32_t highest = std::numeric_limits<int32_t>::min();
        for (const api::PodPtr& p : c.victims.pods) highest = std::max(highest, p->Priority());
        return -static_cast<int64_t>(highest);
      },
      [](const Candidate& c) {
        // Shifted by 2^31 so that every term is positive: a few negative-priority victims
        // must not look cheaper than fewer of them.
        int64_t sum = 0;
        for (const api::PodPtr& p : c.victims.pods) sum += int64_t{p->Priority()} + (int64_t{1} << 31);
        return -sum;
      },
      [](const Candidate& c) { return -static_cast<int64_t>(c.victims.pods.size()); },
      [](const Candidate& c) {
        TimePoint t = EarliestStartOfHighestPriority(c.victims);
        return static_cast<int64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count());
      },
  };
  std::vector<const Candidate*> left;
  for (const Candidate& c : candidates) left.push_back(&c);
  for (const Score& score : criteria) {
    int64_t best = std::numeric_limits<int64_t>::min();
    std::vector<const Candidate*> kept;
    for (const Candidate* c : left) {
      int64_t s = score(*c);
      if (s > best) {
        best = s;
        kept.clear();
      }
      if (s == best) kept.push_back(c);
    }
    if (kept.size() == 1) return kept.front()->node;
    left = std::move(kept);
  }
  return left.front()->node;
}

std::pair<std::vector<const cache::PodEntry*>, std::vector<const cache::PodEntry*>> SplitByPdbViolation(
    std::span<const cache::PodEntry* const> pods, const api::ClusterLister& lister) {
  // Disruptions still allowed per budget, counted down as pods are taken.
  struct Budget {
    api::DisruptionBudgetPtr pdb;
    int32_t allowed;
  };
  std::map<std::string, std::vector<Budget>, std::less<>> by_namespace;
  std::vector<const cache::PodEntry*> violating, non_violating;
  for (const cache::PodEntry* e : pods) {
    const api::Pod& pod = *e->pod;
    auto it = by_namespace.find(pod.metadata.namespace_);
    if (it == by_namespace.end()) {
      std::vector<Budget> budgets;
      for (api::DisruptionBudgetPtr& b : lister.DisruptionBudgets(pod.metadata.namespace_))
        budgets.push_back({b, b->disruptions_allowed});
      it = by_namespace.emplace(pod.metadata.namespace_, std::move(budgets)).first;
    }
    bool violates = false;
    for (Budget& b : it->second) {
      if (!b.pdb->selector.Matches(pod.metadata.labels)) continue;
      // The API server has already counted this pod's disruption: not again.
      if (b.pdb->disrupted_pods.contains(pod.metadata.name)) continue;
      if (--b.allowed < 0) violates = true;
    }
    (violates ? violating : non_violating).push_back(e);
  }
  return {std::move(violating), std::move(non_violating)};
}

StatusOr<std::unique_ptr<Plugin>> DefaultPreemption::New(const config::PluginArgs& args, Handle& handle) {
  config::DefaultPreemptionArgs a;
  if (const auto* given = std::get_if<config::DefaultPreemptionArgs>(&args)) a = *given;
  return std::unique_ptr<Plugin>(std::make_unique<DefaultPreemption>(a, handle, std::random_device{}()));
}

DefaultPreemption::DefaultPreemption(config::DefaultPreemptionArgs args, Handle& handle, uint64_t seed)
    : args_(args), handle_(handle), rng_(static_cast<std::minstd_rand::result_type>(seed)) {}

Status DefaultPreemption::PostFilter(CycleState& state, const api::Pod& pod, const NodeToStatusMap& filtered,
                                     PostFilterResult& result) {
  PodPreemptor* preemptor = handle_.Preemptor();
  if (preemptor != nullptr) preemptor->ObservePreemptionAttempt();
  Status s = Preempt(state, pod, filtered, result);
  if (s.Message().empty()) return s;
  return Status(s.code(), "preemption: " + s.Message());
}

std::string DefaultPreemption::IneligibilityReason(const api::Pod& pod, const NodeToStatusMap& filtered) const {
  if (pod.spec.preemption_policy == "Never") return "not eligible due to preemptionPolicy=Never.";
  const PodNominator* nominator = handle_.Nominator();
  const std::string nominated =
      nominator != nullptr ? nominator->NominatedNodeName(pod) : pod.status.nominated_node_name;
  if (nominated.empty()) return "";
  // Filters now rule the nominated node out for good: preempting elsewhere may help.
  if (auto it = filtered.find(nominated); it != filtered.end() && it->second.code() == Code::kUnschedulableAndUnresolvable)
    return "";
  // Its victims are still leaving: wait for them rather than evict more pods.
  if (const cache::NodeInfo* node = handle_.Snapshot().Get(nominated); node && node->HasTerminatingPodBelow(pod.Priority()))
    return std::string(kTerminatingOnNominatedNode);
  return "";
}

int32_t DefaultPreemption::NumCandidates(int32_t num_nodes) const {
  int64_t n = int64_t{num_nodes} * args_.min_candidate_nodes_percentage / 100;
  n = std::max<int64_t>(n, args_.min_candidate_nodes_absolute);
  return static_cast<int32_t>(std::min<int64_t>(n, num_nodes));
}

bool DefaultPreemption::VictimsStillThere(const Preempting& p) const {
  const cache::NodeInfo* node = handle_.Snapshot().Get(p.node);
  if (node == nullptr) return false;
  for (const api::PodPtr& victim : p.victims) {
    for (const cache::PodEntry& e : node->pods()) {
      if (cache::SamePodKey(*victim, *e.pod) && !e.pod->IsBeingDeleted()) return true;
    }
  }
  return false;
}

bool DefaultPreemption::IsPreempting(const api::Pod& pod) {
  MutexLock lock(mu_);
  // An answered preemption is forgotten once the snapshot shows its victims leaving.
  auto done = [&](const Preempting& p) { return p.answered && !VictimsStillThere(p); };
  // Other preemptors' entries too (one bound meanwhile never asks again), but only when
  // the map has doubled since the last sweep: a sweep per attempt would make a storm of
  // N preemptors cost N^2.
  if (preempting_.size() >= std::max<size_t>(kMinSweep, 2 * size_after_sweep_)) {
    std::erase_if(preempting_, [&](const auto& entry) { return done(entry.second); });
    size_after_sweep_ = preempting_.size();
  }
  auto it = preempting_.find(cache::PodCacheKey(pod));
  if (it == preempting_.end()) return false;
  if (!done(it->second)) return true;
  preempting_.erase(it);
  return false;
}

Status DefaultPreemption::SelectVictimsOnNode(CycleState& state, const api::Pod& pod, cache::NodeInfo& node,
                                              Victims& victims) const {
  // First every lower-priority pod goes: if the pod does not fit even then, this node
  // is no candidate. (Affinity of the pod to one of those victims is not tried, as
  // upstream: that configuration is not worth the cost.)
  std::vector<cache::PodEntry> potential;
  potential.reserve(node.pods().size());
  for (const cache::PodEntry& e : node.pods()) {
    if (e.pod->Priority() < pod.Priority()) potential.push_back(e);
  }
  if (potential.empty()) return Status::Constant<kNoVictims>(Code::kUnschedulableAndUnresolvable);
  // Looked up once: the filters below run on this node up to once per victim.
  const std::vector<api::PodPtr> nominated = handle_.NominatedPodsToHonor(pod, node.name());
  for (const cache::PodEntry& e : potential) {
    node.RemovePod(*e.pod);
    if (Status s = handle_.RunPreFilterExtensionRemovePod(state, pod, e, node); !s.IsSuccess()) return s;
  }
  if (Status s = handle_.RunFilterPluginsHonoring(state, pod, node, nominated); !s.IsSuccess()) return s;

  // Then as many as possible come back, most important first, the ones a budget
  // protects before the others; each that no longer lets the pod fit is a victim.
  std::stable_sort(potential.begin(), potential.end(),
                   [](const cache::PodEntry& a, const cache::PodEntry& b) { return MoreImportantPod(*a.pod, *b.pod); });
  std::vector<const cache::PodEntry*> ordered;
  for (const cache::PodEntry& e : potential) ordered.push_back(&e);
  auto [violating, non_violating] = SplitByPdbViolation(ordered, handle_.Lister());
  victims = {};
  auto reprieve = [&](const cache::PodEntry& e) -> StatusOr<bool> {
    node.AddPodEntry(e);
    const cache::PodEntry& added = node.pods().back();
    if (Status s = handle_.RunPreFilterExtensionAddPod(state, pod, added, node); !s.IsSuccess())
      return Internal(s.Message());
    if (handle_.RunFilterPluginsHonoring(state, pod, node, nominated).IsSuccess()) return true;
    node.RemovePod(*e.pod);
    if (Status s = handle_.RunPreFilterExtensionRemovePod(state, pod, e, node); !s.IsSuccess())
      return Internal(s.Message());
    victims.pods.push_back(e.pod);
    KLOG_V(5) << "Pod is a potential preemption victim on node, pod=\"" << e.pod->Key() << "\" node=\""
              << node.name() << "\"";
    return false;
  };
  for (const cache::PodEntry* e : violating) {
    StatusOr<bool> fits = reprieve(*e);
    if (!fits.ok()) return Status::Error(std::string(fits.status().message()));
    if (!*fits) ++victims.num_pdb_violations;
  }
  for (const cache::PodEntry* e : non_violating) {
    StatusOr<bool> fits = reprieve(*e);
    if (!fits.ok()) return Status::Error(std::string(fits.status().message()));
  }
  // Both groups were taken in order of importance; merged they must be too (the node
  // choice reads the first victim's priority).
  if (!violating.empty() && !non_violating.empty()) {
    std::stable_sort(victims.pods.begin(), victims.pods.end(),
                     [](const api::PodPtr& a, const api::PodPtr& b) { return MoreImportantPod(*a, *b); });
  }
  return Status();
}

DefaultPreemption::DryRunResult DefaultPreemption::DryRun(CycleState& state, const api::Pod& pod,
                                                          std::span<const cache::NodeInfoPtr> potential,
                                                          int32_t offset, int32_t num_candidates) {
  // Candidates are kept with their position in the walk, so the result (and the tie
  // break of the node choice) does not depend on which worker finished first.
  struct Found {
    int index;
    Candidate candidate;
  };
  Mutex mu;
  std::vector<Found> non_violating, violating;
  DryRunResult out;
  std::atomic<bool> stop{false};
  const int n = static_cast<int>(potential.size());
  handle_.ParallelizeUntil(
      n,
      [&](int i) {
        const cache::NodeInfo& original = *potential[(offset + i) % n];
        // One copy per thread, reused from node to node: its vectors keep their capacity.
        thread_local cache::NodeInfo node;
        node = original;
        // A clone only for PreFilter extensions to write into; without any the state is
        // only read, and every worker may share it.
        std::unique_ptr<CycleState> state_copy = state.pre_filter_extensions_active ? state.Clone() : nullptr;
        Victims victims;
        Status s = SelectVictimsOnNode(state_copy ? *state_copy : state, pod, node, victims);
        MutexLock lock(mu);
        if (s.IsSuccess() && !victims.pods.empty()) {
          auto& list = victims.num_pdb_violations == 0 ? non_violating : violating;
          if (static_cast<int32_t>(list.size()) < num_candidates)
            list.push_back({i, Candidate{original.name(), std::move(victims)}});
          if (!non_violating.empty() && static_cast<int32_t>(non_violating.size() + violating.size()) >= num_candidates)
            stop.store(true);
          return;
        }
        if (s.IsSuccess()) s = Status::Error("expected at least one victim pod on node \"" + original.name() + "\"");
        if (s.code() == Code::kError) out.errors.push_back(s.Message());
        out.statuses.insert_or_assign(original.name(), std::move(s));
      },
      &stop);
  auto by_index = [](const Found& a, const Found& b) { return a.index < b.index; };
  std::sort(non_violating.begin(), non_violating.end(), by_index);
  std::sort(violating.begin(), violating.end(), by_index);
  for (auto* list : {&non_violating, &violating}) {
    for (Found& f : *list) out.candidates.push_back(std::move(f.candidate));
  }
  return out;
}

Status DefaultPreemption::Preempt(CycleState& state, const api::Pod& pod, const NodeToStatusMap& filtered,
                                  PostFilterResult& result) {
  // 1) May this pod preempt at all (now)?
  if (IsPreempting(pod)) {
    result.awaiting_victims = true;
    return Status(Code::kUnschedulable, "waiting for the preemption for this pod to be finished");
  }
  if (std::string why = IneligibilityReason(pod, filtered); !why.empty()) {
    KLOG_V(5) << "Pod is not eligible for preemption, pod=\"" << pod.Key() << "\" reason=\"" << why << "\"";
    result.awaiting_victims = why == kTerminatingOnNominatedNode;
    return Status(Code::kUnschedulable, std::move(why));
  }
  PodPreemptor* preemptor = handle_.Preemptor();
  if (preemptor == nullptr) return Status(Code::kUnschedulable);

  // 2) Candidates: nodes the filters rejected in a way that removing pods may fix.
  const cache::Snapshot& snapshot = handle_.Snapshot();
  std::span<const cache::NodeInfoPtr> all = snapshot.List();
  if (all.empty()) return Status::Error("no nodes available");
  std::vector<cache::NodeInfoPtr> potential;
  for (const cache::NodeInfoPtr& n : all) {
    auto it = filtered.find(n->name());
    if (it != filtered.end() && it->second.code() == Code::kUnschedulable) potential.push_back(n);
  }
  DryRunResult dry;
  if (potential.empty()) {
    KLOG_V(3) << "Preemption will not help schedule pod on any node, pod=\"" << pod.Key() << "\"";
  } else {
    const int32_t count = static_cast<int32_t>(potential.size());
    const int32_t offset = static_cast<int32_t>(rng_() % static_cast<uint32_t>(count));
    dry = DryRun(state, pod, potential, offset, NumCandidates(count));
  }
  if (dry.candidates.empty()) {
    if (!dry.errors.empty()) return Status::Error(dry.errors.front());
    KLOG_V(2) << "No preemption candidate is found; preemption is not helpful for scheduling, pod=\"" << pod.Key()
              << "\"";
    for (const cache::NodeInfoPtr& n : all) dry.statuses.try_emplace(n->name(), Code::kUnschedulableAndUnresolvable, std::string(kNotHelpful));
    result.nominated_node_name = "";  // an earlier nomination no longer stands
    return Status(Code::kUnschedulable, NodesAvailableMessage(static_cast<int>(all.size()), dry.statuses));
  }

  // 3) The extenders have their say on the candidates.
  if (!handle_.Extenders().empty()) {
    if (Status s = CallExtenders(pod, dry.candidates); !s.IsSuccess()) return s;
  }

  // 4) The best candidate, then its victims go.
  const std::string best = PickOneNodeForPreemption(dry.candidates);
  auto chosen = std::find_if(dry.candidates.begin(), dry.candidates.end(),
                             [&](const Candidate& c) { return c.node == best; });
  if (chosen == dry.candidates.end()) return Status(Code::kUnschedulable, "no candidate node for preemption");
  KLOG_V(2) << "the target node for the preemption is determined, node=\"" << best << "\" pod=\"" << pod.Key()
            << "\" victims=" << chosen->victims.pods.size();
  result.awaiting_victims = PrepareCandidate(*chosen, pod, *preemptor);
  result.nominated_node_name = best;
  return Status();
}

Status DefaultPreemption::CallExtenders(const api::Pod& pod, std::vector<Candidate>& candidates) const {
  NodeVictims victims;
  for (const Candidate& c : candidates) victims.try_emplace(c.node, c.victims);
  if (victims.empty()) return Status();
  bool asked = false;
  for (Extender* e : handle_.Extenders()) {
    if (!e->SupportsPreemption() || !e->IsInterested(pod)) continue;
    StatusOr<NodeVictims> r = e->ProcessPreemption(pod, victims, handle_.Snapshot());
    if (!r.ok()) {
      if (e->IsIgnorable()) {
        KLOG(INFO) << "Skipped extender as it returned error and has ignorable flag set, extender=\"" << e->Name()
                   << "\" err=\"" << r.status().message() << "\"";
        continue;
      }
      return Status::Error(r.status().message());
    }
    for (auto it = r->begin(); it != r->end();) {
      if (!it->second.pods.empty()) {
        ++it;
        continue;
      }
      if (!e->IsIgnorable()) return Status::Error("expected at least one victim pod on node \"" + it->first + "\"");
      KLOG(INFO) << "Ignored node for which the extender didn't report victims, node=\"" << it->first
                 << "\" extender=\"" << e->Name() << "\"";
      it = r->erase(it);
    }
    victims = std::move(*r);
    asked = true;
    // No node left: no extender can bring one back.
    if (victims.empty()) break;
  }
  if (!asked) return Status();
  // The candidates the extenders kept, in their order, then any they added.
  std::vector<Candidate> out;
  for (Candidate& c : candidates) {
    auto it = victims.find(c.node);
    if (it == victims.end()) continue;
    out.push_back({c.node, std::move(it->second)});
    victims.erase(it);
  }
  for (auto& [node, v] : victims) out.push_back({node, std::move(v)});
  candidates = std::move(out);
  return Status();
}

bool DefaultPreemption::PrepareCandidate(const Candidate& c, const api::Pod& pod, PodPreemptor& preemptor) {
  preemptor.ObserveVictims(static_cast<int>(c.victims.pods.size()));
  auto preemptor_pod = std::make_shared<const api::Pod>(pod);

  // Lower-priority pods nominated to this node may no longer fit there: they lose the
  // nomination, and the update sends them looking elsewhere at once.
  if (const PodNominator* nominator = handle_.Nominator()) {
    for (const api::PodPtr& p : nominator->NominatedPodsForNode(c.node)) {
      if (p->Priority() < pod.Priority()) preemptor.ClearNomination(p);
    }
  }

  std::vector<api::PodPtr> to_evict;
  bool leaving = false;  // victims that will leave through the API (evicted now or before)
  for (const api::PodPtr& victim : c.victims.pods) {
    if (handle_.RejectWaitingPod(victim->metadata.uid, kName, "preempted")) {
      KLOG_V(2) << "Preemptor pod preempted a waiting pod, preemptor=\"" << pod.Key() << "\" waitingPod=\""
                << victim->Key() << "\" node=\"" << c.node << "\"";
      continue;
    }
    leaving = true;
    // A graceful delete already under way needs no second call.
    if (victim->IsBeingDeleted()) continue;
    to_evict.push_back(victim);
  }
  if (to_evict.empty()) return leaving;

  // The evictions run on the API client's threads. Until every one is answered this
  // pod may not preempt again (its next attempt would not yet see the victims leaving
  // and could pick more); a failure gives the nomination up and retries the pod.
  const std::string id = cache::PodCacheKey(pod);
  {
    MutexLock lock(mu_);
    preempting_.insert_or_assign(id, Preempting{.node = c.node, .victims = to_evict});
  }
  struct Pending {
    std::atomic<size_t> left;
    std::atomic<bool> failed{false};
  };
  auto pending = std::make_shared<Pending>();
  pending->left.store(to_evict.size());
  KLOG_V(2) << "Start the preemption asynchronously, preemptor=\"" << pod.Key() << "\" node=\"" << c.node
            << "\" numVictims=" << c.victims.pods.size() << " numVictimsToDelete=" << to_evict.size();
  for (const api::PodPtr& victim : to_evict) {
    preemptor.PreemptVictim(victim, preemptor_pod, c.node,
                            [this, pending, id, preemptor_pod, &preemptor, victim](ksched::Status s) {
                              if (!s.ok()) {
                                KLOG(ERROR) << "Error preempting victim, preemptor=\"" << preemptor_pod->Key()
                                            << "\" victim=\"" << victim->Key() << "\": " << s.ToString();
                                pending->failed.store(true);
                              }
                              if (pending->left.fetch_sub(1) != 1) return;
                              {
                                MutexLock lock(mu_);
                                if (pending->failed.load()) {
                                  preempting_.erase(id);
                                } else if (auto it = preempting_.find(id); it != preempting_.end()) {
                                  it->second.answered = true;
                                }
                              }
                              if (pending->failed.load()) preemptor.PreemptionFailed(preemptor_pod);
                            });
  }
  return true;
}

}  // namespace ksched::framework::plugins::defaultpreemption
