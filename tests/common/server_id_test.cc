#include "common/server_id.h"

#include <doctest/doctest.h>

#include <string>

TEST_CASE("server id rule") {
  CHECK(mesh::is_valid_server_id("de-fra-1"));
  CHECK(mesh::is_valid_server_id("a"));
  CHECK(mesh::is_valid_server_id("9.x_y"));
  CHECK_FALSE(mesh::is_valid_server_id(""));
  CHECK_FALSE(mesh::is_valid_server_id("-lead"));
  CHECK_FALSE(mesh::is_valid_server_id("Upper"));
  CHECK_FALSE(mesh::is_valid_server_id("sp ace"));
  CHECK(mesh::is_valid_server_id(std::string(64, 'a')));
  CHECK_FALSE(mesh::is_valid_server_id(std::string(65, 'a')));
}
