#include "config/validate.h"

#include <gtest/gtest.h>

#include "config/load.h"

namespace ksched::config {
namespace {

std::string ValidationMessage(std::string_view body) {
  auto cfg = LoadConfigFromString(
      "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n" + std::string(body));
  if (!cfg.ok()) return "LOAD ERROR: " + cfg.status().message();
  Status s = ValidateConfig(*cfg);
  return s.ok() ? "" : s.message();
}

struct Case {
  std::string_view name, body, want;
};

TEST(ValidateTest, UpstreamMessages) {
  const Case cases[] = {
      {"valid", "", ""},
      {"backoff", "podInitialBackoffSeconds: 10\npodMaxBackoffSeconds: 5\n",
       "podMaxBackoffSeconds: Invalid value: 5: must be greater than or equal to PodInitialBackoffSeconds"},
      {"initial backoff", "podInitialBackoffSeconds: 0\n",
       "podInitialBackoffSeconds: Invalid value: 0: must be greater than 0"},
      {"parallelism", "parallelism: 0\n",
       "parallelism: Invalid value: 0: should be an integer value greater than zero"},
      {"percentage", "percentageOfNodesToScore: 101\n",
       "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]"},
      {"profile percentage", "profiles:\n- percentageOfNodesToScore: -1\n",
       "profiles[0].percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]"},
      {"burst", "clientConnection: {burst: -1}\n", "clientConnection.burst: Invalid value: -1: must be non-negative"},
      {"lease vs renew", "leaderElection: {leaseDuration: 10s, renewDeadline: 10s}\n",
       "leaderElection.leaseDuration: Invalid value: 10s: LeaseDuration must be greater than RenewDeadline"},
      {"zero retry", "leaderElection: {retryPeriod: 0s}\n",
       "leaderElection.retryPeriod: Invalid value: 0s: must be greater than zero"},
      {"jitter", "leaderElection: {renewDeadline: 2s, retryPeriod: 2s}\n",
       "leaderElection.renewDeadline: Invalid value: 2s: renewDeadline must be greater than retryPeriod*JitterFactor"},
      {"election off skips checks", "leaderElection: {leaderElect: false, leaseDuration: 1s, resourceLock: endpoints}\n",
       ""},
      {"resource lock", "leaderElection: {resourceLock: endpoints}\n",
       "leaderElection.resourceLock: Invalid value: \"endpoints\": resourceLock value must be \"leases\""},
      {"resource name", "leaderElection: {resourceName: \"\"}\n",
       "leaderElection.resourceName: Invalid value: \"\": resourceName is required"},
      {"duplicate scheduler name", "profiles:\n- schedulerName: a\n- schedulerName: a\n",
       "profiles[1].schedulerName: Duplicate value: \"a\""},
      {"scheduler name required", "profiles:\n- schedulerName: a\n- schedulerName: \"\"\n",
       "profiles[1].schedulerName: Required value"},
      {"two queue sorts",
       "profiles:\n- plugins:\n    queueSort:\n      enabled: [{name: PrioritySort}, {name: Other}]\n",
       "profiles[0].plugins.queueSort.Enabled: Invalid value: 2: only one queue sort plugin can be enabled"},
      {"queue sort differs",
       "profiles:\n- schedulerName: a\n- schedulerName: b\n  plugins:\n    queueSort:\n      disabled: [{name: '*'}]\n"
       "      enabled: [{name: Custom}]\n",
       "profiles[1].plugins.queueSort: Invalid value: config.PluginSet{Enabled:[]config.Plugin{config.Plugin{"
       "Name:\"Custom\", Weight:0}}, Disabled:[]config.Plugin{config.Plugin{Name:\"*\", Weight:0}}}: must be the "
       "same for all profiles"},
      {"extender", "extenders:\n- urlPrefix: http://x\n  filterVerb: filter\n", ""},
      {"extender prioritizer weight", "extenders:\n- urlPrefix: http://x\n  prioritizeVerb: prioritize\n",
       "extenders[0].weight: Invalid value: 0: must have a positive weight applied to it"},
      {"extender weight without prioritizer", "extenders:\n- urlPrefix: http://x\n  weight: -3\n", ""},
      {"two binders",
       "extenders:\n- {urlPrefix: http://a, bindVerb: bind}\n- {urlPrefix: http://b, bindVerb: bind}\n",
       "extenders: Invalid value: \"found 2 extenders implementing bind\": only one extender can implement bind"},
      {"managed resource not extended",
       "extenders:\n- urlPrefix: http://x\n  managedResources: [{name: cpu}]\n",
       "extenders[0].managedResources[0].name: Invalid value: \"cpu\": is an invalid extended resource name"},
      {"managed resource in kubernetes.io",
       "extenders:\n- urlPrefix: http://x\n  managedResources: [{name: kubernetes.io/gpu}]\n",
       "extenders[0].managedResources[0].name: Invalid value: \"kubernetes.io/gpu\": is an invalid extended "
       "resource name"},
      {"managed resource not qualified",
       "extenders:\n- urlPrefix: http://x\n  managedResources: [{name: example.com/-gpu}]\n",
       "extenders[0].managedResources[0].name: Invalid value: \"example.com/-gpu\": name part must consist of "
       "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
       "'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?"
       "[A-Za-z0-9]')"},
      {"managed resource twice",
       "extenders:\n- urlPrefix: http://a\n  managedResources: [{name: example.com/gpu}]\n"
       "- urlPrefix: http://b\n  managedResources: [{name: example.com/gpu, ignoredByScheduler: true}]\n",
       "extenders[1].managedResources[0].name: Invalid value: \"example.com/gpu\": duplicate extender managed "
       "resource name"},
      {"duplicate plugin config",
       "profiles:\n- pluginConfig:\n  - {name: VolumeBinding}\n  - {name: VolumeBinding}\n",
       "profiles[0].pluginConfig[1]: Duplicate value: \"VolumeBinding\""},
      {"removed plugin", "profiles:\n- plugins:\n    filter:\n      enabled: [{name: EBSLimits}]\n",
       "profiles[0].plugins.filter.enabled[0]: Invalid value: \"EBSLimits\": was invalid in version "
       "\"kubescheduler.config.k8s.io/v1\" (KubeSchedulerConfiguration is version \"kubescheduler.config.k8s.io/v1\")"},
      {"negative weight", "profiles:\n- plugins:\n    score:\n      enabled: [{name: ImageLocality, weight: -1}]\n",
       "profiles[0].plugins.score.enabled[0].weight: Invalid value: -1: must be greater than or equal to 0"},
      {"preemption percentage",
       "profiles:\n- pluginConfig:\n  - name: DefaultPreemption\n    args: {minCandidateNodesPercentage: 101}\n",
       "profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: Invalid value: 101: not in valid range [0, 100]"},
      {"preemption both zero",
       "profiles:\n- pluginConfig:\n  - name: DefaultPreemption\n    args: {minCandidateNodesPercentage: 0, "
       "minCandidateNodesAbsolute: 0}\n",
       "[profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same "
       "time as minCandidateNodesAbsolute, profiles[0].pluginConfig[0].args.minCandidateNodesAbsolute: Invalid value: "
       "0: cannot be zero at the same time as minCandidateNodesPercentage]"},
      {"preemption absolute",
       "profiles:\n- pluginConfig:\n  - name: DefaultPreemption\n    args: {minCandidateNodesAbsolute: -1}\n",
       "profiles[0].pluginConfig[0].args.minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)"},
      {"hard pod affinity weight",
       "profiles:\n- pluginConfig:\n  - name: InterPodAffinity\n    args: {hardPodAffinityWeight: 101}\n",
       "profiles[0].pluginConfig[0].args.hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]"},
      {"bind timeout", "profiles:\n- pluginConfig:\n  - name: VolumeBinding\n    args: {bindTimeoutSeconds: -1}\n",
       "profiles[0].pluginConfig[0].args.bindTimeoutSeconds: Invalid value: -1: invalid BindTimeoutSeconds, should "
       "not be a negative value"},
      {"dra filter timeout negative",
       "profiles:\n- pluginConfig:\n  - name: DynamicResources\n    args: {filterTimeout: -1s}\n",
       "profiles[0].pluginConfig[0].args.filterTimeout: Invalid value: -1s: must be zero or positive"},
      {"dra filter timeout zero disables it",
       "profiles:\n- pluginConfig:\n  - name: DynamicResources\n    args: {filterTimeout: 0s}\n", ""},
      {"dra binding timeout below a second",
       "profiles:\n- pluginConfig:\n  - name: DynamicResources\n    args: {bindingTimeout: 999ms}\n",
       "profiles[0].pluginConfig[0].args.bindingTimeout: Invalid value: 999ms: must be at least 1 second"},
      {"dra binding timeout of one second",
       "profiles:\n- pluginConfig:\n  - name: DynamicResources\n    args: {bindingTimeout: 1s}\n", ""},
      {"dra both",
       "profiles:\n- pluginConfig:\n  - name: DynamicResources\n    args: {filterTimeout: -1m30s, "
       "bindingTimeout: 0s}\n",
       "[profiles[0].pluginConfig[0].args.filterTimeout: Invalid value: -1m30s: must be zero or positive, "
       "profiles[0].pluginConfig[0].args.bindingTimeout: Invalid value: 0s: must be at least 1 second]"},
      {"scoring type", "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args: {scoringStrategy: {type: Foo}}\n",
       "profiles[0].pluginConfig[0].args.scoringStrategy.type: Unsupported value: \"Foo\": supported values: "
       "\"LeastAllocated\", \"MostAllocated\", \"RequestedToCapacityRatio\""},
      {"scoring weight",
       "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n"
       "        type: MostAllocated\n        resources: [{name: cpu, weight: 101}]\n",
       "profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight: Invalid value: 101: resource weight "
       "of cpu not in valid range (0, 100]"},
      {"shape order and range",
       "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n"
       "        type: RequestedToCapacityRatio\n        requestedToCapacityRatio:\n"
       "          shape: [{utilization: 50, score: 1}, {utilization: 40, score: 11}]\n",
       "[profiles[0].pluginConfig[0].args.scoringStrategy.shape[1].utilization: Invalid value: 40: should be greater "
       "than prior element, profiles[0].pluginConfig[0].args.scoringStrategy.shape[1].score: Invalid value: 11: not "
       "in valid range [0, 10]]"},
      {"shape empty",
       "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n"
       "        type: RequestedToCapacityRatio\n        requestedToCapacityRatio: {shape: []}\n",
       "profiles[0].pluginConfig[0].args.scoringStrategy.shape: Required value: at least one point must be specified"},
      {"shape utilization range",
       "profiles:\n- pluginConfig:\n  - name: VolumeBinding\n    args: {shape: [{utilization: 101, score: 0}]}\n",
       "profiles[0].pluginConfig[0].args.shape[0].utilization: Invalid value: 101: not in valid range [0, 100]"},
      {"ignored resource group",
       "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args: {ignoredResourceGroups: [example.com/x]}\n",
       "profiles[0].pluginConfig[0].args.ignoredResourceGroups[0]: Invalid value: \"example.com/x\": resource group "
       "name can't contain '/'"},
      {"ignored resource name",
       "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args: {ignoredResources: [-bad]}\n",
       "profiles[0].pluginConfig[0].args.ignoredResources[0]: Invalid value: \"-bad\": name part must consist of "
       "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
       "'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?"
       "[A-Za-z0-9]')"},
      {"balanced weight",
       "profiles:\n- pluginConfig:\n  - name: NodeResourcesBalancedAllocation\n    args: {resources: [{name: cpu, "
       "weight: 2}, {name: cpu, weight: 1}]}\n",
       "[profiles[0].pluginConfig[0].args.resources[0].weight: Invalid value: 2: must be 1, "
       "profiles[0].pluginConfig[0].args.resources[1].name: Duplicate value: \"cpu\"]"},
      {"spread system with constraints",
       "profiles:\n- pluginConfig:\n  - name: PodTopologySpread\n    args:\n      defaultConstraints:\n"
       "      - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}\n",
       "profiles[0].pluginConfig[0].args.defaultingType: Invalid value: \"System\": when .defaultConstraints are not "
       "empty"},
      {"spread constraints",
       "profiles:\n- pluginConfig:\n  - name: PodTopologySpread\n    args:\n      defaultingType: List\n"
       "      defaultConstraints:\n      - {maxSkew: 0, topologyKey: zone, whenUnsatisfiable: Maybe}\n"
       "      - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: Maybe, labelSelector: {matchLabels: {a: b}}}\n",
       "[profiles[0].pluginConfig[0].args.defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf), "
       "profiles[0].pluginConfig[0].args.defaultConstraints[0].whenUnsatisfiable: Unsupported value: \"Maybe\": "
       "supported values: \"DoNotSchedule\", \"ScheduleAnyway\", "
       "profiles[0].pluginConfig[0].args.defaultConstraints[1].whenUnsatisfiable: Unsupported value: \"Maybe\": "
       "supported values: \"DoNotSchedule\", \"ScheduleAnyway\", "
       "profiles[0].pluginConfig[0].args.defaultConstraints[1].labelSelector: Forbidden: constraint must not define "
       "a selector, as they deduced for each pod, profiles[0].pluginConfig[0].args.defaultConstraints[1]: Duplicate "
       "value: \"{zone, Maybe}\"]"},
      {"spread defaulting type",
       "profiles:\n- pluginConfig:\n  - name: PodTopologySpread\n    args: {defaultingType: Sometimes}\n",
       "profiles[0].pluginConfig[0].args.defaultingType: Unsupported value: \"Sometimes\": supported values: "
       "\"System\", \"List\""},
      {"node affinity",
       "profiles:\n- pluginConfig:\n  - name: NodeAffinity\n    args:\n      addedAffinity:\n"
       "        requiredDuringSchedulingIgnoredDuringExecution:\n          nodeSelectorTerms:\n"
       "          - matchExpressions: [{key: a, operator: In}]\n            matchFields: [{key: metadata.uid, "
       "operator: In, values: [x]}]\n",
       "[profiles[0].pluginConfig[0].args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution."
       "nodeSelectorTerms[0].matchExpressions[0].values: Required value: must be specified when `operator` is 'In' "
       "or 'NotIn', profiles[0].pluginConfig[0].args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution."
       "nodeSelectorTerms[0].matchFields[0].key: Invalid value: \"metadata.uid\": not a valid field selector key]"},
      {"several errors aggregate in order", "parallelism: -1\npodInitialBackoffSeconds: 0\n",
       "[parallelism: Invalid value: -1: should be an integer value greater than zero, podInitialBackoffSeconds: "
       "Invalid value: 0: must be greater than 0]"},
  };
  for (const Case& c : cases) EXPECT_EQ(ValidationMessage(c.body), c.want) << c.name;
}

TEST(ValidateTest, EmptyProfilesIsRequired) {
  KubeSchedulerConfiguration cfg;  // not defaulted: no profiles
  Status s = ValidateConfig(cfg);
  EXPECT_EQ(s.message(), "profiles: Required value");
}

}  // namespace
}  // namespace ksched::config
