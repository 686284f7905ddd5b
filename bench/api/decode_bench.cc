// Decodes a realistic 10,000-pod PodList (~3 KB of JSON per pod, as an informer's
// initial LIST returns it) and reports the median decode time, throughput and the heap
// the decoded objects retain. Heap use is counted by replacing global new/delete in
// this binary only (every allocation the decoder makes goes through them), as
// malloc_usable_size bytes, plus glibc's 8-byte header per block in the second figure.
//
// Retained bytes are taken from the first decode, while the decoder's process-wide
// tables of shared template parts (pkg/api/dedup.h) are still empty, so the figure
// includes those shared instances and the tables themselves: it is what holding the
// list costs a fresh process. Later decodes reuse instances the tables still hold;
// that steady-state figure and what the tables keep after the list is freed are shown
// too.
//
//   bench_decode [pods] [runs]
#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "pkg/api/json.h"

namespace {

std::atomic<int64_t> g_live_bytes{0};
std::atomic<int64_t> g_live_blocks{0};

void* CountedAlloc(size_t n) {
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p == nullptr) throw std::bad_alloc();
  g_live_bytes.fetch_add(static_cast<int64_t>(malloc_usable_size(p)), std::memory_order_relaxed);
  g_live_blocks.fetch_add(1, std::memory_order_relaxed);
  return p;
}

void CountedFree(void* p) {
  if (p == nullptr) return;
  g_live_bytes.fetch_sub(static_cast<int64_t>(malloc_usable_size(p)), std::memory_order_relaxed);
  g_live_blocks.fetch_sub(1, std::memory_order_relaxed);
  std::free(p);
}

}  // namespace

void* operator new(size_t n) { return CountedAlloc(n); }
void* operator new[](size_t n) { return CountedAlloc(n); }
void operator delete(void* p) noexcept { CountedFree(p); }
void operator delete[](void* p) noexcept { CountedFree(p); }
void operator delete(void* p, size_t) noexcept { CountedFree(p); }
void operator delete[](void* p, size_t) noexcept { CountedFree(p); }

namespace {

using Clock = std::chrono::steady_clock;

// A running pod as a Deployment's ReplicaSet creates it: ~3 KB with managedFields, the
// projected service-account volume and four conditions.
void AppendPod(std::string& out, int i) {
  char uid[40], hash[12];
  std::snprintf(uid, sizeof(uid), "%08x-%04x-4%03x-8%03x-%012x", 0x5eed0000 + i, i & 0xffff,
                i % 4096, (i * 7) % 4096, i * 2654435761u);
  std::snprintf(hash, sizeof(hash), "%06x%04x", ((i / 50) * 40503) & 0xffffff, i % 50);
  int app = i % 50;
  int ns = i % 20;
  int node = i % 500;
  char buf[8192];
  int n = std::snprintf(buf, sizeof(buf),
      R"({"metadata":{"name":"app-%d-%s-%05d","generateName":"app-%d-%s-","namespace":"team-%d",)"
      R"("uid":"%s","resourceVersion":"%d","creationTimestamp":"2024-05-01T10:%02d:%02dZ",)"
      R"("labels":{"app.kubernetes.io/name":"app-%d","app.kubernetes.io/part-of":"shop",)"
      R"("pod-template-hash":"%s","tier":"backend","version":"v1.%d.0"},)"
      R"("annotations":{"kubectl.kubernetes.io/restartedAt":"2024-04-30T08:00:00Z",)"
      R"("prometheus.io/port":"9090","prometheus.io/scrape":"true"},)"
      R"("ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"app-%d-%s",)"
      R"("uid":"7c1d2e3f-aaaa-4bbb-8ccc-%012d","controller":true,"blockOwnerDeletion":true}],)"
      R"("managedFields":[{"manager":"kube-controller-manager","operation":"Update","apiVersion":"v1",)"
      R"("time":"2024-05-01T10:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{)"
      R"("f:generateName":{},"f:labels":{".":{},"f:app.kubernetes.io/name":{},"f:pod-template-hash":{},)"
      R"("f:tier":{},"f:version":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"7c1d2e3f\"}":{}}},)"
      R"("f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:env":{},"f:image":{},)"
      R"("f:imagePullPolicy":{},"f:name":{},"f:ports":{},"f:resources":{".":{},"f:limits":{},)"
      R"("f:requests":{}}}},"f:dnsPolicy":{},"f:enableServiceLinks":{},"f:tolerations":{}}}}]},)"
      R"("spec":{"volumes":[{"name":"kube-api-access-%05d","projected":{"sources":[{"serviceAccountToken":)"
      R"({"expirationSeconds":3607,"path":"token"}}],"defaultMode":420}},)"
      R"({"name":"data","persistentVolumeClaim":{"claimName":"data-app-%d-%d"}}],)"
      R"("containers":[{"name":"app","image":"registry.example.com/shop/app-%d:v1.%d.0",)"
      R"("ports":[{"name":"http","containerPort":8080,"protocol":"TCP"},)"
      R"({"name":"metrics","containerPort":9090,"protocol":"TCP"}],)"
      R"("resources":{"limits":{"cpu":"2","memory":"2Gi"},"requests":{"cpu":"%dm","memory":"%dMi"}},)"
      R"("imagePullPolicy":"IfNotPresent"},)"
      R"({"name":"envoy","image":"envoyproxy/envoy:v1.29.1","resources":{"limits":{"cpu":"500m",)"
      R"("memory":"256Mi"},"requests":{"cpu":"100m","memory":"128Mi"}},"imagePullPolicy":"IfNotPresent"}],)"
      R"("restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst",)"
      R"("serviceAccountName":"default","serviceAccount":"default","nodeName":"node-%03d",)"
      R"("securityContext":{},"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":)"
      R"({"nodeSelectorTerms":[{"matchExpressions":[{"key":"kubernetes.io/arch","operator":"In",)"
      R"("values":["amd64","arm64"]}]}]}}},"schedulerName":"default-scheduler",)"
      R"("tolerations":[{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute",)"
      R"("tolerationSeconds":300},{"key":"node.kubernetes.io/unreachable","operator":"Exists",)"
      R"("effect":"NoExecute","tolerationSeconds":300}],"priority":0,"enableServiceLinks":true,)"
      R"("preemptionPolicy":"PreemptLowerPriority"},)"
      R"("status":{"phase":"Running","conditions":[)"
      R"({"type":"Initialized","status":"True","lastProbeTime":null,"lastTransitionTime":"2024-05-01T10:00:01Z"},)"
      R"({"type":"Ready","status":"True","lastProbeTime":null,"lastTransitionTime":"2024-05-01T10:00:09Z"},)"
      R"({"type":"ContainersReady","status":"True","lastProbeTime":null,"lastTransitionTime":"2024-05-01T10:00:09Z"},)"
      R"({"type":"PodScheduled","status":"True","lastProbeTime":null,"lastTransitionTime":"2024-05-01T10:00:00Z"}],)"
      R"("hostIP":"10.0.%d.%d","podIP":"10.244.%d.%d","startTime":"2024-05-01T10:00:01Z",)"
      R"("containerStatuses":[{"name":"app","ready":true,"restartCount":0,"started":true}],)"
      R"("qosClass":"Burstable"}})",
      app, hash, i, app, hash, ns, uid, 100000 + i, (i / 60) % 60, i % 60, app, hash, app % 9, app,
      hash, i, i, app, i, app, app % 9, 100 + (i % 8) * 50, 128 + (i % 4) * 64, node,
      node / 250, node % 250, i / 250, i % 250);
  if (n < 0 || n >= static_cast<int>(sizeof(buf))) {
    std::fprintf(stderr, "pod %d does not fit the buffer\n", i);
    std::exit(1);
  }
  out.append(buf, static_cast<size_t>(n));
}

std::string MakePodList(int pods) {
  std::string out;
  out.reserve(static_cast<size_t>(pods) * 3300 + 256);
  out += R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"5000123"},"items":[)";
  for (int i = 0; i < pods; ++i) {
    if (i > 0) out += ',';
    AppendPod(out, i);
  }
  out += "]}";
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  int pods = argc > 1 ? std::atoi(argv[1]) : 10000;
  int runs = argc > 2 ? std::max(5, std::atoi(argv[2])) : 7;
  std::string body = MakePodList(pods);
  ksched::api::JsonText text = ksched::api::JsonText::Padded(body);
  double mb = static_cast<double>(body.size()) / 1e6;

  int64_t before_parser = g_live_bytes.load();
  ksched::api::JsonParser parser;
  {
    // Warm-up: sizes the parser's buffers with an empty list of the same length, so
    // the runs see a warm parser but decode every pod into cold tables first.
    std::string pad = R"({"metadata":{},"items":[],"pad":")";
    pad.append(body.size() > pad.size() + 2 ? body.size() - pad.size() - 2 : 0, 'x');
    pad += "\"}";
    auto warm = ksched::api::DecodePodList(parser, ksched::api::JsonText::Padded(pad));
    if (!warm.ok()) {
      std::fprintf(stderr, "decode failed: %s\n", warm.status().ToString().c_str());
      return 1;
    }
  }

  // simdjson sizes its buffers to the largest document seen (structural indexes take
  // about 4 bytes per input byte); report it so callers know what a big LIST costs.
  double parser_mb = static_cast<double>(g_live_bytes.load() - before_parser) / 1e6;

  std::vector<double> ms;
  int64_t retained_bytes = 0, retained_blocks = 0, steady_bytes = 0;
  int64_t before_runs = g_live_bytes.load();
  for (int r = 0; r < runs; ++r) {
    int64_t bytes_before = g_live_bytes.load(), blocks_before = g_live_blocks.load();
    auto start = Clock::now();
    auto list = ksched::api::DecodePodList(parser, text);
    auto end = Clock::now();
    if (!list.ok() || static_cast<int>(list->items.size()) != pods) {
      std::fprintf(stderr, "decode failed: %s\n", list.status().ToString().c_str());
      return 1;
    }
    if (r == 0) {
      retained_bytes = g_live_bytes.load() - bytes_before;
      retained_blocks = g_live_blocks.load() - blocks_before;
    } else {
      steady_bytes = g_live_bytes.load() - bytes_before;
    }
    ms.push_back(std::chrono::duration<double, std::milli>(end - start).count());
  }
  int64_t tables_after = g_live_bytes.load() - before_runs;
  double cold_ms = ms.front();
  std::sort(ms.begin(), ms.end());
  double median = ms[ms.size() / 2];
  double per_pod = static_cast<double>(retained_bytes) / pods;
  // glibc adds an 8-byte header to every block on top of its usable size.
  double per_pod_with_headers = static_cast<double>(retained_bytes + 8 * retained_blocks) / pods;
  std::printf("runs: %d, first (cold tables) %.1f ms, min %.1f ms, max %.1f ms; %.1f heap blocks/pod; "
              "parser buffers %.0f MB\n",
              runs, cold_ms, ms.front(), ms.back(), static_cast<double>(retained_blocks) / pods, parser_mb);
  std::printf("steady-state re-decode retains %.0f B/pod; shared-part tables keep %.0f KB once the list is freed\n",
              static_cast<double>(steady_bytes) / pods, static_cast<double>(tables_after) / 1024);
  std::printf(
      "decode %d pods (%.1f MB): median %.0f ms, %.0f MB/s, retained %.0f B/pod "
      "(%.0f B/pod with malloc headers)\n",
      pods, mb, median, mb / (median / 1000.0), per_pod, per_pod_with_headers);
  return 0;
}
