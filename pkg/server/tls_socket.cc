#include "pkg/server/tls_socket.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace ksched::server {
namespace {

// Go's defaults for TLS 1.2: ECDHE key exchange and AEAD ciphers only.
constexpr char kTls12Ciphers[] =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"
    "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

using BioPtr = std::unique_ptr<BIO, OsslDeleter<BIO, BIO_free_all>>;
using X509Ptr = std::unique_ptr<X509, OsslDeleter<X509, X509_free>>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, OsslDeleter<EVP_PKEY, EVP_PKEY_free>>;

BioPtr MemBio(const std::string& data) { return BioPtr(BIO_new_mem_buf(data.data(), static_cast<int>(data.size()))); }

// A BIO over a non-blocking socket that sends with MSG_NOSIGNAL: OpenSSL's socket BIO
// write()s, and a peer that hung up would kill the process with SIGPIPE.
int SocketOf(BIO* bio) { return static_cast<int>(reinterpret_cast<intptr_t>(BIO_get_data(bio))); }

int SocketWrite(BIO* bio, const char* data, int len) {
  BIO_clear_retry_flags(bio);
  ssize_t n = ::send(SocketOf(bio), data, static_cast<size_t>(len), MSG_NOSIGNAL);
  if (n >= 0) return static_cast<int>(n);
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) BIO_set_retry_write(bio);
  return -1;
}

int SocketRead(BIO* bio, char* data, int len) {
  BIO_clear_retry_flags(bio);
  ssize_t n = ::recv(SocketOf(bio), data, static_cast<size_t>(len), 0);
  if (n >= 0) return static_cast<int>(n);
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) BIO_set_retry_read(bio);
  return -1;
}

long SocketCtrl(BIO*, int cmd, long, void*) { return cmd == BIO_CTRL_FLUSH ? 1 : 0; }

int SocketCreate(BIO* bio) {
  BIO_set_init(bio, 1);
  return 1;
}

const BIO_METHOD* SocketBioMethod() {
  // Built once and kept for the life of the process, as OpenSSL's own methods are.
  static BIO_METHOD* const method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "ksched socket");
    if (m == nullptr) return m;
    BIO_meth_set_write(m, SocketWrite);
    BIO_meth_set_read(m, SocketRead);
    BIO_meth_set_ctrl(m, SocketCtrl);
    BIO_meth_set_create(m, SocketCreate);
    return m;
  }();
  return method;
}

}  // namespace

// strerror_r, not std::system_category(): clang's UBSan vptr check trips over libstdc++'s
// error_category (built by GCC) in the sanitizer builds.
std::string ErrnoText(int err) {
  char buf[256];
  return ::strerror_r(err, buf, sizeof(buf));  // the GNU variant: returns the text
}

std::string OpenSslErrors() {
  std::string out;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof(buf));
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out.empty() ? "unknown OpenSSL error" : out;
}

StatusOr<SslCtxPtr> NewServerTlsContext(const CertKeyPair& pair, bool tls13_only, const std::string& tls12_ciphers) {
  ERR_clear_error();
  SslCtxPtr ctx(SSL_CTX_new(TLS_server_method()));
  if (!ctx) return Internal("creating the TLS context: " + OpenSslErrors());
  SSL_CTX_set_min_proto_version(ctx.get(), tls13_only ? TLS1_3_VERSION : TLS1_2_VERSION);
  // Renegotiation is a way to make the server work hard for free; nothing needs it.
  SSL_CTX_set_options(ctx.get(), SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  // Partial writes so a large /metrics body goes out as the socket takes it; released
  // buffers so an idle connection holds no record buffers.
  SSL_CTX_set_mode(ctx.get(),
                   SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS);
  SSL_CTX_set_session_cache_mode(ctx.get(), SSL_SESS_CACHE_OFF);
  SSL_CTX_set_num_tickets(ctx.get(), 0);
  const char* ciphers = tls12_ciphers.empty() ? kTls12Ciphers : tls12_ciphers.c_str();
  if (!tls13_only && SSL_CTX_set_cipher_list(ctx.get(), ciphers) != 1)
    return InvalidArgument("TLS cipher suites \"" + std::string(ciphers) + "\": " + OpenSslErrors());

  BioPtr cert_bio = MemBio(pair.cert_pem);
  X509Ptr leaf(cert_bio ? PEM_read_bio_X509_AUX(cert_bio.get(), nullptr, nullptr, nullptr) : nullptr);
  if (!leaf || SSL_CTX_use_certificate(ctx.get(), leaf.get()) != 1) {
    return InvalidArgument("the serving certificate is not a PEM certificate: " + OpenSslErrors());
  }
  while (X509* extra = PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr)) {
    if (SSL_CTX_add0_chain_cert(ctx.get(), extra) != 1) {
      X509_free(extra);
      return InvalidArgument("the serving certificate chain: " + OpenSslErrors());
    }
  }
  ERR_clear_error();  // the end of the chain reads as "no start line"
  BioPtr key_bio = MemBio(pair.key_pem);
  // No passphrase prompt on the terminal for an encrypted key: it just fails to load.
  pem_password_cb* no_passphrase = [](char*, int, int, void*) { return 0; };
  PkeyPtr key(key_bio ? PEM_read_bio_PrivateKey(key_bio.get(), nullptr, no_passphrase, nullptr) : nullptr);
  if (!key || SSL_CTX_use_PrivateKey(ctx.get(), key.get()) != 1) {
    return InvalidArgument("the serving key is not a PEM private key: " + OpenSslErrors());
  }
  if (SSL_CTX_check_private_key(ctx.get()) != 1) {
    return InvalidArgument("the serving key does not match the certificate: " + OpenSslErrors());
  }
  return ctx;
}

SslPtr NewServerSession(SSL_CTX* ctx, int fd) {
  const BIO_METHOD* method = SocketBioMethod();
  SslPtr ssl(method != nullptr ? SSL_new(ctx) : nullptr);
  BIO* bio = ssl ? BIO_new(method) : nullptr;
  if (bio == nullptr) return nullptr;
  BIO_set_data(bio, reinterpret_cast<void*>(static_cast<intptr_t>(fd)));
  SSL_set_bio(ssl.get(), bio, bio);  // the session owns the BIO
  SSL_set_accept_state(ssl.get());
  return ssl;
}

StatusOr<int> ListenTcp(const std::string& bind_address, int port) {
  std::string host = bind_address.empty() ? "0.0.0.0" : bind_address;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  const std::string where = (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); rc != 0) {
    return InvalidArgument("bind address " + bind_address + ": " + ::gai_strerror(rc));
  }
  std::unique_ptr<addrinfo, void (*)(addrinfo*)> owned(found, ::freeaddrinfo);
  int fd = ::socket(found->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return Unavailable("listen on " + where + ": " + ErrnoText(errno));
  int one = 1, zero = 0;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (found->ai_family == AF_INET6) ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
  if (::bind(fd, found->ai_addr, found->ai_addrlen) != 0 || ::listen(fd, SOMAXCONN) != 0) {
    int err = errno;
    ::close(fd);
    return Unavailable("listen on " + where + ": " + ErrnoText(err));
  }
  return fd;
}

int LocalPort(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return 0;
  return ntohs(addr.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port
                                          : reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
}

}  // namespace ksched::server
