// Reading an out-of-tree plugin's args (upstream frameworkruntime.DecodeInto). ksched
// decodes the args of its own plugins into typed structs (config/types.h); a plugin it
// does not know gets its pluginConfig entry's args as config::RawArgs (canonical YAML),
// or std::monostate when there is no entry or no args, and reads them in its factory:
//
//   StatusOr<std::unique_ptr<Plugin>> New(const config::PluginArgs& args, Handle& handle) {
//     LabelPreferenceArgs a;  // the defaults
//     runtime::PluginArgsReader r("LabelPreference", args);
//     r.Required("label", &a.label).Optional("scores", &a.scores);
//     for (const auto& [value, score] : a.scores)
//       if (score < 0) r.Invalid("scores." + value, score, "must not be negative");
//     if (ksched::Status s = r.Done(); !s.ok()) return s;
//     return std::unique_ptr<Plugin>(std::make_unique<LabelPreference>(std::move(a)));
//   }
//
// Decoding is strict, as for in-tree args: a value of the wrong type, a field the plugin
// never asked for (a typo), a missing required field and every Invalid() make Done()
// fail with a message naming the plugin and the field:
//
//   decoding args for plugin LabelPreference: cannot unmarshal string "high" into "scores.gold" of type int64
//   decoding args for plugin LabelPreference: strict decoding error: unknown field "lable"
//   invalid args for plugin LabelPreference: scores.gold: Invalid value: -1: must not be negative
//
// Values are typed as Kubernetes' YAML reader types them (`10` is a number, `"10"` a
// string, `yes` a bool); a number or bool read into a string field is taken as its text,
// as sigs.k8s.io/yaml does for a string field, in canonical form (`1.10` reads "1.1":
// quote such strings).
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "config/types.h"
#include "pkg/util/status.h"

namespace ksched::framework::runtime {

class PluginArgsReader {
 public:
  // Where a field is decoded to; one alternative per supported type.
  using Target = std::variant<std::string*, bool*, int32_t*, int64_t*, double*, std::vector<std::string>*,
                              std::map<std::string, std::string>*, std::map<std::string, int64_t>*>;

  // `plugin` names the plugin in every error; `args` is what its factory received.
  PluginArgsReader(std::string_view plugin, const config::PluginArgs& args);

  // Whether `field` is given and not null.
  bool Has(std::string_view field) const;
  // Decodes `field` into `out` when it is given; an absent or null field leaves `out` as
  // it is (the default).
  PluginArgsReader& Optional(std::string_view field, Target out);
  // Optional, and an absent or null field is an error ("Required value").
  PluginArgsReader& Required(std::string_view field, Target out);
  // The field as written (an undefined node when absent), for shapes the typed reads do
  // not cover; the field counts as read.
  YAML::Node Node(std::string_view field);

  // Records a validation error for `field` (a path such as "scores.gold"), in upstream's
  // field.Invalid form; Done() reports them all.
  PluginArgsReader& Invalid(std::string_view field, int64_t value, std::string_view detail);
  PluginArgsReader& Invalid(std::string_view field, std::string_view value, std::string_view detail);

  // OK, or the first decoding error, else every field given but never read, else the
  // missing and invalid fields. kInvalidArgument.
  ksched::Status Done() const;

 private:
  void Decode(const YAML::Node& value, const std::string& path, Target out);
  void Fail(std::string message);

  std::string plugin_;
  YAML::Node root_;  // a map, or null when there are no args
  std::set<std::string, std::less<>> read_;
  std::string decode_error_;
  std::vector<std::string> invalid_;
};

}  // namespace ksched::framework::runtime
