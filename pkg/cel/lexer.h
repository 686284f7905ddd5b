// Tokens of the CEL grammar (cel-spec doc/langdef.md "Syntax"; cel-go parser/gen/CEL.g4).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ksched::cel {

enum class Tok : uint8_t {
  kEof,
  kError,  // a token recognition error; `text` is what could not be recognized
  kIdent,
  kInt,
  kUint,
  kDouble,
  kString,
  kBytes,
  kTrue,
  kFalse,
  kNull,
  kIn,
  kLParen,
  kRParen,
  kLBracket,
  kRBracket,
  kLBrace,
  kRBrace,
  kDot,
  kComma,
  kColon,
  kQuestion,
  kPlus,
  kMinus,
  kStar,
  kSlash,
  kPercent,
  kNot,
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kAnd,
  kOr,
};

struct Token {
  Tok kind = Tok::kEof;
  int32_t offset = 0;     // byte offset in the source
  std::string_view text;  // the source text of the token
  std::string value;      // decoded string/bytes literal; digits of a number
  bool hex = false;       // a 0x number
};

class Lexer {
 public:
  explicit Lexer(std::string_view src) : src_(src) {}
  Token Next();

 private:
  Token Make(Tok kind, size_t start) const;
  Token Number(size_t start);
  Token StringLit(size_t start, size_t quote_pos, bool raw, bool bytes);
  Token Error(size_t start, size_t end) const;

  std::string_view src_;
  size_t pos_ = 0;
};

// The name ANTLR gives a token in "mismatched input" messages: '<EOF>' or 'text'.
// Appends code point `cp` encoded as UTF-8 (the lexer's escapes, the string library).
void AppendUtf8(std::string& out, uint32_t cp);

std::string TokenDisplay(const Token& t);

}  // namespace ksched::cel
