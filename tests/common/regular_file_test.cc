// read_regular_file: a bounded read that never blocks and never reads what
// is not a regular file (common/regular_file.h).
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "common/regular_file.h"

namespace mesh {
namespace {

struct TempDir {
  std::string path;
  TempDir() {
    char name[] = "/tmp/meshnode-regular-file-XXXXXX";
    path = ::mkdtemp(name);
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path + "/" + name, std::ios::binary) << text;
    return path + "/" + name;
  }
};

TEST_CASE("a regular file within the bound is read whole; over it, refused") {
  TempDir dir;
  const std::string file = dir.write("a", "hello");
  auto whole = read_regular_file(file, 5);
  REQUIRE(whole.ok());
  CHECK(whole.value() == "hello");
  auto over = read_regular_file(file, 4);
  REQUIRE_FALSE(over.ok());
  CHECK(over.code() == FileReadError::too_large);
  CHECK(over.message() == "is over 4 bytes");
  auto prefix = read_regular_file(file, 3, FileReadMode::prefix);
  REQUIRE(prefix.ok());
  CHECK(prefix.value() == "hel");
  CHECK(read_regular_file(dir.write("empty", ""), 10).value().empty());
}

// A roster file's bound is 1 MiB: a buffer of the bound for a 20 KB file,
// zeroed at every start, left the daemon's heap 1 MiB larger for good
// (RSS at N = 100 8.4 instead of 7.4 MiB, from 40ec941 to 2026-12-06).
TEST_CASE("a small file costs a buffer of its size, not of the bound; one that says size 0 is read whole") {
  TempDir dir;
  const std::string text(20'000, 'r');
  auto small = read_regular_file(dir.write("roster", text), 1024 * 1024 + 256);
  REQUIRE(small.ok());
  CHECK(small.value() == text);
  CHECK(small.value().capacity() < 2 * text.size());
  // /proc's files are regular and say size 0; this one is longer than the
  // first page the buffer starts with.
  auto maps = read_regular_file("/proc/self/smaps", 1024 * 1024);
  REQUIRE(maps.ok());
  CHECK(maps.value().size() > 4096);
  CHECK(maps.value().find("[stack]") != std::string::npos);
  // Still bounded: the prefix of such a file is the bound's bytes.
  auto start = read_regular_file("/proc/self/smaps", 5000, FileReadMode::prefix);
  REQUIRE(start.ok());
  CHECK(start.value().size() == 5000);
  // A file of exactly the bound is read whole; one byte more is refused.
  CHECK(read_regular_file(dir.write("bound", std::string(10'000, 'b')), 10'000).ok());
  CHECK(read_regular_file(dir.write("over", std::string(10'001, 'b')), 10'000).code() == FileReadError::too_large);
}

TEST_CASE("a FIFO is refused at once, without waiting for a writer") {
  TempDir dir;
  const std::string fifo = dir.path + "/fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  auto read = read_regular_file(fifo, 100);  // would hang without O_NONBLOCK
  REQUIRE_FALSE(read.ok());
  CHECK(read.code() == FileReadError::not_regular);
  CHECK(read.message() == "is a FIFO, not a regular file");
}

TEST_CASE("a directory, a missing file and an unreadable one have their own errors") {
  TempDir dir;
  auto directory = read_regular_file(dir.path, 100);
  REQUIRE_FALSE(directory.ok());
  CHECK(directory.code() == FileReadError::not_regular);
  CHECK(directory.message() == "is a directory, not a regular file");
  auto missing = read_regular_file(dir.path + "/absent", 100);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.code() == FileReadError::missing);
  CHECK(missing.message() == "cannot be opened (No such file or directory)");
  if (::geteuid() != 0) {  // root reads whatever the mode says
    const std::string secret = dir.write("secret", "x");
    REQUIRE(::chmod(secret.c_str(), 0) == 0);
    auto denied = read_regular_file(secret, 100);
    REQUIRE_FALSE(denied.ok());
    CHECK(denied.code() == FileReadError::unreadable);
  }
}

}  // namespace
}  // namespace mesh
