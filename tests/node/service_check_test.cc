// The service check (node/service_check.h): parsing the spec, matching
// processes, and each kind run for real: processes spawned here, `exec:`
// commands through /bin/sh, a hung command killed at its deadline, and
// systemd when systemctl exists.
#include "node/service_check.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <thread>

#include "node/process_scan.h"
#include "node/reason_text.h"
#include "node/text_file.h"

extern char** environ;

namespace mesh::node {
namespace {

const std::string kProc = "/proc";

TEST_CASE("service specs: the four kinds, and clear errors") {
  CHECK(parse_service_spec("").value() == ServiceSpec{});
  CHECK(parse_service_spec("systemd:xray.service").value() ==
        ServiceSpec{ServiceKind::systemd, "xray.service"});
  CHECK(parse_service_spec("process:xray").value() == ServiceSpec{ServiceKind::process, "xray"});
  CHECK(parse_service_spec("exec:curl -fs http://127.0.0.1:8080/health").value() ==
        ServiceSpec{ServiceKind::exec, "curl -fs http://127.0.0.1:8080/health"});

  const auto unknown = parse_service_spec("docker:xray");
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.code() == ServiceSpecError::unknown_scheme);
  CHECK(unknown.message().find("docker:xray") != std::string::npos);
  CHECK(unknown.message().find("unknown scheme") != std::string::npos);
  CHECK(parse_service_spec("xray").code() == ServiceSpecError::unknown_scheme);
  CHECK(parse_service_spec("systemd:").code() == ServiceSpecError::empty_argument);
  CHECK(parse_service_spec("process:").code() == ServiceSpecError::empty_argument);
  CHECK(parse_service_spec("exec:").code() == ServiceSpecError::empty_argument);
  CHECK(parse_service_spec("process:/usr/bin/xray").code() == ServiceSpecError::bad_character);
  CHECK(parse_service_spec("systemd:a b").code() == ServiceSpecError::bad_character);
  CHECK(parse_service_spec("exec:true\nfalse").code() == ServiceSpecError::bad_character);
  CHECK(parse_service_spec("exec:" + std::string(kServiceSpecBytesMax, 'x')).code() ==
        ServiceSpecError::too_long);
  CHECK(to_string(parse_service_spec("exec:true").value()) == "exec:true");
  CHECK(to_string(ServiceSpec{}).empty());
}

TEST_CASE("a process matches by comm or by argv[0] and its base name") {
  CHECK(process_matches("xray", "xray\n", std::string_view("/usr/local/bin/xray\0run\0", 25)));
  CHECK(process_matches("xray", "other\n", std::string_view("/usr/local/bin/xray\0", 20)));
  CHECK(process_matches("xray", "xray\n", ""));
  CHECK(process_matches("xray", "", std::string_view("xray\0-c\0", 8)));
  CHECK_FALSE(process_matches("xray", "xray-helper\n", "/bin/xray-helper"));
  CHECK_FALSE(process_matches("xray", "", "/bin/myxray"));
  CHECK_FALSE(process_matches("", "", ""));
}

// A `sleep 30` whose argv[0] is `name`, killed and reaped on destruction.
class NamedSleeper {
 public:
  explicit NamedSleeper(const std::string& name) {
    std::string duration = "30";
    char* argv[] = {const_cast<char*>(name.c_str()), duration.data(), nullptr};
    REQUIRE(::posix_spawn(&pid_, "/bin/sleep", nullptr, nullptr, argv, environ) == 0);
    // posix_spawn returns while the kernel is still inside execve: the new
    // command line shows in /proc a moment later.
    const std::string cmdline = "/proc/" + std::to_string(pid_) + "/cmdline";
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (read_text_file(cmdline).rfind(name, 0) != 0 &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::yield();
    }
  }
  ~NamedSleeper() {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  NamedSleeper(const NamedSleeper&) = delete;
  NamedSleeper& operator=(const NamedSleeper&) = delete;

 private:
  pid_t pid_ = 0;
};

// True when some process's command line contains `marker`; waits up to
// `limit` for none to (a bound against slow signal delivery, not a sleep).
bool marker_gone(const std::string& marker, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (!process_running(marker, kProc)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST_CASE("process: finds a running process by name, and says when there is none") {
  const std::string name = "meshtest-" + std::to_string(::getpid());
  NamedSleeper sleeper(name);
  CHECK(check_service({ServiceKind::process, name}, 1'000, kProc).ok);
  const ServiceStatus missing = check_service({ServiceKind::process, name + "-x"}, 1'000, kProc);
  CHECK_FALSE(missing.ok);
  CHECK(missing.reason == "service process:" + name + "-x: not running");
}

TEST_CASE("exec: exit 0 is running; another exit code is not, and the reason says which") {
  CHECK(check_service({ServiceKind::exec, "true"}, 2'000, kProc).ok);
  const ServiceStatus failed = check_service({ServiceKind::exec, "exit 3"}, 2'000, kProc);
  CHECK_FALSE(failed.ok);
  CHECK(failed.reason == "service exec:exit 3: exit 3");
  const ServiceStatus false_status = check_service({ServiceKind::exec, "false"}, 2'000, kProc);
  CHECK_FALSE(false_status.ok);
  CHECK(false_status.reason == "service exec:false: exit 1");
}

TEST_CASE("exec: a hung command is killed with its process group at the deadline") {
  // Both sleeps carry argv[0] = marker: one in the background, one in front.
  const std::string marker = "meshtest-hang-" + std::to_string(::getpid());
  const std::string command =
      "exec -a " + marker + " sleep 10 & exec -a " + marker + " sleep 10";
  const std::string shell_command = "bash -c '" + command + "'";
  const ServiceStatus hung = check_service({ServiceKind::exec, shell_command}, 300, kProc);
  CHECK_FALSE(hung.ok);
  CHECK(hung.reason.find("timed out after 300 ms") != std::string::npos);
  CHECK(marker_gone(marker, std::chrono::seconds(5)));
}

TEST_CASE("exec: a command that cannot be found is not running") {
  const ServiceStatus missing =
      check_service({ServiceKind::exec, "/nonexistent/meshnode-check"}, 2'000, kProc);
  CHECK_FALSE(missing.ok);
  CHECK(missing.reason == "service exec:/nonexistent/meshnode-check: exit 127");
}

TEST_CASE("systemd: an unknown unit is not active") {
  if (::access("/usr/bin/systemctl", X_OK) != 0 && ::access("/bin/systemctl", X_OK) != 0) {
    MESSAGE("skipped: no systemctl on this machine");
    return;
  }
  const std::string unit = "meshnode-test-no-such-unit-" + std::to_string(::getpid()) + ".service";
  const ServiceStatus status = check_service({ServiceKind::systemd, unit}, 5'000, kProc);
  CHECK_FALSE(status.ok);
  CHECK(status.reason.rfind("service systemd:meshnode-test-no-such-unit-", 0) == 0);
}

TEST_CASE("reasons are cut on a UTF-8 boundary") {
  CHECK(truncate_utf8("abc", 5) == "abc");
  CHECK(truncate_utf8("abcdef", 3) == "abc");
  CHECK(truncate_utf8("a\xC3\xA9", 2) == "a");  // "aé": never half of é
  CHECK(truncate_utf8("a\xC3\xA9", 3) == "a\xC3\xA9");
}

TEST_CASE("no service spec: the service counts as running") {
  CHECK(check_service(ServiceSpec{}, 1'000, kProc).ok);
}

}  // namespace
}  // namespace mesh::node
