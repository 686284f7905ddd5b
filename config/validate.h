// Upstream's KubeSchedulerConfiguration validation (pkg/scheduler/apis/config/validation),
// with its message text: `podMaxBackoffSeconds: Invalid value: 5: must be greater than or
// equal to PodInitialBackoffSeconds`; several errors print as `[a, b]`.
#pragma once

#include <string>
#include <vector>

#include "config/types.h"
#include "pkg/util/status.h"

namespace ksched::config {

// Every error line for a defaulted configuration, in upstream's order.
std::vector<std::string> ValidationErrors(const KubeSchedulerConfiguration& cfg);

// The errors aggregated into one InvalidArgument status; OK when there are none.
Status ValidateConfig(const KubeSchedulerConfiguration& cfg);

// Plugin args checks (also used by plugins that build from args). `path` is the args field
// path, e.g. "profiles[0].pluginConfig[1].args".
std::vector<std::string> ValidateDefaultPreemptionArgs(const std::string& path, const DefaultPreemptionArgs& a);
// As upstream with its 1.36 default gates on (DRASchedulerFilterTimeout,
// DRADeviceBindingConditions, DRAResourceClaimDeviceStatus).
std::vector<std::string> ValidateDynamicResourcesArgs(const std::string& path, const DynamicResourcesArgs& a);
std::vector<std::string> ValidateInterPodAffinityArgs(const std::string& path, const InterPodAffinityArgs& a);
std::vector<std::string> ValidateNodeAffinityArgs(const std::string& path, const NodeAffinityArgs& a);
std::vector<std::string> ValidateNodeResourcesBalancedAllocationArgs(const std::string& path,
                                                                     const NodeResourcesBalancedAllocationArgs& a);
std::vector<std::string> ValidateNodeResourcesFitArgs(const std::string& path, const NodeResourcesFitArgs& a);
std::vector<std::string> ValidatePodTopologySpreadArgs(const std::string& path, const PodTopologySpreadArgs& a);
std::vector<std::string> ValidateVolumeBindingArgs(const std::string& path, const VolumeBindingArgs& a);

}  // namespace ksched::config
