// ApiClient: the scheduler's only way to talk to the kube-apiserver.
//
// Requests are asynchronous: Send() queues a request and its callback runs on the
// client's I/O thread when the response (or final error, after retries) is in. Callbacks
// must be quick and must not block: hand real work to another thread. Do() is a blocking
// convenience for threads other than the I/O thread.
//
// Errors are values: any non-2xx answer becomes a Status whose code follows the HTTP code
// and the API Status reason (404 NotFound, 409 Conflict/AlreadyExists, 410 Gone, 429 ...),
// and whose message is the server's message.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "pkg/util/status.h"

namespace ksched::client {

enum class Verb { kGet, kPost, kPut, kPatch, kDelete };
std::string_view VerbName(Verb v);

inline constexpr std::string_view kContentJson = "application/json";
inline constexpr std::string_view kContentStrategicMerge = "application/strategic-merge-patch+json";
inline constexpr std::string_view kContentMergePatch = "application/merge-patch+json";

struct Request {
  Verb verb = Verb::kGet;
  // Path and query, already escaped: "/api/v1/namespaces/ns/pods?limit=500".
  std::string path;
  std::string body;
  std::string content_type{kContentJson};
  // Whole-request timeout; zero means the client's default. Watches have none.
  std::chrono::milliseconds timeout{0};
  // Retries on 429 / 5xx with Retry-After, and on connection errors for GET.
  int max_retries = 10;
  // Events and status writes: started only while no foreground request (a bind) waits,
  // under a rate budget of their own, so a storm of them never delays binds.
  bool background = false;
  // Foreground requests that finish work rather than start it (binds): they go ahead of
  // the other waiting foreground requests (e.g. a burst of preemption's evictions).
  bool first = false;
  // Retry after a connection error even though this is not a GET: for writes that are
  // safe to repeat (an event's create is refused as AlreadyExists the second time; a
  // condition patch is idempotent). Binds are never marked so.
  bool retry_connection_errors = false;
  // Checked on the client's I/O thread each time the request is about to go out (first
  // try and every retry): an error completes the request with that error, unsent. A bind
  // uses it to go out only while its pod is still the one it was decided for.
  std::function<Status()> precondition;
};

struct Response {
  long http_code = 0;
  std::string body;
};

using ResponseCallback = std::function<void(StatusOr<Response>)>;

// Callbacks of a watch stream; they run on the client's I/O thread.
struct WatchCallbacks {
  // One complete line of the stream (one JSON watch event), without the newline.
  std::function<void(std::string_view line)> on_line;
  // Called exactly once when the stream ends by itself: OK when the server closed it
  // normally (e.g. timeoutSeconds elapsed), an error otherwise (HTTP error, reset...).
  // Not called after Cancel().
  std::function<void(Status)> on_close;
};

class WatchStream {
 public:
  virtual ~WatchStream() = default;
  // Stops the stream. When it returns, no callback of this stream runs any more.
  // Must not be called from the I/O thread (i.e. from inside a callback).
  virtual void Cancel() = 0;
};

class ApiClient {
 public:
  virtual ~ApiClient() = default;

  virtual void Send(Request request, ResponseCallback done) = 0;
  virtual std::unique_ptr<WatchStream> Watch(Request request, WatchCallbacks callbacks) = 0;

  // Blocking Send. Never call it from an ApiClient callback.
  StatusOr<Response> Do(Request request);

  // Waits until every request sent so far has completed (watches aside), e.g. to flush
  // events at shutdown; false if some are still pending after `timeout`. The default
  // suits clients that complete each request before Send returns.
  virtual bool WaitIdle(std::chrono::milliseconds /*timeout*/) { return true; }
};

using ApiClientPtr = std::unique_ptr<ApiClient>;

// Maps an HTTP status and the body of a failed response to a Status: the code from
// the API Status reason when there is one, else from the HTTP code.
Status StatusFromHttp(long http_code, std::string_view body);

// Percent-encodes `s` for a query parameter's value (every byte but RFC 3986's
// unreserved characters), e.g. a resourceVersion, continue token or field selector.
std::string UrlEncode(std::string_view s);

}  // namespace ksched::client
