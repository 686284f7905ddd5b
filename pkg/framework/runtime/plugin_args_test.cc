// An out-of-tree plugin's args: read from a configuration file with PluginArgsReader,
// and handed to its factory by NewFramework; MergeRegistry refusing a name clash.
#include "pkg/framework/runtime/plugin_args.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/load.h"
#include "pkg/framework/runtime/framework.h"
#include "pkg/framework/runtime/runtime_test_util.h"

namespace ksched::framework::runtime {
namespace {

using ::testing::HasSubstr;

framework::Status ZeroScore(const cache::NodeInfo&, int64_t& score) {
  score = 0;
  return framework::Status();
}

// The args of plugin "LabelPreference" as the configuration loader keeps them.
config::PluginArgs ArgsOf(const std::string& args_yaml) {
  auto cfg = config::LoadConfigFromString(
      "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
      "- pluginConfig:\n  - name: LabelPreference\n    args: " +
      args_yaml + "\n");
  EXPECT_TRUE(cfg.ok()) << cfg.status().message();
  if (!cfg.ok()) return {};
  for (const config::PluginConfig& pc : cfg->profiles[0].plugin_config) {
    if (pc.name == "LabelPreference") return pc.args;
  }
  ADD_FAILURE() << "no pluginConfig entry for LabelPreference";
  return {};
}

struct Args {
  std::string label = "tier";
  int64_t weight = 1;
  int32_t small = 0;
  bool strict = false;
  double ratio = 0.5;
  std::vector<std::string> zones;
  std::map<std::string, int64_t> scores;
  std::map<std::string, std::string> aliases;
};

ksched::Status Read(const config::PluginArgs& args, Args& a) {
  PluginArgsReader r("LabelPreference", args);
  r.Required("label", &a.label)
      .Optional("weight", &a.weight)
      .Optional("small", &a.small)
      .Optional("strict", &a.strict)
      .Optional("ratio", &a.ratio)
      .Optional("zones", &a.zones)
      .Optional("scores", &a.scores)
      .Optional("aliases", &a.aliases);
  for (const auto& [value, score] : a.scores) {
    if (score < 0) r.Invalid("scores." + value, score, "must not be negative");
  }
  if (a.label.find(' ') != std::string::npos) r.Invalid("label", a.label, "must not contain spaces");
  return r.Done();
}

TEST(PluginArgsReader, DecodesEveryTypeAndKeepsDefaults) {
  Args a;
  ksched::Status s = Read(ArgsOf("{label: example.com/tier, weight: 7, strict: yes, zones: [a, b], "
                                 "scores: {gold: 10, silver: 5}, aliases: {g: gold, n: 10}}"),
                          a);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(a.label, "example.com/tier");
  EXPECT_EQ(a.weight, 7);
  EXPECT_TRUE(a.strict);
  EXPECT_EQ(a.ratio, 0.5);  // not given: the default
  EXPECT_EQ(a.zones, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(a.scores, (std::map<std::string, int64_t>{{"gold", 10}, {"silver", 5}}));
  // A number read into a string is its text, as sigs.k8s.io/yaml gives a string field.
  EXPECT_EQ(a.aliases, (std::map<std::string, std::string>{{"g", "gold"}, {"n", "10"}}));
}

TEST(PluginArgsReader, NullFieldsKeepDefaultsAndTheTypeMayBeNamed) {
  Args a;
  ksched::Status s =
      Read(ArgsOf("{kind: LabelPreferenceArgs, apiVersion: example.com/v1, label: x, weight: null, ratio: 2}"), a);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(a.weight, 1);
  EXPECT_EQ(a.ratio, 2.0);
}

TEST(PluginArgsReader, NoArgsGiveTheDefaults) {
  PluginArgsReader r("LabelPreference", config::PluginArgs{});
  int64_t weight = 3;
  r.Optional("weight", &weight);
  EXPECT_FALSE(r.Has("weight"));
  EXPECT_TRUE(r.Done().ok());
  EXPECT_EQ(weight, 3);
}

struct ErrorCase {
  std::string name;
  std::string args;  // YAML; empty: no args at all
  std::string want;
};

class PluginArgsReaderErrors : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(PluginArgsReaderErrors, NameThePluginAndTheField) {
  Args a;
  const ErrorCase& c = GetParam();
  ksched::Status s = Read(c.args.empty() ? config::PluginArgs{} : ArgsOf(c.args), a);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), c.want);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, PluginArgsReaderErrors,
    ::testing::Values(
        ErrorCase{"StringForInt", "{label: x, weight: heavy}",
                  "decoding args for plugin LabelPreference: cannot unmarshal string \"heavy\" into \"weight\" of "
                  "type int64"},
        ErrorCase{"QuotedNumberIsAString", "{label: x, weight: \"3\"}",
                  "decoding args for plugin LabelPreference: cannot unmarshal string \"3\" into \"weight\" of "
                  "type int64"},
        ErrorCase{"FloatForInt", "{label: x, weight: 1.5}",
                  "decoding args for plugin LabelPreference: cannot unmarshal number \"1.5\" into \"weight\" of "
                  "type int64"},
        ErrorCase{"Int32Range", "{label: x, small: 3000000000}",
                  "decoding args for plugin LabelPreference: cannot unmarshal number 3000000000 into \"small\" of "
                  "type int32: out of range"},
        ErrorCase{"MapEntry", "{label: x, scores: {gold: lots}}",
                  "decoding args for plugin LabelPreference: cannot unmarshal string \"lots\" into "
                  "\"scores.gold\" of type int64"},
        ErrorCase{"ListForMap", "{label: x, scores: [gold]}",
                  "decoding args for plugin LabelPreference: cannot unmarshal array into \"scores\" of type "
                  "map[string]int64"},
        ErrorCase{"ListItem", "{label: x, zones: [a, {b: c}]}",
                  "decoding args for plugin LabelPreference: cannot unmarshal object into \"zones[1]\" of type "
                  "string"},
        ErrorCase{"BoolField", "{label: x, strict: maybe}",
                  "decoding args for plugin LabelPreference: cannot unmarshal string \"maybe\" into \"strict\" of "
                  "type bool"},
        ErrorCase{"UnknownFields", "{label: x, lable: y, wieght: 2}",
                  "decoding args for plugin LabelPreference: strict decoding error: unknown field \"lable\", "
                  "unknown field \"wieght\""},
        ErrorCase{"NotAnObject", "[1, 2]",
                  "decoding args for plugin LabelPreference: cannot unmarshal array into args of type object"},
        ErrorCase{"OtherKind", "{kind: NodeAffinityArgs, label: x}",
                  "decoding args for plugin LabelPreference: args were not of type LabelPreferenceArgs, got "
                  "NodeAffinityArgs"},
        ErrorCase{"Required", "{weight: 2}", "invalid args for plugin LabelPreference: label: Required value"},
        ErrorCase{"RequiredWithoutArgs", "", "invalid args for plugin LabelPreference: label: Required value"},
        ErrorCase{"SeveralInvalid", "{label: a b, scores: {gold: -1}}",
                  "invalid args for plugin LabelPreference: [scores.gold: Invalid value: -1: must not be negative, "
                  "label: Invalid value: \"a b\": must not contain spaces]"}),
    [](const ::testing::TestParamInfo<ErrorCase>& info) { return info.param.name; });

// NewFramework hands an out-of-tree plugin its pluginConfig args as written, and its
// factory's error names the plugin.
TEST(OutOfTreePlugin, GetsItsArgsFromTheProfile) {
  using namespace testing;  // NOLINT: the fakes
  int64_t got_weight = 0;
  Registry registry = BaseRegistry();
  registry["LabelPreference"] = [&got_weight](const config::PluginArgs& args,
                                              Handle&) -> StatusOr<std::unique_ptr<Plugin>> {
    PluginArgsReader r("LabelPreference", args);
    r.Required("weight", &got_weight);
    if (ksched::Status s = r.Done(); !s.ok()) return s;
    return std::unique_ptr<Plugin>(std::make_unique<FakeScore>("LabelPreference", ZeroScore));
  };
  config::KubeSchedulerProfile profile = BaseProfile();
  profile.plugins.score.enabled.push_back({"LabelPreference", 1});
  profile.plugin_config.push_back({"LabelPreference", ArgsOf("{weight: 9}")});
  auto fw = NewFramework(registry, profile, {.parallelism = 1});
  ASSERT_TRUE(fw.ok()) << fw.status().message();
  EXPECT_EQ(got_weight, 9);

  profile.plugin_config.back().args = ArgsOf("{weight: nine}");
  fw = NewFramework(registry, profile, {.parallelism = 1});
  ASSERT_FALSE(fw.ok());
  EXPECT_THAT(fw.status().message(), HasSubstr("initializing plugin \"LabelPreference\": decoding args for plugin "
                                               "LabelPreference: cannot unmarshal string \"nine\" into \"weight\""));

  // A plugin no registry knows is an error naming it, args or not.
  profile.plugins.score.enabled.push_back({"Unknown", 1});
  profile.plugin_config.back().args = ArgsOf("{weight: 9}");
  fw = NewFramework(registry, profile, {.parallelism = 1});
  ASSERT_FALSE(fw.ok());
  EXPECT_THAT(fw.status().message(), HasSubstr("ScorePlugin \"Unknown\" does not exist"));
}

TEST(MergeRegistry, AddsNewNamesAndRefusesAClash) {
  using namespace testing;  // NOLINT: the fakes
  Registry into = BaseRegistry();
  Registry mine;
  mine["Mine"] = Once<FakeScore>(std::string("Mine"), FakeScore::Fn(ZeroScore));
  ASSERT_TRUE(MergeRegistry(into, std::move(mine)).ok());
  EXPECT_TRUE(into.contains("Mine"));

  Registry clash;
  clash["Other"] = Once<FakeScore>(std::string("Other"), FakeScore::Fn(ZeroScore));
  clash["QS"] = Once<FakeScore>(std::string("QS"), FakeScore::Fn(ZeroScore));
  ksched::Status s = MergeRegistry(into, std::move(clash));
  EXPECT_EQ(s.message(), "a plugin named \"QS\" already exists");
  EXPECT_FALSE(into.contains("Other"));  // nothing added

  Registry empty_factory;
  empty_factory["Nothing"] = nullptr;
  EXPECT_EQ(MergeRegistry(into, std::move(empty_factory)).message(), "plugin \"Nothing\" has no factory");
}

}  // namespace
}  // namespace ksched::framework::runtime
