// Strict YAML-to-struct decoding helpers (internal to config/): every mapping is checked for
// unknown and duplicate keys, every visited node is counted against a budget (aliases make
// yaml-cpp graphs shared, so a small file can describe a huge tree), and type mismatches
// stop decoding with a message naming the field path.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/duration.h"

namespace ksched::config::internal {

class Decoder {
 public:
  explicit Decoder(size_t* node_budget) : budget_(node_budget) {}

  bool ok() const { return fatal_.empty(); }
  const std::string& fatal() const { return fatal_; }
  // "unknown field \"profiles[0].foo\"", "duplicate field \"parallelism\"".
  const std::vector<std::string>& strict_errors() const { return strict_; }
  const std::string& path() const { return path_; }

  void Fail(std::string message);
  void TypeError(const YAML::Node& n, std::string_view want);

  // Calls field(key, value) per entry of a mapping; field returns false for an unknown key.
  // A null node is an absent object.
  void Object(const YAML::Node& n, const std::function<bool(const std::string&, const YAML::Node&)>& field);
  // Calls elem(value) per entry of a sequence with the path at "[i]". Null is an empty list.
  void List(const YAML::Node& n, const std::function<void(const YAML::Node&)>& elem);

  // Scalars. A null value leaves *out unchanged (JSON null into a Go value).
  void Int32(const YAML::Node& n, int32_t* out);
  void Int32(const YAML::Node& n, std::optional<int32_t>* out);
  void Int64(const YAML::Node& n, int64_t* out);
  void Float(const YAML::Node& n, float* out);
  void Bool(const YAML::Node& n, bool* out);
  void String(const YAML::Node& n, std::string* out);
  void String(const YAML::Node& n, std::optional<std::string>* out);
  void StringList(const YAML::Node& n, std::vector<std::string>* out);
  void Dur(const YAML::Node& n, Duration* out);
  // Walks any value (for fields ksched ignores), enforcing the budget and a depth limit.
  void Skip(const YAML::Node& n, int depth = 0);

  // Path helpers: Push returns the length to restore with Pop.
  size_t PushField(std::string_view key);
  size_t PushIndex(size_t i);
  void Pop(size_t mark) { path_.resize(mark); }

 private:
  bool Visit(const YAML::Node& n);
  // JSON type a plain/quoted scalar resolves to, as YAML 1.1 (go-yaml v2) would decode it.
  enum class Kind { kNull, kBool, kInt, kFloat, kString, kObject, kArray };
  static Kind KindOf(const YAML::Node& n);
  bool Integer(const YAML::Node& n, int64_t lo, int64_t hi, std::string_view type, int64_t* out);

  size_t* budget_;
  std::string path_;
  std::string fatal_;
  std::vector<std::string> strict_;
};

inline constexpr int kMaxValueDepth = 200;

}  // namespace ksched::config::internal
