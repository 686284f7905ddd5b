// The CurlApiClient's (curl_client.h) I/O: libcurl's multi handle driven through its
// socket interface by a poll() of our own, which also watches the native HTTP/2
// session's socket (h2_session.h) and an eventfd that other threads write to wake it.
//
// The socket interface: curl tells us which sockets to watch and we tell it which one
// is ready. curl_multi_perform instead re-checks every transfer with a poll() of its own
// on each call (libcurl 7.88), a syscall per request in flight per wake-up.
//
// Wake() may be called from any thread; everything else only from the I/O thread.
#pragma once

#include <curl/curl.h>
#include <poll.h>

#include <chrono>
#include <unordered_map>
#include <vector>

#include "pkg/client/h2_session.h"

namespace ksched::client::curl_internal {

class CurlIoLoop {
 public:
  CurlIoLoop();
  ~CurlIoLoop();
  CurlIoLoop(const CurlIoLoop&) = delete;
  CurlIoLoop& operator=(const CurlIoLoop&) = delete;

  // Ends the current (or the next) Poll early. Thread-safe.
  void Wake();

  void Add(CURL* easy) { curl_multi_add_handle(multi_, easy); }
  void Remove(CURL* easy) { curl_multi_remove_handle(multi_, easy); }

  // Runs curl's due timers: new transfers start from a timer that is due at once, and
  // request timeouts fire from them.
  void RunDueTimers();
  // How long until curl's next timer is due; negative: none is.
  std::chrono::milliseconds CurlTimeout() const;
  // Waits up to `timeout` for a wake-up or a ready socket (curl's, or the HTTP/2
  // session's when `h2` has one), and hands each ready socket to its owner. False if
  // nothing became ready.
  bool Poll(H2Session* h2, std::chrono::milliseconds timeout);
  // Calls done(easy, result) for each libcurl transfer that has finished, after taking
  // it out of the multi handle.
  template <typename Done>
  void Reap(Done&& done) {
    int left = 0;
    while (CURLMsg* m = curl_multi_info_read(multi_, &left)) {
      if (m->msg != CURLMSG_DONE) continue;
      CURL* e = m->easy_handle;
      CURLcode rc = m->data.result;
      curl_multi_remove_handle(multi_, e);
      done(e, rc);
    }
  }

 private:
  // CURLMOPT_SOCKETFUNCTION: which sockets curl wants watched, for what.
  static int OnSocket(CURL* easy, curl_socket_t s, int what, void* self, void* socketp);
  void SocketAction(curl_socket_t s, int events);

  CURLM* multi_ = nullptr;
  int wake_fd_ = -1;  // eventfd: other threads wake the loop's poll()
  std::unordered_map<curl_socket_t, int> sockets_;  // fd -> CURL_POLL_IN/OUT/INOUT
  std::vector<pollfd> fds_;                          // Poll's, kept to reuse its memory
};

}  // namespace ksched::client::curl_internal
