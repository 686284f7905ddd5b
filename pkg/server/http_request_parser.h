// An incremental HTTP/1.1 request parser for the secure server (pkg/server/io_loop.h):
// pure (no I/O), fed whatever bytes arrive, and bounded by its limits, so a peer cannot
// make it hold more than max_header_bytes however it splits or stretches a request.
//
// Only what the endpoints need is kept (method, target, Host, Authorization and the
// framing headers); other header lines are checked and dropped, so 1 MiB of tiny
// headers costs 1 MiB at most, not a map of a hundred thousand strings.
//
// The path is the request target up to '?', not percent-decoded and not normalised, as
// cpprestsdk's relative_uri().path() gave it: "/%6detrics" and "/healthz/../metrics" are
// other paths than "/metrics", and the authorization check and the routing both see the
// same string.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ksched::server {

struct HttpRequestLimits {
  // The request line and the header lines with their line ends (Go's MaxHeaderBytes).
  size_t max_header_bytes = 1 << 20;
  // Our endpoints take no body: a small one is read and dropped so the connection can be
  // kept alive; a larger declared Content-Length is refused with 413 before any is read.
  size_t max_body_bytes = 64 << 10;
};

struct HttpRequest {
  std::string method;  // as sent ("GET"), case-sensitive
  std::string target;  // the request target as sent ("/healthz?verbose")
  std::string path;    // target up to '?' ("/healthz")
  int minor_version = 1;
  std::string host;
  std::string authorization;  // the first Authorization header; "" when absent
  uint64_t content_length = 0;
  // Another request may follow on the connection: HTTP/1.1 without "Connection: close",
  // HTTP/1.0 with "Connection: keep-alive"; never when a body was announced but not read.
  bool keep_alive = true;
};

class HttpRequestParser {
 public:
  enum class State { kIncomplete, kComplete, kError };

  explicit HttpRequestParser(HttpRequestLimits limits = {});

  // Consumes bytes of the current request and returns how many. While kIncomplete every
  // byte is consumed; once kComplete the rest of `data` belongs to the next request
  // (pipelining: Reset() and feed it again); once kError nothing more is accepted.
  size_t Parse(std::string_view data);

  State state() const { return state_; }
  // Whether any byte of the current request has arrived (the idle wait is over).
  bool started() const { return header_bytes_ > 0; }
  // Valid once kComplete (fields parsed so far otherwise).
  const HttpRequest& request() const { return request_; }
  // Once kError: the status to answer with (400, 411, 413, 417, 431, 501, 505) and why.
  int error_status() const { return error_status_; }
  const std::string& error_message() const { return error_message_; }

  // Ready for the next request on the same connection.
  void Reset();

 private:
  enum class Phase { kRequestLine, kHeaders, kBody };

  bool Fail(int status, std::string message);
  // Each returns false after Fail().
  bool OnLine(std::string_view line);
  bool ParseRequestLine(std::string_view line);
  bool ParseHeader(std::string_view line);
  bool FinishHeaders();

  HttpRequestLimits limits_;
  State state_ = State::kIncomplete;
  Phase phase_ = Phase::kRequestLine;
  HttpRequest request_;
  std::string line_;  // the current line so far, without its end
  size_t header_bytes_ = 0;
  uint64_t body_remaining_ = 0;
  bool have_content_length_ = false;
  bool have_host_ = false;
  bool have_authorization_ = false;
  bool connection_close_ = false;
  bool connection_keep_alive_ = false;
  bool expect_continue_ = false;
  std::string transfer_encoding_;
  bool have_transfer_encoding_ = false;
  int error_status_ = 0;
  std::string error_message_;
};

}  // namespace ksched::server
