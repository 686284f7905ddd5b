// libFuzzer target: the kubeconfig loader (informers/rest_config.h ParseKubeconfig) on
// arbitrary YAML. Relative file references resolve against a scratch directory holding a
// CA file and a token file, so inputs can reach the file-reading paths too.
//
// Invariants beyond "no crash": a loaded config has a server without a trailing '/', a
// client certificate exactly when it has a key, and LoadKubeconfig on the same text in a
// file gives the same config.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "pkg/client/rest_config.h"
#include "tests/fuzz/fuzz_util.h"

namespace ksched::fuzz {
namespace {

const std::filesystem::path& ScratchDir() {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("ksched-fuzz-kubeconfig-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    std::ofstream(d / "ca.crt") << "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
    std::ofstream(d / "token") << "file-token\n";
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(ScratchDir(), ec);
    });
    return d;
  }();
  return dir;
}

bool Same(const client::RestConfig& a, const client::RestConfig& b) {
  return a.server == b.server && a.ca_pem == b.ca_pem && a.insecure_skip_tls_verify == b.insecure_skip_tls_verify &&
         a.tls_server_name == b.tls_server_name && a.client_cert_pem == b.client_cert_pem &&
         a.client_key_pem == b.client_key_pem && a.bearer_token == b.bearer_token && a.token_file == b.token_file &&
         a.username == b.username && a.password == b.password;
}

}  // namespace
}  // namespace ksched::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ksched;
  using ksched::fuzz::Check;
  if (size == 0) return 0;
  // The first byte picks the --context and --master flags.
  const std::string context = (data[0] & 1) ? "fuzz" : "";
  const std::string master = (data[0] & 2) ? "https://127.0.0.1:6443/" : "";
  const std::string_view yaml = fuzz::AsView(data + 1, size - 1);
  const auto& dir = fuzz::ScratchDir();

  auto cfg = client::ParseKubeconfig(yaml, dir.string(), context, master);
  if (cfg.ok()) {
    Check(!cfg->server.empty() && cfg->server.back() != '/', "the server is set, without a trailing '/'", cfg->server);
    Check(cfg->client_cert_pem.empty() == cfg->client_key_pem.empty(), "a client certificate comes with a key");
    Check(!cfg->user_agent.empty(), "the user agent is defaulted");
  }

  // LoadKubeconfig reads the file and goes through the same parser.
  const auto path = dir / "kubeconfig";
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(yaml.data(), static_cast<std::streamsize>(yaml.size()));
  auto loaded = client::LoadKubeconfig(path.string(), context, master);
  Check(loaded.ok() == cfg.ok(), "LoadKubeconfig agrees with ParseKubeconfig",
        loaded.ok() ? cfg.status().message() : loaded.status().message());
  if (cfg.ok()) Check(fuzz::Same(*cfg, *loaded), "LoadKubeconfig gives the same config");
  return 0;
}
