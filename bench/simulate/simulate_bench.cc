// `ksched simulate` on a large cluster file: 5,000 nodes (4 CPUs, 16 GiB, in 3 zones)
// holding 50,000 bound pods (10 a node, 300m CPU and 1 GiB each, with labels and owner
// references as a ReplicaSet's pods have), then `--capacity-of` a one-CPU pod: 5,000
// copies fit (one a node) and the 5,001st does not. Times the whole command, as a user
// runs it (process start, reading and checking the file, loading the scheduler's cache,
// answering), and the same command without a question (the load alone); medians of
// --runs (default 3).
//
//   bench_simulate --ksched build/cmd/ksched/ksched [--nodes 5000] [--pods-per-node 10] [--runs 3]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

struct Args {
  std::string ksched;
  int nodes = 5000;
  int pods_per_node = 10;
  int runs = 3;
};

std::string ClusterJson(const Args& a) {
  std::string out = R"({"apiVersion":"v1","kind":"List","items":[)";
  out.reserve(static_cast<size_t>(a.nodes) * (500 + 900 * static_cast<size_t>(a.pods_per_node)));
  for (int n = 0; n < a.nodes; ++n) {
    const std::string node = "node-" + std::to_string(n);
    out += (n ? "," : "");
    out += R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")" + node +
           R"(","labels":{"kubernetes.io/hostname":")" + node + R"(","topology.kubernetes.io/zone":"zone-)" +
           std::to_string(n % 3) +
           R"(","kubernetes.io/os":"linux"}},"status":{"capacity":{"cpu":"4","memory":"16Gi","pods":"110"},)"
           R"("allocatable":{"cpu":"4","memory":"16Gi","pods":"110"}}})";
    for (int p = 0; p < a.pods_per_node; ++p) {
      const std::string name = "app-" + std::to_string(n) + "-" + std::to_string(p);
      const std::string rs = "app-" + std::to_string((n * a.pods_per_node + p) % 500);
      out += R"(,{"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
             R"(","namespace":"bench","uid":"u-)" + name + R"(","labels":{"app":")" + rs +
             R"(","pod-template-hash":"5d8f7c9b4"},"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet",)"
             R"("name":")" + rs + R"(-5d8f7c9b4","uid":"rs-)" + rs +
             R"(","controller":true}]},"spec":{"nodeName":")" + node +
             R"(","schedulerName":"default-scheduler","priority":0,"containers":[{"name":"app","image":)"
             R"("registry.local/app:v1","resources":{"requests":{"cpu":"300m","memory":"1Gi"}}}]},)"
             R"("status":{"phase":"Running"}})";
    }
  }
  out += "]}";
  return out;
}

double Seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Runs `command`; its wall time, or a negative number if it failed.
double Timed(const std::string& command) {
  const auto start = std::chrono::steady_clock::now();
  const int rc = std::system(command.c_str());
  const double s = Seconds(std::chrono::steady_clock::now() - start);
  return rc == 0 ? s : -1;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--ksched") a.ksched = value;
    else if (flag == "--nodes") a.nodes = std::atoi(value.c_str());
    else if (flag == "--pods-per-node") a.pods_per_node = std::atoi(value.c_str());
    else if (flag == "--runs") a.runs = std::atoi(value.c_str());
    else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  if (a.ksched.empty() || a.nodes <= 0 || a.pods_per_node < 0 || a.runs <= 0) {
    std::fprintf(stderr, "usage: bench_simulate --ksched PATH [--nodes N] [--pods-per-node N] [--runs N]\n");
    return 2;
  }
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("ksched-bench-simulate-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string cluster = (dir / "cluster.json").string();
  const std::string pod = (dir / "pod.yaml").string();
  const std::string answer = (dir / "answer.json").string();
  {
    const std::string json = ClusterJson(a);
    std::ofstream(cluster) << json;
    std::printf("cluster file: %d nodes, %d pods, %.1f MB\n", a.nodes, a.nodes * a.pods_per_node,
                static_cast<double>(json.size()) / 1e6);
  }
  std::ofstream(pod) << "apiVersion: v1\nkind: Pod\nmetadata: {name: one-cpu, namespace: bench}\nspec:\n"
                        "  containers: [{name: c, image: registry.local/app:v1, resources: {requests: {cpu: \"1\"}}}]\n";
  std::vector<double> load, capacity;
  for (int r = 0; r < a.runs; ++r) {
    const double l = Timed(a.ksched + " simulate --cluster " + cluster + " -o json > /dev/null");
    const double c = Timed(a.ksched + " simulate --cluster " + cluster + " --capacity-of " + pod + " -o json > " + answer);
    if (l < 0 || c < 0) {
      std::fprintf(stderr, "ksched simulate failed\n");
      return 1;
    }
    std::ifstream in(answer);
    std::string out((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t at = out.find("\"fits\":");
    std::printf("run %d: load %.2f s, load + --capacity-of %.2f s, %s\n", r + 1, l, c,
                at == std::string::npos ? "no fits in the answer" : out.substr(at, out.find(',', at) - at).c_str());
    load.push_back(l);
    capacity.push_back(c);
  }
  std::printf("median of %d: load %.2f s, load + --capacity-of %.2f s (answering alone %.2f s)\n", a.runs,
              Median(load), Median(capacity), Median(capacity) - Median(load));
  std::filesystem::remove_all(dir);
  return 0;
}
