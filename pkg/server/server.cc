#include "pkg/server/server.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <arpa/inet.h>
#include <sys/stat.h>

#include <atomic>
#include <fstream>
#include <sstream>

#include "pkg/server/handler.h"
#include "pkg/server/io_loop.h"
#include "pkg/util/log.h"
#include "pkg/util/worker_pool.h"

namespace ksched::server {
namespace {

StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(StatusCode::kNotFound, "open " + path + ": no such file");
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

Status WriteFile(const std::string& path, const std::string& data, mode_t mode) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Internal("write " + path + ": cannot open");
  out << data;
  out.close();
  if (!out) return Internal("write " + path + ": failed");
  ::chmod(path.c_str(), mode);
  return Status::OK();
}

bool IsIpAddress(const std::string& host) {
  unsigned char buf[16];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

std::string BioToString(BIO* bio) {
  char* data = nullptr;
  long len = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(len));
}

template <typename T, void (*Free)(T*)>
struct OsslDeleter {
  void operator()(T* p) const { Free(p); }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, OsslDeleter<EVP_PKEY, EVP_PKEY_free>>;
using X509Ptr = std::unique_ptr<X509, OsslDeleter<X509, X509_free>>;
using BioPtr = std::unique_ptr<BIO, OsslDeleter<BIO, BIO_free_all>>;
using ExtPtr = std::unique_ptr<X509_EXTENSION, OsslDeleter<X509_EXTENSION, X509_EXTENSION_free>>;

}  // namespace

StatusOr<CertKeyPair> GenerateSelfSignedCert(const std::vector<std::string>& extra_hosts) {
  PkeyPtr key(EVP_EC_gen("P-256"));
  if (!key) return Internal("generating the serving key failed");
  X509Ptr cert(X509_new());
  if (!cert) return Internal("allocating the serving certificate failed");
  X509_set_version(cert.get(), 2);  // v3, for the extensions
  unsigned char serial_bytes[8];
  if (RAND_bytes(serial_bytes, sizeof(serial_bytes)) != 1) return Internal("random serial failed");
  serial_bytes[0] &= 0x7f;  // positive
  BIGNUM* serial = BN_bin2bn(serial_bytes, sizeof(serial_bytes), nullptr);
  BN_to_ASN1_INTEGER(serial, X509_get_serialNumber(cert.get()));
  BN_free(serial);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -60 * 60);  // tolerate clock skew
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 365L * 24 * 60 * 60);
  X509_set_pubkey(cert.get(), key.get());

  const std::string cn = "localhost@ksched";
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509_set_issuer_name(cert.get(), name);

  std::string san = "DNS:localhost,IP:127.0.0.1";
  for (const std::string& host : extra_hosts) {
    if (host.empty() || host == "localhost" || host == "127.0.0.1") continue;
    if (host.find_first_of(",\n") != std::string::npos) continue;  // would corrupt the SAN list
    san += (IsIpAddress(host) ? ",IP:" : ",DNS:") + host;
  }
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert.get(), cert.get(), nullptr, nullptr, 0);
  for (const auto& [nid, value] : std::vector<std::pair<int, std::string>>{
           {NID_subject_alt_name, san},
           {NID_basic_constraints, "critical,CA:FALSE"},
           {NID_key_usage, "critical,digitalSignature,keyEncipherment"},
           {NID_ext_key_usage, "serverAuth"}}) {
    ExtPtr ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str()));
    if (!ext || X509_add_ext(cert.get(), ext.get(), -1) != 1) return Internal("adding extension " + value + " failed");
  }
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) return Internal("signing the serving certificate failed");

  BioPtr cert_bio(BIO_new(BIO_s_mem()));
  BioPtr key_bio(BIO_new(BIO_s_mem()));
  if (!cert_bio || !key_bio || PEM_write_bio_X509(cert_bio.get(), cert.get()) != 1 ||
      PEM_write_bio_PrivateKey(key_bio.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return Internal("encoding the serving certificate failed");
  }
  return CertKeyPair{BioToString(cert_bio.get()), BioToString(key_bio.get())};
}

StatusOr<CertKeyPair> LoadServingCert(const ServerOptions& options) {
  if (!options.tls_cert_file.empty() || !options.tls_private_key_file.empty()) {
    if (options.tls_cert_file.empty() || options.tls_private_key_file.empty()) {
      return InvalidArgument("--tls-cert-file and --tls-private-key-file must be given together");
    }
    auto cert = ReadFile(options.tls_cert_file);
    if (!cert.ok()) return cert.status();
    auto key = ReadFile(options.tls_private_key_file);
    if (!key.ok()) return key.status();
    return CertKeyPair{std::move(*cert), std::move(*key)};
  }
  std::string cert_path, key_path;
  if (!options.cert_dir.empty()) {
    cert_path = options.cert_dir + "/ksched.crt";
    key_path = options.cert_dir + "/ksched.key";
    auto cert = ReadFile(cert_path);
    auto key = ReadFile(key_path);
    if (cert.ok() && key.ok()) return CertKeyPair{std::move(*cert), std::move(*key)};
  }
  std::vector<std::string> hosts;
  if (!options.hostname.empty()) hosts.push_back(options.hostname);
  if (options.bind_address != "0.0.0.0" && options.bind_address != "::") hosts.push_back(options.bind_address);
  auto pair = GenerateSelfSignedCert(hosts);
  if (!pair.ok()) return pair.status();
  if (!options.cert_dir.empty()) {
    ::mkdir(options.cert_dir.c_str(), 0755);
    if (Status s = WriteFile(cert_path, pair->cert_pem, 0644); !s.ok()) return s;
    if (Status s = WriteFile(key_path, pair->key_pem, 0600); !s.ok()) return s;
  }
  return pair;
}

struct Server::Impl {
  // Declared first so it is destroyed last: pool tasks answer through it.
  std::unique_ptr<IoLoop> loop;
  // Anonymous requests that can take time (/metrics rendering, /configz, /debug/...).
  std::unique_ptr<WorkerPool> handler_pool;
  std::unique_ptr<WorkerPool> auth_pool;  // see ServerOptions::authorizer_workers
  std::atomic<bool> stopped{false};       // queued tasks skip their work after Stop()
};

namespace {

constexpr int kHandlerWorkers = 2;

// Cheap (the callbacks read a flag or two), so answered on the I/O thread.
bool IsHealthCheck(const std::string& path) { return path == "/healthz" || path == "/livez" || path == "/readyz"; }

}  // namespace

Server::Server(ServerOptions options) : options_(std::move(options)), impl_(std::make_unique<Impl>()) {}

Server::~Server() { Stop(); }

Status Server::Start() {
  if (impl_->loop) return Status(StatusCode::kFailedPrecondition, "server already started");
  auto cert = LoadServingCert(options_);
  if (!cert.ok()) return cert.status();
  cert_ = std::move(*cert);
  auto loop = IoLoop::Listen(options_, cert_);  // also checks the key pair
  if (!loop.ok()) return loop.status();
  impl_->loop = std::move(*loop);
  impl_->stopped = false;
  impl_->handler_pool = std::make_unique<WorkerPool>(kHandlerWorkers);
  impl_->auth_pool = std::make_unique<WorkerPool>(options_.authorizer_workers);
  port_ = impl_->loop->port();

  IoLoop* io = impl_->loop.get();
  io->Start([this, io](uint64_t connection, const HttpRequest& request) {
    if (IsAlwaysAllowed(options_, request.path) && IsHealthCheck(request.path)) {
      io->Respond(connection, HandleRequest(options_, request.method, request.path, request.authorization));
      return;
    }
    auto task = [this, io, connection, method = request.method, path = request.path,
                 authorization = request.authorization] {
      if (impl_->stopped) return;
      io->Respond(connection, HandleRequest(options_, method, path, authorization));
    };
    WorkerPool& pool = IsAlwaysAllowed(options_, request.path) ? *impl_->handler_pool : *impl_->auth_pool;
    if (!pool.TrySubmit(std::move(task), options_.max_pending_authorizations)) {
      io->Respond(connection, {429, "Too Many Requests\n"});
    }
  });
  const std::string& host = options_.bind_address;
  const bool bare_ipv6 = host.find(':') != std::string::npos && host.front() != '[';
  KLOG(INFO) << "Serving securely on " << (bare_ipv6 ? "[" + host + "]" : host) << ":" << port_;
  return Status::OK();
}

void Server::Stop() {
  if (!impl_ || !impl_->loop) return;
  impl_->stopped = true;
  impl_->loop->Stop();  // the port and every connection are closed
  impl_->auth_pool.reset();
  impl_->handler_pool.reset();
  impl_->loop.reset();
}

}  // namespace ksched::server
