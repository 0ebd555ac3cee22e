// Fuzz target: the roster payload (record/roster.h, docs/PROTOCOL.md
// "Roster payload"). Input: the payload bytes of a roster record, decoded as
// version 1.
//
// Properties:
// - an accepted payload is a valid roster (validate_roster) within every
//   count limit, carrying the version it was decoded with;
// - it re-encodes to a payload that decodes to the same roster, and that
//   encoding is stable (encode(decode(encode(r))) == encode(r));
// - the roster TOML writer round-trips it (roster_from_toml(roster_to_toml(r)) == r,
//   the contract in record/roster_toml.h);
// - a payload over kRosterPayloadBytesMax is refused as too_large;
// - decoding allocates nothing larger than its documented per-type limits
//   allow (an array of at most kRosterServersMax servers).
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "record/roster.h"
#include "record/roster_toml.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using namespace mesh;

constexpr std::size_t kAllocationBoundBytes =
    std::max({kRosterServersMax * sizeof(ServerEntry), kRosterRoutesMax * sizeof(Route),
              kRoutesPerServerMax * sizeof(std::string)}) +
    kRosterPayloadBytesMax;

void check_accepted(const Roster& roster) {
  FUZZ_CHECK(roster.version == 1);
  FUZZ_CHECK(validate_roster(roster).ok());
  FUZZ_CHECK(!roster.servers.empty() && roster.servers.size() <= kRosterServersMax);
  FUZZ_CHECK(roster.routes.size() <= kRosterRoutesMax);
  for (const ServerEntry& server : roster.servers) {
    FUZZ_CHECK(server.routes.size() <= kRoutesPerServerMax);
    FUZZ_CHECK(server.probe.host.size() <= kHostBytesMax && server.sni.size() <= kHostBytesMax);
  }
  const Bytes encoded = encode_roster_payload(roster);
  FUZZ_CHECK(encoded.size() <= kRosterPayloadBytesMax);
  auto again = decode_roster_payload(encoded, roster.version);
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(*again == roster);
  FUZZ_CHECK(encode_roster_payload(*again) == encoded);
  auto from_toml = roster_from_toml(roster_to_toml(roster), 0);
  FUZZ_CHECK(from_toml.ok());
  FUZZ_CHECK(*from_toml == roster);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::size_t largest = 0;
  auto roster = [&] {
    fuzz::AllocationWatch watch;
    auto result = decode_roster_payload(fuzz::view_of(data, size), 1);
    largest = watch.largest();
    return result;
  }();
  FUZZ_CHECK(largest <= kAllocationBoundBytes);
  if (!roster.ok()) {
    if (size > kRosterPayloadBytesMax) FUZZ_CHECK(roster.code() == RosterError::too_large);
    return 0;
  }
  check_accepted(*roster);
  return 0;
}
