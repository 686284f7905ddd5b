// HttpExtender: a scheduler extender reached over HTTP(S), as configured in
// KubeSchedulerConfiguration `extenders` (upstream pkg/scheduler/extender.go,
// HTTPExtender). Each call POSTs JSON to <urlPrefix>/<verb> and expects 200.
//
// Every extender has a client of its own (client::CurlApiClient over HTTP/1.1): one I/O
// thread, its kept-alive connections reused from call to call, no thread per call. A
// call is never retried; it fails after httpTimeout (5s when unset).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>

#include "config/types.h"
#include "pkg/client/api_client.h"
#include "pkg/framework/extender.h"
#include "pkg/framework/runtime/metrics_recorder.h"
#include "pkg/util/clock.h"

namespace ksched::extender {

// upstream DefaultExtenderTimeout.
inline constexpr std::chrono::seconds kDefaultTimeout{5};

struct HttpExtenderOptions {
  framework::runtime::MetricsRecorder* metrics = &framework::runtime::NoopMetricsRecorder();
  Clock* clock = &RealClock();
  // Where the configuration named it ("extenders[0]"), for errors.
  std::string field_path = "extenders[0]";
  // Name of the client's I/O thread.
  std::string thread_name = "extender";
  // Tests: the client to send with, instead of one made from the configuration.
  client::ApiClient* client = nullptr;
};

class HttpExtender final : public framework::Extender {
 public:
  // Fails, naming the field, on a URL prefix that does not parse or TLS material that
  // cannot be read.
  static StatusOr<std::unique_ptr<HttpExtender>> New(const config::Extender& config, HttpExtenderOptions options = {});
  ~HttpExtender() override;

  const std::string& Name() const override { return config_.url_prefix; }
  bool IsInterested(const api::Pod& pod) const override;
  bool IsFilter() const override { return !config_.filter_verb.empty(); }
  bool IsPrioritizer() const override { return !config_.prioritize_verb.empty(); }
  bool IsBinder() const override { return !config_.bind_verb.empty(); }
  bool SupportsPreemption() const override { return !config_.preempt_verb.empty(); }
  bool IsIgnorable() const override { return config_.ignorable; }
  int64_t Weight() const override { return config_.weight; }

  StatusOr<framework::ExtenderFilterResult> Filter(const api::Pod& pod,
                                                   std::span<const cache::NodeInfoPtr> nodes) override;
  std::future<StatusOr<std::vector<framework::HostPriority>>> Prioritize(
      const api::Pod& pod, std::span<const cache::NodeInfoPtr> nodes) override;
  Status Bind(const api::Pod& pod, const std::string& node) override;
  StatusOr<framework::NodeVictims> ProcessPreemption(const api::Pod& pod, const framework::NodeVictims& candidates,
                                                     const cache::Snapshot& snapshot) override;

 private:
  HttpExtender(const config::Extender& config, HttpExtenderOptions options);
  // The request for one verb.
  client::Request MakeRequest(const std::string& verb, std::string body) const;
  // Maps the client's answer to the body, or to upstream's error for a non-200 answer.
  StatusOr<std::string> BodyOf(const std::string& verb, StatusOr<client::Response> r) const;
  // Sends synchronously, recording the call's latency as `call`.
  StatusOr<std::string> Send(std::string_view call, const std::string& verb, std::string body);
  std::string ArgsFor(const api::Pod& pod, std::span<const cache::NodeInfoPtr> nodes);
  // A node's JSON, encoded again only when the node object changed (scheduling thread).
  const std::string& NodeJson(const cache::NodeInfo& node);

  const config::Extender config_;
  HttpExtenderOptions options_;
  std::set<std::string, std::less<>> managed_;  // managedResources' names
  std::string path_prefix_;                     // urlPrefix's path, without a trailing '/'
  client::ApiClientPtr own_client_;
  client::ApiClient* client_ = nullptr;
  struct CachedNode {
    const api::Node* node = nullptr;
    api::NodePtr keep;  // keeps `node` alive, so the address is not reused
    std::string json;
  };
  std::unordered_map<std::string, CachedNode> node_json_;
};

// Prioritize calls in flight across all extenders (scheduler_goroutines
// {operation="prioritizing_extender"}).
int64_t PrioritizeCallsInFlight();

}  // namespace ksched::extender
