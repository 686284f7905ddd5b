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
// alternative of config::PluginArgs, or std::monostate for plugins without args.
using PluginFactory = std::function<StatusOr<std::unique_ptr<Plugin>>(const config::PluginArgs& args, Handle& handle)>;
using Registry = std::map<std::string, PluginFactory, std::less<>>;

// Every in-tree plugin ksched ships.
Registry InTreeRegistry();

}  // namespace ksched::framework
