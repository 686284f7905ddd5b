// DecisionLog: why each pending pod is pending and why each recent pod went where it
// went, for people (/debug/pods, `ksched explain`) and for stuck-pod detection.
//
// scheduleOne hands it every failed attempt (the verdict: which plugin rejected how many
// nodes and why, the closest nodes, the preemption it started) and every placement (the
// node, how many nodes were feasible, the top nodes' per-plugin scores). Where a pod is
// now is not copied here: it is read from the scheduling queue when asked, so it is
// never stale. Records of pods that left the queue without a placement (deleted) are
// dropped by Sweep().
//
// Memory: verdicts are shared between pods that got the same one, and their node,
// plugin and reason names are interned (4 bytes per mention), so a pending pod costs a
// few hundred bytes even at thousands of nodes; the placement ring holds at most
// `scheduled_records` pods.
//
// Thread-safe: written by the scheduling thread and the binding completions, read by
// the HTTPS server and the metrics scrape.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pkg/api/types.h"
#include "pkg/framework/runtime/scheduling_algorithm.h"
#include "pkg/queue/scheduling_queue.h"
#include "pkg/util/clock.h"
#include "pkg/util/mutex.h"
#include "pkg/util/string_index.h"

namespace ksched::explain {

struct DecisionLogOptions {
  Clock* clock = &RealClock();
  // How many scheduled pods are remembered (a ring; the oldest goes first).
  size_t scheduled_records = 1000;
  // A pod unschedulable this long whose last `stuck_attempts` attempts gave the same
  // verdict is stuck.
  Clock::duration stuck_after = std::chrono::minutes(10);
  int stuck_attempts = 3;
  // podMaxInUnschedulablePodsDuration: the retry that needs no event.
  Clock::duration retry_after = std::chrono::minutes(5);
  // profile -> plugin -> the cluster events it registered (framework::RegistrationName),
  // for the plugins that can reject pods.
  std::map<std::string, std::map<std::string, std::vector<std::string>, std::less<>>, std::less<>> plugin_events;
  // Where pending pods are now (SchedulingQueue::QueuedPods / QueuedPod).
  std::function<std::vector<queue::QueuedPodState>()> queued_pods;
  std::function<std::optional<queue::QueuedPodState>(std::string_view key)> queued_pod;
};

// One failed attempt, as scheduleOne saw it.
struct Failure {
  api::PodPtr pod;
  std::string_view profile;
  int attempts = 0;
  Clock::time_point time{};  // the attempt's start
  std::string message;        // the PodScheduled condition's message
  bool error = false;         // an internal error, not a rejection
  std::vector<std::string> rejected_by;  // plugins that rejected it (or returned Pending)
  int nodes = 0;                         // nodes in the snapshot
  const framework::runtime::RejectionSummary* summary = nullptr;
  // What PostFilter decided about the nominated node: a node (preemption evicted
  // `victims` for the pod there), "" (the nomination was cleared) or nullopt (left as
  // it was: an earlier preemption still stands).
  std::optional<std::string> nomination;
  std::vector<std::string> victims;  // "namespace/name" of the pods it evicted
};

// One bound pod.
struct Placement {
  api::PodPtr pod;
  std::string_view profile;
  int attempts = 0;
  Clock::time_point time{};  // the bind's completion
  std::string node;
  int nodes = 0;  // in the snapshot
  int feasible_nodes = 0;
  int evaluated_nodes = 0;
  std::vector<framework::runtime::NodeScores> top_nodes;
};

// A pod found stuck for the first time (Sweep).
struct StuckPod {
  api::PodPtr pod;
  std::string profile;
  std::string reason;
};

class DecisionLog {
 public:
  explicit DecisionLog(DecisionLogOptions options);
  ~DecisionLog();

  void RecordFailure(const Failure& failure) EXCLUDES(mu_);
  void RecordPlacement(Placement placement) EXCLUDES(mu_);

  // Pods that are stuck and were not reported before (each pod once while it stays
  // pending); drops the records of pods that are no longer pending.
  std::vector<StuckPod> Sweep() EXCLUDES(mu_);
  // ksched_stuck_pods{profile}: every profile, with 0 where none is stuck.
  std::map<std::string, size_t> StuckCounts() const EXCLUDES(mu_);

  // GET /debug/pods.
  std::string PodsJson() const EXCLUDES(mu_);
  // GET /debug/pods/{namespace}/{name}; nullopt for a pod that is neither pending nor
  // among the recently scheduled.
  std::optional<std::string> PodJson(std::string_view ns, std::string_view name) const EXCLUDES(mu_);

  // Bytes held for pending pods (records, shared verdicts, interned names) and for the
  // placement ring; an estimate from sizes and capacities.
  size_t PendingBytes() const EXCLUDES(mu_);
  size_t PendingRecords() const EXCLUDES(mu_);

 private:
  struct Verdict;
  struct Pending;
  struct Placed;

  std::vector<queue::QueuedPodState> Queued() const;
  std::shared_ptr<Verdict> Intern(const Failure& f) REQUIRES(mu_);
  // Why the record's pod is stuck; empty if it is not.
  std::string StuckReason(const Pending& p, Clock::time_point now) const REQUIRES(mu_);
  // Some rejecting plugin registered an event (WakeUpEvents is not empty), without
  // building the list: asked for every pending pod at each scrape.
  bool CanBeWoken(const Pending& p) const REQUIRES(mu_);
  // The events registered by the plugins that rejected it: (event, plugins).
  std::vector<std::pair<std::string, std::vector<std::string>>> WakeUpEvents(const Pending& p) const REQUIRES(mu_);
  std::string Wall(Clock::time_point t) const;
  void WritePending(std::string& out, const queue::QueuedPodState& st, const Pending* p,
                    Clock::time_point now) const REQUIRES(mu_);
  void WritePlaced(std::string& out, const Placed& p) const REQUIRES(mu_);
  // Rebuilds the name table when most of it is no longer referenced.
  void CompactNames() REQUIRES(mu_);

  const DecisionLogOptions options_;
  Clock& clock_;
  mutable Mutex mu_;
  StringIndex names_ GUARDED_BY(mu_);  // plugins, reasons, nodes, profiles
  std::unordered_map<uint64_t, Pending> pending_ GUARDED_BY(mu_);  // by UidKey(uid)
  // Verdict sharing: hash -> verdicts with that hash still held by some record.
  std::unordered_multimap<uint64_t, std::weak_ptr<Verdict>> verdicts_ GUARDED_BY(mu_);
  std::deque<Placed> placed_ GUARDED_BY(mu_);
  std::unordered_map<std::string, uint64_t> placed_by_key_ GUARDED_BY(mu_);  // key -> sequence
  uint64_t placed_seq_ GUARDED_BY(mu_) = 0;  // sequence of placed_.front()
};

// The answer to GET `path` under /debug/pods: (HTTP status, JSON body). A null `log`
// (recording turned off) answers 404 saying so.
std::pair<int, std::string> ServeDebugPods(const DecisionLog* log, std::string_view path);

}  // namespace ksched::explain
