// The world of a run: every server that takes part (the initial fleet and
// those a roster_add brings later), each with its Ed25519 key derived from
// the run seed, the operator's and an intruder's key, and the initial roster.
// Pure function of the scenario: the same scenario gives the same keys.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "record/keys.h"
#include "record/roster.h"
#include "tools/meshsim/error.h"
#include "tools/meshsim/scenario.h"

namespace mesh::sim {

// ISO codes used for generated fleets, in this order: as many as a
// scenario may name (kCountriesMax).
inline constexpr const char* kGeneratedCountries[] = {
    "DE", "NL", "FR", "GB", "US", "RU", "TR", "IR", "CN", "AE",
    "SG", "JP", "FI", "PL", "KZ", "SE", "CA", "BR", "IN", "AU",
    "ES", "IT", "CH", "AT", "BE", "CZ", "RO", "HU", "UA", "BY",
    "GE", "AM", "AZ", "UZ", "KG", "TJ", "TM", "PK", "BD", "VN",
    "TH", "MY", "ID", "PH", "KR", "HK", "TW", "IL", "SA", "QA",
    "EG", "ZA", "NG", "KE", "MX", "AR", "CL", "CO", "PE", "NO",
    "DK", "IE", "PT", "GR"};
inline constexpr std::uint32_t kGeneratedCountriesMax =
    sizeof(kGeneratedCountries) / sizeof(kGeneratedCountries[0]);
static_assert(kGeneratedCountriesMax == kCountriesMax);

struct SimServer {
  ServerSpec spec;         // routes always filled
  KeyPair key;
  bool initial = true;     // in the roster at t=0; false: added by a roster_add event
};

struct World {
  std::vector<SimServer> servers;  // initial ones first, then in order of addition
  std::map<ServerId, std::uint32_t, std::less<>> index_of;  // id -> position in servers
  std::vector<Route> routes;       // every route any roster may name
  Roster initial_roster;           // version 1
  KeyPair operator_key;
  KeyPair intruder_key;            // a key no roster ever holds
};

// The id of generated server `n` (0-based): "<country>-<k>", countries taken
// round-robin from kGeneratedCountries[0..countries).
ServerId generated_server_id(std::uint32_t n, std::uint32_t countries);

// Derives a key pair from the run seed and a label (deterministic).
KeyPair derive_key(std::uint64_t seed, const std::string& label);

// Resolves the fleet (generated or explicit), the servers added by events,
// the keys and the initial roster, and checks that every server the
// timeline or the expectations name exists.
ScenarioResult<World> build_world(const Scenario& scenario);

// The roster of `servers` (positions in world.servers), in that order,
// with every route any of them names. REQUIRES: servers non-empty.
Roster make_roster(const World& world, const std::vector<std::uint32_t>& servers,
                   const Parameters& params, std::uint64_t version);

// The signed roster record, as the operator's meshctl would make it.
Bytes sign_roster(const World& world, const Roster& roster, UnixMs timestamp_ms);

}  // namespace mesh::sim
