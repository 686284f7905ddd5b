// PrioritySort: the default QueueSort plugin. Higher .spec.priority first; among equal
// priorities, the pod that entered the queue (or last failed) earlier first.
#pragma once

#include <string_view>

#include "pkg/framework/queue_plugins.h"

namespace ksched::framework::plugins {

class PrioritySort final : public QueueSortPlugin {
 public:
  static constexpr std::string_view kName = "PrioritySort";

  std::string_view Name() const override { return kName; }
  bool Less(const QueuedPodInfo& a, const QueuedPodInfo& b) const override;
};

// The same ordering as a free function, for callers that need a LessFn without an
// instance (the queue's default).
bool PrioritySortLess(const QueuedPodInfo& a, const QueuedPodInfo& b);

}  // namespace ksched::framework::plugins
