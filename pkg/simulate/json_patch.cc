#include "pkg/simulate/json_patch.h"

#include <simdjson.h>

#include <vector>

#include "pkg/api/json.h"
#include "pkg/simulate/json_dom.h"

namespace ksched::simulate {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;
using simdjson::dom::object;

void WriteRaw(std::string& out, element e) { out += simdjson::minify(e); }

// The patch value as it is added where the target has nothing: nulls in it say
// "absent", so they are dropped at every depth.
void WriteWithoutNulls(std::string& out, element e) {
  if (e.type() != element_type::OBJECT) {
    WriteRaw(out, e);
    return;
  }
  out += '{';
  bool first = true;
  for (auto [key, value] : object(e)) {
    if (value.is_null()) continue;
    if (!first) out += ',';
    first = false;
    api::AppendJsonString(out, key);
    out += ':';
    WriteWithoutNulls(out, value);
  }
  out += '}';
}

std::optional<std::string_view> TypeOf(element item) {
  if (item.type() != element_type::OBJECT) return std::nullopt;
  auto t = item["type"];
  if (t.error() || t.value().type() != element_type::STRING) return std::nullopt;
  return std::string_view(t.value());
}

bool MergeableByType(element list) {
  if (list.type() != element_type::ARRAY) return false;
  for (element item : list.get_array()) {
    if (!TypeOf(item)) return false;
  }
  return true;
}

void Merge(std::string& out, element target, element patch, std::string_view key);

// Conditions merged by type: the target's in order, each replaced by the patch's of the
// same type merged into it, then the patch's new types.
void MergeByType(std::string& out, element target, element patch) {
  out += '[';
  bool first = true;
  auto sep = [&] {
    if (!first) out += ',';
    first = false;
  };
  for (element item : target.get_array()) {
    sep();
    std::optional<element> replacement;
    for (element p : patch.get_array()) {
      if (TypeOf(p) == TypeOf(item)) replacement = p;
    }
    if (replacement) {
      Merge(out, item, *replacement, "");
    } else {
      WriteRaw(out, item);
    }
  }
  for (element p : patch.get_array()) {
    bool known = false;
    for (element item : target.get_array()) known = known || TypeOf(item) == TypeOf(p);
    if (known) continue;
    sep();
    WriteWithoutNulls(out, p);
  }
  out += ']';
}

void Merge(std::string& out, element target, element patch, std::string_view key) {
  if (key == "conditions" && MergeableByType(target) && MergeableByType(patch)) {
    MergeByType(out, target, patch);
    return;
  }
  if (patch.type() != element_type::OBJECT || target.type() != element_type::OBJECT) {
    WriteWithoutNulls(out, patch);
    return;
  }
  const object t(target), p(patch);
  out += '{';
  bool first = true;
  auto sep = [&] {
    if (!first) out += ',';
    first = false;
  };
  for (auto [k, value] : t) {
    auto in_patch = p[k];
    if (in_patch.error()) {
      sep();
      api::AppendJsonString(out, k);
      out += ':';
      WriteRaw(out, value);
      continue;
    }
    if (in_patch.value().is_null()) continue;
    sep();
    api::AppendJsonString(out, k);
    out += ':';
    Merge(out, value, in_patch.value(), k);
  }
  for (auto [k, value] : p) {
    if (!t[k].error() || value.is_null()) continue;
    sep();
    api::AppendJsonString(out, k);
    out += ':';
    WriteWithoutNulls(out, value);
  }
  out += '}';
}

}  // namespace

StatusOr<std::string> MergePatch(std::string_view target, std::string_view patch) {
  thread_local simdjson::dom::parser target_parser, patch_parser;
  auto t = target_parser.parse(target.data(), target.size());
  if (t.error()) return InvalidArgument(std::string("the object is not JSON: ") + simdjson::error_message(t.error()));
  auto p = patch_parser.parse(patch.data(), patch.size());
  if (p.error()) return InvalidArgument(std::string("the patch is not JSON: ") + simdjson::error_message(p.error()));
  std::string out;
  out.reserve(target.size() + patch.size());
  Merge(out, t.value(), p.value(), "");
  return out;
}

StatusOr<std::optional<std::string>> StringAt(std::string_view json, std::string_view path) {
  thread_local simdjson::dom::parser parser;
  auto doc = parser.parse(json.data(), json.size());
  if (doc.error()) return InvalidArgument(std::string("not JSON: ") + simdjson::error_message(doc.error()));
  auto s = StringViewAt(doc.value(), path);
  return s ? std::optional<std::string>(std::string(*s)) : std::nullopt;
}

}  // namespace ksched::simulate
