// What ksched keeps in memory per node and per pod once its informers have synced,
// measured in the benchmark's own process with ksched's own code: glibc's heap in use
// (mallinfo2, every arena) before and after a node informer lists the cluster, then
// after those nodes go into a scheduler cache and a snapshot of it, and the same for a
// pod informer (non-terminal pods, as ksched lists them) and the pods bound to nodes.
// Run once the scheduler under test has exited, on the cluster it left, in a process of
// its own: no other thread may allocate meanwhile.
#pragma once

#include <cstddef>

#include "pkg/client/api_client.h"
#include "pkg/util/status.h"

namespace ksched::bench {

struct InformerMemory {
  size_t nodes = 0, pods = 0;
  double node_objects = 0;  // bytes per node: the informer's decoded Node objects
  double node_cache = 0;    // bytes per node: its NodeInfo in the cache and the snapshot
  double pod_objects = 0;   // bytes per pod: the informer's decoded Pod objects
  double pod_cache = 0;     // bytes per pod: its cache entry and the snapshot's copy
};

StatusOr<InformerMemory> MeasureInformerMemory(client::ApiClient& client);

}  // namespace ksched::bench
