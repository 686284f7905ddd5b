// A scripted HTTP/1.1 server on loopback for the faults a real kube-apiserver will not
// produce on demand: truncated chunks, malformed JSON, unknown event types, 429 with
// Retry-After, silent streams, connections dropped mid-response.
//
// Each request is passed to the handler on its own thread with a ResponseWriter; the
// handler scripts the answer step by step.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace ksched::testing {

struct HttpRequest {
  std::string method;
  std::string target;  // path + query
  std::string path;
  std::map<std::string, std::string> query;  // decoded
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
};

class ResponseWriter {
 public:
  explicit ResponseWriter(int fd) : fd_(fd) {}
  // A complete response with Content-Length.
  void Respond(int status, const std::string& body, const std::map<std::string, std::string>& headers = {});
  // Starts a chunked response; then Chunk() any number of times and End().
  void StartChunked(int status, const std::map<std::string, std::string>& headers = {});
  bool Chunk(const std::string& data);
  // Writes raw bytes (e.g. a chunk header that promises more than follows).
  bool Raw(const std::string& bytes);
  void End();
  // Drops the connection without finishing the response.
  void Abort();
  bool ok() const { return ok_; }

 private:
  int fd_;
  bool ok_ = true;
};

class FakeApiServer {
 public:
  using Handler = std::function<void(const HttpRequest&, ResponseWriter&)>;

  // `record`: keep every request for requests() (a long-running server, such as the test
  // extender under a benchmark, only counts them).
  explicit FakeApiServer(Handler handler, bool record = true);
  ~FakeApiServer();

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }
  // Every request received so far, in arrival order.
  std::vector<HttpRequest> requests() const;
  int request_count() const;
  // Makes every handler blocked in WaitForStop() return, and closes connections.
  void Stop();
  // For handlers that hold a stream open: sleeps until Stop() or the timeout.
  void WaitForStop(std::chrono::milliseconds timeout);

 private:
  void AcceptLoop();
  void Serve(int fd);

  Handler handler_;
  bool record_ = true;
  size_t unrecorded_ = 0;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  mutable std::mutex mu_;
  std::condition_variable stop_cv_;
  std::vector<HttpRequest> requests_;
  std::vector<int> open_fds_;
  std::vector<std::thread> workers_;
  std::thread acceptor_;
};

}  // namespace ksched::testing
