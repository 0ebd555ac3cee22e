// Shared test fixtures for record/ tests: deterministic keys and rosters.
#pragma once

#include <cstdint>
#include <string>

#include "record/keys.h"
#include "record/roster.h"

namespace mesh::test {

// The key pair of seed [n, n, ..., n] (32 bytes).
KeyPair test_key(std::uint8_t n);

// A valid roster of `servers` servers (ids "s-000", "s-001", ...) spread over
// DE/NL/FR, two routes ("eu", "de"), keys test_key(1 + i).
Roster sample_roster(std::size_t servers, std::uint64_t version = 1);

// True when `text` contains `fragment` (for error-message checks).
bool contains(const std::string& text, const std::string& fragment);

}  // namespace mesh::test
