// PrioritySort: the default QueueSort plugin, framework::PriorityLess as a plugin.
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

}  // namespace ksched::framework::plugins
