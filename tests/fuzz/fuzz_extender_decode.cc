// libFuzzer target: the decoders of extender answers (pkg/extender/protocol.h) on
// arbitrary bytes. An extender is another process, often another team's: whatever it
// sends, each decoder returns a value or an error, never crashes.
//
// Invariant beyond "no crash": decoding is deterministic (the same bytes decode the same
// way twice; the thread's parser is reused between calls).
#include <cstddef>
#include <cstdint>
#include <string>

#include "pkg/extender/protocol.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ksched;
  using ksched::fuzz::Check;
  const std::string_view input = fuzz::AsView(data, size);

  auto filter = extender::DecodeFilterResult(input);
  auto again = extender::DecodeFilterResult(input);
  Check(filter.ok() == again.ok(), "filter result decodes the same twice");
  if (filter.ok()) {
    Check(filter->failed == again->failed && filter->node_names == again->node_names && filter->nodes == again->nodes,
          "filter result decodes to the same value twice");
  }
  (void)extender::DecodeHostPriorityList(input);
  (void)extender::DecodeBindingResult(input);
  (void)extender::DecodePreemptionResult(input);
  return 0;
}
