// Small process and file helpers for tests and benchmarks that drive real programs
// (the control plane, ksched binaries): run a shell command, read a file, pick a free
// loopback port. Header-only, so a benchmark uses them without GoogleTest.
#pragma once

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

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

// A child process with its stdout and stderr in a log file, for the tests and benchmarks
// that run real programs (ksched, the chaos benchmark's replicas). It starts with no
// signal blocked, whatever the parent blocks. Stopped when it goes out of scope (SIGTERM,
// then SIGKILL after `destroy_grace`; zero: SIGKILL at once), so a failed assertion never
// leaves it running.
class ChildProcess {
 public:
  struct Options {
    // SIGKILLed by the kernel if the thread that started it ends (a crashed benchmark
    // leaves no scheduler behind). Start it from the main thread then.
    bool kill_with_parent = false;
    std::chrono::milliseconds destroy_grace{10000};
    // Whether the destructor prints the log (e.g. whether the test failed).
    std::function<bool()> print_log_if;
  };

  ChildProcess(std::vector<std::string> argv, std::string log_path) : ChildProcess(std::move(argv), std::move(log_path), Options{}) {}
  ChildProcess(std::vector<std::string> argv, std::string log_path, Options options)
      : log_path_(std::move(log_path)), options_(std::move(options)) {
    std::vector<char*> args;
    for (std::string& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    const bool pdeathsig = options_.kill_with_parent;
    pid_ = ::fork();
    if (pid_ == 0) {
      if (pdeathsig) ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      int fd = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd >= 0) {
        ::dup2(fd, STDOUT_FILENO);
        ::dup2(fd, STDERR_FILENO);
      }
      sigset_t none;
      sigemptyset(&none);
      ::sigprocmask(SIG_SETMASK, &none, nullptr);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
  }
  ~ChildProcess() {
    Stop(options_.destroy_grace);
    if (options_.print_log_if && options_.print_log_if())
      std::fprintf(stderr, "---- %s ----\n%s\n", log_path_.c_str(), Log().c_str());
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  bool Started() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  const std::string& log_path() const { return log_path_; }
  bool Running() {
    if (pid_ <= 0 || exited_) return false;
    if (::waitpid(pid_, &status_, WNOHANG) == pid_) exited_ = true;
    return !exited_;
  }
  void Signal(int sig) {
    if (Running()) ::kill(pid_, sig);
  }
  // Waits up to `timeout` for the process to exit; true if it has.
  bool WaitExit(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (Running() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return !Running();
  }
  // Once exited: the exit code, or 128 + the signal that ended it; -1 while running.
  int ExitCode() const {
    if (!exited_) return -1;
    return WIFEXITED(status_) ? WEXITSTATUS(status_) : 128 + WTERMSIG(status_);
  }
  // Once exited: "exit N" or "signal N".
  std::string HowExited() const {
    if (!exited_) return "running";
    return WIFEXITED(status_) ? "exit " + std::to_string(WEXITSTATUS(status_))
                              : "signal " + std::to_string(WTERMSIG(status_));
  }
  bool ExitedNormally() const { return exited_ && WIFEXITED(status_); }
  // SIGTERM, up to `grace` for a graceful exit, then SIGKILL (zero grace: SIGKILL at
  // once). Returns ExitCode().
  int Stop(std::chrono::milliseconds grace = std::chrono::seconds(10)) {
    if (pid_ <= 0) return -1;
    if (Running()) {
      if (grace.count() > 0) ::kill(pid_, SIGTERM);
      if (grace.count() == 0 || !WaitExit(grace)) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status_, 0);
        exited_ = true;
      }
    }
    return ExitCode();
  }
  std::string Log() const { return ReadFile(log_path_); }

 private:
  std::string log_path_;
  Options options_;
  pid_t pid_ = -1;
  bool exited_ = false;
  int status_ = -1;
};

}  // namespace ksched::testing
