// Internal to pkg/server: the secure server's sockets. One thread owns the listener and
// every connection (epoll, non-blocking sockets, OpenSSL), parses requests with
// HttpRequestParser and enforces ServerOptions' limits and timeouts; the answers are
// computed elsewhere (see Server) and handed back with Respond().
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "pkg/server/http_request_parser.h"
#include "pkg/server/server.h"
#include "pkg/util/status.h"

namespace ksched::server {

class IoLoop {
 public:
  // Runs on the I/O thread for each complete request and must not block: it answers by
  // calling Respond(connection, ...) once, now or later, from any thread.
  using Dispatch = std::function<void(uint64_t connection, const HttpRequest& request)>;

  // Builds the TLS context from `cert` (a bad pair fails here, not at the first
  // handshake) and binds options.bind_address:options.secure_port. Nothing is served
  // until Start().
  static StatusOr<std::unique_ptr<IoLoop>> Listen(const ServerOptions& options, const CertKeyPair& cert);

  virtual ~IoLoop() = default;  // Stop()s

  // Starts the I/O thread.
  virtual void Start(Dispatch dispatch) = 0;
  // Closes the listener and every connection and joins the thread. Idempotent.
  virtual void Stop() = 0;
  // Thread-safe. The answer to a dispatched request; dropped when its connection has
  // been closed meanwhile (connections are named by ids that are never reused).
  virtual void Respond(uint64_t connection, HandlerResponse response) = 0;
  // The bound port (the kernel's choice when secure_port is 0).
  virtual int port() const = 0;
};

}  // namespace ksched::server
