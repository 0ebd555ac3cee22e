// The human roster file (docs/CONFIG.md): what the operator edits, and what
// `meshctl roster show` prints. The signed roster payload is built from it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"
#include "record/ports.h"  // kDefaultProbePort, kDefaultGossipPort
#include "record/roster.h"

namespace mesh {

inline constexpr std::size_t kRosterTomlBytesMax = 8 * 1024 * 1024;

// Parses a roster file: top-level `version`, optional `[params]` (any field
// of Parameters by name; defaults otherwise), `[[routes]]` (id, name) and
// `[[servers]]` (id, country, probe, sni, gossip, key, routes). Unknown keys,
// wrong types and missing fields are errors naming the line; the result then
// passes validate_roster. A non-zero `version_override_or_0` replaces the
// file's version (which may then be absent).
Result<Roster, RosterError> roster_from_toml(std::string_view text,
                                             std::uint64_t version_override_or_0);

// A TOML basic string: `text` in double quotes, with quotes, backslashes and
// control characters escaped (\uXXXX). Shared by every TOML writer.
std::string toml_quoted(std::string_view text);

// Writes `roster` in the same format, every parameter spelled out, so that
// roster_from_toml(roster_to_toml(r), 0) == r for any valid roster.
std::string roster_to_toml(const Roster& roster);

}  // namespace mesh
