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
      {{"--secure-port=70000"}, "for \"--secure-port\" flag: must be between 0 and 65535, inclusive"},
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

// kubeadm's kube-scheduler static pod arguments, with the gates and log format operators
// add: all accepted, each with its meaning.
TEST(FlagsTest, KubeadmArgumentsAreAccepted) {
  Flags f;
  std::string err;
  ASSERT_TRUE(Parse({"--authentication-kubeconfig=/etc/kubernetes/scheduler.conf",
                     "--authorization-kubeconfig=/etc/kubernetes/scheduler.conf", "--bind-address=127.0.0.1",
                     "--kubeconfig=/etc/kubernetes/scheduler.conf", "--leader-elect=true",
                     "--feature-gates=SchedulerQueueingHints=true,kube:PodLevelResources=true",
                     "--logging-format=json"},
                    &f, &err))
      << err;
  EXPECT_EQ(f.authentication_kubeconfig, "/etc/kubernetes/scheduler.conf");
  EXPECT_EQ(f.authorization_kubeconfig, "/etc/kubernetes/scheduler.conf");
  EXPECT_EQ(f.bind_address, "127.0.0.1");
  EXPECT_EQ(f.leader_elect, true);
  EXPECT_EQ(f.logging_format, "json");
  EXPECT_EQ(f.feature_gates, (std::vector<std::pair<std::string, bool>>{{"SchedulerQueueingHints", true},
                                                                         {"PodLevelResources", true}}));
  EXPECT_TRUE(f.without_effect.empty());
  EXPECT_TRUE(ValidateFlags(f).ok()) << ValidateFlags(f).ToString();
}

// Every flag of kube-scheduler is known; those without an effect in ksched are noted once
// each, with the reason, for main's warning line.
TEST(FlagsTest, FlagsWithoutEffectAreAcceptedAndNoted) {
  Flags f;
  std::string err;
  ASSERT_TRUE(Parse({"--profiling=false", "--client-ca-file=/ca.crt", "--requestheader-allowed-names=front-proxy",
                     "--permit-port-sharing", "--profiling", "--authentication_skip_lookup=true"},
                    &f, &err))
      << err;
  std::vector<std::string> names;
  for (const auto& [name, why] : f.without_effect) {
    names.push_back(name);
    EXPECT_FALSE(why.empty()) << name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"profiling", "client-ca-file", "requestheader-allowed-names",
                                             "permit-port-sharing", "authentication-skip-lookup"}));
  // The value is still checked.
  EXPECT_FALSE(Parse({"--permit-port-sharing=maybe"}, &f, &err));
  EXPECT_NE(err.find("--permit-port-sharing"), std::string::npos) << err;
}

TEST(FlagsTest, FeatureGatesAreCheckedAsUpstreamChecksThem) {
  struct Case {
    std::string arg, want;
  } cases[] = {
      {"--feature-gates=NoSuchGate=true", "unrecognized feature gate: NoSuchGate"},
      {"--feature-gates=DynamicResourceAllocation=false",
       "cannot set feature gate DynamicResourceAllocation to false, feature is locked to true"},
  };
  for (const Case& c : cases) {
    Flags f;
    std::string err;
    ASSERT_TRUE(Parse({c.arg}, &f, &err)) << err;
    Status s = ValidateFlags(f);
    EXPECT_FALSE(s.ok()) << c.arg;
    EXPECT_EQ(s.message(), c.want);
  }
  Flags f;
  std::string err;
  EXPECT_FALSE(Parse({"--feature-gates=PodLevelResources"}, &f, &err));
  EXPECT_NE(err.find("missing bool value for PodLevelResources"), std::string::npos) << err;
  EXPECT_FALSE(Parse({"--feature-gates=PodLevelResources=yes"}, &f, &err));
  EXPECT_NE(err.find("invalid value of PodLevelResources=yes"), std::string::npos) << err;
  EXPECT_FALSE(Parse({"--feature-gates=wardle:Foo=true"}, &f, &err));
  EXPECT_NE(err.find("component not registered: wardle"), std::string::npos) << err;
}

TEST(FlagsTest, LogMetricsAndTlsFlagsAreValidated) {
  auto invalid = [](std::vector<std::string> args) {
    Flags f;
    std::string err;
    EXPECT_TRUE(Parse(args, &f, &err)) << err;
    return ValidateFlags(f).message();
  };
  EXPECT_NE(invalid({"--logging-format=xml"}).find("Unsupported log format"), std::string::npos);
  EXPECT_EQ(invalid({"--logging-format=json", "--vmodule=scheduler=4"}),
            "Non-default format doesn't honor flag: vmodule");
  EXPECT_NE(invalid({"--show-hidden-metrics-for-version=1.30"}).find("'1.35'"), std::string::npos);
  EXPECT_NE(invalid({"--tls-min-version=VersionTLS11"}).find("TLS 1.2 is its minimum"), std::string::npos);
  EXPECT_NE(invalid({"--tls-cipher-suites=TLS_BOGUS"}).find("TLS_BOGUS"), std::string::npos);
  EXPECT_EQ(invalid({"--show-hidden-metrics-for-version=1.35", "--tls-min-version=VersionTLS13",
                     "--tls-cipher-suites=TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_AES_128_GCM_SHA256"}),
            "");
  EXPECT_EQ(OpenSslCipherList({"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "TLS_AES_128_GCM_SHA256",
                               "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256"}),
            "ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-CHACHA20-POLY1305");
  Flags f;
  std::string err;
  ASSERT_TRUE(Parse({"--vmodule=schedule_one=4,api_*=2"}, &f, &err)) << err;
  EXPECT_EQ(f.vmodule, (std::vector<std::pair<std::string, int>>{{"schedule_one", 4}, {"api_*", 2}}));
}

// Without --config the deprecated client flags set the client connection, as upstream.
TEST(FlagsTest, DeprecatedClientFlagsApplyOnlyWithoutAConfigFile) {
  Flags f;
  std::string err;
  ASSERT_TRUE(Parse({"--kube-api-qps=20", "--kube-api-burst=40"}, &f, &err)) << err;
  config::KubeSchedulerConfiguration cfg;
  ApplyFlagOverrides(f, cfg);
  EXPECT_EQ(cfg.client_connection.qps, 20);
  EXPECT_EQ(cfg.client_connection.burst, 40);
  f.config = "/etc/ksched/config.yaml";
  config::KubeSchedulerConfiguration from_file;
  ApplyFlagOverrides(f, from_file);
  EXPECT_EQ(from_file.client_connection.qps, 50);
}

TEST(FlagsTest, UsageHasUpstreamsGroupsAndTheGates) {
  const std::string u = Usage();
  size_t last = 0;
  for (const char* group : {"Misc flags:", "Secure serving flags:", "Authentication flags:", "Authorization flags:",
                            "Deprecated flags:", "Leader election flags:", "Feature gate flags:", "Metrics flags:",
                            "Logs flags:", "Global flags:", "ksched flags:"}) {
    size_t at = u.find(group);
    ASSERT_NE(at, std::string::npos) << group;
    EXPECT_GT(at, last) << group;
    last = at;
  }
  EXPECT_NE(u.find("kube:PodLevelResources=true|false (BETA - default=true)"), std::string::npos);
  EXPECT_NE(u.find("--profiling"), std::string::npos);
  EXPECT_NE(u.find("[no effect in ksched: ksched serves no /debug/pprof endpoint]"), std::string::npos);
}

}  // namespace
}  // namespace ksched::cmd
