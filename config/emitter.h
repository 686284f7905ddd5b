// One walk, two outputs: the configuration encoders write to an Emitter, which is either
// YAML (--write-config-to) or JSON (/configz). Also converts YAML documents to JSON with
// the scalar typing Kubernetes' YAML reader uses, e.g. to POST a manifest to the apiserver.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "pkg/util/status.h"

namespace ksched::config {

class Emitter {
 public:
  virtual ~Emitter() = default;
  virtual void BeginMap() = 0;
  virtual void EndMap() = 0;
  // A map with no entries, written inline ("{}") in YAML.
  virtual void EmptyMap() = 0;
  virtual void BeginSeq() = 0;
  virtual void EndSeq() = 0;
  // A list with no items, written inline ("[]") in YAML.
  virtual void EmptySeq() = 0;
  // Inside a map: the next value's key.
  virtual void Key(std::string_view key) = 0;
  virtual void String(std::string_view s) = 0;
  virtual void Int(int64_t v) = 0;
  // Shortest text that reads back as the same float ("50", "0.5").
  virtual void Float(float v) = 0;
  virtual void Bool(bool v) = 0;
  virtual void Null() = 0;
  // A double read from YAML (finite), shortest round-trip text.
  virtual void Double(double v) = 0;
  // A decoded YAML subtree kept verbatim (out-of-tree plugin args).
  virtual void Node(const YAML::Node& node) = 0;
  // The document so far. YAML ends with a newline; JSON is compact.
  virtual std::string Text() const = 0;
};

// Block-style YAML; strings a YAML reader would take for another type are quoted.
std::unique_ptr<Emitter> NewYamlEmitter();
// Compact JSON. Invalid UTF-8 in strings becomes U+FFFD, so the output is always valid.
std::unique_ptr<Emitter> NewJsonEmitter();

// Walks a YAML node into `out`, typing plain scalars as Kubernetes' YAML reader (YAML 1.1
// via sigs.k8s.io/yaml) does: null (~, null, empty), bool (true/false, yes/no, on/off,
// y/n in any of the usual casings), int (decimal, 0x hex, 0o/0 octal), float (decimal,
// exponent); anything quoted, block (|, >) or tagged !!str stays a string. Errors: a
// non-scalar or duplicate map key, nesting deeper than 100, a non-finite float.
Status EmitYamlNode(const YAML::Node& node, Emitter& out);

// EmitYamlNode into a JSON emitter.
StatusOr<std::string> YamlToJson(const YAML::Node& node);

// Offset of the first byte that is not well-formed UTF-8 (overlongs and surrogates
// included), or npos.
size_t InvalidUtf8Offset(std::string_view s);

}  // namespace ksched::config
