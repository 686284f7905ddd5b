// Informer<T>: list+watch one resource into a thread-safe store and deliver ordered
// Add/Update/Delete notifications, with client-go's reflector semantics:
//  - initial LIST (paginated, limit=500) -> WATCH from the list's resourceVersion with
//    allowWatchBookmarks=true and timeoutSeconds drawn from [300, 600);
//  - bookmarks only advance the RV; a normally closed watch resumes from the last RV;
//  - 410 Gone / Expired (HTTP or ERROR event) -> relist with RV="" and deliver deletes
//    for vanished objects as tombstones (final state unknown) and updates for changed ones;
//  - failures back off exponentially with jitter (0.8 s doubling to 30 s, reset after 2 min
//    of health); a watch that stays silent longer than idle_timeout is restarted.
// One thread per informer runs the reflector and the handlers, so handlers see events
// in order and never concurrently.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "pkg/client/api_client.h"
#include "pkg/api/resource.h"
#include "pkg/api/storage.h"
#include "pkg/api/types.h"
#include "pkg/api/workloads.h"
#include "pkg/util/clock.h"
#include "pkg/util/mutex.h"
#include "pkg/util/thread_annotations.h"

namespace ksched::informers {

// What a delete handler receives. After a relist, objects deleted while the watch was
// down arrive with final_state_unknown = true and their last known state (client-go's
// DeletedFinalStateUnknown).
template <typename T>
struct Deleted {
  std::shared_ptr<const T> last_known;
  bool final_state_unknown = false;
};

template <typename T>
class EventHandler {
 public:
  virtual ~EventHandler() = default;
  virtual void OnAdd(const std::shared_ptr<const T>& obj) = 0;
  virtual void OnUpdate(const std::shared_ptr<const T>& old_obj, const std::shared_ptr<const T>& new_obj) = 0;
  virtual void OnDelete(const Deleted<T>& deleted) = 0;
};

struct InformerOptions {
  Clock* clock = &RealClock();
  int64_t page_size = 500;
  std::string field_selector;  // e.g. "status.phase!=Succeeded,status.phase!=Failed"
  std::string label_selector;
  std::chrono::seconds min_watch_timeout{300};  // timeoutSeconds is drawn from [min, 2*min)
  std::chrono::milliseconds initial_backoff{800};
  std::chrono::milliseconds max_backoff{std::chrono::seconds(30)};
  std::chrono::seconds backoff_reset{120};
  // A watch with no bytes (events or bookmarks) for this long is restarted.
  std::chrono::milliseconds idle_timeout{std::chrono::minutes(2)};
  // Watch lines read but not yet applied (handlers slower than the stream). Past this
  // many bytes the stream is dropped once the lines in hand are applied, and the watch
  // resumes from the last applied resourceVersion: memory stays bounded, nothing is lost.
  size_t max_buffered_watch_bytes = size_t{256} << 20;
  uint64_t seed = std::random_device{}();
};

// Observed counters, for tests and metrics.
struct InformerStats {
  int64_t lists = 0;          // completed LIST cycles (each may span pages)
  int64_t list_pages = 0;
  int64_t watches = 0;        // watch streams opened
  int64_t relists_after_gone = 0;
  int64_t idle_restarts = 0;
  int64_t decode_errors = 0;  // lines or objects that could not be read
  int64_t skipped_objects = 0;  // well-formed objects that could not be decoded, skipped
  int64_t buffer_restarts = 0;  // watches resumed because too many lines were buffered
  int64_t failures = 0;       // failed list or watch attempts (each followed by backoff)
};

template <typename T>
class Informer {
 public:
  // `resource_path` is the collection, e.g. "/api/v1/pods" or "/api/v1/nodes".
  Informer(client::ApiClient& client, std::string resource_path, InformerOptions options = {});
  ~Informer();
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  // Handlers must be added before Start(). They run on the informer's thread.
  void AddHandler(EventHandler<T>* handler);
  void Start();
  void Stop();

  // True once the first LIST has been stored and its notifications delivered.
  bool HasSynced() const;
  // Blocks until HasSynced() or the timeout (real time) passes.
  bool WaitForSync(std::chrono::milliseconds timeout) const;

  std::shared_ptr<const T> Get(const std::string& key) const;  // "ns/name" or "name"
  std::vector<std::shared_ptr<const T>> List() const;
  size_t Size() const;
  std::string LastSyncResourceVersion() const;
  // Lists again from etcd (a consistent read, not the watch cache) and waits until a list
  // that began after this call has been stored and its notifications delivered; false
  // when that took longer than `timeout` (the relist still happens). A replica that has
  // just become leader calls it so it never schedules on a cache that missed the previous
  // leader's last binds (its watch may have been failing while it stood by).
  bool RelistAndWait(std::chrono::milliseconds timeout);
  InformerStats Stats() const;
  // Why the informer has no fresh list: the error of its last LIST attempt when that
  // failed; OK once a LIST has succeeded after it. For /readyz and the start-up logs.
  Status LastListError() const;
  // What the informer watches, e.g. "pods" and "/api/v1/pods".
  std::string_view Kind() const;
  const std::string& Path() const { return path_; }

 private:
  enum class WatchEnd { kResume, kRelist, kRelistRequested, kBackoff, kStopped };

  void Run(std::stop_token stop);
  Status ListAndReplace(std::stop_token stop);
  WatchEnd Watch(std::stop_token stop);
  void ApplyEvent(api::WatchEventType type, const std::shared_ptr<const T>& obj);
  // An event whose object could not be decoded: logged and skipped, except that a
  // delete still removes the object when its key was read.
  void SkipBadEvent(const api::WatchEvent<T>& ev);
  // Calls the handlers for one change. A replacement with another UID (the object was
  // deleted and recreated under the same name while we were not watching) is delivered
  // as a delete of the old object followed by an add, as upstream's event handlers
  // treat a UID change.
  void Notify(const std::shared_ptr<const T>& old_obj, const std::shared_ptr<const T>& new_obj,
              bool final_state_unknown);
  void Backoff(std::stop_token stop);
  std::string ListPath(const std::string& rv, const std::string& cont, bool paginate) const;
  std::string WatchPath(int64_t timeout_seconds) const;
  void AppendSelectors(std::string& path) const;

  client::ApiClient& client_;
  const std::string path_;
  const InformerOptions options_;
  Clock& clock_;
  std::vector<EventHandler<T>*> handlers_;

  mutable SharedMutex store_mu_;
  std::unordered_map<std::string, std::shared_ptr<const T>> store_ GUARDED_BY(store_mu_);
  std::string rv_ GUARDED_BY(store_mu_);
  InformerStats stats_ GUARDED_BY(store_mu_);
  bool synced_ GUARDED_BY(store_mu_) = false;
  Status last_list_error_ GUARDED_BY(store_mu_);
  // ListAndReplace calls started, and the start number of the last one that completed.
  int64_t lists_started_ GUARDED_BY(store_mu_) = 0;
  int64_t last_completed_list_ GUARDED_BY(store_mu_) = 0;
  std::atomic<bool> relist_requested_{false};
  // Wakes the reflector thread waiting in Watch(): notified by the stream's callbacks
  // (shared with them), RelistAndWait and Stop.
  const std::shared_ptr<ClockWakeup> watch_wakeup_ = std::make_shared<ClockWakeup>();
  mutable std::condition_variable_any synced_cv_;

  // Reflector-thread state.
  bool rv_expired_ = false;  // the last RV is gone (410): the next list reads etcd
  std::mt19937_64 rng_;
  int backoff_steps_ = 0;
  Clock::time_point last_failure_{};

  std::jthread thread_;
};

// Convenience aliases for the resources the scheduler watches.
using PodInformer = Informer<api::Pod>;
using NodeInformer = Informer<api::Node>;
// Namespaces and the objects that select pods, for ClusterListers (cluster_lister.h).
using NamespaceInformer = Informer<api::Namespace>;
using ServiceInformer = Informer<api::Service>;
using ReplicationControllerInformer = Informer<api::ReplicationController>;
using ReplicaSetInformer = Informer<api::ReplicaSet>;
using StatefulSetInformer = Informer<api::StatefulSet>;
// policy/v1 or v1beta1 by discovery (DisruptionBudgetPath in cluster_lister.h), for preemption.
using DisruptionBudgetInformer = Informer<api::PodDisruptionBudget>;
using PodGroupInformer = Informer<api::PodGroup>;  // scheduling.x-k8s.io (Coscheduling)
// The storage objects of the volume plugins, for StorageListers (storage_lister.h).
using ClaimInformer = Informer<api::PersistentVolumeClaim>;
using VolumeInformer = Informer<api::PersistentVolume>;
using StorageClassInformer = Informer<api::StorageClass>;
using CSINodeInformer = Informer<api::CSINode>;
using CSIDriverInformer = Informer<api::CSIDriver>;
// The objects of dynamic resource allocation, for the DynamicResources plugin; their
// collections are the kDeviceClassesPath... below.
using DeviceClassInformer = Informer<api::DeviceClass>;
using ResourceSliceInformer = Informer<api::ResourceSlice>;
using ResourceClaimInformer = Informer<api::ResourceClaim>;  // ClaimInformer is the PVCs'
using ResourceClaimTemplateInformer = Informer<api::ResourceClaimTemplate>;
inline constexpr char kDeviceClassesPath[] = "/apis/resource.k8s.io/v1/deviceclasses";
inline constexpr char kResourceSlicesPath[] = "/apis/resource.k8s.io/v1/resourceslices";
inline constexpr char kResourceClaimsPath[] = "/apis/resource.k8s.io/v1/resourceclaims";
inline constexpr char kResourceClaimTemplatesPath[] = "/apis/resource.k8s.io/v1/resourceclaimtemplates";
inline constexpr char kPodGroupsPath[] = "/apis/scheduling.x-k8s.io/v1alpha1/podgroups";
// Field selector for pods a scheduler cares about (non-terminal ones).
inline constexpr char kNonTerminalPodsSelector[] = "status.phase!=Succeeded,status.phase!=Failed";

// What is left of `deadline` (steady clock), never negative: for waiting on several
// informers' sync within one timeout.
std::chrono::milliseconds TimeLeft(std::chrono::steady_clock::time_point deadline);

std::string StoreKey(const api::ObjectMeta& meta);
std::string StoreKey(const api::LeanObjectMeta& meta);

// OK once `informer` has synced; otherwise why not, naming it: its last LIST error, or
// that the first LIST is still under way. For /readyz and the start-up logs.
template <typename I>
Status SyncStatusOf(const I& informer) {
  if (informer.HasSynced()) return Status::OK();
  Status last = informer.LastListError();
  std::string what = std::string(informer.Kind()) + " (" + informer.Path() + ") not synced";
  if (last.ok()) return Status(StatusCode::kUnavailable, what + ": first list in progress");
  return Status(StatusCode::kUnavailable, what + ": " + last.ToString());
}

}  // namespace ksched::informers
