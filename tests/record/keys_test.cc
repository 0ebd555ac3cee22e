#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "record/keys.h"
#include "tests/record/fixtures.h"

using namespace mesh;
using mesh::test::contains;

namespace {

// A fresh path in the build tree; removes any leftover file.
std::string temp_path(const std::string& name) {
  std::string path = std::string(MESHNODE_BINARY_DIR) + "/record_keys_test_" +
                     std::to_string(::getpid()) + "_" + name;
  std::remove(path.c_str());
  return path;
}

void write_text(const std::string& path, const std::string& text, mode_t mode) {
  std::ofstream(path, std::ios::binary) << text;
  REQUIRE(::chmod(path.c_str(), mode) == 0);
}

std::string key_line(const SecretKey& key) {
  return "meshnode-secret-key-v1 " + to_hex(key.bytes) + "\n";
}

}  // namespace

TEST_CASE("key pairs from a seed are deterministic and sign verifiably") {
  KeyPair a = test::test_key(7);
  KeyPair b = test::test_key(7);
  CHECK(a.public_key == b.public_key);
  CHECK(a.secret_key.public_key() == a.public_key);
  CHECK(test::test_key(8).public_key != a.public_key);
  Signature s = sign_detached(a.secret_key, as_bytes("hello"));
  CHECK(s == sign_detached(a.secret_key, as_bytes("hello")));  // Ed25519 is deterministic
  CHECK(verify_detached(a.public_key, as_bytes("hello"), s));
  CHECK_FALSE(verify_detached(a.public_key, as_bytes("hellO"), s));
  CHECK_FALSE(verify_detached(test::test_key(8).public_key, as_bytes("hello"), s));
  s[0] ^= 1;
  CHECK_FALSE(verify_detached(a.public_key, as_bytes("hello"), s));
}

TEST_CASE("generated key pairs differ and are consistent") {
  KeyPair a = generate_key_pair();
  KeyPair b = generate_key_pair();
  CHECK(a.public_key != b.public_key);
  CHECK(a.secret_key.public_key() == a.public_key);
}

TEST_CASE("public key hex round trip and rejections") {
  PublicKey key = test::test_key(3).public_key;
  std::string hex = public_key_to_hex(key);
  CHECK(hex.size() == 64);
  auto parsed = public_key_from_hex(hex);
  REQUIRE(parsed.ok());
  CHECK(*parsed == key);
  auto short_key = public_key_from_hex(hex.substr(2));
  REQUIRE_FALSE(short_key.ok());
  CHECK(short_key.code() == KeyError::bad_encoding);
  CHECK(contains(short_key.message(), "62 characters"));
  std::string bad = hex;
  bad[10] = 'g';
  auto not_hex = public_key_from_hex(bad);
  REQUIRE_FALSE(not_hex.ok());
  CHECK(not_hex.code() == KeyError::bad_encoding);
  CHECK(contains(not_hex.message(), "not hex"));
}

TEST_CASE("key file written 0600 loads back; existing file is not overwritten") {
  std::string path = temp_path("ok");
  KeyPair pair = test::test_key(5);
  mode_t old_umask = ::umask(0);  // a permissive umask must not widen the mode
  auto written = write_secret_key_file(path, pair.secret_key);
  ::umask(old_umask);
  REQUIRE(written.ok());
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  std::ifstream in(path);
  std::stringstream content;
  content << in.rdbuf();
  CHECK(content.str() == key_line(pair.secret_key));
  auto loaded = load_secret_key_file(path);
  REQUIRE(loaded.ok());
  CHECK(loaded->bytes == pair.secret_key.bytes);

  auto again = write_secret_key_file(path, test::test_key(6).secret_key);
  REQUIRE_FALSE(again.ok());
  CHECK(again.code() == KeyError::file_write_failed);
  CHECK(contains(again.message(), path));
  CHECK(load_secret_key_file(path)->bytes == pair.secret_key.bytes);  // untouched
  std::remove(path.c_str());
}

TEST_CASE("key file readable by group or others is refused") {
  std::string path = temp_path("perm");
  write_text(path, key_line(test::test_key(5).secret_key), 0644);
  auto loaded = load_secret_key_file(path);
  REQUIRE_FALSE(loaded.ok());
  CHECK(loaded.code() == KeyError::file_permissions);
  CHECK(contains(loaded.message(), path));
  CHECK(contains(loaded.message(), "0644"));
  REQUIRE(::chmod(path.c_str(), 0640) == 0);
  CHECK(load_secret_key_file(path).code() == KeyError::file_permissions);
  REQUIRE(::chmod(path.c_str(), 0600) == 0);
  CHECK(load_secret_key_file(path).ok());
  REQUIRE(::chmod(path.c_str(), 0400) == 0);
  CHECK(load_secret_key_file(path).ok());
  std::remove(path.c_str());
}

TEST_CASE("key file without a final newline is accepted") {
  std::string path = temp_path("nonl");
  std::string line = key_line(test::test_key(5).secret_key);
  write_text(path, line.substr(0, line.size() - 1), 0600);
  CHECK(load_secret_key_file(path).ok());
  std::remove(path.c_str());
}

TEST_CASE("malformed key files are refused with the path in the message") {
  SecretKey key = test::test_key(5).secret_key;
  std::string good = key_line(key);
  SecretKey mismatched = key;
  mismatched.bytes[40] ^= 1;  // public half no longer matches the seed
  struct Case {
    const char* name;
    std::string text;
    const char* fragment;
  };
  const Case cases[] = {
      {"empty", "", "does not start with"},
      {"tag", "meshnode-secret-key-v2 " + to_hex(key.bytes) + "\n", "does not start with"},
      {"short", good.substr(0, good.size() - 3) + "\n", "128 hex"},
      {"nonhex", "meshnode-secret-key-v1 " + std::string(128, 'z') + "\n", "128 hex"},
      {"extra", good + "x", "longer than a key file"},
      {"twolines", good + good, "longer than a key file"},
      {"mismatch", key_line(mismatched), "does not match"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    std::string path = temp_path(c.name);
    write_text(path, c.text, 0600);
    auto loaded = load_secret_key_file(path);
    REQUIRE_FALSE(loaded.ok());
    CHECK(loaded.code() == KeyError::file_malformed);
    CHECK(contains(loaded.message(), path));
    CHECK(contains(loaded.message(), c.fragment));
    std::remove(path.c_str());
  }
}

TEST_CASE("missing key file and unwritable directory") {
  std::string path = temp_path("missing");
  auto loaded = load_secret_key_file(path);
  REQUIRE_FALSE(loaded.ok());
  CHECK(loaded.code() == KeyError::file_unreadable);
  CHECK(contains(loaded.message(), path));
  auto written = write_secret_key_file("/nonexistent-dir/key", test::test_key(1).secret_key);
  REQUIRE_FALSE(written.ok());
  CHECK(written.code() == KeyError::file_write_failed);
  CHECK(contains(written.message(), "/nonexistent-dir/key"));
  CHECK(std::string(to_string(KeyError::file_permissions)) == "file_permissions");
}
