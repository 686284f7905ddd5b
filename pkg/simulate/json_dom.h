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

// The entry `key` of the object at `map_path` ("metadata.annotations"): keys of labels
// and annotations hold dots, so they are not part of a path.
inline std::optional<simdjson::dom::element> MapEntry(simdjson::dom::element e, std::string_view map_path,
                                                       std::string_view key) {
  auto map = FieldAt(e, map_path);
  if (!map || map->type() != simdjson::dom::element_type::OBJECT) return std::nullopt;
  auto v = (*map)[key];
  if (v.error() || v.value().is_null()) return std::nullopt;
  return v.value();
}

// The string entry `key` of the object at `map_path`; "" when absent or not a string.
inline std::string MapString(simdjson::dom::element e, std::string_view map_path, std::string_view key) {
  auto v = MapEntry(e, map_path, key);
  return v && v->type() == simdjson::dom::element_type::STRING ? std::string(std::string_view(*v)) : std::string();
}

// The string at `path`; "" when absent or not a string.
inline std::string StringField(simdjson::dom::element e, std::string_view path) {
  return std::string(StringViewAt(e, path).value_or(""));
}

}  // namespace ksched::simulate
