// PreferNode: an out-of-tree Score plugin for tests of binaries built with plugins of
// their own (cmd/ksched/app.h, SimulateOptions::registry): it scores the node its args
// name (`node: <name>`, required) above all others, its args read with PluginArgsReader.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "pkg/framework/interface.h"
#include "pkg/framework/registry.h"
#include "pkg/framework/runtime/plugin_args.h"

namespace ksched::testing {

class PreferNode final : public framework::ScorePlugin {
 public:
  explicit PreferNode(std::string node) : node_(std::move(node)) {}
  std::string_view Name() const override { return "PreferNode"; }
  framework::Status Score(const framework::CycleState&, const api::Pod&, const cache::NodeInfo& node,
                          int64_t& score) const override {
    score = node.node()->Name() == node_ ? framework::kMaxNodeScore : 0;
    return framework::Status();
  }

 private:
  std::string node_;
};

inline StatusOr<std::unique_ptr<framework::Plugin>> NewPreferNode(const config::PluginArgs& args, framework::Handle&) {
  std::string node;
  framework::runtime::PluginArgsReader reader("PreferNode", args);
  reader.Required("node", &node);
  if (Status s = reader.Done(); !s.ok()) return s;
  return std::unique_ptr<framework::Plugin>(std::make_unique<PreferNode>(node));
}

}  // namespace ksched::testing
