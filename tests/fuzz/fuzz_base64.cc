// libFuzzer target: the base64 codec of informers/rest_config.h (kubeconfig *-data
// fields, the Basic authorization header).
//
// Invariants beyond "no crash":
//   - Base64Decode(Base64Encode(x)) == x for any bytes x;
//   - whatever Base64Decode accepts is canonical up to whitespace and the unused low
//     bits of the last symbol, as Go's base64.StdEncoding: re-encoding the output gives
//     the same length, with '=' padding exactly where the input had it.
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <string>

#include "pkg/client/rest_config.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ksched;
  using ksched::fuzz::Check;
  const std::string_view input = fuzz::AsView(data, size);

  std::string encoded = client::Base64Encode(input);
  Check(encoded.size() == (input.size() + 2) / 3 * 4, "Base64Encode pads to a multiple of four");
  auto decoded = client::Base64Decode(encoded);
  Check(decoded.ok() && *decoded == input, "Base64Decode(Base64Encode(x)) == x", encoded);

  auto out = client::Base64Decode(input, "fuzz");
  if (!out.ok()) return 0;
  std::string clean;
  for (char c : input) {
    if (!std::isspace(static_cast<unsigned char>(c))) clean.push_back(c);
  }
  std::string again = client::Base64Encode(*out);
  Check(again.size() == clean.size(), "accepted base64 re-encodes to the same length", clean);
  for (size_t i = 0; i < clean.size(); ++i) {
    Check((clean[i] == '=') == (again[i] == '='), "accepted base64 has padding only at the end", clean);
  }
  return 0;
}
