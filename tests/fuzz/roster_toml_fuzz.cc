// Fuzz target: the roster TOML file (record/roster_toml.h, docs/CONFIG.md),
// what `meshctl roster sign` reads. Input: the text of a roster file.
//
// Properties:
// - an accepted file is a valid roster (validate_roster) within every count
//   limit;
// - it writes back (roster_to_toml) to text that reads as the same roster;
// - its signed payload decodes to the same roster (what meshctl signs is
//   what nodes will decode);
// - a version override replaces the version and nothing else;
// - text over kRosterTomlBytesMax is refused.
#include <cstddef>
#include <cstdint>

#include "record/roster.h"
#include "record/roster_toml.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using namespace mesh;

constexpr std::uint64_t kOverrideVersion = 77;

void check_accepted(const Roster& roster, std::string_view text) {
  FUZZ_CHECK(validate_roster(roster).ok());
  FUZZ_CHECK(!roster.servers.empty() && roster.servers.size() <= kRosterServersMax);
  FUZZ_CHECK(roster.routes.size() <= kRosterRoutesMax);
  auto written = roster_from_toml(roster_to_toml(roster), 0);
  FUZZ_CHECK(written.ok());
  FUZZ_CHECK(*written == roster);
  auto payload = decode_roster_payload(encode_roster_payload(roster), roster.version);
  FUZZ_CHECK(payload.ok());
  FUZZ_CHECK(*payload == roster);
  auto overridden = roster_from_toml(text, kOverrideVersion);
  FUZZ_CHECK(overridden.ok());
  FUZZ_CHECK(overridden->version == kOverrideVersion);
  Roster expected = roster;
  expected.version = kOverrideVersion;
  FUZZ_CHECK(*overridden == expected);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = fuzz::text_of(data, size);
  auto roster = roster_from_toml(text, 0);
  if (!roster.ok()) {
    if (size > kRosterTomlBytesMax) FUZZ_CHECK(roster.code() == RosterError::too_large);
    return 0;
  }
  FUZZ_CHECK(size <= kRosterTomlBytesMax);
  check_accepted(*roster, text);
  return 0;
}
