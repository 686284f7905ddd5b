#include "config/load.h"

#include <sys/stat.h>

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "config/decode_config.h"
#include "config/defaults.h"
#include "config/emitter.h"
#include "config/field_error.h"
#include "pkg/util/log.h"

namespace ksched::config {
namespace {

std::string_view RemovedVersionNote(std::string_view version) {
  if (version == "v1beta3") return " (removed in Kubernetes 1.29)";
  if (version == "v1beta2") return " (removed in Kubernetes 1.28)";
  return "";
}

// The group/version/kind check upstream's codec does before decoding the object.
Status CheckTypeMeta(const YAML::Node& root) {
  std::string api_version, kind;
  if (YAML::Node av = root["apiVersion"]; av && av.IsScalar()) api_version = av.Scalar();
  if (YAML::Node k = root["kind"]; k && k.IsScalar()) kind = k.Scalar();
  if (kind.empty()) return InvalidArgument("Object 'Kind' is missing in config");
  if (api_version.empty()) return InvalidArgument("Object 'apiVersion' is missing in config");
  std::string_view group = api_version, version;
  if (size_t slash = api_version.find('/'); slash != std::string::npos) {
    group = std::string_view(api_version).substr(0, slash);
    version = std::string_view(api_version).substr(slash + 1);
  }
  if (group == kGroup && api_version != kAPIVersion && kind == kKind) {
    return InvalidArgument("no kind " + GoQuote(kind) + " is registered for version " + GoQuote(api_version) + ": " +
                           api_version + " is no longer supported" + std::string(RemovedVersionNote(version)) +
                           ", use " + std::string(kAPIVersion));
  }
  if (api_version != kAPIVersion || kind != kKind) {
    return InvalidArgument("no kind " + GoQuote(kind) + " is registered for version " + GoQuote(api_version) +
                           "; expected kind " + GoQuote(kKind) + " in " + GoQuote(kAPIVersion));
  }
  return Status::OK();
}

StatusOr<KubeSchedulerConfiguration> Load(std::string_view yaml) {
  if (yaml.size() > kMaxConfigBytes) {
    return InvalidArgument("config is " + std::to_string(yaml.size()) + " bytes, more than the limit of " +
                           std::to_string(kMaxConfigBytes));
  }
  if (size_t bad = InvalidUtf8Offset(yaml); bad != std::string_view::npos) {
    return InvalidArgument("yaml: invalid UTF-8 at byte offset " + std::to_string(bad));
  }
  if (yaml.find('\0') != std::string_view::npos) return InvalidArgument("yaml: control characters are not allowed");
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp's own limit (its message says "bad file"); the parser recurses per level.
    return InvalidArgument("error converting YAML to JSON: yaml: exceeded max nesting depth at line " +
                           std::to_string(e.mark.line + 1) + ", column " + std::to_string(e.mark.column + 1));
  } catch (const YAML::Exception& e) {
    return InvalidArgument(std::string("error converting YAML to JSON: yaml: ") + e.what());
  } catch (const std::exception& e) {
    return InvalidArgument(std::string("error parsing YAML: ") + e.what());
  }
  try {
    if (!root.IsMap()) {
      const char* got = root.IsSequence() ? "a list" : root.IsScalar() ? "a scalar" : "empty";
      if (!root.IsDefined() || root.IsNull()) return InvalidArgument("Object 'Kind' is missing in config");
      return InvalidArgument(std::string("couldn't get version/kind; json parse error: the document is ") + got +
                             ", not an object");
    }
    if (Status s = CheckTypeMeta(root); !s.ok()) return s;
    StatusOr<KubeSchedulerConfiguration> cfg = internal::DecodeConfig(root, kMaxConfigNodes);
    if (!cfg.ok()) return cfg.status();
    if (cfg->healthz_bind_address || cfg->metrics_bind_address) {
      KLOG(WARNING) << "healthzBindAddress and metricsBindAddress are not part of "
                    << kAPIVersion << " and are ignored; ksched serves on --secure-port";
    }
    SetDefaults(*cfg);
    return cfg;
  } catch (const std::exception& e) {  // yaml-cpp node access; should not happen
    return InvalidArgument(std::string("decoding config: ") + e.what());
  }
}

}  // namespace

StatusOr<KubeSchedulerConfiguration> LoadConfigFromString(std::string_view yaml) { return Load(yaml); }

StatusOr<KubeSchedulerConfiguration> LoadConfigFile(const std::string& path) {
  // Only a regular file (or a link to one) is read: opening a FIFO would block until
  // something writes to it, and a directory or device is no config either.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return InvalidArgument("failed to read config file " + GoQuote(path) + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return InvalidArgument("failed to read config file " + GoQuote(path) + ": not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return InvalidArgument("failed to read config file " + GoQuote(path) + ": " + std::strerror(errno));
  std::string data;
  char buf[64 * 1024];
  while (in.read(buf, sizeof(buf)) || in.gcount() > 0) {
    data.append(buf, static_cast<size_t>(in.gcount()));
    if (data.size() > kMaxConfigBytes) {
      return InvalidArgument("config file " + GoQuote(path) + " is larger than the limit of " +
                             std::to_string(kMaxConfigBytes) + " bytes");
    }
  }
  if (in.bad()) return InvalidArgument("failed to read config file " + GoQuote(path));
  StatusOr<KubeSchedulerConfiguration> cfg = Load(data);
  if (!cfg.ok()) return cfg.status().WithContext("loading config file " + GoQuote(path));
  return cfg;
}

}  // namespace ksched::config
