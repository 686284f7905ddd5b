#include "config/emitter.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <set>

namespace ksched::config {

size_t InvalidUtf8Offset(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    uint32_t cp;
    if ((c & 0xE0) == 0xC0) len = 2, cp = c & 0x1F;
    else if ((c & 0xF0) == 0xE0) len = 3, cp = c & 0x0F;
    else if ((c & 0xF8) == 0xF0) len = 4, cp = c & 0x07;
    else return i;
    if (i + len > s.size()) return i;
    for (size_t k = 1; k < len; ++k) {
      unsigned char cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF)) {
      return i;
    }
    i += len;
  }
  return std::string_view::npos;
}

namespace {

template <typename T>
std::string ShortestText(T v) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, res.ptr);
}

// ---- YAML ---------------------------------------------------------------------------------

// Whether a plain scalar with this text reads back as a string (see EmitPlain).
bool PlainIsString(std::string_view s);

class YamlEmitter final : public Emitter {
 public:
  void BeginMap() override { out_ << YAML::BeginMap; }
  void EndMap() override { out_ << YAML::EndMap; }
  void EmptyMap() override { out_ << YAML::Flow << YAML::BeginMap << YAML::EndMap; }
  void BeginSeq() override { out_ << YAML::BeginSeq; }
  void EndSeq() override { out_ << YAML::EndSeq; }
  void EmptySeq() override { out_ << YAML::Flow << YAML::BeginSeq << YAML::EndSeq; }
  void Key(std::string_view key) override { out_ << YAML::Key << std::string(key) << YAML::Value; }
  // Strings a YAML reader would take for null, a bool or a number are quoted.
  void String(std::string_view s) override {
    if (!PlainIsString(s)) out_ << YAML::DoubleQuoted;
    out_ << std::string(s);
  }
  void Int(int64_t v) override { out_ << v; }
  void Float(float v) override { out_ << ShortestText(v); }
  void Double(double v) override { out_ << ShortestText(v); }
  void Bool(bool v) override { out_ << (v ? "true" : "false"); }
  void Null() override { out_ << YAML::Null; }
  // Typed, so quoted scalars stay quoted (yaml-cpp's own node output drops the quotes);
  // a node the typed walk rejects (checked first, as the emitter cannot back out) is
  // written as yaml-cpp has it.
  void Node(const YAML::Node& node) override {
    auto check = NewJsonEmitter();
    if (EmitYamlNode(node, *check).ok()) {
      (void)EmitYamlNode(node, *this);
    } else {
      out_ << node;
    }
  }
  std::string Text() const override { return std::string(out_.c_str()) + "\n"; }

 private:
  YAML::Emitter out_;
};

// ---- JSON ---------------------------------------------------------------------------------

class JsonEmitter final : public Emitter {
 public:
  void BeginMap() override { Open('{'); }
  void EndMap() override { Close('}'); }
  void EmptyMap() override { Atom("{}"); }
  void BeginSeq() override { Open('['); }
  void EndSeq() override { Close(']'); }
  void EmptySeq() override { Atom("[]"); }
  void Key(std::string_view key) override {
    Separate();
    Quote(key);
    out_ += ':';
    comma_ = false;
  }
  void String(std::string_view s) override {
    Separate();
    Quote(s);
    comma_ = true;
  }
  void Int(int64_t v) override { Atom(ShortestText(v)); }
  // JSON has no infinity or NaN; validation keeps them out of real configurations.
  void Float(float v) override { Atom(std::isfinite(v) ? ShortestText(v) : "null"); }
  void Double(double v) override { Atom(std::isfinite(v) ? ShortestText(v) : "null"); }
  void Bool(bool v) override { Atom(v ? "true" : "false"); }
  void Null() override { Atom("null"); }
  void Node(const YAML::Node& node) override {
    // Raw args were decoded (and bounded) by our own loader, so this cannot fail on
    // depth; a value it still cannot express is written as null rather than half.
    std::string saved = out_;
    bool saved_comma = comma_;
    if (!EmitYamlNode(node, *this).ok()) {
      out_ = std::move(saved);
      comma_ = saved_comma;
      Null();
    }
  }
  std::string Text() const override { return out_; }

 private:
  void Separate() {
    if (comma_) out_ += ',';
  }
  void Open(char c) {
    Separate();
    out_ += c;
    comma_ = false;
  }
  void Close(char c) {
    out_ += c;
    comma_ = true;
  }
  void Atom(std::string_view text) {
    Separate();
    out_ += text;
    comma_ = true;
  }
  void Quote(std::string_view s) {
    static constexpr char kHex[] = "0123456789abcdef";
    out_ += '"';
    while (!s.empty()) {
      size_t bad = InvalidUtf8Offset(s);
      std::string_view good = s.substr(0, bad);
      for (char ch : good) {
        unsigned char c = static_cast<unsigned char>(ch);
        switch (c) {
          case '"': out_ += "\\\""; break;
          case '\\': out_ += "\\\\"; break;
          case '\n': out_ += "\\n"; break;
          case '\r': out_ += "\\r"; break;
          case '\t': out_ += "\\t"; break;
          default:
            if (c < 0x20) {
              out_ += "\\u00";
              out_ += kHex[c >> 4];
              out_ += kHex[c & 0xf];
            } else {
              out_ += ch;
            }
        }
      }
      if (bad == std::string_view::npos) break;
      out_ += "\\ufffd";
      s.remove_prefix(bad + 1);
    }
    out_ += '"';
  }

  std::string out_;
  bool comma_ = false;  // a value was written at this level, so the next one needs ','
};

// ---- YAML node -> emitter ---------------------------------------------------------------

constexpr int kMaxDepth = 100;
constexpr std::string_view kCoreTag = "tag:yaml.org,2002:";

bool OneOf(std::string_view s, std::initializer_list<std::string_view> options) {
  for (std::string_view o : options) {
    if (s == o) return true;
  }
  return false;
}

bool IsNullText(std::string_view s) { return OneOf(s, {"", "~", "null", "Null", "NULL"}); }

// YAML 1.1 booleans, as go-yaml v2 (under sigs.k8s.io/yaml) resolves them.
std::optional<bool> BoolText(std::string_view s) {
  if (OneOf(s, {"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"})) return true;
  if (OneOf(s, {"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"})) return false;
  return std::nullopt;
}

// Go's strconv.ParseInt(s, 0, 64) after dropping '_': sign, then 0x / 0o / 0b / 0 prefixes.
std::optional<int64_t> IntText(std::string_view text) {
  std::string s;
  for (char c : text) {
    if (c != '_') s += c;
  }
  std::string_view v = s;
  bool negative = false;
  if (!v.empty() && (v[0] == '+' || v[0] == '-')) {
    negative = v[0] == '-';
    v.remove_prefix(1);
  }
  int base = 10;
  if (v.size() > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) base = 16, v.remove_prefix(2);
  else if (v.size() > 2 && v[0] == '0' && (v[1] == 'o' || v[1] == 'O')) base = 8, v.remove_prefix(2);
  else if (v.size() > 2 && v[0] == '0' && (v[1] == 'b' || v[1] == 'B')) base = 2, v.remove_prefix(2);
  else if (v.size() > 1 && v[0] == '0') base = 8, v.remove_prefix(1);
  if (v.empty()) return std::nullopt;
  uint64_t magnitude = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), magnitude, base);
  if (ec != std::errc() || end != v.data() + v.size()) return std::nullopt;
  if (negative) {
    if (magnitude > static_cast<uint64_t>(INT64_MAX) + 1) return std::nullopt;
    return static_cast<int64_t>(0 - magnitude);
  }
  if (magnitude > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
  return static_cast<int64_t>(magnitude);
}

// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?, then the value.
std::optional<double> FloatText(std::string_view s) {
  size_t i = 0;
  auto digits = [&] {
    size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i - start;
  };
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (digits() == 0) return std::nullopt;
  } else {
    if (digits() == 0) return std::nullopt;
    if (i < s.size() && s[i] == '.') {
      ++i;
      digits();
    }
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (digits() == 0) return std::nullopt;
  }
  if (i != s.size()) return std::nullopt;
  std::string copy(s);
  return std::strtod(copy.c_str(), nullptr);
}

bool IsNonFiniteText(std::string_view s) {
  return OneOf(s, {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF", ".nan", ".NaN",
                   ".NAN"});
}

Status EmitFloat(double v, std::string_view text, Emitter& out) {
  if (!std::isfinite(v)) return InvalidArgument("float " + std::string(text) + " has no JSON form");
  out.Double(v);
  return Status::OK();
}

// A plain (unquoted, untagged) scalar.
Status EmitPlain(const std::string& s, Emitter& out) {
  if (IsNullText(s)) {
    out.Null();
  } else if (auto b = BoolText(s)) {
    out.Bool(*b);
  } else if (auto i = IntText(s)) {
    out.Int(*i);
  } else if (auto f = FloatText(s)) {
    return EmitFloat(*f, s, out);
  } else if (IsNonFiniteText(s)) {
    return InvalidArgument("float " + s + " has no JSON form");
  } else {
    out.String(s);
  }
  return Status::OK();
}

bool PlainIsString(std::string_view s) {
  return !IsNullText(s) && !BoolText(s) && !IntText(s) && !FloatText(s) && !IsNonFiniteText(s);
}

Status EmitScalar(const YAML::Node& n, Emitter& out) {
  const std::string& tag = n.Tag();
  const std::string& s = n.Scalar();
  if (tag == "?" || tag.empty()) return EmitPlain(s, out);
  if (tag.compare(0, kCoreTag.size(), kCoreTag) != 0) {
    out.String(s);  // "!" (quoted or block scalar) or an application tag
    return Status::OK();
  }
  std::string_view type = std::string_view(tag).substr(kCoreTag.size());
  if (type == "int") {
    auto i = IntText(s);
    if (!i) return InvalidArgument("cannot decode !!int `" + s + "`");
    out.Int(*i);
  } else if (type == "float") {
    auto f = FloatText(s);
    if (!f) return InvalidArgument("cannot decode !!float `" + s + "`");
    return EmitFloat(*f, s, out);
  } else if (type == "bool") {
    auto b = BoolText(s);
    if (!b) return InvalidArgument("cannot decode !!bool `" + s + "`");
    out.Bool(*b);
  } else if (type == "null") {
    out.Null();
  } else {
    out.String(s);
  }
  return Status::OK();
}

Status Walk(const YAML::Node& n, Emitter& out, int depth) {
  if (depth > kMaxDepth) return InvalidArgument("nesting deeper than " + std::to_string(kMaxDepth) + " levels");
  switch (n.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      out.Null();
      return Status::OK();
    case YAML::NodeType::Scalar:
      return EmitScalar(n, out);
    case YAML::NodeType::Sequence:
      out.BeginSeq();
      for (const YAML::Node& item : n) {
        if (Status s = Walk(item, out, depth + 1); !s.ok()) return s;
      }
      out.EndSeq();
      return Status::OK();
    case YAML::NodeType::Map: {
      out.BeginMap();
      std::set<std::string, std::less<>> seen;
      for (const auto& kv : n) {
        if (!kv.first.IsScalar()) return InvalidArgument("map keys must be scalars");
        const std::string& key = kv.first.Scalar();
        if (!seen.insert(key).second) return InvalidArgument("duplicate key \"" + key + "\"");
        out.Key(key);
        if (Status s = Walk(kv.second, out, depth + 1); !s.ok()) return s;
      }
      out.EndMap();
      return Status::OK();
    }
  }
  return InvalidArgument("unknown YAML node type");
}

}  // namespace

std::unique_ptr<Emitter> NewYamlEmitter() { return std::make_unique<YamlEmitter>(); }
std::unique_ptr<Emitter> NewJsonEmitter() { return std::make_unique<JsonEmitter>(); }

Status EmitYamlNode(const YAML::Node& node, Emitter& out) { return Walk(node, out, 0); }

StatusOr<std::string> YamlToJson(const YAML::Node& node) {
  auto out = NewJsonEmitter();
  if (Status s = EmitYamlNode(node, *out); !s.ok()) return s;
  return out->Text();
}

}  // namespace ksched::config
