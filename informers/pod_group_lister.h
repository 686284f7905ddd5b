// PodGroups of scheduling.x-k8s.io/v1alpha1 (scheduler-plugins' Coscheduling) and the
// pods that belong to them. Upstream Coscheduling reads PodGroups through a
// controller-runtime cache and counts a group's pods by listing the scheduler's Pod
// informer with the label selector scheduling.x-k8s.io/pod-group=<name> (core.go
// PodGroupManager.PreFilter). Here the Pod informer's handler keeps that list as an index
// (group -> its pods), so a PreFilter or a Permit costs one map lookup, not a scan of every
// pod of the namespace.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "informers/informer.h"
#include "pkg/api/types.h"
#include "pkg/api/workloads.h"
#include "pkg/util/mutex.h"
#include "pkg/util/thread_annotations.h"

namespace ksched::informers {

// The pods that carry the pod-group label, by namespace/group and name. The scheduler's Pod
// informer watches non-terminal pods only (as upstream's), so a pod that finishes leaves
// its group. Thread-safe.
class PodGroupMembers final : public EventHandler<api::Pod> {
 public:
  void OnAdd(const api::PodPtr& pod) override EXCLUDES(mu_);
  void OnUpdate(const api::PodPtr& old_pod, const api::PodPtr& new_pod) override EXCLUDES(mu_);
  void OnDelete(const Deleted<api::Pod>& deleted) override EXCLUDES(mu_);
  // The pods of group `name` in namespace `ns`, by pod name.
  std::vector<api::PodPtr> Members(std::string_view ns, std::string_view name) const EXCLUDES(mu_);

 private:
  void PutLocked(const api::PodPtr& pod) REQUIRES(mu_);
  void RemoveLocked(const api::Pod& pod) REQUIRES(mu_);

  mutable Mutex mu_;
  // "ns/group" -> pod name -> pod.
  std::map<std::string, std::map<std::string, api::PodPtr, std::less<>>, std::less<>> groups_ GUARDED_BY(mu_);
};

// The key of a pod's group, "ns/<label value>"; empty when the pod has no group label.
std::string PodGroupKeyOf(const api::Pod& pod);

struct DiscoveryRetry;

// The PodGroup informer, started only when asked for (a profile enables Coscheduling) and
// the server serves scheduling.x-k8s.io/v1alpha1 (the CRD is installed), and the member
// index, which the scheduler's Pod informer feeds.
class PodGroupListers {
 public:
  PodGroupListers(client::ApiClient& client, const InformerOptions& options = {});
  PodGroupListers(const PodGroupListers&) = delete;
  PodGroupListers& operator=(const PodGroupListers&) = delete;

  // The Pod informer's handler that keeps Members(); add it before that informer starts.
  PodGroupMembers& members() { return members_; }
  PodGroupInformer& informer() { return informer_; }

  // Whether Start() should look for the group at all (set before Start()).
  void SetWanted(bool wanted) { wanted_ = wanted; }
  bool wanted() const { return wanted_; }
  // Starts the informer when wanted and `served`.
  void Start(bool served);
  void Stop();
  bool served() const { return served_.load(std::memory_order_acquire); }
  bool HasSynced() const;
  bool WaitForSync(std::chrono::milliseconds timeout) const;
  Status SyncStatus() const;

  api::PodGroupPtr PodGroupNamed(std::string_view ns, std::string_view name) const;
  std::vector<api::PodPtr> Members(std::string_view ns, std::string_view name) const {
    return members_.Members(ns, name);
  }

 private:
  PodGroupMembers members_;
  PodGroupInformer informer_;
  bool wanted_ = false;
  std::atomic<bool> started_{false};
  std::atomic<bool> served_{false};
};

// Whether the server serves scheduling.x-k8s.io/v1alpha1 (the PodGroup CRD is installed).
bool ServesPodGroups(client::ApiClient& client, const DiscoveryRetry& retry);

}  // namespace ksched::informers
