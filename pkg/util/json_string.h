// JSON string quoting, shared by the API encoders (pkg/api/json_encode.cc) and the JSON
// log format (pkg/util/log.cc).
#pragma once

#include <string>
#include <string_view>

namespace ksched {

// Appends `s` as a JSON string literal (quotes included), escaping '"', '\\' and every
// control character.
void AppendJsonQuoted(std::string& out, std::string_view s);
// `s` as a JSON string literal.
std::string JsonQuoted(std::string_view s);

}  // namespace ksched
