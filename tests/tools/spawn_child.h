// Starts a child process without running any code of ours in it: the tests
// start children while other threads (servers, sanitizer runtimes) hold
// locks, and a fork()ed child that allocates before exec can wait on a lock
// no thread will ever release (seen in CI: api_server_test hung in the
// sanitizer's allocator). posix_spawn does its setup inside libc, with no
// allocation between fork and exec. Header-only.
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <string>
#include <vector>

namespace mesh::test {

// Starts `argv` (argv[0] is the program's path) with stdin from /dev/null
// and stdout, stderr written to `out_path`, `err_path` (appended when
// `append`, else truncated). Returns the child's pid; throws when it
// cannot be started (a program that is not there exits 127).
inline pid_t spawn_child(const std::vector<std::string>& argv, const std::string& out_path,
                         const std::string& err_path, bool append) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const int mode = O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(), mode, 0600);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(), mode, 0600);
  pid_t pid = -1;
  const int error = ::posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (error == ENOENT || error == EACCES) {
    // As fork+exec did: the caller sees a child that exited 127.
    return spawn_child({"/bin/sh", "-c", "exit 127"}, out_path, err_path, append);
  }
  if (error != 0) throw std::runtime_error("posix_spawn " + argv[0] + " failed: " + std::to_string(error));
  return pid;
}

}  // namespace mesh::test
