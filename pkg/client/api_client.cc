#include "pkg/client/api_client.h"

#include <cctype>
#include <future>

#include "pkg/api/json.h"

namespace ksched::client {

std::string_view VerbName(Verb v) {
  switch (v) {
    case Verb::kGet: return "GET";
    case Verb::kPost: return "POST";
    case Verb::kPut: return "PUT";
    case Verb::kPatch: return "PATCH";
    case Verb::kDelete: return "DELETE";
  }
  return "GET";
}

StatusOr<Response> ApiClient::Do(Request request) {
  std::promise<StatusOr<Response>> p;
  auto f = p.get_future();
  Send(std::move(request), [&p](StatusOr<Response> r) { p.set_value(std::move(r)); });
  return f.get();
}

namespace {

StatusCode CodeFromReason(std::string_view reason) {
  if (reason == "NotFound") return StatusCode::kNotFound;
  if (reason == "AlreadyExists") return StatusCode::kAlreadyExists;
  if (reason == "Conflict") return StatusCode::kConflict;
  if (reason == "Expired" || reason == "Gone") return StatusCode::kGone;
  if (reason == "Unauthorized") return StatusCode::kUnauthenticated;
  if (reason == "Forbidden") return StatusCode::kPermissionDenied;
  if (reason == "TooManyRequests") return StatusCode::kResourceExhausted;
  if (reason == "Invalid" || reason == "BadRequest" || reason == "RequestEntityTooLarge")
    return StatusCode::kInvalidArgument;
  if (reason == "Timeout") return StatusCode::kDeadlineExceeded;
  if (reason == "ServiceUnavailable" || reason == "InternalError") return StatusCode::kUnavailable;
  return StatusCode::kOk;
}

StatusCode CodeFromHttp(long http) {
  switch (http) {
    case 400: case 422: return StatusCode::kInvalidArgument;
    case 401: return StatusCode::kUnauthenticated;
    case 403: return StatusCode::kPermissionDenied;
    case 404: return StatusCode::kNotFound;
    case 409: return StatusCode::kConflict;
    case 410: return StatusCode::kGone;
    case 429: return StatusCode::kResourceExhausted;
    case 504: return StatusCode::kDeadlineExceeded;
    default: return http >= 500 ? StatusCode::kUnavailable : StatusCode::kInternal;
  }
}

}  // namespace

std::string UrlEncode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

Status StatusFromHttp(long http_code, std::string_view body) {
  StatusCode code = StatusCode::kOk;
  std::string message;
  if (auto st = api::DecodeApiStatus(body); st.ok()) {
    code = CodeFromReason(st->reason);
    message = st->message;
  }
  if (code == StatusCode::kOk) code = CodeFromHttp(http_code);
  if (message.empty()) message = "the server responded with HTTP " + std::to_string(http_code);
  return Status(code, std::move(message));
}

}  // namespace ksched::client
