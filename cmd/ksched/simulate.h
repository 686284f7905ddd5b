// `ksched simulate`: where pods would go, how many more fit, what a drain would do, on a
// cluster read from files or listed once from a live API server (read-only), with the
// scheduler's own framework and plugins (pkg/simulate).
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "pkg/framework/registry.h"
#include "pkg/util/status.h"

namespace ksched::cmd {

enum class SimulateOutput { kTable, kJson, kYaml };

struct SimulateFlags {
  std::vector<std::string> cluster;  // files or directories
  bool from_cluster = false;
  std::string kubeconfig;
  std::string master;
  std::string pods;         // a file of pods to schedule, in order
  std::string capacity_of;  // a file with one pod
  int max = 10000;
  std::string drain;  // a node
  std::string config;
  uint64_t seed = 1;
  SimulateOutput output = SimulateOutput::kTable;
  bool explain = false;
  int verbosity = 0;
  bool help = false;
};

// argv[0] is "simulate". kInvalidArgument naming the flag.
StatusOr<SimulateFlags> ParseSimulateFlags(int argc, char** argv);
std::string SimulateUsage();
// Runs the subcommand with the plugins of `registry`: 0 done (whether or not the pods
// fit), 2 bad input (flags, files, objects, the configuration or a plugin's args), 1
// anything else (the cluster could not be read).
int RunSimulate(int argc, char** argv, FILE* out, FILE* err,
                const framework::Registry& registry = framework::InTreeRegistry());

}  // namespace ksched::cmd
