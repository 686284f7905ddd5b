// The CEL language: literals, operators, errors, macros. Cases marked "cel-spec"
// are taken from google/cel-spec tests/simple/testdata/<file>.textproto (expected
// values rewritten as `== value` so the selector is a bool).
#include <gtest/gtest.h>

#include "pkg/cel/cel_test_util.h"

namespace ksched::cel {
namespace {

using testing::Case;
using testing::Eval;

void RunCases(const std::vector<Case>& cases) {
  for (const Case& c : cases) EXPECT_EQ(Eval(c.expression), c.want) << c.expression;
}

TEST(CelLanguage, Literals) {
  RunCases({
      {"true", "true"},
      {"false", "false"},
      {"1 == 1", "true"},
      {"0x10 == 16", "true"},
      {"1u == 1u", "true"},
      {"0xFFu == 255u", "true"},
      {"-9223372036854775808 < 0", "true"},        // cel-spec basic.textproto int64_min
      {"9223372036854775807 > 0", "true"},
      {"18446744073709551615u > 0u", "true"},     // cel-spec basic.textproto uint64_max
      {"1.5 == 1.5", "true"},
      {".5 == 0.5", "true"},
      {"1e3 == 1000.0", "true"},
      {"2.5e-1 == 0.25", "true"},
      {"'single' == \"single\"", "true"},
      {"r'\\n' == '\\\\n'", "true"},
      {"'''a\nb''' == 'a\\nb'", "true"},
      {"\"\"\"x\"y\"\"\" == 'x\"y'", "true"},
      {"'\\x41\\u00e9\\101' == 'Aé' + 'A'", "true"},
      {"'\\a\\b\\f\\n\\r\\t\\v\\'\\\"\\\\\\?\\`'.size() == 12", "true"},
      {"size('\\U0001F600') == 1", "true"},
      {"b'abc' == b'abc'", "true"},
      {"size(b'\\xff\\x00') == 2", "true"},
      {"null == null", "true"},
      {"[1, 2, 3] == [1, 2, 3]", "true"},
      {"[1, 2,] == [1, 2]", "true"},
      {"{'a': 1, 'b': 2} == {'b': 2, 'a': 1}", "true"},
      {"{}.size() == 0", "true"},
      {"[].size() == 0", "true"},
      {"// a comment\ntrue", "true"},
      {"(((true)))", "true"},
  });
}

TEST(CelLanguage, IntegerMath) {
  // cel-spec integer_math.textproto.
  RunCases({
      {"40 + 2 == 42", "true"},
      {"42 + (-7) == 35", "true"},
      {"-4 + (-2) == -6", "true"},
      {"42 - (-22) == 64", "true"},
      {"40 * (-2) == -80", "true"},
      {"-80 / (-2) == 40", "true"},
      {"43 % (-5) == 3", "true"},
      {"-42 % (-5) == -2", "true"},
      {"-3 % 5 == -3", "true"},
      {"-(-42) == 42", "true"},
      {"--42 == 42", "true"},
      {"34 % 0 == 0", "error: modulus by zero"},
      {"15 / 0 == 0", "error: division by zero"},
      {"9223372036854775807 + 1 == 0", "error: integer overflow"},
      {"-9223372036854775808 - 1 == 0", "error: integer overflow"},
      {"9223372036854775807 * 2 == 0", "error: integer overflow"},
      {"-9223372036854775808 / -1 == 0", "error: integer overflow"},
      {"-9223372036854775808 % -1 == 0", "error: integer overflow"},
      {"-(-9223372036854775808) == 0", "error: integer overflow"},
      {"1u + 2u == 3u", "true"},
      {"0u - 1u == 0u", "error: unsigned integer overflow"},
      {"18446744073709551615u + 1u == 0u", "error: unsigned integer overflow"},
      {"7u / 2u == 3u", "true"},
      {"7u % 0u == 0u", "error: modulus by zero"},
      {"1 + 2 * 3 == 7", "true"},
      {"(1 + 2) * 3 == 9", "true"},
      {"10 - 2 - 3 == 5", "true"},
      {"100 / 10 / 5 == 2", "true"},
  });
}

TEST(CelLanguage, DoubleMath) {
  // cel-spec fp_math.textproto.
  RunCases({
      {"4.25 + 15.25 == 19.5", "true"},
      {"-4.0 - (-2.5) == -1.5", "true"},
      {"2.5 * 4.0 == 10.0", "true"},
      {"1.0 / 0.0 == double('Infinity')", "true"},
      {"-(1.5) == -1.5", "true"},
      {"1.0 / 0.0 > 1e308", "true"},
      {"(0.0 / 0.0) == (0.0 / 0.0)", "false"},
      {"(0.0 / 0.0) < 1.0", "error: NaN values cannot be ordered"},
  });
}

TEST(CelLanguage, Comparisons) {
  // cel-spec comparisons.textproto (with cross-type numeric comparisons, which the
  // Kubernetes environment enables).
  RunCases({
      {"1 < 2", "true"},
      {"2 <= 2", "true"},
      {"3 > 2", "true"},
      {"1 >= 2", "false"},
      {"1 < 2u", "true"},
      {"1 < 1.5", "true"},
      {"2u > 1.5", "true"},
      {"-1 < 0u", "true"},
      {"1.0 <= 1", "true"},
      {"9223372036854775807 < 18446744073709551615u", "true"},
      {"'a' < 'b'", "true"},
      {"'abc' < 'abd'", "true"},
      {"'' < 'a'", "true"},
      {"b'a' < b'b'", "true"},
      {"false < true", "true"},
      {"true >= true", "true"},
      {"dyn(1) == 1.0", "true"},
      {"dyn(1u) == 1", "true"},
      {"dyn(2) != 2.5", "true"},
      {"dyn('1') == 1", "false"},
      {"dyn([1]) == [1.0]", "true"},
      {"dyn({'a': 1}) == {'a': 1u}", "true"},
      {"[1, 'a'] == [1, 'a']", "compile: compilation failed: ERROR: <input>:1:5: expected type 'int' but found 'string'\n | [1, 'a'] == [1, 'a']\n | ....^\nERROR: <input>:1:17: expected type 'int' but found 'string'\n | [1, 'a'] == [1, 'a']\n | ................^"},
      {"[1, 2] == [1, 2, 3]", "false"},
      {"{'a': 1} == {'a': 2}", "false"},
      {"null == dyn(0)", "false"},
      {"dyn(1) < 'a'", "error: no such overload"},
      {"dyn(true) < 1", "error: no such overload"},
  });
}

TEST(CelLanguage, Logic) {
  // cel-spec logic.textproto: && and || absorb errors when the other side decides.
  RunCases({
      {"true && true", "true"},
      {"true && false", "false"},
      {"false && (1 / 0 == 0)", "false"},
      {"(1 / 0 == 0) && false", "false"},
      {"true || (1 / 0 == 0)", "true"},
      {"(1 / 0 == 0) || true", "true"},
      {"(1 / 0 == 0) && true", "error: division by zero"},
      {"false || (1 / 0 == 0)", "error: division by zero"},
      {"(1 / 0 == 0) || (2 % 0 == 0)", "error: division by zero"},
      {"!true", "false"},
      {"!!true", "true"},
      {"!false && !false", "true"},
      {"true ? true : false", "true"},
      {"false ? (1 / 0 == 0) : true", "true"},
      {"1 == 1 ? 'a' == 'a' : false", "true"},
      {"true || false && false", "true"},
      {"(true || false) && false", "false"},
      {"dyn(1) && true", "error: no such overload"},
      {"1 in [1, 2] && 'a' in ['a']", "true"},
      {"3 in [1, 2]", "false"},
      {"'a' in {'a': 1}", "true"},
      {"'b' in {'a': 1}", "false"},
      {"dyn(1) in {1u: 'x'}", "true"},
      {"1 in {1u: 'x'}", "compile: compilation failed: ERROR: <input>:1:3: found no matching overload for '@in' applied to '(int, map(uint, string))'\n | 1 in {1u: 'x'}\n | ..^"},
  });
}

TEST(CelLanguage, Conversions) {
  // cel-spec conversions.textproto.
  RunCases({
      {"int('42') == 42", "true"},
      {"int('-7') == -7", "true"},
      {"int('x') == 0", "error: type conversion error from 'string' to 'int'"},
      {"int(2.9) == 2", "true"},
      {"int(-2.9) == -2", "true"},
      {"int(1e19) == 0", "error: integer overflow"},
      {"int(18446744073709551615u) == 0", "error: integer overflow"},
      {"int(42u) == 42", "true"},
      {"uint(42) == 42u", "true"},
      {"uint(-1) == 0u", "error: unsigned integer overflow"},
      {"uint('7') == 7u", "true"},
      {"uint(3.5) == 3u", "true"},
      {"double(1) == 1.0", "true"},
      {"double('2.5') == 2.5", "true"},
      {"double('abc') == 0.0", "error: type conversion error from 'string' to 'double'"},
      {"string(42) == '42'", "true"},
      {"string(42u) == '42'", "true"},
      {"string(-1.5) == '-1.5'", "true"},
      {"string(1e6) == '1e+06'", "true"},
      {"string(100000.0) == '100000'", "true"},
      {"string(0.0001) == '0.0001'", "true"},
      {"string(0.00001) == '1e-05'", "true"},
      {"string(true) == 'true'", "true"},
      {"string(b'abc') == 'abc'", "true"},
      {"string(b'\\xff') == ''", "error: invalid UTF-8 in bytes, cannot convert to string"},
      {"bool('true') && bool('T') && !bool('0')", "true"},
      {"bool('yes')", "error: type conversion error from 'string' to 'bool'"},
      {"bytes('abc') == b'abc'", "true"},
      {"type(1) == int", "true"},
      {"type('a') == string", "true"},
      {"type([]) == list && type({}) == map", "true"},
      {"type(1u) != int", "true"},
      {"dyn(1) + 1 == 2", "true"},
  });
}

TEST(CelLanguage, Lists) {
  // cel-spec lists.textproto.
  RunCases({
      {"[1, 2] + [3] == [1, 2, 3]", "true"},
      {"[] + [1] == [1]", "true"},
      {"[1, 2, 3][1] == 2", "true"},
      {"[1, 2, 3][3] == 0", "error: index '3' out of range in list size '3'"},
      {"[1, 2, 3][-1] == 0", "error: index '-1' out of range in list size '3'"},
      {"size([1, 2, 3]) == 3", "true"},
      {"[[1], [2, 3]][1][0] == 2", "true"},
      {"{'a': [1, 2]}['a'][1] == 2", "true"},
      {"{'k': 'v'}.k == 'v'", "true"},
      {"{'k': 'v'}['x'] == 'v'", "error: no such key: x"},
      {"{'k': 'v'}.x == 'v'", "error: no such key: x"},
      {"{1: 'one'}[1] == 'one'", "true"},
      {"{1: 'one'}[1u] == 'one'", "compile: compilation failed: ERROR: <input>:1:11: found no matching overload for '_[_]' applied to '(map(int, string), uint)'\n | {1: 'one'}[1u] == 'one'\n | ..........^"},
      {"{true: 1, false: 0}[true] == 1", "true"},
      {"{'a': 1, 'a': 2}.size() == 1", "error: Failed with repeated key"},
  });
}

TEST(CelLanguage, Macros) {
  // cel-spec macros.textproto.
  RunCases({
      {"[1, 2, 3].all(x, x > 0)", "true"},
      {"[1, 2, 3].all(x, x > 1)", "false"},
      {"[].all(x, x > 0)", "true"},
      {"[1, 2, 3].exists(x, x == 2)", "true"},
      {"[].exists(x, x == 2)", "false"},
      {"[1, 2, 3].exists_one(x, x > 2)", "true"},
      {"[1, 2, 3].exists_one(x, x > 1)", "false"},
      {"[1, 2, 3].map(x, x * 2) == [2, 4, 6]", "true"},
      {"[1, 2, 3].map(x, x > 1, x * 10) == [20, 30]", "true"},
      {"[1, 2, 3].filter(x, x != 2) == [1, 3]", "true"},
      {"{'a': 1, 'b': 2}.all(k, k.size() == 1)", "true"},
      {"{'a': 1, 'b': 2}.map(k, k) == ['a', 'b']", "true"},
      {"{'a': 1, 'b': 2}.exists(k, v, v == 2 && k == 'b')", "true"},
      {"[10, 20].all(i, v, v == (i + 1) * 10)", "true"},
      {"[1, 2].existsOne(i, v, v == 2)", "true"},
      {"[[1, 2], [3]].exists(l, l.exists(x, x == 3))", "true"},
      {"[1, 2, 3].map(x, [1, 2].map(y, x * y)) == [[1, 2], [2, 4], [3, 6]]", "true"},
      // Errors in all/exists are absorbed when another element decides.
      {"[0, 1].all(x, 1 / x > 1)", "false"},
      {"[0, 2].exists(x, 2 / x == 1)", "true"},
      {"[0, 1].all(x, 1 / x == 1)", "error: division by zero"},
      {"[0].exists_one(x, 1 / x == 1)", "error: division by zero"},
      {"[1, 2].map(x, x / 0) == []", "error: division by zero"},
      {"has({'a': 1}.a)", "true"},
      {"has({'a': 1}.b)", "false"},
      {"cel.bind(x, 2, x * x == 4)", "true"},
      {"cel.bind(l, [1, 2, 3], l.size() == 3 && l[0] == 1)", "true"},
      {"cel.bind(a, 1, cel.bind(b, a + 1, a + b == 3))", "true"},
      {"[1, 2].exists(x, x == 1) && [3].all(x, x == 3)", "true"},
  });
}

TEST(CelLanguage, SyntaxErrors) {
  RunCases({
      {"?!", "compile: compilation failed: ERROR: <input>:1:1: Syntax error: mismatched input '?' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | ?!\n | ^"},
      // cel-go parser_test.go.
      {"1 + +", "compile: compilation failed: ERROR: <input>:1:5: Syntax error: mismatched input '+' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | 1 + +\n | ....^"},
      {"1 + $", "compile: compilation failed: ERROR: <input>:1:5: Syntax error: token recognition error at: '$'\n | 1 + $\n | ....^"},
      {"a | b", "compile: compilation failed: ERROR: <input>:1:3: Syntax error: token recognition error at: '| '\n | a | b\n | ..^"},
      {"1 + 2\n3 +", "compile: compilation failed: ERROR: <input>:2:1: Syntax error: mismatched input '3' expecting <EOF>\n | 3 +\n | ^"},
      {"{\"a\": 1}.\"a\"", "compile: compilation failed: ERROR: <input>:1:9: Syntax error: no viable alternative at input '.\"a\"'\n | {\"a\": 1}.\"a\"\n | ........^"},
      {"\"\\xFh\"", "compile: compilation failed: ERROR: <input>:1:1: Syntax error: token recognition error at: '\"\\xFh'\n | \"\\xFh\"\n | ^"},
      {"(true", "compile: compilation failed: ERROR: <input>:1:6: Syntax error: mismatched input '<EOF>' expecting ')'\n | (true\n | .....^"},
      {"if == 1", "compile: compilation failed: ERROR: <input>:1:1: reserved identifier: if\n | if == 1\n | ^"},
      {"9223372036854775808 > 0", "compile: compilation failed: ERROR: <input>:1:1: invalid int literal\n | 9223372036854775808 > 0\n | ^"},
      {"has(1)", "compile: compilation failed: ERROR: <input>:1:5: invalid argument to has() macro\n | has(1)\n | ....^"},
      {"[1].all(1, true)", "compile: compilation failed: ERROR: <input>:1:9: argument must be a simple name\n | [1].all(1, true)\n | ........^"},
      {"cel.bind(1, 2, true)", "compile: compilation failed: ERROR: <input>:1:10: cel.bind() variable names must be simple identifiers\n | cel.bind(1, 2, true)\n | .........^"},
      {"'é' == 1 +", "compile: compilation failed: ERROR: <input>:1:11: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | 'é' == 1 +\n | .．........^"},
  });
}

TEST(CelLanguage, RecursionLimit) {
  std::string deep(300, '(');
  deep += "true" + std::string(300, ')');
  EXPECT_EQ(Eval(deep), "compile: compilation failed: ERROR: <input>:-1:0: expression recursion limit exceeded: 250");
  std::string ok(200, '(');
  ok += "true" + std::string(200, ')');
  EXPECT_EQ(Eval(ok), "true");
  std::string sum = "0";
  for (int i = 0; i < 300; ++i) sum += " + 1";
  EXPECT_EQ(Eval(sum + " == 300"), "compile: compilation failed: ERROR: <input>:-1:0: max recursion depth exceeded");
  std::string chain = "{'a': 1}";
  for (int i = 0; i < 300; ++i) chain += ".a";
  EXPECT_EQ(Eval(chain + " == 1"), "compile: compilation failed: ERROR: <input>:-1:0: max recursion depth exceeded");
}

TEST(CelLanguage, TypeErrors) {
  RunCases({
      {"x == 1", "compile: compilation failed: ERROR: <input>:1:1: undeclared reference to 'x' (in container '')\n | x == 1\n | ^"},
      {"foo(1)", "compile: compilation failed: ERROR: <input>:1:4: undeclared reference to 'foo' (in container '')\n | foo(1)\n | ...^"},
      {"1 + 1.0 == 2.0", "compile: compilation failed: ERROR: <input>:1:3: found no matching overload for '_+_' applied to '(int, double)'\n | 1 + 1.0 == 2.0\n | ..^"},
      {"1 == 1.0", "compile: compilation failed: ERROR: <input>:1:3: found no matching overload for '_==_' applied to '(int, double)'\n | 1 == 1.0\n | ..^"},
      {"'a'.contains(1)", "compile: compilation failed: ERROR: <input>:1:13: found no matching overload for 'contains' applied to 'string.(int)'\n | 'a'.contains(1)\n | ............^"},
      {"1.f == 1", "compile: compilation failed: ERROR: <input>:1:2: type 'int' does not support field selection\n | 1.f == 1\n | .^"},
      {"1", "compile: must evaluate to bool or the unknown type, not int"},
      {"'a'", "compile: must evaluate to bool or the unknown type, not string"},
      {"[true]", "compile: must evaluate to bool or the unknown type, not list(bool)"},
      {"{'a': 1}", "compile: must evaluate to bool or the unknown type, not map(string, int)"},
      {"dyn(true)", "compile: must evaluate to bool or the unknown type, not dyn"},
      {"1.all(x, true)", "compile: compilation failed: ERROR: <input>:1:1: expression of type 'int' cannot be range of a comprehension (must be list, map, or dynamic)\n | 1.all(x, true)\n | ^"},
      {"[1].all(x, x)", "compile: compilation failed: ERROR: <input>:1:12: found no matching overload for '_&&_' applied to '(bool, int)'\n | [1].all(x, x)\n | ...........^"},
      {"true && 1", "compile: compilation failed: ERROR: <input>:1:6: found no matching overload for '_&&_' applied to '(bool, int)'\n | true && 1\n | .....^"},
      {"true ? 1 : 'a'", "compile: compilation failed: ERROR: <input>:1:6: found no matching overload for '_?_:_' applied to '(bool, int, string)'\n | true ? 1 : 'a'\n | .....^"},
      {"!1", "compile: compilation failed: ERROR: <input>:1:1: found no matching overload for '!_' applied to '(int)'\n | !1\n | ^"},
      {"-'a' == 'a'", "compile: compilation failed: ERROR: <input>:1:1: found no matching overload for '-_' applied to '(string)'\n | -'a' == 'a'\n | ^"},
      {"[1].x(y, true)", "compile: compilation failed: ERROR: <input>:1:6: undeclared reference to 'x' (in container '')\n | [1].x(y, true)\n | .....^\nERROR: <input>:1:7: undeclared reference to 'y' (in container '')\n | [1].x(y, true)\n | ......^"},
  });
}

}  // namespace
}  // namespace ksched::cel
