// Internal to pkg/server: the OpenSSL and socket setup of the secure server (io_loop.h).
#pragma once

#include <openssl/ssl.h>

#include <memory>
#include <string>

#include "pkg/server/server.h"
#include "pkg/util/status.h"

namespace ksched::server {

template <typename T, void (*Free)(T*)>
struct OsslDeleter {
  void operator()(T* p) const { Free(p); }
};
using SslCtxPtr = std::unique_ptr<SSL_CTX, OsslDeleter<SSL_CTX, SSL_CTX_free>>;
using SslPtr = std::unique_ptr<SSL, OsslDeleter<SSL, SSL_free>>;

// A server context for `pair` (PEM certificate chain and key): TLS 1.2+, no
// renegotiation, no session resumption. A pair that does not load or match fails here.
// `tls13_only` (--tls-min-version=VersionTLS13) refuses TLS 1.2; `tls12_ciphers`
// (--tls-cipher-suites, in OpenSSL's names) replaces the default TLS 1.2 suites.
StatusOr<SslCtxPtr> NewServerTlsContext(const CertKeyPair& pair, bool tls13_only = false,
                                        const std::string& tls12_ciphers = "");

// A server session over the non-blocking socket `fd` (not owned). Its I/O uses
// send(MSG_NOSIGNAL) (OpenSSL's socket BIO write()s, and a peer that hung up would
// raise SIGPIPE). Null when OpenSSL cannot allocate it.
SslPtr NewServerSession(SSL_CTX* ctx, int fd);

// A non-blocking listening socket with SO_REUSEADDR on `bind_address` ("0.0.0.0", "::",
// "[::1]", "127.0.0.1", a host name; "" is "0.0.0.0") and `port` (0: the kernel picks).
// "::" takes IPv4 connections too, as Go's listener does.
StatusOr<int> ListenTcp(const std::string& bind_address, int port);

// The bound port of a listening socket.
int LocalPort(int fd);

// OpenSSL's queued errors as one line (and the queue emptied).
std::string OpenSslErrors();
std::string ErrnoText(int err);

}  // namespace ksched::server
