// A TCP proxy on loopback that can turn into a black hole: while blackholed it stops
// forwarding in both directions but keeps every connection open, as a peer that froze
// or a network path that silently drops traffic does. The kernel still acknowledges
// what arrives, so this models "the server stopped answering" (what HTTP/2 PINGs and
// request timeouts must detect), not lost TCP segments.
//
// Header-only; one thread accepts, one thread per connection pumps both directions.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace ksched::testing {

class BlackholeProxy {
 public:
  // Forwards 127.0.0.1:port() to target_host:target_port (an IPv4 literal).
  BlackholeProxy(std::string target_host, int target_port)
      : target_host_(std::move(target_host)), target_port_(target_port) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    socklen_t len = sizeof(a);
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    listen(listen_fd_, 64);
    accept_thread_ = std::thread([this] { AcceptLoop(); });
  }

  ~BlackholeProxy() {
    stopping_ = true;
    shutdown(listen_fd_, SHUT_RDWR);
    close(listen_fd_);
    accept_thread_.join();
    std::vector<std::thread> threads;
    {
      std::lock_guard l(mu_);
      threads.swap(threads_);
    }
    for (auto& t : threads) t.join();
  }

  int port() const { return port_; }
  // While on, nothing is forwarded either way; connections stay open.
  void SetBlackhole(bool on) { blackhole_ = on; }
  int connections() const { return connections_.load(); }

 private:
  void AcceptLoop() {
    while (!stopping_) {
      int client = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client < 0) continue;
      int upstream = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_port = htons(static_cast<uint16_t>(target_port_));
      inet_pton(AF_INET, target_host_.c_str(), &a.sin_addr);
      if (connect(upstream, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
        close(client);
        close(upstream);
        continue;
      }
      ++connections_;
      std::lock_guard l(mu_);
      threads_.emplace_back([this, client, upstream] { Pump(client, upstream); });
    }
  }

  void Pump(int a, int b) {
    char buf[16384];
    while (!stopping_) {
      if (blackhole_) {
        usleep(10'000);
        continue;
      }
      pollfd fds[2] = {{a, POLLIN, 0}, {b, POLLIN, 0}};
      if (poll(fds, 2, 50) <= 0) continue;
      bool closed = false;
      for (int i = 0; i < 2 && !closed; ++i) {
        if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        ssize_t n = read(fds[i].fd, buf, sizeof(buf));
        if (n <= 0) {
          closed = true;
          break;
        }
        const int to = i == 0 ? b : a;
        for (ssize_t off = 0; off < n;) {
          ssize_t w = write(to, buf + off, static_cast<size_t>(n - off));
          if (w <= 0) {
            closed = true;
            break;
          }
          off += w;
        }
      }
      if (closed) break;
    }
    close(a);
    close(b);
  }

  const std::string target_host_;
  const int target_port_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> blackhole_{false};
  std::atomic<int> connections_{0};
  std::thread accept_thread_;
  std::mutex mu_;
  std::vector<std::thread> threads_;
};

}  // namespace ksched::testing
