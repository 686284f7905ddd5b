// DefaultBinder: binds the pod through the scheduler's binder (POST pods/{name}/binding
// with the pod's uid), the last bind plugin of every default profile.
#pragma once

#include <memory>
#include <string_view>

#include "config/types.h"
#include "pkg/framework/interface.h"
#include "pkg/util/status.h"

namespace ksched::framework::plugins::defaultbinder {

class DefaultBinder final : public BindPlugin {
 public:
  static constexpr std::string_view kName = "DefaultBinder";

  static StatusOr<std::unique_ptr<Plugin>> New(const config::PluginArgs& args, Handle& handle);
  explicit DefaultBinder(Handle& handle) : handle_(handle) {}

  std::string_view Name() const override { return kName; }
  // Success, or Error carrying the API error (the scheduler then unreserves and forgets
  // the pod). Blocking: runs on a binding worker.
  Status Bind(CycleState& state, const api::Pod& pod, std::string_view node_name) override;
  // The same bind through PodBinder::BindAsync: the scheduler's default path.
  bool CanBindAsync() const override { return true; }
  void BindAsync(CycleState& state, const api::Pod& pod, std::string_view node_name,
                 std::function<void(Status)> done) override;

 private:
  Handle& handle_;
};

}  // namespace ksched::framework::plugins::defaultbinder
