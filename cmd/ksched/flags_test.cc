#include "cmd/ksched/flags.h"

#include <gtest/gtest.h>

#include <vector>

namespace ksched::cmd {
namespace {

bool Parse(std::vector<std::string> args, Flags* f, std::string* err) {
  std::vector<char*> argv{const_cast<char*>("ksched")};
  for (auto& a : args) argv.push_back(a.data());
  return ParseFlags(static_cast<int>(argv.size()), argv.data(), f, err);
}

TEST(FlagsTest, ParsesValueFormsAndBooleans) {
  Flags f;
  std::string err;
  ASSERT_TRUE(Parse({"--config=/etc/k/c.yaml", "--kubeconfig", "/kc", "-v=4", "--leader-elect=false",
                     "--leader-elect-lease-duration", "30s", "--pod-max-in-unschedulable-pods-duration=1m30s"},
                    &f, &err))
      << err;
  EXPECT_EQ(f.config, "/etc/k/c.yaml");
  EXPECT_EQ(f.kubeconfig, "/kc");
  EXPECT_EQ(f.verbosity, 4);
  EXPECT_EQ(f.leader_elect, false);
  EXPECT_EQ(f.pod_max_in_unschedulable_pods_duration, std::chrono::seconds(90));
  EXPECT_EQ(f.secure_port, 10259);
  EXPECT_EQ(f.authorization_always_allow_paths, (std::vector<std::string>{"/healthz", "/readyz", "/livez"}));
  ASSERT_TRUE(Parse({"--secure-port=0", "--authorization-always-allow-paths=/healthz,/metrics"}, &f, &err)) << err;
  EXPECT_EQ(f.secure_port, 0);
  EXPECT_EQ(f.authorization_always_allow_paths, (std::vector<std::string>{"/healthz", "/metrics"}));

  config::KubeSchedulerConfiguration cfg;
  cfg.leader_election.renew_deadline = std::chrono::seconds(7);
  ApplyFlagOverrides(f, cfg);
  EXPECT_FALSE(cfg.leader_election.leader_elect);
  EXPECT_EQ(cfg.leader_election.lease_duration, std::chrono::seconds(30));
  EXPECT_EQ(cfg.leader_election.renew_deadline, std::chrono::seconds(7));  // not given: file value kept
}

TEST(FlagsTest, ErrorsNameTheFlag) {
  struct Case { std::vector<std::string> args; std::string want; } cases[] = {
      {{"--bogus"}, "unknown flag: --bogus"},
      {{"--config"}, "flag needs an argument: --config"},
      {{"-v", "x"}, "invalid argument \"x\" for \"--v\" flag"},
      {{"--leader-elect=maybe"}, "invalid argument \"maybe\" for \"--leader-elect\" flag"},
      {{"--leader-elect-retry-period=2"}, "for \"--leader-elect-retry-period\" flag"},
      {{"stray"}, "unexpected argument \"stray\""},
      {{"--secure-port=70000"}, "for \"--secure-port\" flag: must be a port number"},
  };
  for (const auto& c : cases) {
    Flags f;
    std::string err;
    EXPECT_FALSE(Parse(c.args, &f, &err));
    EXPECT_NE(err.find(c.want), std::string::npos) << err;
  }
}

TEST(FlagsTest, UsageListsEveryFlag) {
  std::string u = Usage();
  for (const char* name : {"--config", "--kubeconfig", "--master", "--write-config-to", "--leader-elect",
                           "--leader-elect-lease-duration", "--pod-max-in-unschedulable-pods-duration", "-v, --v",
                           "--version", "-h, --help", "--secure-port", "--bind-address", "--cert-dir",
                           "--tls-cert-file", "--tls-private-key-file", "--authorization-always-allow-paths"})
    EXPECT_NE(u.find(name), std::string::npos) << name;
  EXPECT_NE(u.find("ksched explain [NAMESPACE/NAME]"), std::string::npos) << u;
}

}  // namespace
}  // namespace ksched::cmd
