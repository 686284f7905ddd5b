// ApiWriter: everything the scheduler writes to the API server. Status patches and
// events are background requests (their own rate budget, started only while no bind
// waits), so a storm of failures never starves binds, whether the two clients are one
// or two. Writes about one pod still reach the server in the order they were made: a
// bind waits until the pod's status patches handed over before it are answered, so a
// PodScheduled=False patch from an earlier attempt never lands on the bound pod (upstream
// 1.20 writes that patch before the pod is retried at all; its asynchronous API calls
// run one call per object at a time).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pkg/client/api_client.h"
#include "pkg/api/json.h"
#include "pkg/api/types.h"
#include "pkg/framework/interface.h"
#include "pkg/scheduler/event_queue.h"
#include "pkg/util/clock.h"
#include "pkg/util/mutex.h"

namespace ksched::scheduler {

struct ApiWriterOptions {
  client::ApiClient* bind_client = nullptr;    // binds (blocking, on binding workers)
  client::ApiClient* status_client = nullptr;  // condition patches and events (async)
  Clock* clock = &RealClock();
  std::string hostname;  // for the events' reportingInstance
  // Whether victims get the DisruptionTarget condition before their DELETE (servers
  // from 1.26 on, where the condition is known; upstream PreemptPod).
  bool disruption_target_condition = false;
  // Events wait while binds or evictions are in flight, at most this long (see
  // EventQueue::Hold).
  std::chrono::seconds event_max_hold{10};
  // The informer's copy of a pod by key ("namespace/name"), or null. When set, a bind
  // goes out only while that copy is still the pod it was decided for (same uid, no node
  // yet): kube-apiserver 1.20 binds by name (BindingREST.Create never compares the
  // binding's uid), so a bind sent after its pod was deleted and re-created under the
  // same name would place the new pod, against its own constraints.
  std::function<api::PodPtr(const std::string& key)> pod_lister;
};

class ApiWriter final : public framework::PodBinder, public framework::VolumeWriter, public framework::ResourceClaimWriter {
 public:
  explicit ApiWriter(ApiWriterOptions options)
      : options_(std::move(options)),
        events_({.client = options_.status_client,
                 .hostname = options_.hostname,
                 .max_hold = options_.event_max_hold,
                 .clock = options_.clock}) {}

  // POST pods/{name}/binding with the pod's uid in the binding. Blocking. The request
  // carries a precondition (see ApiWriterOptions::pod_lister) checked each time it is
  // about to go out; a bind that fails it, or that CancelBinds cancels while it waits for
  // the pod's status patches, ends with kCancelled and was never sent.
  ksched::Status Bind(const api::Pod& pod, std::string_view node_name) override;
  // The same POST; `done` runs on the bind client's I/O thread.
  void BindAsync(const api::Pod& pod, std::string_view node_name,
                 std::function<void(ksched::Status)> done) override;

  // The pod with `uid` was deleted: its binds waiting for its status patches end at once
  // with kCancelled instead of being sent when the patches are answered.
  void CancelBinds(const std::string& uid);

  // Sets PodScheduled=False with `reason` and `message` unless the pod already carries
  // exactly that condition (upstream skips an empty patch). Asynchronous.
  // With `nominated_node_name`, .status.nominatedNodeName is written in the same patch
  // ("" clears it), and the patch is sent even when the condition is unchanged.
  void PatchPodScheduledFalse(const api::Pod& pod, std::string_view reason, std::string_view message,
                              const std::optional<std::string>& nominated_node_name = std::nullopt);
  // Clears .status.nominatedNodeName. Asynchronous.
  void ClearNominatedNodeName(const api::Pod& pod);
  // Preemption's eviction of `victim`: the DisruptionTarget condition (when enabled),
  // then DELETE with the victim's uid as precondition, so a pod re-created under the same
  // name is never hit. `done` runs once on the client's I/O thread: OK also when the
  // victim is already gone.
  void EvictPod(const api::Pod& victim, std::string_view scheduler_name, std::function<void(ksched::Status)> done);
  // The pod as the API server has it now (a read, not the informer's copy): what a bind
  // whose answer was lost actually did. Blocking; not for the client's I/O thread.
  StatusOr<api::PodPtr> GetPod(const api::Pod& pod);

  // VolumeBinding's PreBind writes: JSON merge patches of a PersistentVolume or a claim
  // on the bind client (they come before the pod's bind). Blocking.
  StatusOr<api::PersistentVolumePtr> PatchVolume(std::string_view name, std::string merge_patch) override;
  StatusOr<api::PersistentVolumeClaimPtr> PatchClaim(std::string_view ns, std::string_view name,
                                                     std::string merge_patch) override;

  // DynamicResources' writes (resource.k8s.io/v1 ResourceClaims) on the bind client.
  // Blocking.
  StatusOr<api::ResourceClaimPtr> GetResourceClaim(std::string_view ns, std::string_view name) override;
  StatusOr<api::ResourceClaimPtr> PatchResourceClaim(std::string_view ns, std::string_view name,
                                                     std::string merge_patch, bool status) override;

  // An events.k8s.io/v1 Event about `pod` from `scheduler_name`. Asynchronous: it waits
  // in an EventQueue until the status client may take it.
  // Notes longer than the API's 1 KiB limit are truncated with " ...".
  // `related`: a second pod the event is about (the preemptor, on a victim's event).
  void RecordEvent(const api::Pod& pod, std::string_view scheduler_name, bool warning, std::string_view reason,
                   std::string_view action, std::string_view note, const api::Pod* related = nullptr);

 private:
  // A JSON merge PATCH of `path` on the bind client, its answer decoded; a failure
  // names `what`.
  template <typename T>
  StatusOr<std::shared_ptr<const T>> MergePatch(std::string path, std::string merge_patch, std::string_view what,
                                                StatusOr<std::shared_ptr<const T>> (*decode)(api::JsonParser&,
                                                                                             api::JsonText));
  // A strategic-merge PATCH of pods/{name}/status, on the background lane if
  // `background`; failures other than 404 are logged after `what`. The pod's binds wait
  // for its answer (PatchOrder).
  void SendStatusPatch(const api::Pod& pod, std::string body, std::string_view what, bool background);

  ApiWriterOptions options_;
  EventQueue events_;
  // The status patches with the status client, by pod uid, and the binds waiting for
  // them. Shared with the patches' callbacks, which may outlive the writer.
  struct PatchOrder {
    // A bind waiting for the patches: called with true to send it, false to cancel it.
    using HeldBind = std::function<void(bool send)>;
    struct Pod {
      int in_flight = 0;
      std::vector<HeldBind> then;  // binds to send once they are answered
    };
    Mutex mu;
    std::atomic<uint64_t> dropped{0};  // status patches the client's full queue dropped
    std::unordered_map<std::string, Pod> by_uid GUARDED_BY(mu);  // an entry per pod with a patch out
    // Runs `bind(true)` now, or once the pod's patches are answered.
    void After(const std::string& uid, HeldBind bind) EXCLUDES(mu);
    // Runs `bind(false)` for every bind held for `uid`; the patches stay counted.
    void Cancel(const std::string& uid) EXCLUDES(mu);
    void PatchSent(const std::string& uid) EXCLUDES(mu);
    void PatchAnswered(const std::string& uid) EXCLUDES(mu);
  };
  std::shared_ptr<PatchOrder> patch_order_ = std::make_shared<PatchOrder>();
};

}  // namespace ksched::scheduler
