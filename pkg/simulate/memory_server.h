// MemoryApiServer: an API server held in memory, behind the client::ApiClient interface,
// so that `ksched simulate` runs the scheduler's own informers, listers and scheduler
// unchanged on a cluster read from files. It serves what those components ask of a
// kube-apiserver:
//  - LIST (one page) and WATCH of each collection of cluster_files.h's Kinds(), and GET
//    of one object; discovery of the policy group;
//  - pods/{name}/binding (sets spec.nodeName; 409 once assigned), DELETE with a uid
//    precondition, JSON merge and strategic merge PATCH (conditions merge by type), with
//    metadata.resourceVersion as a precondition when given, PUT, and POST of events
//    (counted, not kept);
//  - in place of the PV controller: a PersistentVolume patched with a claimRef binds that
//    claim, and a claim given the selected-node annotation gets a volume provisioned on
//    that node (PersistentVolume "pvc-<claim uid>", node affinity to the node's
//    hostname).
// Nothing leaves the process. Answers and watch events are delivered in order on one
// thread of its own, as the real client's callbacks run on its I/O thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "pkg/client/api_client.h"
#include "pkg/simulate/cluster_files.h"
#include "pkg/util/status.h"

namespace ksched::simulate {

class MemoryApiServer final : public client::ApiClient {
 public:
  MemoryApiServer();
  ~MemoryApiServer() override;
  MemoryApiServer(const MemoryApiServer&) = delete;
  MemoryApiServer& operator=(const MemoryApiServer&) = delete;

  // Stores a new object as the API server would create it: namespace "default" for a
  // namespaced object without one, a uid when it has none, a resourceVersion. Watchers
  // see ADDED. kAlreadyExists when the name is taken.
  Status Create(const KindInfo& kind, std::string_view json);
  // Removes an object (watchers see DELETED); kNotFound if there is none.
  Status Delete(const KindInfo& kind, std::string_view ns, std::string_view name);
  // Merges a JSON merge patch into an object (watchers see MODIFIED).
  Status Patch(const KindInfo& kind, std::string_view ns, std::string_view name, std::string_view merge_patch);
  // The object as stored; nullopt when there is none.
  std::optional<std::string> Get(const KindInfo& kind, std::string_view ns, std::string_view name) const;
  // Every object of a kind, in name order ("namespace/name" for namespaced kinds).
  std::vector<std::string> List(const KindInfo& kind) const;
  // The resourceVersion of the last change to a collection (0 before any).
  uint64_t LastChange(const KindInfo& kind) const;
  // Events POSTed so far.
  size_t EventsRecorded() const;
  // Drops the watch history kept so far: a watch from an older resourceVersion then
  // starts at the next change. For after the informers have listed (and so do not need
  // the initial objects' ADDED events again).
  void ForgetHistory();

  // client::ApiClient
  void Send(client::Request request, client::ResponseCallback done) override;
  std::unique_ptr<client::WatchStream> Watch(client::Request request, client::WatchCallbacks callbacks) override;
  // Whether every answer and watch event queued so far has been delivered.
  bool WaitIdle(std::chrono::milliseconds timeout) override;
  bool Idle() const;

 private:
  struct Watcher;
  struct Collection {
    const KindInfo* kind = nullptr;
    std::map<std::string, std::string, std::less<>> objects;  // key -> JSON
    std::vector<std::pair<uint64_t, std::string>> events;      // (resourceVersion, watch line)
    std::vector<std::shared_ptr<Watcher>> watchers;
    uint64_t last_change = 0;
  };
  struct Target;  // a request path, parsed

  Collection& CollectionOf(const KindInfo& kind);
  const Collection* FindCollection(const KindInfo& kind) const;
  // One request, answered under mu_ (HTTP code and body).
  std::pair<long, std::string> Handle(const client::Request& request);
  std::pair<long, std::string> HandleLocked(const client::Request& request, const Target& target);
  Status CreateLocked(Collection& c, std::string_view json);
  Status DeleteLocked(Collection& c, const std::string& key, std::string_view uid_precondition);
  // Stores `json` under `key` with a new resourceVersion, and tells the watchers.
  Status PutLocked(Collection& c, const std::string& key, std::string json, std::string_view event_type);
  Status PatchLocked(Collection& c, const std::string& key, std::string_view patch, bool check_version);
  // The PV controller's part: after a change to a PersistentVolume or claim.
  void VolumeControllerLocked(const KindInfo& kind, const std::string& key);
  // The resourceclaim controller, reduced to what scheduling needs: a new pod's claims
  // from templates (named "<pod>-<entry>", owned by the pod, recorded in the pod's
  // status.resourceClaimStatuses); a deleted pod's reservations released, a claim left
  // unreserved deallocated, and the pod's own claims deleted.
  void ClaimControllerLocked(const KindInfo& kind, const std::string& key, std::string_view deleted_pod);
  std::string ListLocked(const Collection& c, std::string_view query) const;
  void Notify(Collection& c, uint64_t rv, std::string line);
  // Runs `task` on the delivery thread, after the tasks queued before it.
  void Post(std::function<void()> task);
  void DeliveryLoop();

  mutable std::mutex mu_;
  std::map<std::string_view, Collection, std::less<>> collections_;  // by collection path
  uint64_t resource_version_ = 1;
  uint64_t next_uid_ = 1;
  size_t events_recorded_ = 0;

  mutable std::mutex tasks_mu_;
  std::condition_variable tasks_cv_;
  std::deque<std::function<void()>> tasks_;
  bool running_task_ = false;
  bool stopping_ = false;
  std::thread delivery_;
};

}  // namespace ksched::simulate
