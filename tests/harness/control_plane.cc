#include "tests/harness/control_plane.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>

namespace ksched::testing {
namespace {

ControlPlane* g_plane = nullptr;

std::string ReadTrimmed(const std::string& path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  return s;
}

class ControlPlaneEnvironment : public ::testing::Environment {
 public:
  explicit ControlPlaneEnvironment(ControlPlane* plane) : plane_(plane) {}
  void SetUp() override {
    Status s = plane_->Up();
    ASSERT_TRUE(s.ok()) << "starting etcd + kube-apiserver failed: " << s.ToString();
  }
  void TearDown() override { (void)plane_->Down(); }

 private:
  ControlPlane* plane_;
};

}  // namespace

ControlPlane& ControlPlane::Get() {
  if (!g_plane) {
    std::fprintf(stderr, "ControlPlane::Get() called without the control plane main\n");
    std::abort();
  }
  return *g_plane;
}

Status ControlPlane::Run(const std::string& verb) {
  auto out = RunCommand("KSCHED_CP_OWNER_PID=" + std::to_string(::getpid()) + " bash " + KSCHED_CONTROL_PLANE_SCRIPT +
                        " " + verb + " " + dir_ + " 1>&2");
  return out.ok() ? Status::OK() : out.status();
}

Status ControlPlane::Up() {
  if (Status s = Run("up"); !s.ok()) return s;
  server_ = "https://127.0.0.1:" + ReadTrimmed(dir_ + "/apiserver.port");
  etcd_ = "http://127.0.0.1:" + ReadTrimmed(dir_ + "/etcd.port");
  return Status::OK();
}

Status ControlPlane::Down() { return Run("down"); }
Status ControlPlane::StopApiserver() { return Run("stop-apiserver"); }
Status ControlPlane::StartApiserver() { return Run("start-apiserver"); }
Status ControlPlane::StartControllerManager() { return Run("start-controller-manager"); }
Status ControlPlane::StopControllerManager() { return Run("stop-controller-manager"); }

Status ControlPlane::CompactEtcd() {
  std::string ep = "ETCDCTL_API=3 etcdctl --endpoints=" + etcd_;
  auto rev = RunCommand(ep + " endpoint status -w json | jq -r '.[0].Status.header.revision'");
  if (!rev.ok()) return rev.status();
  std::string r = *rev;
  while (!r.empty() && (r.back() == '\n' || r.back() == ' ')) r.pop_back();
  auto out = RunCommand(ep + " compact " + r + " 1>&2");
  return out.ok() ? Status::OK() : out.status();
}

}  // namespace ksched::testing

// main() for integration test binaries: one control plane for the whole binary.
int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const char* base = std::getenv("KSCHED_TEST_CP_DIR");
  std::string name = argv[0];
  name = name.substr(name.find_last_of('/') + 1);
  std::string dir = std::string(base ? base : "/tmp") + "/ksched-cp-" + name + "-" + std::to_string(::getpid());
  static auto plane = std::make_unique<ksched::testing::ControlPlane>(dir);
  ksched::testing::g_plane = plane.get();
  // gtest takes ownership of the environment.
  ::testing::AddGlobalTestEnvironment(new ksched::testing::ControlPlaneEnvironment(ksched::testing::g_plane));
  int rc = RUN_ALL_TESTS();
  // The environment's TearDown has stopped every process by now. etcd's data and the
  // logs take tens of MB per run: they are removed after a passing run and kept after a
  // failing one (or with KSCHED_KEEP_CP=1) for reading.
  if (rc == 0 && !std::getenv("KSCHED_KEEP_CP")) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  } else {
    std::fprintf(stderr, "control plane files kept in %s\n", dir.c_str());
  }
  return rc;
}
