#include <doctest/doctest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "record/roster_toml.h"
#include "tests/record/fixtures.h"

using namespace mesh;
using mesh::test::contains;

namespace {

std::string example_text() {
  std::ifstream in(std::string(MESHNODE_SOURCE_DIR) + "/docs/examples/roster.toml");
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

const char* kMinimal = R"(version = 2
[[routes]]
id = "eu"
name = "Europe"
[[servers]]
id = "a-1"
country = "DE"
probe = "192.0.2.1"
sni = "www.example.com"
gossip = "192.0.2.1"
key = "db995fe25169d141cab9bbba92baa01f9f2e1ece7df4cb2ac05190f37fcc1f9d"
routes = ["eu"]
)";

// kMinimal with `from` replaced by `to` (REQUIRES: `from` occurs).
std::string edited(const std::string& from, const std::string& to) {
  std::string text = kMinimal;
  std::size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

void expect_error(const std::string& text, RosterError code, const std::string& fragment) {
  auto roster = roster_from_toml(text, 0);
  REQUIRE_FALSE(roster.ok());
  CHECK(std::string(to_string(roster.code())) == to_string(code));
  CHECK_MESSAGE(contains(roster.message(), fragment), roster.message());
}

}  // namespace

TEST_CASE("the example roster parses: 6 servers, 3 countries, 2 routes") {
  auto roster = roster_from_toml(example_text(), 0);
  REQUIRE_MESSAGE(roster.ok(), roster.message());
  CHECK(roster->version == 1);
  CHECK(roster->servers.size() == 6);
  CHECK(roster->routes.size() == 2);
  std::set<std::string> countries;
  for (const ServerEntry& s : roster->servers) countries.insert(s.country);
  CHECK(countries.size() == 3);
  const ServerEntry* fra = roster->find("de-fra-1");
  REQUIRE(fra != nullptr);
  CHECK(fra->probe == Endpoint{"203.0.113.11", 443});
  CHECK(fra->gossip == Endpoint{"203.0.113.11", kDefaultGossipPort});
  CHECK(kDefaultGossipPort == 4716);
  CHECK(roster->find("nl-ams-2")->probe == Endpoint{"2001:db8::22", 443});
  CHECK(roster->find("fi-hel-1")->probe.port == 8443);
  CHECK(roster->params == Parameters{});
}

TEST_CASE("roster_to_toml round-trips, and the override replaces the version") {
  Roster roster = roster_from_toml(example_text(), 0).value();
  roster.params.fail_streak = 5;
  roster.routes[1].name = "Quote \" and backslash \\ and ünïcode";
  std::string text = roster_to_toml(roster);
  auto again = roster_from_toml(text, 0);
  REQUIRE_MESSAGE(again.ok(), again.message());
  CHECK(*again == roster);
  CHECK(roster_to_toml(*again) == text);
  CHECK(roster_from_toml(text, 77)->version == 77);
  Roster big = test::sample_roster(40, 3);
  CHECK(roster_from_toml(roster_to_toml(big), 0).value() == big);
}

TEST_CASE("params default when absent and are read by name") {
  auto roster = roster_from_toml(kMinimal, 0);
  REQUIRE(roster.ok());
  CHECK(roster->params == Parameters{});
  auto tuned = roster_from_toml(std::string(kMinimal) + "[params]\nfail_streak = 9\n", 0);
  REQUIRE(tuned.ok());
  CHECK(tuned->params.fail_streak == 9);
}

TEST_CASE("version rules") {
  expect_error(edited("version = 2\n", ""), RosterError::malformed, "missing top-level 'version'");
  CHECK(roster_from_toml(edited("version = 2\n", ""), 5)->version == 5);
  expect_error(edited("version = 2", "version = 0"), RosterError::malformed,
               "line 1: version must be an integer >= 1");
  expect_error(edited("version = 2", "version = \"2\""), RosterError::malformed,
               "version must be an integer");
}

TEST_CASE("TOML syntax errors name the line") {
  expect_error(edited("name = \"Europe\"", "name = \"Europe"), RosterError::malformed,
               "roster file line 4");
  expect_error(edited("id = \"eu\"", "id = \"eu\"\nid = \"eu\""), RosterError::malformed,
               "roster file line 4");
  // A non-ASCII character where TOML allows none (common/toml.h); in a
  // string it is fine.
  expect_error(edited("name = \"Europe\"", "name = \"Europe\" ü"), RosterError::malformed,
               "roster file line 4: a non-ASCII character outside a string or comment");
  CHECK(roster_from_toml(edited("name = \"Europe\"", "name = \"Europäisch\""), 0).ok());
}

TEST_CASE("unknown keys are errors with their line") {
  expect_error(edited("version = 2", "version = 2\nverison = 3"), RosterError::malformed,
               "line 2: unknown key 'verison' in the top level");
  expect_error(edited("country = \"DE\"", "contry = \"DE\""), RosterError::malformed,
               "line 7: unknown key 'contry' in [[servers]] #1");
  expect_error(edited("name = \"Europe\"", "name = \"Europe\"\nweight = 3"),
               RosterError::malformed, "line 5: unknown key 'weight' in [[routes]] #1");
  expect_error(std::string(kMinimal) + "[params]\nfail_streek = 3\n", RosterError::malformed,
               "unknown key 'fail_streek' in [params]");
  // A roster file from before reports on change names its new key.
  expect_error(std::string(kMinimal) + "[params]\nreport_interval_ms = 60000\n",
               RosterError::malformed,
               "line 14: unknown key 'report_interval_ms' in [params] "
               "(renamed 'heartbeat_interval_ms')");
}

TEST_CASE("missing fields and wrong types") {
  expect_error(edited("sni = \"www.example.com\"\n", ""), RosterError::malformed,
               "server 'a-1': missing 'sni'");
  expect_error(edited("id = \"a-1\"\n", ""), RosterError::malformed,
               "[[servers]] #1: missing 'id'");
  expect_error(edited("name = \"Europe\"\n", ""), RosterError::malformed,
               "[[routes]] #1: missing 'name'");
  expect_error(edited("routes = [\"eu\"]\n", ""), RosterError::malformed, "missing 'routes'");
  expect_error(edited("country = \"DE\"", "country = 49"), RosterError::malformed,
               "line 7: server 'a-1': 'country' must be a string");
  expect_error(edited("routes = [\"eu\"]", "routes = \"eu\""), RosterError::malformed,
               "'routes' must be an array");
  expect_error(edited("routes = [\"eu\"]", "routes = [1]"), RosterError::malformed,
               "route ids must be strings");
  expect_error(std::string(kMinimal) + "[params]\nfail_streak = \"3\"\n", RosterError::malformed,
               "params.fail_streak must be an integer");
  expect_error("params = 3\n" + std::string(kMinimal), RosterError::malformed,
               "'params' must be a table");
  expect_error("version = 1\nservers = 3\n", RosterError::malformed,
               "'servers' must be [[servers]] tables");
  expect_error("version = 1\nservers = [1]\n", RosterError::malformed,
               "servers entries must be tables");
}

TEST_CASE("field values are checked: key, endpoints, ranges, roster rules") {
  expect_error(edited("key = \"db99", "key = \"zz99"), RosterError::malformed,
               "line 11: server 'a-1': key must be 64 hex characters");
  expect_error(edited("probe = \"192.0.2.1\"", "probe = \"192.0.2.1:0\""), RosterError::bad_address,
               "line 8: server 'a-1': probe '192.0.2.1:0' is not host:port");
  expect_error(edited("gossip = \"192.0.2.1\"", "gossip = \"2001:db8::1:7946\""),
               RosterError::bad_address, "gossip '2001:db8::1:7946'");
  expect_error(std::string(kMinimal) + "[params]\nfail_streak = 0\n", RosterError::bad_parameter,
               "params.fail_streak: 0 is outside 1..1000");
  expect_error(std::string(kMinimal) + "[params]\nheartbeat_interval_ms = -1\n",
               RosterError::bad_parameter, "heartbeat_interval_ms: -1");
  expect_error(edited("country = \"DE\"", "country = \"XX\""), RosterError::bad_country,
               "server 'a-1': country 'XX' is not an ISO 3166-1 alpha-2 code");
  expect_error(edited("sni = \"www.example.com\"", "sni = \"192.0.2.9\""), RosterError::bad_sni,
               "sni '192.0.2.9'");
  expect_error(edited("routes = [\"eu\"]", "routes = [\"asia\"]"), RosterError::unknown_route,
               "route 'asia' is not defined");
  std::string zero_key = kMinimal;
  std::size_t at = zero_key.find("db995fe2");
  zero_key.replace(at, 64, std::string(64, '0'));
  expect_error(zero_key, RosterError::missing_key, "key is missing");
  expect_error("version = 1\n", RosterError::empty, "no servers");
}

TEST_CASE("duplicate ids and keys are refused") {
  std::string text = kMinimal;
  std::string server = text.substr(text.find("[[servers]]"));
  expect_error(text + server, RosterError::duplicate_server, "server 'a-1': id listed twice");
  std::string other = server;
  other.replace(other.find("a-1"), 3, "a-2");
  expect_error(text + other, RosterError::duplicate_key, "server 'a-2': key");
  std::string route = "[[routes]]\nid = \"eu\"\nname = \"Again\"\n";
  expect_error(text + route, RosterError::duplicate_route, "route 'eu': defined twice");
}

TEST_CASE("an oversized roster file is refused before parsing") {
  expect_error(std::string(kRosterTomlBytesMax + 1, '#'), RosterError::too_large, "over");
}
