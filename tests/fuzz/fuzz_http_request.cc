// libFuzzer target: the secure server's HTTP/1.1 request parser
// (pkg/server/http_request_parser.h), which reads whatever an unauthenticated client sends.
//
// The first two bytes choose where the rest is split; the input is parsed as a stream of
// pipelined requests three ways: whole, in two pieces at that point, and (for short
// inputs) a byte at a time. Invariants beyond "no crash":
//   - all three give the same transcript of requests and errors: the parser's result
//     does not depend on how the bytes arrive;
//   - while a request is incomplete every byte fed is consumed, and Parse() never
//     consumes more than it was given;
//   - no request consumes more than max_header_bytes + max_body_bytes (a header that
//     never ends is refused at the limit, not at its end), a declared body larger than
//     max_body_bytes is refused, and only the documented error statuses are produced;
//   - a complete request has a path that starts with '/' and holds no '?'.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/server/http_request_parser.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using ksched::fuzz::Check;
using ksched::server::HttpRequestLimits;
using ksched::server::HttpRequestParser;

// Small limits, so inputs of a few KiB reach them.
constexpr HttpRequestLimits kLimits{.max_header_bytes = 2048, .max_body_bytes = 512};

// Feeds `pieces` in order, starting the next request after each complete one.
std::vector<std::string> Run(const std::vector<std::string_view>& pieces) {
  std::vector<std::string> events;
  HttpRequestParser parser(kLimits);
  size_t request_bytes = 0;  // consumed by the current request
  for (std::string_view piece : pieces) {
    while (!piece.empty() && parser.state() != HttpRequestParser::State::kError) {
      const size_t used = parser.Parse(piece);
      Check(used <= piece.size(), "Parse() consumes at most what it is given");
      request_bytes += used;
      Check(request_bytes <= kLimits.max_header_bytes + kLimits.max_body_bytes,
            "no request takes more than the header and body limits");
      if (parser.state() == HttpRequestParser::State::kIncomplete) {
        Check(used == piece.size(), "an incomplete request consumes every byte");
      }
      piece.remove_prefix(used);
      if (parser.state() == HttpRequestParser::State::kComplete) {
        const auto& r = parser.request();
        Check(!r.path.empty() && r.path.front() == '/' && r.path.find('?') == std::string::npos,
              "a complete request has an absolute path without a query", r.target);
        Check(r.content_length <= kLimits.max_body_bytes, "a body over the limit is refused");
        events.push_back("ok " + r.method + " " + r.target + " " + r.authorization + " " +
                         std::to_string(r.content_length) + (r.keep_alive ? " keep" : " close"));
        parser.Reset();
        request_bytes = 0;
      }
    }
    if (parser.state() == HttpRequestParser::State::kError) break;
  }
  if (parser.state() == HttpRequestParser::State::kError) {
    const int s = parser.error_status();
    Check(s == 400 || s == 411 || s == 413 || s == 417 || s == 431 || s == 501 || s == 505,
          "only the documented error statuses", parser.error_message());
    events.push_back(std::string("error ").append(std::to_string(s)));
  } else if (parser.state() == HttpRequestParser::State::kIncomplete && parser.started()) {
    events.push_back("incomplete");
  }
  return events;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const size_t split_hint = static_cast<size_t>(data[0]) << 8 | data[1];
  const std::string_view input = ksched::fuzz::AsView(data + 2, size - 2);
  const size_t split = input.empty() ? 0 : split_hint % (input.size() + 1);

  const std::vector<std::string> whole = Run({input});
  const std::vector<std::string> halves = Run({input.substr(0, split), input.substr(split)});
  Check(whole == halves, "splitting the input in two changes the result", input);
  if (input.size() <= 4096) {
    std::vector<std::string_view> bytes;
    for (size_t i = 0; i < input.size(); ++i) bytes.push_back(input.substr(i, 1));
    Check(whole == Run(bytes), "feeding a byte at a time changes the result", input);
  }
  return 0;
}
