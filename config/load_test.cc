#include "config/effective_plugins.h"
#include "config/encode.h"
#include "config/load.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "config/defaults.h"
#include "config/validate.h"

namespace ksched::config {
namespace {

using namespace std::chrono_literals;

constexpr std::string_view kHeader =
    "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n";

StatusOr<KubeSchedulerConfiguration> Load(std::string_view body) {
  return LoadConfigFromString(std::string(kHeader) + std::string(body));
}

TEST(LoadTest, MinimalFileGetsUpstreamDefaults) {
  auto cfg = Load("");
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  EXPECT_EQ(cfg->parallelism, 16);
  EXPECT_TRUE(cfg->leader_election.leader_elect);
  EXPECT_EQ(cfg->leader_election.lease_duration, 15s);
  EXPECT_EQ(cfg->leader_election.renew_deadline, 10s);
  EXPECT_EQ(cfg->leader_election.retry_period, 2s);
  EXPECT_EQ(cfg->leader_election.resource_lock, "leases");
  EXPECT_EQ(cfg->leader_election.resource_name, "kube-scheduler");
  EXPECT_EQ(cfg->leader_election.resource_namespace, "kube-system");
  EXPECT_EQ(cfg->client_connection.qps, 50);
  EXPECT_EQ(cfg->client_connection.burst, 100);
  EXPECT_EQ(cfg->client_connection.content_type, "application/vnd.kubernetes.protobuf");
  EXPECT_EQ(cfg->percentage_of_nodes_to_score, 0);
  EXPECT_EQ(cfg->pod_initial_backoff_seconds, 1);
  EXPECT_EQ(cfg->pod_max_backoff_seconds, 10);
  EXPECT_TRUE(cfg->enable_profiling);
  EXPECT_EQ(cfg->enable_contention_profiling, true);
  EXPECT_FALSE(cfg->delay_cache_until_active);
  ASSERT_EQ(cfg->profiles.size(), 1u);
  const KubeSchedulerProfile& p = cfg->profiles[0];
  EXPECT_EQ(p.scheduler_name, "default-scheduler");
  EXPECT_EQ(p.plugins, DefaultPlugins());
  std::vector<std::string> arg_names;
  for (const PluginConfig& pc : p.plugin_config) arg_names.push_back(pc.name);
  EXPECT_EQ(arg_names, (std::vector<std::string>{"DefaultPreemption", "DynamicResources", "InterPodAffinity",
                                                 "NodeAffinity", "NodeResourcesBalancedAllocation",
                                                 "NodeResourcesFit", "PodTopologySpread", "VolumeBinding"}));
  EXPECT_EQ(*ArgsAs<DefaultPreemptionArgs>(p.plugin_config[0]), (DefaultPreemptionArgs{10, 100}));
  const auto* dra = ArgsAs<DynamicResourcesArgs>(p.plugin_config[1]);
  ASSERT_NE(dra, nullptr);
  EXPECT_EQ(dra->filter_timeout, 10s);
  EXPECT_EQ(dra->binding_timeout, 600s);
  EXPECT_EQ(ArgsAs<InterPodAffinityArgs>(p.plugin_config[2])->hard_pod_affinity_weight, 1);
  const auto* fit = ArgsAs<NodeResourcesFitArgs>(p.plugin_config[5]);
  ASSERT_TRUE(fit && fit->scoring_strategy);
  EXPECT_EQ(fit->scoring_strategy->type, "LeastAllocated");
  EXPECT_EQ(fit->scoring_strategy->resources, (std::vector<ResourceSpec>{{"cpu", 1}, {"memory", 1}}));
  EXPECT_EQ(ArgsAs<PodTopologySpreadArgs>(p.plugin_config[6])->defaulting_type, "System");
  EXPECT_EQ(ArgsAs<VolumeBindingArgs>(p.plugin_config[7])->bind_timeout_seconds, 600);
  EXPECT_TRUE(ValidateConfig(*cfg).ok()) << ValidateConfig(*cfg).ToString();
}

TEST(LoadTest, EveryFieldIsRead) {
  auto cfg = Load(R"(
parallelism: 8
leaderElection:
  leaderElect: false
  leaseDuration: 1m30s
  renewDeadline: 45s
  retryPeriod: 500ms
  resourceLock: leases
  resourceName: ksched
  resourceNamespace: ksched-system
clientConnection:
  kubeconfig: /etc/kubeconfig
  acceptContentTypes: application/json
  contentType: application/json
  qps: 12.5
  burst: 7
percentageOfNodesToScore: 40
podInitialBackoffSeconds: 2
podMaxBackoffSeconds: 20
delayCacheUntilActive: true
enableProfiling: false
profiles:
- schedulerName: ksched
  percentageOfNodesToScore: 30
  plugins:
    score:
      enabled:
      - name: NodeResourcesFit
        weight: 5
      disabled:
      - name: ImageLocality
  pluginConfig:
  - name: NodeResourcesFit
    args:
      ignoredResources: [example.com/foo]
      ignoredResourceGroups: [example.org]
      scoringStrategy:
        type: RequestedToCapacityRatio
        resources:
        - {name: cpu, weight: 3}
        requestedToCapacityRatio:
          shape:
          - {utilization: 0, score: 0}
          - {utilization: 100, score: 10}
  - name: NodeAffinity
    args:
      addedAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchExpressions:
            - {key: zone, operator: In, values: [a, b]}
        preferredDuringSchedulingIgnoredDuringExecution:
        - weight: 5
          preference:
            matchFields:
            - {key: metadata.name, operator: In, values: [n1]}
  - name: PodTopologySpread
    args:
      defaultingType: List
      defaultConstraints:
      - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway}
  - name: InterPodAffinity
    args: {hardPodAffinityWeight: 5, ignorePreferredTermsOfExistingPods: true}
  - name: VolumeBinding
    args: {bindTimeoutSeconds: 30}
  - name: DefaultPreemption
    args:
      kind: DefaultPreemptionArgs
      apiVersion: kubescheduler.config.k8s.io/v1
      minCandidateNodesPercentage: 20
      minCandidateNodesAbsolute: 50
  - name: NodeResourcesBalancedAllocation
    args: {resources: [{name: cpu, weight: 1}]}
  - name: DynamicResources
    args: {filterTimeout: 0s, bindingTimeout: 2m30s}
  - name: MyOutOfTreePlugin
    args: {anything: [1, 2, {x: y}]}
)");
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  EXPECT_EQ(cfg->parallelism, 8);
  EXPECT_FALSE(cfg->leader_election.leader_elect);
  EXPECT_EQ(cfg->leader_election.lease_duration, 90s);
  EXPECT_EQ(cfg->leader_election.renew_deadline, 45s);
  EXPECT_EQ(cfg->leader_election.retry_period, 500ms);
  EXPECT_EQ(cfg->leader_election.resource_name, "ksched");
  EXPECT_EQ(cfg->leader_election.resource_namespace, "ksched-system");
  EXPECT_EQ(cfg->client_connection.kubeconfig, "/etc/kubeconfig");
  EXPECT_EQ(cfg->client_connection.accept_content_types, "application/json");
  EXPECT_EQ(cfg->client_connection.content_type, "application/json");
  EXPECT_FLOAT_EQ(cfg->client_connection.qps, 12.5f);
  EXPECT_EQ(cfg->client_connection.burst, 7);
  EXPECT_EQ(cfg->percentage_of_nodes_to_score, 40);
  EXPECT_EQ(cfg->pod_initial_backoff_seconds, 2);
  EXPECT_EQ(cfg->pod_max_backoff_seconds, 20);
  EXPECT_TRUE(cfg->delay_cache_until_active);
  EXPECT_FALSE(cfg->enable_profiling);
  EXPECT_EQ(cfg->enable_contention_profiling, false);  // follows enableProfiling when unset
  const KubeSchedulerProfile& p = cfg->profiles[0];
  EXPECT_EQ(p.scheduler_name, "ksched");
  EXPECT_EQ(p.percentage_of_nodes_to_score, 30);
  EXPECT_EQ(p.plugins.score.enabled, (std::vector<Plugin>{{"NodeResourcesFit", 5}}));
  EXPECT_EQ(p.plugins.score.disabled, (std::vector<Plugin>{{"ImageLocality", 0}}));
  const auto* fit = ArgsAs<NodeResourcesFitArgs>(p.plugin_config[0]);
  ASSERT_NE(fit, nullptr);
  EXPECT_EQ(fit->ignored_resources, (std::vector<std::string>{"example.com/foo"}));
  EXPECT_EQ(fit->ignored_resource_groups, (std::vector<std::string>{"example.org"}));
  EXPECT_EQ(fit->scoring_strategy->type, "RequestedToCapacityRatio");
  EXPECT_EQ(fit->scoring_strategy->resources, (std::vector<ResourceSpec>{{"cpu", 3}}));
  EXPECT_EQ(fit->scoring_strategy->requested_to_capacity_ratio_shape,
            (std::vector<UtilizationShapePoint>{{0, 0}, {100, 10}}));
  const auto* na = ArgsAs<NodeAffinityArgs>(p.plugin_config[1]);
  ASSERT_TRUE(na && na->added_affinity && na->added_affinity->required);
  EXPECT_EQ((*na->added_affinity->required)[0].match_expressions[0],
            (NodeSelectorRequirement{"zone", "In", {"a", "b"}}));
  EXPECT_EQ(na->added_affinity->preferred[0].weight, 5);
  EXPECT_EQ(na->added_affinity->preferred[0].preference.match_fields[0].key, "metadata.name");
  const auto* pts = ArgsAs<PodTopologySpreadArgs>(p.plugin_config[2]);
  EXPECT_EQ(pts->defaulting_type, "List");
  EXPECT_EQ(pts->default_constraints[0].topology_key, "topology.kubernetes.io/zone");
  EXPECT_EQ(*ArgsAs<InterPodAffinityArgs>(p.plugin_config[3]), (InterPodAffinityArgs{5, true}));
  EXPECT_EQ(ArgsAs<VolumeBindingArgs>(p.plugin_config[4])->bind_timeout_seconds, 30);
  EXPECT_EQ(*ArgsAs<DefaultPreemptionArgs>(p.plugin_config[5]), (DefaultPreemptionArgs{20, 50}));
  EXPECT_EQ(*ArgsAs<DynamicResourcesArgs>(p.plugin_config[7]), (DynamicResourcesArgs{0s, 150s}));
  EXPECT_NE(ArgsAs<RawArgs>(p.plugin_config[8]), nullptr);
  // Defaults do not add a second config for a configured plugin.
  EXPECT_EQ(p.plugin_config.size(), 9u);
  EXPECT_TRUE(ValidateConfig(*cfg).ok()) << ValidateConfig(*cfg).ToString();
}

TEST(LoadTest, ExtenderFieldsAreRead) {
  auto cfg = Load(R"(
extenders:
- urlPrefix: https://127.0.0.1:9443/scheduler
  filterVerb: filter
  preemptVerb: preempt
  prioritizeVerb: prioritize
  weight: 5
  bindVerb: bind
  enableHTTPS: true
  tlsConfig: {insecure: false, serverName: extender.local, caFile: /etc/ca.crt, certData: Y2VydA==}
  httpTimeout: 30s
  nodeCacheCapable: true
  managedResources:
  - name: example.com/gpu
    ignoredByScheduler: true
  ignorable: true
)");
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  ASSERT_EQ(cfg->extenders.size(), 1u);
  const Extender& e = cfg->extenders[0];
  EXPECT_EQ(e.url_prefix, "https://127.0.0.1:9443/scheduler");
  EXPECT_EQ(e.filter_verb, "filter");
  EXPECT_EQ(e.preempt_verb, "preempt");
  EXPECT_EQ(e.prioritize_verb, "prioritize");
  EXPECT_EQ(e.weight, 5);
  EXPECT_EQ(e.bind_verb, "bind");
  EXPECT_TRUE(e.enable_https);
  ASSERT_TRUE(e.tls_config.has_value());
  EXPECT_EQ(e.tls_config->server_name, "extender.local");
  EXPECT_EQ(e.tls_config->ca_file, "/etc/ca.crt");
  EXPECT_EQ(e.tls_config->cert_data, "Y2VydA==");
  EXPECT_EQ(e.http_timeout, std::chrono::seconds(30));
  EXPECT_TRUE(e.node_cache_capable);
  EXPECT_EQ(e.managed_resources, (std::vector<ExtenderManagedResource>{{"example.com/gpu", true}}));
  EXPECT_TRUE(e.ignorable);
  EXPECT_TRUE(ValidateConfig(*cfg).ok()) << ValidateConfig(*cfg).ToString();

  auto unknown = LoadConfigFromString(std::string(kHeader) + "extenders:\n- {urlPrefix: http://x, filterVerbs: f}\n");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("unknown field \"extenders[0].filterVerbs\""), std::string::npos)
      << unknown.status().message();
}

TEST(LoadTest, DecodingErrors) {
  struct Case {
    std::string_view name, body, want;
  } cases[] = {
      {"unknown top-level", "foo: 1\n", "strict decoding error: unknown field \"foo\""},
      {"unknown nested", "profiles:\n- schedulerName: a\n  foo: 1\n",
       "strict decoding error: unknown field \"profiles[0].foo\""},
      {"unknown plugin set field", "profiles:\n- plugins:\n    filter:\n      enable: []\n",
       "strict decoding error: unknown field \"profiles[0].plugins.filter.enable\""},
      {"field names are case sensitive", "Parallelism: 3\n", "strict decoding error: unknown field \"Parallelism\""},
      {"duplicate", "parallelism: 1\nparallelism: 2\n", "strict decoding error: duplicate field \"parallelism\""},
      {"duplicate nested", "leaderElection:\n  leaderElect: true\n  leaderElect: false\n",
       "strict decoding error: duplicate field \"leaderElection.leaderElect\""},
      {"several strict errors", "a: 1\nb: 2\n", "strict decoding error: unknown field \"a\", unknown field \"b\""},
      {"unknown args field", "profiles:\n- pluginConfig:\n  - name: DefaultPreemption\n    args: {foo: 1}\n",
       "decoding .profiles[0].pluginConfig[0]: decoding args for plugin DefaultPreemption: strict decoding error: "
       "unknown field \"foo\""},
      {"unknown DynamicResources args field",
       "profiles:\n- pluginConfig:\n  - name: DynamicResources\n    args: {filterTimeout: 1s, timeout: 1s}\n",
       "decoding .profiles[0].pluginConfig[0]: decoding args for plugin DynamicResources: strict decoding error: "
       "unknown field \"timeout\""},
      {"DynamicResources args kind",
       "profiles:\n- pluginConfig:\n  - name: DynamicResources\n    args: {kind: VolumeBindingArgs}\n",
       "decoding .profiles[0].pluginConfig[0]: args for plugin DynamicResources were not of type "
       "DynamicResourcesArgs.kubescheduler.config.k8s.io, got VolumeBindingArgs.kubescheduler.config.k8s.io"},
      {"number for filterTimeout",
       "profiles:\n- pluginConfig:\n  - name: DynamicResources\n    args: {filterTimeout: 10}\n",
       "decoding .profiles[0].pluginConfig[0]: decoding args for plugin DynamicResources: cannot unmarshal number "
       "\"10\" into \"filterTimeout\" of type duration string such as \"15s\" (line 6, column 27)"},
      {"bad bindingTimeout",
       "profiles:\n- pluginConfig:\n  - name: DynamicResources\n    args: {bindingTimeout: 10 minutes}\n",
       "decoding .profiles[0].pluginConfig[0]: decoding args for plugin DynamicResources: decoding "
       "\"bindingTimeout\": time: unknown unit \" minutes\" in duration \"10 minutes\" (line 6, column 28)"},
      {"wrong args kind",
       "profiles:\n- pluginConfig:\n  - name: VolumeBinding\n    args: {kind: InterPodAffinityArgs}\n",
       "decoding .profiles[0].pluginConfig[0]: args for plugin VolumeBinding were not of type "
       "VolumeBindingArgs.kubescheduler.config.k8s.io, got InterPodAffinityArgs.kubescheduler.config.k8s.io"},
      {"string for int", "parallelism: abc\n",
       "cannot unmarshal string \"abc\" into \"parallelism\" of type int32 (line 3, column 14)"},
      {"quoted int", "parallelism: \"16\"\n",
       "cannot unmarshal string \"16\" into \"parallelism\" of type int32 (line 3, column 14)"},
      {"int32 overflow", "parallelism: 3000000000\n",
       "cannot unmarshal number 3000000000 into \"parallelism\" of type int32: out of range (line 3, column 14)"},
      {"float for int", "podMaxBackoffSeconds: 1.5\n",
       "cannot unmarshal number \"1.5\" into \"podMaxBackoffSeconds\" of type int64 (line 3, column 23)"},
      {"bad duration", "leaderElection:\n  leaseDuration: 15x\n",
       "decoding \"leaderElection.leaseDuration\": time: unknown unit \"x\" in duration \"15x\" (line 4, column 18)"},
      {"number for duration", "leaderElection:\n  leaseDuration: 15\n",
       "cannot unmarshal number \"15\" into \"leaderElection.leaseDuration\" of type duration string such as \"15s\" "
       "(line 4, column 18)"},
      {"list for object", "leaderElection: [1]\n",
       "cannot unmarshal array into \"leaderElection\" of type object (line 3, column 17)"},
      {"object for list", "profiles: {a: 1}\n",
       "cannot unmarshal object into \"profiles\" of type array (line 3, column 11)"},
      {"bool as string", "enableProfiling: \"true\"\n",
       "cannot unmarshal string \"true\" into \"enableProfiling\" of type bool (line 3, column 18)"},
  };
  for (const Case& c : cases) {
    auto cfg = Load(c.body);
    ASSERT_FALSE(cfg.ok()) << c.name;
    EXPECT_EQ(cfg.status().message(), c.want) << c.name;
    EXPECT_EQ(cfg.status().code(), StatusCode::kInvalidArgument) << c.name;
  }
}

TEST(LoadTest, NullsAndPlainScalarsBehaveLikeSigsYaml) {
  auto cfg = Load("parallelism: null\nprofiles:\n- schedulerName: 123\n  plugins: ~\nleaderElection:\n  leaderElect: no\n");
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  EXPECT_EQ(cfg->parallelism, 16);
  EXPECT_EQ(cfg->profiles[0].scheduler_name, "123");
  EXPECT_FALSE(cfg->leader_election.leader_elect);
}

TEST(LoadTest, TypeMetaErrors) {
  struct Case {
    std::string_view name, doc, want;
  } cases[] = {
      {"v1beta3", "apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n",
       "no kind \"KubeSchedulerConfiguration\" is registered for version \"kubescheduler.config.k8s.io/v1beta3\": "
       "kubescheduler.config.k8s.io/v1beta3 is no longer supported (removed in Kubernetes 1.29), use "
       "kubescheduler.config.k8s.io/v1"},
      {"v1beta2", "apiVersion: kubescheduler.config.k8s.io/v1beta2\nkind: KubeSchedulerConfiguration\n",
       "no kind \"KubeSchedulerConfiguration\" is registered for version \"kubescheduler.config.k8s.io/v1beta2\": "
       "kubescheduler.config.k8s.io/v1beta2 is no longer supported (removed in Kubernetes 1.28), use "
       "kubescheduler.config.k8s.io/v1"},
      {"v1beta1", "apiVersion: kubescheduler.config.k8s.io/v1beta1\nkind: KubeSchedulerConfiguration\n",
       "no kind \"KubeSchedulerConfiguration\" is registered for version \"kubescheduler.config.k8s.io/v1beta1\": "
       "kubescheduler.config.k8s.io/v1beta1 is no longer supported, use kubescheduler.config.k8s.io/v1"},
      {"missing kind", "apiVersion: kubescheduler.config.k8s.io/v1\n", "Object 'Kind' is missing in config"},
      {"missing apiVersion", "kind: KubeSchedulerConfiguration\n", "Object 'apiVersion' is missing in config"},
      {"wrong kind", "apiVersion: kubescheduler.config.k8s.io/v1\nkind: Policy\n",
       "no kind \"Policy\" is registered for version \"kubescheduler.config.k8s.io/v1\"; expected kind "
       "\"KubeSchedulerConfiguration\" in \"kubescheduler.config.k8s.io/v1\""},
      {"empty document", "", "Object 'Kind' is missing in config"},
      {"list root", "- a\n- b\n", "couldn't get version/kind; json parse error: the document is a list, not an object"},
      {"scalar root", "hello\n", "couldn't get version/kind; json parse error: the document is a scalar, not an object"},
  };
  for (const Case& c : cases) {
    auto cfg = LoadConfigFromString(c.doc);
    ASSERT_FALSE(cfg.ok()) << c.name;
    EXPECT_EQ(cfg.status().message(), c.want) << c.name;
  }
}

TEST(LoadTest, JsonInputLoads) {
  auto cfg = LoadConfigFromString(
      R"({"apiVersion":"kubescheduler.config.k8s.io/v1","kind":"KubeSchedulerConfiguration",)"
      R"("parallelism":4,"profiles":[{"schedulerName":"a"},{"schedulerName":"b"}]})");
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  EXPECT_EQ(cfg->parallelism, 4);
  ASSERT_EQ(cfg->profiles.size(), 2u);
  EXPECT_EQ(cfg->profiles[1].scheduler_name, "b");
}

TEST(LoadTest, DeprecatedBindAddressesAreAccepted) {
  auto cfg = Load("healthzBindAddress: 0.0.0.0:10251\nmetricsBindAddress: 0.0.0.0:10251\n");
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  EXPECT_EQ(cfg->healthz_bind_address, "0.0.0.0:10251");
}

TEST(LoadTest, EncodeRoundTrips) {
  const std::string_view bodies[] = {
      "",
      "leaderElection: {leaderElect: false, leaseDuration: 1m30s}\nclientConnection: {qps: 0.1}\n"
      "percentageOfNodesToScore: 70\ndelayCacheUntilActive: true\n",
      "profiles:\n- schedulerName: a\n  percentageOfNodesToScore: 5\n  plugins:\n"
      "    multiPoint:\n      disabled: [{name: '*'}]\n      enabled: [{name: PrioritySort}, {name: DefaultBinder}]\n"
      "    filter:\n      enabled: [{name: NodeName}]\n"
      "  pluginConfig:\n  - name: Custom\n    args: {a: [1, 2], b: {c: 'true'}}\n"
      "  - name: NodeAffinity\n    args:\n      addedAffinity:\n        requiredDuringSchedulingIgnoredDuringExecution:\n"
      "          nodeSelectorTerms: [{matchExpressions: [{key: k, operator: Exists}]}]\n"
      "- schedulerName: 'yes'\n",
      "profiles:\n- pluginConfig:\n  - name: DynamicResources\n    args: {filterTimeout: 0s, bindingTimeout: 1h2m3.5s}\n",
      "extenders:\n- {urlPrefix: 'http://127.0.0.1:8888/x', filterVerb: filter, prioritizeVerb: p, weight: 3,\n"
      "   bindVerb: b, preemptVerb: pre, enableHTTPS: true, httpTimeout: 1.5s, nodeCacheCapable: true, ignorable: true,\n"
      "   managedResources: [{name: example.com/gpu, ignoredByScheduler: true}, {name: example.com/fpga}],\n"
      "   tlsConfig: {insecure: true, serverName: s, certFile: c, keyFile: k, caFile: a, certData: Yw==,\n"
      "               keyData: aw==, caData: YQ==}}\n"
      "- {urlPrefix: 'http://127.0.0.1:8889'}\n",
  };
  for (std::string_view body : bodies) {
    auto cfg = Load(body);
    ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
    std::string text = EncodeConfig(*cfg);
    auto again = LoadConfigFromString(text);
    ASSERT_TRUE(again.ok()) << again.status().ToString() << "\n" << text;
    EXPECT_EQ(*again, *cfg) << text;
    EXPECT_EQ(EncodeConfig(*again), text);
  }
}

TEST(LoadTest, EncodedDefaultsLookLikeUpstream) {
  auto cfg = Load("");
  ASSERT_TRUE(cfg.ok());
  std::string text = EncodeConfig(*cfg);
  for (std::string_view want : {"apiVersion: kubescheduler.config.k8s.io/v1\nclientConnection:\n",
                                "  contentType: application/vnd.kubernetes.protobuf\n", "  qps: 50\n",
                                "leaderElection:\n  leaderElect: true\n  leaseDuration: 15s\n  renewDeadline: 10s\n",
                                "parallelism: 16\npercentageOfNodesToScore: 0\npodInitialBackoffSeconds: 1\n",
                                "- name: TaintToleration\n            weight: 3\n",
                                "filter: {}\n", "schedulerName: default-scheduler\n",
                                "kind: DefaultPreemptionArgs\n          minCandidateNodesAbsolute: 100\n",
                                "- args:\n          apiVersion: kubescheduler.config.k8s.io/v1\n"
                                "          bindingTimeout: 10m0s\n          filterTimeout: 10s\n"
                                "          kind: DynamicResourcesArgs\n        name: DynamicResources\n",
                                "- name: InterPodAffinity\n            weight: 2\n"
                                "          - name: DynamicResources\n            weight: 0\n"
                                "          - name: DefaultPreemption\n"}) {
    EXPECT_NE(text.find(want), std::string::npos) << want << "\n---\n" << text;
  }
}

TEST(LoadTest, Files) {
  std::string path = ::testing::TempDir() + "/ksched_config_test.yaml";
  {
    std::ofstream out(path);
    out << kHeader << "parallelism: 3\n";
  }
  auto cfg = LoadConfigFile(path);
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  EXPECT_EQ(cfg->parallelism, 3);
  {
    std::ofstream out(path);
    out << kHeader << "bogus: 1\n";
  }
  cfg = LoadConfigFile(path);
  ASSERT_FALSE(cfg.ok());
  EXPECT_EQ(cfg.status().message(),
            "loading config file \"" + path + "\": strict decoding error: unknown field \"bogus\"");
  std::remove(path.c_str());
  cfg = LoadConfigFile(path);
  ASSERT_FALSE(cfg.ok());
  EXPECT_NE(cfg.status().message().find("failed to read config file"), std::string::npos);
}

}  // namespace
}  // namespace ksched::config

namespace ksched::config {
namespace {

TEST(SampleFilesTest, LoadAndValidate) {
  const std::string dir = KSCHED_CONFIG_TESTDATA;
  struct Case {
    std::string_view file, validation_error;
  } cases[] = {
      {"minimal.yaml", ""},
      {"ksched.yaml", ""},
      {"multi-profile.yaml", ""},
      {"invalid-backoff.yaml",
       "podMaxBackoffSeconds: Invalid value: 5: must be greater than or equal to PodInitialBackoffSeconds"},
  };
  for (const Case& c : cases) {
    auto cfg = LoadConfigFile(dir + "/" + std::string(c.file));
    ASSERT_TRUE(cfg.ok()) << c.file << ": " << cfg.status().ToString();
    Status s = ValidateConfig(*cfg);
    EXPECT_EQ(s.ok() ? "" : s.message(), c.validation_error) << c.file;
    for (const KubeSchedulerProfile& p : cfg->profiles) {
      auto eff = EffectivePlugins(p);
      EXPECT_TRUE(eff.ok()) << c.file << ": " << eff.status().ToString();
    }
    auto again = LoadConfigFromString(EncodeConfig(*cfg));
    ASSERT_TRUE(again.ok()) << c.file;
    EXPECT_EQ(*again, *cfg) << c.file;
  }
  // The second profile of multi-profile.yaml scores with nothing; its filters are the defaults.
  auto cfg = LoadConfigFile(dir + "/multi-profile.yaml");
  ASSERT_TRUE(cfg.ok());
  auto eff = EffectivePlugins(cfg->profiles[1]);
  ASSERT_TRUE(eff.ok());
  EXPECT_TRUE(eff->at(ExtensionPoint::kScore).empty());
  EXPECT_TRUE(eff->at(ExtensionPoint::kPreScore).empty());
  EXPECT_EQ(eff->at(ExtensionPoint::kFilter).size(), 13u);
}

}  // namespace
}  // namespace ksched::config
