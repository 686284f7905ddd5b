// ksched as a library entry point, for a scheduler binary with plugins of its own
// (upstream app.NewSchedulerCommand(app.WithPlugin(name, factory)), as
// kubernetes-sigs/scheduler-plugins builds kube-scheduler):
//
//   int main(int argc, char** argv) {
//     return ksched::app::Main(argc, argv, {{"LabelPreference", example::NewLabelPreference}});
//   }
//
// The binary is ksched with every flag and subcommand: the plugins are known to the
// scheduler and to `simulate`, next to the in-tree ones, and a profile enables them and
// gives their args (pluginConfig) as for any plugin. docs/user-guide.md, "Writing a
// plugin of your own", walks through one.
#pragma once

#include "pkg/framework/registry.h"

namespace ksched::app {

// Runs ksched on argv (argv[0] the program; then `explain ...`, `simulate ...` or the
// scheduler's flags) with the in-tree plugins plus `out_of_tree`, and returns the exit
// code. An out-of-tree plugin named like an in-tree one (or another) exits 1 with an
// error naming it. The scheduler builds each profile's plugins once at start-up, before
// it contacts the API server, to report bad args at once, and again to run them: a
// factory should read its args and hold no outside resources until it is used.
int Main(int argc, char** argv, framework::Registry out_of_tree = {});

}  // namespace ksched::app
