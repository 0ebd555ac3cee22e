#include <doctest/doctest.h>

#include <string>

#include "common/percent_encoding.h"

namespace mesh {
namespace {

TEST_CASE("percent_encoded keeps the unreserved characters and encodes every other byte") {
  CHECK(percent_encoded("") == "");
  CHECK(percent_encoded("AZaz09-._~") == "AZaz09-._~");
  CHECK(percent_encoded("a b&c=d/e?f#g+h%") == "a%20b%26c%3Dd%2Fe%3Ff%23g%2Bh%25");
  CHECK(percent_encoded(std::string("\x00\x7f\xff", 3)) == "%00%7F%FF");
  CHECK(percent_encoded("\xc3\xa9") == "%C3%A9");  // UTF-8 bytes, one by one
}

}  // namespace
}  // namespace mesh
