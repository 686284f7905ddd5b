#include "pkg/cel/lexer.h"

#include <algorithm>
#include <cstdint>

namespace ksched::cel {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool IsIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsIdentChar(char c) { return IsIdentStart(c) || IsDigit(c); }
int HexVal(char c) {
  if (IsDigit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

}  // namespace

void AppendUtf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::string TokenDisplay(const Token& t) {
  if (t.kind == Tok::kEof) return "'<EOF>'";
  // Appended piece by piece: GCC 12's -O3 -Wrestrict misreads "lit" + std::string&&.
  std::string out = "'";
  out += t.text;
  out += '\'';
  return out;
}

Token Lexer::Make(Tok kind, size_t start) const {
  Token t;
  t.kind = kind;
  t.offset = static_cast<int32_t>(start);
  t.text = src_.substr(start, pos_ - start);
  return t;
}

Token Lexer::Error(size_t start, size_t end) const {
  Token t;
  t.kind = Tok::kError;
  t.offset = static_cast<int32_t>(start);
  t.text = src_.substr(start, end - start);
  return t;
}

Token Lexer::Next() {
  // Whitespace and // comments.
  while (pos_ < src_.size()) {
    char c = src_[pos_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
      ++pos_;
    } else if (c == '/' && pos_ + 1 < src_.size() && src_[pos_ + 1] == '/') {
      while (pos_ < src_.size() && src_[pos_] != '\n') ++pos_;
    } else {
      break;
    }
  }
  size_t start = pos_;
  if (pos_ >= src_.size()) return Make(Tok::kEof, start);
  char c = src_[pos_];
  auto peek = [&](size_t k) { return pos_ + k < src_.size() ? src_[pos_ + k] : '\0'; };
  auto two = [&](Tok kind) {
    pos_ += 2;
    return Make(kind, start);
  };
  auto one = [&](Tok kind) {
    pos_ += 1;
    return Make(kind, start);
  };
  // String and bytes literals with their r/b prefixes (in either order).
  {
    size_t p = pos_;
    bool raw = false, bytes = false;
    for (int i = 0; i < 2 && p < src_.size(); ++i) {
      char d = src_[p];
      if ((d == 'r' || d == 'R') && !raw) {
        raw = true;
        ++p;
      } else if ((d == 'b' || d == 'B') && !bytes) {
        bytes = true;
        ++p;
      } else {
        break;
      }
    }
    if (p < src_.size() && (src_[p] == '"' || src_[p] == '\'')) return StringLit(start, p, raw, bytes);
  }
  if (IsIdentStart(c)) {
    while (pos_ < src_.size() && IsIdentChar(src_[pos_])) ++pos_;
    Token t = Make(Tok::kIdent, start);
    if (t.text == "true") t.kind = Tok::kTrue;
    else if (t.text == "false") t.kind = Tok::kFalse;
    else if (t.text == "null") t.kind = Tok::kNull;
    else if (t.text == "in") t.kind = Tok::kIn;
    return t;
  }
  if (IsDigit(c) || (c == '.' && IsDigit(peek(1)))) return Number(start);
  switch (c) {
    case '(': return one(Tok::kLParen);
    case ')': return one(Tok::kRParen);
    case '[': return one(Tok::kLBracket);
    case ']': return one(Tok::kRBracket);
    case '{': return one(Tok::kLBrace);
    case '}': return one(Tok::kRBrace);
    case '.': return one(Tok::kDot);
    case ',': return one(Tok::kComma);
    case ':': return one(Tok::kColon);
    case '?': return one(Tok::kQuestion);
    case '+': return one(Tok::kPlus);
    case '-': return one(Tok::kMinus);
    case '*': return one(Tok::kStar);
    case '/': return one(Tok::kSlash);
    case '%': return one(Tok::kPercent);
    case '!': return peek(1) == '=' ? two(Tok::kNe) : one(Tok::kNot);
    case '=':
      if (peek(1) == '=') return two(Tok::kEq);
      break;
    case '<': return peek(1) == '=' ? two(Tok::kLe) : one(Tok::kLt);
    case '>': return peek(1) == '=' ? two(Tok::kGe) : one(Tok::kGt);
    case '&':
      if (peek(1) == '&') return two(Tok::kAnd);
      break;
    case '|':
      if (peek(1) == '|') return two(Tok::kOr);
      break;
    default:
      break;
  }
  // ANTLR reports the unrecognized text up to the next character it could start a
  // token with; one character (two for a lone '|' or '&' followed by a space, as
  // cel-go's "token recognition error at: '| '") is close enough.
  size_t end = pos_ + 1;
  if ((c == '|' || c == '&' || c == '=') && end < src_.size() && src_[end] == ' ') ++end;
  // Do not split a UTF-8 sequence.
  while (end < src_.size() && (static_cast<unsigned char>(src_[end]) & 0xC0) == 0x80) ++end;
  pos_ = end;
  return Error(start, end);
}

Token Lexer::Number(size_t start) {
  Token t;
  if (src_[pos_] == '0' && pos_ + 1 < src_.size() && (src_[pos_ + 1] == 'x' || src_[pos_ + 1] == 'X')) {
    pos_ += 2;
    size_t digits = pos_;
    while (pos_ < src_.size() && IsHex(src_[pos_])) ++pos_;
    if (pos_ == digits) return Error(start, pos_);
    std::string value(src_.substr(digits, pos_ - digits));
    Tok kind = Tok::kInt;
    if (pos_ < src_.size() && (src_[pos_] == 'u' || src_[pos_] == 'U')) {
      ++pos_;
      kind = Tok::kUint;
    }
    t = Make(kind, start);
    t.value = std::move(value);
    t.hex = true;
    return t;
  }
  bool is_float = false;
  while (pos_ < src_.size() && IsDigit(src_[pos_])) ++pos_;
  if (pos_ + 1 < src_.size() && src_[pos_] == '.' && IsDigit(src_[pos_ + 1])) {
    is_float = true;
    ++pos_;
    while (pos_ < src_.size() && IsDigit(src_[pos_])) ++pos_;
  }
  if (pos_ < src_.size() && (src_[pos_] == 'e' || src_[pos_] == 'E')) {
    size_t p = pos_ + 1;
    if (p < src_.size() && (src_[p] == '+' || src_[p] == '-')) ++p;
    if (p < src_.size() && IsDigit(src_[p])) {
      is_float = true;
      pos_ = p;
      while (pos_ < src_.size() && IsDigit(src_[pos_])) ++pos_;
    }
  }
  std::string value(src_.substr(start, pos_ - start));
  Tok kind = is_float ? Tok::kDouble : Tok::kInt;
  if (!is_float && pos_ < src_.size() && (src_[pos_] == 'u' || src_[pos_] == 'U')) {
    ++pos_;
    kind = Tok::kUint;
  }
  t = Make(kind, start);
  t.value = std::move(value);
  return t;
}

Token Lexer::StringLit(size_t start, size_t quote_pos, bool raw, bool bytes) {
  char q = src_[quote_pos];
  bool triple = quote_pos + 2 < src_.size() && src_[quote_pos + 1] == q && src_[quote_pos + 2] == q;
  size_t p = quote_pos + (triple ? 3 : 1);
  std::string out;
  while (true) {
    if (p >= src_.size()) return Error(start, p);
    char c = src_[p];
    if (triple) {
      if (c == q && p + 2 < src_.size() && src_[p + 1] == q && src_[p + 2] == q) {
        p += 3;
        break;
      }
    } else {
      if (c == q) {
        ++p;
        break;
      }
      if (c == '\n' || c == '\r') return Error(start, p);
    }
    if (c != '\\' || raw) {
      out += c;
      ++p;
      continue;
    }
    // Escape sequences (cel-spec langdef "String and Bytes Values").
    if (p + 1 >= src_.size()) return Error(start, p + 1);
    char e = src_[p + 1];
    p += 2;
    switch (e) {
      case 'a': out += '\a'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'v': out += '\v'; break;
      case '\\': out += '\\'; break;
      case '\'': out += '\''; break;
      case '"': out += '"'; break;
      case '`': out += '`'; break;
      case '?': out += '?'; break;
      case 'x': case 'X': case 'u': case 'U': {
        size_t n = (e == 'x' || e == 'X') ? 2 : (e == 'u' ? 4 : 8);
        uint32_t v = 0;
        for (size_t i = 0; i < n; ++i) {
          if (p + i >= src_.size() || !IsHex(src_[p + i])) return Error(start, std::min(p + i + 1, src_.size()));
          v = v * 16 + static_cast<uint32_t>(HexVal(src_[p + i]));
        }
        p += n;
        if (n == 2 && bytes) {
          out += static_cast<char>(v);
        } else {
          if (v > 0x10FFFF || (v >= 0xD800 && v < 0xE000)) return Error(start, p);
          if (bytes && n == 2) out += static_cast<char>(v);
          else AppendUtf8(out, v);
        }
        break;
      }
      case '0': case '1': case '2': case '3': {
        uint32_t v = static_cast<uint32_t>(e - '0');
        for (size_t i = 0; i < 2; ++i) {
          if (p + i >= src_.size() || src_[p + i] < '0' || src_[p + i] > '7') return Error(start, p + i);
          v = v * 8 + static_cast<uint32_t>(src_[p + i] - '0');
        }
        p += 2;
        if (bytes) out += static_cast<char>(v);
        else AppendUtf8(out, v);
        break;
      }
      default:
        return Error(start, p);
    }
  }
  pos_ = p;
  Token t = Make(bytes ? Tok::kBytes : Tok::kString, start);
  t.value = std::move(out);
  return t;
}

}  // namespace ksched::cel
