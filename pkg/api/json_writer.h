// JsonWriter: a string-building JSON writer for the objects ksched writes itself (the
// Binding and status patches on the binding hot path, events, the debug endpoints).
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/api/json.h"
#include "pkg/api/quantity.h"
#include "pkg/api/types.h"

namespace ksched::api {

// Tracks only whether the next value needs a comma; keys reset it, so objects and
// arrays nest without a stack.
class JsonWriter {
 public:
  explicit JsonWriter(std::string& out) : out_(out) {}

  void BeginObject() { Sep(); out_ += '{'; comma_ = false; }
  void EndObject() { out_ += '}'; comma_ = true; }
  void BeginArray() { Sep(); out_ += '['; comma_ = false; }
  void EndArray() { out_ += ']'; comma_ = true; }
  void Key(std::string_view k) {
    Sep();
    AppendJsonString(out_, k);
    out_ += ':';
    comma_ = false;
  }
  void String(std::string_view s) { Sep(); AppendJsonString(out_, s); comma_ = true; }
  void Int(int64_t v) {
    Sep();
    char buf[24];
    auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
    out_.append(buf, end);
    comma_ = true;
  }
  void Bool(bool b) { Sep(); out_ += b ? "true" : "false"; comma_ = true; }
  void Null() { Sep(); out_ += "null"; comma_ = true; }
  // A value that is already JSON (e.g. an object read from the server, echoed back).
  void Raw(std::string_view json) { Sep(); out_ += json; comma_ = true; }
  void QuantityValue(Quantity q) { Sep(); out_ += '"'; AppendQuantity(out_, q); out_ += '"'; comma_ = true; }

  void Field(std::string_view k, std::string_view v) { Key(k); String(v); }
  void FieldIfSet(std::string_view k, std::string_view v) {
    if (!v.empty()) Field(k, v);
  }
  void IntField(std::string_view k, int64_t v) { Key(k); Int(v); }
  void StringMapField(std::string_view k, const StringMap& m) {
    if (m.empty()) return;
    Key(k);
    BeginObject();
    for (const auto& [key, value] : m) Field(key, value);
    EndObject();
  }
  void ResourcesField(std::string_view k, const ResourceList& list) {
    if (list.empty()) return;
    Key(k);
    BeginObject();
    for (const auto& [name, q] : list) {
      Key(name);
      QuantityValue(q);
    }
    EndObject();
  }
  void StringsField(std::string_view k, const std::vector<std::string>& v) {
    if (v.empty()) return;
    Key(k);
    BeginArray();
    for (const std::string& s : v) String(s);
    EndArray();
  }
  // Writes a non-empty array field (a std::vector or SharedVector), calling each(item)
  // per element.
  template <typename V, typename F>
  void ArrayField(std::string_view k, const V& v, F&& each) {
    if (v.empty()) return;
    Key(k);
    BeginArray();
    for (const auto& item : v) each(item);
    EndArray();
  }

 private:
  void Sep() {
    if (comma_) out_ += ',';
  }
  std::string& out_;
  bool comma_ = false;
};

// Values several encoders write (json_encode.cc): a node selector term with its
// matchExpressions/matchFields, and a toleration (pods' and DRA requests' alike).
void WriteNodeSelectorTerm(JsonWriter& w, const NodeSelectorTerm& t);
void WriteToleration(JsonWriter& w, const Toleration& t);

}  // namespace ksched::api
