// The YAML/JSON emitters, the YAML -> JSON conversion with Kubernetes' scalar typing, and
// /configz's JSON encoding of the configuration.
#include "config/encode.h"
#include "config/emitter.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include "config/load.h"

namespace ksched::config {
namespace {

std::string Json(std::string_view yaml) {
  auto json = YamlToJson(YAML::Load(std::string(yaml)));
  EXPECT_TRUE(json.ok()) << yaml << ": " << json.status().ToString();
  return json.ok() ? *json : "";
}

TEST(YamlToJsonTest, ScalarsAreTypedLikeKubernetes) {
  struct Case {
    std::string_view yaml, json;
  };
  const Case cases[] = {
      {"a: 1", R"({"a":1})"},
      {"a: -17", R"({"a":-17})"},
      {"a: 0x1F", R"({"a":31})"},
      {"a: 0755", R"({"a":493})"},  // YAML 1.1 octal, as go-yaml v2 reads it
      {"a: 1_000", R"({"a":1000})"},
      {"a: 1.5", R"({"a":1.5})"},
      {"a: 1e3", R"({"a":1000})"},
      {"a: 08", R"({"a":8})"},  // not octal, so a float
      {"a: 99999999999999999999", R"({"a":1e+20})"},  // past int64: a float
      {"a: '1'", R"({"a":"1"})"},
      {"a: \"0x1F\"", R"({"a":"0x1F"})"},
      {"a: 100m", R"({"a":"100m"})"},
      {"a: true", R"({"a":true})"},
      {"a: yes", R"({"a":true})"},  // YAML 1.1 booleans, the classic manifest pitfall
      {"a: Off", R"({"a":false})"},
      {"a: 'yes'", R"({"a":"yes"})"},
      {"a: ~", R"({"a":null})"},
      {"a:", R"({"a":null})"},
      {"a: null", R"({"a":null})"},
      {"a: !!str 10", R"({"a":"10"})"},
      {"a: !!int '10'", R"({"a":10})"},
      {"a: |\n  x: 1\n  y\n", R"({"a":"x: 1\ny\n"})"},
      {"a: [1, b, {c: d}]", R"({"a":[1,"b",{"c":"d"}]})"},
      {"a: {}\nb: []", R"({"a":{},"b":[]})"},
      {"a: \"q\\\"b\\\\s\\n\\u0001\"", R"({"a":"q\"b\\s\n\u0001"})"},
      {"a: é€", R"({"a":"é€"})"},
      {"1: x", R"({"1":"x"})"},  // keys are always strings
  };
  for (const Case& c : cases) EXPECT_EQ(Json(c.yaml), c.json) << c.yaml;
}

TEST(YamlToJsonTest, Errors) {
  struct Case {
    std::string yaml, error;
  };
  std::string deep;
  for (int i = 0; i < 120; ++i) deep += "[";
  for (int i = 0; i < 120; ++i) deep += "]";
  const Case cases[] = {
      {"a: 1\na: 2", "duplicate key \"a\""},
      {"? [a]\n: 1", "map keys must be scalars"},
      {"a: .inf", "float .inf has no JSON form"},
      {"a: !!int x", "cannot decode !!int `x`"},
      {deep, "nesting deeper than 100 levels"},
  };
  for (const Case& c : cases) {
    auto json = YamlToJson(YAML::Load(c.yaml));
    ASSERT_FALSE(json.ok()) << c.yaml;
    EXPECT_EQ(json.status().message(), c.error) << c.yaml;
  }
}

TEST(JsonEmitterTest, InvalidUtf8BecomesReplacementCharacter) {
  auto out = NewJsonEmitter();
  out->BeginSeq();
  out->String(std::string("a\xff" "b\xc3", 4));
  out->String("ok");
  out->EndSeq();
  EXPECT_EQ(out->Text(), R"(["a\ufffdb\ufffd","ok"])");
}

// The JSON walk mirrors the YAML one: converting --write-config-to's YAML to JSON gives
// exactly /configz's JSON, for every configuration shape we have.
TEST(EncodeConfigJSONTest, SameDocumentAsYaml) {
  const std::string files[] = {"ksched.yaml", "minimal.yaml", "multi-profile.yaml"};
  std::vector<KubeSchedulerConfiguration> configs;
  for (const std::string& f : files) {
    auto cfg = LoadConfigFile(std::string(KSCHED_CONFIG_TESTDATA) + "/" + f);
    ASSERT_TRUE(cfg.ok()) << f << ": " << cfg.status().ToString();
    configs.push_back(*cfg);
  }
  auto custom = LoadConfigFromString(
      "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
      "leaderElection: {leaseDuration: 1m30s}\nclientConnection: {qps: 0.5}\n"
      "profiles:\n- schedulerName: 'yes'\n  pluginConfig:\n  - name: Custom\n    args: {a: [1, 2], b: {c: 'true'}}\n");
  ASSERT_TRUE(custom.ok()) << custom.status().ToString();
  configs.push_back(*custom);
  for (const KubeSchedulerConfiguration& cfg : configs) {
    std::string yaml = EncodeConfig(cfg);
    EXPECT_EQ(Json(yaml), EncodeConfigJSON(cfg)) << yaml;
  }
  std::string json = EncodeConfigJSON(*custom);
  EXPECT_NE(json.find(R"("leaseDuration":"1m30s")"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("qps":0.5)"), std::string::npos) << json;
  EXPECT_NE(json.find(R"({"a":[1,2],"b":{"c":"true"}})"), std::string::npos) << json;
}

TEST(EncodeConfigzTest, ParsesAsComponentConfig) {
  auto cfg = LoadConfigFile(std::string(KSCHED_CONFIG_TESTDATA) + "/ksched.yaml");
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  simdjson::padded_string text(EncodeConfigz(*cfg));
  simdjson::ondemand::parser parser;
  auto doc = parser.iterate(text);
  simdjson::ondemand::object cc = doc["componentconfig"].get_object();
  EXPECT_EQ(std::string_view(cc["apiVersion"].get_string()), "kubescheduler.config.k8s.io/v1");
  EXPECT_EQ(std::string_view(cc["kind"].get_string()), "KubeSchedulerConfiguration");
  simdjson::ondemand::object le = cc["leaderElection"].get_object();
  EXPECT_TRUE(bool(le["leaderElect"].get_bool()));
  EXPECT_EQ(std::string_view(le["leaseDuration"].get_string()), "15s");
  EXPECT_EQ(std::string_view(le["resourceName"].get_string()), "ksched");
  EXPECT_EQ(int64_t(cc["parallelism"].get_int64()), 16);
  simdjson::ondemand::array profiles = cc["profiles"].get_array();
  size_t n = 0;
  for (auto p : profiles) {
    simdjson::ondemand::object profile = p.get_object();
    // Keys come sorted, so read them in order: pluginConfig, plugins, schedulerName.
    simdjson::ondemand::array pc = profile["pluginConfig"].get_array();
    bool saw_fit = false;
    for (auto entry : pc) {
      simdjson::ondemand::object e = entry.get_object();
      simdjson::ondemand::object args = e["args"].get_object();
      std::string_view kind = args["kind"].get_string();
      if (kind == "NodeResourcesFitArgs") {
        EXPECT_EQ(std::string_view(args["scoringStrategy"]["type"].get_string()), "MostAllocated");
        saw_fit = true;
      }
    }
    EXPECT_TRUE(saw_fit);
    EXPECT_EQ(std::string_view(profile["schedulerName"].get_string()), "ksched");
    ++n;
  }
  EXPECT_EQ(n, 1u);
}

}  // namespace
}  // namespace ksched::config
