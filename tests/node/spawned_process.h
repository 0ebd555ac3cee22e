// A program started in the background for a process test, its stdout and
// stderr in files the test can poll. The destructor kills (SIGKILL) and
// reaps a process still running, so a failed test leaves nothing behind.
// Header-only.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/node/net_util.h"
#include "tests/tools/spawn_child.h"

namespace mesh::test {

class SpawnedProcess {
 public:
  // Starts `argv` (argv[0] is the program's path) with stdin from /dev/null
  // and stdout, stderr appended to `out_path`, `err_path`.
  SpawnedProcess(const std::vector<std::string>& argv, const std::string& out_path,
                 const std::string& err_path)
      : err_path_(err_path) {
    pid_ = spawn_child(argv, out_path, err_path, /*append=*/true);
  }
  ~SpawnedProcess() {
    if (running()) {
      ::kill(pid_, SIGKILL);
      int status = 0;
      ::waitpid(pid_, &status, 0);
    }
  }
  SpawnedProcess(const SpawnedProcess&) = delete;
  SpawnedProcess& operator=(const SpawnedProcess&) = delete;

  pid_t pid() const { return pid_; }
  bool running() const { return !status_.has_value(); }
  void signal(int sig) const { ::kill(pid_, sig); }

  // Waits at most `timeout` for the process to end; its wait status, or
  // nullopt when it is still running.
  std::optional<int> wait_exit(std::chrono::milliseconds timeout) {
    wait_until(
        [&] {
          int status = 0;
          if (running() && ::waitpid(pid_, &status, WNOHANG) == pid_) status_ = status;
          return !running();
        },
        timeout);
    return status_;
  }

  // Everything the process wrote to stderr so far.
  std::string err_text() const {
    std::ifstream in(err_path_, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }

  // Waits at most `timeout` until stderr holds `fragment` `times` times.
  bool wait_for_err(const std::string& fragment, std::chrono::milliseconds timeout,
                    int times = 1) const {
    return wait_until(
        [&] {
          std::string text = err_text();
          int found = 0;
          for (std::size_t at = text.find(fragment); at != std::string::npos;
               at = text.find(fragment, at + 1)) {
            ++found;
          }
          return found >= times;
        },
        timeout);
  }

 private:
  pid_t pid_ = -1;
  std::string err_path_;
  std::optional<int> status_;
};

}  // namespace mesh::test
