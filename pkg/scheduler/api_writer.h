// ApiWriter: everything the scheduler writes to the API server. Status patches and
// events are background requests (their own rate budget, started only while no bind
// waits), so a storm of failures never starves binds, whether the two clients are one
// or two.
#pragma once

#include <string>
#include <string_view>

#include "informers/api_client.h"
#include "pkg/api/types.h"
#include "pkg/framework/interface.h"
#include "pkg/util/clock.h"

namespace ksched::scheduler {

struct ApiWriterOptions {
  informers::ApiClient* bind_client = nullptr;    // binds (blocking, on binding workers)
  informers::ApiClient* status_client = nullptr;  // condition patches and events (async)
  Clock* clock = &RealClock();
  std::string hostname;  // for the events' reportingInstance
};

class ApiWriter final : public framework::PodBinder {
 public:
  explicit ApiWriter(ApiWriterOptions options) : options_(std::move(options)) {}

  // POST pods/{name}/binding with the pod's uid as precondition. Blocking.
  ksched::Status Bind(const api::Pod& pod, std::string_view node_name) override;
  // The same POST; `done` runs on the bind client's I/O thread.
  void BindAsync(const api::Pod& pod, std::string_view node_name,
                 std::function<void(ksched::Status)> done) override;

  // Sets PodScheduled=False with `reason` and `message` unless the pod already carries
  // exactly that condition (upstream skips an empty patch). Asynchronous.
  void PatchPodScheduledFalse(const api::Pod& pod, std::string_view reason, std::string_view message);
  // The pod as the API server has it now (a read, not the informer's copy): what a bind
  // whose answer was lost actually did. Blocking; not for the client's I/O thread.
  StatusOr<api::PodPtr> GetPod(const api::Pod& pod);

  // An events.k8s.io/v1 Event about `pod` from `scheduler_name`. Asynchronous.
  // Notes longer than the API's 1 KiB limit are truncated with " ...".
  void RecordEvent(const api::Pod& pod, std::string_view scheduler_name, bool warning, std::string_view reason,
                   std::string_view action, std::string_view note);

 private:
  ApiWriterOptions options_;
};

}  // namespace ksched::scheduler
