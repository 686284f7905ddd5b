// Fake framework plugins, and the registry/profile helpers that wire them into a
// framework, for tests of the framework runtime and of anything that runs plugins:
// each fake answers as the test scripts it and counts or logs its calls.
//
//   Registry r = BaseRegistry();
//   auto* f = Register(r, std::make_unique<FakeFilter>("F", std::set<std::string>{"node-1"}, unschedulable));
//   config::KubeSchedulerProfile p = BaseProfile();
//   Enable(p.plugins.filter, {"F"});
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <initializer_list>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/types.h"
#include "pkg/api/types.h"
#include "pkg/cache/node_info.h"
#include "pkg/framework/interface.h"
#include "pkg/framework/queue_plugins.h"
#include "pkg/framework/registry.h"
#include "pkg/util/mutex.h"

namespace ksched::testing {

// Thread-safe log of plugin calls ("Reserve:A", ...), for order assertions.
class CallLog {
 public:
  void Add(std::string entry) {
    MutexLock l(mu_);
    entries_.push_back(std::move(entry));
  }
  std::vector<std::string> entries() const {
    MutexLock l(mu_);
    return entries_;
  }

 private:
  mutable Mutex mu_;
  std::vector<std::string> entries_ GUARDED_BY(mu_);
};

// A plugin with a name and no extension point (one that does not implement
// EnqueueExtensions, for the queue); the base of the fakes below.
class NamedPlugin : public virtual framework::Plugin {
 public:
  explicit NamedPlugin(std::string name) : name_(std::move(name)) {}
  std::string_view Name() const override { return name_; }

 private:
  std::string name_;
};

// A plugin that registers the given events (with optional hints) for the queue.
class FakeEnqueuePlugin : public NamedPlugin, public framework::EnqueueExtensions {
 public:
  FakeEnqueuePlugin(std::string name, std::vector<framework::ClusterEventWithHint> events)
      : NamedPlugin(std::move(name)), events_(std::move(events)) {}
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override { return events_; }

 private:
  std::vector<framework::ClusterEventWithHint> events_;
};

class FakeQueueSort : public NamedPlugin, public framework::QueueSortPlugin {
 public:
  using NamedPlugin::NamedPlugin;
  bool Less(const framework::QueuedPodInfo& a, const framework::QueuedPodInfo& b) const override {
    return a.pod().Priority() > b.pod().Priority();
  }
};

// Rejects the nodes in `reject` with `status` (reasons kept, plugin set by the framework).
class FakeFilter : public NamedPlugin, public framework::FilterPlugin {
 public:
  FakeFilter(std::string name, std::set<std::string> reject, framework::Status status)
      : NamedPlugin(std::move(name)), reject_(std::move(reject)), status_(std::move(status)) {}
  framework::Status Filter(const framework::CycleState&, const api::Pod&, const cache::NodeInfo& node) const override {
    calls.fetch_add(1);
    return reject_.contains(node.name()) ? status_ : framework::Status();
  }
  mutable std::atomic<int> calls{0};

 private:
  std::set<std::string> reject_;
  framework::Status status_;
};

// Filter by a predicate on the node.
class FuncFilter : public NamedPlugin, public framework::FilterPlugin {
 public:
  using Fn = std::function<framework::Status(const cache::NodeInfo&)>;
  FuncFilter(std::string name, Fn fn) : NamedPlugin(std::move(name)), fn_(std::move(fn)) {}
  framework::Status Filter(const framework::CycleState&, const api::Pod&,
                           const cache::NodeInfo& node) const override {
    return fn_(node);
  }

 private:
  Fn fn_;
};

class FakePreFilter : public NamedPlugin, public framework::PreFilterPlugin, public framework::FilterPlugin {
 public:
  FakePreFilter(std::string name, framework::Status status, framework::PreFilterResult result = {})
      : NamedPlugin(std::move(name)), status_(std::move(status)), result_(std::move(result)) {}
  framework::Status PreFilter(framework::CycleState&, const api::Pod&, framework::PreFilterResult& result) override {
    result = result_;
    return status_;
  }
  framework::Status Filter(const framework::CycleState&, const api::Pod&, const cache::NodeInfo&) const override {
    filter_calls.fetch_add(1);
    return framework::Status(framework::Code::kUnschedulable, "filter of " + std::string(Name()) + " ran");
  }
  mutable std::atomic<int> filter_calls{0};

 private:
  framework::Status status_;
  framework::PreFilterResult result_;
};

// Scores fn(node); optionally normalizes by `normalize`.
class FakeScore : public NamedPlugin, public framework::ScorePlugin {
 public:
  using Fn = std::function<framework::Status(const cache::NodeInfo&, int64_t&)>;
  using NormalizeFn = std::function<framework::Status(std::span<framework::NodeScore>)>;
  FakeScore(std::string name, Fn fn, NormalizeFn normalize = nullptr)
      : NamedPlugin(std::move(name)), fn_(std::move(fn)), normalize_(std::move(normalize)) {}
  framework::Status Score(const framework::CycleState&, const api::Pod&, const cache::NodeInfo& node,
                          int64_t& score) const override {
    calls.fetch_add(1);
    return fn_(node, score);
  }
  bool HasNormalizeScore() const override { return normalize_ != nullptr; }
  framework::Status NormalizeScore(const framework::CycleState&, const api::Pod&,
                                   std::span<framework::NodeScore> scores) const override {
    return normalize_(scores);
  }
  mutable std::atomic<int> calls{0};

 private:
  Fn fn_;
  NormalizeFn normalize_;
};

class FakeReserve : public NamedPlugin, public framework::ReservePlugin {
 public:
  FakeReserve(std::string name, CallLog* log, framework::Status status = {})
      : NamedPlugin(std::move(name)), log_(log), status_(std::move(status)) {}
  framework::Status Reserve(framework::CycleState&, const api::Pod&, std::string_view) override {
    log_->Add("Reserve:" + std::string(Name()));
    return status_;
  }
  void Unreserve(framework::CycleState&, const api::Pod&, std::string_view) override {
    log_->Add("Unreserve:" + std::string(Name()));
  }

 private:
  CallLog* log_;
  framework::Status status_;
};

class FakePermit : public NamedPlugin, public framework::PermitPlugin {
 public:
  FakePermit(std::string name, framework::Status status, std::chrono::milliseconds timeout = {})
      : NamedPlugin(std::move(name)), status_(std::move(status)), timeout_(timeout) {}
  framework::Status Permit(framework::CycleState&, const api::Pod&, std::string_view,
                           std::chrono::milliseconds& timeout) override {
    timeout = timeout_;
    return status_;
  }

 private:
  framework::Status status_;
  std::chrono::milliseconds timeout_;
};

class FakeBind : public NamedPlugin, public framework::BindPlugin {
 public:
  FakeBind(std::string name, CallLog* log, framework::Status status = {})
      : NamedPlugin(std::move(name)), log_(log), status_(std::move(status)) {}
  framework::Status Bind(framework::CycleState&, const api::Pod&, std::string_view node) override {
    if (log_ != nullptr) log_->Add("Bind:" + std::string(Name()) + ":" + std::string(node));
    return status_;
  }

 private:
  CallLog* log_;
  framework::Status status_;
};

// An asynchronous bind plugin whose calls complete when the test says so.
class FakeAsyncBind : public FakeBind {
 public:
  using FakeBind::FakeBind;
  bool CanBindAsync() const override { return true; }
  void BindAsync(framework::CycleState& state, const api::Pod& pod, std::string_view node,
                 std::function<void(framework::Status)> done) override {
    pending.push_back([this, &state, &pod, node, done = std::move(done)] { done(Bind(state, pod, node)); });
  }
  // Completes the oldest outstanding call.
  void CompleteOne() {
    auto f = std::move(pending.front());
    pending.erase(pending.begin());
    f();
  }
  std::vector<std::function<void()>> pending;
};

// A plugin object handed to the registry: the factory returns it (once).
template <typename T, typename... Args>
framework::PluginFactory Once(Args... args) {
  return [=](const config::PluginArgs&, framework::Handle&) -> StatusOr<std::unique_ptr<framework::Plugin>> {
    return std::unique_ptr<framework::Plugin>(std::make_unique<T>(args...));
  };
}

// A factory returning a pre-built plugin (so the test keeps a pointer to it).
inline framework::PluginFactory Give(std::shared_ptr<std::unique_ptr<framework::Plugin>> holder) {
  return [holder](const config::PluginArgs&, framework::Handle&) -> StatusOr<std::unique_ptr<framework::Plugin>> {
    if (*holder == nullptr) return Internal("plugin already given out");
    return std::move(*holder);
  };
}

// Registers `plugin` under its name and returns a borrowed pointer to it.
template <typename T>
T* Register(framework::Registry& registry, std::unique_ptr<T> plugin) {
  T* raw = plugin.get();
  auto holder = std::make_shared<std::unique_ptr<framework::Plugin>>(std::move(plugin));
  registry[std::string(raw->Name())] = Give(holder);
  return raw;
}

inline void Enable(config::PluginSet& set, std::initializer_list<std::string> names) {
  for (const std::string& n : names) set.enabled.push_back(config::Plugin{n, 0});
}

// A profile with QueueSort "QS" and Bind "Bind" (both registered by BaseRegistry).
inline config::KubeSchedulerProfile BaseProfile() {
  config::KubeSchedulerProfile p;
  p.scheduler_name = "test";
  Enable(p.plugins.queue_sort, {"QS"});
  Enable(p.plugins.bind, {"Bind"});
  return p;
}

inline framework::Registry BaseRegistry() {
  framework::Registry r;
  r["QS"] = Once<FakeQueueSort>(std::string("QS"));
  r["Bind"] = Once<FakeBind>(std::string("Bind"), static_cast<CallLog*>(nullptr), framework::Status());
  return r;
}

}  // namespace ksched::testing
