// A real etcd + kube-apiserver for integration tests, started once per test binary by
// scripts/control-plane.sh (linked in through ksched_control_plane, which provides
// main()). Tests reach it through ControlPlane::Get().
#pragma once

#include <string>

#include "pkg/util/status.h"
#include "tests/harness/process_util.h"  // RunCommand, for the tests that use the control plane

namespace ksched::testing {

class ControlPlane {
 public:
  // The running control plane; aborts the test binary if it is not up.
  static ControlPlane& Get();

  const std::string& dir() const { return dir_; }
  // kubeconfig for the admin user (system:masters), verifying the apiserver's CA.
  std::string kubeconfig() const { return dir_ + "/kubeconfig"; }
  // kubeconfig for the least-privileged "ksched" user (RBAC applied by the test).
  std::string ksched_kubeconfig() const { return dir_ + "/ksched.kubeconfig"; }
  std::string ca_file() const { return dir_ + "/ca.crt"; }
  const std::string& server() const { return server_; }
  const std::string& etcd_endpoint() const { return etcd_; }

  // Faults: stop and restart kube-apiserver with the same flags (etcd keeps the data).
  Status StopApiserver();
  Status StartApiserver();
  // kube-controller-manager with the PV controller (persistentvolume-binder), which binds
  // claims as in a real cluster; stopped with the control plane. Idempotent.
  Status StartControllerManager();
  Status StopControllerManager();
  // Compacts etcd to its current revision, so watches from older RVs get 410 Gone.
  Status CompactEtcd();

  explicit ControlPlane(std::string dir) : dir_(std::move(dir)) {}
  Status Up();
  Status Down();

 private:
  Status Run(const std::string& verb);

  std::string dir_;
  std::string server_;
  std::string etcd_;
};

}  // namespace ksched::testing
