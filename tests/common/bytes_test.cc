#include "common/bytes.h"

#include <doctest/doctest.h>

using mesh::from_hex;
using mesh::to_hex;

TEST_CASE("hex round-trips every byte value") {
  mesh::Bytes all(256);
  for (int i = 0; i < 256; ++i) all[i] = static_cast<std::uint8_t>(i);
  auto hex = to_hex(all);
  CHECK(hex.substr(0, 8) == "00010203");
  auto back = from_hex(hex);
  REQUIRE(back.has_value());
  CHECK(*back == all);
}

TEST_CASE("hex rejects odd length and non-hex characters") {
  CHECK_FALSE(from_hex("abc").has_value());
  CHECK_FALSE(from_hex("zz").has_value());
  CHECK_FALSE(from_hex("0g").has_value());
  CHECK(from_hex("ABcd").value() == mesh::Bytes{0xab, 0xcd});
  CHECK(from_hex("").value().empty());
}
