// Status and StatusOr<T>: errors as values at module boundaries.
#pragma once

#include <cassert>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace ksched {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,    // bad input: config, flags, malformed API object
  kNotFound,           // HTTP 404 / reason NotFound
  kAlreadyExists,      // HTTP 409 reason AlreadyExists
  kConflict,           // HTTP 409 reason Conflict (resourceVersion / uid precondition)
  kGone,               // HTTP 410 / reason Expired or Gone: relist needed
  kUnauthenticated,    // HTTP 401
  kPermissionDenied,   // HTTP 403
  kResourceExhausted,  // HTTP 429 TooManyRequests
  kUnavailable,        // connection errors, 5xx
  kDeadlineExceeded,   // timeouts
  kCancelled,          // shutdown
  kFailedPrecondition,
  kInternal,
  kOutOfRange,         // a limit of our own was exceeded (e.g. a watch event past the line limit)
};

std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status OK() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "NotFound: pods \"x\" not found"
  std::string ToString() const;

  // Adds context in front of the message: "loading config: <message>".
  Status WithContext(std::string_view context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
inline Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
inline Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }

template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(Status status) : v_(std::move(status)) { assert(!std::get<Status>(v_).ok()); }  // NOLINT
  StatusOr(T value) : v_(std::move(value)) {}                                              // NOLINT

  bool ok() const { return std::holds_alternative<T>(v_); }
  Status status() const { return ok() ? Status::OK() : std::get<Status>(v_); }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<Status, T> v_;
};

}  // namespace ksched
