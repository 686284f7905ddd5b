// KubeletStandin: finishes the graceful pod deletes a kubelet would finish, for tests and
// benchmarks on a real kube-apiserver that has no kubelets (tests/harness/control_plane.h,
// make bench-e2e).
//
// Deleting a bound pod with a grace period (the scheduler deleting a preemption victim:
// upstream's DeletePod sends empty DeleteOptions, so the pod's
// terminationGracePeriodSeconds, 30 s by default, applies) only sets its
// deletionTimestamp; the object stays, and keeps its node's resources in every scheduler's
// cache, until the kubelet has stopped the containers and deletes it with
// gracePeriodSeconds 0 and a UID precondition (upstream's kubelet status manager,
// manager.syncPod). With no kubelet it would stay for good. The stand-in watches pods
// and sends that final delete at once for every bound pod that gets a deletionTimestamp:
// a kubelet whose containers stop instantly.
//
// A delete with gracePeriodSeconds 0 passes through the same marked state for an instant
// (upstream's BeforeDelete writes the deletionTimestamp, then the store removes the
// object), so the stand-in's delete usually finds such a pod gone: NotFound, not an error.
//
// It records every bound pod whose removal it sees (finished here or deleted at once by
// someone else) with its node and the time the watch delivered the DELETED event, so a
// caller can measure, e.g., how soon a preemptor is bound after its last victim is gone.
// Handlers added with AddHandler see the same watch: times they take compare with
// Removal::removed_at without the skew of a second watch.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "pkg/client/api_client.h"
#include "informers/informer.h"
#include "pkg/api/types.h"
#include "pkg/util/clock.h"
#include "pkg/util/mutex.h"
#include "pkg/util/thread_annotations.h"

namespace ksched::testing {

struct KubeletStandinOptions {
  // The pods to watch and finish: every namespace, or one namespace's collection
  // ("/api/v1/namespaces/<ns>/pods").
  std::string pods_path = "/api/v1/pods";
  // Stamps Removal::removed_at (and drives the informer).
  Clock* clock = &RealClock();
};

class KubeletStandin final : private informers::EventHandler<api::Pod> {
 public:
  struct Removal {
    std::string key;   // namespace/name
    std::string node;  // spec.nodeName when it went
    // When the watch delivered the DELETED event (the stand-in's clock).
    Clock::time_point removed_at;
    // Learnt from a relist after the watch broke: removed_at is when the relist saw it
    // gone, not when it went.
    bool final_state_unknown = false;
  };

  // `client` carries the watch and the deletes; it must outlive the stand-in.
  explicit KubeletStandin(client::ApiClient& client, KubeletStandinOptions options = {})
      : client_(client),
        clock_(*options.clock),
        informer_(client, options.pods_path, informers::InformerOptions{.clock = options.clock}) {
    informer_.AddHandler(this);
  }
  ~KubeletStandin() override { Stop(); }
  KubeletStandin(const KubeletStandin&) = delete;
  KubeletStandin& operator=(const KubeletStandin&) = delete;

  // More handlers on the stand-in's watch, called after its own; before Start() only.
  void AddHandler(informers::EventHandler<api::Pod>* handler) { informer_.AddHandler(handler); }

  // Starts watching; true once the initial list is in and its pods handled (pods already
  // terminating on a node are finished too), false if that took longer than `timeout`
  // (the stand-in keeps trying until Stop()).
  bool Start(std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
    informer_.Start();
    return informer_.WaitForSync(timeout);
  }

  // Stops watching and waits for the deletes in flight (each bounded by the client's
  // request timeout). Idempotent; the removals stay readable.
  void Stop() {
    informer_.Stop();
    MutexLock l(mu_);
    cv_.wait(l, [&]() REQUIRES(mu_) { return in_flight_ == 0; });
  }

  // Every removal seen so far, in the order the watch delivered them.
  std::vector<Removal> Removals() const {
    MutexLock l(mu_);
    return removals_;
  }
  size_t RemovalCount() const {
    MutexLock l(mu_);
    return removals_.size();
  }
  // Blocks until at least `n` removals have been seen; false after `timeout` (real time).
  bool WaitForRemovals(size_t n, std::chrono::milliseconds timeout) const {
    MutexLock l(mu_);
    return cv_.wait_for(l, timeout, [&]() REQUIRES(mu_) { return removals_.size() >= n; });
  }
  // Final deletes sent, and those that failed other than as NotFound (already gone) or
  // Conflict (the UID precondition: another pod now has the name). The first failure is
  // also written to stderr.
  size_t DeletesSent() const {
    MutexLock l(mu_);
    return deletes_sent_;
  }
  size_t DeleteErrors() const {
    MutexLock l(mu_);
    return delete_errors_;
  }

 private:
  // Informer callbacks, on the informer's thread.
  void OnAdd(const api::PodPtr& pod) override { MaybeFinish(*pod); }
  void OnUpdate(const api::PodPtr&, const api::PodPtr& pod) override { MaybeFinish(*pod); }
  void OnDelete(const informers::Deleted<api::Pod>& d) override {
    const api::Pod& pod = *d.last_known;
    MutexLock l(mu_);
    finishing_.erase(pod.metadata.uid);
    if (!pod.IsAssigned()) return;
    removals_.push_back({.key = pod.Key(),
                         .node = pod.spec.node_name,
                         .removed_at = clock_.Now(),
                         .final_state_unknown = d.final_state_unknown});
    cv_.notify_all();
  }

  void MaybeFinish(const api::Pod& pod) {
    if (!pod.IsAssigned() || !pod.IsBeingDeleted()) return;
    {
      MutexLock l(mu_);
      if (!finishing_.insert(pod.metadata.uid).second) return;  // already sent
      ++in_flight_;
      ++deletes_sent_;
    }
    client_.Send(
        {.verb = client::Verb::kDelete,
         .path = "/api/v1/namespaces/" + pod.metadata.namespace_ + "/pods/" + pod.metadata.name,
         .body = R"({"apiVersion":"v1","kind":"DeleteOptions","gracePeriodSeconds":0,)"
                 R"("preconditions":{"uid":")" +
                 pod.metadata.uid + "\"}}",
         // Safe to repeat: a second delete is NotFound, or Conflict on the UID.
         .retry_connection_errors = true},
        [this, key = pod.Key(), uid = pod.metadata.uid](StatusOr<client::Response> r) {
          MutexLock l(mu_);
          if (!r.ok() && r.status().code() != StatusCode::kNotFound && r.status().code() != StatusCode::kConflict) {
            // Let a later event of the pod try again.
            finishing_.erase(uid);
            if (delete_errors_++ == 0)
              std::fprintf(stderr, "kubelet stand-in: deleting %s failed: %s\n", key.c_str(),
                           r.status().ToString().c_str());
          }
          --in_flight_;
          cv_.notify_all();
        });
  }

  client::ApiClient& client_;
  Clock& clock_;
  mutable Mutex mu_;
  mutable std::condition_variable_any cv_;
  // UIDs whose final delete was sent and whose removal is not yet seen.
  std::unordered_set<std::string> finishing_ GUARDED_BY(mu_);
  std::vector<Removal> removals_ GUARDED_BY(mu_);
  size_t in_flight_ GUARDED_BY(mu_) = 0;
  size_t deletes_sent_ GUARDED_BY(mu_) = 0;
  size_t delete_errors_ GUARDED_BY(mu_) = 0;
  // Last: stopped (by its destructor) before the fields its handlers use go.
  informers::PodInformer informer_;
};

}  // namespace ksched::testing
