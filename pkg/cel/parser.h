// Parsing CEL source text into an Expr tree, and cel-go's formatting of issues.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/cel/ast.h"

namespace ksched::cel {

// One compile error at a byte offset of the source (-1: no location).
struct Issue {
  int32_t offset = -1;
  std::string message;
};

// cel-go's common.Errors.ToDisplayString: each issue as
//   ERROR: <input>:LINE:COL: MESSAGE
//    | source line
//    | ....^
// sorted by location and joined by newlines.
std::string FormatIssues(std::string_view source, std::vector<Issue> issues);

// Parses `source`; on failure returns null and appends at least one issue. Only the
// first syntax error is reported (cel-go's ANTLR parser recovers and may report more).
ExprPtr Parse(std::string_view source, std::vector<Issue>& issues);

// cel-go's default parser recursion limit.
inline constexpr int kMaxRecursionDepth = 250;

}  // namespace ksched::cel
