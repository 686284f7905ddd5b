// `ksched simulate` as a user runs it: flags, exit codes (2 for bad input), the table and
// the JSON and YAML documents with their documented field names.
#include "cmd/ksched/simulate.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace ksched::cmd {
namespace {

struct CliRun {
  int code = 0;
  std::string out, err;
};

CliRun Simulate(std::vector<std::string> args) {
  args.insert(args.begin(), "simulate");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  FILE* out = std::tmpfile();
  FILE* err = std::tmpfile();
  CliRun r;
  r.code = RunSimulate(static_cast<int>(argv.size()), argv.data(), out, err);
  auto read = [](FILE* f) {
    std::string s;
    std::rewind(f);
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof(buf), f)) > 0;) s.append(buf, n);
    std::fclose(f);
    return s;
  };
  r.out = read(out);
  r.err = read(err);
  return r;
}

class SimulateCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("ksched-simulate-cli-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    Write("cluster.yaml", R"(apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: "2", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2, labels: {kubernetes.io/hostname: n2}}
status: {allocatable: {cpu: "2", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: running, namespace: shop}
spec:
  nodeName: n1
  containers: [{name: c, image: app, resources: {requests: {cpu: "1"}}}]
)");
    Write("pods.yaml", R"(apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop}
spec:
  containers: [{name: c, image: app, resources: {requests: {cpu: "1500m"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: too-big, namespace: shop}
spec:
  containers: [{name: c, image: app, resources: {requests: {cpu: "3"}}}]
)");
    Write("one.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: unit}\nspec:\n  containers: [{name: c, "
                      "image: app, resources: {requests: {cpu: 500m}}}]\n");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return Path(name);
  }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  std::filesystem::path dir_;
};

TEST_F(SimulateCliTest, TableSaysWhereEachPodGoesAndWhyNot) {
  CliRun r = Simulate({"--cluster", Path("cluster.yaml"), "--pods", Path("pods.yaml")});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "POD            NODE     REASON\n"
            "shop/web       n2\n"
            "shop/too-big   <none>   0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are "
            "available: 2 No preemption victims found for incoming pod..\n");
}

TEST_F(SimulateCliTest, JsonHasTheDocumentedFields) {
  CliRun r = Simulate({"--cluster=" + Path("cluster.yaml"), "--pods", Path("pods.yaml"), "--capacity-of",
                    Path("one.yaml"), "-o", "json"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            R"({"pods":[{"namespace":"shop","name":"web","node":"n2","reason":"","victims":[]},)"
            R"({"namespace":"shop","name":"too-big","node":null,"reason":"0/2 nodes are available: 2 Insufficient )"
            R"(cpu. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod..","victims":[]}],)"
            R"("fits":3,"next":{"namespace":"default","name":"unit-capacity-4","node":null,"reason":"0/2 nodes are available: )"
            R"(2 Insufficient cpu. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming )"
            R"(pod..","victims":[]}})"
            "\n");
}

TEST_F(SimulateCliTest, YamlAndDrain) {
  CliRun r = Simulate({"--cluster", Path("cluster.yaml"), "--drain", "n1", "-oyaml"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "pods:\n"
            "  - namespace: shop\n"
            "    name: running\n"
            "    node: n2\n"
            "    reason: \"\"\n"
            "    victims: []\n");
}

TEST_F(SimulateCliTest, BadInputExitsWithTwoAndNamesTheProblem) {
  CliRun r = Simulate({"--cluster", Path("cluster.yaml"), "--bogus"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("unknown flag: --bogus"), std::string::npos) << r.err;
  r = Simulate({"--pods", Path("pods.yaml")});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--cluster FILE|DIR or --from-cluster"), std::string::npos) << r.err;
  r = Simulate({"--cluster", Path("cluster.yaml"), "-o", "xml"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("must be table, json or yaml"), std::string::npos) << r.err;
  const std::string bad = Write("bad.yaml", "apiVersion: v1\nkind: Node\nmetadata: {name: n9}\nspec: {taints: 3}\n");
  r = Simulate({"--cluster", Path("cluster.yaml"), "--cluster", bad});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(bad + ": document 1: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("spec.taints"), std::string::npos) << r.err;
  r = Simulate({"--cluster", Path("cluster.yaml"), "--capacity-of", Path("pods.yaml")});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("want exactly one Pod, found 2"), std::string::npos) << r.err;
  r = Simulate({"--cluster", Path("cluster.yaml"), "--drain", "nope"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("node \"nope\" is not in the cluster"), std::string::npos) << r.err;
  const std::string config = Write("config.yaml", "apiVersion: kubescheduler.config.k8s.io/v1\n"
                                                  "kind: KubeSchedulerConfiguration\nparallelism: 0\n");
  r = Simulate({"--cluster", Path("cluster.yaml"), "--config", config});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--config: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("parallelism"), std::string::npos) << r.err;
}

TEST_F(SimulateCliTest, UnknownKindsAreListedOnceAndSkipped) {
  const std::string extra = Write("extra.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\n---\n"
                                                "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: b}\n");
  CliRun r = Simulate({"--cluster", Path("cluster.yaml"), "--cluster", extra});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "Skipped 2 objects of kind Deployment: not read by ksched's plugins\n");
  EXPECT_EQ(r.out, "");
}

TEST_F(SimulateCliTest, HelpListsTheFlags) {
  CliRun r = Simulate({"--help"});
  EXPECT_EQ(r.code, 0);
  for (const char* flag : {"--cluster", "--from-cluster", "--pods", "--capacity-of", "--max", "--drain", "--config",
                           "--seed", "-o, --output", "--explain"}) {
    EXPECT_NE(r.out.find(flag), std::string::npos) << flag;
  }
}

}  // namespace
}  // namespace ksched::cmd
