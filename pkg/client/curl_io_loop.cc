#include "pkg/client/curl_io_loop.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>

namespace ksched::client::curl_internal {

CurlIoLoop::CurlIoLoop() {
  multi_ = curl_multi_init();
  curl_multi_setopt(multi_, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
  // Many watches + requests share one HTTP/2 connection; allow plenty of streams.
  curl_multi_setopt(multi_, CURLMOPT_MAX_CONCURRENT_STREAMS, 1000L);
  curl_multi_setopt(multi_, CURLMOPT_SOCKETFUNCTION, &CurlIoLoop::OnSocket);
  curl_multi_setopt(multi_, CURLMOPT_SOCKETDATA, this);
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
}

CurlIoLoop::~CurlIoLoop() {
  curl_multi_cleanup(multi_);
  if (wake_fd_ >= 0) close(wake_fd_);
}

void CurlIoLoop::Wake() {
  uint64_t one = 1;
  // A full counter (never, in practice) still leaves the fd readable: the wake-up holds.
  [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof(one));
}

int CurlIoLoop::OnSocket(CURL* /*easy*/, curl_socket_t s, int what, void* self_ptr, void* /*socketp*/) {
  auto* self = static_cast<CurlIoLoop*>(self_ptr);
  if (what == CURL_POLL_REMOVE) {
    self->sockets_.erase(s);
  } else {
    self->sockets_[s] = what;
  }
  return 0;
}

void CurlIoLoop::SocketAction(curl_socket_t s, int events) {
  int running = 0;
  curl_multi_socket_action(multi_, s, events, &running);
}

void CurlIoLoop::RunDueTimers() {
  long curl_ms = -1;
  curl_multi_timeout(multi_, &curl_ms);
  if (curl_ms == 0) SocketAction(CURL_SOCKET_TIMEOUT, 0);
}

std::chrono::milliseconds CurlIoLoop::CurlTimeout() const {
  long curl_ms = -1;
  curl_multi_timeout(multi_, &curl_ms);
  return std::chrono::milliseconds(curl_ms);
}

bool CurlIoLoop::Poll(H2Session* h2, std::chrono::milliseconds timeout) {
  fds_.clear();
  fds_.push_back({wake_fd_, POLLIN, 0});
  const int h2_fd = h2 ? h2->fd() : -1;
  if (h2_fd >= 0) fds_.push_back({h2_fd, h2->poll_events(), 0});
  const size_t first_curl = fds_.size();
  for (const auto& [fd, what] : sockets_) {
    short ev = static_cast<short>(((what & CURL_POLL_IN) ? POLLIN : 0) | ((what & CURL_POLL_OUT) ? POLLOUT : 0));
    fds_.push_back({fd, ev, 0});
  }
  if (poll(fds_.data(), fds_.size(), static_cast<int>(timeout.count())) <= 0) return false;
  if (fds_[0].revents != 0) {
    uint64_t drained;
    [[maybe_unused]] ssize_t n = read(wake_fd_, &drained, sizeof(drained));
  }
  if (h2_fd >= 0 && fds_[1].revents != 0) h2->OnReady(fds_[1].revents);
  // An action may close other sockets of this list; curl ignores unknown ones.
  for (size_t i = first_curl; i < fds_.size(); ++i) {
    const short r = fds_[i].revents;
    if (r == 0) continue;
    int ev = 0;
    if (r & (POLLIN | POLLHUP)) ev |= CURL_CSELECT_IN;
    if (r & POLLOUT) ev |= CURL_CSELECT_OUT;
    if (r & (POLLERR | POLLNVAL)) ev |= CURL_CSELECT_ERR;
    SocketAction(fds_[i].fd, ev);
  }
  return true;
}

}  // namespace ksched::client::curl_internal
