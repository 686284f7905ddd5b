// Edits of whole JSON objects for the in-memory API server: a JSON merge patch (RFC 7386)
// with the one strategic-merge rule the scheduler's own patches rely on, and reads of a
// few metadata fields without decoding the object.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "pkg/util/status.h"

namespace ksched::simulate {

// `target` with `patch` merged in: objects merge key by key, null deletes a key, any
// other value replaces. As the API server's strategic merge for the lists the scheduler
// patches, a list named "conditions" whose items are objects merges by their "type".
// Compact JSON out; an error names the document that is not JSON.
StatusOr<std::string> MergePatch(std::string_view target, std::string_view patch);

// A string field at a dotted path ("metadata.name"); nullopt when absent, null or not
// a string. An error when `json` is not JSON.
StatusOr<std::optional<std::string>> StringAt(std::string_view json, std::string_view path);

}  // namespace ksched::simulate
