// The verdict engine's output (docs/VERDICTS.md): a status per server with
// its reason and counts, the observers whose votes were discarded, and the
// membership of every route. Plain values; to_canonical_json gives the
// byte-identical form every node computes from the same inputs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/server_id.h"
#include "common/time.h"

namespace mesh::verdict {

// Primary status, by precedence unavailable > unreachable > no_data > ok.
enum class ServerStatus : std::uint8_t { ok, no_data, unreachable, unavailable };
const char* to_string(ServerStatus status);  // "ok", "no_data", ...

// Captions shown next to a server (exact product wording).
inline constexpr std::string_view kCaptionUnavailable = "Server unavailable";
inline constexpr std::string_view kCaptionNoData = "No data from server";
// "Unreachable from your servers (N of M servers can't see it)".
std::string unreachable_caption(std::uint32_t failing, std::uint32_t eligible);
// "Not enough evidence (N of M servers can't see it)": shown on a server
// that stays ok because the failing witnesses cannot make a verdict.
std::string insufficient_caption(std::uint32_t failing, std::uint32_t eligible);
// "Held out: flapping (N changes in the last hour)": shown on a server that
// looks healthy but is held out of rotation after flapping.
std::string held_out_caption(std::uint32_t changes);

// Server-card badges.
inline constexpr std::string_view kBadgeStale = "stale";  // metrics older than stale_after
inline constexpr std::string_view kBadgeAgentSilent = "No data \u2014 agent not responding";

// Every condition that holds, whatever the primary status.
struct StatusFlags {
  bool unavailable = false;  // fresh report with listener_ok or service_ok false
  bool unreachable = false;  // failing eligible observers reached the quorum
  bool no_data = false;      // no report, or the latest is older than stale_after
  // Failing votes that cannot make a verdict: they reach the quorum but a
  // country's trusted witnesses disagree, or too few trusted witnesses are
  // left to reach it. Changes no status; the server stays in rotation.
  bool insufficient_evidence = false;
  // Its fresh report says it is healthy but flapped lately and asks to be
  // held out until its hold-down ends (docs/VERDICTS.md, "Flapping"):
  // out of rotation while its status stays what the rules say.
  bool held_out = false;
  bool operator==(const StatusFlags&) const = default;
};

// The names of the flags that hold, in this order: "unavailable",
// "unreachable", "no_data", "insufficient_evidence", "held_out" (canonical
// JSON and the panel API list them so).
std::vector<std::string_view> flag_names(const StatusFlags& flags);

// Observers of one country, for one target ("RU 3 of 3 failing").
struct CountryTally {
  std::string country;
  std::uint32_t failing = 0;   // eligible observers with fail_streak >= fail_streak
  std::uint32_t eligible = 0;  // observers whose vote counts
  std::uint32_t missing = 0;   // assigned witnesses with no fresh result for the target
  bool operator==(const CountryTally&) const = default;
};

struct ServerVerdict {
  ServerId id;
  ServerStatus status = ServerStatus::ok;
  StatusFlags flags;
  std::string caption;            // empty when ok
  std::uint32_t failing = 0;      // N: failing eligible observers
  std::uint32_t eligible = 0;     // M: eligible observers
  std::uint32_t quorum = 0;       // max(2, min(quorum_witnesses, R)), R = witnesses with a result
  std::uint32_t missing = 0;      // assigned witnesses with no fresh result
  std::uint32_t discarded = 0;    // results for this target from unreliable observers
  std::uint32_t explained = 0;    // failing results that are the far side of a border
  std::vector<CountryTally> by_country;  // sorted by country code; all-zero rows left out
  std::string self_check_reason;  // from the fresh report when unavailable
  std::uint32_t flap_changes = 0; // from the fresh report: healthy -> failing in its last hour
  UnixMs last_report_ms = 0;      // timestamp of the latest report, 0 = none
  std::vector<std::string> badges;  // kBadgeStale, kBadgeAgentSilent
  bool operator==(const ServerVerdict&) const = default;
};

struct RouteMembership {
  std::string route_id;
  std::vector<ServerId> members;  // roster order; never empty while the route has servers
  bool degraded = false;          // no server in rotation: members are the best available
  std::string degraded_reason;    // empty unless degraded
  bool operator==(const RouteMembership&) const = default;
};

struct Evaluation {
  std::uint64_t roster_version = 0;
  UnixMs now_ms = 0;
  std::uint64_t epoch = 0;
  bool grace = false;                         // previous epoch's witnesses also counted
  std::vector<ServerVerdict> servers;         // roster order
  std::vector<ServerId> unreliable_observers; // roster order; their votes were discarded
  std::vector<RouteMembership> routes;        // roster order
  std::uint32_t reports_ignored = 0;          // origin outside the roster
  // Many observers unreliable at once: the fleet's network is split and no
  // unreachable verdict is made (docs/VERDICTS.md, "Partitions").
  bool partitioned = false;
  bool operator==(const Evaluation&) const = default;
};

// Canonical JSON: keys sorted, integers only, no whitespace unless
// `indent` >= 0 (pretty form for golden files). UTF-8 passes through.
std::string to_canonical_json(const Evaluation& evaluation, int indent = -1);
// FNV-1a 64 of the compact canonical JSON, as 16 lower-case hex digits: a
// short fingerprint to compare nodes' verdicts.
std::string evaluation_digest(const Evaluation& evaluation);

}  // namespace mesh::verdict
