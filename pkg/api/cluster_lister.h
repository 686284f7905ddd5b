// Lookups of cluster objects other than pods and nodes that plugins consult (upstream:
// the Namespace, Service, ReplicationController, ReplicaSet and StatefulSet listers of
// the shared informer factory). The framework hands plugins one through
// Handle::Lister(); informers/cluster_lister.h implements it over informers that keep
// only the labels and selectors these lookups read.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/api/selector.h"
#include "pkg/api/types.h"

namespace ksched::api {

class ClusterLister {
 public:
  virtual ~ClusterLister() = default;

  // The labels of namespace `name`; nullopt when the namespace is not known.
  virtual std::optional<StringMap> NamespaceLabels(std::string_view name) const = 0;
  // The names of the namespaces whose labels `selector` matches, sorted.
  virtual std::vector<std::string> NamespacesMatching(const LabelSelectorMatcher& selector) const = 0;
  // upstream helper.DefaultSelector (pkg/scheduler/framework/plugins/helper/spread.go):
  // the selectors of the Services and ReplicationControllers that select `pod` merged into
  // match_labels, and the requirements of the ReplicaSets and StatefulSets that select it
  // appended to match_expressions, all in the pod's namespace. An empty selector when
  // nothing selects the pod (then no system-default spreading applies).
  virtual LabelSelector DefaultSpreadSelector(const Pod& pod) const = 0;
};

// Knows no objects: no namespace labels, no selectors.
const ClusterLister& EmptyClusterLister();

}  // namespace ksched::api
