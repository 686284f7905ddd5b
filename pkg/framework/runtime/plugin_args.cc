#include "pkg/framework/runtime/plugin_args.h"

#include <charconv>
#include <cstdlib>
#include <limits>
#include <optional>
#include <utility>

#include "config/emitter.h"
#include "config/field_error.h"

namespace ksched::framework::runtime {
namespace {

// A scalar's JSON form under Kubernetes' YAML typing (config::YamlToJson), reduced to
// what the reads need: its kind as encoding/json names it, and its text.
struct Scalar {
  std::string_view kind;  // "null", "bool", "number", "string", "object", "array"
  std::string text;       // the JSON text of a bool or number, the value of a string
  bool integer = false;   // a number without fraction or exponent
};

Scalar Classify(const YAML::Node& n) {
  if (n.IsMap()) return {"object", ""};
  if (n.IsSequence()) return {"array", ""};
  if (!n.IsDefined() || n.IsNull()) return {"null", ""};
  auto json = config::YamlToJson(n);
  if (!json.ok() || json->empty()) return {"string", n.Scalar()};  // non-finite floats: leave to the type check
  const std::string& j = *json;
  if (j == "null") return {"null", ""};
  if (j == "true" || j == "false") return {"bool", j};
  if (j.front() == '"') return {"string", n.Scalar()};
  return {"number", j, j.find_first_of(".eE") == std::string::npos};
}

}  // namespace

PluginArgsReader::PluginArgsReader(std::string_view plugin, const config::PluginArgs& args) : plugin_(plugin) {
  const auto* raw = std::get_if<config::RawArgs>(&args);
  if (raw == nullptr) {
    // No args (std::monostate); anything else is an in-tree plugin's typed args, which
    // this reader is not for.
    if (!std::holds_alternative<std::monostate>(args)) Fail("the args are an in-tree plugin's, not raw YAML");
    return;
  }
  try {
    root_ = YAML::Load(raw->yaml);
  } catch (const YAML::Exception& e) {
    Fail(std::string("parsing args: ") + e.what());
    return;
  }
  Scalar s = Classify(root_);
  if (s.kind == "null") {
    root_ = YAML::Node();
    return;
  }
  if (s.kind != "object") {
    Fail(std::string("cannot unmarshal ").append(s.kind).append(" into args of type object"));
    return;
  }
  // apiVersion and kind are the object's type, as for in-tree args: a kind, when given,
  // must be the plugin's own.
  read_.insert("apiVersion");
  read_.insert("kind");
  if (YAML::Node kind = root_["kind"]; kind.IsScalar() && kind.Scalar() != plugin_ + "Args") {
    Fail("args were not of type " + plugin_ + "Args, got " + kind.Scalar());
  }
}

void PluginArgsReader::Fail(std::string message) {
  if (decode_error_.empty()) decode_error_ = std::move(message);
}

bool PluginArgsReader::Has(std::string_view field) const {
  if (!root_.IsMap()) return false;
  YAML::Node n = root_[std::string(field)];
  return n.IsDefined() && !n.IsNull();
}

YAML::Node PluginArgsReader::Node(std::string_view field) {
  read_.emplace(field);
  if (!root_.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  return std::as_const(root_)[std::string(field)];  // the const lookup adds no entry
}

PluginArgsReader& PluginArgsReader::Optional(std::string_view field, Target out) {
  YAML::Node n = Node(field);
  if (n.IsDefined()) Decode(n, std::string(field), out);
  return *this;
}

PluginArgsReader& PluginArgsReader::Required(std::string_view field, Target out) {
  if (!Has(field)) invalid_.push_back(config::FieldRequired(field));
  return Optional(field, out);
}

PluginArgsReader& PluginArgsReader::Invalid(std::string_view field, int64_t value, std::string_view detail) {
  invalid_.push_back(config::FieldInvalid(field, value, detail));
  return *this;
}

PluginArgsReader& PluginArgsReader::Invalid(std::string_view field, std::string_view value, std::string_view detail) {
  invalid_.push_back(config::FieldInvalidString(field, value, detail));
  return *this;
}

void PluginArgsReader::Decode(const YAML::Node& value, const std::string& path, Target out) {
  if (!decode_error_.empty()) return;
  const Scalar s = Classify(value);
  if (s.kind == "null") return;  // JSON null into a Go value: unchanged
  auto type_error = [&](std::string_view want) {
    std::string got(s.kind);
    if (s.kind != "object" && s.kind != "array") got.append(" ").append(config::GoQuote(s.text));
    Fail("cannot unmarshal " + got + " into " + config::GoQuote(path) + " of type " + std::string(want));
  };
  auto integer = [&](int64_t lo, int64_t hi, std::string_view type) -> std::optional<int64_t> {
    if (s.kind != "number" || !s.integer) {
      type_error(type);
      return std::nullopt;
    }
    int64_t v = 0;
    auto [end, ec] = std::from_chars(s.text.data(), s.text.data() + s.text.size(), v);
    if (ec != std::errc() || end != s.text.data() + s.text.size() || v < lo || v > hi) {
      Fail("cannot unmarshal number " + s.text + " into " + config::GoQuote(path) + " of type " + std::string(type) +
           ": out of range");
      return std::nullopt;
    }
    return v;
  };
  auto each_entry = [&](std::string_view type, auto&& decode_one) {
    if (!value.IsMap()) return type_error(type);
    for (auto it = value.begin(); it != value.end() && decode_error_.empty(); ++it) {
      const std::string key = it->first.Scalar();
      decode_one(key, it->second, path + "." + key);
    }
  };
  std::visit(
      [&](auto* target) {
        using T = std::remove_pointer_t<decltype(target)>;
        if constexpr (std::is_same_v<T, std::string>) {
          // sigs.k8s.io/yaml hands a string field the text of a number or bool too.
          if (s.kind == "object" || s.kind == "array") return type_error("string");
          *target = s.text;
        } else if constexpr (std::is_same_v<T, bool>) {
          if (s.kind != "bool") return type_error("bool");
          *target = s.text == "true";
        } else if constexpr (std::is_same_v<T, int32_t>) {
          if (auto v = integer(std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(), "int32"))
            *target = static_cast<int32_t>(*v);
        } else if constexpr (std::is_same_v<T, int64_t>) {
          if (auto v = integer(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), "int64"))
            *target = *v;
        } else if constexpr (std::is_same_v<T, double>) {
          if (s.kind != "number") return type_error("float64");
          *target = std::strtod(s.text.c_str(), nullptr);
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          if (!value.IsSequence()) return type_error("[]string");
          std::vector<std::string> list;
          for (size_t i = 0; i < value.size() && decode_error_.empty(); ++i) {
            std::string e;
            Decode(value[i], path + "[" + std::to_string(i) + "]", &e);
            list.push_back(std::move(e));
          }
          if (decode_error_.empty()) *target = std::move(list);
        } else if constexpr (std::is_same_v<T, std::map<std::string, std::string>>) {
          std::map<std::string, std::string> m;
          each_entry("map[string]string", [&](const std::string& k, const YAML::Node& v, const std::string& p) {
            Decode(v, p, &m[k]);
          });
          if (decode_error_.empty()) *target = std::move(m);
        } else if constexpr (std::is_same_v<T, std::map<std::string, int64_t>>) {
          std::map<std::string, int64_t> m;
          each_entry("map[string]int64", [&](const std::string& k, const YAML::Node& v, const std::string& p) {
            Decode(v, p, &m[k]);
          });
          if (decode_error_.empty()) *target = std::move(m);
        }
      },
      out);
}

ksched::Status PluginArgsReader::Done() const {
  if (!decode_error_.empty()) return InvalidArgument("decoding args for plugin " + plugin_ + ": " + decode_error_);
  std::string unknown;
  if (root_.IsMap()) {
    for (auto it = root_.begin(); it != root_.end(); ++it) {
      const std::string& key = it->first.Scalar();
      if (read_.contains(key)) continue;
      unknown.append(unknown.empty() ? "" : ", ").append("unknown field ").append(config::GoQuote(key));
    }
  }
  if (!unknown.empty()) {
    return InvalidArgument("decoding args for plugin " + plugin_ + ": strict decoding error: " + unknown);
  }
  ksched::Status s = config::AggregateErrors(invalid_);
  return s.ok() ? s : InvalidArgument("invalid args for plugin " + plugin_ + ": " + s.message());
}

}  // namespace ksched::framework::runtime
