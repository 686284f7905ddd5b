#include "config/field_error.h"

#include <cstdio>
#include <set>

namespace ksched::config {

std::string GoQuote(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\x%02x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);  // UTF-8 is valid here: the loader checked it
        }
    }
  }
  return out + "\"";
}

static std::string WithDetail(std::string s, std::string_view detail) {
  if (!detail.empty()) {
    s += ": ";
    s += detail;
  }
  return s;
}

std::string FieldInvalid(std::string_view path, std::string_view rendered_value, std::string_view detail) {
  return WithDetail(std::string(path) + ": Invalid value: " + std::string(rendered_value), detail);
}

std::string FieldRequired(std::string_view path, std::string_view detail) {
  return WithDetail(std::string(path) + ": Required value", detail);
}

std::string FieldDuplicate(std::string_view path, std::string_view rendered_value) {
  return std::string(path) + ": Duplicate value: " + std::string(rendered_value);
}

std::string FieldForbidden(std::string_view path, std::string_view detail) {
  return WithDetail(std::string(path) + ": Forbidden", detail);
}

std::string FieldNotSupported(std::string_view path, std::string_view value,
                              const std::vector<std::string_view>& supported) {
  std::string s = std::string(path) + ": Unsupported value: " + GoQuote(value);
  if (!supported.empty()) {
    s += ": supported values: ";
    for (size_t i = 0; i < supported.size(); ++i) {
      if (i) s += ", ";
      s += GoQuote(supported[i]);
    }
  }
  return s;
}

Status AggregateErrors(const std::vector<std::string>& errors) {
  std::set<std::string_view> seen;
  std::string joined;
  for (const std::string& e : errors) {
    if (!seen.insert(e).second) continue;
    if (seen.size() > 1) joined += ", ";
    joined += e;
  }
  if (seen.empty()) return Status::OK();
  if (seen.size() == 1) return InvalidArgument(joined);
  return InvalidArgument("[" + joined + "]");
}

}  // namespace ksched::config
