// JSON helpers for the fuzz targets that state invariants over well-formed JSON only.
#pragma once

#include <simdjson.h>

#include <set>
#include <string_view>

namespace ksched::fuzz {

namespace internal {

inline bool KeysUnique(simdjson::dom::element e) {
  simdjson::dom::array array;
  simdjson::dom::object object;
  if (e.get_array().get(array) == simdjson::SUCCESS) {
    for (simdjson::dom::element child : array) {
      if (!KeysUnique(child)) return false;
    }
  } else if (e.get_object().get(object) == simdjson::SUCCESS) {
    std::set<std::string_view> keys;
    for (simdjson::dom::key_value_pair field : object) {
      if (!keys.insert(field.key).second || !KeysUnique(field.value)) return false;
    }
  }
  return true;
}

}  // namespace internal

// Whether `text` is exactly one well-formed JSON value (simdjson's DOM parser validates
// every byte) and, with `unique_keys`, no object repeats a key. The decoders use
// simdjson's on-demand API, which does not validate values it skips and ignores text
// after the document, so they accept some malformed input; an invariant like
// "re-encoding what was decoded gives valid JSON" holds only when the input was valid.
inline bool IsValidJson(std::string_view text, bool unique_keys = false) {
  static simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(text.data(), text.size(), /*realloc_if_needed=*/true).get(root) != simdjson::SUCCESS) return false;
  return !unique_keys || internal::KeysUnique(root);
}

}  // namespace ksched::fuzz
