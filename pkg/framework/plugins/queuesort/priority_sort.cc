#include "pkg/framework/plugins/queuesort/priority_sort.h"

namespace ksched::framework::plugins {

bool PrioritySortLess(const QueuedPodInfo& a, const QueuedPodInfo& b) {
  int32_t pa = a.pod_info.priority;
  int32_t pb = b.pod_info.priority;
  return pa > pb || (pa == pb && a.timestamp < b.timestamp);
}

bool PrioritySort::Less(const QueuedPodInfo& a, const QueuedPodInfo& b) const {
  return PrioritySortLess(a, b);
}

}  // namespace ksched::framework::plugins
