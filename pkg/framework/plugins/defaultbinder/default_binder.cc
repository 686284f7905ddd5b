#include "pkg/framework/plugins/defaultbinder/default_binder.h"

#include <variant>

#include "pkg/util/log.h"

namespace ksched::framework::plugins::defaultbinder {

StatusOr<std::unique_ptr<Plugin>> DefaultBinder::New(const config::PluginArgs& args, Handle& handle) {
  if (!std::holds_alternative<std::monostate>(args)) return InvalidArgument("DefaultBinder takes no args");
  return std::unique_ptr<Plugin>(std::make_unique<DefaultBinder>(handle));
}

Status DefaultBinder::Bind(CycleState& /*state*/, const api::Pod& pod, std::string_view node_name) {
  KLOG_V(3) << "\"Attempting to bind pod to node\" pod=\"" << pod.Key() << "\" node=\"" << node_name << "\"";
  ksched::Status s = handle_.Binder().Bind(pod, node_name);
  if (!s.ok()) return Status::FromError(s);
  return Status::Success();
}

void DefaultBinder::BindAsync(CycleState& /*state*/, const api::Pod& pod, std::string_view node_name,
                              std::function<void(Status)> done) {
  KLOG_V(3) << "\"Attempting to bind pod to node\" pod=\"" << pod.Key() << "\" node=\"" << node_name << "\"";
  handle_.Binder().BindAsync(pod, node_name, [done = std::move(done)](ksched::Status s) {
    done(s.ok() ? Status::Success() : Status::FromError(s));
  });
}

}  // namespace ksched::framework::plugins::defaultbinder
