#include "pkg/metrics/metrics.h"

#include <algorithm>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/metric_family.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "pkg/util/mutex.h"
#include "pkg/util/strings.h"

namespace ksched::metrics {
namespace {

using prometheus::BuildCounter;
using prometheus::BuildHistogram;
using prometheus::Histogram;

// Upstream's metrics.ExponentialBuckets(start, factor, count).
Histogram::BucketBoundaries ExponentialBuckets(double start, double factor, int count) {
  Histogram::BucketBoundaries buckets;
  buckets.reserve(count);
  double value = start;
  for (int i = 0; i < count; ++i) {
    buckets.push_back(value);
    value *= factor;
  }
  return buckets;
}

const Histogram::BucketBoundaries& LatencyBuckets() {  // 0.001 .. 16.384 s
  static const auto* buckets = new Histogram::BucketBoundaries(ExponentialBuckets(0.001, 2, 15));
  return *buckets;
}
const Histogram::BucketBoundaries& ExtensionPointBuckets() {  // 0.0001 .. 0.2048 s
  static const auto* buckets = new Histogram::BucketBoundaries(ExponentialBuckets(0.0001, 2, 12));
  return *buckets;
}
const Histogram::BucketBoundaries& PluginBuckets() {  // 1e-05 .. 0.022 s
  static const auto* buckets = new Histogram::BucketBoundaries(ExponentialBuckets(0.00001, 1.5, 20));
  return *buckets;
}
const Histogram::BucketBoundaries& PodDurationBuckets() {  // 0.01 .. 5242.88 s
  static const auto* buckets = new Histogram::BucketBoundaries(ExponentialBuckets(0.01, 2, 20));
  return *buckets;
}

// Upstream caps the `attempts` label so its cardinality stays bounded.
std::string AttemptsLabel(int attempts) {
  if (attempts >= 15) return "15+";
  return std::to_string(attempts < 1 ? 1 : attempts);
}

prometheus::MetricFamily GaugeFamily(std::string name, std::string help) {
  prometheus::MetricFamily family;
  family.name = std::move(name);
  family.help = std::move(help);
  family.type = prometheus::MetricType::Gauge;
  return family;
}

void AddGauge(prometheus::MetricFamily& family, std::vector<prometheus::ClientMetric::Label> labels, double value) {
  prometheus::ClientMetric metric;
  metric.label = std::move(labels);
  metric.gauge.value = value;
  family.metric.push_back(std::move(metric));
}

// prometheus-cpp's Family::Add constructs a whole new metric (for a histogram, every
// bucket) before it looks the labels up, so calling it per observation allocates on the
// hot path. Handles caches the metric of each label-value combination, keyed by the
// values joined with '\0' into a per-thread buffer: a hit costs a hash and a shared lock.
template <typename T>
class Handles {
 public:
  Handles(prometheus::Family<T>& family, std::vector<std::string> names,
          const Histogram::BucketBoundaries* buckets = nullptr)
      : family_(family), names_(std::move(names)), buckets_(buckets) {}

  T& Get(std::initializer_list<std::string_view> values) {
    thread_local std::string key;
    key.clear();
    for (std::string_view v : values) {
      key.append(v);
      key.push_back('\0');
    }
    {
      ReaderMutexLock lock(mu_);
      if (auto it = cache_.find(std::string_view(key)); it != cache_.end()) return *it->second;
    }
    prometheus::Labels labels;
    auto name = names_.begin();
    for (std::string_view v : values) labels.emplace(*name++, std::string(v));
    WriterMutexLock lock(mu_);
    T* metric;
    if constexpr (std::is_same_v<T, Histogram>) {
      metric = &family_.Add(labels, *buckets_);
    } else {
      metric = &family_.Add(labels);
    }
    cache_.emplace(key, metric);
    return *metric;
  }

 private:
  prometheus::Family<T>& family_;
  const std::vector<std::string> names_;
  const Histogram::BucketBoundaries* const buckets_;
  SharedMutex mu_;
  std::unordered_map<std::string, T*, StringViewHash, std::equal_to<>> cache_ GUARDED_BY(mu_);
};

prometheus::MetricFamily CounterFamily(std::string name, std::string help, double value) {
  prometheus::MetricFamily family;
  family.name = std::move(name);
  family.help = std::move(help);
  family.type = prometheus::MetricType::Counter;
  prometheus::ClientMetric metric;
  metric.counter.value = value;
  family.metric.push_back(std::move(metric));
  return family;
}

prometheus::MetricFamily OneGauge(std::string name, std::string help, double value) {
  auto family = GaugeFamily(std::move(name), std::move(help));
  AddGauge(family, {}, value);
  return family;
}

// client_golang's process collector on Linux (process_collector_procfs.go): CPU, memory,
// descriptors and start time from /proc/self.
void AddProcessFamilies(std::vector<prometheus::MetricFamily>& out) {
  std::ifstream stat_file("/proc/self/stat");
  std::string stat((std::istreambuf_iterator<char>(stat_file)), std::istreambuf_iterator<char>());
  // Fields after the command (which may hold spaces) start at the last ')'.
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return;
  std::istringstream rest(stat.substr(close + 2));
  std::vector<std::string> f{std::istream_iterator<std::string>(rest), std::istream_iterator<std::string>()};
  // man 5 proc: field 3 is state; utime 14, stime 15, starttime 22, vsize 23, rss 24.
  auto field = [&](size_t n) { return n - 3 < f.size() ? std::strtod(f[n - 3].c_str(), nullptr) : 0.0; };
  const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(::sysconf(_SC_PAGESIZE));
  // Constant for the process: /proc/stat's boot time is read on the first scrape only.
  static const double start_time = [&] {
    double boot_time = 0;
    std::ifstream stat_all("/proc/stat");
    for (std::string line; std::getline(stat_all, line);) {
      if (line.rfind("btime ", 0) == 0) boot_time = std::strtod(line.c_str() + 6, nullptr);
    }
    return boot_time + field(22) / ticks;
  }();
  size_t open_fds = 0;
  if (DIR* d = ::opendir("/proc/self/fd")) {
    while (dirent* e = ::readdir(d)) open_fds += e->d_name[0] != '.';
    ::closedir(d);
    if (open_fds > 0) --open_fds;  // the directory's own descriptor
  }
  rlimit fds{}, as{};
  ::getrlimit(RLIMIT_NOFILE, &fds);
  ::getrlimit(RLIMIT_AS, &as);
  auto limit = [](rlim_t v) { return v == RLIM_INFINITY ? 1.8446744073709552e19 : static_cast<double>(v); };
  out.push_back(CounterFamily("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.",
                              (field(14) + field(15)) / ticks));
  out.push_back(OneGauge("process_max_fds", "Maximum number of open file descriptors.", limit(fds.rlim_cur)));
  out.push_back(OneGauge("process_open_fds", "Number of open file descriptors.", static_cast<double>(open_fds)));
  out.push_back(OneGauge("process_resident_memory_bytes", "Resident memory size in bytes.", field(24) * page));
  out.push_back(OneGauge("process_start_time_seconds", "Start time of the process since unix epoch in seconds.",
                         start_time));
  out.push_back(OneGauge("process_virtual_memory_bytes", "Virtual memory size in bytes.", field(23)));
  out.push_back(OneGauge("process_virtual_memory_max_bytes",
                         "Maximum amount of virtual memory available in bytes.", limit(as.rlim_cur)));
}

}  // namespace

// Builder-created families are owned by the registry; these are borrowed references.
struct Metrics::Families {
  explicit Families(prometheus::Registry& r)
      : schedule_attempts(BuildCounter()
                              .Name("scheduler_schedule_attempts_total")
                              .Help("[STABLE] Number of attempts to schedule pods, by the result. 'unschedulable' "
                                    "means a pod could not be scheduled, while 'error' means an internal scheduler "
                                    "problem.")
                              .Register(r)),
        attempt_duration(BuildHistogram()
                             .Name("scheduler_scheduling_attempt_duration_seconds")
                             .Help("[STABLE] Scheduling attempt latency in seconds (scheduling algorithm + binding)")
                             .Register(r)),
        algorithm_duration(BuildHistogram()
                               .Name("scheduler_scheduling_algorithm_duration_seconds")
                               .Help("[BETA] Scheduling algorithm latency in seconds")
                               .Register(r)),
        pod_attempts(BuildHistogram()
                         .Name("scheduler_pod_scheduling_attempts")
                         .Help("[STABLE] Number of attempts to successfully schedule a pod.")
                         .Register(r)),
        pod_duration(BuildHistogram()
                         .Name("scheduler_pod_scheduling_duration_seconds")
                         .Help("[STABLE] (Deprecated since 1.29.0) E2e latency for a pod being scheduled which "
                               "may include multiple scheduling attempts.")
                         .Register(r)),
        pod_sli_duration(BuildHistogram()
                             .Name("scheduler_pod_scheduling_sli_duration_seconds")
                             .Help("[BETA] E2e latency for a pod being scheduled, from the time the pod enters the "
                                   "scheduling queue and might involve multiple scheduling attempts.")
                             .Register(r)),
        extension_point(BuildHistogram()
                            .Name("scheduler_framework_extension_point_duration_seconds")
                            .Help("[STABLE] Latency for running all plugins of a specific extension point.")
                            .Register(r)),
        plugin(BuildHistogram()
                   .Name("scheduler_plugin_execution_duration_seconds")
                   .Help("[ALPHA] Duration for running a plugin at a specific extension point.")
                   .Register(r)),
        permit_wait(BuildHistogram()
                        .Name("scheduler_permit_wait_duration_seconds")
                        .Help("[ALPHA] Duration of waiting on permit.")
                        .Register(r)),
        extender_call(BuildHistogram()
                          .Name("ksched_extender_call_duration_seconds")
                          .Help("Duration of calls to HTTP scheduler extenders, by extender (its URL prefix), call "
                                "(filter, prioritize, bind, preempt) and result (success, error).")
                          .Register(r)),
        pod_group_admitted(BuildCounter()
                               .Name("ksched_pod_group_admissions_total")
                               .Help("Gangs (Coscheduling PodGroups) admitted: minMember members assumed or bound, "
                                     "the waiting ones allowed together.")
                               .Register(r)
                               .Add({})),
        pod_group_rejected(BuildCounter()
                               .Name("ksched_pod_group_rejections_total")
                               .Help("Gangs turned away with their waiting members released, by reason (timeout, "
                                     "member_unschedulable, member_failed).")
                               .Register(r)),
        pod_groups_waiting(prometheus::BuildGauge()
                               .Name("ksched_pod_groups_waiting")
                               .Help("Gangs with members waiting at Permit for the rest of the group.")
                               .Register(r)
                               .Add({})),
        incoming(BuildCounter()
                     .Name("scheduler_queue_incoming_pods_total")
                     .Help("[STABLE] Number of pods added to scheduling queues by event and queue type.")
                     .Register(r)),
        preemption_attempts(BuildCounter()
                                .Name("scheduler_preemption_attempts_total")
                                .Help("[STABLE] Total preemption attempts in the cluster till now")
                                .Register(r)
                                .Add({})),
        preemption_victims(BuildHistogram()
                               .Name("scheduler_preemption_victims")
                               .Help("[STABLE] Number of selected preemption victims")
                               .Register(r)
                               .Add({}, ExponentialBuckets(1, 2, 7))),
        algorithm(algorithm_duration.Add({}, LatencyBuckets())),
        attempts(pod_attempts.Add({}, ExponentialBuckets(1, 2, 5))),
        attempt_counts(schedule_attempts, {"result", "profile"}),
        attempt_durations(attempt_duration, {"result", "profile"}, &LatencyBuckets()),
        pod_durations(pod_duration, {"attempts"}, &PodDurationBuckets()),
        pod_sli_durations(pod_sli_duration, {"attempts"}, &PodDurationBuckets()),
        extension_points(extension_point, {"extension_point", "status", "profile"}, &ExtensionPointBuckets()),
        plugins(plugin, {"plugin", "extension_point", "status"}, &PluginBuckets()),
        permit_waits(permit_wait, {"result"}, &LatencyBuckets()),
        extender_calls(extender_call, {"extender", "call", "result"}, &LatencyBuckets()),
        pod_group_rejections(pod_group_rejected, {"reason"}),
        incomings(incoming, {"queue", "event"}) {}

  prometheus::Family<prometheus::Counter>& schedule_attempts;
  prometheus::Family<Histogram>& attempt_duration;
  prometheus::Family<Histogram>& algorithm_duration;
  prometheus::Family<Histogram>& pod_attempts;
  prometheus::Family<Histogram>& pod_duration;
  prometheus::Family<Histogram>& pod_sli_duration;
  prometheus::Family<Histogram>& extension_point;
  prometheus::Family<Histogram>& plugin;
  prometheus::Family<Histogram>& permit_wait;
  prometheus::Family<Histogram>& extender_call;
  prometheus::Counter& pod_group_admitted;
  prometheus::Family<prometheus::Counter>& pod_group_rejected;
  prometheus::Gauge& pod_groups_waiting;
  prometheus::Family<prometheus::Counter>& incoming;
  prometheus::Counter& preemption_attempts;
  Histogram& preemption_victims;
  Histogram& algorithm;
  Histogram& attempts;
  Handles<prometheus::Counter> attempt_counts;
  Handles<Histogram> attempt_durations;
  Handles<Histogram> pod_durations;
  Handles<Histogram> pod_sli_durations;
  Handles<Histogram> extension_points;
  Handles<Histogram> plugins;
  Handles<Histogram> permit_waits;
  Handles<Histogram> extender_calls;
  Handles<prometheus::Counter> pod_group_rejections;
  Handles<prometheus::Counter> incomings;
};

Metrics::Metrics(MetricsOptions options)
    : registry_(std::make_shared<prometheus::Registry>()),
      families_(std::make_unique<Families>(*registry_)),
      options_(std::move(options)) {
  MutexLock lock(mu_);
  pending_source_ = options_.pending_pods;
}

Metrics::~Metrics() = default;

void Metrics::IncomingPod(std::string_view queue, std::string_view event) {
  families_->incomings.Get({queue, event}).Increment();
}

void Metrics::SetPendingPodsSource(std::function<queue::PendingPodCounts()> source) {
  MutexLock lock(mu_);
  // The queue clears its reader on destruction; fall back to the option then.
  pending_source_ = source ? std::move(source) : options_.pending_pods;
}

void Metrics::ObserveExtensionPoint(std::string_view point, framework::Code code, std::string_view profile,
                                    double seconds) {
  families_->extension_points.Get({point, framework::CodeName(code), profile}).Observe(seconds);
}

void Metrics::ObservePlugin(std::string_view point, std::string_view plugin, framework::Code code, double seconds) {
  families_->plugins.Get({plugin, point, framework::CodeName(code)}).Observe(seconds);
}

void Metrics::ObservePermitWait(framework::Code code, double seconds) {
  families_->permit_waits.Get({framework::CodeName(code)}).Observe(seconds);
}

void Metrics::ObserveExtenderCall(std::string_view extender, std::string_view call, bool ok, double seconds) {
  families_->extender_calls.Get({extender, call, ok ? "success" : "error"}).Observe(seconds);
}

void Metrics::ObservePodGroupAdmitted() { families_->pod_group_admitted.Increment(); }

void Metrics::ObservePodGroupRejected(std::string_view reason) {
  families_->pod_group_rejections.Get({reason}).Increment();
}

void Metrics::AddPodGroupsWaiting(int delta) { families_->pod_groups_waiting.Increment(delta); }

void Metrics::ObserveAttempt(std::string_view result, std::string_view profile, double seconds) {
  families_->attempt_counts.Get({result, profile}).Increment();
  families_->attempt_durations.Get({result, profile}).Observe(seconds);
}

void Metrics::ObserveAlgorithm(double seconds) { families_->algorithm.Observe(seconds); }

void Metrics::ObservePodScheduled(int attempts, double seconds) {
  families_->attempts.Observe(attempts);
  const std::string label = AttemptsLabel(attempts);
  families_->pod_durations.Get({label}).Observe(seconds);
  families_->pod_sli_durations.Get({label}).Observe(seconds);
}

void Metrics::ObservePreemptionAttempt() { families_->preemption_attempts.Increment(); }

void Metrics::ObservePreemptionVictims(int victims) { families_->preemption_victims.Observe(victims); }

void Metrics::SetGoroutinesSource(std::string operation, std::function<int64_t()> source) {
  MutexLock lock(mu_);
  if (source) {
    goroutine_sources_[std::move(operation)] = std::move(source);
  } else {
    goroutine_sources_.erase(operation);
  }
}

std::string Metrics::Serialize() const {
  std::vector<prometheus::MetricFamily> families = registry_->Collect();
  {
    MutexLock lock(mu_);
    if (pending_source_) {
      queue::PendingPodCounts counts = pending_source_();
      auto family = GaugeFamily("scheduler_pending_pods",
                                "[STABLE] Number of pending pods, by the queue type. 'active' means number of pods in "
                                "activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means number of "
                                "pods in unschedulablePods that the scheduler attempted to schedule and failed; "
                                "'gated' is the number of unschedulable pods that the scheduler never attempted to "
                                "schedule because they are gated.");
      AddGauge(family, {{"queue", std::string(queue::kActiveQueueName)}}, counts.active);
      AddGauge(family, {{"queue", std::string(queue::kBackoffQueueName)}}, counts.backoff);
      AddGauge(family, {{"queue", std::string(queue::kGatedQueueName)}}, counts.gated);
      AddGauge(family, {{"queue", std::string(queue::kUnschedulableQueueName)}}, counts.unschedulable);
      families.push_back(std::move(family));
    }
    if (!goroutine_sources_.empty()) {
      auto family = GaugeFamily("scheduler_goroutines",
                                "[ALPHA] Number of running goroutines split by the work they do such as binding.");
      for (const auto& [operation, source] : goroutine_sources_) {
        AddGauge(family, {{"operation", operation}}, static_cast<double>(source()));
      }
      families.push_back(std::move(family));
    }
    if (options_.cache_sizes) {
      CacheSizes sizes = options_.cache_sizes();
      auto family = GaugeFamily("scheduler_cache_size",
                                "[ALPHA] Number of nodes, pods, and assumed (bound) pods in the scheduler cache.");
      AddGauge(family, {{"type", "assumed_pods"}}, sizes.assumed_pods);
      AddGauge(family, {{"type", "nodes"}}, sizes.nodes);
      AddGauge(family, {{"type", "pods"}}, sizes.pods);
      families.push_back(std::move(family));
    }
    if (options_.unschedulable_pods) {
      auto family = GaugeFamily("scheduler_unschedulable_pods",
                                "[ALPHA] The number of unschedulable pods broken down by plugin name. A pod will "
                                "increment the gauge for all plugins that caused it to not schedule and so this "
                                "metric have meaning only when broken down by plugin.");
      for (const auto& [key, count] : options_.unschedulable_pods()) {
        AddGauge(family, {{"plugin", key.first}, {"profile", key.second}}, count);
      }
      families.push_back(std::move(family));
    }
    if (options_.stuck_pods) {
      auto family = GaugeFamily("ksched_stuck_pods",
                                "Number of pending pods that are stuck: unschedulable past --stuck-after with the "
                                "same verdict in their last attempts, or with no cluster event that can move them.");
      for (const auto& [profile, count] : options_.stuck_pods()) AddGauge(family, {{"profile", profile}}, count);
      families.push_back(std::move(family));
    }
  }
  if (options_.leader) {
    if (auto leader = options_.leader()) {
      auto family = GaugeFamily("leader_election_master_status",
                                "[ALPHA] Gauge of if the reporting system is master of the relevant lease, 0 "
                                "indicates backup, 1 indicates master. 'name' is the string used to identify the "
                                "lease. Please make sure to group by name.");
      AddGauge(family, {{"name", leader->first}}, leader->second ? 1 : 0);
      families.push_back(std::move(family));
    }
  }
  if (options_.process_metrics) AddProcessFamilies(families);
  // Hidden (deprecated past upstream's grace) unless asked for; disabled in any case.
  std::erase_if(families, [this](const prometheus::MetricFamily& f) {
    if (!options_.show_hidden && f.name == "scheduler_pod_scheduling_duration_seconds") return true;
    return std::find(options_.disabled.begin(), options_.disabled.end(), f.name) != options_.disabled.end();
  });
  return prometheus::TextSerializer().Serialize(families);
}

}  // namespace ksched::metrics
