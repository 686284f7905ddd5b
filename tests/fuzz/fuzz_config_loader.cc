// libFuzzer target: the KubeSchedulerConfiguration loader (config/load.h) on arbitrary
// YAML. Hostile documents (deep nesting, alias bombs, huge scalars) must give an error,
// quickly and within bounded memory, never a crash or a stack overflow.
//
// Invariants beyond "no crash": an accepted config survives validation, plugin
// expansion and re-encoding, and its encoding loads again (exact equality is checked by
// the unit tests: upstream's merge is not idempotent for a plugin listed twice, so the
// fuzzer only requires the output to load).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "config/effective_plugins.h"
#include "config/encode.h"
#include "config/defaults.h"
#include "config/load.h"
#include "config/validate.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ksched;
  auto cfg = config::LoadConfigFromString(fuzz::AsView(data, size));
  if (!cfg.ok()) return 0;
  (void)config::ValidateConfig(*cfg);
  for (const auto& profile : cfg->profiles) (void)config::EffectivePlugins(profile);
  (void)config::EncodeConfigJSON(*cfg);
  std::string encoded = config::EncodeConfig(*cfg);
  auto again = config::LoadConfigFromString(encoded);
  fuzz::Check(again.ok(), "EncodeConfig output loads",
              again.ok() ? encoded : again.status().message() + "\n" + encoded);
  return 0;
}
