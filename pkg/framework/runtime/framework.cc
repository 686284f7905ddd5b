// Framework construction from a profile, and its queue-facing accessors. The Run*
// methods live in framework_run.cc.
#include "config/effective_plugins.h"
#include "pkg/framework/runtime/framework.h"

#include <set>

namespace ksched::framework::runtime {
namespace {

// What Handle::Binder() returns when the scheduler gave none (unit tests of plugins that
// never bind): binding fails loudly instead of dereferencing null.
class MissingBinder : public PodBinder {
 public:
  ksched::Status Bind(const api::Pod& pod, std::string_view node_name) override {
    return Internal("no pod binder configured for this framework");
  }
};

template <typename T>
void Collect(const std::vector<config::EnabledPlugin>& enabled,
             const std::map<std::string, std::unique_ptr<Plugin>, std::less<>>& plugins, std::vector<T*>& out) {
  for (const config::EnabledPlugin& e : enabled) {
    // EffectivePlugins only lists plugins the lookup said implement the point.
    out.push_back(dynamic_cast<T*>(plugins.find(e.name)->second.get()));
  }
}

}  // namespace

MetricsRecorder& NoopMetricsRecorder() {
  static MetricsRecorder noop;
  return noop;
}

config::ExtensionPointSet ExtensionPointsOf(const Plugin& plugin) {
  using E = config::ExtensionPoint;
  config::ExtensionPointSet set = 0;
  const Plugin* p = &plugin;
  if (dynamic_cast<const PreEnqueuePlugin*>(p)) set |= config::Bit(E::kPreEnqueue);
  if (dynamic_cast<const QueueSortPlugin*>(p)) set |= config::Bit(E::kQueueSort);
  if (dynamic_cast<const PreFilterPlugin*>(p)) set |= config::Bit(E::kPreFilter);
  if (dynamic_cast<const FilterPlugin*>(p)) set |= config::Bit(E::kFilter);
  if (dynamic_cast<const PostFilterPlugin*>(p)) set |= config::Bit(E::kPostFilter);
  if (dynamic_cast<const PreScorePlugin*>(p)) set |= config::Bit(E::kPreScore);
  if (dynamic_cast<const ScorePlugin*>(p)) set |= config::Bit(E::kScore);
  if (dynamic_cast<const ReservePlugin*>(p)) set |= config::Bit(E::kReserve);
  if (dynamic_cast<const PermitPlugin*>(p)) set |= config::Bit(E::kPermit);
  if (dynamic_cast<const PreBindPlugin*>(p)) set |= config::Bit(E::kPreBind);
  if (dynamic_cast<const BindPlugin*>(p)) set |= config::Bit(E::kBind);
  if (dynamic_cast<const PostBindPlugin*>(p)) set |= config::Bit(E::kPostBind);
  return set;
}

Framework::Framework(FrameworkOptions options) : options_(std::move(options)), snapshot_(options_.snapshot) {
  if (options_.metrics == nullptr) options_.metrics = &NoopMetricsRecorder();
  if (options_.clock == nullptr) options_.clock = &RealClock();
  metrics_enabled_ = options_.metrics != &NoopMetricsRecorder();
  if (options_.parallelizer != nullptr) {
    parallelizer_ = options_.parallelizer;
  } else {
    own_parallelizer_ = std::make_unique<Parallelizer>(options_.parallelism);
    parallelizer_ = own_parallelizer_.get();
  }
}

Framework::~Framework() = default;

StatusOr<std::unique_ptr<Framework>> NewFramework(const Registry& registry, const config::KubeSchedulerProfile& profile,
                                                  FrameworkOptions options) {
  std::optional<int32_t> global_percentage = options.percentage_of_nodes_to_score;
  // The constructor is private so only this function can make a half-built framework.
  std::unique_ptr<Framework> fw(new Framework(std::move(options)));
  fw->profile_name_ = profile.scheduler_name;
  fw->percentage_of_nodes_to_score_ =
      profile.percentage_of_nodes_to_score.has_value() ? profile.percentage_of_nodes_to_score : global_percentage;

  std::map<std::string_view, const config::PluginArgs*> args;
  for (const config::PluginConfig& pc : profile.plugin_config) {
    if (!args.emplace(pc.name, &pc.args).second) {
      return InvalidArgument("repeated config for plugin " + pc.name);
    }
  }

  // Plugins are instantiated when EffectivePlugins first asks about them (exactly the
  // plugins the profile needs, like upstream's pluginsNeeded), and their capabilities
  // come from the object itself, so an out-of-tree plugin needs no table entry.
  ksched::Status init_error;
  auto lookup = [&](std::string_view name) -> std::optional<config::ExtensionPointSet> {
    auto it = fw->plugins_.find(name);
    if (it == fw->plugins_.end()) {
      auto factory = registry.find(name);
      if (factory == registry.end()) return std::nullopt;
      auto a = args.find(name);
      config::PluginArgs plugin_args = a != args.end() ? *a->second : config::DefaultArgsFor(name);
      StatusOr<std::unique_ptr<Plugin>> plugin = factory->second(plugin_args, *fw);
      if (!plugin.ok() || *plugin == nullptr) {
        if (init_error.ok()) {
          init_error = (plugin.ok() ? Internal("factory returned no plugin") : plugin.status())
                           .WithContext("initializing plugin \"" + std::string(name) + "\"");
        }
        return std::nullopt;
      }
      it = fw->plugins_.emplace(std::string(name), std::move(*plugin)).first;
    }
    return ExtensionPointsOf(*it->second);
  };
  StatusOr<config::ProfilePlugins> enabled = config::EffectivePlugins(profile, lookup);
  if (!init_error.ok()) return init_error;
  if (!enabled.ok()) return enabled.status();
  fw->enabled_ = std::move(*enabled);

  using E = config::ExtensionPoint;
  const auto& plugins = fw->plugins_;
  Collect(fw->enabled_.at(E::kPreEnqueue), plugins, fw->pre_enqueue_);
  std::vector<QueueSortPlugin*> queue_sort;
  Collect(fw->enabled_.at(E::kQueueSort), plugins, queue_sort);
  fw->queue_sort_ = queue_sort.front();  // EffectivePlugins checked there is exactly one
  Collect(fw->enabled_.at(E::kPreFilter), plugins, fw->pre_filter_);
  Collect(fw->enabled_.at(E::kFilter), plugins, fw->filter_);
  for (FilterPlugin* pl : fw->filter_) fw->filter_names_.push_back(Status::InternedName(pl->Name()));
  Collect(fw->enabled_.at(E::kPostFilter), plugins, fw->post_filter_);
  Collect(fw->enabled_.at(E::kPreScore), plugins, fw->pre_score_);
  for (const config::EnabledPlugin& e : fw->enabled_.at(E::kScore)) {
    if (e.weight <= 0) {
      return InvalidArgument("score plugin \"" + e.name + "\" is not configured with weight");
    }
    fw->score_.push_back({dynamic_cast<ScorePlugin*>(plugins.find(e.name)->second.get()), e.weight});
  }
  Collect(fw->enabled_.at(E::kReserve), plugins, fw->reserve_);
  Collect(fw->enabled_.at(E::kPermit), plugins, fw->permit_);
  Collect(fw->enabled_.at(E::kPreBind), plugins, fw->pre_bind_);
  Collect(fw->enabled_.at(E::kBind), plugins, fw->bind_);
  Collect(fw->enabled_.at(E::kPostBind), plugins, fw->post_bind_);
  return fw;
}

const cache::Snapshot& Framework::Snapshot() const {
  static const cache::Snapshot kEmpty;
  const cache::Snapshot* s = snapshot_.load(std::memory_order_acquire);
  return s != nullptr ? *s : kEmpty;
}

PodBinder& Framework::Binder() {
  static MissingBinder missing;
  return options_.binder != nullptr ? *options_.binder : missing;
}

LessFn Framework::QueueSortLess() const {
  return [sort = queue_sort_](const QueuedPodInfo& a, const QueuedPodInfo& b) { return sort->Less(a, b); };
}

std::vector<Plugin*> Framework::RejectingPlugins() const {
  std::vector<Plugin*> out;
  std::set<const Plugin*> seen;
  auto add = [&](auto& list) {
    for (Plugin* p : list) {
      if (seen.insert(p).second) out.push_back(p);
    }
  };
  add(pre_enqueue_);
  add(pre_filter_);
  add(filter_);
  add(reserve_);
  add(permit_);
  return out;
}

bool Framework::RejectWaitingPod(std::string_view uid, std::string_view plugin, std::string_view message) {
  std::shared_ptr<WaitingPod> wp = waiting_pods_.Get(uid);
  if (wp == nullptr) return false;
  wp->Reject(plugin, std::string(message));
  return true;
}

int Framework::AllowWaitingPods(const std::function<bool(const api::Pod&)>& match, std::string_view plugin) {
  int n = 0;
  waiting_pods_.Iterate([&](WaitingPod& wp) {
    if (!match(wp.pod())) return;
    wp.Allow(plugin);
    ++n;
  });
  return n;
}

int Framework::RejectWaitingPods(const std::function<bool(const api::Pod&)>& match, std::string_view plugin,
                                 std::string_view message) {
  int n = 0;
  waiting_pods_.Iterate([&](WaitingPod& wp) {
    if (!match(wp.pod())) return;
    wp.Reject(plugin, std::string(message));
    ++n;
  });
  return n;
}

int Framework::CountWaitingPods(const std::function<bool(const api::Pod&)>& match) const {
  int n = 0;
  waiting_pods_.Iterate([&](WaitingPod& wp) { n += wp.Undecided() && match(wp.pod()) ? 1 : 0; });
  return n;
}

std::map<std::string, std::vector<std::string>> Framework::ListPlugins() const {
  std::map<std::string, std::vector<std::string>> out;
  for (size_t i = 0; i < config::kNumExtensionPoints; ++i) {
    auto point = static_cast<config::ExtensionPoint>(i);
    const auto& list = enabled_.at(point);
    if (list.empty()) continue;
    auto& names = out[std::string(config::ExtensionPointName(point))];
    for (const config::EnabledPlugin& e : list) names.push_back(e.name);
  }
  return out;
}

}  // namespace ksched::framework::runtime
