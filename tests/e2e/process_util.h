// Small process and file helpers for tests and benchmarks that drive real programs
// (the control plane, ksched binaries): run a shell command, read a file, pick a free
// loopback port. Header-only, so a benchmark uses them without GoogleTest.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "pkg/util/status.h"

namespace ksched::testing {

// Runs a shell command, returning its stdout; an error carries the exit status.
inline StatusOr<std::string> RunCommand(const std::string& command) {
  FILE* p = ::popen(command.c_str(), "r");
  if (!p) return Internal("popen failed for: " + command);
  std::string out;
  std::array<char, 4096> buf;
  while (size_t n = std::fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  int rc = ::pclose(p);
  if (rc != 0) return Internal("command failed (status " + std::to_string(WEXITSTATUS(rc)) + "): " + command);
  return out;
}

// The whole file; "" if it cannot be read.
inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A TCP port on 127.0.0.1 that was free a moment ago (the kernel's pick for port 0).
inline int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

}  // namespace ksched::testing
