// libFuzzer entry point: any byte string must give a config or an error, never a crash,
// hang or unbounded allocation; accepted configs must survive validation, plugin expansion
// and re-encoding (exact equality is checked by the unit tests: upstream's merge is not
// idempotent for a plugin listed twice, so the fuzzer only requires the output to load).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "config/defaults.h"
#include "config/load.h"
#include "config/validate.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  auto cfg = ksched::config::LoadConfigFromString(input);
  if (!cfg.ok()) return 0;
  (void)ksched::config::ValidateConfig(*cfg);
  for (const auto& profile : cfg->profiles) (void)ksched::config::EffectivePlugins(profile);
  std::string encoded = ksched::config::EncodeConfig(*cfg);
  auto again = ksched::config::LoadConfigFromString(encoded);
  if (!again.ok()) __builtin_trap();
  return 0;
}
