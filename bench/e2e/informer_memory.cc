#include "bench/e2e/informer_memory.h"

#include <malloc.h>

#include <chrono>
#include <memory>
#include <thread>

#include "informers/informer.h"
#include "pkg/cache/cache.h"
#include "pkg/cache/snapshot.h"

namespace ksched::bench {
namespace {

constexpr std::chrono::minutes kSyncTimeout{5};

// Bytes handed out by malloc and not yet freed, mmapped blocks included.
double HeapInUse() {
  struct mallinfo2 m = mallinfo2();
  return static_cast<double>(m.uordblks + m.hblkhd);
}

// The same once the informers' threads are done with what they had in hand when their
// sync was reported (the list's pages and parse buffers): the figure holds still for
// half a second.
double SettledHeapInUse() {
  double last = HeapInUse();
  for (int stable = 0, i = 0; stable < 5 && i < 100; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const double now = HeapInUse();
    stable = now == last ? stable + 1 : 0;
    last = now;
  }
  return last;
}

}  // namespace

StatusOr<InformerMemory> MeasureInformerMemory(client::ApiClient& client) {
  InformerMemory out;
  auto cache = cache::NewCache();
  cache::Snapshot snapshot;

  // The client's connection and first buffers are not the informers'.
  if (auto r = client.Do({.path = "/version"}); !r.ok()) return r.status();
  const double before = SettledHeapInUse();
  informers::NodeInformer nodes(client, "/api/v1/nodes");
  nodes.Start();
  if (!nodes.WaitForSync(kSyncTimeout)) return Status(StatusCode::kDeadlineExceeded, "the node informer did not sync");
  const double nodes_listed = SettledHeapInUse();
  {
    auto list = nodes.List();
    out.nodes = list.size();
    for (const api::NodePtr& n : list)
      if (Status s = cache->AddNode(n); !s.ok()) return s;
  }
  if (Status s = cache->UpdateSnapshot(snapshot); !s.ok()) return s;
  const double nodes_cached = SettledHeapInUse();

  informers::PodInformer pods(client, "/api/v1/pods", {.field_selector = informers::kNonTerminalPodsSelector});
  pods.Start();
  if (!pods.WaitForSync(kSyncTimeout)) return Status(StatusCode::kDeadlineExceeded, "the pod informer did not sync");
  const double pods_listed = SettledHeapInUse();

  {
    auto list = pods.List();
    out.pods = list.size();
    for (const api::PodPtr& p : list)
      if (p->IsAssigned())
        if (Status s = cache->AddPod(p); !s.ok()) return s;
  }
  if (Status s = cache->UpdateSnapshot(snapshot); !s.ok()) return s;
  const double pods_cached = SettledHeapInUse();
  nodes.Stop();
  pods.Stop();

  auto per = [](double bytes, size_t n) { return n > 0 ? bytes / static_cast<double>(n) : 0.0; };
  out.node_objects = per(nodes_listed - before, out.nodes);
  out.node_cache = per(nodes_cached - nodes_listed, out.nodes);
  out.pod_objects = per(pods_listed - nodes_cached, out.pods);
  out.pod_cache = per(pods_cached - pods_listed, out.pods);
  return out;
}

}  // namespace ksched::bench
