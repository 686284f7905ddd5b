// A recursive-descent parser for the CEL grammar (cel-spec doc/langdef.md; cel-go
// parser/gen/CEL.g4 and parser/parser.go for the tree it builds and its messages).
#include "pkg/cel/parser.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <utility>

#include "pkg/cel/lexer.h"

namespace ksched::cel {
namespace {

// What ANTLR lists as expected where an expression must start.
constexpr std::string_view kExpectPrimary =
    "{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, "
    "IDENTIFIER}";

bool IsReserved(std::string_view id) {
  static constexpr std::string_view kReserved[] = {
      "as", "break", "const", "continue", "else", "for", "function", "if", "import",
      "let", "loop", "package", "namespace", "return", "var", "void", "while"};
  return std::find(std::begin(kReserved), std::end(kReserved), id) != std::end(kReserved);
}

struct ParseError {};

class Parser {
 public:
  Parser(std::string_view src, std::vector<Issue>& issues) : lex_(src), issues_(issues) {}

  ExprPtr ParseAll() {
    try {
      Advance();
      ExprPtr e = ParseExpr();
      if (tok_.kind != Tok::kEof) SyntaxError(tok_, "mismatched input " + TokenDisplay(tok_) + " expecting <EOF>");
      return e;
    } catch (const ParseError&) {
      return nullptr;
    }
  }

 private:
  void Advance() {
    tok_ = lex_.Next();
    if (tok_.kind == Tok::kError) {
      Fail(tok_.offset, "Syntax error: token recognition error at: '" + std::string(tok_.text) + "'");
    }
  }

  [[noreturn]] void Fail(int32_t offset, std::string message) {
    issues_.push_back(Issue{offset, std::move(message)});
    throw ParseError{};
  }
  [[noreturn]] void SyntaxError(const Token& at, std::string message) { Fail(at.offset, "Syntax error: " + message); }

  void Expect(Tok kind, std::string_view display) {
    if (tok_.kind != kind) SyntaxError(tok_, "mismatched input " + TokenDisplay(tok_) + " expecting " + std::string(display));
    Advance();
  }

  struct Depth {
    explicit Depth(Parser& p) : p_(p) {
      if (++p_.depth_ > kMaxRecursionDepth) {
        p_.Fail(-1, "expression recursion limit exceeded: " + std::to_string(kMaxRecursionDepth));
      }
    }
    ~Depth() { --p_.depth_; }
    Parser& p_;
  };

  // Operator and member chains build trees as deep as they are long; cel-go limits
  // them like nesting ("max recursion depth exceeded").
  void Chain(int& length) {
    if (++length + depth_ > kMaxRecursionDepth) Fail(-1, "max recursion depth exceeded");
  }

  static ExprPtr NewExpr(ExprKind kind, int32_t offset) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->offset = offset;
    return e;
  }
  static ExprPtr Call(int32_t offset, std::string fn, std::vector<ExprPtr> args, ExprPtr target = nullptr) {
    ExprPtr e = NewExpr(ExprKind::kCall, offset);
    e->name = std::move(fn);
    e->args = std::move(args);
    e->target = std::move(target);
    return e;
  }
  static ExprPtr Binary(int32_t offset, std::string fn, ExprPtr a, ExprPtr b) {
    std::vector<ExprPtr> args;
    args.push_back(std::move(a));
    args.push_back(std::move(b));
    return Call(offset, std::move(fn), std::move(args));
  }

  ExprPtr ParseExpr() {
    Depth d(*this);
    ExprPtr cond = ParseOr();
    if (tok_.kind != Tok::kQuestion) return cond;
    int32_t off = tok_.offset;
    Advance();
    ExprPtr t = ParseOr();
    Expect(Tok::kColon, "':'");
    ExprPtr f = ParseExpr();
    std::vector<ExprPtr> args;
    args.push_back(std::move(cond));
    args.push_back(std::move(t));
    args.push_back(std::move(f));
    return Call(off, "_?_:_", std::move(args));
  }

  ExprPtr ParseOr() {
    ExprPtr e = ParseAnd();
    int chain = 0;
    while (tok_.kind == Tok::kOr) {
      int32_t off = tok_.offset;
      Advance();
      Chain(chain);
      e = Binary(off, "_||_", std::move(e), ParseAnd());
    }
    return e;
  }

  ExprPtr ParseAnd() {
    ExprPtr e = ParseRelation();
    int chain = 0;
    while (tok_.kind == Tok::kAnd) {
      int32_t off = tok_.offset;
      Advance();
      Chain(chain);
      e = Binary(off, "_&&_", std::move(e), ParseRelation());
    }
    return e;
  }

  ExprPtr ParseRelation() {
    ExprPtr e = ParseAdd();
    int chain = 0;
    while (true) {
      std::string fn;
      switch (tok_.kind) {
        case Tok::kLt: fn = "_<_"; break;
        case Tok::kLe: fn = "_<=_"; break;
        case Tok::kGt: fn = "_>_"; break;
        case Tok::kGe: fn = "_>=_"; break;
        case Tok::kEq: fn = "_==_"; break;
        case Tok::kNe: fn = "_!=_"; break;
        case Tok::kIn: fn = "@in"; break;
        default: return e;
      }
      int32_t off = tok_.offset;
      Advance();
      Chain(chain);
      e = Binary(off, std::move(fn), std::move(e), ParseAdd());
    }
  }

  ExprPtr ParseAdd() {
    ExprPtr e = ParseMul();
    int chain = 0;
    while (tok_.kind == Tok::kPlus || tok_.kind == Tok::kMinus) {
      std::string fn = tok_.kind == Tok::kPlus ? "_+_" : "_-_";
      int32_t off = tok_.offset;
      Advance();
      Chain(chain);
      e = Binary(off, std::move(fn), std::move(e), ParseMul());
    }
    return e;
  }

  ExprPtr ParseMul() {
    ExprPtr e = ParseUnary();
    int chain = 0;
    while (tok_.kind == Tok::kStar || tok_.kind == Tok::kSlash || tok_.kind == Tok::kPercent) {
      std::string fn = tok_.kind == Tok::kStar ? "_*_" : tok_.kind == Tok::kSlash ? "_/_" : "_%_";
      int32_t off = tok_.offset;
      Advance();
      Chain(chain);
      e = Binary(off, std::move(fn), std::move(e), ParseUnary());
    }
    return e;
  }

  // CEL.g4 tries `member` first, whose literal may carry one '-' sign: "-1" is a
  // literal, "--1" is two negations of 1 and so (parser.go VisitNegate) just 1.
  ExprPtr ParseUnary() {
    if (tok_.kind == Tok::kNot || tok_.kind == Tok::kMinus) {
      Tok op = tok_.kind;
      int32_t off = tok_.offset;
      int count = 0;
      Token first = tok_;
      while (tok_.kind == op) {
        ++count;
        Advance();
      }
      if (op == Tok::kMinus && count == 1 && (tok_.kind == Tok::kInt || tok_.kind == Tok::kDouble)) {
        ExprPtr lit = ParseNumber(first.offset, true);
        return ParseMemberSuffix(std::move(lit));
      }
      ExprPtr operand = ParseMember();
      if (count % 2 == 0) return operand;
      std::vector<ExprPtr> args;
      args.push_back(std::move(operand));
      return Call(off, op == Tok::kNot ? "!_" : "-_", std::move(args));
    }
    return ParseMember();
  }

  ExprPtr ParseMember() { return ParseMemberSuffix(ParsePrimary()); }

  ExprPtr ParseMemberSuffix(ExprPtr e) {
    int chain = 0;
    while (true) {
      if (tok_.kind == Tok::kDot) {
        Chain(chain);
        int32_t dot = tok_.offset;
        Advance();
        if (tok_.kind == Tok::kQuestion) SyntaxError(tok_, "unsupported syntax '.?'");
        if (tok_.kind != Tok::kIdent) {
          Fail(dot, "Syntax error: no viable alternative at input '." + std::string(tok_.text) + "'");
        }
        std::string name(tok_.text);
        Advance();
        if (tok_.kind == Tok::kLParen) {
          int32_t open = tok_.offset;
          Advance();
          std::vector<ExprPtr> args = ParseArgs(Tok::kRParen, "')'");
          e = MemberCallOrMacro(open, std::move(name), std::move(e), std::move(args));
        } else {
          ExprPtr s = NewExpr(ExprKind::kSelect, dot);
          s->name = std::move(name);
          s->target = std::move(e);
          e = std::move(s);
        }
      } else if (tok_.kind == Tok::kLBracket) {
        Chain(chain);
        int32_t open = tok_.offset;
        Advance();
        if (tok_.kind == Tok::kQuestion) SyntaxError(tok_, "unsupported syntax '[?'");
        ExprPtr index = ParseExpr();
        Expect(Tok::kRBracket, "']'");
        e = Binary(open, "_[_]", std::move(e), std::move(index));
      } else {
        return e;
      }
    }
  }

  // Comma-separated expressions up to `close` (a trailing comma is allowed).
  std::vector<ExprPtr> ParseArgs(Tok close, std::string_view close_display) {
    std::vector<ExprPtr> args;
    while (tok_.kind != close) {
      args.push_back(ParseExpr());
      if (tok_.kind == Tok::kComma) {
        Advance();
        continue;
      }
      if (tok_.kind != close) {
        SyntaxError(tok_, "mismatched input " + TokenDisplay(tok_) + " expecting {" + std::string(close_display) + ", ','}");
      }
    }
    Advance();
    return args;
  }

  ExprPtr ParseNumber(int32_t offset, bool negative) {
    Token t = tok_;
    Advance();
    ExprPtr e = NewExpr(ExprKind::kConst, offset);
    std::string text = (negative ? "-" : "") + t.value;
    if (t.kind == Tok::kDouble) {
      errno = 0;
      char* end = nullptr;
      double d = std::strtod(text.c_str(), &end);
      if (errno == ERANGE && (d == HUGE_VAL || d == -HUGE_VAL)) Fail(offset, "invalid double literal");
      e->constant.kind = ConstKind::kDouble;
      e->constant.d = d;
      return e;
    }
    int base = t.hex ? 16 : 10;
    if (t.kind == Tok::kUint) {
      errno = 0;
      unsigned long long u = std::strtoull(t.value.c_str(), nullptr, base);
      if (errno == ERANGE) Fail(offset, "invalid uint literal");
      e->constant.kind = ConstKind::kUint;
      e->constant.u = u;
      return e;
    }
    errno = 0;
    long long i = std::strtoll(text.c_str(), nullptr, base);
    if (errno == ERANGE) Fail(offset, "invalid int literal");
    e->constant.kind = ConstKind::kInt;
    e->constant.i = i;
    return e;
  }

  ExprPtr ParsePrimary() {
    int32_t off = tok_.offset;
    switch (tok_.kind) {
      case Tok::kInt:
      case Tok::kUint:
      case Tok::kDouble:
        return ParseNumber(off, false);
      case Tok::kString:
      case Tok::kBytes: {
        ExprPtr e = NewExpr(ExprKind::kConst, off);
        e->constant.kind = tok_.kind == Tok::kString ? ConstKind::kString : ConstKind::kBytes;
        e->constant.s = std::move(tok_.value);
        Advance();
        return e;
      }
      case Tok::kTrue:
      case Tok::kFalse: {
        ExprPtr e = NewExpr(ExprKind::kConst, off);
        e->constant.kind = ConstKind::kBool;
        e->constant.b = tok_.kind == Tok::kTrue;
        Advance();
        return e;
      }
      case Tok::kNull: {
        Advance();
        return NewExpr(ExprKind::kConst, off);
      }
      case Tok::kLParen: {
        Advance();
        ExprPtr e = ParseExpr();
        Expect(Tok::kRParen, "')'");
        return e;
      }
      case Tok::kLBracket: {
        Advance();
        ExprPtr e = NewExpr(ExprKind::kList, off);
        e->args = ParseArgs(Tok::kRBracket, "']'");
        return e;
      }
      case Tok::kLBrace: {
        Advance();
        ExprPtr e = NewExpr(ExprKind::kMap, off);
        while (tok_.kind != Tok::kRBrace) {
          if (tok_.kind == Tok::kQuestion) SyntaxError(tok_, "unsupported syntax '?'");
          e->args.push_back(ParseExpr());
          Expect(Tok::kColon, "':'");
          e->args.push_back(ParseExpr());
          if (tok_.kind == Tok::kComma) {
            Advance();
          } else if (tok_.kind != Tok::kRBrace) {
            SyntaxError(tok_, "mismatched input " + TokenDisplay(tok_) + " expecting {'}', ','}");
          }
        }
        Advance();
        return e;
      }
      case Tok::kDot:
      case Tok::kIdent: {
        if (tok_.kind == Tok::kDot) {
          Advance();  // a leading '.' names the root scope; we have only one scope
          if (tok_.kind != Tok::kIdent) SyntaxError(tok_, "mismatched input " + TokenDisplay(tok_) + " expecting IDENTIFIER");
        }
        int32_t id_off = tok_.offset;
        std::string name(tok_.text);
        if (IsReserved(name)) Fail(id_off, "reserved identifier: " + name);
        Advance();
        if (tok_.kind == Tok::kLParen) {
          int32_t open = tok_.offset;
          Advance();
          std::vector<ExprPtr> args = ParseArgs(Tok::kRParen, "')'");
          return GlobalCallOrMacro(open, std::move(name), std::move(args));
        }
        ExprPtr e = NewExpr(ExprKind::kIdent, id_off);
        e->name = std::move(name);
        return e;
      }
      default:
        SyntaxError(tok_, "mismatched input " + TokenDisplay(tok_) + " expecting " + std::string(kExpectPrimary));
    }
  }

  ExprPtr GlobalCallOrMacro(int32_t open, std::string name, std::vector<ExprPtr> args) {
    if (name == "has" && args.size() == 1) {
      if (args[0]->kind != ExprKind::kSelect) Fail(args[0]->offset, "invalid argument to has() macro");
      ExprPtr e = NewExpr(ExprKind::kMacro, open);
      e->macro = MacroKind::kHas;
      e->name = std::move(args[0]->name);
      e->target = std::move(args[0]->target);
      return e;
    }
    return Call(open, std::move(name), std::move(args));
  }

  std::string SimpleName(const ExprPtr& arg, std::string_view message) {
    if (arg->kind != ExprKind::kIdent) Fail(arg->offset, std::string(message));
    return arg->name;
  }

  ExprPtr MemberCallOrMacro(int32_t open, std::string name, ExprPtr target, std::vector<ExprPtr> args) {
    ExprPtr e = NewExpr(ExprKind::kMacro, open);
    size_t n = args.size();
    bool quantifier = name == "all" || name == "exists" || name == "exists_one" || name == "existsOne";
    if (target->kind == ExprKind::kIdent && target->name == "cel" && name == "bind" && n == 3) {
      // ext/bindings.go: cel.bind(var, init, body).
      e->macro = MacroKind::kBind;
      e->name = SimpleName(args[0], "cel.bind() variable names must be simple identifiers");
      e->target = std::move(args[1]);
      e->args.push_back(std::move(args[2]));
      return e;
    }
    if ((quantifier && name != "existsOne" && n == 2) || (quantifier && name != "exists_one" && n == 3) ||
        (name == "map" && (n == 2 || n == 3)) || (name == "filter" && n == 2)) {
      e->macro = name == "all"      ? MacroKind::kAll
                 : name == "exists" ? MacroKind::kExists
                 : name == "map"    ? MacroKind::kMap
                 : name == "filter" ? MacroKind::kFilter
                                    : MacroKind::kExistsOne;
      e->name = SimpleName(args[0], "argument must be a simple name");
      size_t first = 1;
      if (quantifier && n == 3) {
        e->name2 = SimpleName(args[1], "argument must be a simple name");
        first = 2;
      }
      for (size_t i = first; i < n; ++i) e->args.push_back(std::move(args[i]));
      e->target = std::move(target);
      return e;
    }
    return Call(open, std::move(name), std::move(args), std::move(target));
  }

  Lexer lex_;
  Token tok_;
  std::vector<Issue>& issues_;
  int depth_ = 0;
};

// Line (1-based) and column (0-based, in code points) of a byte offset.
std::pair<int, int> Location(std::string_view src, int32_t offset) {
  int line = 1;
  size_t line_start = 0;
  size_t end = std::min(static_cast<size_t>(offset), src.size());
  for (size_t i = 0; i < end; ++i) {
    if (src[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  int col = 0;
  for (size_t i = line_start; i < end; ++i) {
    if ((static_cast<unsigned char>(src[i]) & 0xC0) != 0x80) ++col;
  }
  return {line, col};
}

}  // namespace

ExprPtr Parse(std::string_view source, std::vector<Issue>& issues) {
  Parser p(source, issues);
  return p.ParseAll();
}

std::string FormatIssues(std::string_view source, std::vector<Issue> issues) {
  std::stable_sort(issues.begin(), issues.end(), [&](const Issue& a, const Issue& b) {
    return a.offset < b.offset;
  });
  std::string out;
  for (const Issue& issue : issues) {
    if (!out.empty()) out += '\n';
    if (issue.offset < 0) {
      out += "ERROR: <input>:-1:0: " + issue.message;
      continue;
    }
    auto [line, col] = Location(source, issue.offset);
    out += "ERROR: <input>:" + std::to_string(line) + ":" + std::to_string(col + 1) + ": " + issue.message;
    // The snippet: the offending source line, tabs as spaces, and a caret under the column.
    size_t start = 0;
    for (int l = 1; l < line; ++l) start = source.find('\n', start) + 1;
    size_t stop = source.find('\n', start);
    std::string snippet(source.substr(start, stop == std::string_view::npos ? std::string_view::npos : stop - start));
    std::replace(snippet.begin(), snippet.end(), '\t', ' ');
    out += "\n | " + snippet + "\n | ";
    size_t i = 0;
    for (int c = 0; c < col && i < snippet.size(); ++c) {
      unsigned char b = static_cast<unsigned char>(snippet[i]);
      size_t len = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
      out += len > 1 ? "\xEF\xBC\x8E" : ".";  // U+FF0E FULLWIDTH FULL STOP for wide characters
      i += len;
    }
    unsigned char b = i < snippet.size() ? static_cast<unsigned char>(snippet[i]) : 0;
    out += b >= 0x80 ? "\xEF\xBC\xBE" : "^";  // U+FF3E for a wide character
  }
  return out;
}

}  // namespace ksched::cel
