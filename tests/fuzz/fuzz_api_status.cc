// libFuzzer target: the metav1.Status decoder (HTTP error bodies, e.g. 410 Gone after a
// compacted resourceVersion) on arbitrary bytes, alone and as the object of a watch
// stream's ERROR event.
//
// Invariants beyond "no crash": in-place and copied decodes agree; an ERROR event
// wrapping a well-formed input decodes as an ERROR event, with the same Status when both
// decode (a malformed input can close the wrapper early and add fields of its own).
#include <cstddef>
#include <cstdint>
#include <string>

#include "pkg/api/json.h"
#include "tests/fuzz/fuzz_json.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ksched;
  using ksched::fuzz::Check;
  static api::JsonParser parser;  // reused across inputs, as the API client does
  const std::string_view input = fuzz::AsView(data, size);
  std::string text(input);

  auto status = api::DecodeApiStatus(parser, api::JsonText::Padded(text));
  auto copied = api::DecodeApiStatus(api::JsonText(input));  // the calling thread's parser, from a copy
  Check(status.ok() == copied.ok(), "in-place and copied decodes agree");
  if (status.ok()) Check(*status == *copied, "in-place and copied decodes give equal statuses");

  std::string event = R"({"type":"ERROR","object":)";
  event += input;
  event += '}';
  auto ev = api::DecodePodWatchEvent(parser, api::JsonText::Padded(event));
  if (ev.ok() && fuzz::IsValidJson(input)) {
    Check(ev->type == api::WatchEventType::kError, "an ERROR event decodes as one");
    Check(ev->object == nullptr, "an ERROR event has no object");
    if (status.ok()) Check(ev->error == *status, "the event's Status is the one decoded alone");
  }
  return 0;
}
