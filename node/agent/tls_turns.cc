#include "node/agent/tls_turns.h"

#include <algorithm>

#include "common/check.h"

namespace mesh::agent {
namespace {

DurationMs floor_div(UnixMs a, DurationMs b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

}  // namespace

TlsTurn tls_turn_of(const verdict::WitnessPlan& plan, const Roster& roster, std::uint32_t self,
                    std::uint32_t target) {
  const std::string& country = roster.servers[self].country;
  TlsTurn turn{0, 0};
  auto count = [&](std::uint32_t witness) {
    if (roster.servers[witness].country != country) return;
    if (witness < self) ++turn.rank;
    ++turn.turns;
  };
  if (plan.full_mesh) {
    for (std::uint32_t o = 0; o < plan.server_count; ++o) {
      if (o != target) count(o);
    }
  } else {
    for (std::uint32_t witness : plan.witnesses_of_target[target]) count(witness);
  }
  MESH_CHECK(turn.turns > 0 && turn.rank < turn.turns, "tls_turn_of: self is no witness of target");
  return turn;
}

UnixMs latest_turn_ms(const TurnGrid& grid, UnixMs now) {
  MESH_CHECK(grid.interval_ms > 0 && grid.tls_every > 0, "latest_turn_ms: interval and tls_every must be positive");
  const DurationMs interval = grid.interval_ms;
  const auto k = static_cast<std::int64_t>(std::max<std::uint32_t>(grid.turn.turns, 1));
  const auto rank = static_cast<std::int64_t>(grid.turn.rank) % k;
  // Self's latest slot at or before now, and its place j in the country's
  // sequence: slots of rank r of country c lie at m x interval + the base
  // offset + (r x countries + c) / (turns x countries) of an interval, and
  // self's phase wrapped past 2^32 when it is below the base (its slot m
  // is then the sequence's m - 1).
  const auto offset = static_cast<DurationMs>(
      (static_cast<unsigned __int128>(grid.phase) * static_cast<std::uint64_t>(interval)) >> 32);
  const std::int64_t own_m = floor_div(now - offset, interval);
  const UnixMs own_slot = own_m * interval + offset;
  const std::int64_t m = own_m - (grid.phase < grid.base_phase ? 1 : 0);
  const std::int64_t j0 = m * k + rank;
  // The latest turn j <= j0 of rank r: turns are j = qP + is - h (i <
  // kTurnRun), and j = -q - h (mod k), so rank r's lie in the runs q = -(r
  // + h) (mod k).
  const std::int64_t s = static_cast<std::int64_t>(grid.tls_every) * k;
  const std::int64_t p = static_cast<std::int64_t>(kTurnRun) * s - 1;
  const auto h = static_cast<std::int64_t>((grid.target * 0x9E3779B97F4A7C15ull) %
                                           static_cast<std::uint64_t>(k * p));
  const std::int64_t u0 = j0 + h;
  const std::int64_t q0 = floor_div(u0, p);
  const std::int64_t q = q0 - (((q0 + rank + h) % k) + k) % k;
  const std::int64_t i = q == q0 ? std::min<std::int64_t>(kTurnRun - 1, (u0 - q * p) / s) : kTurnRun - 1;
  const std::int64_t j = q * p + i * s - h;
  return own_slot - (j0 - j) / k * interval;
}

bool is_tls_stage(ProbeFailure failure) {
  return failure == ProbeFailure::tls_timeout || failure == ProbeFailure::tls_reset ||
         failure == ProbeFailure::tls_alert || failure == ProbeFailure::tls_bad_peer;
}

bool wants_tls(const TlsInputs& in) {
  // Self's turn came since its last TLS probe (and since the target is its).
  if (std::max(in.last_tls_ms, in.added_ms) < in.turn_ms) return true;
  // A compatriot failed TLS after self's last TLS probe: a new witness of a
  // blocked target (the next epoch's) starts its streak at its first probe.
  if (in.hint_ms > in.last_tls_ms) return true;
  if (in.streak == nullptr) return false;
  // An SNI block builds its streak at the probe interval (a TCP success in
  // between would reset it); a target that came back is checked the way
  // users connect at once.
  return is_tls_stage(in.streak->reason) || (in.streak->ok_streak == 1 && in.streak->probes > 1);
}

}  // namespace mesh::agent
