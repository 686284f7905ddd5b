#include "config/decoder.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <set>

#include "config/field_error.h"

namespace ksched::config::internal {
namespace {

std::string Where(const YAML::Node& n) {
  YAML::Mark m = n.Mark();
  if (m.is_null()) return "";
  return " (line " + std::to_string(m.line + 1) + ", column " + std::to_string(m.column + 1) + ")";
}

bool IsOneOf(std::string_view s, std::initializer_list<std::string_view> options) {
  for (std::string_view o : options) {
    if (s == o) return true;
  }
  return false;
}

bool IsTrue(std::string_view s) { return IsOneOf(s, {"true", "True", "TRUE", "y", "Y", "yes", "Yes", "YES", "on", "On", "ON"}); }
bool IsFalse(std::string_view s) { return IsOneOf(s, {"false", "False", "FALSE", "n", "N", "no", "No", "NO", "off", "Off", "OFF"}); }

bool LooksDecimalInt(std::string_view s) {
  size_t i = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
  if (i == s.size()) return false;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  return true;
}

bool LooksFloat(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  std::string copy(s);
  char* end = nullptr;
  errno = 0;
  (void)std::strtod(copy.c_str(), &end);
  bool any_digit = false;
  for (char c : s) any_digit |= (c >= '0' && c <= '9');
  // Excludes hex floats, "inf" and "nan", which YAML spells ".inf"/".nan" anyway.
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+')) return false;
  }
  return any_digit && end != nullptr && *end == '\0';
}

const char* KindName(int k) {
  static const char* names[] = {"null", "bool", "number", "number", "string", "object", "array"};
  return names[k];
}

}  // namespace

void Decoder::Fail(std::string message) {
  if (fatal_.empty()) fatal_ = std::move(message);
}

void Decoder::TypeError(const YAML::Node& n, std::string_view want) {
  Kind k = KindOf(n);
  std::string got = KindName(static_cast<int>(k));
  if (k != Kind::kObject && k != Kind::kArray) {
    got += ' ';
    got += GoQuote(n.Scalar());
  }
  Fail("cannot unmarshal " + got + " into " + GoQuote(path_) + " of type " + std::string(want) + Where(n));
}

bool Decoder::Visit(const YAML::Node& n) {
  if (!ok()) return false;
  if (*budget_ == 0) {
    Fail("config document is too large: more than the allowed number of YAML nodes (alias expansion?) at " +
         GoQuote(path_));
    return false;
  }
  --*budget_;
  return true;
}

Decoder::Kind Decoder::KindOf(const YAML::Node& n) {
  if (n.IsMap()) return Kind::kObject;
  if (n.IsSequence()) return Kind::kArray;
  if (n.IsNull()) return Kind::kNull;
  const std::string& s = n.Scalar();
  if (n.Tag() != "?") return Kind::kString;  // quoted or explicitly tagged
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return Kind::kNull;
  if (IsTrue(s) || IsFalse(s)) return Kind::kBool;
  if (LooksDecimalInt(s)) return Kind::kInt;
  if (LooksFloat(s)) return Kind::kFloat;
  return Kind::kString;
}

size_t Decoder::PushField(std::string_view key) {
  size_t mark = path_.size();
  if (!path_.empty()) path_ += '.';
  path_ += key;
  return mark;
}

size_t Decoder::PushIndex(size_t i) {
  size_t mark = path_.size();
  path_ += '[';
  path_ += std::to_string(i);
  path_ += ']';
  return mark;
}

void Decoder::Object(const YAML::Node& n, const std::function<bool(const std::string&, const YAML::Node&)>& field) {
  if (!Visit(n)) return;
  Kind k = KindOf(n);
  if (k == Kind::kNull) return;
  if (k != Kind::kObject) return TypeError(n, "object");
  std::set<std::string> seen;
  for (auto it = n.begin(); it != n.end() && ok(); ++it) {
    // Copies: the iterator hands out a temporary pair; Node copies are cheap handles.
    const auto entry = *it;
    YAML::Node key = entry.first;
    YAML::Node value = entry.second;
    if (!Visit(key)) return;
    if (!key.IsScalar()) {
      Fail("invalid map key in " + (path_.empty() ? std::string("the document root") : GoQuote(path_)) +
           ": keys must be strings" + Where(key));
      return;
    }
    size_t mark = PushField(key.Scalar());
    if (!seen.insert(key.Scalar()).second) {
      strict_.push_back("duplicate field " + GoQuote(path_));
    } else if (!field(key.Scalar(), value)) {
      strict_.push_back("unknown field " + GoQuote(path_));
    }
    Pop(mark);
  }
}

void Decoder::List(const YAML::Node& n, const std::function<void(const YAML::Node&)>& elem) {
  if (!Visit(n)) return;
  Kind k = KindOf(n);
  if (k == Kind::kNull) return;
  if (k != Kind::kArray) return TypeError(n, "array");
  size_t i = 0;
  for (auto it = n.begin(); it != n.end() && ok(); ++it, ++i) {
    size_t mark = PushIndex(i);
    elem(*it);
    Pop(mark);
  }
}

bool Decoder::Integer(const YAML::Node& n, int64_t lo, int64_t hi, std::string_view type, int64_t* out) {
  if (!Visit(n)) return false;
  Kind k = KindOf(n);
  if (k == Kind::kNull) return false;
  if (k != Kind::kInt) {
    TypeError(n, type);
    return false;
  }
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(n.Scalar().c_str(), &end, 10);
  if (errno == ERANGE || v < lo || v > hi) {
    Fail("cannot unmarshal number " + n.Scalar() + " into " + GoQuote(path_) + " of type " + std::string(type) +
         ": out of range" + Where(n));
    return false;
  }
  *out = v;
  return true;
}

void Decoder::Int32(const YAML::Node& n, int32_t* out) {
  int64_t v;
  if (Integer(n, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(), "int32", &v)) {
    *out = static_cast<int32_t>(v);
  }
}

void Decoder::Int32(const YAML::Node& n, std::optional<int32_t>* out) {
  int64_t v;
  if (Integer(n, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(), "int32", &v)) {
    *out = static_cast<int32_t>(v);
  }
}

void Decoder::Int64(const YAML::Node& n, int64_t* out) {
  int64_t v;
  if (Integer(n, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), "int64", &v)) *out = v;
}

void Decoder::Float(const YAML::Node& n, float* out) {
  if (!Visit(n)) return;
  Kind k = KindOf(n);
  if (k == Kind::kNull) return;
  if (k != Kind::kInt && k != Kind::kFloat) return TypeError(n, "float32");
  double v = std::strtod(n.Scalar().c_str(), nullptr);
  if (!std::isfinite(v) || std::fabs(v) > std::numeric_limits<float>::max()) {
    return Fail("cannot unmarshal number " + n.Scalar() + " into " + GoQuote(path_) + " of type float32" + Where(n));
  }
  *out = static_cast<float>(v);
}

void Decoder::Bool(const YAML::Node& n, bool* out) {
  if (!Visit(n)) return;
  Kind k = KindOf(n);
  if (k == Kind::kNull) return;
  if (k != Kind::kBool) return TypeError(n, "bool");
  *out = IsTrue(n.Scalar());
}

void Decoder::String(const YAML::Node& n, std::string* out) {
  if (!Visit(n)) return;
  Kind k = KindOf(n);
  if (k == Kind::kNull) return;
  // sigs.k8s.io/yaml turns plain numbers and booleans into strings for string fields.
  if (k == Kind::kObject || k == Kind::kArray) return TypeError(n, "string");
  *out = n.Scalar();
}

void Decoder::String(const YAML::Node& n, std::optional<std::string>* out) {
  std::string s;
  if (!Visit(n)) return;
  if (KindOf(n) == Kind::kNull) return;
  ++*budget_;  // the inner call counts this node again
  String(n, &s);
  if (ok()) *out = std::move(s);
}

void Decoder::StringList(const YAML::Node& n, std::vector<std::string>* out) {
  List(n, [&](const YAML::Node& e) {
    std::string s;
    String(e, &s);
    out->push_back(std::move(s));
  });
}

void Decoder::Dur(const YAML::Node& n, Duration* out) {
  if (!Visit(n)) return;
  Kind k = KindOf(n);
  if (k == Kind::kNull) return;
  if (k != Kind::kString) return TypeError(n, "duration string such as \"15s\"");
  StatusOr<Duration> d = ParseGoDuration(n.Scalar());
  if (!d.ok()) return Fail("decoding " + GoQuote(path_) + ": " + d.status().message() + Where(n));
  *out = *d;
}

void Decoder::Skip(const YAML::Node& n, int depth) {
  if (!Visit(n)) return;
  if (depth > kMaxValueDepth) return Fail("value nested too deeply at " + GoQuote(path_) + Where(n));
  if (n.IsMap()) {
    for (auto it = n.begin(); it != n.end() && ok(); ++it) {
      const auto entry = *it;
      Skip(entry.first, depth + 1);
      Skip(entry.second, depth + 1);
    }
  } else if (n.IsSequence()) {
    for (auto it = n.begin(); it != n.end() && ok(); ++it) Skip(*it, depth + 1);
  }
}

}  // namespace ksched::config::internal
