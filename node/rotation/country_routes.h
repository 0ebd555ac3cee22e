// Rotation per user country (docs/VERDICTS.md, "Rotation per user country"):
// which servers of each route a user in country C should be given. A pure
// function of the evaluation every node computes and the roster: no clock,
// no I/O, so every converged node answers the same for every country.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "record/roster.h"
#include "verdict/evaluation.h"

namespace mesh::rotation {

// Per server (roster order): whether the global answer has it in rotation.
// Read from the routes' memberships rather than from the status alone, so
// a server the engine holds out of rotation while its status stays ok (a
// flapping server held out) is out here too, whatever flag says so.
// REQUIRES: `evaluation` is of `roster` (same version, servers, routes).
std::vector<bool> global_rotation(const Roster& roster, const verdict::Evaluation& evaluation);

// How country C's own witnesses see server T.
enum class CountryView : std::uint8_t {
  none,     // C has no eligible witness of T: C's users follow the global answer
  fails,    // at least two of C's eligible witnesses fail T, and all of them do
  reaches,  // C's eligible witnesses fail T none
  split,    // some of C's witnesses fail T, not all (or only one does)
};
CountryView country_view(const verdict::ServerVerdict& verdict, std::string_view country);

// Whether server `index` is in rotation for users in `country`, given the
// global answer `global_in` for it and whether the fleet is partitioned:
// - a server whose own self-check failed is out for everyone;
// - a server the global answer holds in rotation is out for C when C fails
//   it (and the evaluation is not partitioned: no country's failures make a
//   verdict then, as none make `unreachable`);
// - a server the global answer holds out (unreachable, or held out) is in
//   for C only when it is out only for its reachability and C's own
//   witnesses reach it.
bool in_rotation_for(const verdict::ServerVerdict& verdict, bool global_in, bool partitioned,
                     std::string_view country);

// Every route's membership for users in `country` (an ISO 3166-1 alpha-2
// code), in roster order, each in the roster's server order. A route with
// servers is never empty: with none in rotation for C it serves C's best
// available and is degraded (the reason says so). For a country with no
// witnesses at all, the answer equals the global one.
// REQUIRES: `evaluation` is of `roster`.
std::vector<verdict::RouteMembership> country_routes(const Roster& roster,
                                                     const verdict::Evaluation& evaluation,
                                                     std::string_view country);

}  // namespace mesh::rotation
