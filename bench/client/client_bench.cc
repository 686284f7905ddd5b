// Transport benchmark: client CPU per request and requests/s for small GETs against a
// real kube-apiserver: ksched's client on its own HTTP/2 session (nghttp2), the same
// client with every request on libcurl, and cpprestsdk's http_client.
// Usage: bench_client <kubeconfig> [requests]
// Prints one line per (client, concurrency) with the median of 5 runs.
#include <cpprest/http_client.h>
#include <sys/resource.h>

#include <algorithm>
#include <boost/asio/ssl.hpp>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <vector>

#include "pkg/client/curl_client.h"
#include "pkg/client/rest_config.h"

namespace {

using Clock = std::chrono::steady_clock;

double CpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

struct Result {
  double cpu_ms_per_req;
  double req_per_s;
};

constexpr char kPath[] = "/api/v1/namespaces/default/pods?limit=1";

// Runs `n` requests keeping `depth` in flight; `send(done)` issues one request.
template <typename SendFn>
Result Run(int n, int depth, SendFn send) {
  std::mutex mu;
  std::condition_variable cv;
  int started = 0, finished = 0, failed = 0;
  double cpu0 = CpuSeconds();
  auto t0 = Clock::now();
  std::function<void(bool)> on_done;
  on_done = [&](bool ok) {
    bool more;
    {
      std::lock_guard l(mu);
      ++finished;
      failed += !ok;
      more = started < n;
      if (more) ++started;
      cv.notify_all();
    }
    if (more) send(on_done);
  };
  {
    std::lock_guard l(mu);
    started = std::min(depth, n);
  }
  for (int i = 0; i < std::min(depth, n); ++i) send(on_done);
  std::unique_lock l(mu);
  cv.wait(l, [&] { return finished == n; });
  double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  if (failed) std::fprintf(stderr, "warning: %d requests failed\n", failed);
  return {(CpuSeconds() - cpu0) * 1000.0 / n, n / secs};
}

Result Median(std::vector<Result> rs) {
  auto mid = rs.size() / 2;
  std::nth_element(rs.begin(), rs.begin() + mid, rs.end(),
                   [](auto& a, auto& b) { return a.cpu_ms_per_req < b.cpu_ms_per_req; });
  double cpu = rs[mid].cpu_ms_per_req;
  std::nth_element(rs.begin(), rs.begin() + mid, rs.end(), [](auto& a, auto& b) { return a.req_per_s < b.req_per_s; });
  return {cpu, rs[mid].req_per_s};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <kubeconfig> [requests]\n", argv[0]);
    return 2;
  }
  int n = argc > 2 ? std::atoi(argv[2]) : 3000;
  auto cfg = ksched::client::LoadKubeconfig(argv[1]);
  if (!cfg.ok()) {
    std::fprintf(stderr, "%s\n", cfg.status().ToString().c_str());
    return 1;
  }
  cfg->qps = 0;

  // ksched's client as it runs (its own HTTP/2 session on nghttp2), and with every
  // request on libcurl.
  auto h2 = ksched::client::NewCurlApiClient(*cfg);
  auto curl = ksched::client::NewCurlApiClient(*cfg, {.native_http2 = false});
  if (!h2.ok() || !curl.ok()) return 1;
  auto sender = [](ksched::client::ApiClient& client) {
    return [&client](std::function<void(bool)>& done) {
      client.Send({.path = kPath}, [&done](ksched::StatusOr<ksched::client::Response> r) { done(r.ok()); });
    };
  };
  auto h2_send = sender(**h2);
  auto curl_send = sender(**curl);

  web::http::client::http_client_config cc;
  std::string ca = cfg->ca_pem;
  cc.set_ssl_context_callback([ca](boost::asio::ssl::context& ctx) {
    ctx.add_certificate_authority(boost::asio::buffer(ca.data(), ca.size()));
  });
  web::http::client::http_client rest(utility::conversions::to_string_t(cfg->server), cc);
  std::string token = cfg->bearer_token;
  auto rest_send = [&](std::function<void(bool)>& done) {
    web::http::http_request req(web::http::methods::GET);
    req.set_request_uri(kPath);
    req.headers().add("Authorization", "Bearer " + token);
    rest.request(req).then([&done](pplx::task<web::http::http_response> t) {
      try {
        auto resp = t.get();
        resp.extract_string().wait();
        done(resp.status_code() == 200);
      } catch (...) {
        done(false);
      }
    });
  };

  std::printf("%-12s %6s %16s %10s\n", "client", "depth", "cpu ms/request", "req/s");
  for (int depth : {1, 32}) {
    std::vector<Result> a, b, c;
    Run(200, depth, h2_send);  // warm up connections
    Run(200, depth, curl_send);
    Run(200, depth, rest_send);
    for (int i = 0; i < 5; ++i) {
      a.push_back(Run(n, depth, h2_send));
      b.push_back(Run(n, depth, curl_send));
      c.push_back(Run(n, depth, rest_send));
    }
    auto ma = Median(a), mb = Median(b), mc = Median(c);
    std::printf("%-12s %6d %16.3f %10.0f\n", "nghttp2", depth, ma.cpu_ms_per_req, ma.req_per_s);
    std::printf("%-12s %6d %16.3f %10.0f\n", "libcurl", depth, mb.cpu_ms_per_req, mb.req_per_s);
    std::printf("%-12s %6d %16.3f %10.0f\n", "cpprestsdk", depth, mc.cpu_ms_per_req, mc.req_per_s);
    std::printf("CPU per request at depth %d: libcurl %.1fx, cpprestsdk %.1fx that of nghttp2\n", depth,
                mb.cpu_ms_per_req / ma.cpu_ms_per_req, mc.cpu_ms_per_req / ma.cpu_ms_per_req);
  }
  return 0;
}
