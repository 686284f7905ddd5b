// field.Error and utilerrors.Aggregate text, as apimachinery prints them, so users see the
// messages they know from kube-scheduler: `<path>: <Type>: <value>: <detail>`.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/util/status.h"

namespace ksched::config {

// Go's %q for a string.
std::string GoQuote(std::string_view s);

// Each returns the complete error line.
std::string FieldInvalid(std::string_view path, std::string_view rendered_value, std::string_view detail);
inline std::string FieldInvalid(std::string_view path, int64_t value, std::string_view detail) {
  return FieldInvalid(path, std::to_string(value), detail);
}
inline std::string FieldInvalidString(std::string_view path, std::string_view value, std::string_view detail) {
  return FieldInvalid(path, GoQuote(value), detail);
}
std::string FieldRequired(std::string_view path, std::string_view detail = {});
std::string FieldDuplicate(std::string_view path, std::string_view rendered_value);
std::string FieldForbidden(std::string_view path, std::string_view detail);
std::string FieldNotSupported(std::string_view path, std::string_view value,
                              const std::vector<std::string_view>& supported);

// utilerrors.NewAggregate(...).Error(): duplicates dropped, one message as is, several as
// "[a, b]". Returns OK for an empty list.
Status AggregateErrors(const std::vector<std::string>& errors);

}  // namespace ksched::config
