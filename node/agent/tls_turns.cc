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

UnixMs latest_turn_ms(TlsTurn turn, std::uint32_t target, UnixMs now, DurationMs slot_ms) {
  MESH_CHECK(slot_ms > 0, "latest_turn_ms: slot_ms must be positive");
  // Fibonacci hashing spreads consecutive indices over the slot.
  const auto shift = static_cast<DurationMs>((target * 0x9E3779B97F4A7C15ull) %
                                             static_cast<std::uint64_t>(slot_ms));
  const std::int64_t slot = floor_div(now + shift, slot_ms);
  const auto turns = static_cast<std::int64_t>(turn.turns);
  // Slot n of target t is rank (n + t) mod turns's: a node whose rank is
  // the same for all its targets (the lowest index of its country) still
  // has its turns spread over every slot, not all in one slot of three.
  const std::int64_t back =
      ((slot + static_cast<std::int64_t>(target) - static_cast<std::int64_t>(turn.rank)) % turns + turns) % turns;
  return (slot - back) * slot_ms - shift;
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
