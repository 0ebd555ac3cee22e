#include "node/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "common/check.h"

extern char** environ;

namespace mesh::node {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kFirstInheritedFdClosed = 3;  // keep stdin, stdout, stderr only
// waitpid() polling: the first check after 1 ms, doubling up to 20 ms.
constexpr std::chrono::milliseconds kPollFirst{1};
constexpr std::chrono::milliseconds kPollMax{20};

// posix_spawn's attribute and file-action objects, destroyed on scope exit.
class SpawnSetup {
 public:
  SpawnSetup() {
    posix_spawnattr_init(&attributes_);
    posix_spawn_file_actions_init(&actions_);
    sigset_t signals;
    sigemptyset(&signals);
    posix_spawnattr_setsigmask(&attributes_, &signals);
    sigfillset(&signals);
    posix_spawnattr_setsigdefault(&attributes_, &signals);
    posix_spawnattr_setpgroup(&attributes_, 0);  // a new group whose id is the child's pid
    constexpr short kFlags = POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
    posix_spawnattr_setflags(&attributes_, kFlags);
    posix_spawn_file_actions_addopen(&actions_, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions_, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&actions_, STDOUT_FILENO, STDERR_FILENO);
    // The daemon's sockets must not leak into a check that outlives it.
    posix_spawn_file_actions_addclosefrom_np(&actions_, kFirstInheritedFdClosed);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions_);
    posix_spawnattr_destroy(&attributes_);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;

  const posix_spawnattr_t* attributes() const { return &attributes_; }
  const posix_spawn_file_actions_t* actions() const { return &actions_; }

 private:
  posix_spawnattr_t attributes_;
  posix_spawn_file_actions_t actions_;
};

ChildResult ending_of(int status) {
  ChildResult result;
  if (WIFEXITED(status)) {
    result.ending = ChildResult::Ending::exited;
    result.exit_code = WEXITSTATUS(status);
  } else {
    result.ending = ChildResult::Ending::signaled;
    result.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  }
  return result;
}

ChildResult failure(const char* what, int error_number) {
  ChildResult result;
  result.ending = ChildResult::Ending::spawn_failed;
  result.error = std::string(what) + ": " + std::strerror(error_number);
  return result;
}

ChildResult wait_with_deadline(pid_t pid, DurationMs timeout_ms, const std::atomic<bool>* cancel) {
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  std::chrono::milliseconds step = kPollFirst;
  for (;;) {
    int status = 0;
    const pid_t got = ::waitpid(pid, &status, WNOHANG);
    if (got == pid) return ending_of(status);
    if (got < 0 && errno != EINTR) return failure("waitpid", errno);
    const Clock::time_point now = Clock::now();
    if (now >= deadline || (cancel != nullptr && cancel->load())) break;
    std::this_thread::sleep_for(
        std::min<Clock::duration>(step, deadline - now));
    step = std::min(step * 2, kPollMax);
  }
  ::kill(-pid, SIGKILL);  // the group: `sh -c` and whatever it started
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  ChildResult result;
  result.ending = ChildResult::Ending::timed_out;
  return result;
}

}  // namespace

ChildResult run_child(const std::vector<std::string>& argv, DurationMs timeout_ms,
                      const std::atomic<bool>* cancel) {
  MESH_CHECK(!argv.empty(), "run_child needs a program");
  std::vector<char*> pointers;
  pointers.reserve(argv.size() + 1);
  for (const auto& arg : argv) pointers.push_back(const_cast<char*>(arg.c_str()));
  pointers.push_back(nullptr);
  const SpawnSetup setup;
  pid_t pid = 0;
  const int spawn_error = ::posix_spawnp(&pid, argv[0].c_str(), setup.actions(),
                                         setup.attributes(), pointers.data(), environ);
  if (spawn_error != 0) return failure(argv[0].c_str(), spawn_error);
  return wait_with_deadline(pid, timeout_ms, cancel);
}

}  // namespace mesh::node
