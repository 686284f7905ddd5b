// A framework Handle over a fixed snapshot, for plugin unit tests: binds are recorded
// (or failed on demand), the nominator and the cluster lister are settable.
#pragma once

#include <functional>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pkg/api/cluster_lister.h"
#include "pkg/cache/snapshot.h"
#include "pkg/framework/interface.h"

namespace ksched::testing {

class FakeHandle final : public framework::Handle, public framework::PodBinder {
 public:
  FakeHandle() = default;
  explicit FakeHandle(cache::Snapshot snapshot) : snapshot_(std::move(snapshot)) {}

  const cache::Snapshot& Snapshot() const override { return snapshot_; }
  const framework::PodNominator* Nominator() const override { return nominator_; }
  framework::PodBinder& Binder() override { return *this; }
  int Parallelism() const override { return 1; }
  const api::ClusterLister& Lister() const override {
    return lister_ != nullptr ? *lister_ : api::EmptyClusterLister();
  }

  void SetSnapshot(cache::Snapshot snapshot) { snapshot_ = std::move(snapshot); }
  // For a cache to update in place (Cache::UpdateSnapshot), as the scheduler does.
  cache::Snapshot& MutableSnapshot() { return snapshot_; }
  void SetNominator(const framework::PodNominator* nominator) { nominator_ = nominator; }
  void SetLister(const api::ClusterLister* lister) { lister_ = lister; }
  framework::VolumeWriter* Volumes() override { return volumes_; }
  void SetVolumeWriter(framework::VolumeWriter* writer) { volumes_ = writer; }
  framework::ResourceClaimWriter* ResourceClaims() override { return claims_; }
  void SetResourceClaimWriter(framework::ResourceClaimWriter* writer) { claims_ = writer; }
  std::stop_token Stopping() const override { return stopping.get_token(); }

  // Pods waiting at Permit, as a test puts them there; the plugin's Allow / Reject calls
  // mark them.
  struct Waiting {
    api::PodPtr pod;
    bool allowed = false;
    std::string rejected;  // the rejection message; empty while not rejected
  };
  int AllowWaitingPods(const std::function<bool(const api::Pod&)>& match, std::string_view plugin) override {
    int n = 0;
    for (Waiting& w : waiting) {
      if (match(*w.pod)) {
        w.allowed = true;
        ++n;
      }
    }
    return n;
  }
  int RejectWaitingPods(const std::function<bool(const api::Pod&)>& match, std::string_view plugin,
                        std::string_view message) override {
    int n = 0;
    for (Waiting& w : waiting) {
      if (match(*w.pod)) {
        w.rejected = std::string(message);
        ++n;
      }
    }
    return n;
  }
  int CountWaitingPods(const std::function<bool(const api::Pod&)>& match) const override {
    int n = 0;
    for (const Waiting& w : waiting) n += match(*w.pod) ? 1 : 0;
    return n;
  }
  void ActivatePods(std::span<const api::PodPtr> pods) override {
    for (const auto& p : pods) activated.push_back(p->Key());
  }
  std::vector<Waiting> waiting;
  std::vector<std::string> activated;  // keys, in order
  framework::runtime::MetricsRecorder* Metrics() override { return metrics; }
  framework::runtime::MetricsRecorder* metrics = nullptr;  // set by a test that reads them

  ksched::Status Bind(const api::Pod& pod, std::string_view node_name) override {
    binds.emplace_back(pod.Key(), std::string(node_name));
    return bind_result;
  }

  std::vector<std::pair<std::string, std::string>> binds;  // (pod key, node)
  ksched::Status bind_result;
  std::stop_source stopping;  // request_stop(): the scheduler is shutting down

 private:
  cache::Snapshot snapshot_;
  const framework::PodNominator* nominator_ = nullptr;
  const api::ClusterLister* lister_ = nullptr;
  framework::VolumeWriter* volumes_ = nullptr;
  framework::ResourceClaimWriter* claims_ = nullptr;
};

}  // namespace ksched::testing
