// Function libraries: strings (cel-go strings ext v2; cel-spec string.textproto and
// string_ext.textproto), Kubernetes lists, regex, sets, quantity (k8s.io/apiserver
// library/quantity_test.go) and semver (library/semver_test.go).
#include <gtest/gtest.h>

#include "pkg/cel/cel_test_util.h"

namespace ksched::cel {
namespace {

using testing::Case;
using testing::Eval;

void RunCases(const std::vector<Case>& cases) {
  for (const Case& c : cases) EXPECT_EQ(Eval(c.expression), c.want) << c.expression;
}

TEST(CelLibrary, Strings) {
  RunCases({
      {"size('héllo') == 5", "true"},
      {"'héllo'.size() == 5", "true"},
      {"size(b'h\\xc3\\xa9') == 3", "true"},
      {"'hello'.contains('ell')", "true"},
      {"'hello'.contains('')", "true"},
      {"'hello'.startsWith('he')", "true"},
      {"'hello'.endsWith('lo')", "true"},
      {"'hello'.endsWith('he')", "false"},
      {"'a' + 'b' == 'ab'", "true"},
      {"'hello'.matches('^h.*o$')", "true"},
      {"matches('hello', 'l+')", "true"},
      {"'hello'.matches('^l')", "false"},
      {"'A100-80GB'.matches('^A[0-9]+-[0-9]+GB$')", "true"},
      {"'tacocat'.charAt(3) == 'o'", "true"},
      {"'tacocat'.charAt(7) == ''", "true"},
      {"'tacocat'.charAt(8) == ''", "error: index out of range: 8"},
      {"'tacocat'.indexOf('a') == 1", "true"},
      {"'tacocat'.indexOf('') == 0", "true"},
      {"'tacocat'.indexOf('a', 3) == 5", "true"},
      {"'tacocat'.indexOf('x') == -1", "true"},
      {"'tacocat'.indexOf('a', -1) == 0", "error: index out of range: -1"},
      {"'ta©o©αT'.indexOf('©') == 2", "true"},
      {"'tacocat'.lastIndexOf('at') == 5", "true"},
      {"'tacocat'.lastIndexOf('') == 7", "true"},
      {"'tacocat'.lastIndexOf('a', 3) == 1", "true"},
      {"'TacoCat'.lowerAscii() == 'tacocat'", "true"},
      {"'TacoCÆt'.lowerAscii() == 'tacocÆt'", "true"},
      {"'tacoCat'.upperAscii() == 'TACOCAT'", "true"},
      {"'hello hello'.replace('he', 'we') == 'wello wello'", "true"},
      {"'hello hello'.replace('he', 'we', 1) == 'wello hello'", "true"},
      {"'ab'.replace('', '-') == '-a-b-'", "true"},
      {"'a,b,c'.split(',') == ['a', 'b', 'c']", "true"},
      {"'a,b,c'.split(',', 2) == ['a', 'b,c']", "true"},
      {"'abc'.split('') == ['a', 'b', 'c']", "true"},
      {"'a,b'.split(',', 0) == []", "true"},
      {"'tacocat'.substring(4) == 'cat'", "true"},
      {"'tacocat'.substring(0, 4) == 'taco'", "true"},
      {"'tacocat'.substring(8) == ''", "error: index out of range: 8"},
      {"'tacocat'.substring(4, 3) == ''", "error: invalid substring range. start: 4, end: 3"},
      {"'ta©o'.substring(2, 3) == '©'", "true"},
      {"'  \\ttrim\\n '.trim() == 'trim'", "true"},
      {"['x', 'y'].join() == 'xy'", "true"},
      {"['x', 'y'].join('-') == 'x-y'", "true"},
      {"[].join('-') == ''", "true"},
      {"'abc 123 def 456'.find('[0-9]+') == '123'", "true"},
      {"'abc'.find('[0-9]+') == ''", "true"},
      {"'abc 123 def 456'.findAll('[0-9]+') == ['123', '456']", "true"},
      {"'abc 123 def 456'.findAll('[0-9]+', 1) == ['123']", "true"},
      {"'a' < 'b' && 'b' > 'a'", "true"},
  });
}

TEST(CelLibrary, RegexErrorIsReported) {
  EXPECT_TRUE(Eval("'x'.matches('(')").starts_with("error: error parsing regexp: ")) << Eval("'x'.matches('(')");
}

TEST(CelLibrary, ListsAndSets) {
  RunCases({
      {"[1, 2, 3].isSorted()", "true"},
      {"[1, 3, 2].isSorted()", "false"},
      {"['a', 'b'].isSorted()", "true"},
      {"[1, 2, 3].sum() == 6", "true"},
      {"[1.5, 2.5].sum() == 4.0", "true"},
      {"[9223372036854775807, 1].sum() == 0", "error: integer overflow"},
      {"[3, 1, 2].min() == 1", "true"},
      {"[3, 1, 2].max() == 3", "true"},
      {"[].min() == 0", "error: min called on empty list"},
      {"['b', 'a'].max() == 'b'", "true"},
      {"[1, 2, 1].indexOf(1) == 0", "true"},
      {"[1, 2, 1].lastIndexOf(1) == 2", "true"},
      {"[1, 2].indexOf(5) == -1", "true"},
      {"sets.contains([1, 2, 3], [3, 1])", "true"},
      {"sets.contains([1, 2], [3])", "false"},
      {"sets.equivalent([1, 2, 2], [2, 1])", "true"},
      {"sets.intersects([1, 2], [2, 5])", "true"},
      {"sets.intersects([1], [])", "false"},
      {"[1, 2].size() == 2 && size({'a': 1}) == 1", "true"},
  });
}

TEST(CelLibrary, Quantity) {
  // Cases of k8s.io/apiserver library/quantity_test.go and the library's docs.
  RunCases({
      {"quantity('1Gi') == quantity('1024Mi')", "true"},
      {"quantity('200M').compareTo(quantity('0.2G')) == 0", "true"},
      {"quantity('50M').compareTo(quantity('50Mi')) == -1", "true"},
      {"quantity('50Mi').compareTo(quantity('50M')) == 1", "true"},
      {"quantity('150Mi').isGreaterThan(quantity('100Mi'))", "true"},
      {"quantity('50Mi').isGreaterThan(quantity('100Mi'))", "false"},
      {"quantity('50M').isLessThan(quantity('100M'))", "true"},
      {"quantity('50000000G').isInteger()", "true"},
      {"quantity('50k').isInteger()", "true"},
      {"quantity('9999999999999999999999999999999999999G').isInteger()", "false"},
      {"quantity('9999999999999999999999999999999999999G').asInteger() == 0", "error: cannot convert value to integer"},
      {"quantity('50k').asInteger() == 50000", "true"},
      {"quantity('1.5').isInteger()", "false"},
      {"quantity('50k').sub(20000).asApproximateFloat() == 30000.0", "true"},
      {"quantity('50k').add(quantity('20k')) == quantity('70k')", "true"},
      {"quantity('50k').add(20) == quantity('50020')", "true"},
      {"quantity('50k').sub(quantity('20k')) == quantity('30k')", "true"},
      {"quantity('50k').add(20).sub(quantity('100k')).sub(-50000) == quantity('20')", "true"},
      {"quantity('2Gi').mul(2) == quantity('4Gi')", "true"},
      {"quantity('-5').sign() == -1", "true"},
      {"sign(quantity('0')) == 0", "true"},
      {"isQuantity('1.3G') && isQuantity('1.3Gi') && isQuantity('10000k')", "true"},
      {"isQuantity('1,3G') || isQuantity('200K') || isQuantity('Three')", "false"},
      {"quantity('200K') == quantity('1')", "error: unable to parse quantity's suffix"},
      {"quantity('Three') == quantity('1')",
       "error: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
      {"quantity('1') < quantity('2')", "compile: compilation failed: ERROR: <input>:1:15: found no matching overload for '_<_' applied to '(kubernetes.Quantity, kubernetes.Quantity)'\n | quantity('1') < quantity('2')\n | ..............^"},
  });
}

TEST(CelLibrary, Semver) {
  // k8s.io/apiserver library/semver_test.go and semverlib.go's docs; error messages
  // are blang/semver v4 Parse's.
  RunCases({
      {"semver('1.2.3').major() == 1 && semver('1.2.3').minor() == 2 && semver('1.2.3').patch() == 3", "true"},
      {"semver('1.2.3').compareTo(semver('1.2.3')) == 0", "true"},
      {"semver('1.2.3').compareTo(semver('2.0.0')) == -1", "true"},
      {"semver('1.2.3').compareTo(semver('0.1.2')) == 1", "true"},
      {"semver('1.0.0').isGreaterThan(semver('1.0.0-rc.1'))", "true"},
      {"semver('1.0.0-alpha').isLessThan(semver('1.0.0-alpha.1'))", "true"},
      {"semver('1.0.0-alpha.beta').isLessThan(semver('1.0.0-beta'))", "true"},
      {"semver('1.0.0-2').isLessThan(semver('1.0.0-10'))", "true"},
      {"semver('1.0.0+build1') == semver('1.0.0+build2')", "true"},
      {"isSemver('1.0.0') && isSemver('0.1.0-alpha.1')", "true"},
      {"isSemver('hello') || isSemver('v1.0') || isSemver('1.0') || isSemver('01.0.0')", "false"},
      {"isSemver('v1.0', true) && isSemver('1.0', true) && isSemver('01.01.01', true)", "true"},
      {"semver('v1.0.0', true) == semver('1.0.0')", "true"},
      {"semver('1.0', true) == semver('1.0.0')", "true"},
      {"semver('01.01.01', true) == semver('1.1.1')", "true"},
      {"semver('1.0-rc', true) == semver('1.0.0')", "error: short version cannot contain PreRelease/Build meta data"},
      {"semver('') == semver('1.0.0')", "error: Version string empty"},
      {"semver('1.0') == semver('1.0.0')", "error: No Major.Minor.Patch elements found"},
      {"semver('a.0.0') == semver('1.0.0')", "error: Invalid character(s) found in major number \"a\""},
      {"semver('01.0.0') == semver('1.0.0')", "error: Major number must not contain leading zeroes \"01\""},
      {"semver('1.x.0') == semver('1.0.0')", "error: Invalid character(s) found in minor number \"x\""},
      {"semver('1.0.0-') == semver('1.0.0')", "error: Prerelease is empty"},
      {"semver('1.0.0-01') == semver('1.0.0')", "error: Numeric PreRelease version must not contain leading zeroes \"01\""},
      {"semver('1.0.0+') == semver('1.0.0')", "error: Build meta data is empty"},
      {"semver('1.0.0-a_b') == semver('1.0.0')", "error: Invalid character(s) found in prerelease \"a_b\""},
      {"semver('1.0.x') == semver('1.0.0')", "error: Invalid character(s) found in patch number \"x\""},
      {"semver('1.0.0') < semver('2.0.0')", "compile: compilation failed: ERROR: <input>:1:17: found no matching overload for '_<_' applied to '(kubernetes.Semver, kubernetes.Semver)'\n | semver('1.0.0') < semver('2.0.0')\n | ................^"},
  });
}

}  // namespace
}  // namespace ksched::cel
