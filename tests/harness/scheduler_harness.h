// A running ksched in the test process, wired as cmd/ksched wires it (informers feeding
// a Scheduler), against the real kube-apiserver of tests/harness/control_plane.h; plus the
// API helpers the scheduler's integration tests share.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/defaults.h"
#include "informers/cluster_lister.h"
#include "pkg/client/curl_client.h"
#include "pkg/client/rest_config.h"
#include "pkg/api/json.h"
#include "pkg/framework/registry.h"
#include "pkg/scheduler/scheduler.h"
#include "tests/harness/api_helpers.h"
#include "tests/harness/control_plane.h"
#include "tests/fakes/event_log.h"

namespace ksched::testing {

inline api::ObjectList<api::Pod> ListPods(client::ApiClient& c, const std::string& ns) {
  auto r = c.Do({.path = "/api/v1/namespaces/" + ns + "/pods"});
  EXPECT_TRUE(r.ok());
  auto l = api::DecodePodList(r->body);
  EXPECT_TRUE(l.ok());
  return std::move(*l);
}

// Holds every pod at Permit (Wait, 60 s), so a test can act while its bind is pending and
// then Allow or Reject it through the framework's waiting pods.
class HoldAtPermit final : public framework::PermitPlugin {
 public:
  std::string_view Name() const override { return "HoldAtPermit"; }
  framework::Status Permit(framework::CycleState&, const api::Pod&, std::string_view,
                           std::chrono::milliseconds& timeout) override {
    timeout = std::chrono::seconds(60);
    return framework::Status(framework::Code::kWait);
  }
};

// A SchedulerHarness customisation that enables HoldAtPermit in a profile.
inline void EnableHoldAtPermit(config::KubeSchedulerProfile& p, framework::Registry& r) {
  r["HoldAtPermit"] = [](const config::PluginArgs&, framework::Handle&) -> StatusOr<std::unique_ptr<framework::Plugin>> {
    return std::unique_ptr<framework::Plugin>(std::make_unique<HoldAtPermit>());
  };
  p.plugins.permit.enabled.push_back({"HoldAtPermit", 0});
}

class SchedulerHarness {
 public:
  // `customize` may add plugins to the registry and enable them in each profile.
  using Customize = std::function<void(config::KubeSchedulerProfile&, framework::Registry&)>;
  // `status_client`: the client for status patches and events (default: one more admin
  // client), e.g. one through a proxy that a test can stop. `seed`: the tie-break's, for
  // tests that compare placements with another run.
  explicit SchedulerHarness(std::vector<std::string> profiles, Customize customize = nullptr,
                            client::ApiClientPtr status_client = nullptr, std::optional<uint64_t> seed = std::nullopt)
      : bind_(AdminClient()),
        status_(status_client ? std::move(status_client) : AdminClient()),
        watch_(AdminClient()) {
    using namespace std::chrono_literals;
    framework::Registry registry = framework::InTreeRegistry();
    config::KubeSchedulerConfiguration cfg;
    config::SetDefaults(cfg);
    auto base = cfg.profiles.at(0);
    cfg.profiles.clear();
    for (const auto& name : profiles) {
      auto p = base;
      p.scheduler_name = name;
      if (customize) customize(p, registry);
      cfg.profiles.push_back(p);
    }
    pods_ = std::make_unique<informers::PodInformer>(
        *watch_, "/api/v1/pods", informers::InformerOptions{.field_selector = informers::kNonTerminalPodsSelector});
    nodes_ = std::make_unique<informers::NodeInformer>(*watch_, "/api/v1/nodes");
    listers_ = std::make_unique<informers::ClusterListers>(*watch_);
    scheduler::SchedulerOptions o;
    o.config = cfg;
    o.registry = std::move(registry);
    o.bind_client = bind_.get();
    o.status_client = status_.get();
    o.pod_lister = [this](const std::string& key) { return pods_->Get(key); };
    o.cluster_lister = listers_.get();
    o.seed = seed;
    auto s = scheduler::Scheduler::New(std::move(o));
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    sched_ = std::move(*s);
    pods_->AddHandler(&sched_->pod_handler());
    nodes_->AddHandler(&sched_->node_handler());
    sched_->WatchStorage(listers_->storage());
    sched_->WatchResources(listers_->resources());
    listers_->Start();
    nodes_->Start();
    pods_->Start();
    EXPECT_TRUE(listers_->WaitForSync(30s));
    EXPECT_TRUE(nodes_->WaitForSync(30s));
    EXPECT_TRUE(pods_->WaitForSync(30s));
    sched_->Run();
  }
  ~SchedulerHarness() {
    sched_->Stop(std::chrono::seconds(5));
    pods_->Stop();
    nodes_->Stop();
    listers_->Stop();
  }
  informers::PodInformer& pods() { return *pods_; }
  informers::NodeInformer& nodes() { return *nodes_; }
  informers::ClusterListers& listers() { return *listers_; }
  scheduler::Scheduler& scheduler() { return *sched_; }

  // Waits until the informer sees pod `key` ("namespace/name") bound; its node, or ""
  // (with a test failure) after `timeout`.
  std::string WaitBound(const std::string& key, std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
    std::string node;
    EXPECT_TRUE(Eventually(
        [&] {
          auto p = pods_->Get(key);
          if (p && p->IsAssigned()) node = p->spec.node_name;
          return !node.empty();
        },
        timeout))
        << key << " not bound within " << timeout.count() << " ms";
    return node;
  }

 private:
  client::ApiClientPtr bind_, status_, watch_;
  std::unique_ptr<informers::PodInformer> pods_;
  std::unique_ptr<informers::NodeInformer> nodes_;
  std::unique_ptr<informers::ClusterListers> listers_;
  std::unique_ptr<scheduler::Scheduler> sched_;
};

}  // namespace ksched::testing
