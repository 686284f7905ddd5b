#include "cmd/ksched/simulate.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>

#include "cmd/ksched/explain_render.h"
#include "cmd/ksched/subcommand_flags.h"
#include "config/defaults.h"
#include "config/emitter.h"
#include "config/load.h"
#include "config/validate.h"
#include "pkg/client/curl_client.h"
#include "pkg/client/rest_config.h"
#include "pkg/simulate/cluster_files.h"
#include "pkg/simulate/list_cluster.h"
#include "pkg/simulate/simulator.h"
#include "pkg/util/log.h"

namespace ksched::cmd {
namespace {

using simulate::PodResult;

std::string ParseInt(const std::string& v, int64_t min, int64_t max, int64_t* out) {
  char* end = nullptr;
  errno = 0;
  const long long n = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || errno != 0) return "strconv.ParseInt: parsing \"" + v + "\": invalid syntax";
  if (n < min || n > max) return "must be between " + std::to_string(min) + " and " + std::to_string(max);
  *out = n;
  return "";
}

const SubcommandFlags<SimulateFlags>& Flags() {
  static const SubcommandFlags<SimulateFlags> flags{.defs = {
      {"cluster", {"path", "A file or directory of the cluster's objects (YAML or JSON; repeatable).",
                   [](SimulateFlags& f, const std::string& v) {
                     if (v.empty()) return std::string("must not be empty");
                     f.cluster.push_back(v);
                     return std::string();
                   }}},
      {"from-cluster", {nullptr, "List the cluster's objects once from the API server of --kubeconfig (read-only).",
                        SetBool<SimulateFlags>(&SimulateFlags::from_cluster)}},
      {"kubeconfig", {"path", "kubeconfig of the API server for --from-cluster (default: in-cluster).",
                      SetString<SimulateFlags>(&SimulateFlags::kubeconfig)}},
      {"master", {"url", "The API server's address for --from-cluster (overrides the kubeconfig's).",
                  SetString<SimulateFlags>(&SimulateFlags::master)}},
      {"pods", {"path", "Pods to schedule, one after another in file order.", SetString<SimulateFlags>(&SimulateFlags::pods)}},
      {"capacity-of", {"path", "A file with one pod: how many copies of it fit.", SetString<SimulateFlags>(&SimulateFlags::capacity_of)}},
      {"max", {"int", "The most copies --capacity-of tries (default 10000).",
               [](SimulateFlags& f, const std::string& v) {
                 int64_t n = 0;
                 std::string e = ParseInt(v, 1, 1000000, &n);
                 f.max = static_cast<int>(n);
                 return e;
               }}},
      {"drain", {"node", "Where the pods of this node would go if it were cordoned and drained.",
                 SetString<SimulateFlags>(&SimulateFlags::drain)}},
      {"config", {"path", "A KubeSchedulerConfiguration (default: upstream's defaults).", SetString<SimulateFlags>(&SimulateFlags::config)}},
      {"seed", {"int", "Seed of the tie-break between equally scored nodes (default 1).",
                [](SimulateFlags& f, const std::string& v) {
                  int64_t n = 0;
                  std::string e = ParseInt(v, 0, INT64_MAX, &n);
                  f.seed = static_cast<uint64_t>(n);
                  return e;
                }}},
      {"output", {"format", "table, json or yaml (default table).",
                  [](SimulateFlags& f, const std::string& v) {
                    if (v == "table") f.output = SimulateOutput::kTable;
                    else if (v == "json") f.output = SimulateOutput::kJson;
                    else if (v == "yaml") f.output = SimulateOutput::kYaml;
                    else return std::string("must be table, json or yaml");
                    return std::string();
                  }}},
      {"explain", {nullptr, "Add each pod's per-plugin verdicts, as `ksched explain` shows them.",
                   SetBool<SimulateFlags>(&SimulateFlags::explain)}},
      {"v", {"int", "Log verbosity (logs go to stderr).",
             [](SimulateFlags& f, const std::string& v) {
               int64_t n = 0;
               std::string e = ParseInt(v, 0, 10, &n);
               f.verbosity = static_cast<int>(n);
               return e;
             }}},
      {"help", {nullptr, "help for simulate", SetBool<SimulateFlags>(&SimulateFlags::help)}},
  }, .shorthands = {{'o', "output"}, {'h', "help"}, {'v', "v"}}};
  return flags;
}


}  // namespace

std::string SimulateUsage() {
  std::string u =
      "Schedule pods on a cluster held in memory, with the scheduler's own plugins and configuration:\n"
      "where pods would go and why not elsewhere, how many more of a pod fit, what draining a node does.\n"
      "Nothing is written to any cluster.\n\n"
      "Usage:\n"
      "  ksched simulate --cluster FILE|DIR [--cluster ...] | --from-cluster [--kubeconfig K]\n"
      "                  [--pods FILE] [--capacity-of POD_FILE [--max N]] [--drain NODE]\n"
      "                  [--config CONFIG] [--seed N] [-o table|json|yaml] [--explain]\n\n"
      "The cluster's pending pods are scheduled first, then --pods, then --drain, then --capacity-of.\n\n"
      "Flags:\n";
  return u + Flags().Usage();
}

StatusOr<SimulateFlags> ParseSimulateFlags(int argc, char** argv) {
  SimulateFlags f;
  Status parsed = Flags().Parse(argc, argv, f, [](const std::string& a) {
    return InvalidArgument("unexpected argument \"" + a + "\"");
  });
  if (!parsed.ok()) return parsed;
  if (f.help) return f;
  if (f.cluster.empty() == !f.from_cluster)
    return InvalidArgument("give the cluster with --cluster FILE|DIR or --from-cluster (one of the two)");
  if (!f.from_cluster && (!f.kubeconfig.empty() || !f.master.empty()))
    return InvalidArgument("--kubeconfig and --master go with --from-cluster");
  return f;
}

namespace {

// The cluster of --kubeconfig / --master (or the in-cluster service account), read once.
Status ListFromCluster(const SimulateFlags& f, simulate::ClusterObjects& out) {
  auto rc = f.kubeconfig.empty() && f.master.empty() ? client::InClusterConfig()
                                                     : client::LoadKubeconfig(f.kubeconfig, "", f.master);
  if (!rc.ok()) return InvalidArgument("--from-cluster: " + rc.status().message());
  auto c = client::NewCurlApiClient(*rc, {.thread_name = "io-simulate"});
  if (!c.ok()) return c.status();
  return simulate::ListCluster(**c, rc->server, out);
}

StatusOr<config::KubeSchedulerConfiguration> LoadConfig(const std::string& path) {
  config::KubeSchedulerConfiguration cfg;
  if (path.empty()) {
    config::SetDefaults(cfg);
  } else {
    auto loaded = config::LoadConfigFile(path);
    if (!loaded.ok()) return InvalidArgument("--config: " + loaded.status().message());
    cfg = std::move(*loaded);
  }
  if (Status s = config::ValidateConfig(cfg); !s.ok()) return InvalidArgument("--config: " + s.message());
  return cfg;
}

// The one pod of a --capacity-of file.
StatusOr<simulate::SourceObject> OnePod(const std::string& path) {
  auto loaded = simulate::LoadClusterFiles({path});
  if (!loaded.ok()) return loaded.status();
  std::vector<simulate::SourceObject> pods;
  for (auto& o : loaded->objects) {
    if (o.kind->kind == "Pod") pods.push_back(std::move(o));
  }
  if (pods.size() != 1)
    return InvalidArgument("--capacity-of " + path + ": want exactly one Pod, found " + std::to_string(pods.size()));
  return pods.front();
}

struct Report {
  std::vector<PodResult> pods;
  std::optional<simulate::CapacityResult> capacity;
  std::string capacity_pod;  // "namespace/name" of the --capacity-of pod
  std::map<std::string, size_t> skipped_kinds;
};

void EmitPod(config::Emitter& e, const PodResult& p) {
  e.BeginMap();
  e.Key("namespace");
  e.String(p.namespace_);
  e.Key("name");
  e.String(p.name);
  e.Key("node");
  if (p.node) {
    e.String(*p.node);
  } else {
    e.Null();
  }
  e.Key("reason");
  e.String(p.reason);
  e.Key("victims");
  if (p.victims.empty()) {
    e.EmptySeq();
  } else {
    e.BeginSeq();
    for (const std::string& v : p.victims) e.String(v);
    e.EndSeq();
  }
  if (!p.explain.empty()) {
    e.Key("explain");
    try {
      e.Node(YAML::Load(p.explain));
    } catch (const YAML::Exception&) {
      e.String(p.explain);
    }
  }
  e.EndMap();
}

std::string Structured(const Report& r, config::Emitter& e) {
  e.BeginMap();
  e.Key("pods");
  if (r.pods.empty()) {
    e.EmptySeq();
  } else {
    e.BeginSeq();
    for (const PodResult& p : r.pods) EmitPod(e, p);
    e.EndSeq();
  }
  if (r.capacity) {
    e.Key("fits");
    e.Int(r.capacity->fits);
    e.Key("next");
    if (r.capacity->next) {
      EmitPod(e, *r.capacity->next);
    } else {
      e.Null();
    }
  }
  e.EndMap();
  return e.Text();
}

std::string Table(const Report& r) {
  bool any_victims = false;
  for (const PodResult& p : r.pods) any_victims = any_victims || !p.victims.empty();
  std::vector<std::vector<std::string>> rows = {{"POD", "NODE", "REASON"}};
  if (any_victims) rows.front().insert(rows.front().begin() + 2, "VICTIMS");
  for (const PodResult& p : r.pods) {
    std::vector<std::string> row = {p.namespace_ + "/" + p.name, p.node.value_or("<none>"), p.reason};
    if (any_victims) {
      std::string v;
      for (const std::string& victim : p.victims) v += (v.empty() ? "" : ",") + victim;
      row.insert(row.begin() + 2, v.empty() ? "-" : v);
    }
    rows.push_back(std::move(row));
  }
  std::string out;
  if (rows.size() > 1) {
    std::vector<size_t> width(rows.front().size(), 0);
    for (const auto& row : rows)
      for (size_t i = 0; i + 1 < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
    for (const auto& row : rows) {
      std::string line;
      for (size_t i = 0; i < row.size(); ++i) {
        line += row[i];
        if (i + 1 < row.size()) line += std::string(width[i] - row[i].size() + 3, ' ');
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
    }
  }
  if (r.capacity) {
    if (!out.empty()) out += "\n";
    out += std::to_string(r.capacity->fits) + " cop" + (r.capacity->fits == 1 ? "y" : "ies") + " of " +
           r.capacity_pod + " fit";
    if (r.capacity->reached_max) {
      out += " (stopped at --max)\n";
    } else if (r.capacity->next) {
      out += "; the next does not: " + r.capacity->next->reason + "\n";
    } else {
      out += "\n";
    }
  }
  for (const PodResult& p : r.pods) {
    if (p.explain.empty()) continue;
    auto text = RenderPodText(p.explain);
    out += "\n" + (text.ok() ? *text : p.explain + "\n");
  }
  if (r.capacity && r.capacity->next && !r.capacity->next->explain.empty()) {
    auto text = RenderPodText(r.capacity->next->explain);
    out += "\n" + (text.ok() ? *text : r.capacity->next->explain + "\n");
  }
  return out;
}

}  // namespace

int RunSimulate(int argc, char** argv, FILE* out, FILE* err, const framework::Registry& registry) {
  auto flags = ParseSimulateFlags(argc, argv);
  if (!flags.ok()) {
    std::fprintf(err, "Error: %s\nRun 'ksched simulate --help' for usage.\n", flags.status().message().c_str());
    return 2;
  }
  if (flags->help) {
    std::fputs(SimulateUsage().c_str(), out);
    return 0;
  }
  log::SetVerbosity(flags->verbosity);
  auto fail = [err](const Status& s) {
    std::fprintf(err, "Error: %s\n", s.message().c_str());
    return s.code() == StatusCode::kInvalidArgument ? 2 : 1;
  };
  auto cfg = LoadConfig(flags->config);
  if (!cfg.ok()) return fail(cfg.status());
  simulate::ClusterObjects cluster;
  if (flags->from_cluster) {
    if (Status s = ListFromCluster(*flags, cluster); !s.ok()) return fail(s);
  } else {
    auto loaded = simulate::LoadClusterFiles(flags->cluster);
    if (!loaded.ok()) return fail(loaded.status());
    cluster = std::move(*loaded);
  }
  std::vector<simulate::SourceObject> pods;
  if (!flags->pods.empty()) {
    auto loaded = simulate::LoadClusterFiles({flags->pods});
    if (!loaded.ok()) return fail(loaded.status());
    for (auto& o : loaded->objects) {
      if (o.kind->kind == "Pod") {
        pods.push_back(std::move(o));
      } else {
        ++loaded->skipped_kinds[std::string(o.kind->kind)];
      }
    }
    for (const auto& [kind, n] : loaded->skipped_kinds) cluster.skipped_kinds[kind + " (in --pods)"] += n;
  }
  std::optional<simulate::SourceObject> capacity_pod;
  if (!flags->capacity_of.empty()) {
    auto p = OnePod(flags->capacity_of);
    if (!p.ok()) return fail(p.status());
    capacity_pod = std::move(*p);
  }
  for (const auto& [kind, n] : cluster.skipped_kinds) {
    std::fprintf(err, "Skipped %zu object%s of kind %s: not read by ksched's plugins\n", n, n == 1 ? "" : "s",
                 kind.c_str());
  }

  auto sim = simulate::Simulator::New(cluster, {.config = std::move(*cfg), .registry = registry,
                                                .seed = flags->seed, .explain = flags->explain});
  if (!sim.ok()) return fail(sim.status());
  Report report;
  report.pods = (*sim)->SchedulePending();
  {
    auto r = (*sim)->ScheduleAll(pods);
    if (!r.ok()) return fail(r.status());
    for (PodResult& p : *r) report.pods.push_back(std::move(p));
  }
  if (!flags->drain.empty()) {
    auto r = (*sim)->Drain(flags->drain);
    if (!r.ok()) return fail(r.status());
    for (PodResult& p : *r) report.pods.push_back(std::move(p));
  }
  if (capacity_pod) {
    auto r = (*sim)->CapacityOf(*capacity_pod, flags->max);
    if (!r.ok()) return fail(r.status());
    report.capacity = std::move(*r);
    report.capacity_pod = (capacity_pod->namespace_.empty() ? "default" : capacity_pod->namespace_) + "/" +
                          capacity_pod->name;
  }
  std::string text;
  switch (flags->output) {
    case SimulateOutput::kTable: text = Table(report); break;
    case SimulateOutput::kJson: text = Structured(report, *config::NewJsonEmitter()) + "\n"; break;
    case SimulateOutput::kYaml: text = Structured(report, *config::NewYamlEmitter()); break;
  }
  std::fputs(text.c_str(), out);
  return 0;
}

}  // namespace ksched::cmd
