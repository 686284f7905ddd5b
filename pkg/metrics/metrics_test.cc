#include "pkg/metrics/metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <sstream>
#include <string>
#include <vector>

namespace ksched::metrics {
namespace {

using framework::Code;
using ::testing::Contains;
using ::testing::Not;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Sample lines (no comments) whose metric name starts with `prefix` followed by '{' or ' '.
std::vector<std::string> Samples(const std::string& text, const std::string& name) {
  std::vector<std::string> out;
  for (const std::string& line : Lines(text)) {
    if (line.rfind(name, 0) != 0 || line.size() <= name.size()) continue;
    char next = line[name.size()];
    if (next == '{' || next == ' ') out.push_back(line);
  }
  return out;
}

TEST(MetricsTest, CountersAndHistogramsAfterKnownSequence) {
  Metrics m(MetricsOptions{.show_hidden = true});  // the deprecated duration family too
  m.ObserveAttempt("scheduled", "default-scheduler", 0.003);
  m.ObserveAttempt("scheduled", "default-scheduler", 0.5);
  m.ObserveAttempt("unschedulable", "default-scheduler", 0.002);
  m.ObserveAlgorithm(0.0015);
  m.ObservePodScheduled(1, 0.02);
  m.ObservePodScheduled(3, 1.0);
  m.ObservePodScheduled(20, 100.0);
  m.IncomingPod(queue::kActiveQueueName, "PodAdd");
  m.IncomingPod(queue::kActiveQueueName, "PodAdd");
  m.IncomingPod(queue::kUnschedulableQueueName, "ScheduleAttemptFailure");
  m.ObservePreemptionAttempt();
  m.ObserveExtensionPoint("Filter", Code::kSuccess, "default-scheduler", 0.00015);
  m.ObservePlugin("Filter", "NodeName", Code::kUnschedulable, 0.00001);
  const std::string text = m.Serialize();

  EXPECT_THAT(Samples(text, "scheduler_schedule_attempts_total"),
              ::testing::UnorderedElementsAre(
                  R"(scheduler_schedule_attempts_total{profile="default-scheduler",result="scheduled"} 2)",
                  R"(scheduler_schedule_attempts_total{profile="default-scheduler",result="unschedulable"} 1)"));
  EXPECT_THAT(Samples(text, "scheduler_queue_incoming_pods_total"),
              ::testing::UnorderedElementsAre(
                  R"(scheduler_queue_incoming_pods_total{event="PodAdd",queue="active"} 2)",
                  R"(scheduler_queue_incoming_pods_total{event="ScheduleAttemptFailure",queue="unschedulable"} 1)"));
  EXPECT_THAT(Samples(text, "scheduler_preemption_attempts_total"),
              ::testing::ElementsAre("scheduler_preemption_attempts_total 1"));

  // Attempt duration: Exp(0.001, 2, 15) buckets, cumulative counts.
  const auto lines = Lines(text);
  const std::string sched = R"(scheduler_scheduling_attempt_duration_seconds_bucket{profile="default-scheduler",result="scheduled",le=")";
  EXPECT_THAT(lines, Contains(sched + R"(0.001"} 0)"));
  EXPECT_THAT(lines, Contains(sched + R"(0.002"} 0)"));
  EXPECT_THAT(lines, Contains(sched + R"(0.004"} 1)"));
  EXPECT_THAT(lines, Contains(sched + R"(0.512"} 2)"));
  EXPECT_THAT(lines, Contains(sched + R"(16.384"} 2)"));
  EXPECT_THAT(lines, Contains(sched + R"(+Inf"} 2)"));
  EXPECT_THAT(lines, Contains(R"(scheduler_scheduling_attempt_duration_seconds_count{profile="default-scheduler",result="scheduled"} 2)"));
  EXPECT_THAT(lines, Contains(R"(scheduler_scheduling_attempt_duration_seconds_sum{profile="default-scheduler",result="scheduled"} 0.503)"));
  EXPECT_EQ(Samples(text, "scheduler_scheduling_attempt_duration_seconds_bucket").size(), 2u * 16u);

  EXPECT_THAT(lines, Contains(R"(scheduler_scheduling_algorithm_duration_seconds_bucket{le="0.002"} 1)"));
  EXPECT_EQ(Samples(text, "scheduler_scheduling_algorithm_duration_seconds_bucket").size(), 16u);

  // Attempts histogram: buckets 1,2,4,8,16.
  EXPECT_THAT(Samples(text, "scheduler_pod_scheduling_attempts_bucket"),
              ::testing::ElementsAre(R"(scheduler_pod_scheduling_attempts_bucket{le="1"} 1)",
                                     R"(scheduler_pod_scheduling_attempts_bucket{le="2"} 1)",
                                     R"(scheduler_pod_scheduling_attempts_bucket{le="4"} 2)",
                                     R"(scheduler_pod_scheduling_attempts_bucket{le="8"} 2)",
                                     R"(scheduler_pod_scheduling_attempts_bucket{le="16"} 2)",
                                     R"(scheduler_pod_scheduling_attempts_bucket{le="+Inf"} 3)"));

  // attempts label capped at "15+"; both the deprecated and the SLI variant.
  for (const std::string name : {"scheduler_pod_scheduling_duration_seconds", "scheduler_pod_scheduling_sli_duration_seconds"}) {
    EXPECT_THAT(Samples(text, name + "_count"),
                ::testing::UnorderedElementsAre(name + R"(_count{attempts="1"} 1)", name + R"(_count{attempts="3"} 1)",
                                                name + R"(_count{attempts="15+"} 1)"));
    EXPECT_THAT(lines, Contains(name + R"(_bucket{attempts="1",le="0.02"} 1)"));
    EXPECT_THAT(lines, Contains(name + R"(_bucket{attempts="15+",le="5242.88"} 1)"));
    EXPECT_THAT(lines, Contains(name + R"(_bucket{attempts="15+",le="81.92"} 0)"));
    EXPECT_EQ(Samples(text, name + "_bucket").size(), 3u * 21u);
  }

  const std::string ep = R"(scheduler_framework_extension_point_duration_seconds_bucket{extension_point="Filter",profile="default-scheduler",status="Success",le=")";
  EXPECT_THAT(lines, Contains(ep + R"(0.0001"} 0)"));
  EXPECT_THAT(lines, Contains(ep + R"(0.0002"} 1)"));
  EXPECT_THAT(lines, Contains(ep + R"(0.2048"} 1)"));
  EXPECT_EQ(Samples(text, "scheduler_framework_extension_point_duration_seconds_bucket").size(), 13u);

  const std::string pl = R"(scheduler_plugin_execution_duration_seconds_bucket{extension_point="Filter",plugin="NodeName",status="Unschedulable",le=")";
  EXPECT_THAT(lines, Contains(pl + R"(1e-05"} 1)"));
  EXPECT_EQ(Samples(text, "scheduler_plugin_execution_duration_seconds_bucket").size(), 21u);

  EXPECT_THAT(lines, Contains("# TYPE scheduler_schedule_attempts_total counter"));
  EXPECT_THAT(lines, Contains("# TYPE scheduler_pod_scheduling_attempts histogram"));
  // No scrape-time sources registered: those gauges are absent.
  EXPECT_TRUE(Samples(text, "scheduler_pending_pods").empty());
  EXPECT_TRUE(Samples(text, "scheduler_cache_size").empty());
}

// scheduler_pod_scheduling_duration_seconds is deprecated since 1.29 and hidden upstream:
// shown only with --show-hidden-metrics-for-version; --disabled-metrics removes families
// whatever else is asked.
TEST(MetricsTest, HiddenAndDisabledFamilies) {
  auto scrape = [](MetricsOptions o) {
    Metrics m(std::move(o));
    m.ObservePodScheduled(1, 0.02);
    m.ObserveAttempt("scheduled", "p", 0.003);
    return m.Serialize();
  };
  const std::string plain = scrape({});
  EXPECT_EQ(plain.find("scheduler_pod_scheduling_duration_seconds"), std::string::npos);
  EXPECT_NE(plain.find("scheduler_pod_scheduling_sli_duration_seconds"), std::string::npos);
  const std::string shown = scrape({.show_hidden = true});
  EXPECT_NE(shown.find("# HELP scheduler_pod_scheduling_duration_seconds [STABLE] (Deprecated since 1.29.0)"),
            std::string::npos)
      << shown;
  const std::string disabled = scrape(
      {.disabled = {"scheduler_pod_scheduling_duration_seconds", "scheduler_schedule_attempts_total"},
       .show_hidden = true});
  EXPECT_EQ(disabled.find("scheduler_pod_scheduling_duration_seconds"), std::string::npos);
  EXPECT_EQ(disabled.find("scheduler_schedule_attempts_total"), std::string::npos);
  EXPECT_NE(disabled.find("scheduler_pod_scheduling_sli_duration_seconds"), std::string::npos);
}

// The process collector's families and leader_election_master_status, as kube-scheduler
// exports them.
TEST(MetricsTest, ProcessAndLeaderElectionFamilies) {
  bool leading = false;
  Metrics m(MetricsOptions{.leader = [&]() -> std::optional<std::pair<std::string, bool>> {
                             return std::make_pair(std::string("kube-scheduler"), leading);
                           },
                           .process_metrics = true});
  std::string text = m.Serialize();
  EXPECT_THAT(Samples(text, "leader_election_master_status"),
              ::testing::ElementsAre(R"(leader_election_master_status{name="kube-scheduler"} 0)"));
  leading = true;
  text = m.Serialize();
  EXPECT_THAT(Samples(text, "leader_election_master_status"),
              ::testing::ElementsAre(R"(leader_election_master_status{name="kube-scheduler"} 1)"));
  for (const char* family : {"process_cpu_seconds_total", "process_max_fds", "process_open_fds",
                             "process_resident_memory_bytes", "process_start_time_seconds",
                             "process_virtual_memory_bytes", "process_virtual_memory_max_bytes"}) {
    auto samples = Samples(text, family);
    ASSERT_EQ(samples.size(), 1u) << family;
    const double value = std::strtod(samples[0].substr(samples[0].rfind(' ') + 1).c_str(), nullptr);
    // A test process may not have used a clock tick of CPU yet.
    if (std::string_view(family) == "process_cpu_seconds_total") {
      EXPECT_GE(value, 0) << samples[0];
    } else {
      EXPECT_GT(value, 0) << samples[0];
    }
  }
  EXPECT_NE(text.find("# TYPE process_cpu_seconds_total counter"), std::string::npos);
  // Without leader election, no such family.
  Metrics plain;
  EXPECT_TRUE(Samples(plain.Serialize(), "leader_election_master_status").empty());
}

TEST(MetricsTest, ScrapeTimeGaugesReadCurrentState) {
  queue::PendingPodCounts pending{.active = 1, .backoff = 2, .unschedulable = 3, .gated = 4};
  CacheSizes sizes{.nodes = 5, .pods = 7, .assumed_pods = 1};
  UnschedulablePodCounts unschedulable{{{"NodeAffinity", "default-scheduler"}, 2}};
  std::atomic<int64_t> busy{3};
  Metrics m(MetricsOptions{.pending_pods = [&] { return pending; },
                           .cache_sizes = [&] { return sizes; },
                           .unschedulable_pods = [&] { return unschedulable; }});
  m.SetGoroutinesSource("binding", [&] { return busy.load(); });

  std::string text = m.Serialize();
  EXPECT_THAT(Samples(text, "scheduler_pending_pods"),
              ::testing::ElementsAre(R"(scheduler_pending_pods{queue="active"} 1)",
                                     R"(scheduler_pending_pods{queue="backoff"} 2)",
                                     R"(scheduler_pending_pods{queue="gated"} 4)",
                                     R"(scheduler_pending_pods{queue="unschedulable"} 3)"));
  EXPECT_THAT(Samples(text, "scheduler_cache_size"),
              ::testing::ElementsAre(R"(scheduler_cache_size{type="assumed_pods"} 1)",
                                     R"(scheduler_cache_size{type="nodes"} 5)",
                                     R"(scheduler_cache_size{type="pods"} 7)"));
  EXPECT_THAT(Samples(text, "scheduler_goroutines"),
              ::testing::ElementsAre(R"(scheduler_goroutines{operation="binding"} 3)"));
  EXPECT_THAT(Samples(text, "scheduler_unschedulable_pods"),
              ::testing::ElementsAre(R"(scheduler_unschedulable_pods{plugin="NodeAffinity",profile="default-scheduler"} 2)"));
  EXPECT_THAT(Lines(text), Contains("# TYPE scheduler_pending_pods gauge"));

  // State changes are visible on the next scrape, with no inc/dec in between.
  pending.active = 0;
  sizes.nodes = 6;
  busy = 0;
  text = m.Serialize();
  EXPECT_THAT(Lines(text), Contains(R"(scheduler_pending_pods{queue="active"} 0)"));
  EXPECT_THAT(Lines(text), Contains(R"(scheduler_cache_size{type="nodes"} 6)"));
  EXPECT_THAT(Lines(text), Contains(R"(scheduler_goroutines{operation="binding"} 0)"));

  // The queue's own reader wins over the option, and clearing it falls back.
  m.SetPendingPodsSource([] { return queue::PendingPodCounts{.active = 9}; });
  EXPECT_THAT(Lines(m.Serialize()), Contains(R"(scheduler_pending_pods{queue="active"} 9)"));
  m.SetPendingPodsSource({});
  EXPECT_THAT(Lines(m.Serialize()), Contains(R"(scheduler_pending_pods{queue="active"} 0)"));

  m.SetGoroutinesSource("binding", {});
  EXPECT_THAT(Lines(m.Serialize()), Not(Contains(R"(scheduler_goroutines{operation="binding"} 0)")));
}

TEST(MetricsTest, ImplementsTheRecorderInterfaces) {
  Metrics m;
  queue::QueueMetricsRecorder& q = m;
  framework::runtime::MetricsRecorder& f = m;
  scheduler::SchedulerMetrics& s = m;
  q.IncomingPod(queue::kBackoffQueueName, "BackoffComplete");
  f.ObservePermitWait(Code::kSuccess, 0.01);
  s.ObserveAttempt("error", "p", 0.01);
  const auto lines = Lines(m.Serialize());
  EXPECT_THAT(lines, Contains(R"(scheduler_queue_incoming_pods_total{event="BackoffComplete",queue="backoff"} 1)"));
  EXPECT_THAT(lines, Contains(R"(scheduler_permit_wait_duration_seconds_count{result="Success"} 1)"));
  EXPECT_THAT(lines, Contains(R"(scheduler_schedule_attempts_total{profile="p",result="error"} 1)"));
}

TEST(MetricsTest, GangMetrics) {
  Metrics m;
  framework::runtime::MetricsRecorder& f = m;
  const auto before = Lines(m.Serialize());
  EXPECT_THAT(before, Contains("ksched_pod_groups_waiting 0"));
  EXPECT_THAT(before, Contains("ksched_pod_group_admissions_total 0"));
  f.AddPodGroupsWaiting(1);
  f.AddPodGroupsWaiting(1);
  f.AddPodGroupsWaiting(-1);
  f.ObservePodGroupAdmitted();
  f.ObservePodGroupRejected("timeout");
  f.ObservePodGroupRejected("timeout");
  const auto lines = Lines(m.Serialize());
  EXPECT_THAT(lines, Contains("ksched_pod_groups_waiting 1"));
  EXPECT_THAT(lines, Contains("ksched_pod_group_admissions_total 1"));
  EXPECT_THAT(lines, Contains(R"(ksched_pod_group_rejections_total{reason="timeout"} 2)"));
}

}  // namespace
}  // namespace ksched::metrics
