// The node agent's settings (node/agent/agent.h). The shell fills them from
// the daemon's config file (docs/CONFIG.md, "The node config file"), meshsim
// from its scenario. Verdict and probe parameters shared by the whole fleet
// are not here: they come from the signed roster (Parameters).
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/time.h"
#include "gossip/config.h"

namespace mesh::agent {

// The default of AgentConfig::tls_every, and so of the daemon's [probe]
// tls_every and meshsim's [sim] tls_every.
inline constexpr std::uint32_t kDefaultTlsEvery = 1;
// The prober's deadlines, and so the daemon's [probe] connect_timeout_ms
// and tls_timeout_ms and meshsim's [sim] probe_timeout_ms: resolution and
// TCP connect together (3.5 s outlasts Linux's SYN retransmits at 1 and 3
// s: under 10% loss a 1 s deadline makes false failure streaks; 5 s until
// 2026-12-06, and each second of it was a second later for an unanswered
// streak's verdict), then the TLS handshake from TCP up.
inline constexpr DurationMs kDefaultProbeConnectTimeoutMs = 3'500;
// The least connect deadline: a lost SYN is retransmitted after 1 s and
// again after 3 s; a shorter deadline would count one lost packet as a
// failed probe. So a tcp_timeout outcome came at least this long after its
// probe began (confirmation.h reads it so).
inline constexpr DurationMs kProbeConnectTimeoutMinMs = 3'500;
inline constexpr DurationMs kDefaultProbeTlsTimeoutMs = 10'000;

struct AgentConfig {
  // The gossip core's settings: this node's id and key, the operator key,
  // the boot counter from storage, and the gossip tuning.
  gossip::CoreConfig core;

  // The witnesses of a target in one country take turns to make one TLS
  // handshake with its SNI every tls_every probe intervals between them (a
  // witness of three: every 3 x tls_every-th probe); a compatriot's TLS
  // failure makes one's next probe TLS, and so does a failed TLS stage and
  // the first success after a failure (node/agent/tls_turns.h,
  // docs/PROTOCOL.md, "Probes"); the others are a bare TCP connect.
  // 0: TCP only.
  std::uint32_t tls_every = kDefaultTlsEvery;
  // Probes requested and not yet answered, at most. Over it, due probes
  // wait for the next tick.
  std::size_t probes_in_flight_max = 32;
  // A requested probe whose outcome has not come back this long after the
  // request is forgotten (counted as probes_lost): the shell's own stage
  // deadlines end every probe well before.
  DurationMs probe_lost_after_ms = 120'000;

  // The daily wire volume cap (docs/CONFIG.md, "Daily volume cap"): 0 uses
  // the roster's volume_bytes_per_day_max; otherwise the smaller of the two.
  std::uint64_t volume_cap_bytes_per_day = 0;

  // How often verdicts are re-evaluated when no input changed (statuses
  // also move with time: a report goes stale). 0: never on its own; the
  // shell calls Agent::evaluate (meshsim). Needs core.hold_decoded_reports.
  DurationMs verdict_refresh_ms = 5'000;
};

}  // namespace mesh::agent
