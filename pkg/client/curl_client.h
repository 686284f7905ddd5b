// CurlApiClient: ApiClient on libcurl's multi interface. One I/O thread drives every
// request; with HTTP/2 (ALPN h2, as kube-apiserver offers) all requests and watches
// are multiplexed over one TLS connection, as client-go does. See the README for the
// measurements behind choosing libcurl over cpprestsdk's client.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "pkg/client/api_client.h"
#include "pkg/client/rest_config.h"
#include "pkg/util/clock.h"

namespace ksched::client {

struct CurlClientOptions {
  Clock* clock = &RealClock();
  // Largest response body accepted (a 10,000-pod LIST is ~30 MB); a larger one fails
  // with kOutOfRange. Informers then list in pages of 500 instead, so a big cluster
  // never needs one huge body.
  size_t max_body_bytes = size_t{256} << 20;
  // Longest single watch line accepted; a longer one ends the stream with an error.
  size_t max_watch_line_bytes = size_t{64} << 20;
  // Delay before retrying a GET after a connection error (doubled per attempt, capped).
  std::chrono::milliseconds connect_retry_delay{std::chrono::seconds(1)};
  // TCP keepalive, so a half-open connection under a silent watch is noticed.
  std::chrono::seconds tcp_keepalive_idle{30};
  // TCP_USER_TIMEOUT on every connection: unacknowledged data (or keepalive probes) for
  // this long fails it, instead of ~15 minutes of kernel retransmissions.
  std::chrono::milliseconds tcp_user_timeout{std::chrono::seconds(30)};
  // client-go's HTTP/2 health check on the native session: a PING after this long
  // without a frame, and the connection is closed if it is not answered in time.
  std::chrono::milliseconds http2_read_idle_timeout{std::chrono::seconds(30)};
  std::chrono::milliseconds http2_ping_timeout{std::chrono::seconds(15)};
  // Background requests (events, status patches) waiting to start. Past this many the
  // oldest is failed with kResourceExhausted, as upstream's event broadcaster drops
  // events when its queue is full: a slow API server cannot grow the queue without bound.
  // Foreground requests (binds) are never dropped.
  size_t max_queued_background = 10000;
  bool http2 = true;
  // Plain requests (not watches) over an HTTP/2 session of the client's own (nghttp2 +
  // OpenSSL, see h2_session.h) instead of libcurl, when the server is https:// and
  // offers h2; libcurl otherwise. Less than half of libcurl's CPU per request (see
  // make bench-client), and no request lost to a GOAWAY.
  bool native_http2 = true;
  // Requests in flight at once (watches not counted); more wait in the client's queue.
  // Keeps a burst from overrunning the server's HTTP/2 stream limit and the connect
  // timeout of transfers queued behind it.
  int max_in_flight = 200;
  // Background requests in flight at once while foreground requests other than binds
  // (evictions) are (see RequestLanes::StartDue).
  int max_background_in_flight_beside_evictions = 8;
  // Rate budget of background requests (Request::background); unset: the same qps and
  // burst as the config, in a bucket of their own (upstream gives events a client of
  // their own with the same limits).
  std::optional<double> background_qps;
  std::optional<int> background_burst;
  // Name of the I/O thread (15 characters at most are kept).
  std::string thread_name = "api-io";
};

// Creates a client; fails when the TLS material in `config` is unusable.
StatusOr<ApiClientPtr> NewCurlApiClient(const RestConfig& config, CurlClientOptions options = {});

}  // namespace ksched::client
