#include <doctest/doctest.h>

#include <functional>

#include "record/address.h"
#include "record/country.h"
#include "record/parameters.h"
#include "record/roster.h"
#include "tests/record/fixtures.h"
#include "tests/record/msgpack_patch.h"

using namespace mesh;
using mesh::test::contains;

namespace {

void expect_invalid(const Roster& roster, RosterError code, const std::string& fragment) {
  auto status = validate_roster(roster);
  REQUIRE_FALSE(status.ok());
  CHECK(static_cast<int>(status.code()) == static_cast<int>(code));
  CHECK_MESSAGE(contains(status.message(), fragment), status.message());
}

void expect_invalid(std::function<void(Roster&)> edit, RosterError code,
                    const std::string& fragment) {
  Roster roster = test::sample_roster(6);
  edit(roster);
  expect_invalid(roster, code, fragment);
}

}  // namespace

TEST_CASE("the sample roster is valid and round-trips through the payload codec") {
  Roster roster = test::sample_roster(6, 9);
  REQUIRE(validate_roster(roster).ok());
  Bytes payload = encode_roster_payload(roster);
  auto decoded = decode_roster_payload(payload, 9);
  REQUIRE(decoded.ok());
  CHECK(*decoded == roster);
  CHECK(encode_roster_payload(*decoded) == payload);
  roster.params.fail_streak = 7;
  roster.params.volume_bytes_per_day_max = std::uint64_t{1} << 33;
  CHECK(decode_roster_payload(encode_roster_payload(roster), 9).value() == roster);
}

TEST_CASE("a roster of kRosterServersMax servers fits in the payload limit") {
  Roster roster = test::sample_roster(kRosterServersMax);
  REQUIRE(validate_roster(roster).ok());
  Bytes payload = encode_roster_payload(roster);
  CHECK(payload.size() <= kRosterPayloadBytesMax);
  CHECK(decode_roster_payload(payload, 1).ok());
}

TEST_CASE("index_of and find") {
  Roster roster = test::sample_roster(4);
  CHECK(roster.index_of("s-002") == 2u);
  CHECK_FALSE(roster.index_of("s-999").has_value());
  REQUIRE(roster.find("s-003") != nullptr);
  CHECK(roster.find("s-003")->id == "s-003");
  CHECK(roster.find("nope") == nullptr);
}

TEST_CASE("parse_endpoint") {
  CHECK(parse_endpoint("vpn.example.com:8443", 443) == Endpoint{"vpn.example.com", 8443});
  CHECK(parse_endpoint("vpn.example.com", 443) == Endpoint{"vpn.example.com", 443});
  CHECK(parse_endpoint("192.0.2.1:7946", 1) == Endpoint{"192.0.2.1", 7946});
  CHECK(parse_endpoint("[2001:db8::1]:7946", 1) == Endpoint{"2001:db8::1", 7946});
  CHECK(parse_endpoint("[::1]", 443) == Endpoint{"::1", 443});
  CHECK(parse_endpoint("host:65535", 1) == Endpoint{"host", 65535});
  const char* bad[] = {"",          ":443",        "host:",        "host:0",      "host:65536",
                       "host:-1",   "host:44a",    "host:+44",     "::1",         "2001:db8::1:443",
                       "[::1",      "[::1]443",    "[::1]:",       "[host]:443",  "bad host:1",
                       "a..b:1",    "-a.com:1",    "1.2.3.256:1",  "1.2.3:1",     "[]:1"};
  for (const char* text : bad) {
    CAPTURE(text);
    CHECK_FALSE(parse_endpoint(text, 443).has_value());
  }
  CHECK_FALSE(parse_endpoint(std::string(254, 'a'), 443).has_value());
}

TEST_CASE("format_endpoint brackets IPv6 hosts and round-trips through parse_endpoint") {
  for (const Endpoint& e : {Endpoint{"vpn.example.com", 443}, Endpoint{"192.0.2.1", 7946},
                            Endpoint{"2001:db8::1", 7946}, Endpoint{"::1", 1}}) {
    CAPTURE(e.host);
    CHECK(parse_endpoint(format_endpoint(e), 9) == e);
  }
  CHECK(format_endpoint({"2001:db8::1", 7946}) == "[2001:db8::1]:7946");
  CHECK(format_endpoint({"vpn.example.com", 443}) == "vpn.example.com:443");
}

TEST_CASE("host, DNS name, IP literal and text rules") {
  CHECK(is_dns_name("a"));
  CHECK(is_dns_name("www.Example-1.com"));
  CHECK(is_dns_name(std::string(63, 'a') + ".com"));
  CHECK_FALSE(is_dns_name(std::string(64, 'a') + ".com"));
  CHECK_FALSE(is_dns_name("example.com."));
  CHECK_FALSE(is_dns_name("exa_mple.com"));
  CHECK_FALSE(is_dns_name("ex-.com"));
  CHECK_FALSE(is_dns_name("1.2.3.4"));
  CHECK(is_ipv4_literal("0.0.0.0"));
  CHECK(is_ipv4_literal("255.255.255.255"));
  CHECK_FALSE(is_ipv4_literal("01.2.3.4"));
  CHECK_FALSE(is_ipv4_literal("1.2.3.4.5"));
  CHECK(is_ipv6_literal("fe80::1"));
  CHECK(is_ipv6_literal("::ffff:192.0.2.1"));
  CHECK_FALSE(is_ipv6_literal("fe80::1%eth0"));
  CHECK_FALSE(is_ipv6_literal("1:2:3:4:5:6:7:8:9"));
  std::string long_name;
  for (int i = 0; i < 4; ++i) long_name += std::string(62, 'a') + ".";
  long_name += "abcd";  // 4 * 63 + 4 = 256 bytes
  CHECK_FALSE(is_valid_host(long_name));
  CHECK(is_printable_utf8("Europe — Zürich"));
  CHECK_FALSE(is_printable_utf8("tab\there"));
  CHECK_FALSE(is_printable_utf8("\x7f"));
  CHECK_FALSE(is_printable_utf8("\xc3"));          // truncated
  CHECK_FALSE(is_printable_utf8("\xc0\xaf"));      // overlong
  CHECK_FALSE(is_printable_utf8("\xed\xa0\x80"));  // surrogate
  CHECK_FALSE(is_printable_utf8("\xc2\x85"));      // C1 control
}

TEST_CASE("country codes") {
  CHECK(is_iso3166_alpha2("DE"));
  CHECK(is_iso3166_alpha2("AD"));
  CHECK(is_iso3166_alpha2("ZW"));
  CHECK_FALSE(is_iso3166_alpha2("XX"));
  CHECK_FALSE(is_iso3166_alpha2("XK"));
  CHECK_FALSE(is_iso3166_alpha2("de"));
  CHECK_FALSE(is_iso3166_alpha2("DEU"));
  CHECK_FALSE(is_iso3166_alpha2(""));
}

TEST_CASE("validate_roster: size rules") {
  expect_invalid([](Roster& r) { r.servers.clear(); }, RosterError::empty, "no servers");
  expect_invalid(test::sample_roster(kRosterServersMax + 1), RosterError::too_large,
                 "4097 servers");
  expect_invalid(
      [](Roster& r) {
        for (std::size_t i = 0; i < kRosterRoutesMax; ++i) r.routes.push_back({"r" + std::to_string(i), "x"});
      },
      RosterError::too_large, "1026 routes");
  expect_invalid(
      [](Roster& r) {
        for (std::size_t i = 0; i <= kRoutesPerServerMax; ++i) {
          r.routes.push_back({"r" + std::to_string(i), "x"});
          r.servers[0].routes.push_back("r" + std::to_string(i));
        }
      },
      RosterError::too_large, "server 's-000': 67 routes");
}

TEST_CASE("validate_roster: route rules") {
  expect_invalid([](Roster& r) { r.routes[0].id = "EU"; }, RosterError::bad_id, "route 'EU'");
  expect_invalid([](Roster& r) { r.routes[1].id = "eu"; }, RosterError::duplicate_route,
                 "route 'eu': defined twice");
  expect_invalid([](Roster& r) { r.routes[0].name = std::string(129, 'n'); },
                 RosterError::too_large, "route 'eu': name longer than 128 bytes");
  expect_invalid([](Roster& r) { r.routes[0].name = ""; }, RosterError::bad_id,
                 "route 'eu': name must be non-empty");
  expect_invalid([](Roster& r) { r.routes[0].name = "a\nb"; }, RosterError::bad_id,
                 "control characters");
}

TEST_CASE("validate_roster: server rules") {
  expect_invalid([](Roster& r) { r.servers[1].id = "S-1"; }, RosterError::bad_id,
                 "server 'S-1': id must be");
  expect_invalid([](Roster& r) { r.servers[1].id = "operator"; }, RosterError::bad_id,
                 "not 'operator'");
  expect_invalid([](Roster& r) { r.servers[2].id = "s-000"; }, RosterError::duplicate_server,
                 "server 's-000': id listed twice");
  expect_invalid([](Roster& r) { r.servers[1].country = "XX"; }, RosterError::bad_country,
                 "server 's-001': country 'XX' is not an ISO 3166-1 alpha-2 code");
  expect_invalid([](Roster& r) { r.servers[1].country = "de"; }, RosterError::bad_country,
                 "country 'de'");
  expect_invalid([](Roster& r) { r.servers[1].probe.host = ""; }, RosterError::bad_address,
                 "server 's-001': probe host ''");
  expect_invalid([](Roster& r) { r.servers[1].probe.host = "bad host"; },
                 RosterError::bad_address, "probe host 'bad host'");
  expect_invalid([](Roster& r) { r.servers[1].probe.port = 0; }, RosterError::bad_address,
                 "probe port is 0");
  expect_invalid([](Roster& r) { r.servers[1].gossip.host = std::string(254, 'a'); },
                 RosterError::bad_address, "gossip host");
  expect_invalid([](Roster& r) { r.servers[1].gossip.port = 0; }, RosterError::bad_address,
                 "gossip port is 0");
  expect_invalid([](Roster& r) { r.servers[1].sni = ""; }, RosterError::bad_sni, "sni ''");
  expect_invalid([](Roster& r) { r.servers[1].sni = "192.0.2.1"; }, RosterError::bad_sni,
                 "sni '192.0.2.1' is not a DNS name");
  expect_invalid([](Roster& r) { r.servers[1].key = PublicKey{}; }, RosterError::missing_key,
                 "server 's-001': key is missing");
  expect_invalid([](Roster& r) { r.servers[3].key = r.servers[0].key; },
                 RosterError::duplicate_key, "server 's-003': key");
  expect_invalid([](Roster& r) { r.servers[1].routes.push_back("asia"); },
                 RosterError::unknown_route, "route 'asia' is not defined");
  expect_invalid([](Roster& r) { r.servers[1].routes.push_back("eu"); },
                 RosterError::duplicate_route, "server 's-001': route 'eu' listed twice");
}

TEST_CASE("validate_roster: every parameter's range") {
  for (const ParameterSpec& spec : parameter_specs()) {
    CAPTURE(std::string(spec.name));
    Roster roster = test::sample_roster(3);
    if (spec.min > 0) {
      spec.set(roster.params, spec.min - 1);
      expect_invalid(roster, RosterError::bad_parameter, std::string("params.") + spec.name);
    }
    roster = test::sample_roster(3);
    spec.set(roster.params, spec.max + 1);
    if (std::string(spec.name) == "heartbeat_interval_ms") roster.params.stale_after_ms = spec.max + 1;
    expect_invalid(roster, RosterError::bad_parameter, std::string("params.") + spec.name);
    roster = test::sample_roster(3);
    spec.set(roster.params, spec.min);
    if (std::string(spec.name) == "stale_after_ms") roster.params.heartbeat_interval_ms = spec.min;
    CHECK(validate_roster(roster).ok());
  }
  expect_invalid(
      [](Roster& r) {
        r.params.heartbeat_interval_ms = 60'000;
        r.params.stale_after_ms = 59'999;
      },
      RosterError::bad_parameter, "params.stale_after_ms: 59999 is below heartbeat_interval_ms");
  expect_invalid([](Roster& r) { r.params.fail_streak = 0; }, RosterError::bad_parameter,
                 "params.fail_streak: 0 is outside 1..1000");
  expect_invalid([](Roster& r) { r.params.heartbeat_interval_ms = -5; },
                 RosterError::bad_parameter, "params.heartbeat_interval_ms: -5");
}

namespace {

using test::Packer;

// Re-packs the sample roster's payload with element `path` replaced.
Bytes patched_payload(const std::vector<std::uint32_t>& path,
                      std::function<void(Packer&)> replacement) {
  return test::patch_msgpack(encode_roster_payload(test::sample_roster(3)), path, replacement);
}

void expect_decode_error(const Bytes& payload, RosterError code, const std::string& fragment) {
  auto decoded = decode_roster_payload(payload, 1);
  REQUIRE_FALSE(decoded.ok());
  CHECK(static_cast<int>(decoded.code()) == static_cast<int>(code));
  CHECK_MESSAGE(contains(decoded.message(), fragment), decoded.message());
}

}  // namespace

TEST_CASE("roster payload: patching helper reproduces the original when unpatched") {
  Bytes original = encode_roster_payload(test::sample_roster(3));
  CHECK(patched_payload({1, 0, 0}, [](Packer& p) { p.pack(std::string("s-000")); }) == original);
}

TEST_CASE("roster payload: structure rejections") {
  Bytes payload = encode_roster_payload(test::sample_roster(3));
  for (std::size_t n = 0; n < payload.size(); ++n) {
    CAPTURE(n);
    auto decoded = decode_roster_payload(ByteView(payload).first(n), 1);
    REQUIRE_FALSE(decoded.ok());
    CHECK(decoded.code() == RosterError::malformed);
  }
  Bytes trailing = payload;
  trailing.push_back(0xc0);
  expect_decode_error(trailing, RosterError::malformed, "1 trailing bytes");
  expect_decode_error(Bytes{0x92, 0x90, 0x90}, RosterError::malformed,
                      "top level: array of 2 elements, expected 3");
  expect_decode_error(Bytes{0x80}, RosterError::malformed, "top level: not an array");
  // A map is not over a limit: the layout has none (meshctl once said
  // "over its limit" for a payload sent as a map).
  expect_decode_error(Bytes{0x81, 0xa1, 'a', 0x01}, RosterError::malformed,
                      "malformed: a map where the layout has an array");
  expect_decode_error(patched_payload({1, 0, 8}, [](Packer& p) { p.pack_map(1); p.pack_uint8(1); p.pack_uint8(2); }),
                      RosterError::malformed, "a map where the layout has an array");
  expect_decode_error(Bytes{0x93, 0xd4, 0x01, 0x00, 0x90, 0x90}, RosterError::malformed, "an ext value");
  expect_decode_error(Bytes(kRosterPayloadBytesMax + 1, 0xc0), RosterError::too_large,
                      "over the limit");
  // Five levels of nesting, one more than the layout has.
  expect_decode_error(Bytes{0x93, 0x90, 0x91, 0x91, 0x91, 0x91, 0x90, 0x90},
                      RosterError::malformed, "not valid msgpack");
  expect_decode_error(patched_payload({1, 0, 1}, [](Packer& p) { p.pack(std::string(254, 'a')); }),
                      RosterError::too_large, "servers[0] country: a string over 253 bytes");
  // An array longer than any list in the layout.
  expect_decode_error(Bytes{0x93, 0xdc, 0x10, 0x01}, RosterError::too_large,
                      "routes: an array over 4096 elements");
}

TEST_CASE("roster payload: each field with a wrong type or count") {
  struct Case {
    std::vector<std::uint32_t> path;
    std::function<void(Packer&)> replacement;
    const char* fragment;
  };
  auto str = [](Packer& p) { p.pack(std::string("x")); };
  auto uint = [](Packer& p) { p.pack_uint8(1); };
  auto negative = [](Packer& p) { p.pack_int8(-1); };
  const Case cases[] = {
      {{0}, uint, "routes: not an array"},
      {{0, 0}, [](Packer& p) { p.pack_array(1); p.pack(std::string("eu")); },
       "routes[0]: array of 1 elements, expected 2"},
      {{0, 0, 0}, uint, "routes[0] id: not a string"},
      {{0, 0, 1}, uint, "routes[0] name: not a string"},
      {{1}, str, "servers: not an array"},
      {{1, 2}, [](Packer& p) { p.pack_array(8); for (int i = 0; i < 8; ++i) p.pack_nil(); },
       "servers[2]: array of 8 elements, expected 9"},
      {{1, 0, 0}, uint, "servers[0] id: not a string"},
      {{1, 0, 1}, uint, "servers[0] country: not a string"},
      {{1, 0, 2}, uint, "servers[0] probe host: not a string"},
      {{1, 0, 3}, str, "servers[0] probe port: not a non-negative integer"},
      {{1, 0, 3}, [](Packer& p) { p.pack_uint32(65536); }, "servers[0] probe port: integer out of range"},
      {{1, 0, 4}, uint, "servers[0] sni: not a string"},
      {{1, 0, 5}, uint, "servers[0] gossip host: not a string"},
      {{1, 0, 6}, negative, "servers[0] gossip port: not a non-negative integer"},
      {{1, 0, 7}, str, "servers[0] key: not a bin of 32 bytes"},
      {{1, 0, 7}, [](Packer& p) { p.pack_bin(31); p.pack_bin_body("0123456789012345678901234567890", 31); },
       "servers[0] key: not a bin of 32 bytes"},
      {{1, 0, 8}, str, "servers[0] routes: not an array"},
      {{1, 0, 8}, [](Packer& p) { p.pack_array(1); p.pack_uint8(1); }, "servers[0] routes[0]: not a string"},
      {{2}, str, "params: not an array"},
      {{2}, [](Packer& p) { p.pack_array(10); for (int i = 0; i < 10; ++i) p.pack_uint8(1); },
       "params: array of 10 elements, expected 11"},
      {{2, 3}, negative, "params.fail_streak: not a non-negative integer"},
      {{2, 3}, str, "params.fail_streak: not a non-negative integer"},
  };
  for (const Case& c : cases) {
    CAPTURE(std::string(c.fragment));
    expect_decode_error(patched_payload(c.path, c.replacement), RosterError::malformed, c.fragment);
  }
  expect_decode_error(patched_payload({2, 3}, [](Packer& p) { p.pack_uint32(1001); }),
                      RosterError::bad_parameter, "params.fail_streak: 1001 is outside 1..1000");
  expect_decode_error(patched_payload({1, 1, 1}, [](Packer& p) { p.pack(std::string("XX")); }),
                      RosterError::bad_country, "server 's-001': country 'XX'");
}
