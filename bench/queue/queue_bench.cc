// Scheduling queue throughput. Targets on the CI machine: Add+Pop >= 2M ops/s on one
// thread; MoveAllToActiveOrBackoffQueue over 100,000 unschedulable pods <= 20 ms.
#include <benchmark/benchmark.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "pkg/framework/cluster_event.h"
#include "pkg/queue/priority_queue.h"

namespace ksched::queue {
namespace {

std::vector<api::PodPtr> MakePods(size_t n) {
  std::mt19937 rng(42);
  std::vector<api::PodPtr> pods;
  pods.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    auto p = std::make_shared<api::Pod>();
    p->metadata.namespace_ = "bench";
    p->metadata.name = "pod-" + std::to_string(i);
    p->metadata.uid = "uid-" + std::to_string(i);
    p->spec.priority = static_cast<int32_t>(rng() % 100);
    pods.push_back(std::move(p));
  }
  return pods;
}

class FitPlugin : public framework::Plugin, public framework::EnqueueExtensions {
 public:
  std::string_view Name() const override { return "Fit"; }
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override {
    return {{{framework::EventResource::kNode, framework::kAdd | framework::kUpdate, ""}, hint}};
  }
  framework::QueueingHintFn hint;
};

QueueOptions Options(Clock& clock, FitPlugin* fit) {
  QueueOptions o;
  o.clock = &clock;
  framework::Plugin* plugins[] = {fit};
  o.cluster_event_map = ClusterEventMap::FromPlugins(plugins);
  return o;
}

// One Add and one Pop (+ Done) per iteration, with `depth` pods kept queued so the heap
// has realistic height. items_per_second counts Add and Pop separately.
void BM_AddPop(benchmark::State& state) {
  const size_t depth = static_cast<size_t>(state.range(0));
  FitPlugin fit;
  PriorityQueue q(Options(RealClock(), &fit));
  std::vector<api::PodPtr> free = MakePods(depth + 1024);
  for (size_t i = 0; i < depth; ++i) {
    (void)q.Add(free.back());
    free.pop_back();
  }
  for (auto _ : state) {
    (void)q.Add(free.back());
    free.pop_back();
    QueuedPodInfoPtr info = q.Pop();
    q.Done(info->pod());
    free.push_back(info->pod_ptr());
  }
  state.SetItemsProcessed(2 * state.iterations());
}
BENCHMARK(BM_AddPop)->Arg(0)->Arg(1000)->Arg(100000);

// A failed attempt coming back: AddUnschedulableIfNotPresent of an in-flight pod, with
// a few unrelated events to replay. Timed in batches of 1000 pods.
void BM_AddUnschedulableIfNotPresent(benchmark::State& state) {
  constexpr size_t kBatch = 1000;
  FakeClock clock;
  FitPlugin fit;
  PriorityQueue q(Options(clock, &fit));
  std::vector<api::PodPtr> pods = MakePods(kBatch);
  std::vector<QueuedPodInfoPtr> infos;
  for (auto _ : state) {
    state.PauseTiming();
    for (const auto& p : pods) (void)q.Add(p);
    infos.clear();
    for (size_t i = 0; i < kBatch; ++i) {
      infos.push_back(q.Pop());
      infos.back()->unschedulable_plugins = {"Fit"};
    }
    for (int i = 0; i < 3; ++i) q.MoveAllToActiveOrBackoffQueue(framework::kPvcAdd);
    state.ResumeTiming();
    for (auto& info : infos) (void)q.AddUnschedulableIfNotPresent(std::move(info));
    state.PauseTiming();
    for (const auto& p : pods) q.Delete(*p);
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
}
BENCHMARK(BM_AddUnschedulableIfNotPresent);

// MoveAllToActiveOrBackoffQueue(NodeAdd) with 100,000 pods in unschedulablePods, all
// rejected by Fit. Arg: 0 = all to activeQ, 1 = all to backoffQ (still backing off),
// 2 = Fit's hint says Skip for all (they stay).
void BM_MoveAll100k(benchmark::State& state) {
  constexpr size_t kPods = 100000;
  const int mode = static_cast<int>(state.range(0));
  std::vector<api::PodPtr> pods = MakePods(kPods);
  FitPlugin fit;
  if (mode == 2) {
    fit.hint = [](const api::Pod&, const void*, const void*) -> StatusOr<framework::QueueingHint> {
      return framework::QueueingHint::kSkip;
    };
  }
  for (auto _ : state) {
    state.PauseTiming();
    FakeClock clock;
    auto q = std::make_unique<PriorityQueue>(Options(clock, &fit));
    for (const auto& p : pods) {
      auto info = std::make_unique<framework::QueuedPodInfo>(p);
      info->attempts = 1;
      info->unschedulable_plugins = {"Fit"};
      (void)q->AddUnschedulableIfNotPresent(std::move(info));
    }
    if (mode != 1) clock.Advance(std::chrono::seconds(20));
    state.ResumeTiming();
    q->MoveAllToActiveOrBackoffQueue(framework::kNodeAdd);
    state.PauseTiming();
    PendingPodCounts c = q->PendingCounts();
    if (c.unschedulable != (mode == 2 ? kPods : 0)) state.SkipWithError("unexpected move result");
    q.reset();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * kPods);
}
BENCHMARK(BM_MoveAll100k)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->Iterations(20);

}  // namespace
}  // namespace ksched::queue

BENCHMARK_MAIN();
