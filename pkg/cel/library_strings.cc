// String functions: CEL's contains/startsWith/endsWith/matches, cel-go's strings
// extension at version 2 (ext/strings.go; base.go enables StringsVersion(2)), the
// Kubernetes regex library (find, findAll) and lists library (isSorted, sum, min,
// max, indexOf, lastIndexOf), and cel-go's sets extension (ext/sets.go).
//
// Regular expressions: cel-go uses RE2; we use std::regex (ECMAScript), which agrees
// on the common subset (classes, anchors, groups, alternation, repetition) but lacks
// RE2's inline flags ((?i)), \z and named groups (?P<n>), and accepts back
// references and look-ahead that RE2 rejects.
#include <algorithm>
#include <memory>
#include <regex>
#include <string>
#include <unordered_map>
#include <vector>

#include "pkg/cel/lexer.h"
#include "pkg/cel/library.h"
#include "pkg/util/mutex.h"
#include "pkg/util/thread_annotations.h"

namespace ksched::cel {
namespace {

std::u32string Runes(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    char32_t cp;
    size_t len;
    if (c < 0x80) { cp = c; len = 1; }
    else if ((c >> 5) == 6) { cp = c & 0x1F; len = 2; }
    else if ((c >> 4) == 14) { cp = c & 0x0F; len = 3; }
    else { cp = c & 0x07; len = 4; }
    for (size_t k = 1; k < len && i + k < s.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    out.push_back(cp);
    i += len;
  }
  return out;
}

std::string Utf8(std::u32string_view r) {
  std::string out;
  for (char32_t cp : r) AppendUtf8(out, static_cast<uint32_t>(cp));
  return out;
}

Value OutOfRange(int64_t i) { return Value::Error("index out of range: " + std::to_string(i)); }

Value Contains(EvalCtx&, const Value* a) { return Value::Bool(a[0].AsString().find(a[1].AsString()) != std::string_view::npos); }
Value StartsWith(EvalCtx&, const Value* a) { return Value::Bool(a[0].AsString().starts_with(a[1].AsString())); }
Value EndsWith(EvalCtx&, const Value* a) { return Value::Bool(a[0].AsString().ends_with(a[1].AsString())); }

// What a pattern costs std::regex before it matches anything.
struct RegexShape {
  int nesting = 0;  // deepest group
  double size = 0;  // atoms after expanding counted repetition: x{1000} is 1000 states
};

// Go's regexp/syntax limit on nesting (maxHeight), checked before std::regex, whose
// compiler recurses once per level and would exhaust the stack first.
constexpr int kMaxRegexNesting = 1000;
// std::regex copies an atom for each count of x{n}, so a ten-character pattern such as
// (a{1000}){99} is a 10^5-state automaton (tens of MB, seconds to compile, and 10^5
// steps per input character). RE2 and Go bound the compiled program too ("expression
// too large"); DRA selectors' patterns are far below this.
constexpr double kMaxRegexSize = 10000;
// What the compiled-pattern cache may hold, in RegexShape::size.
constexpr double kRegexCacheBudget = 100000;

RegexShape ShapeOf(std::string_view pattern) {
  RegexShape shape;
  std::vector<double> groups{0};  // sizes of the open groups, the whole pattern first
  double last = 0;                // size of the atom a quantifier would repeat
  auto atom = [&](double size) {
    groups.back() += size;
    last = size;
  };
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c == '\\') {
      ++i;
      atom(1);
    } else if (c == '[') {  // a class is one atom; ']' first in it is a literal
      size_t j = i + 1;
      if (j < pattern.size() && pattern[j] == '^') ++j;
      if (j < pattern.size() && pattern[j] == ']') ++j;
      while (j < pattern.size() && pattern[j] != ']') j += pattern[j] == '\\' ? 2 : 1;
      i = j;
      atom(1);
    } else if (c == '(') {
      groups.push_back(0);
      shape.nesting = std::max(shape.nesting, static_cast<int>(groups.size()) - 1);
      last = 0;
    } else if (c == ')' && groups.size() > 1) {
      double g = groups.back();
      groups.pop_back();
      atom(g + 1);
    } else if (c == '{') {  // {n}, {n,} or {n,m}: the last atom n (or m) times
      size_t j = i + 1;
      double n = 0, m = -1;
      while (j < pattern.size() && pattern[j] >= '0' && pattern[j] <= '9') n = std::min(n * 10 + (pattern[j++] - '0'), 1e9);
      bool digits = j > i + 1;
      if (j < pattern.size() && pattern[j] == ',') {
        m = 0;
        for (++j; j < pattern.size() && pattern[j] >= '0' && pattern[j] <= '9';) m = std::min(m * 10 + (pattern[j++] - '0'), 1e9);
      }
      if (digits && j < pattern.size() && pattern[j] == '}') {
        double times = std::max({n, m, 1.0});
        groups.back() += last * (times - 1);
        last *= times;
        i = j;
      } else {
        atom(1);
      }
    } else if (c == '|') {
      groups.back() += 1;
      last = 0;
    } else {
      atom(1);  // a literal, '.', an anchor or a quantifier
    }
  }
  for (double g : groups) shape.size += g;
  return shape;
}

// Compiled patterns, shared by all evaluations: selectors use a handful of constant
// patterns, so the cache stays small; it is cleared when it grows past a bound.
struct RegexCache {
  Mutex mu;
  std::unordered_map<std::string, std::shared_ptr<const std::regex>> compiled GUARDED_BY(mu);
  double size GUARDED_BY(mu) = 0;  // sum of the cached patterns' RegexShape::size
};

RegexCache& Regexes() {
  static RegexCache cache;
  return cache;
}

StatusOr<std::shared_ptr<const std::regex>> CompileRegex(std::string_view pattern) {
  RegexCache& cache = Regexes();
  std::string key(pattern);
  {
    MutexLock lock(cache.mu);
    auto it = cache.compiled.find(key);
    if (it != cache.compiled.end()) return it->second;
  }
  const RegexShape shape = ShapeOf(pattern);
  if (shape.nesting > kMaxRegexNesting) {
    return InvalidArgument("error parsing regexp: expression nests too deeply: `" + key + "`");
  }
  if (shape.size > kMaxRegexSize) return InvalidArgument("error parsing regexp: expression too large: `" + key + "`");
  std::shared_ptr<const std::regex> re;
  try {
    // __polynomial (libstdc++) matches breadth-first, in time linear in the input for a
    // given pattern and without recursing per input character, as RE2 does: the
    // default depth-first matcher backtracks exponentially on ^(a+)+$ and overflows
    // the stack on a long input to (a|b)*. It rejects back references, as RE2 does.
    re = std::make_shared<const std::regex>(key, std::regex::ECMAScript | std::regex_constants::__polynomial);
  } catch (const std::regex_error& e) {
    return InvalidArgument(std::string("error parsing regexp: ") + e.what());
  }
  MutexLock lock(cache.mu);
  if (cache.compiled.size() >= 256 || cache.size + shape.size > kRegexCacheBudget) {
    cache.compiled.clear();
    cache.size = 0;
  }
  if (cache.compiled.emplace(std::move(key), re).second) cache.size += shape.size;
  return re;
}

// std::regex reports matching failures (resource limits) by throwing.
Value RegexError(const std::regex_error& e) { return Value::Error(std::string("regex match failed: ") + e.what()); }

Value Matches(EvalCtx&, const Value* a) {
  auto re = CompileRegex(a[1].AsString());
  if (!re.ok()) return Value::Error(re.status().message());
  std::string_view s = a[0].AsString();
  try {
    return Value::Bool(std::regex_search(s.begin(), s.end(), **re));
  } catch (const std::regex_error& e) {
    return RegexError(e);
  }
}

Value Find(EvalCtx&, const Value* a) {
  auto re = CompileRegex(a[1].AsString());
  if (!re.ok()) return Value::Error(re.status().message());
  std::string_view s = a[0].AsString();
  std::match_results<std::string_view::const_iterator> m;
  try {
    if (!std::regex_search(s.begin(), s.end(), m, **re)) return Value::StringView("");
  } catch (const std::regex_error& e) {
    return RegexError(e);
  }
  return Value::String(m.str(0));
}

Value FindAllN(const Value& str, const Value& pattern, int64_t n) {
  auto re = CompileRegex(pattern.AsString());
  if (!re.ok()) return Value::Error(re.status().message());
  std::vector<Value> out;
  std::string_view s = str.AsString();
  using It = std::regex_iterator<std::string_view::const_iterator>;
  try {
    for (It it(s.begin(), s.end(), **re), end; it != end && (n < 0 || static_cast<int64_t>(out.size()) < n); ++it) {
      out.push_back(Value::String(it->str(0)));
    }
  } catch (const std::regex_error& e) {
    return RegexError(e);
  }
  return Value::List(std::move(out));
}
Value FindAll(EvalCtx&, const Value* a) { return FindAllN(a[0], a[1], -1); }
Value FindAllLimit(EvalCtx&, const Value* a) { return FindAllN(a[0], a[1], a[2].AsInt()); }

Value CharAt(EvalCtx&, const Value* a) {
  std::u32string r = Runes(a[0].AsString());
  int64_t i = a[1].AsInt();
  if (i < 0 || i > static_cast<int64_t>(r.size())) return OutOfRange(i);
  if (i == static_cast<int64_t>(r.size())) return Value::StringView("");
  return Value::String(Utf8(std::u32string_view(r).substr(static_cast<size_t>(i), 1)));
}

Value IndexOfImpl(std::string_view str, std::string_view sub, int64_t off) {
  if (off < 0) return OutOfRange(off);
  std::u32string r = Runes(str), s = Runes(sub);
  int64_t n = static_cast<int64_t>(r.size());
  if (s.empty()) return Value::Int(std::min(off, n));
  if (off >= n) return Value::Int(-1);
  size_t pos = r.find(s, static_cast<size_t>(off));
  return Value::Int(pos == std::u32string::npos ? -1 : static_cast<int64_t>(pos));
}
Value IndexOf(EvalCtx&, const Value* a) { return IndexOfImpl(a[0].AsString(), a[1].AsString(), 0); }
Value IndexOfOffset(EvalCtx&, const Value* a) { return IndexOfImpl(a[0].AsString(), a[1].AsString(), a[2].AsInt()); }

Value LastIndexOfImpl(std::string_view str, std::string_view sub, int64_t off) {
  if (off < 0) return OutOfRange(off);
  std::u32string r = Runes(str), s = Runes(sub);
  int64_t n = static_cast<int64_t>(r.size());
  if (s.empty()) return Value::Int(std::min(off, n));
  if (off >= n) return Value::Int(-1);
  int64_t start = std::min(off, n - static_cast<int64_t>(s.size()));
  if (start < 0) return Value::Int(-1);
  size_t pos = r.rfind(s, static_cast<size_t>(start));
  return Value::Int(pos == std::u32string::npos ? -1 : static_cast<int64_t>(pos));
}
Value LastIndexOf(EvalCtx&, const Value* a) {
  std::string_view str = a[0].AsString(), sub = a[1].AsString();
  int64_t n = static_cast<int64_t>(Runes(str).size());
  if (sub.empty()) return Value::Int(n);
  if (str.size() < sub.size()) return Value::Int(-1);
  return LastIndexOfImpl(str, sub, n - 1);
}
Value LastIndexOfOffset(EvalCtx&, const Value* a) { return LastIndexOfImpl(a[0].AsString(), a[1].AsString(), a[2].AsInt()); }

Value LowerAscii(EvalCtx&, const Value* a) {
  std::string s(a[0].AsString());
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return Value::String(std::move(s));
}
Value UpperAscii(EvalCtx&, const Value* a) {
  std::string s(a[0].AsString());
  for (char& c : s) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return Value::String(std::move(s));
}

// Go's strings.Replace(s, old, new, n): n < 0 replaces all; an empty `old` matches
// before every code point and at the end.
// The number of replacements ReplaceN makes.
uint64_t CountReplacements(std::string_view s, std::string_view from, int64_t n) {
  uint64_t hits = 0;
  if (from.empty()) {
    hits = 1;  // before every code point, and at the end
    for (char c : s) hits += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  } else {
    for (size_t pos = s.find(from); pos != std::string_view::npos; pos = s.find(from, pos + from.size())) ++hits;
  }
  return n < 0 ? hits : std::min(hits, static_cast<uint64_t>(n));
}

std::string ReplaceN(std::string_view s, std::string_view from, std::string_view to, int64_t n) {
  std::string out;
  if (n == 0) return std::string(s);
  int64_t done = 0;
  if (from.empty()) {
    std::u32string r = Runes(s);
    for (size_t i = 0; i <= r.size(); ++i) {
      if (n < 0 || done < n) {
        out += to;
        ++done;
      }
      if (i < r.size()) out += Utf8(std::u32string_view(r).substr(i, 1));
    }
    return out;
  }
  size_t pos = 0;
  while (n < 0 || done < n) {
    size_t hit = s.find(from, pos);
    if (hit == std::string_view::npos) break;
    out += s.substr(pos, hit - pos);
    out += to;
    pos = hit + from.size();
    ++done;
  }
  out += s.substr(pos);
  return out;
}
// The result's length is |s| + hits * (|to| - |from|), up to |s| * |to| for an empty
// `from`: checked against the budget before it is built (EvalCtx::Affordable).
Value ReplaceChecked(EvalCtx& ctx, std::string_view s, std::string_view from, std::string_view to, int64_t n) {
  double size = static_cast<double>(s.size()) +
                static_cast<double>(CountReplacements(s, from, n)) * static_cast<double>(to.size());
  if (!ctx.Affordable(CeilCost(size * kStringTraversalCostFactor))) return CostLimitExceeded();
  return Value::String(ReplaceN(s, from, to, n));
}
Value Replace(EvalCtx& ctx, const Value* a) { return ReplaceChecked(ctx, a[0].AsString(), a[1].AsString(), a[2].AsString(), -1); }
Value ReplaceLimit(EvalCtx& ctx, const Value* a) {
  return ReplaceChecked(ctx, a[0].AsString(), a[1].AsString(), a[2].AsString(), a[3].AsInt());
}

// Go's strings.SplitN: n == 0 gives no parts, n < 0 all; an empty separator splits
// into code points.
Value SplitN(EvalCtx& ctx, std::string_view s, std::string_view sep, int64_t n) {
  std::vector<Value> out;
  if (n == 0) return Value::List({});
  // One element per code point (empty separator) or per separator: a list of millions
  // of strings costs 0.2 per code point but far more memory; bound it by the budget.
  uint64_t parts = CountReplacements(s, sep, n < 0 ? -1 : n - 1) + (sep.empty() ? 0 : 1);
  if (!ctx.Affordable(parts)) return CostLimitExceeded();
  if (sep.empty()) {
    std::u32string r = Runes(s);
    for (size_t i = 0; i < r.size(); ++i) {
      if (n > 0 && static_cast<int64_t>(out.size()) == n - 1) {
        out.push_back(Value::String(Utf8(std::u32string_view(r).substr(i))));
        break;
      }
      out.push_back(Value::String(Utf8(std::u32string_view(r).substr(i, 1))));
    }
    return Value::List(std::move(out));
  }
  size_t pos = 0;
  while (n < 0 || static_cast<int64_t>(out.size()) < n - 1) {
    size_t hit = s.find(sep, pos);
    if (hit == std::string_view::npos) break;
    out.push_back(Value::String(std::string(s.substr(pos, hit - pos))));
    pos = hit + sep.size();
  }
  out.push_back(Value::String(std::string(s.substr(pos))));
  return Value::List(std::move(out));
}
Value Split(EvalCtx& ctx, const Value* a) { return SplitN(ctx, a[0].AsString(), a[1].AsString(), -1); }
Value SplitLimit(EvalCtx& ctx, const Value* a) { return SplitN(ctx, a[0].AsString(), a[1].AsString(), a[2].AsInt()); }

Value Substring(EvalCtx&, const Value* a) {
  std::u32string r = Runes(a[0].AsString());
  int64_t start = a[1].AsInt();
  if (start < 0 || start > static_cast<int64_t>(r.size())) return OutOfRange(start);
  return Value::String(Utf8(std::u32string_view(r).substr(static_cast<size_t>(start))));
}
Value SubstringRange(EvalCtx&, const Value* a) {
  std::u32string r = Runes(a[0].AsString());
  int64_t start = a[1].AsInt(), end = a[2].AsInt(), l = static_cast<int64_t>(r.size());
  if (start > end) {
    return Value::Error("invalid substring range. start: " + std::to_string(start) + ", end: " + std::to_string(end));
  }
  if (start < 0 || start > l) return OutOfRange(start);
  if (end < 0 || end > l) return OutOfRange(end);
  return Value::String(Utf8(std::u32string_view(r).substr(static_cast<size_t>(start), static_cast<size_t>(end - start))));
}

// Go's strings.TrimSpace: Unicode white space at both ends.
bool IsSpace(char32_t c) {
  return c == ' ' || (c >= 0x09 && c <= 0x0D) || c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) ||
         c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}
Value Trim(EvalCtx&, const Value* a) {
  std::u32string r = Runes(a[0].AsString());
  size_t b = 0, e = r.size();
  while (b < e && IsSpace(r[b])) ++b;
  while (e > b && IsSpace(r[e - 1])) --e;
  return Value::String(Utf8(std::u32string_view(r).substr(b, e - b)));
}

Value JoinImpl(const Value& list, std::string_view sep) {
  std::string out;
  bool first = true;
  for (const Value& e : list.AsList()) {
    if (e.kind() != ValueKind::kString) return Value::Error("join: invalid input: " + std::string(TypeName(e)));
    if (!first) out += sep;
    out += e.AsString();
    first = false;
  }
  return Value::String(std::move(out));
}
Value Join(EvalCtx&, const Value* a) { return JoinImpl(a[0], ""); }
Value JoinSep(EvalCtx&, const Value* a) { return JoinImpl(a[0], a[1].AsString()); }

// Kubernetes lists library (library/lists.go).
Value IsSorted(EvalCtx&, const Value* a) {
  const auto& l = a[0].AsList();
  for (size_t i = 1; i < l.size(); ++i) {
    Value c = Compare(l[i - 1], l[i]);
    if (c.IsError()) return c;
    if (c.AsInt() > 0) return Value::Bool(false);
  }
  return Value::Bool(true);
}
Value Sum(EvalCtx& ctx, const Value* a) {
  const auto& l = a[0].AsList();
  if (l.empty()) return Value::Int(0);
  Value acc = l[0];
  for (size_t i = 1; i < l.size(); ++i) {
    const Value args[2] = {acc, l[i]};
    if (acc.kind() != l[i].kind()) return NoSuchOverload();
    for (const Overload* o : FindOverloads("_+_")) {
      if (MatchesValue(o->params[0], acc) && MatchesValue(o->params[1], l[i])) {
        acc = o->fn(ctx, args);
        break;
      }
    }
    if (acc.IsError()) return acc;
  }
  return acc;
}
template <int kPrefer>
Value MinMax(EvalCtx&, const Value* a) {
  const auto& l = a[0].AsList();
  if (l.empty()) return Value::Error(std::string(kPrefer > 0 ? "min" : "max") + " called on empty list");
  Value best = l[0];
  for (size_t i = 1; i < l.size(); ++i) {
    Value c = Compare(best, l[i]);
    if (c.IsError()) return c;
    if (c.AsInt() == kPrefer) best = l[i];
  }
  return best;
}
Value ListIndexOf(EvalCtx& ctx, const Value* a) {
  const auto& l = a[0].AsList();
  for (size_t i = 0; i < l.size(); ++i) {
    if (EqualValues(ctx, l[i], a[1])) return Value::Int(static_cast<int64_t>(i));
  }
  return Value::Int(-1);
}
Value ListLastIndexOf(EvalCtx& ctx, const Value* a) {
  const auto& l = a[0].AsList();
  for (size_t i = l.size(); i-- > 0;) {
    if (EqualValues(ctx, l[i], a[1])) return Value::Int(static_cast<int64_t>(i));
  }
  return Value::Int(-1);
}

// cel-go ext/sets.go.
bool ListContains(EvalCtx& ctx, const Value& list, const Value& v) {
  for (const Value& e : list.AsList()) {
    if (EqualValues(ctx, e, v)) return true;
  }
  return false;
}
Value SetsContains(EvalCtx& ctx, const Value* a) {
  for (const Value& e : a[1].AsList()) {
    if (!ListContains(ctx, a[0], e)) return Value::Bool(false);
  }
  return Value::Bool(true);
}
Value SetsEquivalent(EvalCtx& ctx, const Value* a) {
  Value fwd = SetsContains(ctx, a);
  if (!fwd.AsBool()) return fwd;
  const Value rev[2] = {a[1], a[0]};
  return SetsContains(ctx, rev);
}
Value SetsIntersects(EvalCtx& ctx, const Value* a) {
  for (const Value& e : a[1].AsList()) {
    if (ListContains(ctx, a[0], e)) return Value::Bool(true);
  }
  return Value::Bool(false);
}

// Costs: cel-go runtimecost.go for the core functions, Kubernetes library/cost.go
// for the others.
double Sz(EvalCtx& ctx, const Value& v) { return static_cast<double>(CostSize(ctx, v)); }
uint64_t TraverseFirst(EvalCtx& ctx, const Value* a) { return CeilCost(Sz(ctx, a[0]) * kStringTraversalCostFactor); }
uint64_t TraverseFirstTwice(EvalCtx& ctx, const Value* a) {
  return CeilCost(Sz(ctx, a[0]) * 2 * kStringTraversalCostFactor);
}
// Kubernetes charges join by its result's size; computed here from the arguments (an
// element that is not a string makes the result an error, of size 1).
uint64_t JoinCost(EvalCtx& ctx, const Value* a, bool with_separator) {
  const auto& list = a[0].AsList();
  double size = 0;
  for (const Value& e : list) {
    if (e.kind() != ValueKind::kString) return CeilCost(2 * kStringTraversalCostFactor);
    size += Sz(ctx, e);
  }
  if (with_separator && list.size() > 1) size += static_cast<double>(list.size() - 1) * Sz(ctx, a[1]);
  return CeilCost(size * 2 * kStringTraversalCostFactor);
}
uint64_t JoinNoSepCost(EvalCtx& ctx, const Value* a) { return JoinCost(ctx, a, false); }
uint64_t JoinSepCost(EvalCtx& ctx, const Value* a) { return JoinCost(ctx, a, true); }
// cel-go ext/sets.go trackSetsCost: 1 + |a| * |b| * factor.
template <int kFactor>
uint64_t SetsCost(EvalCtx&, const Value* a) {
  return 1 + static_cast<uint64_t>(a[0].AsList().size()) * a[1].AsList().size() * kFactor;
}
uint64_t ContainsCost(EvalCtx& ctx, const Value* a) {
  return CeilCost(Sz(ctx, a[0]) * kStringTraversalCostFactor) * CeilCost(Sz(ctx, a[1]) * kStringTraversalCostFactor);
}
// Kubernetes charges by the pattern's length; a counted repetition makes the automaton
// (and the work per input character) larger than that, so the expanded size is used
// when it is the larger (the same cost for patterns without {n}).
uint64_t RegexCost(EvalCtx& ctx, const Value* a) {
  double pattern_size = std::max(Sz(ctx, a[1]), ShapeOf(a[1].AsString()).size);
  return CeilCost((1.0 + Sz(ctx, a[0])) * kStringTraversalCostFactor) * CeilCost(pattern_size * kRegexStringLengthCostFactor);
}
uint64_t ListTraversal(EvalCtx& ctx, const Value* a) { return TraversalCost(ctx, a[0]); }

}  // namespace

void AddStringFunctions(std::vector<Overload>& out) {
  constexpr bool G = false, M = true;
  out.push_back(Sig("contains", M, {"string", "string"}, "bool", Contains, ContainsCost));
  out.push_back(Sig("startsWith", M, {"string", "string"}, "bool", StartsWith, TraverseFirst));
  out.push_back(Sig("endsWith", M, {"string", "string"}, "bool", EndsWith, TraverseFirst));
  out.push_back(Sig("matches", G, {"string", "string"}, "bool", Matches, RegexCost));
  out.push_back(Sig("matches", M, {"string", "string"}, "bool", Matches, RegexCost));
  out.push_back(Sig("find", M, {"string", "string"}, "string", Find, RegexCost));
  out.push_back(Sig("findAll", M, {"string", "string"}, "list(string)", FindAll, RegexCost));
  out.push_back(Sig("findAll", M, {"string", "string", "int"}, "list(string)", FindAllLimit, RegexCost));
  out.push_back(Sig("charAt", M, {"string", "int"}, "string", CharAt));
  out.push_back(Sig("indexOf", M, {"string", "string"}, "int", IndexOf, TraverseFirst));
  out.push_back(Sig("indexOf", M, {"string", "string", "int"}, "int", IndexOfOffset, TraverseFirst));
  out.push_back(Sig("lastIndexOf", M, {"string", "string"}, "int", LastIndexOf, TraverseFirst));
  out.push_back(Sig("lastIndexOf", M, {"string", "string", "int"}, "int", LastIndexOfOffset, TraverseFirst));
  out.push_back(Sig("lowerAscii", M, {"string"}, "string", LowerAscii, TraverseFirst));
  out.push_back(Sig("upperAscii", M, {"string"}, "string", UpperAscii, TraverseFirst));
  out.push_back(Sig("replace", M, {"string", "string", "string"}, "string", Replace, TraverseFirstTwice));
  out.push_back(Sig("replace", M, {"string", "string", "string", "int"}, "string", ReplaceLimit, TraverseFirstTwice));
  out.push_back(Sig("split", M, {"string", "string"}, "list(string)", Split, TraverseFirstTwice));
  out.push_back(Sig("split", M, {"string", "string", "int"}, "list(string)", SplitLimit, TraverseFirstTwice));
  out.push_back(Sig("substring", M, {"string", "int"}, "string", Substring, TraverseFirst));
  out.push_back(Sig("substring", M, {"string", "int", "int"}, "string", SubstringRange, TraverseFirst));
  out.push_back(Sig("trim", M, {"string"}, "string", Trim, TraverseFirst));
  out.push_back(Sig("join", M, {"list(string)"}, "string", Join, JoinNoSepCost));
  out.push_back(Sig("join", M, {"list(string)", "string"}, "string", JoinSep, JoinSepCost));
  out.push_back(Sig("isSorted", M, {"list(A)"}, "bool", IsSorted, ListTraversal));
  out.push_back(Sig("sum", M, {"list(int)"}, "int", Sum, ListTraversal));
  out.push_back(Sig("sum", M, {"list(uint)"}, "uint", Sum, ListTraversal));
  out.push_back(Sig("sum", M, {"list(double)"}, "double", Sum, ListTraversal));
  out.push_back(Sig("min", M, {"list(A)"}, "A", MinMax<1>, ListTraversal));
  out.push_back(Sig("max", M, {"list(A)"}, "A", MinMax<-1>, ListTraversal));
  out.push_back(Sig("indexOf", M, {"list(A)", "A"}, "int", ListIndexOf, ListTraversal));
  out.push_back(Sig("lastIndexOf", M, {"list(A)", "A"}, "int", ListLastIndexOf, ListTraversal));
  out.push_back(Sig("sets.contains", G, {"list(A)", "list(A)"}, "bool", SetsContains, SetsCost<1>));
  out.push_back(Sig("sets.equivalent", G, {"list(A)", "list(A)"}, "bool", SetsEquivalent, SetsCost<2>));
  out.push_back(Sig("sets.intersects", G, {"list(A)", "list(A)"}, "bool", SetsIntersects, SetsCost<1>));
}

}  // namespace ksched::cel
