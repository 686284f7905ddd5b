// ksched::app::Main with out-of-tree plugins: the registry is merged with the in-tree one,
// a name clash is refused naming the plugin, and `simulate` runs the caller's plugins.
#include "cmd/ksched/app.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/fakes/prefer_node_plugin.h"

namespace ksched::app {
namespace {

struct AppRun {
  int code = 0;
  std::string out, err;
};

AppRun Main(std::vector<std::string> args, framework::Registry registry) {
  args.insert(args.begin(), "ksched");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  AppRun r;
  r.code = app::Main(static_cast<int>(argv.size()), argv.data(), std::move(registry));
  r.out = ::testing::internal::GetCapturedStdout();
  r.err = ::testing::internal::GetCapturedStderr();
  return r;
}

framework::Registry PreferNodeRegistry() { return {{"PreferNode", ksched::testing::NewPreferNode}}; }

TEST(AppMain, RefusesAPluginNamedLikeAnInTreeOne) {
  framework::Registry clash = PreferNodeRegistry();
  clash["NodeAffinity"] = clash["PreferNode"];
  AppRun r = Main({"--version"}, std::move(clash));
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "Error: registering out-of-tree plugins: a plugin named \"NodeAffinity\" already exists\n");
}

TEST(AppMain, SimulateRunsTheCallersPluginsWithTheirArgs) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("ksched-app-test-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "cluster.yaml") << R"(apiVersion: v1
kind: Node
metadata: {name: roomy}
status: {allocatable: {cpu: "16", memory: 64Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: small}
status: {allocatable: {cpu: "2", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec: {containers: [{name: c, image: app, resources: {requests: {cpu: "1"}}}]}
)";
  auto config = [&dir](const std::string& node) {
    std::ofstream(dir / "config.yaml") << R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    score:
      enabled: [{name: PreferNode, weight: 10}]
  pluginConfig:
  - name: PreferNode
    args: {)" << node << "}\n";
    return (dir / "config.yaml").string();
  };
  const std::string cluster = (dir / "cluster.yaml").string();

  AppRun stock = Main({"simulate", "--cluster", cluster}, PreferNodeRegistry());
  EXPECT_EQ(stock.code, 0) << stock.err;
  EXPECT_NE(stock.out.find("default/p   roomy"), std::string::npos) << stock.out;

  AppRun custom = Main({"simulate", "--cluster", cluster, "--config", config("node: small")}, PreferNodeRegistry());
  EXPECT_EQ(custom.code, 0) << custom.err;
  EXPECT_NE(custom.out.find("default/p   small"), std::string::npos) << custom.out;

  AppRun bad = Main({"simulate", "--cluster", cluster, "--config", config("host: small")}, PreferNodeRegistry());
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.err,
            "Error: profile \"default-scheduler\": initializing plugin \"PreferNode\": decoding args for plugin "
            "PreferNode: strict decoding error: unknown field \"host\"\n");

  // Without the plugin in the registry, the profile names a plugin that does not exist.
  AppRun unknown = Main({"simulate", "--cluster", cluster, "--config", config("node: small")}, {});
  EXPECT_EQ(unknown.code, 2);
  EXPECT_EQ(unknown.err, "Error: profile \"default-scheduler\": ScorePlugin \"PreferNode\" does not exist\n");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ksched::app
