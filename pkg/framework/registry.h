// Plugin registry: plugin name -> factory. All in-tree plugins are registered in one map
// (plugins/registry.cc), never a switch.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "config/types.h"
#include "pkg/framework/interface.h"
#include "pkg/util/status.h"

namespace ksched::framework {

// Builds a plugin from its (defaulted, validated) args. `args` holds the plugin's own
// alternative of config::PluginArgs, or std::monostate for plugins without args. An
// out-of-tree plugin gets config::RawArgs when its pluginConfig entry has args, else
// std::monostate: runtime::PluginArgsReader (pkg/framework/runtime/plugin_args.h) reads
// both.
using PluginFactory = std::function<StatusOr<std::unique_ptr<Plugin>>(const config::PluginArgs& args, Handle& handle)>;
using Registry = std::map<std::string, PluginFactory, std::less<>>;

// Every in-tree plugin ksched ships.
Registry InTreeRegistry();

// Adds `from`'s plugins to `into` (upstream Registry.Merge). A name `into` already has is
// refused, naming the plugin, and nothing is added: an out-of-tree plugin cannot replace
// an in-tree one by taking its name. So is an empty name or factory.
inline ksched::Status MergeRegistry(Registry& into, Registry from) {
  for (const auto& [name, factory] : from) {
    if (name.empty()) return ksched::InvalidArgument("a plugin needs a name");
    if (!factory) return ksched::InvalidArgument("plugin \"" + name + "\" has no factory");
    if (into.contains(name)) return ksched::InvalidArgument("a plugin named \"" + name + "\" already exists");
  }
  into.merge(from);
  return ksched::Status::OK();
}

}  // namespace ksched::framework
