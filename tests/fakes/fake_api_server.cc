#include "tests/fakes/fake_api_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <sstream>

namespace ksched::testing {
namespace {

std::string Lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string UrlDecode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      out.push_back(static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16)));
      i += 2;
    } else if (s[i] == '+') {
      out.push_back(' ');
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

bool WriteAll(int fd, const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

const char* Reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 201: return "Created";
    case 404: return "Not Found";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return "Status";
  }
}

std::string Head(int status, const std::map<std::string, std::string>& headers) {
  std::string h = "HTTP/1.1 " + std::to_string(status) + " " + Reason(status) + "\r\n";
  bool has_ct = false;
  for (const auto& [k, v] : headers) {
    h += k + ": " + v + "\r\n";
    has_ct = has_ct || Lower(k) == "content-type";
  }
  if (!has_ct) h += "Content-Type: application/json\r\n";
  return h;
}

}  // namespace

void ResponseWriter::Respond(int status, const std::string& body, const std::map<std::string, std::string>& headers) {
  ok_ = ok_ && WriteAll(fd_, Head(status, headers) + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body);
}

void ResponseWriter::StartChunked(int status, const std::map<std::string, std::string>& headers) {
  ok_ = ok_ && WriteAll(fd_, Head(status, headers) + "Transfer-Encoding: chunked\r\n\r\n");
}

bool ResponseWriter::Chunk(const std::string& data) {
  std::ostringstream ss;
  ss << std::hex << data.size() << "\r\n" << data << "\r\n";
  ok_ = ok_ && WriteAll(fd_, ss.str());
  return ok_;
}

bool ResponseWriter::Raw(const std::string& bytes) {
  ok_ = ok_ && WriteAll(fd_, bytes);
  return ok_;
}

void ResponseWriter::End() { ok_ = ok_ && WriteAll(fd_, "0\r\n\r\n"); }

void ResponseWriter::Abort() {
  ::shutdown(fd_, SHUT_RDWR);
  ok_ = false;
}

FakeApiServer::FakeApiServer(Handler handler, bool record) : handler_(std::move(handler)), record_(record) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  ::listen(listen_fd_, 64);
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

FakeApiServer::~FakeApiServer() {
  Stop();
  ::shutdown(listen_fd_, SHUT_RDWR);
  ::close(listen_fd_);
  acceptor_.join();
  std::vector<std::thread> workers;
  {
    std::lock_guard l(mu_);
    workers.swap(workers_);
  }
  for (auto& t : workers) t.join();
}

void FakeApiServer::Stop() {
  std::lock_guard l(mu_);
  stopping_ = true;
  for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
  stop_cv_.notify_all();
}

void FakeApiServer::WaitForStop(std::chrono::milliseconds timeout) {
  std::unique_lock l(mu_);
  stop_cv_.wait_for(l, timeout, [&] { return stopping_.load(); });
}

std::vector<HttpRequest> FakeApiServer::requests() const {
  std::lock_guard l(mu_);
  return requests_;
}

int FakeApiServer::request_count() const {
  std::lock_guard l(mu_);
  return static_cast<int>(requests_.size() + unrecorded_);
}

void FakeApiServer::AcceptLoop() {
  for (;;) {
    int fd = ::accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) return;
    std::lock_guard l(mu_);
    if (stopping_) {
      ::close(fd);
      continue;
    }
    open_fds_.push_back(fd);
    workers_.emplace_back([this, fd] { Serve(fd); });
  }
}

// Serves requests on one keep-alive connection until the client or a handler closes it.
void FakeApiServer::Serve(int fd) {
  std::string buf;
  char tmp[16384];
  for (;;) {
    size_t head_end;
    while ((head_end = buf.find("\r\n\r\n")) == std::string::npos) {
      ssize_t n = ::recv(fd, tmp, sizeof(tmp), 0);
      if (n <= 0) goto done;
      buf.append(tmp, static_cast<size_t>(n));
    }
    {
      HttpRequest req;
      std::istringstream head(buf.substr(0, head_end));
      std::string line;
      std::getline(head, line);
      std::istringstream rl(line);
      rl >> req.method >> req.target;
      while (std::getline(head, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        std::string v = line.substr(colon + 1);
        v.erase(0, v.find_first_not_of(' '));
        req.headers[Lower(line.substr(0, colon))] = v;
      }
      buf.erase(0, head_end + 4);
      size_t content_length = req.headers.count("content-length") ? std::stoul(req.headers["content-length"]) : 0;
      while (buf.size() < content_length) {
        ssize_t n = ::recv(fd, tmp, sizeof(tmp), 0);
        if (n <= 0) goto done;
        buf.append(tmp, static_cast<size_t>(n));
      }
      req.body = buf.substr(0, content_length);
      buf.erase(0, content_length);
      auto q = req.target.find('?');
      req.path = req.target.substr(0, q);
      if (q != std::string::npos) {
        std::istringstream qs(req.target.substr(q + 1));
        std::string kv;
        while (std::getline(qs, kv, '&')) {
          auto eq = kv.find('=');
          req.query[UrlDecode(kv.substr(0, eq))] = eq == std::string::npos ? "" : UrlDecode(kv.substr(eq + 1));
        }
      }
      {
        std::lock_guard l(mu_);
        if (record_) {
          requests_.push_back(req);
        } else {
          ++unrecorded_;
        }
      }
      ResponseWriter w(fd);
      handler_(req, w);
      if (!w.ok()) break;
    }
  }
done:
  std::lock_guard l(mu_);
  open_fds_.erase(std::remove(open_fds_.begin(), open_fds_.end(), fd), open_fds_.end());
  ::close(fd);
}

}  // namespace ksched::testing
