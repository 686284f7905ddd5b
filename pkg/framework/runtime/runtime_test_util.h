// Small fake plugins and builders for the runtime tests.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "config/types.h"
#include "pkg/api/types.h"
#include "pkg/cache/snapshot.h"
#include "pkg/framework/interface.h"
#include "pkg/framework/registry.h"
#include "pkg/framework/runtime/framework.h"
#include "pkg/util/mutex.h"

namespace ksched::framework::runtime::testing {

inline api::NodePtr MakeNode(std::string name) {
  auto n = std::make_shared<api::Node>();
  n->metadata.name = std::move(name);
  n->metadata.uid = "uid-" + n->metadata.name;
  return n;
}

inline api::PodPtr MakePod(std::string name, int32_t priority = 0, std::string node = "") {
  auto p = std::make_shared<api::Pod>();
  p->metadata.namespace_ = "default";
  p->metadata.name = std::move(name);
  p->metadata.uid = "uid-" + p->metadata.name;
  p->spec.priority = priority;
  p->spec.node_name = std::move(node);
  return p;
}

inline cache::Snapshot MakeSnapshot(int num_nodes, std::vector<api::PodPtr> pods = {}) {
  std::vector<api::NodePtr> nodes;
  for (int i = 0; i < num_nodes; ++i) nodes.push_back(MakeNode("node-" + std::to_string(i)));
  return cache::Snapshot::FromObjects(nodes, pods);
}

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

class NamedPlugin : public virtual Plugin {
 public:
  explicit NamedPlugin(std::string name) : name_(std::move(name)) {}
  std::string_view Name() const override { return name_; }

 private:
  std::string name_;
};

class FakeQueueSort : public NamedPlugin, public QueueSortPlugin {
 public:
  using NamedPlugin::NamedPlugin;
  bool Less(const QueuedPodInfo& a, const QueuedPodInfo& b) const override {
    return a.pod().Priority() > b.pod().Priority();
  }
};

// Rejects the nodes in `reject` with `status` (reasons kept, plugin set by the framework).
class FakeFilter : public NamedPlugin, public FilterPlugin {
 public:
  FakeFilter(std::string name, std::set<std::string> reject, Status status)
      : NamedPlugin(std::move(name)), reject_(std::move(reject)), status_(std::move(status)) {}
  Status Filter(const CycleState&, const api::Pod&, const cache::NodeInfo& node) const override {
    calls.fetch_add(1);
    return reject_.contains(node.name()) ? status_ : Status();
  }
  mutable std::atomic<int> calls{0};

 private:
  std::set<std::string> reject_;
  Status status_;
};

// Filter by a predicate on the node.
class FuncFilter : public NamedPlugin, public FilterPlugin {
 public:
  using Fn = std::function<Status(const cache::NodeInfo&)>;
  FuncFilter(std::string name, Fn fn) : NamedPlugin(std::move(name)), fn_(std::move(fn)) {}
  Status Filter(const CycleState&, const api::Pod&, const cache::NodeInfo& node) const override { return fn_(node); }

 private:
  Fn fn_;
};

class FakePreFilter : public NamedPlugin, public PreFilterPlugin, public FilterPlugin {
 public:
  FakePreFilter(std::string name, Status status, PreFilterResult result = {})
      : NamedPlugin(std::move(name)), status_(std::move(status)), result_(std::move(result)) {}
  Status PreFilter(CycleState&, const api::Pod&, PreFilterResult& result) override {
    result = result_;
    return status_;
  }
  Status Filter(const CycleState&, const api::Pod&, const cache::NodeInfo&) const override {
    filter_calls.fetch_add(1);
    return Status(Code::kUnschedulable, "filter of " + std::string(Name()) + " ran");
  }
  mutable std::atomic<int> filter_calls{0};

 private:
  Status status_;
  PreFilterResult result_;
};

// Scores fn(node); optionally normalizes by `normalize`.
class FakeScore : public NamedPlugin, public ScorePlugin {
 public:
  using Fn = std::function<Status(const cache::NodeInfo&, int64_t&)>;
  using NormalizeFn = std::function<Status(std::span<NodeScore>)>;
  FakeScore(std::string name, Fn fn, NormalizeFn normalize = nullptr)
      : NamedPlugin(std::move(name)), fn_(std::move(fn)), normalize_(std::move(normalize)) {}
  Status Score(const CycleState&, const api::Pod&, const cache::NodeInfo& node, int64_t& score) const override {
    calls.fetch_add(1);
    return fn_(node, score);
  }
  bool HasNormalizeScore() const override { return normalize_ != nullptr; }
  Status NormalizeScore(const CycleState&, const api::Pod&, std::span<NodeScore> scores) const override {
    return normalize_(scores);
  }
  mutable std::atomic<int> calls{0};

 private:
  Fn fn_;
  NormalizeFn normalize_;
};

class FakeReserve : public NamedPlugin, public ReservePlugin {
 public:
  FakeReserve(std::string name, CallLog* log, Status status = {})
      : NamedPlugin(std::move(name)), log_(log), status_(std::move(status)) {}
  Status Reserve(CycleState&, const api::Pod&, std::string_view) override {
    log_->Add("Reserve:" + std::string(Name()));
    return status_;
  }
  void Unreserve(CycleState&, const api::Pod&, std::string_view) override {
    log_->Add("Unreserve:" + std::string(Name()));
  }

 private:
  CallLog* log_;
  Status status_;
};

class FakePermit : public NamedPlugin, public PermitPlugin {
 public:
  FakePermit(std::string name, Status status, std::chrono::milliseconds timeout = {})
      : NamedPlugin(std::move(name)), status_(std::move(status)), timeout_(timeout) {}
  Status Permit(CycleState&, const api::Pod&, std::string_view, std::chrono::milliseconds& timeout) override {
    timeout = timeout_;
    return status_;
  }

 private:
  Status status_;
  std::chrono::milliseconds timeout_;
};

class FakeBind : public NamedPlugin, public BindPlugin {
 public:
  FakeBind(std::string name, CallLog* log, Status status = {})
      : NamedPlugin(std::move(name)), log_(log), status_(std::move(status)) {}
  Status Bind(CycleState&, const api::Pod&, std::string_view node) override {
    if (log_ != nullptr) log_->Add("Bind:" + std::string(Name()) + ":" + std::string(node));
    return status_;
  }

 private:
  CallLog* log_;
  Status status_;
};

// An asynchronous bind plugin whose calls complete when the test says so.
class FakeAsyncBind : public FakeBind {
 public:
  using FakeBind::FakeBind;
  bool CanBindAsync() const override { return true; }
  void BindAsync(CycleState& state, const api::Pod& pod, std::string_view node,
                 std::function<void(Status)> done) override {
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
PluginFactory Once(Args... args) {
  return [=](const config::PluginArgs&, Handle&) -> StatusOr<std::unique_ptr<Plugin>> {
    return std::unique_ptr<Plugin>(std::make_unique<T>(args...));
  };
}

// A factory returning a pre-built plugin (so the test keeps a pointer to it).
inline PluginFactory Give(std::shared_ptr<std::unique_ptr<Plugin>> holder) {
  return [holder](const config::PluginArgs&, Handle&) -> StatusOr<std::unique_ptr<Plugin>> {
    if (*holder == nullptr) return Internal("plugin already given out");
    return std::move(*holder);
  };
}

// Registers `plugin` under its name and returns a borrowed pointer to it.
template <typename T>
T* Register(Registry& registry, std::unique_ptr<T> plugin) {
  T* raw = plugin.get();
  auto holder = std::make_shared<std::unique_ptr<Plugin>>(std::move(plugin));
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

inline Registry BaseRegistry() {
  Registry r;
  r["QS"] = Once<FakeQueueSort>(std::string("QS"));
  r["Bind"] = Once<FakeBind>(std::string("Bind"), static_cast<CallLog*>(nullptr), Status());
  return r;
}

}  // namespace ksched::framework::runtime::testing
