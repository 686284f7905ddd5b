// Internal to pkg/server: the request routing and authorization decision, kept apart from
// the sockets (io_loop.h) so it can be tested without them.
#pragma once

#include <string>

#include "pkg/server/server.h"

namespace ksched::server {

// Whether `path` is served without a token (exact match, or prefix match for an entry
// ending in "*").
bool IsAlwaysAllowed(const ServerOptions& options, const std::string& path);

// method: "GET", ...; authorization: the raw Authorization header ("" when absent).
HandlerResponse HandleRequest(const ServerOptions& options, const std::string& method, const std::string& path,
                              const std::string& authorization);

}  // namespace ksched::server
