// A forked child process for the storage tests, with one pipe each way for
// synchronisation, so tests wait on events rather than on time.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <functional>

#include <doctest/doctest.h>

namespace mesh::test {

inline bool write_byte(int fd, std::uint8_t byte) {
  for (;;) {
    ssize_t n = ::write(fd, &byte, 1);
    if (n == 1) return true;
    if (n < 0 && errno == EINTR) continue;
    return false;
  }
}

// False on end of file (the other side closed or died).
inline bool read_byte(int fd) {
  std::uint8_t byte = 0;
  for (;;) {
    ssize_t n = ::read(fd, &byte, 1);
    if (n == 1) return true;
    if (n < 0 && errno == EINTR) continue;
    return false;
  }
}

// A forked child running `body`, with a pipe each way. The child exits with
// body's return value; it never returns into doctest. The destructor kills
// and reaps a child that is still running.
class Child {
 public:
  explicit Child(const std::function<int(int to_parent, int from_parent)>& body) {
    int up[2];
    int down[2];
    REQUIRE(::pipe(up) == 0);
    REQUIRE(::pipe(down) == 0);
    std::fflush(nullptr);  // or the child would repeat buffered output
    pid_ = ::fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      // The test runner's crash handlers would report the child's abort as
      // a failed test; the parent judges the child by its wait status.
      for (int sig : {SIGABRT, SIGSEGV, SIGILL, SIGFPE, SIGTERM, SIGINT}) ::signal(sig, SIG_DFL);
      ::close(up[0]);
      ::close(down[1]);
      ::_exit(body(up[1], down[0]));
    }
    ::close(up[1]);
    ::close(down[0]);
    from_child_ = up[0];
    to_child_ = down[1];
  }
  ~Child() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      wait();
    }
    ::close(from_child_);
    ::close(to_child_);
  }

  bool receive() { return read_byte(from_child_); }
  bool send() { return write_byte(to_child_, 1); }
  void kill_now() { REQUIRE(::kill(pid_, SIGKILL) == 0); }
  // Reaps the child; returns the raw wait status.
  int wait() {
    int status = 0;
    REQUIRE(::waitpid(pid_, &status, 0) == pid_);
    pid_ = -1;
    return status;
  }
  // True when the child has exited (reaped); never blocks.
  bool exited(int* status) {
    pid_t done = ::waitpid(pid_, status, WNOHANG);
    REQUIRE(done >= 0);
    if (done == 0) return false;
    pid_ = -1;
    return true;
  }

 private:
  pid_t pid_ = -1;
  int from_child_ = -1;
  int to_child_ = -1;
};

}  // namespace mesh::test
