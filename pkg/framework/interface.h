// The scheduling framework's extension points (upstream framework/interface.go), next to
// the queue-facing ones in queue_plugins.h. A plugin class derives from every extension
// point it implements; the runtime calls them in the profile's configured order.
//
// Threading: Filter and Score run concurrently for different nodes of the same pod, so
// they must only read the plugin's own state and the CycleState. Everything else runs on
// the scheduling thread (PreFilter .. Permit) or on one binding worker (PreBind .. PostBind).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <typeinfo>
#include <unordered_map>
#include <vector>

#include "pkg/api/cluster_lister.h"
#include "pkg/api/types.h"
#include "pkg/cache/node_info.h"
#include "pkg/cache/snapshot.h"
#include "pkg/framework/extender.h"
#include "pkg/framework/pod_info.h"
#include "pkg/framework/queue_plugins.h"
#include "pkg/framework/runtime/metrics_recorder.h"
#include "pkg/framework/status.h"

namespace ksched::framework {

// Per-cycle data a plugin computes once (PreFilter, PreScore) and reads per node.
class StateData {
 public:
  virtual ~StateData() = default;
  // Copied when the cycle state is cloned (e.g. for preemption's what-if runs).
  virtual std::unique_ptr<StateData> Clone() const = 0;
  // Whether the binding cycle (Unreserve, PreBind .. PostBind) may still read this.
  // Data only Filter and Score read says false, and is dropped when the scheduling cycle
  // hands the pod to its binding cycle: with thousands of binds in flight, per-node
  // tables (one entry per node for a hostname topology) would otherwise stay alive until
  // each bind returns.
  virtual bool NeededForBinding() const { return true; }
};

// Key -> StateData for one scheduling cycle. Written on the scheduling thread before
// Filter/Score fan out; read concurrently afterwards (reads need no lock).
//
// Read() runs once per plugin per node, so the few entries of a cycle live in a flat
// vector (a scan of short keys beats a tree walk), and the exact-type check is a
// type_info comparison before dynamic_cast's general walk.
class CycleState {
 public:
  template <typename T>
  T* Read(std::string_view key) const {
    for (const Entry& e : data_) {
      if (e.key != key) continue;
      StateData* d = e.data.get();
      if (d == nullptr) return nullptr;
      return typeid(*d) == typeid(T) ? static_cast<T*>(d) : dynamic_cast<T*>(d);
    }
    return nullptr;
  }
  void Write(std::string key, std::unique_ptr<StateData> data) {
    for (Entry& e : data_) {
      if (e.key == key) {
        e.data = std::move(data);
        return;
      }
    }
    data_.push_back({std::move(key), std::move(data)});
  }
  std::unique_ptr<CycleState> Clone() const;
  // Drops the entries whose data is not NeededForBinding() (see StateData).
  void DropSchedulingOnlyData();

  // Plugins whose PreFilter / PreScore returned Skip: their Filter / Score is not run.
  PluginSet skip_filter_plugins;
  PluginSet skip_score_plugins;
  // Bit i set: the framework's i-th Filter plugin is in skip_filter_plugins. Computed by
  // the framework after PreFilter so the per-node loop needs no name lookups.
  uint64_t skip_filter_mask = 0;
  // Whether a PreFilter plugin that was not skipped has PreFilterExtensions: only then
  // do what-if runs (nominated pods, preemption) write into the state and need a clone
  // of it. Set after PreFilter; true until then.
  bool pre_filter_extensions_active = true;
  // Bit i set: the framework's i-th PreFilter plugin (of the first 64) has extensions and
  // was not skipped, so what-if runs call them. All set until PreFilter has run.
  uint64_t pre_filter_extension_mask = ~uint64_t{0};
  // Whether this cycle records per-plugin durations (upstream samples 10% of cycles:
  // timing every plugin on every node of every cycle would cost more than the plugins).
  bool record_plugin_metrics = false;

 private:
  struct Entry {
    std::string key;
    std::unique_ptr<StateData> data;
  };
  std::vector<Entry> data_;
};

// Per-node statuses of a failed Filter phase: node name -> the first rejecting status.
using NodeToStatusMap = std::unordered_map<std::string, Status>;

// "0/3 nodes are available: 1 node(s) had untolerated taint {k: v}, 2 Insufficient cpu."
// (upstream FitError.Error(): each reason counted over the nodes, "N reason", sorted as
// whole strings, joined with ", ").
std::string NodesAvailableMessage(int num_all_nodes, const NodeToStatusMap& statuses);

// ---- the snapshot plugins read ---------------------------------------------------------------

// Pods nominated to run on nodes (by preemption), so filters can account for them.
class PodNominator {
 public:
  virtual ~PodNominator() = default;
  // Pods nominated to `node_name`, highest priority first.
  virtual std::vector<api::PodPtr> NominatedPodsForNode(std::string_view node_name) const = 0;
  // False when no pod is nominated anywhere: lets filters skip the per-node lookup.
  virtual bool HasNominatedPods() const { return true; }
  // The node `pod` is nominated to: the scheduler's own record, which is ahead of the
  // API server's .status.nominatedNodeName while that write is in flight.
  virtual std::string NominatedNodeName(const api::Pod& pod) const { return pod.status.nominated_node_name; }
};

// What preemption asks of the scheduler (implemented with the API client and the queue,
// so the framework never talks to the API server itself). Thread-safe.
class PodPreemptor {
 public:
  virtual ~PodPreemptor() = default;
  // Evicts `victim` to make room for `preemptor` on `node`: the DisruptionTarget
  // condition where the server knows it, the DELETE, then a Preempted event on the
  // victim. `done` runs exactly once, on any thread, and must be quick; a victim that is
  // already gone counts as success.
  virtual void PreemptVictim(const api::PodPtr& victim, const api::PodPtr& preemptor, std::string_view node,
                             std::function<void(ksched::Status)> done) = 0;
  // Drops `pod`'s nomination: from the nominator at once, and from its
  // .status.nominatedNodeName on the server (asynchronously).
  virtual void ClearNomination(const api::PodPtr& pod) = 0;
  // An asynchronous preemption for `preemptor` failed: its nomination is cleared and
  // it goes back to activeQ, so it never waits for victims that will not leave.
  virtual void PreemptionFailed(const api::PodPtr& preemptor) = 0;
  // scheduler_preemption_attempts_total and scheduler_preemption_victims.
  virtual void ObservePreemptionAttempt() {}
  virtual void ObserveVictims(int count) {}
};

// Writes that bind plugins need (implemented by the scheduler with the API client, so
// the framework never talks to the API server itself).
class PodBinder {
 public:
  virtual ~PodBinder() = default;
  // POST pods/{name}/binding with the pod's uid. Blocking; runs on a binding worker.
  virtual ksched::Status Bind(const api::Pod& pod, std::string_view node_name) = 0;
  // The same POST without a thread waiting for it: `done` runs exactly once, on the API
  // client's I/O thread, and must be quick. The default blocks in Bind().
  virtual void BindAsync(const api::Pod& pod, std::string_view node_name, std::function<void(ksched::Status)> done) {
    done(Bind(pod, node_name));
  }
};

// The writes of VolumeBinding's PreBind (implemented by the scheduler with the API
// client, so the framework never talks to the API server itself). Blocking; they run on
// a binding worker. Each sends a JSON merge patch and returns the object as the server
// answered it; a patch that names metadata.resourceVersion fails with a conflict when the
// object has changed since (upstream sends whole-object Updates, which check the same).
class VolumeWriter {
 public:
  virtual ~VolumeWriter() = default;
  // PATCH /api/v1/persistentvolumes/{name}.
  virtual ksched::StatusOr<api::PersistentVolumePtr> PatchVolume(std::string_view name, std::string merge_patch) = 0;
  // PATCH /api/v1/namespaces/{ns}/persistentvolumeclaims/{name}.
  virtual ksched::StatusOr<api::PersistentVolumeClaimPtr> PatchClaim(std::string_view ns, std::string_view name,
                                                             std::string merge_patch) = 0;
};

// The writes of DynamicResources (implemented by the scheduler with the API client):
// a claim read back from the server after a conflict, and JSON merge patches of a
// claim or its status subresource. Blocking; they run on a binding worker (PreBind) or
// the scheduling thread (PostFilter, Unreserve). A patch that names
// metadata.resourceVersion fails with a conflict when the claim has changed since
// (upstream sends whole-object Updates, which check the same).
class ResourceClaimWriter {
 public:
  virtual ~ResourceClaimWriter() = default;
  // GET /apis/resource.k8s.io/v1/namespaces/{ns}/resourceclaims/{name}.
  virtual ksched::StatusOr<api::ResourceClaimPtr> GetResourceClaim(std::string_view ns, std::string_view name) = 0;
  // PATCH .../resourceclaims/{name}, or .../resourceclaims/{name}/status with `status`.
  virtual ksched::StatusOr<api::ResourceClaimPtr> PatchResourceClaim(std::string_view ns, std::string_view name,
                                                                     std::string merge_patch, bool status) = 0;
};

// What the framework gives plugins.
class Handle {
 public:
  virtual ~Handle() = default;
  // The cluster as of the start of this cycle; immutable for the cycle.
  virtual const cache::Snapshot& Snapshot() const = 0;
  virtual const PodNominator* Nominator() const = 0;
  virtual PodBinder& Binder() = 0;
  virtual int Parallelism() const = 0;
  // Namespaces' labels and the selectors of Services and workload controllers (for
  // InterPodAffinity's namespaceSelector and PodTopologySpread's system defaults).
  virtual const api::ClusterLister& Lister() const { return api::EmptyClusterLister(); }
  // PersistentVolume and claim writes for VolumeBinding; null where nothing can write
  // (then VolumeBinding's PreBind fails any pod that needs a write).
  virtual VolumeWriter* Volumes() { return nullptr; }
  // ResourceClaim writes for DynamicResources; null where nothing can write (then a pod
  // whose claims need an allocation or a reservation fails PreBind).
  virtual ResourceClaimWriter* ResourceClaims() { return nullptr; }
  // Requested when the scheduler shuts down: a plugin that waits in the binding cycle
  // (VolumeBinding's PreBind, for the PV controller) stops waiting and fails the pod.
  virtual std::stop_token Stopping() const { return {}; }
  // The configured HTTP extenders, shared by every profile, in configuration order.
  virtual std::span<Extender* const> Extenders() const { return {}; }

  // ---- for preemption's what-if runs (the runtime implements them; a bare handle
  // cannot run plugins) ----
  virtual PodPreemptor* Preemptor() { return nullptr; }
  // The profile's Filter plugins as the scheduling cycle runs them, nominated pods
  // included (runtime::Framework::RunFilterPluginsWithNominatedPods).
  virtual Status RunFilterPluginsWithNominatedPods(const CycleState& state, const api::Pod& pod,
                                                   const cache::NodeInfo& node) const;
  // The same in two steps, for a what-if that filters its own copy of a node many
  // times: the pods nominated to `node` that `pod` must leave room for (equal or higher
  // priority, not itself), looked up once; then the two passes with them, on `node`
  // itself (they are added for the first pass and taken off again, so the node is as
  // before when the call returns).
  virtual std::vector<api::PodPtr> NominatedPodsToHonor(const api::Pod& pod, std::string_view node) const {
    return {};
  }
  virtual Status RunFilterPluginsHonoring(const CycleState& state, const api::Pod& pod, cache::NodeInfo& node,
                                          std::span<const api::PodPtr> nominated) const;
  // PreFilterExtensions of every PreFilter plugin that ran, in order.
  virtual Status RunPreFilterExtensionAddPod(CycleState& state, const api::Pod& pod_to_schedule,
                                             const cache::PodEntry& pod_to_add, const cache::NodeInfo& node) const;
  virtual Status RunPreFilterExtensionRemovePod(CycleState& state, const api::Pod& pod_to_schedule,
                                                const cache::PodEntry& pod_to_remove,
                                                const cache::NodeInfo& node) const;
  // fn(i) for every i in [0, n) on the cycle's worker pool; no piece starts once *stop.
  // Not from inside Filter or Score (the pool is theirs).
  virtual void ParallelizeUntil(int n, const std::function<void(int)>& fn, const std::atomic<bool>* stop);
  // Rejects a pod waiting at Permit (a preemption victim); false if it was not waiting.
  virtual bool RejectWaitingPod(std::string_view uid, std::string_view plugin, std::string_view message) {
    return false;
  }

  // ---- for gang plugins (upstream Handle.IterateOverWaitingPods, PodsToActivate) ----
  // `plugin` allows, or rejects with `message`, every pod waiting at Permit for which
  // `match` is true; returns how many. `match` runs without the framework's locks.
  virtual int AllowWaitingPods(const std::function<bool(const api::Pod&)>& match, std::string_view plugin) {
    return 0;
  }
  virtual int RejectWaitingPods(const std::function<bool(const api::Pod&)>& match, std::string_view plugin,
                                std::string_view message) {
    return 0;
  }
  // How many pods wait at Permit, not yet allowed or rejected, for which `match` is true.
  virtual int CountWaitingPods(const std::function<bool(const api::Pod&)>& match) const { return 0; }
  // Moves these pods to activeQ if they wait in unschedulablePods or backoffQ (upstream
  // PodsToActivate); pods in flight are left to their attempts. Not from a queue
  // callback (QueueSort, PreEnqueue, hints).
  virtual void ActivatePods(std::span<const api::PodPtr> pods) {}
  // Where plugins report metrics of their own (gangs); null: nowhere.
  virtual runtime::MetricsRecorder* Metrics() { return nullptr; }
};

// ---- extension points --------------------------------------------------------------------------

// What PreFilter may learn: the only nodes worth filtering (e.g. NodeName, NodeAffinity
// on metadata.name). nullopt: all nodes.
struct PreFilterResult {
  std::optional<std::set<std::string, std::less<>>> node_names;
  bool AllNodes() const { return !node_names.has_value(); }
  // Intersection of two results (nullopt acts as "all").
  PreFilterResult Merge(const PreFilterResult& other) const;
};

// Incremental updates of PreFilter state, so nominated pods (and preemption victims)
// can be added to / removed from a node without rerunning PreFilter.
class PreFilterExtensions {
 public:
  virtual ~PreFilterExtensions() = default;
  virtual Status AddPod(CycleState& state, const api::Pod& pod_to_schedule, const cache::PodEntry& pod_to_add,
                        const cache::NodeInfo& node) const = 0;
  virtual Status RemovePod(CycleState& state, const api::Pod& pod_to_schedule,
                           const cache::PodEntry& pod_to_remove, const cache::NodeInfo& node) const = 0;
};

class PreFilterPlugin : public virtual Plugin {
 public:
  // Returning Skip disables this plugin's Filter for the cycle.
  virtual Status PreFilter(CycleState& state, const api::Pod& pod, PreFilterResult& result) = 0;
  virtual const PreFilterExtensions* Extensions() const { return nullptr; }
};

class FilterPlugin : public virtual Plugin {
 public:
  // Called concurrently for different nodes: read-only on `this` and `state`.
  virtual Status Filter(const CycleState& state, const api::Pod& pod, const cache::NodeInfo& node) const = 0;
};

// What PostFilter decided about the pod's nomination (upstream NominatingInfo):
// nullopt leaves it as it is, "" clears it, a name nominates the pod to that node.
struct PostFilterResult {
  std::optional<std::string> nominated_node_name;
  // The pod waits for victims it preempted (evictions in flight, or victims still
  // terminating on its nominated node): retrying it before they are gone cannot place it
  // there.
  bool awaiting_victims = false;
};

class PostFilterPlugin : public virtual Plugin {
 public:
  virtual Status PostFilter(CycleState& state, const api::Pod& pod, const NodeToStatusMap& filtered,
                            PostFilterResult& result) = 0;
};

class PreScorePlugin : public virtual Plugin {
 public:
  // `nodes` are the feasible nodes. Returning Skip disables this plugin's Score.
  virtual Status PreScore(CycleState& state, const api::Pod& pod, std::span<const cache::NodeInfoPtr> nodes) = 0;
};

inline constexpr int64_t kMaxNodeScore = 100;
inline constexpr int64_t kMinNodeScore = 0;

struct NodeScore {
  std::string_view name;  // points into the snapshot's NodeInfo
  int64_t score = 0;
};

class ScorePlugin : public virtual Plugin {
 public:
  // Called concurrently for different nodes: read-only on `this` and `state`.
  virtual Status Score(const CycleState& state, const api::Pod& pod, const cache::NodeInfo& node,
                       int64_t& score) const = 0;
  // Scores a run of nodes: out[j].score for nodes[j] (out[j].name is the caller's). The
  // result must equal Score's, node by node, and the first failure is returned. The
  // default calls Score per node; a plugin whose per-node work is a few arithmetic
  // operations overrides this to read its cycle state and the pod once per run instead
  // of once per node. Called concurrently for disjoint runs.
  virtual Status ScoreNodes(const CycleState& state, const api::Pod& pod, std::span<const cache::NodeInfoPtr> nodes,
                            std::span<NodeScore> out) const;
  // Optional: rescale this plugin's scores into [kMinNodeScore, kMaxNodeScore].
  virtual bool HasNormalizeScore() const { return false; }
  virtual Status NormalizeScore(const CycleState& state, const api::Pod& pod, std::span<NodeScore> scores) const {
    return Status();
  }

 protected:
  // Score as ScoreNodes over a run of one node: for a plugin that overrides ScoreNodes,
  // so its per-node rules exist once.
  Status ScoreAsRunOfOne(const CycleState& state, const api::Pod& pod, const cache::NodeInfo& node,
                         int64_t& score) const;
};

class ReservePlugin : public virtual Plugin {
 public:
  virtual Status Reserve(CycleState& state, const api::Pod& pod, std::string_view node_name) = 0;
  // Must be idempotent and must not fail: undoes Reserve after a later failure.
  virtual void Unreserve(CycleState& state, const api::Pod& pod, std::string_view node_name) = 0;
};

class PermitPlugin : public virtual Plugin {
 public:
  // Success, a rejection, or Wait with `timeout` set (the pod waits in WaitOnPermit
  // until allowed, rejected or timed out).
  virtual Status Permit(CycleState& state, const api::Pod& pod, std::string_view node_name,
                        std::chrono::milliseconds& timeout) = 0;
};

class PreBindPlugin : public virtual Plugin {
 public:
  virtual Status PreBind(CycleState& state, const api::Pod& pod, std::string_view node_name) = 0;
  // Skip when PreBind has nothing to do for this pod (upstream PreBindPreFlight): then
  // PreBind is not called, and a pod no PreBind plugin needs is bound without a worker
  // thread waiting for it. Runs on the scheduling thread, after Reserve and Permit.
  virtual Status PreBindPreFlight(const CycleState& state, const api::Pod& pod, std::string_view node_name) const {
    return Status();
  }
};

class BindPlugin : public virtual Plugin {
 public:
  // Skip passes the pod to the next bind plugin.
  virtual Status Bind(CycleState& state, const api::Pod& pod, std::string_view node_name) = 0;
  // A bind plugin that only issues an API call can finish asynchronously, so no thread
  // waits per bind in flight. BindAsync's `done` runs exactly once, possibly on another
  // thread, and must not block; `state`, `pod` and `node_name` stay valid until then.
  virtual bool CanBindAsync() const { return false; }
  virtual void BindAsync(CycleState& state, const api::Pod& pod, std::string_view node_name,
                         std::function<void(Status)> done) {
    done(Bind(state, pod, node_name));
  }
};

class PostBindPlugin : public virtual Plugin {
 public:
  virtual void PostBind(CycleState& state, const api::Pod& pod, std::string_view node_name) = 0;
};

}  // namespace ksched::framework
