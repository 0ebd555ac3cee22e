#include "tools/standin/service.h"

#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <fstream>

namespace mesh::standin {
namespace {

bool is_process_name(const std::string& name) {
  if (name.empty() || name.size() > kProcessNameBytesMax) return false;
  for (char c : name) {
    auto b = static_cast<unsigned char>(c);
    if (b < 0x20 || b == 0x7f || c == '/') return false;
  }
  return true;
}

int fail(const std::string& message) {
  std::fprintf(stderr, "meshnode-standin: %s\n", message.c_str());
  return 2;
}

// Written to a temporary name, then renamed: a reader never sees half a pid.
bool write_pid_file(const std::string& path) {
  std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << ::getpid() << "\n";
    if (!out.flush()) return false;
  }
  return std::rename(temporary.c_str(), path.c_str()) == 0;
}

}  // namespace

int run_service(const ServiceOptions& options) {
  if (!is_process_name(options.name)) {
    return fail("--name '" + options.name + "': must be 1.." +
                std::to_string(kProcessNameBytesMax) +
                " bytes (the kernel's limit for /proc/PID/comm), no '/' or control characters");
  }
  // Block the signals first, so that one arriving at any point is waited for.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  if (sigprocmask(SIG_BLOCK, &signals, nullptr) != 0) return fail("cannot block signals");
  if (prctl(PR_SET_NAME, options.name.c_str(), 0, 0, 0) != 0)
    return fail("prctl(PR_SET_NAME) failed");
  if (!options.pid_file.empty() && !write_pid_file(options.pid_file)) {
    return fail("cannot write the pid file '" + options.pid_file + "'");
  }
  std::fprintf(stderr, "meshnode-standin: service '%s' running, pid %d\n", options.name.c_str(),
               static_cast<int>(::getpid()));
  int received = 0;
  while (sigwait(&signals, &received) != 0) {
  }
  if (!options.pid_file.empty()) std::remove(options.pid_file.c_str());
  std::fprintf(stderr, "meshnode-standin: service '%s' stopped by signal %d\n",
               options.name.c_str(), received);
  return 0;
}

}  // namespace mesh::standin
