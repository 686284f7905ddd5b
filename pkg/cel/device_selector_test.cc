// The DRA environment: the `device` variable, upstream's compile_test.go cases
// (k8s.io/dynamic-resource-allocation/cel/compile_test.go TestCEL, same expressions
// and messages), the cost limit and the selector cache.
#include "pkg/cel/device_selector.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "pkg/cel/cel_test_util.h"

namespace ksched::cel {
namespace {

using testing::Case;
using testing::Eval;
using testing::SampleDevice;

api::Device DeviceWith(std::initializer_list<std::pair<const char*, api::DeviceAttribute>> attrs,
                       std::initializer_list<std::pair<const char*, const char*>> caps = {}) {
  api::Device d;
  for (const auto& [name, a] : attrs) d.attributes[name] = a;
  for (const auto& [name, q] : caps) d.capacity[name].value = *api::Quantity::Parse(q);
  return d;
}
api::DeviceAttribute Bool(bool b) { return api::DeviceAttribute{b}; }
api::DeviceAttribute Int(int64_t i) { return api::DeviceAttribute{i}; }
api::DeviceAttribute Str(const char* s) { return api::DeviceAttribute{std::string(s)}; }
api::DeviceAttribute Ver(const char* v) { return api::DeviceAttribute{*api::SemVersion::Parse(v)}; }

struct UpstreamCase {
  const char* name;
  const char* expression;
  const char* driver;
  api::Device device;
  const char* want;  // "true", "false", "error: ..." or a "compile: " prefix of the message
};

TEST(DeviceSelector, UpstreamCompileTestCases) {
  const std::string all = R"(
device.capacity["dra.example.com"].quantity.isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"].bool &&
device.attributes["dra.example.com"].int > 0 &&
device.attributes["dra.example.com"].string == "fish" &&
device.attributes["dra.example.com"].version.isGreaterThan(semver("0.0.1")) &&
device.capacity["dra.example.com"]["quantity"].isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"]["bool"] &&
device.attributes["dra.example.com"]["int"] > 0 &&
device.attributes["dra.example.com"]["string"] == "fish" &&
device.attributes["dra.example.com"]["version"].isGreaterThan(semver("0.0.1"))
)";
  const std::vector<UpstreamCase> cases = {
      {"true", "true", "", {}, "true"},
      {"false", "false", "", {}, "false"},
      {"syntax-error", "?!", "", {}, "compile: compilation failed: ERROR: <input>:1:1: Syntax error:"},
      {"type-error", "1", "", {}, "compile: must evaluate to bool or the unknown type, not int"},
      {"runtime-error-lookup-identifier",
       R"(device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0")))", "", {},
       "error: no such key: noSuchAttr"},
      {"runtime-error-lookup-map", R"(device.attributes["no-such-domain"]["noSuchAttr"].isGreaterThan(quantity("0")))",
       "", {}, "error: no such key: noSuchAttr"},
      {"domain-check-negative", R"("no-such-domain" in device.attributes)", "", {}, "false"},
      {"domain-check-positive", R"("dra.example.com" in device.attributes)", "",
       DeviceWith({{"dra.example.com/something", Bool(true)}}), "true"},
      {"empty-driver-name", R"(device.driver == "")", "", {}, "true"},
      {"real-driver-name", R"(device.driver == "dra.example.com")", "dra.example.com", {}, "true"},
      {"driver-name-qualifier", R"(device.attributes["dra.example.com"].name)", "dra.example.com",
       DeviceWith({{"name", Bool(true)}}), "true"},
      {"driver-name-qualifier-map-lookup", R"(device.attributes["dra.example.com"]["name"])", "dra.example.com",
       DeviceWith({{"name", Bool(true)}}), "true"},
      {"bind", R"(cel.bind(dra, device.attributes["dra.example.com"], dra.name))", "dra.example.com",
       DeviceWith({{"name", Bool(true)}}), "true"},
      {"qualified-attribute-name", R"(device.attributes["other.example.com"].name)", "dra.example.com",
       DeviceWith({{"other.example.com/name", Bool(true)}}), "true"},
      {"bool", R"(device.attributes["dra.example.com"].name)", "dra.example.com", DeviceWith({{"name", Bool(true)}}),
       "true"},
      {"int", R"(device.attributes["dra.example.com"].name > 0)", "dra.example.com", DeviceWith({{"name", Int(1)}}),
       "true"},
      {"string", R"(device.attributes["dra.example.com"].name == "fish")", "dra.example.com",
       DeviceWith({{"name", Str("fish")}}), "true"},
      {"version", R"(device.attributes["dra.example.com"].name.isGreaterThan(semver("0.0.1")))", "dra.example.com",
       DeviceWith({{"name", Ver("1.0.0")}}), "true"},
      {"quantity", R"(device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki")))", "dra.example.com",
       DeviceWith({}, {{"name", "1Mi"}}), "true"},
      {"check-positive",
       R"("name" in device.capacity["dra.example.com"] && device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki")))",
       "dra.example.com", DeviceWith({}, {{"name", "1Mi"}}), "true"},
      {"check-negative",
       R"(!("name" in device.capacity["dra.example.com"]) || device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki")))",
       "", {}, "true"},
      {"all", all.c_str(), "dra.example.com",
       DeviceWith({{"bool", Bool(true)}, {"int", Int(1)}, {"string", Str("fish")}, {"version", Ver("1.0.0")}},
                  {{"quantity", "1Mi"}}),
       "true"},
      {"many",
       R"(device.attributes["dra.example.com"].a && device.attributes["dra.example.com"].b && device.attributes["dra.example.com"].c)",
       "dra.example.com", DeviceWith({{"a", Bool(true)}, {"b", Bool(true)}, {"c", Bool(true)}}), "true"},
  };
  for (const UpstreamCase& c : cases) {
    std::string got = Eval(c.expression, c.device, c.driver);
    std::string_view want = c.want;
    if (want.starts_with("compile: ")) {
      EXPECT_TRUE(got.starts_with(want)) << c.name << ": " << got;
    } else {
      EXPECT_EQ(got, want) << c.name;
    }
  }
}

TEST(DeviceSelector, UpstreamExpensiveCaseExceedsCostLimit) {
  // compile_test.go "expensive": 1000 * 32 attributes with 64-character ids.
  api::Device d;
  for (int i = 0; i < 1000 * 32; ++i) {
    std::string suffix = "-" + std::to_string(i);
    d.attributes["dra.example.com/" + std::string(64 - suffix.size(), 'x') + suffix].value = std::string("abc");
  }
  EXPECT_EQ(Eval(R"(device.attributes["dra.example.com"].map(s, s.lowerAscii()).map(s, s.size()).sum() == 0)", d,
                "dra.example.com"),
            "error: operation cancelled: actual cost limit exceeded");
}

TEST(DeviceSelector, DeviceVariable) {
  const std::vector<Case> cases = {
      {R"(device.driver == "gpu.example.com")", "true"},
      {R"(device.driver == "gpu.example.com" && device.attributes["gpu.example.com"].model == "A100")", "true"},
      {R"(device.attributes["gpu.example.com"].model == "H100")", "false"},
      {R"(device.attributes["gpu.example.com"]["model"].startsWith("A"))", "true"},
      {R"(device.attributes["gpu.example.com"].count >= 8)", "true"},
      {R"(device.attributes["gpu.example.com"].count * 2 == 16)", "true"},
      {R"(device.attributes["gpu.example.com"].ecc)", "true"},
      {R"(device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("1.2.0")))", "true"},
      {R"(device.attributes["gpu.example.com"].driverVersion.major() == 1)", "true"},
      {R"(device.attributes["gpu.example.com"].driverVersion == semver("1.2.3"))", "true"},
      {R"(device.attributes["other.example.com"].zone == "z1")", "true"},
      {R"(device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) > 0)", "true"},
      {R"(device.capacity["gpu.example.com"].memory == quantity("80Gi"))", "true"},
      {R"(device.capacity["other.example.com"].slots.asInteger() == 4)", "true"},
      {R"("model" in device.attributes["gpu.example.com"])", "true"},
      {R"("zone" in device.attributes["gpu.example.com"])", "false"},
      {R"("other.example.com" in device.capacity)", "true"},
      {R"(has(device.attributes["gpu.example.com"].model))", "true"},
      {R"(has(device.attributes["gpu.example.com"].nope))", "false"},
      {R"(has(device.driver))", "true"},
      {R"(device.attributes.size() == 2)", "true"},
      {R"(size(device.attributes["gpu.example.com"]) == 4)", "true"},
      {R"(device.attributes["nope.example.com"].size() == 0)", "true"},
      {R"(device.attributes.all(d, d.endsWith(".example.com")))", "true"},
      {R"(device.attributes["gpu.example.com"].exists(k, k == "ecc"))", "true"},
      {R"(device.attributes["gpu.example.com"].exists(k, v, k == "count" && v == 8))", "true"},
      {R"(device.capacity.exists(d, device.capacity[d].exists(k, k == "slots")))", "true"},
      {R"(cel.bind(gpu, device.attributes["gpu.example.com"], gpu.model == "A100" && gpu.count > 4))", "true"},
      {R"(device.attributes["gpu.example.com"].model)", "error: CEL result of type string could not be converted to bool: unsupported type conversion from 'string' to bool"},
      {R"(device.attributes["gpu.example.com"].model > 1)", "error: no such overload"},
      {R"(device.attributes["gpu.example.com"].nope == 1)", "error: no such key: nope"},
      {R"(device.attributes["gpu.example.com"]["nope"] == 1)", "error: no such key: nope"},
      {R"(device.allowMultipleAllocations)", "false"},
      {R"(!device.allowMultipleAllocations && device.driver.size() > 0)", "true"},
      {R"(device.attributes["gpu.example.com"].model == "A100" || device.attributes["gpu.example.com"].nope)", "true"},
      {R"(device.attributes["gpu.example.com"].nope || device.attributes["gpu.example.com"].model == "A100")", "true"},
      {R"(cel.bind(a, device.attributes, a["gpu.example.com"].model == "A100"))", "true"},
      {R"([device.attributes["gpu.example.com"].model].exists(m, m == "A100"))", "true"},
      {R"(device.foo == 1)", "compile: compilation failed: ERROR: <input>:1:7: undefined field 'foo'\n | device.foo == 1\n | ......^"},
      {R"(has(device.foo))", "compile: compilation failed: ERROR: <input>:1:4: undefined field 'foo'\n | has(device.foo)\n | ...^"},
      {R"(devices.driver == "x")", "compile: compilation failed: ERROR: <input>:1:1: undeclared reference to 'devices' (in container '')\n | devices.driver == \"x\"\n | ^"},
      {R"(device.driver == 1)", "compile: compilation failed: ERROR: <input>:1:15: found no matching overload for '_==_' applied to '(string, int)'\n | device.driver == 1\n | ..............^"},
      {R"(device.capacity["gpu.example.com"].memory.startsWith("8"))", "compile: compilation failed: ERROR: <input>:1:53: found no matching overload for 'startsWith' applied to 'kubernetes.Quantity.(string)'\n | device.capacity[\"gpu.example.com\"].memory.startsWith(\"8\")\n | ....................................................^"},
      {R"(device.driver)", "compile: must evaluate to bool or the unknown type, not string"},
      {R"(device.attributes)", "compile: must evaluate to bool or the unknown type, not map(string, map(string, google.protobuf.Any))"},
  };
  for (const Case& c : cases) EXPECT_EQ(Eval(c.expression), c.want) << c.expression;
}

TEST(DeviceSelector, QualifiedAndUnqualifiedNamesOfTheDriversDomain) {
  api::Device d = DeviceWith({{"gpu.example.com/a", Int(1)}, {"b", Int(2)}});
  EXPECT_EQ(Eval(R"(device.attributes["gpu.example.com"].a == 1 && device.attributes["gpu.example.com"].b == 2)", d), "true");
  EXPECT_EQ(Eval(R"(device.attributes["gpu.example.com"].size() == 2)", d), "true");
  EXPECT_EQ(Eval(R"(device.attributes.size() == 1)", d), "true");
  // Another driver sees "b" in its own domain.
  EXPECT_EQ(Eval(R"(device.attributes["other.example.com"].b == 2)", d, "other.example.com"), "true");
}

TEST(DeviceSelector, CostLimitAndActualCost) {
  auto s = DeviceSelector::Compile(R"(device.driver == "dra.example.com")");
  ASSERT_TRUE(s.ok());
  uint64_t cost = 0;
  api::Device d;
  auto r = (*s)->Matches("dra.example.com", d, 1000, &cost);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(*r);
  EXPECT_EQ(cost, 4u);  // device, .driver, and == over 15 characters (compile_test.go estimates 4)
  r = (*s)->Matches("dra.example.com", d, 3, &cost);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kOutOfRange);
  EXPECT_EQ(r.status().message(), "operation cancelled: actual cost limit exceeded");
  // The error of exceeding the limit is not absorbed by ||.
  auto loop = DeviceSelector::Compile("true || [1, 2, 3].all(x, true)");
  ASSERT_TRUE(loop.ok());
  EXPECT_TRUE(*(*loop)->Matches("d", d));
  auto expensive = DeviceSelector::Compile("[1, 2, 3].map(x, [1, 2, 3].map(y, x * y)).size() == 3 || true");
  ASSERT_TRUE(expensive.ok());
  r = (*expensive)->Matches("d", d, 50, &cost);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "operation cancelled: actual cost limit exceeded");
}

// Expressions fuzz_cel found (or that its findings generalise to) taking the process
// down before the cost limit could stop them: each must end quickly, within bounded
// memory, with a result or a cancellation.
TEST(DeviceSelector, HostileExpressionsStayBounded) {
  const std::string a100(100, 'a');
  // 10,200 characters, cheaply: replace with an empty pattern inserts before each one.
  const std::string ten_k = "'" + a100 + "'.replace('', '" + a100 + "')";
  const std::string cancelled = "error: operation cancelled: actual cost limit exceeded";
  struct OwnedCase {
    std::string expression, want;
  };
  const std::vector<OwnedCase> cases = {
      // The result of replace squares its input's length: 10^8, then 10^16 characters.
      {"cel.bind(a, " + ten_k + ", cel.bind(b, a.replace('', a), b.replace('', b).size() > 0))", cancelled},
      // List concatenation doubling a list through nested binds (2^40 elements).
      {[] {
         std::string e = "cel.bind(l0, [1, 2, 3, 4, 5, 6, 7, 8], ";
         for (int i = 1; i <= 40; ++i) e += "cel.bind(l" + std::to_string(i) + ", l" + std::to_string(i - 1) + " + l" + std::to_string(i - 1) + ", ";
         e += "l40.size() > 0";
         return e + std::string(41, ')');
       }(),
       cancelled},
      // sets.intersects of two disjoint 10^4-element lists: cel-go charges |a| * |b|.
      {"cel.bind(a, " + ten_k + ", sets.intersects(a.split(''), a.replace('a', 'b').split('')))", cancelled},
      // Splitting a 3 * 10^6-character string into code points: affordable at 0.2 per
      // code point, but not as 3 * 10^6 strings.
      {"cel.bind(a, " + ten_k + ", a.replace('', '" + std::string(300, 'a') + "').split('').size() > 0)", cancelled},
      // Equality and indexOf over a list of 10^4 references to one 10^4-element list:
      // cel-go charges the top level only (10^3), the work is 10^8 per comparison.
      {"cel.bind(l, " + ten_k + ".split(''), cel.bind(L, l.map(x, l), l.all(x, L == L)))", cancelled},
      {"cel.bind(l, " + ten_k + ".split(''), cel.bind(L, l.map(x, l), l.all(x, L.indexOf(['b']) == -1)))", cancelled},
      // `exists` stops at the first element without visiting (or copying) the rest.
      {"cel.bind(l, " + ten_k + ".split(''), l.all(y, l.exists(x, true)))", "true"},
      // Exponential backtracking in a depth-first regex matcher.
      {"'" + std::string(40, 'a') + "b'.matches('^(a+)+$')", "false"},
      // A depth-first matcher recurses once per character of a 10^5-character input.
      {"cel.bind(a, " + ten_k + ", a.replace('', 'aaaaaaaaa').matches('^(a|b)*$'))", "true"},
      // std::regex's compiler recurses once per group: Go's limit of 1000 levels.
      {"'a'.matches('" + std::string(1001, '(') + "a" + std::string(1001, ')') + "')",
       "error: error parsing regexp: expression nests too deeply: `" + std::string(1001, '(') + "a" +
           std::string(1001, ')') + "`"},
      // Counted repetition multiplies std::regex's automaton: 10^5 states from 13
      // characters (tens of MB each in the pattern cache).
      {"'a'.matches('(a{1000}){99}')", "error: error parsing regexp: expression too large: `(a{1000}){99}`"},
      {"'xaaay'.matches('^x(a{1,3}){1,100}y$')", "true"},
  };
  for (const OwnedCase& c : cases) EXPECT_EQ(Eval(c.expression), c.want) << c.expression.substr(0, 200);
  // RE2 (and so cel-go) has no back references.
  EXPECT_TRUE(Eval("'aa'.matches('(a)\\\\1')").starts_with("error: error parsing regexp: ")) << Eval("'aa'.matches('(a)\\\\1')");
}

TEST(DeviceSelector, CompileErrorsAreInvalidArgument) {
  auto s = DeviceSelector::Compile("device.nope");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  auto ok = DeviceSelector::Compile("true");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ((*ok)->expression(), "true");
}

TEST(DeviceSelector, ConcurrentEvaluation) {
  auto s = DeviceSelector::Compile(
      R"(device.attributes["gpu.example.com"].model == "A100" && ["a", "b"].exists(x, x + "" == "b") && device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("1Gi")))");
  ASSERT_TRUE(s.ok());
  const api::Device d = SampleDevice();
  std::vector<std::thread> threads;
  std::atomic<int> matched{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 500; ++i) matched += *(*s)->Matches(testing::kDriver, d) ? 1 : 0;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(matched.load(), 2000);
}

TEST(SelectorCache, CachesSelectorsAndErrorsWithLruEviction) {
  SelectorCache cache(2);
  auto a1 = cache.Get("true");
  auto a2 = cache.Get("true");
  ASSERT_TRUE(a1.ok() && a2.ok());
  EXPECT_EQ(a1->get(), a2->get());
  auto bad1 = cache.Get("1");
  auto bad2 = cache.Get("1");
  ASSERT_FALSE(bad1.ok());
  EXPECT_EQ(bad2.status().message(), "must evaluate to bool or the unknown type, not int");
  (void)cache.Get("true");  // "true" is now the most recent; "1" the least
  auto c = cache.Get("false");
  ASSERT_TRUE(c.ok());
  auto a3 = cache.Get("true");
  ASSERT_TRUE(a3.ok());
  EXPECT_EQ(a1->get(), a3->get()) << "the most recently used entry survives";
  SelectorCache cache2(1);
  auto x1 = cache2.Get("true");
  (void)cache2.Get("false");
  auto x2 = cache2.Get("true");
  EXPECT_NE(x1->get(), x2->get()) << "evicted entries are compiled again";
}

}  // namespace
}  // namespace ksched::cel
