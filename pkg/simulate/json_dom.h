// Reads of parsed JSON (simdjson's DOM) shared by the simulator's files: a field at a
// dotted path, and a string field.
#pragma once

#include <simdjson.h>

#include <optional>
#include <string>
#include <string_view>

namespace ksched::simulate {

// The value at `path` ("metadata.name"); nullopt when a step is missing, null, or not
// an object.
inline std::optional<simdjson::dom::element> FieldAt(simdjson::dom::element e, std::string_view path) {
  while (!path.empty()) {
    const size_t dot = path.find('.');
    const std::string_view key = path.substr(0, dot);
    path = dot == std::string_view::npos ? std::string_view() : path.substr(dot + 1);
    if (e.type() != simdjson::dom::element_type::OBJECT) return std::nullopt;
    auto next = e[key];
    if (next.error() || next.value().is_null()) return std::nullopt;
    e = next.value();
  }
  return e;
}

// The string at `path`; nullopt when absent or not a string.
inline std::optional<std::string_view> StringViewAt(simdjson::dom::element e, std::string_view path) {
  auto f = FieldAt(e, path);
  if (!f || f->type() != simdjson::dom::element_type::STRING) return std::nullopt;
  return std::string_view(*f);
}

// The string at `path`; "" when absent or not a string.
inline std::string StringField(simdjson::dom::element e, std::string_view path) {
  return std::string(StringViewAt(e, path).value_or(""));
}

}  // namespace ksched::simulate
