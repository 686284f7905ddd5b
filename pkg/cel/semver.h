// semver() of the Kubernetes semver library: api::SemVersion's strict semver 2.0.0,
// with the error messages of github.com/blang/semver/v4 Parse (which upstream uses)
// and library/semverlib.go's optional normalization.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "pkg/api/resource.h"

namespace ksched::cel {

// Parses `text`; when it is not a version, sets *error (if given) to blang/semver's
// message. With `normalize`: a leading "v" is dropped, missing minor/patch become 0
// and leading zeros are removed (semverlib.go normalizeAndParse).
std::optional<api::SemVersion> ParseSemver(std::string_view text, bool normalize, std::string* error);

}  // namespace ksched::cel
