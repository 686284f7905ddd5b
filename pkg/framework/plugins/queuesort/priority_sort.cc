#include "pkg/framework/plugins/queuesort/priority_sort.h"

namespace ksched::framework::plugins {

bool PrioritySort::Less(const QueuedPodInfo& a, const QueuedPodInfo& b) const { return PriorityLess(a, b); }

}  // namespace ksched::framework::plugins
