// The data dir as the user meshnode runs as finds it (node/data_dir_check.h),
// with real files and real users: as root, a child process drops to
// `nobody` and checks what root left behind. Where the test is not root it
// checks what a plain user can (a missing dir) and says the rest is skipped.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <string>

#include "node/data_dir_check.h"
#include "tests/tools/run_process.h"

namespace mesh::node {
namespace {

constexpr uid_t kNobody = 65534;
constexpr gid_t kNogroup = 65534;

struct Outcome {
  bool ok = false;
  std::string message;
};

bool contains(const std::string& text, const std::string& fragment) { return text.find(fragment) != std::string::npos; }

// check_data_dir(dir) in a child that runs as nobody; its answer through a pipe.
Outcome check_as_nobody(const std::string& dir) {
  std::array<int, 2> pipe_fds{};
  REQUIRE(::pipe(pipe_fds.data()) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(pipe_fds[0]);
    if (::setgroups(0, nullptr) != 0 || ::setgid(kNogroup) != 0 || ::setuid(kNobody) != 0) ::_exit(3);
    auto checked = check_data_dir(dir);
    const std::string text = (checked ? "1" : "0") + (checked ? checked.value() : checked.message());
    (void)!::write(pipe_fds[1], text.data(), text.size());
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  std::string text;
  char buffer[512];
  for (ssize_t n; (n = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<std::size_t>(n));
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  REQUIRE(!text.empty());
  return {text[0] == '1', text.substr(1)};
}

void make_file(const std::string& path, mode_t mode) {
  const int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, mode);
  REQUIRE(fd >= 0);
  ::close(fd);
  REQUIRE(::chmod(path.c_str(), mode) == 0);
}

TEST_CASE("a missing data dir, or a file where the dir should be, is named with what to do") {
  test::TempDir dir;
  auto missing = check_data_dir(dir.file("data"));
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.code() == DataDirError::missing);
  CHECK(contains(missing.message(), "does not exist"));
  CHECK(contains(missing.message(), "install -d -m 0700"));
  make_file(dir.file("plain"), 0600);
  auto file = check_data_dir(dir.file("plain"));
  REQUIRE_FALSE(file.ok());
  CHECK(file.code() == DataDirError::not_directory);
}

TEST_CASE("owners and permissions: root in a user's dir, a user facing root's files, each with the fix") {
  if (::geteuid() != 0) {
    MESSAGE("skipped: needs root to make files of other users (CI runs as root)");
    return;
  }
  test::TempDir base;
  REQUIRE(::chmod(base.path().c_str(), 0711) == 0);  // nobody may pass through
  const std::string dir = base.file("data");
  REQUIRE(::mkdir(dir.c_str(), 0700) == 0);

  SUBCASE("run as root in a dir another user owns: refused before root writes a file there") {
    REQUIRE(::chown(dir.c_str(), kNobody, kNogroup) == 0);
    auto checked = check_data_dir(dir);
    REQUIRE_FALSE(checked.ok());
    CHECK(checked.code() == DataDirError::root_in_users_dir);
    CHECK(contains(checked.message(), "owned by nobody (uid 65534)"));
    CHECK(contains(checked.message(), "run meshnode as nobody"));
  }
  SUBCASE("the service user after a run as root: root's data.mdb, the owner and the chown named") {
    REQUIRE(::chown(dir.c_str(), kNobody, kNogroup) == 0);
    make_file(dir + "/data.mdb", 0644);  // what a start as root leaves
    const Outcome outcome = check_as_nobody(dir);
    CHECK_FALSE(outcome.ok);
    CHECK(contains(outcome.message, "'" + dir + "/data.mdb' is owned by root (uid 0), mode 0644"));
    CHECK(contains(outcome.message, "meshnode runs as nobody (uid 65534)"));
    CHECK(contains(outcome.message, "`chown -R nobody:nogroup " + dir + "`"));
    // Handed over, the same user finds it fine.
    REQUIRE(::chown((dir + "/data.mdb").c_str(), kNobody, kNogroup) == 0);
    const Outcome fixed = check_as_nobody(dir);
    CHECK(fixed.ok);
    CHECK(fixed.message == "exists, writable by nobody (uid 65534)");
  }
  SUBCASE("a dir the user may not write") {
    REQUIRE(::chmod(dir.c_str(), 0755) == 0);
    const Outcome outcome = check_as_nobody(dir);
    CHECK_FALSE(outcome.ok);
    CHECK(contains(outcome.message, "data dir '" + dir + "' is owned by root (uid 0), mode 0755"));
    CHECK(contains(outcome.message, "chown -R nobody:nogroup " + dir));
  }
  SUBCASE("--check-config run as root checks the dir for its owner, who runs the service") {
    REQUIRE(::chown(dir.c_str(), kNobody, kNogroup) == 0);
    auto empty = check_data_dir_for_service(dir);
    REQUIRE(empty.ok());
    CHECK(contains(empty.value(), "owned by nobody (uid 65534), who can write it"));
    make_file(dir + "/data.mdb", 0644);  // a start as root left it
    auto left = check_data_dir_for_service(dir);
    REQUIRE_FALSE(left.ok());
    CHECK(contains(left.message(), "'" + dir + "/data.mdb' is owned by root (uid 0), mode 0644, but the data dir by nobody"));
    CHECK(contains(left.message(), "`chown -R nobody:nogroup " + dir + "`"));
    REQUIRE(::chown((dir + "/data.mdb").c_str(), kNobody, kNogroup) == 0);
    CHECK(check_data_dir_for_service(dir).ok());
  }
  SUBCASE("explain_storage_error adds the cause to LMDB's bare permission error, and only to it") {
    REQUIRE(::chown(dir.c_str(), kNobody, kNogroup) == 0);
    const std::string lmdb = "mdb_env_open: Permission denied";
    CHECK(contains(explain_storage_error(dir, lmdb), "run meshnode as nobody"));
    CHECK(explain_storage_error(dir, "mdb_env_open: No space left on device") ==
          "mdb_env_open: No space left on device");
  }
}

}  // namespace
}  // namespace mesh::node
