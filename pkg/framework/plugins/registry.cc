// Every in-tree plugin, one line each.
#include "pkg/framework/registry.h"

#include "pkg/framework/plugins/coscheduling/coscheduling.h"
#include "pkg/framework/plugins/defaultbinder/default_binder.h"
#include "pkg/framework/plugins/defaultpreemption/default_preemption.h"
#include "pkg/framework/plugins/dynamicresources/dynamic_resources.h"
#include "pkg/framework/plugins/imagelocality/image_locality.h"
#include "pkg/framework/plugins/interpodaffinity/inter_pod_affinity.h"
#include "pkg/framework/plugins/nodeaffinity/node_affinity.h"
#include "pkg/framework/plugins/nodename/node_name.h"
#include "pkg/framework/plugins/nodeports/node_ports.h"
#include "pkg/framework/plugins/noderesources/balanced_allocation.h"
#include "pkg/framework/plugins/noderesources/fit.h"
#include "pkg/framework/plugins/nodeunschedulable/node_unschedulable.h"
#include "pkg/framework/plugins/nodevolumelimits/csi.h"
#include "pkg/framework/plugins/podtopologyspread/pod_topology_spread.h"
#include "pkg/framework/plugins/queuesort/priority_sort.h"
#include "pkg/framework/plugins/schedulinggates/scheduling_gates.h"
#include "pkg/framework/plugins/tainttoleration/taint_toleration.h"
#include "pkg/framework/plugins/volumerestrictions/volume_restrictions.h"
#include "pkg/framework/plugins/volumezone/volume_zone.h"
#include "pkg/framework/plugins/volumebinding/volume_binding.h"

namespace ksched::framework {
namespace {

// For plugins without args or handle needs.
template <typename T>
PluginFactory Simple() {
  return [](const config::PluginArgs&, Handle&) -> StatusOr<std::unique_ptr<Plugin>> {
    return std::unique_ptr<Plugin>(std::make_unique<T>());
  };
}

}  // namespace

Registry InTreeRegistry() {
  namespace p = plugins;
  return Registry{
      {std::string(p::PrioritySort::kName), Simple<p::PrioritySort>()},
      {std::string(p::SchedulingGates::kName), Simple<p::SchedulingGates>()},
      {std::string(p::nodename::NodeName::kName), p::nodename::NodeName::New},
      {std::string(p::nodeunschedulable::NodeUnschedulable::kName), p::nodeunschedulable::NodeUnschedulable::New},
      {std::string(p::nodeports::NodePorts::kName), p::nodeports::NodePorts::New},
      {std::string(p::nodeaffinity::NodeAffinity::kName), p::nodeaffinity::NodeAffinity::New},
      {std::string(p::tainttoleration::TaintToleration::kName), p::tainttoleration::TaintToleration::New},
      {std::string(p::noderesources::Fit::kName), p::noderesources::Fit::New},
      {std::string(p::noderesources::BalancedAllocation::kName), p::noderesources::BalancedAllocation::New},
      {std::string(p::imagelocality::ImageLocality::kName), p::imagelocality::ImageLocality::New},
      {std::string(p::podtopologyspread::PodTopologySpread::kName), p::podtopologyspread::PodTopologySpread::New},
      {std::string(p::interpodaffinity::InterPodAffinity::kName), p::interpodaffinity::InterPodAffinity::New},
      {std::string(p::volumerestrictions::VolumeRestrictions::kName), p::volumerestrictions::VolumeRestrictions::New},
      {std::string(p::volumezone::VolumeZone::kName), p::volumezone::VolumeZone::New},
      {std::string(p::nodevolumelimits::CSILimits::kName), p::nodevolumelimits::CSILimits::New},
      {std::string(p::defaultpreemption::DefaultPreemption::kName), p::defaultpreemption::DefaultPreemption::New},
      {std::string(p::volumebinding::VolumeBinding::kName), p::volumebinding::VolumeBinding::New},
      {std::string(p::dynamicresources::DynamicResources::kName), p::dynamicresources::DynamicResources::New},
      {std::string(p::defaultbinder::DefaultBinder::kName), p::defaultbinder::DefaultBinder::New},
      {std::string(p::coscheduling::Coscheduling::kName), p::coscheduling::Coscheduling::New},
  };
}

}  // namespace ksched::framework
