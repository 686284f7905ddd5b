// Hostile or broken input must give an error, quickly, never a crash or a hang.
#include <gtest/gtest.h>

#include <chrono>

#include "config/load.h"

namespace ksched::config {
namespace {

constexpr std::string_view kHeader =
    "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n";

std::string BillionLaughs(std::string_view where_used) {
  std::string doc = "x0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (int i = 1; i <= 9; ++i) {
    doc += "x" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int j = 0; j < 10; ++j) doc += (j ? ", *a" : "*a") + std::to_string(i - 1);
    doc += "]\n";
  }
  return std::string(kHeader) + std::string(where_used) + "\n" + doc;
}

TEST(HostileInputTest, BillionLaughsIsBounded) {
  struct Case {
    std::string_view name, prefix;
  } cases[] = {
      // Unknown top-level keys are still walked for aliases... they are only reported, so
      // put the bomb where the decoder must descend into it.
      {"in out-of-tree args",
       "profiles:\n- pluginConfig:\n  - name: Custom\n    args: {bomb: *a9}\n"},
      {"in a plugin list", "profiles:\n- plugins:\n    filter:\n      enabled: *a9\n"},
  };
  for (const Case& c : cases) {
    // Anchors must be defined before use: move the bomb definitions first.
    std::string doc = BillionLaughs("");
    doc += c.prefix;
    auto start = std::chrono::steady_clock::now();
    auto cfg = LoadConfigFromString(doc);
    auto elapsed = std::chrono::steady_clock::now() - start;
    ASSERT_FALSE(cfg.ok()) << c.name;
    EXPECT_LT(elapsed, std::chrono::seconds(5)) << c.name;
  }
  // The bomb in an out-of-tree plugin's args: stopped by the node budget.
  auto cfg = LoadConfigFromString(BillionLaughs("") + "profiles:\n- pluginConfig:\n  - name: Custom\n    args: {b: *a9}\n");
  ASSERT_FALSE(cfg.ok());
  EXPECT_NE(cfg.status().message().find("too large"), std::string::npos) << cfg.status().message();
}

TEST(HostileInputTest, DeepNestingIsAnError) {
  for (std::string_view open_close : {"[]", "{}"}) {
    std::string doc(kHeader);
    doc += "profiles:\n- pluginConfig:\n  - name: Custom\n    args: {x: ";
    for (int i = 0; i < 10000; ++i) doc += open_close[0] == '{' ? "{a: " : "[";
    for (int i = 0; i < 10000; ++i) doc += open_close[1];
    doc += "}\n";
    auto cfg = LoadConfigFromString(doc);
    ASSERT_FALSE(cfg.ok());
    EXPECT_NE(cfg.status().message().find("exceeded max nesting depth"), std::string::npos) << cfg.status().message();
  }
  // Deep but under yaml-cpp's limit: our own depth limit for args values applies.
  std::string doc(kHeader);
  doc += "profiles:\n- pluginConfig:\n  - name: Custom\n    args: {x: " + std::string(300, '[') +
         std::string(300, ']') + "}\n";
  auto cfg = LoadConfigFromString(doc);
  ASSERT_FALSE(cfg.ok());
  EXPECT_EQ(cfg.status().message().rfind("decoding .profiles[0].pluginConfig[0]: value nested too deeply at \"args\"", 0),
            0u)
      << cfg.status().message();
  // Block style: 1,000 levels of indentation-nested maps (10,000 would be 50 MB of spaces,
  // which the size cap rejects first).
  std::string block(kHeader);
  block += "foo:\n";
  for (int i = 1; i < 1000; ++i) block += std::string(i, ' ') + "a:\n";
  cfg = LoadConfigFromString(block);
  ASSERT_FALSE(cfg.ok());
  EXPECT_NE(cfg.status().message().find("exceeded max nesting depth"), std::string::npos) << cfg.status().message();
}

TEST(HostileInputTest, SelfReferencingAliasIsAnError) {
  std::string doc(kHeader);
  doc += "profiles:\n- pluginConfig:\n  - name: Custom\n    args: &x {self: *x}\n";
  EXPECT_FALSE(LoadConfigFromString(doc).ok());
}

TEST(HostileInputTest, InvalidUtf8) {
  for (std::string bad : {std::string("\xff"), std::string("\xc3\x28"), std::string("\xe2\x82"),
                          std::string("\xed\xa0\x80") /* surrogate */, std::string("\xc0\xaf") /* overlong */}) {
    auto cfg = LoadConfigFromString(std::string(kHeader) + "profiles:\n- schedulerName: a" + bad + "\n");
    ASSERT_FALSE(cfg.ok());
    EXPECT_NE(cfg.status().message().find("invalid UTF-8"), std::string::npos);
  }
  // Valid multi-byte text is fine.
  auto ok = LoadConfigFromString(std::string(kHeader) + "profiles:\n- schedulerName: \xe8\xb0\x83\xe5\xba\xa6\n");
  EXPECT_TRUE(ok.ok()) << ok.status().ToString();
}

TEST(HostileInputTest, TooLarge) {
  std::string doc(kHeader);
  doc += "# " + std::string(kMaxConfigBytes, 'x') + "\n";
  auto cfg = LoadConfigFromString(doc);
  ASSERT_FALSE(cfg.ok());
  EXPECT_NE(cfg.status().message().find("more than the limit"), std::string::npos);
}

TEST(HostileInputTest, MalformedYaml) {
  for (std::string_view doc : {"a: [1, 2\n", "a: 'unterminated\n", "\t- x: y\n  z", "a: b: c\n", "? [a]\n: b\n",
                               "*undefined\n", "apiVersion: x\n\0kind: y\n", "%YAML 9.9\n---\na: 1\n"}) {
    EXPECT_FALSE(LoadConfigFromString(doc).ok()) << doc;
  }
}

TEST(HostileInputTest, ComplexKeysAreRejected) {
  auto cfg = LoadConfigFromString(std::string(kHeader) + "? [a, b]\n: c\n");
  ASSERT_FALSE(cfg.ok());
  EXPECT_NE(cfg.status().message().find("keys must be strings"), std::string::npos) << cfg.status().message();
}

}  // namespace
}  // namespace ksched::config
