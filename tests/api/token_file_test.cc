// The token file on disk (node/api/tokens.h): a file group or others may
// write is refused (anyone could add an admin token), one others may read
// is loaded with a warning to give, each with the chmod to run.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <fstream>

#include "node/api/tokens.h"
#include "tests/tools/run_process.h"

namespace mesh::api {
namespace {

bool contains(const std::string& text, const std::string& fragment) { return text.find(fragment) != std::string::npos; }

TEST_CASE("a token file's mode: 0600 and 0640 quietly, 0644 with a warning, 0666 and 0620 refused") {
  test::TempDir dir;
  const std::string path = dir.file("api-tokens");
  std::ofstream(path) << "read " << token_hash_hex("a-read-token") << "\n";
  for (mode_t mode : {0600, 0640, 0400}) {
    CAPTURE(mode);
    REQUIRE(::chmod(path.c_str(), mode) == 0);
    CHECK(TokenSet::load(path).ok());
    CHECK(!token_file_exposed(path).has_value());
  }
  REQUIRE(::chmod(path.c_str(), 0644) == 0);
  auto readable = TokenSet::load(path);
  REQUIRE(readable.ok());
  CHECK(readable->role_of("a-read-token") == Role::read);
  const auto warning = token_file_exposed(path);
  REQUIRE(warning.has_value());
  CHECK(contains(*warning, "has mode 0644: others may read it"));
  CHECK(contains(*warning, "chmod 0600 " + path));
  for (mode_t mode : {0666, 0620, 0602}) {
    CAPTURE(mode);
    REQUIRE(::chmod(path.c_str(), mode) == 0);
    auto refused = TokenSet::load(path);
    REQUIRE(!refused.ok());
    CHECK(refused.code() == TokenError::writable);
    CHECK(contains(refused.message(), "group or others may write it"));
    CHECK(contains(refused.message(), "chmod 0600 " + path));
  }
}

}  // namespace
}  // namespace mesh::api
